//! Batch mode of the program generator: seeded random programs run through several executors
//! with `nagic`, every difference in stdout, exit status or trap message saved for a person.
//!
//! ```text
//! cargo run -p nagi-progen --release -- [--count N] [--seed S] [--nagic PATH] [--out DIR]
//!                                       [--backends interp,jit-O0,jit-O2,rust,rust-O0,llvm-O0,llvm-O2]
//! ```
//!
//! Backends: `rust` (Low passes on), `rust-O0` (passes off), `llvm-O0`, `llvm-O2` (LLVM's
//! levels, Low passes on), each built into an executable; and in `nagic`'s own process, with no
//! build: `interp` (the Low interpreter) and `jit-O0`, `jit-O2` (LLVM's JIT at those levels),
//! Low passes on. The first backend is the reference; a program whose result differs
//! on another is written to `DIR/seed-S.nagi` with the results side by side in `seed-S.txt`,
//! and shrunk (`nagi_progen::reduce`) to `DIR/seed-S.min.nagi`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one executor did with a program.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    stdout: String,
    status: Option<i32>,
    /// The `error: …` line on stderr (a trap), if any.
    trap: Option<String>,
}

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

/// Builds `source` for `backend` into `dir` and runs it with a 10 s limit; an in-process
/// executor (`interp`, `jit-O0`, `jit-O2`) runs it inside `nagic` instead, with no build.
fn run(nagic: &Path, backend: &str, source: &Path, dir: &Path) -> Result<Outcome, String> {
    if let Some(flags) = in_process(backend) {
        let mut command = Command::new(nagic);
        command.arg("run").args(flags).arg(source);
        return wait(command, backend);
    }
    let exe = dir.join(format!("prog-{backend}"));
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
    wait(Command::new(&exe), backend)
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
    Ok(Outcome {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        status: output.status.code(),
        trap: stderr.lines().find(|l| l.starts_with("error:")).map(str::to_owned),
    })
}

struct Options {
    count: u64,
    seed: u64,
    nagic: PathBuf,
    out: PathBuf,
    backends: Vec<String>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        count: 100,
        seed: 1,
        nagic: PathBuf::from("target/debug/nagic"),
        out: PathBuf::from("target/progen"),
        backends: ["rust", "rust-O0", "llvm-O0", "llvm-O2"].map(String::from).to_vec(),
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
            other => return Err(format!("unknown argument {other}")),
        }
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
    let started = Instant::now();
    for seed in o.seed..o.seed + o.count {
        let text = nagi_progen::from_seed(seed, 4096);
        let source = work.join("prog.nagi");
        if std::fs::write(&source, &text).is_err() {
            errors += 1;
            continue;
        }
        let results: Vec<(String, Result<Outcome, String>)> =
            o.backends.iter().map(|b| (b.clone(), run(&o.nagic, b, &source, &work))).collect();
        let reference = &results[0].1;
        let all_same = results.iter().all(|(_, r)| r == reference);
        if all_same && reference.is_ok() {
            same += 1;
            traps += u64::from(reference.as_ref().is_ok_and(|r| r.trap.is_some()));
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
        let _ = std::fs::write(o.out.join(format!("seed-{seed}.nagi")), &text);
        let _ = std::fs::write(o.out.join(format!("seed-{seed}.txt")), &report);
        if results.iter().all(|(_, r)| r.is_ok()) {
            // Shrink to what still makes the executors disagree (each try rebuilds on all).
            let reduced = nagi_progen::reduce::reduce(&text, &mut |candidate| {
                std::fs::write(&source, candidate).is_ok() && {
                    let outcomes: Vec<_> = o.backends.iter().map(|b| run(&o.nagic, b, &source, &work)).collect();
                    outcomes.iter().all(Result::is_ok) && outcomes.iter().any(|r| r != &outcomes[0])
                }
            });
            let _ = std::fs::write(o.out.join(format!("seed-{seed}.min.nagi")), &reduced);
        }
        eprintln!("seed {seed}: results differ or an executor failed; see {}/seed-{seed}.txt", o.out.display());
    }
    println!(
        "{} programs ({}): {same} identical on every backend ({traps} of them trap), {differ} differ, {errors} \
         failed to build or run; {:.0} s",
        o.count,
        o.backends.join(", "),
        started.elapsed().as_secs_f64()
    );
    if differ + errors == 0 { std::process::ExitCode::SUCCESS } else { std::process::ExitCode::FAILURE }
}
