//! The clock, and `Time` and `Duration` values, for emitted code (Low's `time.*` and
//! `duration.*` rows): thin adapters over [`crate::time`], which holds every rule. Both types
//! cross as `i64` microseconds.

use super::RawString;
use super::guard::fail;
use super::strings::{OptI64, read, write_string};
use crate::time;

/// `time.now`: the current instant (the system's clock, or the one a test fixed).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_time_now() -> i64 {
    time::now_micros()
}

/// `time.monotonic`: the monotonic clock's time since the process first asked.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_time_monotonic() -> i64 {
    time::monotonic_micros()
}

/// `time.from_micros`: `micros` as a `Time`; traps outside years 0000–9999.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_time_from_micros(micros: i64) -> i64 {
    time::try_time(micros).unwrap_or_else(|message| fail(message))
}

/// `time.micros`: a `Time`'s microseconds (the same `i64`).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_time_micros(time: i64) -> i64 {
    time
}

/// `duration.from_micros`: `micros` as a `Duration` (the same `i64`).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_duration_from_micros(micros: i64) -> i64 {
    micros
}

/// `duration.micros`: a `Duration`'s microseconds (the same `i64`).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_duration_micros(duration: i64) -> i64 {
    duration
}

/// `time.set_clock`: fixes the clock `time.now` reads (a test's `set_clock`).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_time_set_clock(time: i64) {
    time::fix_clock(Some(time));
}

/// `time.format`: the instant as RFC 3339 text, into `out`.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_time_format(out: *mut RawString, time: i64) {
    // SAFETY: `out` is writable.
    unsafe { write_string(out, time::format_time(time)) }
}

/// `duration.format`: the duration as its literal's text, into `out`.
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_duration_format(out: *mut RawString, duration: i64) {
    // SAFETY: `out` is writable.
    unsafe { write_string(out, time::format_duration(duration)) }
}

/// `time.parse`: the instant the RFC 3339 text at `s` names, or none, into `out` (laid out as an
/// `Option<i64>`).
///
/// # Safety
/// `out` is writable for an `Option<Time>`; `s` points to a string of emitted code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_time_parse(out: *mut OptI64, s: *const RawString) {
    // SAFETY: forwarded from the caller.
    let parsed = time::parse_time(unsafe { read(s) });
    // SAFETY: `out` is writable.
    unsafe { out.write(OptI64::from(parsed)) }
}
