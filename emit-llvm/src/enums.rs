//! Enum values: the tag, the payload's address, construction, and the bodies of an enum's drop
//! and clone glue. The layout is `%E = { i64 tag, [N x i64] }` (`types.rs`): the tag is the
//! variant's index and the active variant's payload sits at the start of the word array, which
//! is as large as the largest payload.

use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};
use nagi_low::{ArenaGet, EnumId, Type};

use crate::{Cx, Error, ir};

/// The tag (an `i64`, the variant's index) of the enum `e` at `p`.
pub(crate) fn tag<'ctx>(cx: &Cx<'ctx, '_>, e: EnumId, p: PointerValue<'ctx>) -> Result<IntValue<'ctx>, Error> {
    Ok(ir::load_field(&cx.builder, cx.layouts.enum_struct(e), p, 0, "tag")?.into_int_value())
}

/// The address of the payload, of type `payload`, of the enum `e` at `p`.
pub(crate) fn payload_ptr<'ctx>(
    cx: &Cx<'ctx, '_>,
    e: EnumId,
    p: PointerValue<'ctx>,
    payload: &Type,
) -> Result<PointerValue<'ctx>, Error> {
    let words = ir::field(&cx.builder, cx.layouts.enum_struct(e), p, 1, "payload.words")?;
    Ok(cx.builder.build_pointer_cast(words, cx.layouts.pointer(payload), "payload")?)
}

/// The payload type of variant `variant` of enum `e`, if it carries one.
pub(crate) fn payload_type<'m>(cx: &Cx<'_, 'm>, e: EnumId, variant: u32) -> Option<&'m Type> {
    cx.low.enums.get(e)?.variants.get(variant as usize)?.payload.as_ref()
}

/// Writes the value `variant(payload)` of enum `e` at `dest`.
pub(crate) fn build_new<'ctx>(
    cx: &Cx<'ctx, '_>,
    e: EnumId,
    dest: PointerValue<'ctx>,
    variant: u32,
    payload: Option<BasicValueEnum<'ctx>>,
) -> Result<(), Error> {
    let b = &cx.builder;
    // The whole value is written first, so that no byte of it is left undefined.
    b.build_store(dest, cx.layouts.enum_struct(e).const_zero())?;
    let tag = cx.context.i64_type().const_int(u64::from(variant), false);
    b.build_store(ir::field(b, cx.layouts.enum_struct(e), dest, 0, "tag")?, tag)?;
    if let (Some(value), Some(ty)) = (payload, payload_type(cx, e, variant)) {
        let at = payload_ptr(cx, e, dest, ty)?;
        if *ty == Type::Bool {
            // An `i1` store leaves the byte's other bits unspecified, and the optimizer may set
            // them (the whole value is later copied as words); a byte 0 or 1 is what loads of
            // `i1`, the runtime's JSON and the clone glue read.
            let byte = cx.context.i8_type();
            let at = b.build_pointer_cast(at, byte.ptr_type(inkwell::AddressSpace::default()), "payload.byte")?;
            let value = b.build_int_z_extend(value.into_int_value(), byte, "payload.bool")?;
            b.build_store(at, value)?;
        } else {
            b.build_store(at, value)?;
        }
    }
    Ok(())
}

/// Branches on the tag of the enum `e` at `p` to one block per variant whose payload owns
/// memory, where `each` runs with the variant's payload type, then joins.
pub(crate) fn for_owning_variant<'ctx>(
    cx: &Cx<'ctx, '_>,
    f: FunctionValue<'ctx>,
    e: EnumId,
    p: PointerValue<'ctx>,
    mut each: impl FnMut(&Type) -> Result<(), Error>,
) -> Result<(), Error> {
    let b = &cx.builder;
    let data = cx.low.enums.get(e).ok_or_else(|| Error::internal("unknown enum"))?;
    let tag = tag(cx, e, p)?;
    let done = cx.context.append_basic_block(f, "variant.done");
    let mut cases = Vec::new();
    let mut bodies = Vec::new();
    for (i, variant) in data.variants.iter().enumerate() {
        if let Some(ty) = &variant.payload
            && ty.owns_heap(cx.low)
        {
            let block = cx.context.append_basic_block(f, &format!("variant.{}", variant.name));
            cases.push((cx.context.i64_type().const_int(i as u64, false), block));
            bodies.push((block, ty));
        }
    }
    b.build_switch(tag, done, &cases)?;
    for (block, ty) in bodies {
        b.position_at_end(block);
        each(ty)?;
        b.build_unconditional_branch(done)?;
    }
    b.position_at_end(done);
    Ok(())
}
