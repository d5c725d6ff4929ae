//! Layout descriptors: one constant per type that `json.encode`/`json.decode` reach, telling
//! the runtime (`nagi_runtime::cabi::json`) how a value of that type sits in memory, so that
//! one runtime function serves every class.
//!
//! `%nagi.TypeDesc = { i64 kind, i64 size, i64 align, %nagi.TypeDesc* inner,
//! i64 payload_offset, %nagi.FieldDesc* fields, i64 field_count, i8* name, i64 name_len }`
//! (the name is a class's or enum's, for the JSON decoder's messages; empty otherwise) and
//! `%nagi.FieldDesc = { i8* name, i64 name_len, i64 offset, %nagi.TypeDesc* ty }`; the kinds are
//! the constants of `nagi_abi::type_kind` (an enum's variants are its fields, each with its
//! payload's type or `unit`, at the payload's offset). The runtime's `TypeDesc`/`FieldDesc` are
//! the same structs.
//!
//! A descriptor is declared when first asked for and filled in by [`emit_pending`], which
//! may declare the descriptors of element, payload and field types in turn; classes that
//! reach themselves through arrays therefore need no recursion.

use std::collections::HashMap;

use inkwell::AddressSpace;
use inkwell::module::Linkage;
use inkwell::types::StructType;
use inkwell::values::{BasicValueEnum, GlobalValue, PointerValue};
use nagi_abi::type_kind;
use nagi_low::{ArenaGet, Type};

use crate::{Cx, Error};

/// Descriptors declared so far, and those still to be filled in.
#[derive(Default)]
pub(crate) struct DescriptorTable<'ctx> {
    globals: HashMap<Type, GlobalValue<'ctx>>,
    pending: Vec<(Type, GlobalValue<'ctx>)>,
}

/// `%nagi.TypeDesc` and `%nagi.FieldDesc`, created on first use.
fn desc_types<'ctx>(cx: &Cx<'ctx, '_>) -> (StructType<'ctx>, StructType<'ctx>) {
    if let (Some(t), Some(f)) =
        (cx.module.get_struct_type("nagi.TypeDesc"), cx.module.get_struct_type("nagi.FieldDesc"))
    {
        return (t, f);
    }
    let c = cx.context;
    let i64t = c.i64_type();
    let type_desc = c.opaque_struct_type("nagi.TypeDesc");
    let field_desc = c.opaque_struct_type("nagi.FieldDesc");
    let type_ptr = type_desc.ptr_type(AddressSpace::default());
    type_desc.set_body(
        &[
            i64t.into(),
            i64t.into(),
            i64t.into(),
            type_ptr.into(),
            i64t.into(),
            field_desc.ptr_type(AddressSpace::default()).into(),
            i64t.into(),
            cx.layouts.byte_ptr().into(),
            i64t.into(),
        ],
        false,
    );
    field_desc.set_body(&[cx.layouts.byte_ptr().into(), i64t.into(), i64t.into(), type_ptr.into()], false);
    (type_desc, field_desc)
}

/// A pointer (`i8*`) to the descriptor of `ty`, declared on first request.
pub(crate) fn descriptor<'ctx>(cx: &Cx<'ctx, '_>, ty: &Type) -> PointerValue<'ctx> {
    global(cx, ty).as_pointer_value().const_cast(cx.layouts.byte_ptr())
}

fn global<'ctx>(cx: &Cx<'ctx, '_>, ty: &Type) -> GlobalValue<'ctx> {
    if let Some(g) = cx.descriptors.borrow().globals.get(ty) {
        return *g;
    }
    let (type_desc, _) = desc_types(cx);
    let g = cx.module.add_global(type_desc, None, &format!("nagi.type.{}", ty.display(cx.low)));
    g.set_constant(true);
    g.set_linkage(Linkage::Private);
    let mut table = cx.descriptors.borrow_mut();
    table.globals.insert(ty.clone(), g);
    table.pending.push((ty.clone(), g));
    g
}

/// A private constant holding `text`'s bytes, as an `i8*`.
pub(crate) fn name_bytes<'ctx>(cx: &Cx<'ctx, '_>, text: &str) -> PointerValue<'ctx> {
    let value = cx.context.const_string(text.as_bytes(), false);
    let g = cx.module.add_global(value.get_type(), None, "field.name");
    g.set_initializer(&value);
    g.set_constant(true);
    g.set_linkage(Linkage::Private);
    g.set_unnamed_addr(true);
    g.as_pointer_value().const_cast(cx.layouts.byte_ptr())
}

/// A private constant array of field (or variant) descriptors, as a pointer to its first.
fn field_list<'ctx>(
    cx: &Cx<'ctx, '_>,
    field_desc: StructType<'ctx>,
    entries: &[inkwell::values::StructValue<'ctx>],
    owner: &str,
) -> PointerValue<'ctx> {
    let array = field_desc.const_array(entries);
    let list = cx.module.add_global(array.get_type(), None, &format!("nagi.fields.{owner}"));
    list.set_initializer(&array);
    list.set_constant(true);
    list.set_linkage(Linkage::Private);
    list.as_pointer_value().const_cast(field_desc.ptr_type(AddressSpace::default()))
}

