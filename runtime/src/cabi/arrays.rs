//! The array library's rows (`array.*`) for emitted code: each function takes the array as a
//! pointer to its [`RawArray`], applies the rule of [`crate::arrays`] and, for `slice`, writes
//! the new array through `out`.
//!
//! The runtime knows an element only as the emitter describes it: its size in bytes and, where
//! the row compares elements, its [`kind`](KIND_I32) (which of the library's ordered types it
//! is, or which one the sort key at `offset` inside it is). Elements are moved as bytes, which
//! is what moving a value means in emitted code; a slice clones each element through the
//! emitter's clone glue, passed as a function pointer.

use std::alloc::Layout;

use super::{RawArray, RawString, allocate, fail, text_unchecked};
use crate::arrays::{self, Key};

// The element (or key) kinds, `nagi_abi::array_kind`: a string is laid out as a [`RawString`].
pub use nagi_abi::array_kind::{F64 as KIND_F64, I32 as KIND_I32, I64 as KIND_I64, STRING as KIND_STRING};

/// The key of `kind` at `at`.
///
/// # Safety
/// `at` points to a value of `kind` (a string: a [`RawString`] of emitted code) that lives for `'a`.
unsafe fn key<'a>(at: *const u8, kind: i32) -> Key<'a> {
    // SAFETY: forwarded from the caller; emitted code aligns every value it stores.
    unsafe {
        match kind {
            KIND_I32 => Key::I32(at.cast::<i32>().read()),
            KIND_I64 => Key::I64(at.cast::<i64>().read()),
            KIND_F64 => Key::F64(at.cast::<f64>().read()),
            KIND_STRING => {
                let s = &*at.cast::<RawString>();
                Key::Str(text_unchecked(s.ptr, s.len))
            }
            other => fail(format!("array row: unknown element kind {other}")),
        }
    }
}

/// The size in bytes of a value of `kind`.
fn kind_size(kind: i32) -> usize {
    match kind {
        KIND_I32 => 4,
        KIND_STRING => size_of::<RawString>(),
        _ => 8,
    }
}

/// Puts the `size`-byte elements of `array` into the order `order` gives (position `i` gets the
/// element that stood at `order[i]`), by moving bytes through a scratch copy.
///
/// # Safety
/// `array` is an array of emitted code whose elements are `size` bytes; `order` is a
/// permutation of its indexes.
unsafe fn permute(array: &RawArray, size: usize, order: &[usize]) {
    let bytes = array.len * size;
    let mut scratch = vec![0u8; bytes];
    // SAFETY: the buffer holds `len` elements of `size` bytes, and `scratch` as many bytes.
    unsafe {
        for (to, &from) in order.iter().enumerate() {
            std::ptr::copy_nonoverlapping(array.ptr.add(from * size), scratch.as_mut_ptr().add(to * size), size);
        }
        std::ptr::copy_nonoverlapping(scratch.as_ptr(), array.ptr, bytes);
    }
}

/// Sorts the array at `array` stably by the keys of `kind` at byte `offset` of its `size`-byte
/// elements: [`arrays::sorted_order`] of the keys, then the elements moved into that order.
///
/// # Safety
/// `array` points to an array of emitted code whose elements are `size` bytes holding a key of
/// `kind` at `offset`.
unsafe fn sort_keyed(array: *mut RawArray, size: usize, offset: usize, kind: i32) {
    // SAFETY: forwarded from the caller.
    let array = unsafe { &*array };
    if array.len < 2 {
        return;
    }
    // SAFETY: each element holds its key at `offset`.
    let keys: Vec<Key> = (0..array.len).map(|i| unsafe { key(array.ptr.add(i * size + offset), kind) }).collect();
    let order = arrays::sorted_order(&keys.iter().collect::<Vec<_>>());
    drop(keys);
    // SAFETY: `order` is a permutation of the indexes.
    unsafe { permute(array, size, &order) }
}

/// `array.sort_by_keys`: sorts the array of `size`-byte elements at `array` in place, stably and
/// ascending by the element at the same index of the array of `kind` keys at `keys`; traps
/// unless both have as many elements.
///
/// # Safety
/// `array` points to an array of emitted code whose elements are `size` bytes, `keys` to one
/// whose elements are of `kind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_array_sort_by_keys(
    array: *mut RawArray,
    size: usize,
    keys: *const RawArray,
    kind: i32,
) {
    // SAFETY: forwarded from the caller.
    let (array, keys) = unsafe { (&*array, &*keys) };
    if keys.len != array.len {
        fail(format!("sort_by_keys: {} keys for {} elements", keys.len, array.len));
    }
    let step = kind_size(kind);
    // SAFETY: the keys' buffer holds `len` values of `kind`.
    let keys: Vec<Key> = (0..keys.len).map(|i| unsafe { key(keys.ptr.add(i * step), kind) }).collect();
    let order = arrays::sorted_order(&keys.iter().collect::<Vec<_>>());
    drop(keys);
    // SAFETY: `order` is a permutation of the indexes.
    unsafe { permute(array, size, &order) }
}

