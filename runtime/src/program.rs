//! The entry points of a compiled Nagi program that is not a service: [`run_main`] for a `main`
//! that is not async, [`run_main_with_database`] for one that is (a test build whose tests use
//! the database), and the rows of tests in the language.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::process;

use crate::db::{self, Database, DbOptions};
use crate::panic_hook::{HookMode, install_hook};

/// Runs a Nagi program's `main` and exits the process.
///
/// Installs the runtime's panic hook, runs `main`, flushes the buffered stdout and exits with
/// status 0. A trap flushes stdout, prints `error: <message>` to stderr (nothing else: no location,
/// no backtrace) and exits with status 101, the status Rust uses for a panic. Any other panic
/// prints `error: internal error: <payload>` and also exits with 101.
pub fn run_main(main: fn()) -> ! {
    install_hook(HookMode::Program);
    crate::configuration::bind_or_exit();
    let outcome = panic::catch_unwind(AssertUnwindSafe(main));
    crate::rt::flush_stdout();
    match outcome {
        Ok(()) => process::exit(0),
        // The hook has already printed the message, after flushing stdout.
        Err(_) => process::exit(101),
    }
}

/// The database a program whose `main` is async runs with: SQLite's in-memory database, one
/// connection on the database thread, so it lives exactly as long as the process and starts
/// empty in each. Neither `--db` nor `NAGI_DB` is read: a test build must never open a
/// service's database file, whatever the environment of whoever runs it says.
pub const PROGRAM_DATABASE: &str = ":memory:";

/// Runs a Nagi program's async `main` with a database and exits the process.
///
/// The database is [`PROGRAM_DATABASE`], holding the program's tables (`tables` are their
/// `CREATE TABLE IF NOT EXISTS` statements), opened on its own thread as a service opens its
/// file; code outside a request reaches it as the default database, so its statements are
/// not part of any request's transaction and `db.begin` … `db.commit` are real transactions.
/// `main` runs on this thread under a single-threaded Tokio runtime. Then the database is
/// closed, stdout flushed, and the exit status is 0. A trap or a failed statement (reported
/// by the panic hook as `error: <message>`, as in [`run_main`]) exits with 101 at once, without
/// closing anything, so a trap inside a transaction cannot wait on the database. A database
/// that cannot be opened prints `error: <message>` and exits with 1.
pub fn run_main_with_database(tables: &[&str], main: impl Future<Output = ()>) -> ! {
    install_hook(HookMode::Program);
    crate::configuration::bind_or_exit();
    let (runtime, database) = open_database(tables);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| runtime.block_on(main)));
    finish_with_database(outcome.is_ok(), runtime, database)
}

/// The Tokio runtime and the database of a program whose `main` is async (`tables` and the job
/// queues' tables), the database set as the default one; on failure, reports it and exits with 1. Shared by both paths' entries.
pub(crate) fn open_database(tables: &[&str]) -> (tokio::runtime::Runtime, Database) {
    let fail = |message: String| -> ! {
        crate::rt::flush_stdout();
        eprintln!("error: {message}");
        process::exit(1)
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(format!("cannot start Tokio: {e}")));
    // The job queues' tables too, so that a test build can push jobs; no worker runs them there.
    let tables: Vec<&str> = tables.iter().copied().chain(crate::queues::TABLES).collect();
    let database =
        Database::open(PROGRAM_DATABASE, &tables, &DbOptions::default()).unwrap_or_else(|e| fail(e.to_string()));
    db::set_default(Some(database.handle()));
    (runtime, database)
}

/// Ends a program whose `main` is async: when `main` returned (`returned`), closes the database
/// and exits with 0; when it trapped or a statement failed (the panic hook has reported it),
/// exits with 101 at once.
pub(crate) fn finish_with_database(returned: bool, runtime: tokio::runtime::Runtime, database: Database) -> ! {
    if returned {
        db::set_default(None);
        runtime.block_on(database.close());
    }
    crate::rt::flush_stdout();
    process::exit(if returned { 0 } else { 101 })
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
