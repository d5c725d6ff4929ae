//! Drop and clone glue: one internal function per type that owns memory, emitted once and
//! shared by every `drop`, `clone`, `field.set`, `array.set` and `store` of that type.
//!
//! - `void nagi.drop.T(T*)` frees what a `T` owns: a string's buffer, an array's elements and
//!   then its buffer, an option's payload when present, each field of a class that owns
//!   memory, the active variant's payload of an enum. Buffers go back through `nagi_rt_free` with the size and alignment they were
//!   allocated with; a capacity of 0 owns nothing.
//! - `void nagi.clone.T(T* dst, T* src)` writes a deep copy of `*src` into `*dst`. An array's
//!   copy gets capacity = length; elements that own nothing are copied with one `memcpy`.
//!
//! Glue is requested while functions are emitted and only declared then; [`emit_pending`]
//! writes the bodies afterwards (which may request more glue, for element and field types).
//! Types that own no memory get no glue: dropping them does nothing and cloning them is a load
//! and a store.

use std::collections::HashMap;

use inkwell::IntPredicate;
use inkwell::module::Linkage;
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{FunctionValue, IntValue, PointerValue};
use nagi_low::{ArenaGet, EnumId, Type};

use crate::runtime_calls::{self, Rt};
use crate::{Cx, Error};
use crate::{enums, ir};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    Drop,
    Clone,
}

/// Glue functions by kind and type, and the ones whose bodies are not written yet.
#[derive(Default)]
pub(crate) struct GlueTable<'ctx> {
    functions: HashMap<(Kind, Type), FunctionValue<'ctx>>,
    pending: Vec<(Kind, Type, FunctionValue<'ctx>)>,
}

/// The glue function of `kind` for `ty`, declared on first request.
fn glue_fn<'ctx>(cx: &Cx<'ctx, '_>, kind: Kind, ty: &Type) -> FunctionValue<'ctx> {
    if let Some(f) = cx.glue.borrow().functions.get(&(kind, ty.clone())) {
        return *f;
    }
    let ptr: BasicMetadataTypeEnum = cx.layouts.pointer(ty).into();
    let void = cx.context.void_type();
    let (prefix, fn_type) = match kind {
        Kind::Drop => ("drop", void.fn_type(&[ptr], false)),
        Kind::Clone => ("clone", void.fn_type(&[ptr, ptr], false)),
    };
    let name = format!("nagi.{prefix}.{}", ty.display(cx.low));
    let f = cx.module.add_function(&name, fn_type, Some(Linkage::Internal));
    cx.nounwind(f);
    let mut table = cx.glue.borrow_mut();
    table.functions.insert((kind, ty.clone()), f);
    table.pending.push((kind, ty.clone(), f));
    f
}

/// Drops the `ty` at `ptr` (nothing for types that own no memory).
pub(crate) fn drop_in_place<'ctx>(cx: &Cx<'ctx, '_>, ty: &Type, ptr: PointerValue<'ctx>) -> Result<(), Error> {
    if ty.owns_heap(cx.low) {
        let f = glue_fn(cx, Kind::Drop, ty);
        cx.builder.build_call(f, &[ptr.into()], "")?;
    }
    Ok(())
}

/// Writes a deep copy of the `ty` at `src` into `dst`.
pub(crate) fn clone_into<'ctx>(
    cx: &Cx<'ctx, '_>,
    ty: &Type,
    dst: PointerValue<'ctx>,
    src: PointerValue<'ctx>,
) -> Result<(), Error> {
    if ty.owns_heap(cx.low) {
        let f = glue_fn(cx, Kind::Clone, ty);
        cx.builder.build_call(f, &[dst.into(), src.into()], "")?;
    } else {
        let v = ir::load(&cx.builder, cx.layouts.llvm(ty), src, "copy")?;
        cx.builder.build_store(dst, v)?;
    }
    Ok(())
}

/// The clone glue of `ty`, for a runtime function that clones values it cannot see into
/// (`array.slice`); `None` for a type that owns nothing, whose values are copied as bytes.
pub(crate) fn clone_fn<'ctx>(cx: &Cx<'ctx, '_>, ty: &Type) -> Option<FunctionValue<'ctx>> {
    ty.owns_heap(cx.low).then(|| glue_fn(cx, Kind::Clone, ty))
}

/// The element size and alignment of `ty` as `i64` constants, for the runtime's allocator.
pub(crate) fn size_align<'ctx>(cx: &Cx<'ctx, '_>, ty: &Type) -> (IntValue<'ctx>, IntValue<'ctx>) {
    let i64t = cx.context.i64_type();
    (i64t.const_int(cx.layouts.size(ty), false), i64t.const_int(u64::from(cx.layouts.align(ty)), false))
}

