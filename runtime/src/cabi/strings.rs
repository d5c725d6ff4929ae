//! The string library's rows (`str.*`) for emitted code: each function reads its string
//! arguments through pointers to their `RawString`s, applies the rule of [`crate::strings`],
//! and writes a result that owns memory (a string, an array of strings, an option) through
//! `out`; a `bool` result is returned as an `i32` 0 or 1.
//!
//! An option is laid out as emitted code lays it out: a one-byte tag (0 or 1) at offset 0 and
//! the payload at its alignment ([`OptI64`], [`OptF64`]).

use std::alloc::Layout;

use super::{RawArray, RawString, allocate, fail, into_raw, text_unchecked};
use crate::strings;

/// `Option<i64>` as emitted code lays it out: `{ i1 tag, i64 value }`.
#[repr(C)]
pub struct OptI64 {
    /// 1 when there is a value.
    pub tag: u8,
    /// The value; unspecified when `tag` is 0.
    pub value: i64,
}

impl From<Option<i64>> for OptI64 {
    fn from(value: Option<i64>) -> OptI64 {
        OptI64 { tag: u8::from(value.is_some()), value: value.unwrap_or(0) }
    }
}

/// `Option<f64>` as emitted code lays it out: `{ i1 tag, double value }`.
#[repr(C)]
pub struct OptF64 {
    /// 1 when there is a value.
    pub tag: u8,
    /// The value; unspecified when `tag` is 0.
    pub value: f64,
}

/// The text of the string at `s`.
///
/// # Safety
/// `s` points to a string of emitted code (UTF-8 by construction, docs/c-abi.md).
pub(super) unsafe fn read<'a>(s: *const RawString) -> &'a str {
    // SAFETY: forwarded from the caller.
    unsafe { text_unchecked((*s).ptr, (*s).len) }
}

/// The texts of the array of strings at `array`.
///
/// # Safety
/// `array` points to an array of emitted code whose `len` elements are strings.
pub(super) unsafe fn read_all<'a>(array: *const RawArray) -> Vec<&'a str> {
    // SAFETY: forwarded from the caller.
    unsafe {
        let array = &*array;
        let elements: &[RawString] =
            if array.len == 0 { &[] } else { std::slice::from_raw_parts(array.ptr.cast(), array.len) };
        elements.iter().map(|s| read(s)).collect()
    }
}

/// `strings` as an array of emitted code, handed over (the buffer and each string).
fn strings_into_raw(strings: Vec<String>) -> RawArray {
    let len = strings.len();
    let layout = Layout::array::<RawString>(len).unwrap_or_else(|_| panic!("{len} strings: capacity overflow"));
    let buffer = allocate(layout).cast::<RawString>();
    for (i, s) in strings.into_iter().enumerate() {
        // SAFETY: the buffer holds `len` strings.
        unsafe { buffer.add(i).write(into_raw(s.into_bytes())) };
    }
    RawArray { ptr: buffer.cast(), len, cap: len }
}

/// `str.contains`: whether the string at `s` contains the one at `t` (1 or 0).
///
/// # Safety
/// `s` and `t` point to strings of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_contains(s: *const RawString, t: *const RawString) -> i32 {
    // SAFETY: forwarded from the caller.
    i32::from(unsafe { strings::contains(read(s), read(t)) })
}

/// `str.starts_with` (1 or 0).
///
/// # Safety
/// As [`nagi_rt_str_contains`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_starts_with(s: *const RawString, t: *const RawString) -> i32 {
    // SAFETY: forwarded from the caller.
    i32::from(unsafe { strings::starts_with(read(s), read(t)) })
}

/// `str.ends_with` (1 or 0).
///
/// # Safety
/// As [`nagi_rt_str_contains`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_ends_with(s: *const RawString, t: *const RawString) -> i32 {
    // SAFETY: forwarded from the caller.
    i32::from(unsafe { strings::ends_with(read(s), read(t)) })
}

/// `str.find`: the byte position of the first `t` in `s`, or none, into `out`.
///
/// # Safety
/// `out` is writable; `s` and `t` point to strings of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_find(out: *mut OptI64, s: *const RawString, t: *const RawString) {
    // SAFETY: forwarded from the caller.
    let found = unsafe { strings::find(read(s), read(t)) };
    // SAFETY: `out` is writable.
    unsafe { out.write(found.into()) }
}

