//! Run tests: every runnable program under `golden/` and `examples/` is built by `nagic` and
//! run, and its stdout and exit status must be exactly what the program's header comments
//! state. One named test per program and backend, so a gap between backends shows by name.
//!
//! Expectations live in the program (Cranelift's `; run:` style): `// out: LINE` for each line
//! of stdout in order, `// exit: N` for a non-zero exit status (a trap exits 101), and
//! `// stderr: TEXT` for text stderr must contain. A program is runnable when it has at least
//! one `// out:` or `// exit:` line. `// backends: compiled` says the program runs only where
//! it is compiled to an executable (it spawns tasks, which need the runtime's scheduler): on the
//! interpreter and the JIT, `nagic run` must then refuse it with exit status 1 and one of the
//! designed refusals ([`DESIGNED_REFUSALS`]), never an accident such as a missing runtime
//! function. `// backends: compiled, jit` says the JIT runs it too (deferred calls in a plain
//! `main`), `// backends: compiled, interp` the interpreter (an async `main` that sleeps);
//! the other must refuse it. `// max-rss-mib: N` bounds the program's peak resident
//! memory on every backend that builds an executable; the measured peak is printed.
//!
//! Every program runs on every backend both unoptimized (`-O0`) and through the default pass
//! pipeline (`-O`), against the same expectations (tests `BACKEND::O0::…` and `BACKEND::O::…`),
//! so a pass that changes what a program does fails here by name.
//!
//! Backends: `rust` (Low → Rust → rustc), the LLVM emitter at LLVM's `-O0` and `-O2`
//! (`llvm-O0`, `llvm-O2`), and the Low interpreter (`interp`, which `nagic run --backend=interp`
//! runs in nagic's own process instead of building); every program must give byte-identical
//! stdout and exit status on all four.
//! `llvm-verify::…` checks that `--emit=llvm` of every Low and High program (runnable or not)
//! is accepted by `llvm-as-14` and `opt-14 -passes=verify`.

mod support;

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

/// What a program says it does.
struct Expected {
    /// Whether only the backends that build an executable run the program.
    compiled_only: bool,
    /// With `compiled_only`: whether the JIT runs it as well.
    jit: bool,
    /// With `compiled_only`: whether the interpreter runs it as well.
    interp: bool,
    stdout: String,
    exit: i32,
    stderr: Vec<String>,
    max_rss_mib: Option<u64>,
}

fn expectations(text: &str) -> Option<Expected> {
    let mut expected = Expected {
        compiled_only: false,
        jit: false,
        interp: false,
        stdout: String::new(),
        exit: 0,
        stderr: Vec::new(),
        max_rss_mib: None,
    };
    let mut runnable = false;
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(out) = line.strip_prefix("// out:") {
            expected.stdout.push_str(out.strip_prefix(' ').unwrap_or(out));
            expected.stdout.push('\n');
            runnable = true;
        } else if let Some(code) = line.strip_prefix("// exit:") {
            expected.exit = code.trim().parse().ok()?;
            runnable = true;
        } else if let Some(err) = line.strip_prefix("// stderr:") {
            expected.stderr.push(err.trim().to_string());
        } else if let Some(which) = line.strip_prefix("// backends:") {
            match which.trim() {
                "compiled" => {}
                "compiled, jit" => expected.jit = true,
                "compiled, interp" => expected.interp = true,
                _ => return None,
            }
            expected.compiled_only = true;
        } else if let Some(mib) = line.strip_prefix("// max-rss-mib:") {
            expected.max_rss_mib = Some(mib.trim().parse().ok()?);
        }
    }
    runnable.then_some(expected)
}

fn programs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (dir, ext) in [("golden/low", "low"), ("golden/high", "nagi"), ("examples", "nagi")] {
        let Ok(entries) = std::fs::read_dir(support::root().join(dir)) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A backend and the `nagic` flags that select it. A code generator's program is built with
/// `nagic build` and the executable is run; the interpreter's is run by `nagic run` itself.
#[derive(Clone, Copy)]
struct Backend {
    name: &'static str,
    flags: &'static [&'static str],
    /// Whether `nagic run` runs the program in its own process (no executable is built).
    interprets: bool,
}

