//! The entry point of a compiled Nagi program that is not a service.

use std::panic::{self, AssertUnwindSafe};
use std::process;

use crate::trap::{HookMode, install_hook};

/// Runs a Nagi program's `main` and exits the process.
///
/// Installs the runtime's panic hook, runs `main`, flushes the buffered stdout and exits with
/// status 0. A trap flushes stdout, prints `error: <message>` to stderr (nothing else: no location,
/// no backtrace) and exits with status 101, the status Rust uses for a panic. Any other panic
/// prints `error: internal error: <payload>` and also exits with 101.
pub fn run_main(main: fn()) -> ! {
    install_hook(HookMode::Program);
    let outcome = panic::catch_unwind(AssertUnwindSafe(main));
    crate::rt::flush_stdout();
    match outcome {
        Ok(()) => process::exit(0),
        // The hook has already printed the message, after flushing stdout.
        Err(_) => process::exit(101),
    }
}

/// The environment variable that selects the test a test build runs (`nagic test` sets it).
pub const TEST_VARIABLE: &str = "NAGI_TEST";

/// The `test.selected` row: the index of the test to run, from [`TEST_VARIABLE`]; -1 when it
/// is unset or not a number, which runs none.
pub fn selected_test() -> i64 {
    std::env::var(TEST_VARIABLE).ok().and_then(|v| v.parse().ok()).unwrap_or(-1)
}

/// The `test.assert_failed` row: ends the test with `message` (a trap, so the report shows it).
pub fn assert_failed(message: &str) {
    crate::trap(message)
}

/// The `test.failed` row: ends a test whose body failed (a `try` it called failed) with the
/// recorded failure's status and message, as a trap.
pub fn test_failed() {
    crate::trap(&failed_test_message())
}

/// The message of `test.failed`: the recorded failure (which is cleared), `the test failed with
/// 422: the name is empty`.
pub fn failed_test_message() -> String {
    match crate::failure::take() {
        Some(f) => format!("the test failed with {}: {}", f.status, f.message),
        None => "the test failed".to_string(),
    }
}