/// `str.split`: the parts of `s` between the separators `sep`, as an array of strings into
/// `out`; traps on an empty separator.
///
/// # Safety
/// `out` is writable; `s` and `sep` point to strings of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_split(out: *mut RawArray, s: *const RawString, sep: *const RawString) {
    // SAFETY: forwarded from the caller.
    match unsafe { strings::try_split(read(s), read(sep)) } {
        // SAFETY: `out` is writable.
        Ok(parts) => unsafe { out.write(strings_into_raw(parts)) },
        Err(message) => fail(message.to_owned()),
    }
}

/// Writes `value` into `out` as a string handed over.
///
/// # Safety
/// `out` is writable.
pub(super) unsafe fn write_string(out: *mut RawString, value: String) {
    // SAFETY: forwarded from the caller.
    unsafe { out.write(into_raw(value.into_bytes())) }
}

/// `str.trim`, into `out`.
///
/// # Safety
/// `out` is writable; `s` points to a string of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_trim(out: *mut RawString, s: *const RawString) {
    // SAFETY: forwarded from the caller.
    unsafe { write_string(out, strings::trim(read(s))) }
}

/// `str.to_lower`, into `out`.
///
/// # Safety
/// As [`nagi_rt_str_trim`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_to_lower(out: *mut RawString, s: *const RawString) {
    // SAFETY: forwarded from the caller.
    unsafe { write_string(out, strings::to_lower(read(s))) }
}

/// `str.to_upper`, into `out`.
///
/// # Safety
/// As [`nagi_rt_str_trim`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_to_upper(out: *mut RawString, s: *const RawString) {
    // SAFETY: forwarded from the caller.
    unsafe { write_string(out, strings::to_upper(read(s))) }
}

/// `str.replace`: `s` with every `from` replaced by `to`, into `out`.
///
/// # Safety
/// `out` is writable; the others point to strings of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_replace(
    out: *mut RawString,
    s: *const RawString,
    from: *const RawString,
    to: *const RawString,
) {
    // SAFETY: forwarded from the caller.
    unsafe { write_string(out, strings::replace(read(s), read(from), read(to))) }
}

/// `str.join`: the strings of the array at `parts` with `sep` between each two, into `out`.
///
/// # Safety
/// `out` is writable; `parts` points to an array of strings of emitted code, `sep` to a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_join(out: *mut RawString, parts: *const RawArray, sep: *const RawString) {
    // SAFETY: forwarded from the caller.
    let parts = unsafe { read_all(parts) };
    // SAFETY: forwarded from the caller.
    unsafe { write_string(out, strings::join(&parts, read(sep))) }
}

/// `str.slice`: the bytes `start..end` of `s` as a new string into `out`; traps unless the
/// range is inside the string and on character boundaries.
///
/// # Safety
/// `out` is writable; `s` points to a string of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_slice(out: *mut RawString, s: *const RawString, start: i64, end: i64) {
    // SAFETY: forwarded from the caller.
    match unsafe { strings::try_slice(read(s), start, end) } {
        // SAFETY: `out` is writable.
        Ok(part) => unsafe { write_string(out, part) },
        Err(message) => fail(message),
    }
}

/// `str.parse_i64`: `s` as a decimal `i64`, or none, into `out`.
///
/// # Safety
/// `out` is writable; `s` points to a string of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_parse_i64(out: *mut OptI64, s: *const RawString) {
    // SAFETY: forwarded from the caller.
    let parsed = unsafe { strings::parse_i64(read(s)) };
    // SAFETY: `out` is writable.
    unsafe { out.write(parsed.into()) }
}

/// `str.parse_f64`: `s` as an `f64`, or none, into `out`.
///
/// # Safety
/// `out` is writable; `s` points to a string of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_parse_f64(out: *mut OptF64, s: *const RawString) {
    // SAFETY: forwarded from the caller.
    let parsed = unsafe { strings::parse_f64(read(s)) };
    // SAFETY: `out` is writable.
    unsafe { out.write(OptF64 { tag: u8::from(parsed.is_some()), value: parsed.unwrap_or(0.0) }) }
}
