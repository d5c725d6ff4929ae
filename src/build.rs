//! Building native executables through the Rust emitter: the prebuilt runtime, `rustc`, and
//! `nagic run`.
//!
//! The runtime and its dependencies are compiled once, by cargo, in release mode into
//! `target/nagi-runtime/` of the Nagi checkout; a stamp file records the artifacts, so later
//! builds skip cargo entirely while the runtime's sources are unchanged. Each program is then
//! one `rustc` invocation on the emitted crate root with `--extern nagi_runtime=…`, which is
//! what keeps a rebuild of a service under a second.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use nagi_low::Module;

use crate::failure::{Failure, report};
use crate::load::load;
use crate::output::write_output;
use crate::timer::Timer;
use crate::{Backend, Options};

/// The Nagi checkout this `nagic` was built from; the runtime's sources live in it.
fn checkout() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The emitted crate root for `module`, or the emitter's diagnostic.
pub(crate) fn emit_rust(module: &Module, input: &Path) -> Result<String, Failure> {
    nagi_emit_rust::emit(module).map_err(|d| report(&[d], &input.display().to_string(), ""))
}

/// Writes the emitted crate to `dir` (`Cargo.toml` and `src/main.rs`), buildable with `cargo
/// build` on its own.
pub(crate) fn write_crate(dir: &Path, name: &str, source: &str) -> Result<(), Failure> {
    let runtime = checkout().join("runtime");
    let manifest = nagi_emit_rust::cargo_manifest(&name.replace('_', "-"), &runtime.display().to_string());
    let result = std::fs::create_dir_all(dir.join("src"))
        .and_then(|()| std::fs::write(dir.join("Cargo.toml"), manifest))
        .and_then(|()| std::fs::write(dir.join("src/main.rs"), source));
    result.map_err(|e| {
        eprintln!("{}: error: cannot write the crate: {e}", dir.display());
        Failure::Input
    })
}

/// `nagic build FILE [-o OUT]`.
pub(crate) fn build_command(
    input: &Path,
    output: Option<&Path>,
    backend: Backend,
    options: &Options,
) -> Result<(), Failure> {
    let output = output.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(default_name(input)));
    build(input, &output, backend, options)
}

/// `nagic run FILE [-- ARGS]`: builds into the checkout's `target/nagic-run/` and then
/// replaces this process with the program (`exec`), so signals sent to `nagic run` (SIGTERM from
/// a supervisor, Ctrl-C) reach the program itself and it can shut down gracefully, and its exit
/// status is the command's.
pub(crate) fn run_command(input: &Path, args: &[String], backend: Backend, options: &Options) -> Result<(), Failure> {
    use std::os::unix::process::CommandExt;
    let output = checkout().join("target/nagic-run").join(default_name(input));
    build(input, &output, backend, options)?;
    // `exec` only returns on failure.
    let error = Command::new(&output).args(args).exec();
    eprintln!("{}: error: cannot start the program: {error}", output.display());
    Err(Failure::Input)
}

fn default_name(input: &Path) -> String {
    input.file_stem().and_then(|s| s.to_str()).unwrap_or("a.out").to_string()
}

fn build(input: &Path, output: &Path, backend: Backend, options: &Options) -> Result<(), Failure> {
    let mut timer = Timer::new(options.timings);
    let mut loaded = load(input, &options.replace)?;
    timer.phase("front end");
    let pipeline = crate::passes::optimize(
        &mut loaded.module,
        &options.passes,
        crate::passes::Default::Optimize,
        |pass, e, v| timer.pass(pass, e, v),
    )?;
    if !pipeline.is_empty() {
        timer.phase("passes");
    }
    if backend == Backend::Llvm {
        return crate::llvm::build(&loaded.module, input, output, options, &mut timer);
    }
    let source = emit_rust(&loaded.module, input)?;
    let work =
        output.with_file_name(format!(".{}.nagi-build", output.file_name().and_then(|n| n.to_str()).unwrap_or("out")));
    std::fs::create_dir_all(&work).map_err(|e| {
        eprintln!("{}: error: cannot create the build directory: {e}", work.display());
        Failure::Input
    })?;
    let root = work.join("main.rs");
    write_output(Some(&root), &source)?;
    timer.phase("emit rust");
    let runtime = runtime_artifacts()?;
    timer.phase("runtime ready");
    let crate_name = loaded.module.name.clone();
    let status = Command::new("rustc")
        .args(["--edition", "2024", "--crate-type", "bin", "--crate-name", &crate_name])
        .args(["-C", "opt-level=2", "-C", "debuginfo=0", "-C", "codegen-units=16"])
        // Incremental state next to the emitted crate: a rebuild after a small change reuses
        // the code of unchanged functions (about 1 s instead of 1.4 s for the users service).
        .arg("-C")
        .arg(format!("incremental={}", work.join("incremental").display()))
        .arg(format!("-Ctarget-cpu={}", options.target_cpu))
        .arg("--extern")
        .arg(format!("nagi_runtime={}", runtime.rlib.display()))
        .arg("-L")
        .arg(format!("dependency={}", runtime.deps.display()))
        .arg("-o")
        .arg(output)
        .arg(&root)
        .status()
        .map_err(|e| {
            eprintln!("nagic: error: cannot start rustc: {e}");
            Failure::Input
        })?;
    if !status.success() {
        eprintln!(
            "nagic: internal compiler error: rustc rejected the emitted crate {}; please report this with the input",
            root.display()
        );
        return Err(Failure::Input);
    }
    timer.phase("rustc");
    Ok(())
}