/// Fills in every declared descriptor, including those declared while doing so.
pub(crate) fn emit_pending(cx: &Cx<'_, '_>) -> Result<(), Error> {
    loop {
        let next = cx.descriptors.borrow_mut().pending.pop();
        let Some((ty, g)) = next else { return Ok(()) };
        let (type_desc, field_desc) = desc_types(cx);
        let i64t = cx.context.i64_type();
        let int = |v: u64| -> BasicValueEnum { i64t.const_int(v, false).into() };
        let type_null = type_desc.ptr_type(AddressSpace::default()).const_null();
        let fields_null = field_desc.ptr_type(AddressSpace::default()).const_null();
        let mut name = None;
        let (kind, inner, payload_offset, fields, count) = match &ty {
            Type::I32 => (type_kind::I32, None, 0, fields_null, 0),
            Type::I64 => (type_kind::I64, None, 0, fields_null, 0),
            Type::F64 => (type_kind::F64, None, 0, fields_null, 0),
            Type::Bool => (type_kind::BOOL, None, 0, fields_null, 0),
            Type::Unit => (type_kind::UNIT, None, 0, fields_null, 0),
            Type::String => (type_kind::STRING, None, 0, fields_null, 0),
            Type::Time => (type_kind::TIME, None, 0, fields_null, 0),
            Type::Duration => (type_kind::DURATION, None, 0, fields_null, 0),
            Type::Uuid => (type_kind::UUID, None, 0, fields_null, 0),
            Type::Array(elem) => (type_kind::ARRAY, Some(global(cx, elem)), 0, fields_null, 0),
            // A map: the value type is the inner one, and the values array starts at the payload
            // offset.
            Type::Map(k, v) => {
                let offset = cx.layouts.offset_of(cx.layouts.map(k, v), 1);
                let kind = if **k == Type::String { type_kind::MAP_STRING } else { type_kind::MAP_I64 };
                (kind, Some(global(cx, v)), offset, fields_null, 0)
            }
            Type::Option(inner) => {
                let st = cx.layouts.llvm(&ty).into_struct_type();
                let offset = cx.layouts.offset_of(st, 1);
                (type_kind::OPTION, Some(global(cx, inner)), offset, fields_null, 0)
            }
            Type::Class(c) => {
                let class = cx.low.classes.get(*c).ok_or_else(|| Error::internal("unknown class"))?;
                let st = cx.layouts.class(*c);
                let mut entries = Vec::with_capacity(class.fields.len());
                for (i, field) in class.fields.iter().enumerate() {
                    let values: [BasicValueEnum; 4] = [
                        name_bytes(cx, &field.name).into(),
                        int(field.name.len() as u64),
                        int(cx.layouts.offset_of(st, i as u32)),
                        global(cx, &field.ty).as_pointer_value().into(),
                    ];
                    entries.push(field_desc.const_named_struct(&values));
                }
                let first = field_list(cx, field_desc, &entries, &class.name);
                name = Some(class.name.as_str());
                (type_kind::CLASS, None, 0, first, class.fields.len() as u64)
            }
            Type::Enum(e) => {
                let data = cx.low.enums.get(*e).ok_or_else(|| Error::internal("unknown enum"))?;
                let offset = cx.layouts.offset_of(cx.layouts.enum_struct(*e), 1);
                let mut entries = Vec::with_capacity(data.variants.len());
                for variant in &data.variants {
                    let payload = variant.payload.clone().unwrap_or(Type::Unit);
                    let values: [BasicValueEnum; 4] = [
                        name_bytes(cx, &variant.name).into(),
                        int(variant.name.len() as u64),
                        int(offset),
                        global(cx, &payload).as_pointer_value().into(),
                    ];
                    entries.push(field_desc.const_named_struct(&values));
                }
                let first = field_list(cx, field_desc, &entries, &data.name);
                name = Some(data.name.as_str());
                (type_kind::ENUM, None, offset, first, data.variants.len() as u64)
            }
            Type::Ref { .. } | Type::Scope | Type::Task(_) | Type::Actor(_) | Type::Defer => {
                return Err(Error::internal("a descriptor of a reference, a scope, a task or an actor"));
            }
        };
        let inner = inner.map_or(type_null, |g| g.as_pointer_value());
        let (name_ptr, name_len) = match name {
            Some(text) => (name_bytes(cx, text), text.len() as u64),
            None => (cx.layouts.byte_ptr().const_null(), 0),
        };
        let values: [BasicValueEnum; 9] = [
            int(kind),
            int(cx.layouts.size(&ty)),
            int(u64::from(cx.layouts.align(&ty))),
            inner.into(),
            int(payload_offset),
            fields.into(),
            int(count),
            name_ptr.into(),
            int(name_len),
        ];
        g.set_initializer(&type_desc.const_named_struct(&values));
    }
}
