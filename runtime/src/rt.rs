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

thread_local! {
    /// Where this thread's printed lines go instead of stdout while [`capture`] runs.
    static CAPTURED: std::cell::RefCell<Option<Vec<u8>>> = const { std::cell::RefCell::new(None) };
}

/// Writes one value and a newline: into this thread's capture when one is active, into the log
/// queue under the HTTP server, else into the buffered stdout.
fn print_line(value: impl Display) {
    let captured = CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some(buffer) => {
            let _ = writeln!(buffer, "{value}");
            true
        }
        None => false,
    });
    if captured || crate::logging::forward_print(&value) {
        return;
    }
    let _ = writeln!(stdout(), "{value}");
}

/// Runs `f` with every line this thread prints through the runtime collected instead of
/// written, and gives `f`'s result with the bytes it printed. For running programs in process
/// and comparing their output (the differential fuzz target); captures do not nest.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<u8>) {
    CAPTURED.with(|c| *c.borrow_mut() = Some(Vec::new()));
    let result = f();
    let printed = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (result, printed)
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

/// The `time.sleep` row: waits `ms` milliseconds (none when `ms` is not positive) on the Tokio
/// timer, so the thread runs other tasks meanwhile.
pub async fn sleep(ms: i64) {
    let ms = u64::try_from(ms).unwrap_or(0);
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_collects_this_threads_lines_and_ends_with_its_closure() {
        let (answer, printed) = capture(|| {
            print_i64(-7);
            print_f64(-0.0);
            print_str("é");
            42
        });
        assert_eq!((answer, printed), (42, b"-7\n-0.0\n\xc3\xa9\n".to_vec()));
        // Another thread's lines are not this capture's.
        let (_, printed) = capture(|| std::thread::spawn(|| capture(|| print_bool(true)).1).join().unwrap());
        assert_eq!(printed, b"");
        assert!(CAPTURED.with(|c| c.borrow().is_none()));
    }
}