/// Where the prebuilt runtime is.
pub(crate) struct RuntimeArtifacts {
    /// The rlib the Rust path's `rustc` links (`--extern nagi_runtime=…`).
    rlib: PathBuf,
    /// Its dependencies' rlibs.
    deps: PathBuf,
    /// The static library (runtime, its dependencies and std) the LLVM path's `cc` links.
    pub(crate) staticlib: PathBuf,
}

/// Builds the runtime with cargo if its sources changed since the last build (or it was never
/// built), and returns its rlib, dependency directory and static library. The stamp file
/// holds the rlib's path on its first line and the static library's on its second.
pub(crate) fn runtime_artifacts() -> Result<RuntimeArtifacts, Failure> {
    let target = checkout().join("target/nagi-runtime");
    let stamp = target.join("nagic-runtime.stamp");
    let deps = target.join("release/deps");
    let newest_source =
        newest_mtime(&[checkout().join("runtime"), checkout().join("Cargo.lock"), checkout().join("Cargo.toml")]);
    if let Ok(text) = std::fs::read_to_string(&stamp)
        && let Some((rlib, staticlib)) = text.trim().split_once('\n')
    {
        let (rlib, staticlib) = (PathBuf::from(rlib), PathBuf::from(staticlib));
        let stamp_time = std::fs::metadata(&stamp).and_then(|m| m.modified()).ok();
        if rlib.exists() && staticlib.exists() && stamp_time.is_some() && stamp_time >= newest_source {
            return Ok(RuntimeArtifacts { rlib, deps, staticlib });
        }
    }
    eprintln!("nagic: building the runtime (once; later builds reuse it)");
    let output = Command::new(option_env!("CARGO").unwrap_or("cargo"))
        .current_dir(checkout())
        .args(["build", "--release", "--quiet", "-p", "nagi-runtime", "--message-format=json-render-diagnostics"])
        .arg("--target-dir")
        .arg(&target)
        .output()
        .map_err(|e| {
            eprintln!("nagic: error: cannot start cargo to build the runtime: {e}");
            Failure::Input
        })?;
    if !output.status.success() {
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
        eprintln!("nagic: error: building the runtime failed");
        return Err(Failure::Input);
    }
    // Cargo prints one JSON message per artifact; the runtime's rlib and static library are in
    // the one whose target is `nagi_runtime`.
    let messages = String::from_utf8_lossy(&output.stdout);
    let artifact = |suffix: &str| {
        messages
            .lines()
            .filter(|line| line.contains("\"compiler-artifact\"") && line.contains("\"name\":\"nagi_runtime\""))
            .flat_map(|line| line.split('"'))
            .find(|piece| piece.ends_with(suffix))
            .map(PathBuf::from)
    };
    let (Some(rlib), Some(staticlib)) = (artifact(".rlib"), artifact(".a")) else {
        eprintln!("nagic: error: cargo built the runtime but did not report both its rlib and its static library");
        return Err(Failure::Input);
    };
    let _ = std::fs::write(&stamp, format!("{}\n{}", rlib.display(), staticlib.display()));
    Ok(RuntimeArtifacts { rlib, deps, staticlib })
}

/// The latest modification time of any file under `paths`.
fn newest_mtime(paths: &[PathBuf]) -> Option<SystemTime> {
    let mut newest = None;
    let mut stack: Vec<PathBuf> = paths.to_vec();
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.filter_map(Result::ok).map(|e| e.path()));
            }
        } else if let Ok(modified) = meta.modified() {
            newest = newest.max(Some(modified));
        }
    }
    newest
}
