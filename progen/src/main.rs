//! Batch mode of the program generator: seeded random programs run through several executors
//! with `nagic`, every difference in stdout, exit status or trap message saved for a person.
//!
//! ```text
//! cargo run -p nagi-progen --release -- [--count N] [--seed S] [--nagic PATH] [--out DIR] [--waits]
//!                                       [--backends interp,jit-O0,jit-O2,rust,rust-O0,llvm-O0,llvm-O2]
//! ```
//!
//! `--waits` adds recursive async functions and tasks that spawn tasks of their own function
//! (`nagi_progen::Config::waits`): their programs run only on the compiled backends (`rust`,
//! `rust-O0`, `llvm-O0`, `llvm-O2`), since the JIT refuses an async `main` (M109) and the
//! interpreter refuses tasks (I103), so `--waits` with an in-process backend is refused.
//!
//! Backends: `rust` (Low passes on), `rust-O0` (passes off), `llvm-O0`, `llvm-O2` (LLVM's
//! levels, Low passes on), each built into an executable; and in `nagic`'s own process, with no
//! build: `interp` (the Low interpreter) and `jit-O0`, `jit-O2` (LLVM's JIT at those levels),
//! Low passes on. Each backend runs the program's `main`, then each of its tests: the test build
//! (`nagi_progen::compile_tests`, the build `nagic test` makes) is written as Low beside the
//! program and run once per test with `NAGI_TEST` selecting it, so the tests run on the
//! interpreter and the JIT too, which `nagic test` does not. A module of the program is
//! written beside it (`lib.nagi`). The first backend is the reference; a program whose result
//! differs on another is written to `DIR/seed-S.nagi` (all its files, each module after a
//! `// file:` line) and `DIR/seed-S/` (the files to run) with the results side by side in
//! `seed-S.txt`, and shrunk (`nagi_progen::reduce`) to `DIR/seed-S.min.nagi` and `seed-S.min/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one executor did with one run of a program: its `main`, or one of its tests.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    stdout: String,
    status: Option<i32>,
    /// Standard error from its first `error: …` line on (a trap, a failed assertion with both
    /// values, a failed test's failure), if any.
    trap: Option<String>,
}

/// What one executor did with a program: `main`, then each test in order; or why it could not
/// build or run it.
type Runs = Result<Vec<Outcome>, String>;

/// The source file of the program's `main`, and of its test build, in the work directory.
const PROGRAM: &str = "prog.nagi";
const TESTS: &str = "prog_tests.low";

fn flags(backend: &str) -> Option<&'static [&'static str]> {
    Some(match backend {
        "rust" => &["--backend=rust", "-O"],
        "rust-O0" => &["--backend=rust", "-O0"],
        "llvm-O0" => &["--backend=llvm", "--llvm-opt=0", "-O"],
        "llvm-O2" => &["--backend=llvm", "--llvm-opt=2", "-O"],
        _ => return None,
    })
}

/// The `nagic run` flags of the executors that run a program inside `nagic` itself (no build):
/// the Low interpreter, and LLVM's JIT at -O0 and -O2.
fn in_process(backend: &str) -> Option<&'static [&'static str]> {
    Some(match backend {
        "interp" => &["--backend=interp", "-O"],
        "jit-O0" => &["--backend=jit", "--llvm-opt=0", "-O"],
        "jit-O2" => &["--backend=jit", "--llvm-opt=2", "-O"],
        _ => return None,
    })
}

/// Builds `source` for `backend` into `dir` and runs it once for each of `selections` (with
/// `NAGI_TEST` set to the test's index, or unset), each with a 10 s limit; an in-process
/// executor (`interp`, `jit-O0`, `jit-O2`) runs it inside `nagic` instead, with no build.
fn run(nagic: &Path, backend: &str, source: &Path, dir: &Path, selections: &[Option<usize>]) -> Runs {
    let select = |command: &mut Command, selection: Option<usize>| {
        match selection {
            Some(test) => command.env("NAGI_TEST", test.to_string()),
            None => command.env_remove("NAGI_TEST"),
        };
    };
    if let Some(flags) = in_process(backend) {
        let run_one = |selection: Option<usize>| {
            let mut command = Command::new(nagic);
            command.arg("run").args(flags).arg(source);
            select(&mut command, selection);
            wait(command, backend)
        };
        return selections.iter().map(|&s| run_one(s)).collect();
    }
    let stem = source.file_stem().and_then(|s| s.to_str()).unwrap_or("prog");
    let exe = dir.join(format!("{stem}-{backend}"));
    let built = Command::new(nagic)
        .arg("build")
        .args(flags(backend).ok_or_else(|| format!("unknown backend {backend}"))?)
        .arg(source)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("cannot start nagic: {e}"))?;
    if !built.status.success() {
        return Err(format!("nagic build failed on {backend}:\n{}", String::from_utf8_lossy(&built.stderr)));
    }
    let run_one = |selection: Option<usize>| {
        let mut command = Command::new(&exe);
        select(&mut command, selection);
        wait(command, backend)
    };
    selections.iter().map(|&s| run_one(s)).collect()
}