/// Writes the bodies of all requested glue, including glue requested while doing so.
pub(crate) fn emit_pending(cx: &Cx<'_, '_>) -> Result<(), Error> {
    loop {
        let next = cx.glue.borrow_mut().pending.pop();
        let Some((kind, ty, f)) = next else { return Ok(()) };
        let entry = cx.context.append_basic_block(f, "entry");
        cx.builder.position_at_end(entry);
        let first = f.get_nth_param(0).ok_or_else(|| Error::internal("glue without parameters"))?.into_pointer_value();
        match kind {
            Kind::Drop => drop_body(cx, f, &ty, first)?,
            Kind::Clone => {
                let src = f
                    .get_nth_param(1)
                    .ok_or_else(|| Error::internal("clone glue without a source"))?
                    .into_pointer_value();
                clone_body(cx, f, &ty, first, src)?;
            }
        }
        cx.builder.build_return(None)?;
    }
}

fn drop_body<'ctx>(cx: &Cx<'ctx, '_>, f: FunctionValue<'ctx>, ty: &Type, p: PointerValue<'ctx>) -> Result<(), Error> {
    let b = &cx.builder;
    match ty {
        Type::String => {
            let st = cx.layouts.string();
            let data = ir::load_field(b, st, p, 0, "data")?.into_pointer_value();
            let cap = ir::load_field(b, st, p, 2, "cap")?.into_int_value();
            free_buffer(cx, f, data, cap, &Type::Bool)?;
        }
        Type::Array(elem) => {
            let st = cx.layouts.array(elem);
            let data = ir::load_field(b, st, p, 0, "data")?.into_pointer_value();
            let len = ir::load_field(b, st, p, 1, "len")?.into_int_value();
            let cap = ir::load_field(b, st, p, 2, "cap")?.into_int_value();
            if elem.owns_heap(cx.low) {
                counted_loop(cx, f, len, |i| {
                    let at = ir::element(&cx.builder, cx.layouts.llvm(elem), data, i, "elem")?;
                    drop_in_place(cx, elem, at)
                })?;
            }
            free_buffer(cx, f, data, cap, elem)?;
        }
        Type::Map(k, v) => {
            let st = cx.layouts.map(k, v);
            drop_in_place(cx, &Type::Array(k.clone()), ir::field(b, st, p, 0, "keys")?)?;
            drop_in_place(cx, &Type::Array(v.clone()), ir::field(b, st, p, 1, "values")?)?;
            let index = ir::load_field(b, st, p, 2, "index")?;
            runtime_calls::call(cx, Rt::MapIndexFree, &[index.into()])?;
        }
        Type::Option(inner) => {
            let st = cx.layouts.llvm(ty).into_struct_type();
            let tag = ir::load_field(b, st, p, 0, "tag")?.into_int_value();
            let some = cx.context.append_basic_block(f, "some");
            let done = cx.context.append_basic_block(f, "done");
            b.build_conditional_branch(tag, some, done)?;
            b.position_at_end(some);
            drop_in_place(cx, inner, ir::field(b, st, p, 1, "payload")?)?;
            b.build_unconditional_branch(done)?;
            b.position_at_end(done);
        }
        Type::Class(c) => {
            let class = cx.low.classes.get(*c).ok_or_else(|| Error::internal("unknown class"))?;
            let st = cx.layouts.class(*c);
            for (i, field) in class.fields.iter().enumerate() {
                if field.ty.owns_heap(cx.low) {
                    drop_in_place(cx, &field.ty, ir::field(b, st, p, i as u32, &field.name)?)?;
                }
            }
        }
        Type::Enum(e) => enum_drop_body(cx, f, *e, p)?,
        // A scope cancels its tasks; a task handle detaches its task (runtime `cabi::tasks`).
        Type::Scope | Type::Task(_) => {
            let handle = ir::load(b, cx.layouts.byte_ptr().into(), p, "handle")?;
            let rt = if *ty == Type::Scope { Rt::ScopeDrop } else { Rt::TaskDrop };
            runtime_calls::call(cx, rt, &[handle.into()])?;
        }
        // The deferred call runs, as the runtime's rules say (runtime `cabi::tasks`).
        Type::Defer => {
            let handle = ir::load(b, cx.layouts.byte_ptr().into(), p, "handle")?;
            runtime_calls::call(cx, Rt::DeferDrop, &[handle.into()])?;
        }
        // One handle fewer; the actor stops once none is left (runtime `cabi::actors`).
        Type::Actor(_) => {
            let handle = ir::load(b, cx.layouts.byte_ptr().into(), p, "handle")?;
            runtime_calls::call(cx, Rt::ActorDrop, &[handle.into()])?;
        }
        _ => {}
    }
    Ok(())
}

