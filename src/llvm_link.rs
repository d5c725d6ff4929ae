//! Building native executables through the LLVM emitter: `--emit=llvm` and
//! `nagic build --backend=llvm`.
//!
//! The emitter returns an object file; the driver writes it next to the output and links it
//! with the runtime's static library in one command, the documented link line:
//!
//! ```text
//! cc app.o libnagi_runtime.a -Wl,--gc-sections -lpthread -ldl -lm -o app
//! ```
//!
//! (`--gc-sections`, which rustc passes too, drops the parts of the runtime a program does not
//! use; `CC` chooses another C compiler.)
//!
//! The static library comes from [`crate::runtime_lib`], built together with the rlib the
//! Rust path uses, so both backends link the same runtime build.

use std::path::Path;
use std::process::Command;

use nagi_low::Module;

use crate::Options;
use crate::failure::{Failure, report};
use crate::output::write_output;
use crate::runtime_lib;
use crate::timer::Timer;

/// The emitter's options from the command line.
fn emit_options(options: &Options) -> nagi_emit_llvm::Options {
    nagi_emit_llvm::Options { target_cpu: options.target_cpu.clone(), opt_level: options.llvm_opt, export: Vec::new() }
}

/// Reports an emitter diagnostic against the input file.
fn report_against(input: &Path) -> impl FnOnce(nagi_low::Diagnostic) -> Failure + '_ {
    move |d| report(&[d], &input.display().to_string(), "")
}

/// The module's LLVM IR as text (`--emit=llvm`), optimized at `--llvm-opt`.
pub(crate) fn emit_ir(module: &Module, input: &Path, options: &Options, timer: &mut Timer) -> Result<String, Failure> {
    nagi_emit_llvm::emit_ir(module, &emit_options(options), &mut |phase| timer.phase(phase))
        .map_err(report_against(input))
}

/// Compiles `module` to an object file and links it into the executable `output`.
pub(crate) fn build(
    module: &Module,
    input: &Path,
    output: &Path,
    options: &Options,
    timer: &mut Timer,
) -> Result<(), Failure> {
    let object = nagi_emit_llvm::emit_object(module, &emit_options(options), &mut |phase| timer.phase(phase))
        .map_err(report_against(input))?;
    let file_name = output.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let object_path = output.with_file_name(format!(".{file_name}.o"));
    std::fs::write(&object_path, &object).map_err(|e| {
        eprintln!("{}: error: cannot write the object file: {e}", object_path.display());
        Failure::Input
    })?;
    timer.phase("write object");
    let runtime = runtime_lib::artifacts()?;
    timer.phase("runtime ready");
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let status = Command::new(&cc)
        .arg(&object_path)
        .arg(&runtime.staticlib)
        .args(["-Wl,--gc-sections", "-lpthread", "-ldl", "-lm", "-o"])
        .arg(output)
        .status()
        .map_err(|e| {
            eprintln!("nagic: error: cannot start the C compiler `{}` to link: {e}", cc.to_string_lossy());
            Failure::Input
        })?;
    let _ = std::fs::remove_file(&object_path);
    if !status.success() {
        eprintln!(
            "nagic: error: linking {} failed (the command was `cc OBJECT {} -Wl,--gc-sections -lpthread -ldl -lm`)",
            output.display(),
            runtime.staticlib.display()
        );
        return Err(Failure::Input);
    }
    timer.phase("link");
    Ok(())
}

/// Writes the IR text for `--emit=llvm`.
pub(crate) fn write_ir(
    module: &Module,
    input: &Path,
    output: Option<&Path>,
    options: &Options,
    timer: &mut Timer,
) -> Result<(), Failure> {
    let text = emit_ir(module, input, options, timer)?;
    write_output(output, &text)
}