/// Writes the program `text` (its files, and the Low of its test build when it has tests) into
/// `dir` and runs it on every backend: `main`, then each test.
fn run_program(o: &Options, dir: &Path, text: &str) -> Vec<(String, Runs)> {
    let every = |result: &Result<(), String>| {
        o.backends.iter().map(|b| (b.clone(), result.clone().map(|()| Vec::new()))).collect()
    };
    let tests = match write_program(dir, text) {
        Ok(tests) => tests,
        Err(e) => return every(&Err(e)),
    };
    let (program, low) = (dir.join(PROGRAM), dir.join(TESTS));
    let each_test: Vec<Option<usize>> = (0..tests).map(Some).collect();
    let runs = |backend: &String| {
        let mut outcomes = run(&o.nagic, backend, &program, dir, &[None])?;
        if tests > 0 {
            outcomes.extend(run(&o.nagic, backend, &low, dir, &each_test)?);
        }
        Ok(outcomes)
    };
    o.backends.iter().map(|b| (b.clone(), runs(b))).collect()
}

/// Writes the files of the program `text` into `dir` (the main file as [`PROGRAM`], each module
/// beside it) and, when it has tests, the Low of its test build as [`TESTS`]; returns how many
/// tests it has.
fn write_program(dir: &Path, text: &str) -> Result<usize, String> {
    let files = nagi_progen::files(text);
    let _ = std::fs::remove_file(dir.join("lib.nagi"));
    let write =
        |name: &str, text: &str| std::fs::write(dir.join(name), text).map_err(|e| format!("cannot write {name}: {e}"));
    write(PROGRAM, &files.main)?;
    for (path, module) in &files.modules {
        write(&format!("{path}.nagi"), module)?;
    }
    let (module, tests) =
        nagi_progen::compile_tests(text, "prog").map_err(|e| format!("the test build does not compile:\n{e}"))?;
    if tests > 0 {
        write(TESTS, &nagi_low::print_module(&module, None))?;
    }
    Ok(tests)
}

/// Saves the program `text` for a person: `OUT/NAME.nagi` (all its files in one text) and the
/// files to run in `OUT/NAME/`.
fn save(out: &Path, name: &str, text: &str) {
    let _ = std::fs::write(out.join(format!("{name}.nagi")), text);
    let dir = out.join(name);
    let files = nagi_progen::files(text);
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(PROGRAM), &files.main);
        for (path, module) in &files.modules {
            let _ = std::fs::write(dir.join(format!("{path}.nagi")), module);
        }
    }
}