/// Frees a buffer of `cap` elements of `elem` (bytes for strings) unless it owns nothing.
fn free_buffer<'ctx>(
    cx: &Cx<'ctx, '_>,
    f: FunctionValue<'ctx>,
    data: PointerValue<'ctx>,
    cap: IntValue<'ctx>,
    elem: &Type,
) -> Result<(), Error> {
    let b = &cx.builder;
    let (size, align) = size_align(cx, elem);
    if cx.layouts.size(elem) == 0 {
        // Zero-sized elements never get a buffer.
        return Ok(());
    }
    let owns = b.build_int_compare(IntPredicate::NE, cap, cap.get_type().const_zero(), "owns")?;
    let free = cx.context.append_basic_block(f, "free");
    let done = cx.context.append_basic_block(f, "freed");
    b.build_conditional_branch(owns, free, done)?;
    b.position_at_end(free);
    let bytes = b.build_int_mul(cap, size, "bytes")?;
    let raw = b.build_pointer_cast(data, cx.layouts.byte_ptr(), "raw")?;
    runtime_calls::call(cx, Rt::Free, &[raw.into(), bytes.into(), align.into()])?;
    b.build_unconditional_branch(done)?;
    b.position_at_end(done);
    Ok(())
}

fn clone_body<'ctx>(
    cx: &Cx<'ctx, '_>,
    f: FunctionValue<'ctx>,
    ty: &Type,
    dst: PointerValue<'ctx>,
    src: PointerValue<'ctx>,
) -> Result<(), Error> {
    let b = &cx.builder;
    match ty {
        Type::String => {
            let st = cx.layouts.string();
            let data = ir::load_field(b, st, src, 0, "data")?;
            let len = ir::load_field(b, st, src, 1, "len")?;
            runtime_calls::call(cx, Rt::StrFrom, &[dst.into(), data.into(), len.into()])?;
        }
        Type::Array(elem) => {
            let st = cx.layouts.array(elem);
            let data = ir::load_field(b, st, src, 0, "data")?.into_pointer_value();
            let len = ir::load_field(b, st, src, 1, "len")?.into_int_value();
            let (size, align) = size_align(cx, elem);
            let bytes = b.build_int_mul(len, size, "bytes")?;
            let raw = runtime_calls::call(cx, Rt::Alloc, &[bytes.into(), align.into()])?
                .ok_or_else(|| Error::internal("nagi_rt_alloc returns nothing"))?
                .into_pointer_value();
            let copy = b.build_pointer_cast(raw, cx.layouts.pointer(elem), "copy")?;
            if elem.owns_heap(cx.low) {
                counted_loop(cx, f, len, |i| {
                    let to = ir::element(&cx.builder, cx.layouts.llvm(elem), copy, i, "to")?;
                    let from = ir::element(&cx.builder, cx.layouts.llvm(elem), data, i, "from")?;
                    clone_into(cx, elem, to, from)
                })?;
            } else if cx.layouts.size(elem) > 0 {
                // An empty array may have no buffer at all (a null pointer), so the copy is
                // skipped rather than handed a null source.
                let some = cx.context.append_basic_block(f, "copy");
                let done = cx.context.append_basic_block(f, "copied");
                let nonempty = b.build_int_compare(IntPredicate::NE, len, len.get_type().const_zero(), "nonempty")?;
                b.build_conditional_branch(nonempty, some, done)?;
                b.position_at_end(some);
                let from = b.build_pointer_cast(data, cx.layouts.byte_ptr(), "from")?;
                let a = cx.layouts.align(elem);
                b.build_memcpy(raw, a, from, a, bytes).map_err(|e| Error::internal(format!("memcpy: {e}")))?;
                b.build_unconditional_branch(done)?;
                b.position_at_end(done);
            }
            b.build_store(ir::field(b, st, dst, 0, "data")?, copy)?;
            b.build_store(ir::field(b, st, dst, 1, "len")?, len)?;
            b.build_store(ir::field(b, st, dst, 2, "cap")?, len)?;
        }
        Type::Map(k, v) => {
            let st = cx.layouts.map(k, v);
            for (field, entries) in [(0, Type::Array(k.clone())), (1, Type::Array(v.clone()))] {
                clone_into(cx, &entries, ir::field(b, st, dst, field, "to")?, ir::field(b, st, src, field, "from")?)?;
            }
            let index = ir::load_field(b, st, src, 2, "index")?;
            let copy = runtime_calls::call(cx, Rt::MapIndexClone, &[index.into()])?
                .ok_or_else(|| Error::internal("nagi_rt_map_index_clone returns nothing"))?;
            b.build_store(ir::field(b, st, dst, 2, "index")?, copy)?;
        }
        Type::Option(inner) => {
            let st = cx.layouts.llvm(ty).into_struct_type();
            b.build_store(dst, st.const_zero())?;
            let tag = ir::load_field(b, st, src, 0, "tag")?.into_int_value();
            let some = cx.context.append_basic_block(f, "some");
            let done = cx.context.append_basic_block(f, "done");
            b.build_conditional_branch(tag, some, done)?;
            b.position_at_end(some);
            b.build_store(ir::field(b, st, dst, 0, "tag")?, tag)?;
            clone_into(cx, inner, ir::field(b, st, dst, 1, "to")?, ir::field(b, st, src, 1, "from")?)?;
            b.build_unconditional_branch(done)?;
            b.position_at_end(done);
        }
        Type::Class(c) => {
            let class = cx.low.classes.get(*c).ok_or_else(|| Error::internal("unknown class"))?;
            let st = cx.layouts.class(*c);
            for (i, field) in class.fields.iter().enumerate() {
                let to = ir::field(b, st, dst, i as u32, &field.name)?;
                let from = ir::field(b, st, src, i as u32, &field.name)?;
                clone_into(cx, &field.ty, to, from)?;
            }
        }
        Type::Enum(e) => enum_clone_body(cx, f, *e, dst, src)?,
        Type::Actor(_) => {
            let handle = ir::load(b, cx.layouts.byte_ptr().into(), src, "handle")?;
            let copy = runtime_calls::call(cx, Rt::ActorClone, &[handle.into()])?
                .ok_or_else(|| Error::internal("nagi_rt_actor_clone returns nothing"))?;
            b.build_store(dst, copy)?;
        }
        _ => {
            let v = ir::load(b, cx.layouts.llvm(ty), src, "copy")?;
            b.build_store(dst, v)?;
        }
    }
    Ok(())
}

