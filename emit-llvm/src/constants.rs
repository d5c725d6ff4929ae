//! Constant data the descriptors of services, queues, tasks and actors are made of: structs of
//! `i8*` and `i64` fields, integers, texts, function pointers and the private globals that hold
//! them. A leaf, so that the descriptor builders (`service.rs`, `queues.rs`, `tasks.rs`,
//! `actors.rs`) share it without importing each other.

use inkwell::module::Linkage;
use inkwell::values::{BasicValueEnum, FunctionValue, GlobalValue, PointerValue};

use crate::{Cx, Error, descriptors};

/// A constant struct of `values` (each an `i8*` or an `i64`).
pub(crate) fn struct_of<'ctx>(cx: &Cx<'ctx, '_>, values: &[BasicValueEnum<'ctx>]) -> BasicValueEnum<'ctx> {
    cx.context.const_struct(values, false).into()
}

/// An `i64` constant.
pub(crate) fn int<'ctx>(cx: &Cx<'ctx, '_>, v: u64) -> BasicValueEnum<'ctx> {
    cx.context.i64_type().const_int(v, false).into()
}

/// The bytes of `value` as a private constant, and their length.
pub(crate) fn text<'ctx>(cx: &Cx<'ctx, '_>, value: &str) -> (PointerValue<'ctx>, inkwell::values::IntValue<'ctx>) {
    (descriptors::name_bytes(cx, value), cx.context.i64_type().const_int(value.len() as u64, false))
}

/// `f`'s address as an `i8*` constant.
pub(crate) fn fn_ptr<'ctx>(cx: &Cx<'ctx, '_>, f: FunctionValue<'ctx>) -> PointerValue<'ctx> {
    f.as_global_value().as_pointer_value().const_cast(cx.layouts.byte_ptr())
}

/// A private constant global `name` holding `value`.
pub(crate) fn constant<'ctx>(cx: &Cx<'ctx, '_>, name: &str, value: BasicValueEnum<'ctx>) -> GlobalValue<'ctx> {
    let g = cx.module.add_global(value.get_type(), None, name);
    g.set_initializer(&value);
    g.set_constant(true);
    g.set_linkage(Linkage::Private);
    g
}

/// A private constant array of `items` of type `ty`, as an `i8*` (null when empty).
pub(crate) fn array_global<'ctx>(
    cx: &Cx<'ctx, '_>,
    name: &str,
    items: &[BasicValueEnum<'ctx>],
    ty: inkwell::types::StructType<'ctx>,
) -> Result<PointerValue<'ctx>, Error> {
    if items.is_empty() {
        return Ok(cx.layouts.byte_ptr().const_null());
    }
    let structs: Vec<inkwell::values::StructValue> = items.iter().map(|v| v.into_struct_value()).collect();
    let array = ty.const_array(&structs);
    let g = constant(cx, name, array.into());
    Ok(g.as_pointer_value().const_cast(cx.layouts.byte_ptr()))
}
