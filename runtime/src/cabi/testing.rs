//! Layout descriptors built at run time for unit tests, laid out as the LLVM emitter lays the
//! types out (the C rules: each field at the next multiple of its alignment, the size a multiple
//! of the largest alignment; an option is a one-byte tag and then its payload). Every
//! descriptor is leaked, as program constants live for the process.

use std::ptr;

use super::json::{FieldDesc, TypeDesc};

fn leak(desc: TypeDesc) -> &'static TypeDesc {
    Box::leak(Box::new(desc))
}

fn plain(kind: u64, size: usize, align: usize) -> &'static TypeDesc {
    leak(TypeDesc {
        kind,
        size,
        align,
        inner: ptr::null(),
        payload_offset: 0,
        fields: ptr::null(),
        field_count: 0,
        name: ptr::null(),
        name_len: 0,
    })
}

fn round_up(n: usize, align: usize) -> usize {
    n.div_ceil(align) * align
}

/// `i32`.
pub(crate) fn i32() -> &'static TypeDesc {
    plain(0, 4, 4)
}

/// `i64`.
pub(crate) fn i64() -> &'static TypeDesc {
    plain(1, 8, 8)
}

/// `f64`.
pub(crate) fn f64() -> &'static TypeDesc {
    plain(2, 8, 8)
}

/// `bool`.
pub(crate) fn bool() -> &'static TypeDesc {
    plain(3, 1, 1)
}

/// `unit`.
pub(crate) fn unit() -> &'static TypeDesc {
    plain(4, 0, 1)
}

/// `String`.
pub(crate) fn string() -> &'static TypeDesc {
    plain(5, 24, 8)
}

/// `[T]`.
pub(crate) fn array(elem: &'static TypeDesc) -> &'static TypeDesc {
    leak(TypeDesc { inner: elem, ..*plain(6, 24, 8) })
}

/// `Option<T>`.
pub(crate) fn option(inner: &'static TypeDesc) -> &'static TypeDesc {
    let align = inner.align.max(1);
    let payload_offset = round_up(1, align);
    let size = round_up(payload_offset + inner.size, align);
    leak(TypeDesc { inner, payload_offset, ..*plain(7, size, align) })
}

/// A class named `name` with `fields` in declaration order.
pub(crate) fn class(name: &'static str, fields: &[(&'static str, &'static TypeDesc)]) -> &'static TypeDesc {
    let mut offset = 0;
    let mut align = 1;
    let mut list = Vec::new();
    for (field, ty) in fields {
        offset = round_up(offset, ty.align);
        list.push(FieldDesc { name: field.as_ptr(), name_len: field.len(), offset, ty: *ty });
        offset += ty.size;
        align = align.max(ty.align);
    }
    let count = list.len();
    let list: &'static [FieldDesc] = Box::leak(list.into_boxed_slice());
    leak(TypeDesc {
        fields: list.as_ptr(),
        field_count: count,
        name: name.as_ptr(),
        name_len: name.len(),
        ..*plain(8, round_up(offset, align), align)
    })
}
