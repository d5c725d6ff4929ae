//! Printing and value formatting for generated code: one value and a newline per `print` call.
//!
//! Output goes through one process-wide, locked, buffered stdout, flushed by
//! [`crate::program::run_main`] at exit and before a trap's message. Under the HTTP server
//! ([`crate::http::serve`]) printed lines go into the log queue instead, so that a handler that
//! prints can never block on a stalled stdout; see [`crate::logging`].
//!
//! Write errors (for example a closed pipe) are ignored: a Nagi program's output is best-effort
//! once its reader has gone, as with a shell pipeline that `head` cut short.

use std::fmt::Display;
use std::io::{self, BufWriter, Stdout, Write};
use std::sync::{LazyLock, Mutex, MutexGuard};

pub use crate::json::{json_decode, json_encode};

static STDOUT: LazyLock<Mutex<BufWriter<Stdout>>> =
    LazyLock::new(|| Mutex::new(BufWriter::with_capacity(64 * 1024, io::stdout())));

/// Locks the shared stdout buffer. A panic while the lock was held cannot leave the buffer in a
/// state worse than a partial line, so a poisoned lock is simply taken over.
fn stdout() -> MutexGuard<'static, BufWriter<Stdout>> {
    STDOUT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Writes one value and a newline: into the log queue under the HTTP server, else into the
/// buffered stdout.
fn print_line(value: impl Display) {
    if crate::logging::forward_print(&value) {
        return;
    }
    let _ = writeln!(stdout(), "{value}");
}

/// Flushes the buffered stdout. Called at program exit, before a trap's message, and by the HTTP
/// server at shutdown; generated code need not call it.
pub fn flush_stdout() {
    // try_lock, not lock: the panic hook calls this, and a panic raised while this thread held
    // the lock must not deadlock the hook.
    match STDOUT.try_lock() {
        Ok(mut out) => {
            let _ = out.flush();
        }
        Err(std::sync::TryLockError::Poisoned(poisoned)) => {
            let _ = poisoned.into_inner().flush();
        }
        Err(std::sync::TryLockError::WouldBlock) => {}
    }
}

/// Prints an `i32` in decimal, then a newline.
pub fn print_i32(v: i32) {
    print_line(v);
}

/// Prints an `i64` in decimal, then a newline.
pub fn print_i64(v: i64) {
    print_line(v);
}

/// Prints an `f64` as Rust's `{:?}` writes it (`1.0`, `-0.0`, `NaN`, `inf`, `1e21`), then a newline.
pub fn print_f64(v: f64) {
    print_line(format_args!("{v:?}"));
}

/// Prints `true` or `false`, then a newline.
pub fn print_bool(v: bool) {
    print_line(v);
}

/// Prints a string as is, then a newline.
pub fn print_str(v: &str) {
    print_line(v);
}

/// Formats an `i32` in decimal.
pub fn fmt_i32(v: i32) -> String {
    v.to_string()
}

/// Formats an `i64` in decimal.
pub fn fmt_i64(v: i64) -> String {
    v.to_string()
}

/// Formats an `f64` as Rust's `{:?}` does: always with a fractional part or exponent (`1.0`,
/// `1e21`, `0.30000000000000004`), `-0.0` with its sign, `NaN`, `inf`, `-inf`.
pub fn fmt_f64(v: f64) -> String {
    format!("{v:?}")
}

/// Formats `true` or `false`.
pub fn fmt_bool(v: bool) -> String {
    v.to_string()
}
