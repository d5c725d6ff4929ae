//! Arithmetic and string operations whose Nagi semantics differ from a plain Rust operator: they
//! trap instead of panicking with Rust's message, and never depend on debug or release mode.
//!
//! The rules are those of `docs/design.md` §2, "Semantics both emitters must agree on".
//!
//! The small helpers are `#[inline]` so that generated code compiles like Rust's own operators
//! (a constant divisor becomes a multiply rather than a call and an `idiv` per element; the
//! kernel bench measured a 4× cost on `x % 7` without it); the trap paths stay out of line.

use crate::trap;

// The messages of the traps below, shared with the LLVM emitter and the interpreter.
pub use nagi_abi::trap_text::{DIVISION_BY_ZERO, REMAINDER_BY_ZERO, UNWRAP_OF_NONE};

/// Integer division `a / b` for `i32`, truncating toward zero.
///
/// Traps with `division by zero` when `b == 0`; `i32::MIN / -1 == i32::MIN` (two's complement
/// wrap, as `i32::wrapping_div`).
#[inline]
pub fn div_i32(a: i32, b: i32) -> i32 {
    match try_div_i32(a, b) {
        Ok(q) => q,
        Err(message) => trap(message),
    }
}

/// Integer division `a / b` for `i64`; the same rules as [`div_i32`].
#[inline]
pub fn div_i64(a: i64, b: i64) -> i64 {
    match try_div_i64(a, b) {
        Ok(q) => q,
        Err(message) => trap(message),
    }
}

/// Remainder `a % b` for `i32`, with the sign of `a`.
///
/// Traps with `remainder by zero` when `b == 0`; `i32::MIN % -1 == 0` (as `i32::wrapping_rem`).
#[inline]
pub fn rem_i32(a: i32, b: i32) -> i32 {
    match try_rem_i32(a, b) {
        Ok(r) => r,
        Err(message) => trap(message),
    }
}

/// Remainder `a % b` for `i64`; the same rules as [`rem_i32`].
#[inline]
pub fn rem_i64(a: i64, b: i64) -> i64 {
    match try_rem_i64(a, b) {
        Ok(r) => r,
        Err(message) => trap(message),
    }
}

// The `try_` forms below are the rules themselves, with the trap's message as the error instead
// of the trap: code that reports traps as values calls them (the Low interpreter's host, for
// `try_index`), and the host's tests pin the compiler's scalar evaluator (`nagi_low::eval`) to
// `try_div_*`/`try_rem_*`, so the two definitions cannot drift.

/// [`div_i32`] with the trap's message as the error.
#[inline]
pub fn try_div_i32(a: i32, b: i32) -> Result<i32, &'static str> {
    if b == 0 { Err(DIVISION_BY_ZERO) } else { Ok(a.wrapping_div(b)) }
}

/// [`div_i64`] with the trap's message as the error.
#[inline]
pub fn try_div_i64(a: i64, b: i64) -> Result<i64, &'static str> {
    if b == 0 { Err(DIVISION_BY_ZERO) } else { Ok(a.wrapping_div(b)) }
}

/// [`rem_i32`] with the trap's message as the error.
#[inline]
pub fn try_rem_i32(a: i32, b: i32) -> Result<i32, &'static str> {
    if b == 0 { Err(REMAINDER_BY_ZERO) } else { Ok(a.wrapping_rem(b)) }
}

/// [`rem_i64`] with the trap's message as the error.
#[inline]
pub fn try_rem_i64(a: i64, b: i64) -> Result<i64, &'static str> {
    if b == 0 { Err(REMAINDER_BY_ZERO) } else { Ok(a.wrapping_rem(b)) }
}

/// Checks a Nagi index `i` against a length and returns it as a `usize`.
///
/// Traps with `index out of range: the length is {len} but the index is {i}` when `i` is negative
/// or not below `len` (the wording follows Rust's slice-index panic).
#[inline]
pub fn index(i: i64, len: usize) -> usize {
    match usize::try_from(i) {
        Ok(at) if at < len => at,
        _ => index_out_of_range(i, len),
    }
}

/// [`index`] with the trap's message as the error.
#[inline]
pub fn try_index(i: i64, len: usize) -> Result<usize, String> {
    match usize::try_from(i) {
        Ok(at) if at < len => Ok(at),
        _ => Err(index_message(i, len)),
    }
}

/// The message of the trap an index `i` outside `0..len` raises.
#[cold]
pub fn index_message(i: i64, len: usize) -> String {
    format!("index out of range: the length is {len} but the index is {i}")
}

#[cold]
#[inline(never)]
fn index_out_of_range(i: i64, len: usize) -> ! {
    trap(&index_message(i, len))
}

/// Unwraps an option; traps with `unwrap of none` on `None`.
pub fn unwrap<T>(o: Option<T>) -> T {
    match o {
        Some(value) => value,
        None => trap(UNWRAP_OF_NONE),
    }
}

/// The smaller of two floats: a NaN operand yields the other operand (as C's `fmin`), and `-0.0`
/// orders below `+0.0`, so `fmin(0.0, -0.0)` and `fmin(-0.0, 0.0)` are both `-0.0`.
///
/// Rust's `f64::min` leaves the sign of a zero result unspecified, so the zero case is spelled out.
#[inline]
pub fn fmin(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        // Equal values: only ±0.0 can differ, and the negative zero is the smaller.
        a
    } else {
        b
    }
}

/// The larger of two floats: a NaN operand yields the other operand, and `+0.0` orders above
/// `-0.0`, so `fmax(0.0, -0.0)` and `fmax(-0.0, 0.0)` are both `0.0`.
#[inline]
pub fn fmax(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        b
    } else if b.is_nan() || a > b {
        a
    } else if b > a {
        b
    } else if a.is_sign_positive() {
        a
    } else {
        b
    }
}

/// String concatenation into a new `String` allocated once at the parts' total length: `a + b`
/// and an interpolated string's texts and holes (Low's `str.concat`), on the Rust path and,
/// through `nagi_rt_str_concat`, the LLVM path.
pub fn concat<'a, I>(parts: I) -> String
where
    I: IntoIterator<Item = &'a str>,
    I::IntoIter: Clone,
{
    let parts = parts.into_iter();
    let mut out = String::with_capacity(parts.clone().map(str::len).sum());
    for part in parts {
        out.push_str(part);
    }
    out
}
