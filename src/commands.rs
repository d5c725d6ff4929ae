//! What each command does, phase by phase: `check` loads its files; `--emit=KIND` and `build`
//! run the shared front half ([`crate::pipeline`]) and then print Low or the cost report, or
//! hand the module to the chosen [`Backend`]; `run` builds and then becomes the program, or
//! (`--backend=interp`) interprets the module in this process.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::ValueEnum;

use crate::backend::{Backend, no_executable};
use crate::failure::Failure;
use crate::importers;
use crate::interp;
use crate::jit;
use crate::load::load;
use crate::output::write_output;
use crate::passes::{self, Default};
use crate::pipeline::{self, FrontEnd};
use crate::runtime_lib::checkout;
use crate::target::Target;

/// `nagic check FILE...`: loads every file, printing all their diagnostics.
/// A `.nagi` file that other files import is checked as part of each program that imports it
/// (`crate::importers`), since a module may use what its program declares.
pub(crate) fn check(files: &[PathBuf], replace: &[PathBuf]) -> Result<(), Failure> {
    let mut failed = false;
    for file in files {
        let programs = if file.extension().is_some_and(|e| e == "nagi") {
            importers::programs_importing(file)
        } else {
            Vec::new()
        };
        if programs.is_empty() {
            failed |= load(file, replace).is_err();
        }
        for program in programs {
            eprintln!(
                "nagic: note: {} is a module of {}; checking it as part of that program",
                file.display(),
                program.display()
            );
            failed |= load(&program, replace).is_err();
        }
    }
    if failed { Err(Failure::Input) } else { Ok(()) }
}

/// Output kinds for `--emit`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Emit {
    /// Canonical Low text, comments kept.
    Low,
    /// A Rust crate (with `-o DIR`: `Cargo.toml` and `src/main.rs`; without: the crate root on
    /// stdout).
    Rust,
    /// Textual LLVM IR, optimized at `--llvm-opt` (what `llvm-as` and `opt -passes=verify` read).
    Llvm,
    /// The static cost report: allocations, clones, runtime calls and awaits per function,
    /// with Low line numbers.
    Cost,
}

/// `nagic --emit=KIND FILE [-o OUT]`. `--emit=low` shows the module as loaded unless passes
/// are asked for, so that a Low file prints back as written (comments included); everything
/// that leads to code (and the cost report, which describes that code) is optimized by default.
pub(crate) fn emit(
    kind: Emit,
    input: &Path,
    output: Option<&Path>,
    front: &FrontEnd,
    target: &Target,
) -> Result<(), Failure> {
    let default = if kind == Emit::Low { Default::None } else { Default::Optimize };
    let mut compiled = pipeline::compile(input, front, default)?;
    let module = &compiled.module;
    match kind {
        Emit::Low => write_output(output, &nagi_low::print_module(module, Some(&compiled.source))),
        Emit::Cost => write_output(output, &passes::cost_report(module, &compiled.pipeline, input)),
        Emit::Rust => {
            Backend::Rust.emit(module, compiled.openapi.as_deref(), input, output, target, &mut compiled.timer)
        }
        Emit::Llvm => {
            Backend::Llvm.emit(module, compiled.openapi.as_deref(), input, output, target, &mut compiled.timer)
        }
    }
}

/// `nagic build FILE [-o OUT]`.
pub(crate) fn build(
    input: &Path,
    output: Option<&Path>,
    backend: Backend,
    front: &FrontEnd,
    target: &Target,
) -> Result<(), Failure> {
    if backend == Backend::Interp {
        return Err(no_executable());
    }
    let output = output.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(default_name(input)));
    build_into(input, &output, backend, front, target)
}

/// `nagic run FILE [-- ARGS]`: builds into the checkout's `target/nagic-run/` and then
/// replaces this process with the program (`exec`), so signals sent to `nagic run` (SIGTERM from
/// a supervisor, Ctrl-C) reach the program itself and it can shut down gracefully, and its exit
/// status is the command's. With `--backend=interp` there is no build: the optimized module runs
/// in the interpreter here, and the program's arguments are not used (programs take none, and
/// services are refused).
pub(crate) fn run(
    input: &Path,
    args: &[String],
    backend: Backend,
    front: &FrontEnd,
    target: &Target,
) -> Result<(), Failure> {
    use std::os::unix::process::CommandExt;
    if backend == Backend::Interp {
        let mut compiled = pipeline::compile(input, front, Default::Optimize)?;
        return interp::run(&compiled.module, input, target.max_frames, &mut compiled.timer);
    }
    if backend == Backend::Jit {
        let mut compiled = pipeline::compile(input, front, Default::Optimize)?;
        return jit::run(&compiled.module, input, target, &mut compiled.timer);
    }
    let output = checkout().join("target/nagic-run").join(default_name(input));
    build_into(input, &output, backend, front, target)?;
    // `exec` only returns on failure.
    let error = Command::new(&output).args(args).exec();
    eprintln!("{}: error: cannot start the program: {error}", output.display());
    Err(Failure::Input)
}

/// The executable's name when none is given: the input's stem.
fn default_name(input: &Path) -> String {
    input.file_stem().and_then(|s| s.to_str()).unwrap_or("a.out").to_string()
}

/// The front half with `-O` by default, then the backend's build into `output`.
pub(crate) fn build_into(
    input: &Path,
    output: &Path,
    backend: Backend,
    front: &FrontEnd,
    target: &Target,
) -> Result<(), Failure> {
    let mut compiled = pipeline::compile(input, front, Default::Optimize)?;
    backend.build(&compiled.module, compiled.openapi.as_deref(), input, output, target, &mut compiled.timer)
}
