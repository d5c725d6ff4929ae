//! `program::run_main` in a child process: this test binary runs itself with an environment
//! variable that makes the `child` test call `run_main`, which exits the process.

use std::process::{Command, Output};

use nagi_runtime::{ops, program, rt};

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

/// The child's entry point; does nothing when run as an ordinary test.
#[test]
fn child() {
    match std::env::var(CHILD).as_deref() {
        Ok("trap") => program::run_main(prints_then_traps),
        Ok("ok") => program::run_main(prints_and_returns),
        Ok("panic") => program::run_main(panics),
        _ => {}
    }
}

fn run_child(mode: &str) -> Output {
    Command::new(std::env::current_exe().expect("test binary"))
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .output()
        .expect("run child")
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