/// Runs `command` with a 10 s limit and collects what it did.
fn wait(mut command: Command, backend: &str) -> Result<Outcome, String> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {backend}: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            return Err(format!("{backend}: the program ran for more than 10 s"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let trap = stderr.find("error:").filter(|&at| at == 0 || stderr[..at].ends_with('\n'));
    Ok(Outcome {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        status: output.status.code(),
        trap: trap.map(|at| stderr[at..].to_string()),
    })
}

struct Options {
    count: u64,
    seed: u64,
    nagic: PathBuf,
    out: PathBuf,
    backends: Vec<String>,
    /// What the generator writes (`--waits`: `config.waits`).
    config: nagi_progen::Config,
}

const HELP: &str = "\
nagi-progen: seeded random High programs, each built and run on several backends with nagic;
every program whose stdout, exit status or trap differ is saved (and shrunk) in DIR.

Usage: nagi-progen [--count N] [--seed S] [--backends B,B,...] [--nagic PATH] [--out DIR] [--waits]

  --count N       how many programs (default 100), seeds S, S+1, ...
  --seed S        the first seed (default 1)
  --backends ...  the first is the reference (default rust,rust-O0,llvm-O0,llvm-O2); compiled:
                  rust, rust-O0, llvm-O0, llvm-O2; inside nagic: interp, jit-O0, jit-O2
  --nagic PATH    the compiler (default target/debug/nagic)
  --out DIR       where differing programs go (default target/progen)
  --waits         also generate recursive async functions (sleep) and tasks that spawn tasks
                  of their own function (scope, spawn, join). Use compiled backends only:
                  the JIT refuses an async main (M109) and the interpreter refuses tasks
                  (I103), so --waits with interp, jit-O0 or jit-O2 is refused.
";

fn options() -> Result<Options, String> {
    let mut o = Options {
        count: 100,
        seed: 1,
        nagic: PathBuf::from("target/debug/nagic"),
        out: PathBuf::from("target/progen"),
        backends: ["rust", "rust-O0", "llvm-O0", "llvm-O2"].map(String::from).to_vec(),
        config: nagi_progen::Config::default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--count" => o.count = value()?.parse().map_err(|e| format!("--count: {e}"))?,
            "--seed" => o.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--nagic" => o.nagic = PathBuf::from(value()?),
            "--out" => o.out = PathBuf::from(value()?),
            "--backends" => o.backends = value()?.split(',').map(str::to_owned).collect(),
            "--waits" => o.config.waits = true,
            "--help" | "-h" => {
                print!("{HELP}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other} (see --help)")),
        }
    }
    if o.config.waits
        && let Some(backend) = o.backends.iter().find(|b| in_process(b).is_some())
    {
        return Err(format!(
            "--waits programs run only on compiled backends (rust, rust-O0, llvm-O0, llvm-O2), not {backend}: \
             the JIT refuses an async `main` (M109) and the interpreter refuses tasks (I103)"
        ));
    }
    Ok(o)
}

fn main() -> std::process::ExitCode {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("nagi-progen: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let work = o.out.join("work");
    if let Err(e) = std::fs::create_dir_all(&work) {
        eprintln!("nagi-progen: cannot create {}: {e}", work.display());
        return std::process::ExitCode::from(2);
    }
    let (mut same, mut differ, mut errors, mut traps) = (0u64, 0u64, 0u64, 0u64);
    let (mut tests, mut failed_tests) = (0u64, 0u64);
    let started = Instant::now();
    for seed in o.seed..o.seed + o.count {
        let text = nagi_progen::from_seed_with(seed, 4096, &o.config);
        let results = run_program(&o, &work, &text);
        let reference = &results[0].1;
        if results.iter().all(|(_, r)| r == reference)
            && let Ok(runs) = reference
        {
            same += 1;
            traps += u64::from(runs[0].trap.is_some());
            tests += runs.len() as u64 - 1;
            failed_tests += runs[1..].iter().filter(|r| r.status != Some(0)).count() as u64;
            continue;
        }
        if results.iter().any(|(_, r)| r.is_err()) {
            errors += 1;
        } else {
            differ += 1;
        }
        let mut report = String::new();
        for (backend, result) in &results {
            report.push_str(&format!("== {backend}\n{result:#?}\n"));
        }
        save(&o.out, &format!("seed-{seed}"), &text);
        let _ = std::fs::write(o.out.join(format!("seed-{seed}.txt")), &report);
        if results.iter().all(|(_, r)| r.is_ok()) {
            // Shrink to what still makes the executors disagree (each try rebuilds on all).
            let reduced = nagi_progen::reduce::reduce(&text, &mut |candidate| {
                let outcomes = run_program(&o, &work, candidate);
                outcomes.iter().all(|(_, r)| r.is_ok()) && outcomes.iter().any(|(_, r)| r != &outcomes[0].1)
            });
            save(&o.out, &format!("seed-{seed}.min"), &reduced);
        }
        eprintln!("seed {seed}: results differ or an executor failed; see {}/seed-{seed}.txt", o.out.display());
    }
    println!(
        "{} programs ({}): {same} identical on every backend ({traps} of them trap in `main`; {tests} tests, \
         {failed_tests} of them fail), {differ} differ, {errors} failed to build or run; {:.0} s",
        o.count,
        o.backends.join(", ") + if o.config.waits { "; waits" } else { "" },
        started.elapsed().as_secs_f64()
    );
    if differ + errors == 0 { std::process::ExitCode::SUCCESS } else { std::process::ExitCode::FAILURE }
}
