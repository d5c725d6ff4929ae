//! The Rust backend after emission: `--emit=rust -o DIR`'s standalone crate, and for
//! `nagic build` the crate root written to a build directory beside the executable and
//! compiled by one `rustc` call against the prebuilt runtime rlib ([`crate::runtime_lib`]).
//!
//! One `rustc` invocation on the emitted crate root with `--extern nagi_runtime=…`, and its
//! incremental state kept beside it, is what keeps a rebuild of a service under a second.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use nagi_low::Module;

use crate::failure::{Failure, report};
use crate::output::write_output;
use crate::runtime_lib::{RuntimeArtifacts, checkout};
use crate::target::{Link, Target, static_link_hint};

/// The emitted crate root for `module` (a service serving `openapi` with `--openapi-route`), or
/// the emitter's diagnostic.
pub(crate) fn emit(module: &Module, openapi: Option<&str>, input: &Path) -> Result<String, Failure> {
    nagi_emit_rust::emit_described(module, openapi).map_err(|d| report(&[d], &input.display().to_string(), ""))
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

/// Emits `module` and writes its crate root into the build directory of the executable
/// `output` (`.NAME.nagi-build/main.rs` beside it); returns the root's path.
pub(crate) fn write_crate_root(
    module: &Module,
    openapi: Option<&str>,
    input: &Path,
    output: &Path,
) -> Result<PathBuf, Failure> {
    let source = emit(module, openapi, input)?;
    let work =
        output.with_file_name(format!(".{}.nagi-build", output.file_name().and_then(|n| n.to_str()).unwrap_or("out")));
    std::fs::create_dir_all(&work).map_err(|e| {
        eprintln!("{}: error: cannot create the build directory: {e}", work.display());
        Failure::Input
    })?;
    let root = work.join("main.rs");
    write_output(Some(&root), &source)?;
    Ok(root)
}

/// Compiles the crate `root` (named `crate_name`) into the executable `output` for the
/// target's CPU, linking the runtime's rlib, and the C library as the target says (`crt-static`
/// for a static link: rustc then links a static PIE).
pub(crate) fn rustc(
    root: &Path,
    crate_name: &str,
    runtime: &RuntimeArtifacts,
    output: &Path,
    target: &Target,
) -> Result<(), Failure> {
    let status = Command::new("rustc")
        .args(["--edition", "2024", "--crate-type", "bin", "--crate-name", crate_name])
        // opt-level 3, not 2: a list of 100 rows answered 4 % faster (bench/README.md, "Closing the
        // gap", item 4) and the users service compiled no slower (1.31 s against 1.38 s).
        .args(["-C", "opt-level=3", "-C", "debuginfo=0", "-C", "codegen-units=16"])
        // Incremental state next to the emitted crate: a rebuild after a small change reuses
        // the code of unchanged functions (about 1 s instead of 1.4 s for the users service).
        .arg("-C")
        .arg(format!("incremental={}", root.with_file_name("incremental").display()))
        .arg(format!("-Ctarget-cpu={}", target.cpu))
        .args((target.link == Link::Static).then_some("-Ctarget-feature=+crt-static"))
        .arg("--extern")
        .arg(format!("nagi_runtime={}", runtime.rlib.display()))
        .arg("-L")
        .arg(format!("dependency={}", runtime.deps.display()))
        .arg("-o")
        .arg(output)
        .arg(root)
        // rustc's messages are read here (to tell a failed link from a rejected crate) and then
        // passed on; colours only when they would have been shown.
        .arg(if std::io::stderr().is_terminal() { "--color=always" } else { "--color=never" })
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| {
            eprintln!("nagic: error: cannot start rustc: {e}");
            Failure::Input
        })?;
    let _ = std::io::stderr().write_all(&status.stderr);
    if !status.status.success() {
        // Only the link step can fail for want of the C library's static archives; a crate
        // rustc rejects is the emitter's bug, and a note about linking would mislead.
        let linking = String::from_utf8_lossy(&status.stderr).contains("error: linking with");
        if linking {
            eprintln!("nagic: error: linking the program failed{}", static_link_hint(target.link));
        } else {
            eprintln!(
                "nagic: internal compiler error: rustc rejected the emitted crate {}; please report this with the input",
                root.display(),
            );
        }
        return Err(Failure::Input);
    }
    Ok(())
}