/// `array.sort`: sorts the array of `kind` elements at `array` in place, stably and ascending.
///
/// # Safety
/// `array` points to an array of emitted code whose elements are of `kind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_array_sort(array: *mut RawArray, kind: i32) {
    // SAFETY: forwarded from the caller; the key is the whole element.
    unsafe { sort_keyed(array, kind_size(kind), 0, kind) }
}

/// `array.sort_by`: sorts the array of `size`-byte elements at `array` in place, stably and
/// ascending by the key of `kind` at byte `offset` of each element (a field of a class).
///
/// # Safety
/// As [`sort_keyed`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_array_sort_by(array: *mut RawArray, size: usize, offset: usize, kind: i32) {
    // SAFETY: forwarded from the caller.
    unsafe { sort_keyed(array, size, offset, kind) }
}

/// `array.reverse`: reverses the array of `size`-byte elements at `array` in place.
///
/// # Safety
/// `array` points to an array of emitted code whose elements are `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_array_reverse(array: *mut RawArray, size: usize) {
    // SAFETY: forwarded from the caller.
    let array = unsafe { &*array };
    let order: Vec<usize> = (0..array.len).rev().collect();
    // SAFETY: `order` is a permutation of the indexes.
    unsafe { permute(array, size, &order) }
}

/// Whether an element of the array of `kind` elements at `array` equals `wanted` (1 or 0).
///
/// # Safety
/// `array` points to an array of emitted code whose elements are of `kind`.
unsafe fn contains(array: *const RawArray, kind: i32, wanted: Key) -> i32 {
    // SAFETY: forwarded from the caller.
    let array = unsafe { &*array };
    let size = kind_size(kind);
    // SAFETY: the buffer holds `len` elements of `kind`.
    let keys: Vec<Key> = (0..array.len).map(|i| unsafe { key(array.ptr.add(i * size), kind) }).collect();
    i32::from(arrays::contains(&keys, &wanted))
}

/// `array.contains` on an array of `i32` ([`KIND_I32`], `value` then fits an `i32`) or `i64`
/// ([`KIND_I64`]) elements (1 or 0).
///
/// # Safety
/// `array` points to an array of emitted code whose elements are of `kind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_array_contains_int(array: *const RawArray, kind: i32, value: i64) -> i32 {
    let wanted = if kind == KIND_I32 { Key::I32(value as i32) } else { Key::I64(value) };
    // SAFETY: forwarded from the caller.
    unsafe { contains(array, kind, wanted) }
}

/// `array.contains` on an array of `f64` elements, by IEEE `==` (1 or 0).
///
/// # Safety
/// `array` points to an array of emitted code whose elements are `f64`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_array_contains_f64(array: *const RawArray, value: f64) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { contains(array, KIND_F64, Key::F64(value)) }
}

/// `array.contains` on an array of strings (1 or 0).
///
/// # Safety
/// `array` points to an array of emitted code whose elements are strings, `value` to a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_array_contains_str(array: *const RawArray, value: *const RawString) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { contains(array, KIND_STRING, key(value.cast(), KIND_STRING)) }
}

/// The clone glue of an element type: writes a deep copy of the value at `src` into `dst`.
pub type CloneFn = unsafe extern "C" fn(dst: *mut u8, src: *const u8);

/// `array.slice`: writes the elements `start..end` of the array at `array`, each `size` bytes
/// aligned to `align`, into `out` as a new array; `clone` copies an element that owns memory
/// (none: the bytes are copied). Traps as [`arrays::slice_range`] says, before allocating.
///
/// # Safety
/// `out` is writable; `array` points to an array of emitted code with elements of that layout;
/// `clone`, when given, is that element type's clone glue.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_array_slice(
    out: *mut RawArray,
    array: *const RawArray,
    start: i64,
    end: i64,
    size: usize,
    align: usize,
    clone: Option<CloneFn>,
) {
    // SAFETY: forwarded from the caller.
    let array = unsafe { &*array };
    let range = arrays::slice_range(array.len, start, end).unwrap_or_else(|message| fail(message));
    let len = range.len();
    let layout = Layout::from_size_align(size * len, align)
        .unwrap_or_else(|_| fail(format!("slice of {len} elements: capacity overflow")));
    let buffer = allocate(layout);
    for (to, from) in range.enumerate() {
        // SAFETY: the source holds element `from`, the new buffer room for element `to`.
        unsafe {
            let (dst, src) = (buffer.add(to * size), array.ptr.add(from * size));
            match clone {
                Some(clone) => clone(dst, src),
                None => std::ptr::copy_nonoverlapping(src, dst, size),
            }
        }
    }
    // A zero-sized buffer is dangling and freed as zero bytes, whatever the capacity says.
    // SAFETY: `out` is writable.
    unsafe { out.write(RawArray { ptr: buffer, len, cap: len }) }
}