const BACKENDS: &[Backend] = &[
    Backend { name: "rust", flags: &["--backend=rust"], interprets: false },
    Backend { name: "llvm-O0", flags: &["--backend=llvm", "--llvm-opt=0"], interprets: false },
    Backend { name: "llvm-O2", flags: &["--backend=llvm", "--llvm-opt=2"], interprets: false },
    Backend { name: "interp", flags: &["--backend=interp"], interprets: true },
    Backend { name: "jit-O0", flags: &["--backend=jit", "--llvm-opt=0"], interprets: true },
    Backend { name: "jit-O2", flags: &["--backend=jit", "--llvm-opt=2"], interprets: true },
];

/// Runs `exe` and waits for it with `wait4`, which also reports the child's peak resident set.
fn run_measured(exe: &Path) -> Result<(std::process::Output, u64), Failed> {
    use std::io::Read;
    let mut child = std::process::Command::new(exe)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // Both pipes are drained on threads so that a program writing much to either never blocks.
    let mut out_pipe = child.stdout.take().ok_or("no stdout pipe")?;
    let mut err_pipe = child.stderr.take().ok_or("no stderr pipe")?;
    let out_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out_pipe.read_to_end(&mut v);
        v
    });
    let err_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err_pipe.read_to_end(&mut v);
        v
    });
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data that `wait4` fills in; an all-zero value is valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for (std's `Child` is not used to wait), and
    // both out-pointers are valid for writes.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if waited != pid {
        return Err(format!("wait4 failed: {}", std::io::Error::last_os_error()).into());
    }
    let stdout = out_thread.join().map_err(|_| "stdout reader failed")?;
    let stderr = err_thread.join().map_err(|_| "stderr reader failed")?;
    use std::os::unix::process::ExitStatusExt;
    let status = std::process::ExitStatus::from_raw(status);
    // Linux reports `ru_maxrss` in KiB.
    Ok((std::process::Output { status, stdout, stderr }, usage.ru_maxrss as u64))
}

/// Builds `name` (relative to the workspace root) with `backend` at `opt` and runs it; gives
/// its output and peak resident set in KiB.
fn build_and_run(name: &str, backend: Backend, opt: &str) -> Result<(std::process::Output, u64), Failed> {
    let dir = support::temp_dir(&format!("run-{}", backend.name));
    let exe = dir.join("program");
    let mut args = vec!["build"];
    args.extend_from_slice(backend.flags);
    args.extend_from_slice(&[opt, name, "-o", exe.to_str().unwrap()]);
    let built = support::nagic(&args);
    if !built.status.success() {
        return Err(format!("nagic build {opt} {name} failed:\n{}", String::from_utf8_lossy(&built.stderr)).into());
    }
    let measured = run_measured(&exe);
    let _ = std::fs::remove_dir_all(&dir);
    measured
}

fn run(path: &Path, backend: Backend, opt: &str) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let expected = expectations(&text).ok_or("not runnable")?;
    let name = path.strip_prefix(support::root()).unwrap_or(path).display().to_string();
    // The interpreter's peak resident set would be nagic's own (the compiler, with LLVM's
    // shared library mapped in), not the program's, so `max-rss-mib` is not checked on it.
    let (out, max_rss_kib) = if backend.interprets {
        let mut args = vec!["run"];
        args.extend_from_slice(backend.flags);
        args.extend_from_slice(&[opt, &name]);
        let out = support::nagic(&args);
        let runs = if backend.name.starts_with("jit") { expected.jit } else { expected.interp };
        if expected.compiled_only && !runs {
            return refused(&name, backend, &out);
        }
        (out, None)
    } else {
        let (out, kib) = build_and_run(&name, backend, opt)?;
        (out, Some(kib))
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let backend = backend.name;
    if stdout != expected.stdout || out.status.code() != Some(expected.exit) {
        return Err(format!(
            "{name} on {backend} {opt}: exit {:?} (expected {}), stdout:\n{stdout}--- expected stdout:\n{}--- stderr:\n{stderr}",
            out.status.code(),
            expected.exit,
            expected.stdout
        )
        .into());
    }
    if let (Some(limit), Some(max_rss_kib)) = (expected.max_rss_mib, max_rss_kib) {
        let mib = max_rss_kib as f64 / 1024.0;
        println!("{name} on {backend}: peak RSS {mib:.1} MiB (limit {limit} MiB)");
        if mib > limit as f64 {
            return Err(format!("{name} on {backend}: peak RSS {mib:.1} MiB exceeds {limit} MiB").into());
        }
    }
    for needle in &expected.stderr {
        if !stderr.contains(needle.as_str()) {
            return Err(format!("{name} on {backend} {opt}: stderr lacks {needle:?}:\n{stderr}").into());
        }
    }
    Ok(())
}

