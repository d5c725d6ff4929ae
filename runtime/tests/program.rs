//! `program::run_main` and `program::run_main_with_database` in a child process: this test
//! binary runs itself with an environment variable that makes the `child` test call one of them,
//! which exits the process.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use nagi_runtime::{db, ops, program, rt};

const CHILD: &str = "NAGI_RUNTIME_TEST_CHILD";

fn prints_then_traps() {
    rt::print_i32(1);
    rt::print_f64(0.1 + 0.2);
    rt::print_str("before");
    rt::print_i64(ops::div_i64(1, 0));
    rt::print_str("after");
}

fn prints_and_returns() {
    rt::print_bool(true);
    rt::print_f64(-0.0);
    rt::print_str("done");
}

fn panics() {
    rt::print_str("partial");
    let values: Vec<i32> = Vec::new();
    let _ = values.first().copied().unwrap_or_else(|| panic!("a bug in the runtime"));
}

/// The table of the children that use the database.
const NOTES: &str =
    "CREATE TABLE IF NOT EXISTS \"notes\" (\"id\" INTEGER NOT NULL, \"text\" TEXT NOT NULL, PRIMARY KEY (\"id\"))";

/// Inserts note `id`, printing how many rows changed.
async fn insert(id: i64) {
    rt::print_i64(db::exec("INSERT INTO notes (id, text) VALUES (?, 'a')", vec![id.into()]).await);
}

/// Writes and counts: the table starts empty, so each statement changes one row.
async fn writes_and_counts() {
    insert(1).await;
    db::begin().await;
    rt::print_i64(db::exec("UPDATE notes SET text = 'b'", Vec::new()).await);
    db::commit().await;
    rt::print_i64(db::exec("DELETE FROM notes WHERE text = 'b'", Vec::new()).await);
}

async fn traps_in_a_transaction() {
    db::begin().await;
    insert(1).await;
    rt::print_i64(ops::div_i64(1, 0));
}

async fn inserts_twice() {
    insert(7).await;
    insert(7).await;
    rt::print_str("after");
}

/// The child's entry point; does nothing when run as an ordinary test.
#[test]
fn child() {
    match std::env::var(CHILD).as_deref() {
        Ok("trap") => program::run_main(prints_then_traps),
        Ok("ok") => program::run_main(prints_and_returns),
        Ok("panic") => program::run_main(panics),
        Ok("db") => program::run_main_with_database(&[NOTES], writes_and_counts()),
        Ok("db_trap") => program::run_main_with_database(&[NOTES], traps_in_a_transaction()),
        Ok("db_conflict") => program::run_main_with_database(&[NOTES], inserts_twice()),
        _ => {}
    }
}

/// Runs the child in `mode` in `dir`, with `NAGI_DB` naming a file there; fails the test when
/// the child has not ended after 60 seconds (it hangs), after killing it.
fn run_child_in(mode: &str, dir: &std::path::Path) -> Output {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .env("NAGI_DB", dir.join("service.db"))
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run child");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait for the child").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the child `{mode}` did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("the child's output")
}

fn run_child(mode: &str) -> Output {
    run_child_in(mode, &std::env::temp_dir())
}

/// A fresh, empty directory for one child.
fn empty_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nagi-runtime-program-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

#[test]
fn a_trap_flushes_stdout_prints_the_message_and_exits_101() {
    let output = run_child("trap");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(101), "stderr: {stderr}");
    assert!(stdout.contains("1\n0.30000000000000004\nbefore\n"), "stdout: {stdout}");
    assert!(!stdout.contains("after"));
    assert!(stderr.lines().any(|line| line == "error: division by zero"), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "the default panic message leaked: {stderr}");
}

#[test]
fn a_normal_exit_flushes_and_exits_0() {
    let output = run_child("ok");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout.contains("true\n-0.0\ndone\n"), "stdout: {stdout}");
}

#[test]
fn another_panic_is_an_internal_error() {
    let output = run_child("panic");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(101));
    assert!(String::from_utf8_lossy(&output.stdout).contains("partial\n"));
    assert!(stderr.lines().any(|line| line == "error: internal error: a bug in the runtime"), "stderr: {stderr}");
}

#[test]
fn an_async_main_runs_with_its_tables_in_a_fresh_in_memory_database() {
    let dir = empty_dir("db");
    for _ in 0..2 {
        let output = run_child_in("db", &dir);
        let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
        // The second run starts empty too: its insert does not conflict, and one row changes.
        assert!(stdout.contains("1\n1\n1\n"), "stdout: {stdout}");
        assert!(!stderr.contains("error"), "stderr: {stderr}");
    }
    // Neither `NAGI_DB` nor the working directory got a database file.
    let files: Vec<_> = std::fs::read_dir(&dir).expect("the directory").collect();
    assert!(files.is_empty(), "{files:?}");
}

#[test]
fn a_trap_inside_a_transaction_ends_the_program_at_once() {
    let output = run_child("db_trap");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(101), "stderr: {stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("1\n"));
    assert!(stderr.lines().any(|line| line == "error: division by zero"), "stderr: {stderr}");
}

#[test]
fn a_failed_statement_ends_the_program_with_the_answer_a_request_would_get() {
    let output = run_child("db_conflict");
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(101), "stderr: {stderr}");
    assert!(stdout.contains("1\n") && !stdout.contains("after"), "stdout: {stdout}");
    assert!(
        stderr.lines().any(|line| line == "error: 409 conflict: UNIQUE constraint failed: notes.id"),
        "stderr: {stderr}"
    );
}
