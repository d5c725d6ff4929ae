//! `nagic test [FILE|DIR]…`: builds each program as a test build and runs every test in a
//! process of its own (a failed assertion is a trap, which ends only that test), then reports
//! as cargo does: `test NAME ... ok` or `FAILED` per test, the failures' output (a failed
//! assertion names its `file:line:col` and, for `assert_eq`, both values), and a summary line.
//! The command fails (exit 1) when a test fails or a program does not compile.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::backend::Backend;
use crate::failure::Failure;
use crate::load::load_tests;
use crate::passes::{self, Default, PassOptions};
use crate::runtime_lib::checkout;
use crate::target::Target;
use crate::timer::Timer;

/// How one test ended.
struct Outcome {
    name: String,
    location: String,
    passed: bool,
    output: String,
}

/// `nagic test`: every program in `inputs` (a file, or the programs of a directory: its
/// `.nagi` files, in folders too, that no other of them imports).
pub(crate) fn test(
    inputs: &[PathBuf],
    backend: Backend,
    pass_options: &PassOptions,
    target: &Target,
) -> Result<(), Failure> {
    if !matches!(backend, Backend::Rust | Backend::Llvm) {
        eprintln!("nagic: error: `nagic test` builds its programs; use --backend=rust or --backend=llvm");
        return Err(Failure::Usage);
    }
    let mut programs = Vec::new();
    for input in inputs {
        if input.is_dir() {
            programs.extend(roots(input));
        } else {
            programs.push(input.clone());
        }
    }
    let mut outcomes = Vec::new();
    let mut broken = 0;
    for program in &programs {
        match run_program(program, backend, pass_options, target) {
            Ok(mut ran) => outcomes.append(&mut ran),
            Err(_) => broken += 1,
        }
    }
    report(&outcomes, broken)
}

/// The programs of `dir`: its `.nagi` files (in folders too) that no other one imports.
pub(crate) fn roots(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "nagi") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut imported = HashSet::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let base = file.parent().unwrap_or(dir);
        for path in nagi_high::modules::imports_of(&text) {
            imported.insert(base.join(format!("{path}.nagi")));
        }
    }
    files.retain(|f| !imported.contains(f));
    files
}

/// Builds `program` as a test build and runs each of its tests.
fn run_program(
    program: &Path,
    backend: Backend,
    pass_options: &PassOptions,
    target: &Target,
) -> Result<Vec<Outcome>, Failure> {
    let (mut module, cases) = load_tests(program)?;
    if cases.is_empty() {
        return Ok(Vec::new());
    }
    passes::optimize(&mut module, pass_options, Default::Optimize, |_, _, _| {})?;
    let stem = program.file_stem().and_then(|s| s.to_str()).unwrap_or("tests");
    let dir = checkout().join("target/nagic-test");
    // The LLVM path writes its object file beside the executable, so the directory must exist
    // first (a fresh checkout has none).
    std::fs::create_dir_all(&dir).map_err(|e| {
        eprintln!("{}: error: cannot create the test builds' directory: {e}", dir.display());
        Failure::Input
    })?;
    let exe = dir.join(format!("{stem}-{}", backend_name(backend)));
    // Two `nagic test` runs of one program on one backend (at two LLVM levels, or from two
    // terminals) share the executable's path: each builds and runs it under this lock, so that
    // neither links over the other's file.
    let lock = std::fs::File::create(exe.with_extension("lock")).and_then(|file| file.lock().map(|()| file));
    let _lock = lock.map_err(|e| {
        eprintln!("{}: error: cannot lock the test build: {e}", exe.display());
        Failure::Input
    })?;
    backend.build(&module, None, program, &exe, target, &mut Timer::new(false))?;
    let mut outcomes = Vec::with_capacity(cases.len());
    for (i, case) in cases.into_iter().enumerate() {
        let run = Command::new(&exe).env(nagi_runtime_test_variable(), i.to_string()).output();
        let (passed, output) = match run {
            Ok(out) => {
                let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&out.stderr));
                (out.status.success(), text)
            }
            Err(e) => (false, format!("cannot start {}: {e}\n", exe.display())),
        };
        outcomes.push(Outcome { name: case.name, location: case.location, passed, output });
    }
    Ok(outcomes)
}

/// The environment variable a test build reads (the runtime's `program::TEST_VARIABLE`).
fn nagi_runtime_test_variable() -> &'static str {
    "NAGI_TEST"
}

fn backend_name(backend: Backend) -> &'static str {
    if backend == Backend::Llvm { "llvm" } else { "rust" }
}

/// Prints the report; fails when a test failed or a program did not build.
fn report(outcomes: &[Outcome], broken: usize) -> Result<(), Failure> {
    println!("\nrunning {} {}", outcomes.len(), if outcomes.len() == 1 { "test" } else { "tests" });
    for o in outcomes {
        println!("test {:?} ... {}", o.name, if o.passed { "ok" } else { "FAILED" });
    }
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| !o.passed).collect();
    if !failed.is_empty() {
        println!("\nfailures:\n");
        for o in &failed {
            println!("---- {:?} ({}) ----", o.name, o.location);
            print!("{}", o.output);
            if !o.output.ends_with('\n') {
                println!();
            }
            println!();
        }
        println!("failures:");
        for o in &failed {
            println!("    {:?}", o.name);
        }
    }
    let passed = outcomes.len() - failed.len();
    let verdict = if failed.is_empty() && broken == 0 { "ok" } else { "FAILED" };
    let mut summary = format!("\ntest result: {verdict}. {passed} passed; {} failed", failed.len());
    if broken > 0 {
        summary.push_str(&format!("; {broken} {} did not compile", if broken == 1 { "program" } else { "programs" }));
    }
    println!("{summary}");
    if verdict == "ok" { Ok(()) } else { Err(Failure::Input) }
}