/// Emits `for i in 0..len { body(i) }` at the builder's position, continuing after it.
fn counted_loop<'ctx>(
    cx: &Cx<'ctx, '_>,
    f: FunctionValue<'ctx>,
    len: IntValue<'ctx>,
    mut body: impl FnMut(IntValue<'ctx>) -> Result<(), Error>,
) -> Result<(), Error> {
    let b = &cx.builder;
    let i64t = cx.context.i64_type();
    let pre = b.get_insert_block().ok_or_else(|| Error::internal("no insertion block"))?;
    let head = cx.context.append_basic_block(f, "loop");
    let step = cx.context.append_basic_block(f, "step");
    let done = cx.context.append_basic_block(f, "loop.done");
    b.build_unconditional_branch(head)?;
    b.position_at_end(head);
    let i = b.build_phi(i64t, "i")?;
    let iv = i.as_basic_value().into_int_value();
    let more = b.build_int_compare(IntPredicate::SLT, iv, len, "more")?;
    b.build_conditional_branch(more, step, done)?;
    b.position_at_end(step);
    body(iv)?;
    let next = b.build_int_nsw_add(iv, i64t.const_int(1, false), "i.next")?;
    let latch = b.get_insert_block().ok_or_else(|| Error::internal("no insertion block"))?;
    b.build_unconditional_branch(head)?;
    i.add_incoming(&[(&i64t.const_zero(), pre), (&next, latch)]);
    b.position_at_end(done);
    Ok(())
}

/// The body of `nagi.drop.E` (an enum): drops the active variant's payload when it owns memory.
fn enum_drop_body<'ctx>(
    cx: &Cx<'ctx, '_>,
    f: FunctionValue<'ctx>,
    e: EnumId,
    p: PointerValue<'ctx>,
) -> Result<(), Error> {
    enums::for_owning_variant(cx, f, e, p, |ty| drop_in_place(cx, ty, enums::payload_ptr(cx, e, p, ty)?))
}

/// The body of `nagi.clone.E` (an enum): copies the value, then replaces a payload that owns memory by a
/// deep copy of it.
fn enum_clone_body<'ctx>(
    cx: &Cx<'ctx, '_>,
    f: FunctionValue<'ctx>,
    e: EnumId,
    dst: PointerValue<'ctx>,
    src: PointerValue<'ctx>,
) -> Result<(), Error> {
    let b = &cx.builder;
    let whole = ir::load(b, cx.layouts.enum_struct(e).into(), src, "copy")?;
    b.build_store(dst, whole)?;
    enums::for_owning_variant(cx, f, e, src, |ty| {
        clone_into(cx, ty, enums::payload_ptr(cx, e, dst, ty)?, enums::payload_ptr(cx, e, src, ty)?)
    })
}
