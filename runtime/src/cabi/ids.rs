//! Ids for emitted code (Low's `uuid.*` rows): thin adapters over [`crate::ids`], which holds
//! every rule. A `Uuid` crosses by pointer to its 16 bytes (8-aligned in emitted memory; read
//! and written unaligned here all the same).

use super::RawString;
use super::strings::{read, write_string};
use crate::ids;

/// `Option<Uuid>` as emitted code lays it out: a one-byte tag, then the bytes at offset 8.
#[repr(C)]
pub struct OptUuid {
    tag: u8,
    value: Bytes,
}

/// A `Uuid`'s bytes at the alignment emitted code gives them (`[2 x i64]`).
#[repr(C, align(8))]
struct Bytes([u8; 16]);

/// `uuid.v7`: a new time-ordered UUID, into `out`.
///
/// # Safety
/// `out` is writable for 16 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_uuid_v7(out: *mut [u8; 16]) {
    // SAFETY: `out` is writable.
    unsafe { out.write_unaligned(ids::v7_bytes()) }
}

/// `uuid.v4`: a new random UUID, into `out`.
///
/// # Safety
/// As [`nagi_rt_uuid_v7`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_uuid_v4(out: *mut [u8; 16]) {
    // SAFETY: `out` is writable.
    unsafe { out.write_unaligned(ids::v4_bytes()) }
}

/// `uuid.eq`: whether the UUIDs at `a` and `b` are the same (1 or 0).
///
/// # Safety
/// `a` and `b` point to 16 readable bytes each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_uuid_eq(a: *const [u8; 16], b: *const [u8; 16]) -> i32 {
    // SAFETY: forwarded from the caller.
    i32::from(unsafe { a.read_unaligned() == b.read_unaligned() })
}

/// `uuid.format`: the canonical text of the UUID at `u`, into `out`.
///
/// # Safety
/// `out` is writable; `u` points to 16 readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_uuid_format(out: *mut RawString, u: *const [u8; 16]) {
    // SAFETY: forwarded from the caller.
    unsafe { write_string(out, ids::format(u.read_unaligned())) }
}

/// `uuid.parse`: the UUID the text at `s` names, or none, into `out`.
///
/// # Safety
/// `out` is writable for an `Option<Uuid>`; `s` points to a string of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_uuid_parse(out: *mut OptUuid, s: *const RawString) {
    // SAFETY: forwarded from the caller.
    let parsed = ids::parse(unsafe { read(s) });
    // SAFETY: `out` is writable.
    unsafe { out.write(OptUuid { tag: u8::from(parsed.is_some()), value: Bytes(parsed.unwrap_or_default()) }) }
}
