//! Building native executables through the Rust emitter: `rustc` against the prebuilt
//! runtime ([`crate::runtime_lib`]), and `nagic run`.
//!
//! Each program is one `rustc` invocation on the emitted crate root with
//! `--extern nagi_runtime=…`, which is what keeps a rebuild of a service under a second.

use std::path::{Path, PathBuf};
use std::process::Command;

use nagi_low::Module;

use crate::failure::{Failure, report};
use crate::output::write_output;
use crate::runtime_lib::{self, checkout};
use crate::{Backend, Options};
use crate::{passes, pipeline};

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
    let compiled = pipeline::compile(input, &options.front_end(), passes::Default::Optimize)?;
    let (module, mut timer) = (compiled.module, compiled.timer);
    if backend == Backend::Llvm {
        return crate::llvm_link::build(&module, input, output, options, &mut timer);
    }
    let source = emit_rust(&module, input)?;
    let work =
        output.with_file_name(format!(".{}.nagi-build", output.file_name().and_then(|n| n.to_str()).unwrap_or("out")));
    std::fs::create_dir_all(&work).map_err(|e| {
        eprintln!("{}: error: cannot create the build directory: {e}", work.display());
        Failure::Input
    })?;
    let root = work.join("main.rs");
    write_output(Some(&root), &source)?;
    timer.phase("emit rust");
    let runtime = runtime_lib::artifacts()?;
    timer.phase("runtime ready");
    let crate_name = module.name.clone();
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
