//! Randomness and secrets for emitted code (Low's `rand.*`, `secret.*` and `password.*`):
//! thin adapters over [`crate::secrets`], which holds every rule. The password rows are pending
//! operations, as on the Rust path they are awaits: the hash runs on the blocking pool.

use super::pending::{WriteOut, pending};
use super::strings::{read, write_string};
use super::{RawString, guard::fail, text};
use crate::secrets;

/// `rand.int`: a uniformly random `i64` in `lo..=hi`; traps when `lo > hi`.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_rand_int(lo: i64, hi: i64) -> i64 {
    secrets::try_random_int(lo, hi).unwrap_or_else(|message| fail(message))
}

/// `rand.token`: `n` random bytes as URL-safe base64 into `out`; traps unless `1 <= n <= 1024`.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_rand_token(out: *mut RawString, n: i64) {
    match secrets::try_token(n) {
        // SAFETY: `out` is writable.
        Ok(token) => unsafe { write_string(out, token) },
        Err(message) => fail(message),
    }
}

/// `secret.eq`: whether the strings at `a` and `b` are equal, compared in constant time (1 or 0).
///
/// # Safety
/// `a` and `b` point to strings of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_secret_eq(a: *const RawString, b: *const RawString) -> i32 {
    // SAFETY: forwarded from the caller.
    i32::from(unsafe { secrets::secure_eq(read(a), read(b)) })
}

/// `password.hash`: an operation whose finish writes the Argon2id PHC hash of the `len` bytes
/// at `ptr` (copied before this returns) as a string.
///
/// # Safety
/// `ptr` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_password_hash(ptr: *const u8, len: usize) -> *mut super::pending::PendingOp {
    // SAFETY: forwarded from the caller.
    let password = unsafe { text(ptr, len) }.into_owned();
    pending(async move { Text(secrets::hash_password(&password).await) })
}

/// `password.verify`: an operation whose finish writes whether the password at `ptr` matches the
/// hash at `hash` (both copied before this returns) as a `bool`.
///
/// # Safety
/// `ptr` and `hash` point to `len` and `hash_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_password_verify(
    ptr: *const u8,
    len: usize,
    hash: *const u8,
    hash_len: usize,
) -> *mut super::pending::PendingOp {
    // SAFETY: forwarded from the caller.
    let (password, hash) = unsafe { (text(ptr, len).into_owned(), text(hash, hash_len).into_owned()) };
    pending(async move { Truth(secrets::verify_password(&password, &hash).await) })
}

/// A string result, written as emitted code holds a `String`.
struct Text(String);

impl WriteOut for Text {
    unsafe fn write_to(self, out: *mut u8) {
        // SAFETY: `out` is writable for a string.
        unsafe { write_string(out.cast(), self.0) }
    }
}

/// A `bool` result, written as one byte 0 or 1 (the layout of `bool` in memory).
struct Truth(bool);

impl WriteOut for Truth {
    unsafe fn write_to(self, out: *mut u8) {
        // SAFETY: `out` is writable for a bool.
        unsafe { out.write(u8::from(self.0)) }
    }
}
