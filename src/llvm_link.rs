//! The LLVM backend: the module as IR text (`--emit=llvm`), or as an object file written next
//! to the executable and linked with the runtime's static library in one command, the
//! documented link line:
//!
//! ```text
//! cc -static app.o libnagi_runtime.a -Wl,--gc-sections -lpthread -ldl -lm -o app
//! ```
//!
//! (`-static` unless `--link=dynamic`; `--gc-sections`, which rustc passes too, drops the parts
//! of the runtime a program does not use; `CC` chooses another C compiler.)
//!
//! The static library comes from [`crate::runtime_lib`], built together with the rlib the
//! Rust path uses, so both backends link the same runtime build.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use nagi_emit_llvm::Options;
use nagi_low::Module;

use crate::failure::{Failure, report};
use crate::runtime_lib::RuntimeArtifacts;
use crate::target::{Link, static_link_hint};
use crate::timer::Timer;

/// Reports an emitter diagnostic against the input file.
fn report_against(input: &Path) -> impl FnOnce(nagi_low::Diagnostic) -> Failure + '_ {
    move |d| report(&[d], &input.display().to_string(), "")
}

/// The module's LLVM IR as text (`--emit=llvm`), optimized at `options.opt_level`.
pub(crate) fn emit_ir(module: &Module, input: &Path, options: &Options, timer: &mut Timer) -> Result<String, Failure> {
    nagi_emit_llvm::emit_ir(module, options, &mut |phase| timer.phase(phase)).map_err(report_against(input))
}

/// Compiles `module` to an object file and writes it beside the executable `output`
/// (`.NAME.o`); returns its path.
pub(crate) fn write_object(
    module: &Module,
    input: &Path,
    output: &Path,
    options: &Options,
    timer: &mut Timer,
) -> Result<PathBuf, Failure> {
    let object =
        nagi_emit_llvm::emit_object(module, options, &mut |phase| timer.phase(phase)).map_err(report_against(input))?;
    let file_name = output.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let object_path = output.with_file_name(format!(".{file_name}.o"));
    std::fs::write(&object_path, &object).map_err(|e| {
        eprintln!("{}: error: cannot write the object file: {e}", object_path.display());
        Failure::Input
    })?;
    Ok(object_path)
}

/// The linker the C compiler is told to use: `NAGI_LINKER` (`bfd`, `gold`, `lld`, `mold`) when
/// set, else mold when it is installed, else the C compiler's default. The runtime's static
/// library is large (Tokio, Axum, SQLite), and linking dominates an LLVM build: mold links the
/// users service several times faster than GNU ld (bench/README.md has the figures).
fn linker() -> Option<String> {
    if let Some(name) = std::env::var_os("NAGI_LINKER") {
        return Some(format!("-fuse-ld={}", name.to_string_lossy()));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).any(|dir| dir.join("mold").is_file()).then(|| "-fuse-ld=mold".to_string())
}

/// Links `object` with the runtime's static library into the executable `output`, with the C
/// library linked as `link` says, then removes the object. What the linker prints is shown only
/// when it fails, as rustc does: a static link against glibc warns on every build that
/// `getaddrinfo` will load the NSS modules of the glibc it was linked with, which is expected.
pub(crate) fn link(object: &Path, runtime: &RuntimeArtifacts, output: &Path, link: Link) -> Result<(), Failure> {
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let linked = Command::new(&cc)
        .args(linker())
        .args((link == Link::Static).then_some("-static"))
        .arg(object)
        .arg(&runtime.staticlib)
        .args(["-Wl,--gc-sections", "-lpthread", "-ldl", "-lm", "-o"])
        .arg(output)
        .output()
        .map_err(|e| {
            eprintln!("nagic: error: cannot start the C compiler `{}` to link: {e}", cc.to_string_lossy());
            Failure::Input
        })?;
    let _ = std::fs::remove_file(object);
    if !linked.status.success() {
        std::io::stderr().write_all(&linked.stdout).and_then(|()| std::io::stderr().write_all(&linked.stderr)).ok();
        eprintln!(
            "nagic: error: linking {} failed (the command was `cc{} OBJECT {} -Wl,--gc-sections -lpthread -ldl -lm`){}",
            output.display(),
            if link == Link::Static { " -static" } else { "" },
            runtime.staticlib.display(),
            static_link_hint(link)
        );
        return Err(Failure::Input);
    }
    Ok(())
}
