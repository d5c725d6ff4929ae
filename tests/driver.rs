//! The driver's own diagnostics: input files that are not UTF-8, `--print-low-after` options
//! that can print nothing, and what `--backend=interp` refuses or reports; and `nagic test`,
//! with tests that compute and tests that use the database, on both emitters.

mod support;

use support::{Backend, nagic, nagic_with_env, temp_dir};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_source_file_that_is_not_utf8_is_reported_at_its_first_bad_byte() {
    let dir = temp_dir("utf8");
    let high = dir.join("bad.nagi");
    std::fs::write(&high, b"fn main() {\n    print(\"caf\xc3\xa9 \xff\")\n}\n").unwrap();
    let out = nagic(&["check", high.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    // Line 2, column 17: `é` (two bytes) is one character, so the bad byte is the 17th.
    let expected = format!("{}:2:17: error[H101]: invalid UTF-8: byte 0xff", high.display());
    assert!(text.starts_with(&expected), "{text}");
    assert!(!text.contains("panicked"), "{text}");

    let low = dir.join("bad.low");
    std::fs::write(&low, b"nagi-low 1\nmodule m\n// \xfe\n").unwrap();
    let out = nagic(&["--emit=low", low.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let expected = format!("{}:3:4: error[L104]: invalid UTF-8: byte 0xfe", low.display());
    assert!(stderr(&out).starts_with(&expected), "{}", stderr(&out));
}

#[test]
fn print_low_after_says_when_no_pass_runs_or_a_named_pass_is_not_in_the_pipeline() {
    let out = nagic(&["--emit=low", "--print-low-after-all", "golden/high/functions.nagi"]);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("nagic: note: --print-low-after: no pass runs, so nothing is printed"),
        "{}",
        stderr(&out)
    );
    let out = nagic(&["--emit=low", "--passes=dce", "--print-low-after=inline", "golden/high/functions.nagi"]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("pass `inline` is not in the pipeline `dce`"), "{}", stderr(&out));
    // A pass that runs prints, with no note.
    let out = nagic(&["--emit=low", "--passes=dce", "--print-low-after=dce", "golden/high/functions.nagi"]);
    assert!(out.status.success());
    assert!(!stderr(&out).contains("note:"), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("// ===== Low after pass 1 (dce) =====\nnagi-low 1\n"), "{}", stderr(&out));
}

#[test]
fn the_interpreter_reports_a_trap_as_a_compiled_program_does_and_refuses_what_it_cannot_run() {
    // Exactly the compiled program's streams: the output before the trap, then one line.
    let out = nagic(&["run", "--backend=interp", "golden/low/edge_trap_div_zero.low"]);
    assert_eq!(out.status.code(), Some(101));
    assert_eq!(stderr(&out), "error: division by zero\n");
    // The call-depth limit is a flag: 1,001 frames of `sum_mod` and `main` are more than 1,000.
    let out = nagic(&["run", "--backend=interp", "--max-frames=1000", "golden/high/stack_overflow.nagi"]);
    assert_eq!((out.status.code(), String::from_utf8_lossy(&out.stdout).as_ref()), (Some(101), "before\n"));
    assert_eq!(stderr(&out), "error: stack overflow\n");
    // A service and a program that uses the database are input errors with a diagnostic.
    let out = nagic(&["run", "--backend=interp", "examples/users.nagi"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("error[I101]: the interpreter does not run services"), "{}", stderr(&out));
    let low = temp_dir("interp").join("db.low");
    let text = "nagi-low 1\nmodule db\n\nasync fn $begin() -> unit {\n  await rtcall db.begin()\n  return\n}\n\n\
                fn $main() -> unit {\n  return\n}\n";
    std::fs::write(&low, text).unwrap();
    // At -O0: `-O` would remove the uncalled `$begin`, and with it the database call.
    let out = nagic(&["run", "--backend=interp", "-O0", low.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("error[I102]: the interpreter does not support the database"), "{}", stderr(&out));
    // There is no executable to build, with the interpreter or the JIT.
    for backend in ["--backend=interp", "--backend=jit"] {
        let out = nagic(&["build", backend, "golden/low/arith_i64.low"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("--backend=interp and --backend=jit build no executable"), "{}", stderr(&out));
    }
    // The JIT runs programs; a service is an input error naming a route.
    let out = nagic(&["run", "--backend=jit", "examples/users.nagi"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("error[M107]: --backend=jit runs programs, not services (route GET /health)"),
        "{}",
        stderr(&out)
    );
    // An async `main` needs the runtime's scheduler (and database), which the JIT does not start.
    let low = temp_dir("jit").join("waits.low");
    std::fs::write(&low, "nagi-low 1\nmodule waits\n\nasync fn $main() -> unit {\n  return\n}\n").unwrap();
    let out = nagic(&["run", "--backend=jit", low.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("error[M109]: --backend=jit runs a `main` that is not async, and this one waits"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn nagic_test_reports_each_test_and_a_failed_assertion_with_its_place_on_both_emitters() {
    for backend in ["--backend=rust", "--backend=llvm"] {
        let out = nagic(&["test", backend, "tests/fixtures/tested"]);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(1), "{backend}: {stdout}{}", stderr(&out));
        for line in [
            "running 4 tests",
            "test \"addition\" ... ok",
            "test \"a deliberately failing assert_eq\" ... FAILED",
            "test \"a deliberately failing assert\" ... FAILED",
            "test \"slugs are lower case with dashes\" ... ok",
            "---- \"a deliberately failing assert_eq\" (tests/fixtures/tested/app.nagi:14:1) ----",
            "before the assertion",
            "error: assertion failed at tests/fixtures/tested/app.nagi:16:5: the values differ",
            "  left: a-b",
            " right: a_b",
            "error: assertion failed at tests/fixtures/tested/app.nagi:20:5",
            "test result: FAILED. 2 passed; 2 failed",
        ] {
            assert!(stdout.lines().any(|l| l == line), "{backend}: no line {line:?} in:\n{stdout}");
        }
    }
    // A single file, whose tests all pass, exits 0.
    let out = nagic(&["test", "tests/fixtures/tested/text.nagi"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}{}", stderr(&out));
    assert!(stdout.contains("test result: ok. 1 passed; 0 failed"), "{stdout}");
}

/// The lines of `nagic test`'s report for `tests/fixtures/tested_db`, in order.
const DATABASE_REPORT: &[&str] = &[
    "running 6 tests",
    "test \"a note is found after it is added\" ... ok",
    "test \"every test starts with an empty database\" ... ok",
    "test \"a transaction commits its writes\" ... ok",
    "test \"a deliberately failing assertion inside a transaction\" ... FAILED",
    "test \"a deliberately conflicting insert\" ... FAILED",
    "test \"a deliberately missing note\" ... FAILED",
    "---- \"a deliberately failing assertion inside a transaction\" (tests/fixtures/tested_db/notes.nagi:63:1) ----",
    "error: assertion failed at tests/fixtures/tested_db/notes.nagi:66:9: the values differ",
    "  left: 1",
    " right: 2",
    "---- \"a deliberately conflicting insert\" (tests/fixtures/tested_db/notes.nagi:70:1) ----",
    "inserted once",
    "error: 409 conflict: UNIQUE constraint failed: notes.id",
    "---- \"a deliberately missing note\" (tests/fixtures/tested_db/notes.nagi:76:1) ----",
    "error: the test failed with 404: no note 9",
    "test result: FAILED. 3 passed; 3 failed",
];

/// Tests that use the database: each runs with the program's table in a fresh in-memory
/// database (two tests insert the same key, and each counts one row), a transaction commits, and
/// an assertion inside a transaction, a conflict and a failure each fail only their test. No
/// database file is opened, not even the one `NAGI_DB` names.
fn nagic_test_gives_each_test_an_empty_database(backend: Backend) {
    let dir = temp_dir("tested-db");
    let named = dir.join("service.db");
    let out = nagic_with_env(&["test", backend.flag(), "tests/fixtures/tested_db"], &[("NAGI_DB", &named)]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", stderr(&out));
    let lines: Vec<&str> = stdout.lines().collect();
    let mut at = 0;
    for line in DATABASE_REPORT {
        match lines[at..].iter().position(|l| l == line) {
            Some(found) => at += found + 1,
            None => panic!("{backend:?}: no line {line:?} after line {at} in:\n{stdout}"),
        }
    }
    assert!(!named.exists(), "{backend:?}: the test build opened NAGI_DB");
}

/// `nagic test examples/blog`: the blog's tests, one of which opens an account in the database
/// and authenticates with its token.
fn nagic_test_runs_the_blog_tests(backend: Backend) {
    let out = nagic(&["test", backend.flag(), "examples/blog"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{backend:?}: {stdout}{}", stderr(&out));
    for line in [
        "running 8 tests",
        "test \"opening an account, then authenticating with its token\" ... ok",
        "test \"a window holds its items and says where the next begins\" ... ok",
        "test result: ok. 8 passed; 0 failed",
    ] {
        assert!(stdout.lines().any(|l| l == line), "{backend:?}: no line {line:?} in:\n{stdout}");
    }
}

/// `nagic test examples/board`: the board's tests, which fix the clock to expire a session and
/// to order posts across midnight, with no `CHECKER_KEY` set (a required setting that no test
/// reads stops none of them).
fn nagic_test_runs_the_board_tests_with_a_fixed_clock(backend: Backend) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_nagic"));
    command.args(["test", backend.flag(), "examples/board"]).current_dir(support::root()).env_remove("CHECKER_KEY");
    let out = command.output().expect("nagic starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{backend:?}: {stdout}{}", stderr(&out));
    for line in [
        "running 3 tests",
        "test \"a session lives for its time, then the clean-up removes it\" ... ok",
        "test \"posts list newest first, across midnight\" ... ok",
        "test result: ok. 3 passed; 0 failed",
    ] {
        assert!(stdout.lines().any(|l| l == line), "{backend:?}: no line {line:?} in:\n{stdout}");
    }
}

/// `nagic test golden/high/failure_in_flight.nagi`: a failure while an operation is still being
/// given its values (earlier fields of a class literal, a value assigned or pushed while its
/// place's index fails) ends each test with the failure, after what it printed before.
fn nagic_test_fails_a_test_whose_failure_leaves_values_in_flight(backend: Backend) {
    let out = nagic(&["test", backend.flag(), "golden/high/failure_in_flight.nagi"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{backend:?}: {stdout}{}", stderr(&out));
    let lines: Vec<&str> = stdout.lines().collect();
    let mut at = 0;
    for line in [
        "running 6 tests",
        "---- \"fields before a failing one\" (golden/high/failure_in_flight.nagi:35:1) ----",
        "a!",
        "error: the test failed with 400: too big: 3",
        "error: the test failed with 400: too big: 2",
        "xy",
        "error: the test failed with 400: too big: 5",
        "xy",
        "error: the test failed with 400: too big: 3",
        "2",
        "error: the test failed with 400: too big: 4",
        "error: the test failed with 400: too big: 2",
        "test result: FAILED. 0 passed; 6 failed",
    ] {
        match lines[at..].iter().position(|l| *l == line) {
            Some(found) => at += found + 1,
            None => panic!("{backend:?}: no line {line:?} after line {at} in:\n{stdout}"),
        }
    }
}

/// `nagic check` of a module checks it as part of the program that imports it: here the module's
/// SQL names a table only the main file declares (H501 when checked alone), and a real fault in
/// the module is still reported in the module's own file.
#[test]
fn checking_a_module_checks_it_in_its_program() {
    let dir = temp_dir("check-module");
    std::fs::create_dir_all(dir.join("store")).unwrap();
    std::fs::write(
        dir.join("app.nagi"),
        "import store/notes\n\nclass Note { id: i64, text: String }\n\ntable notes: Note key id\n\n\
         route GET \"/count\" () -> i64 {\n    return notes.count()\n}\n",
    )
    .unwrap();
    let module = dir.join("store/notes.nagi");
    std::fs::write(&module, "pub fn count() -> i64 {\n    return db.exec(\"DELETE FROM notes WHERE id < 0\")\n}\n")
        .unwrap();
    let out = nagic(&["check", module.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a module of"), "{}", stderr(&out));
    assert!(stderr(&out).contains("app.nagi; checking it as part of that program"), "{}", stderr(&out));
    std::fs::write(&module, "pub fn count() -> i64 {\n    return db.exec(\"DELETE FROM nothing\")\n}\n").unwrap();
    let out = nagic(&["check", module.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("store/notes.nagi:2:"), "{}", stderr(&out));
    assert!(stderr(&out).contains("error[H501]"), "{}", stderr(&out));
}

/// A recursive function that reads the database (tests/fixtures/recursive_db.nagi) builds as a
/// service and passes its test on every emitter: its future contains itself, which the Rust
/// emitter once left to rustc as an `async fn` (E0733, "internal compiler error").
fn a_recursive_function_that_reads_the_database_builds_and_runs(backend: Backend) {
    let source = "tests/fixtures/recursive_db.nagi";
    let exe = temp_dir("recursive-db").join("app");
    let mut args = vec!["build", source, "-o", exe.to_str().unwrap()];
    args.extend(backend.flags());
    let out = nagic(&args);
    assert!(out.status.success(), "{backend:?}: {}", stderr(&out));
    let out = nagic(&["test", backend.flag(), source]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{backend:?}: {stdout}{}", stderr(&out));
    assert!(stdout.lines().any(|l| l == "test result: ok. 1 passed; 0 failed"), "{backend:?}: {stdout}");
}

crate::on_every_backend!(
    nagic_test_runs_the_board_tests_with_a_fixed_clock,
    a_recursive_function_that_reads_the_database_builds_and_runs,
    nagic_test_gives_each_test_an_empty_database,
    nagic_test_runs_the_blog_tests,
    nagic_test_fails_a_test_whose_failure_leaves_values_in_flight
);