/// The codes of the refusals the interpreter and the JIT are designed to give (docs/interp.md,
/// emit-llvm's `jit`): a service (I101, M107), the database (I102), tasks, actors, deferred
/// calls or queues in the interpreter (I103), an async `main` on the JIT (M109).
const DESIGNED_REFUSALS: &[&str] = &["error[I101]", "error[I102]", "error[I103]", "error[M107]", "error[M109]"];

/// A program that only compiled backends run, on one that does not: `nagic run` must refuse it
/// with status 1 and one of the designed refusals, without running any of it.
fn refused(name: &str, backend: Backend, out: &std::process::Output) -> Result<(), Failed> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(1)
        && out.stdout.is_empty()
        && DESIGNED_REFUSALS.iter().any(|code| stderr.contains(code))
        && !stderr.contains("panicked")
    {
        return Ok(());
    }
    Err(format!(
        "{name} runs only compiled, so {} must refuse it with one of {DESIGNED_REFUSALS:?}; it exited {:?}, \
         stdout:\n{}--- stderr:\n{stderr}",
        backend.name,
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    )
    .into())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for path in programs() {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        if expectations(&text).is_none() {
            continue;
        }
        let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let kind = path.extension().unwrap_or_default().to_string_lossy().into_owned();
        for &backend in BACKENDS {
            for (opt, tag) in [("-O0", "O0"), ("-O", "O")] {
                let path = path.clone();
                let name = format!("{}::{tag}::{kind}::{stem}", backend.name);
                trials.push(Trial::test(name, move || run(&path, backend, opt)));
            }
        }
    }
    for path in programs() {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let kind = path.extension().unwrap_or_default().to_string_lossy().into_owned();
        trials.push(Trial::test(format!("llvm-verify::{kind}::{stem}"), move || verify_ir(&path)));
    }
    libtest_mimic::run(&args, trials).exit();
}

/// `--emit=llvm` (unoptimized, so the emitter's own output is what is checked) must give IR
/// that `llvm-as-14` and `opt-14 -passes=verify` accept. Programs the backend refuses (routes,
/// the database) must be refused with a message naming the construct.
fn verify_ir(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let name = path.strip_prefix(support::root()).unwrap_or(path).display().to_string();
    let dir = support::temp_dir("llvm-ir");
    let ll = dir.join("program.ll");
    let out = support::nagic(&["--emit=llvm", "--llvm-opt=0", &name, "-o", ll.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        let refused = stderr.contains("the LLVM backend does not support");
        let expected = text.contains("route ") || text.contains("db.");
        return if refused && expected { Ok(()) } else { Err(format!("--emit=llvm {name} failed:\n{stderr}").into()) };
    }
    for tool in [&["llvm-as-14", "-o", "/dev/null"][..], &["opt-14", "-passes=verify", "-disable-output"][..]] {
        let result = std::process::Command::new(tool[0]).args(&tool[1..]).arg(&ll).output();
        match result {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                println!("note: {} is not installed; {name} not checked with it", tool[0]);
            }
            Err(e) => return Err(format!("cannot run {}: {e}", tool[0]).into()),
            Ok(o) if !o.status.success() => {
                return Err(
                    format!("{} rejected the IR of {name}:\n{}", tool[0], String::from_utf8_lossy(&o.stderr)).into()
                );
            }
            Ok(_) => {}
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
