//! The backends, chosen once: [`Backend`] takes the verified, optimized module that the shared
//! front half ([`crate::pipeline`]) produced and emits it (`--emit=rust|llvm`), or builds an
//! executable from it: emit, get the runtime library ready, then `rustc` or `cc`. The
//! interpreter (`--backend=interp`, [`crate::interp`]) emits and builds nothing: `nagic run`
//! hands it the module instead.

use std::path::Path;

use clap::ValueEnum;
use nagi_low::Module;

use crate::failure::Failure;
use crate::output::write_output;
use crate::target::Target;
use crate::timer::Timer;
use crate::{llvm_link, runtime_lib, rust_build};

/// Backends for `build` and `run`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// Low → safe Rust → rustc, linking the prebuilt runtime.
    Rust,
    /// Low → LLVM IR → object file, linked with the runtime's static library by `cc`.
    Llvm,
    /// Low interpreted in this process, with the runtime as its host (`run` only: it builds no
    /// executable).
    Interp,
    /// Low → LLVM IR, compiled by LLVM's JIT and run in this process against the runtime
    /// (`run` only, programs only: no linker, no executable).
    Jit,
}

impl Backend {
    /// `--emit=rust|llvm`: writes the crate root (to stdout, or as a buildable crate into the
    /// directory `output`) or the LLVM IR text (to `output` or stdout).
    pub(crate) fn emit(
        self,
        module: &Module,
        openapi: Option<&str>,
        input: &Path,
        output: Option<&Path>,
        target: &Target,
        timer: &mut Timer,
    ) -> Result<(), Failure> {
        match self {
            Backend::Rust => {
                let source = rust_build::emit(module, openapi, input)?;
                match output {
                    None => write_output(None, &source),
                    Some(dir) => rust_build::write_crate(dir, &module.name, &source),
                }
            }
            Backend::Llvm => write_output(output, &llvm_link::emit_ir(module, input, &target.llvm(openapi), timer)?),
            Backend::Interp | Backend::Jit => Err(no_executable()),
        }
    }

    /// Builds the executable `output` from `module`: emits it and writes what was emitted
    /// beside `output`, gets the runtime library ready, and compiles or links against it.
    pub(crate) fn build(
        self,
        module: &Module,
        openapi: Option<&str>,
        input: &Path,
        output: &Path,
        target: &Target,
        timer: &mut Timer,
    ) -> Result<(), Failure> {
        let emitted = match self {
            Backend::Rust => rust_build::write_crate_root(module, openapi, input, output)?,
            Backend::Llvm => llvm_link::write_object(module, input, output, &target.llvm(openapi), timer)?,
            Backend::Interp | Backend::Jit => return Err(no_executable()),
        };
        // From here on `self` is one of the two code generators.
        timer.phase(if self == Backend::Rust { "emit rust" } else { "write object" });
        let runtime = runtime_lib::artifacts()?;
        timer.phase("runtime ready");
        if self == Backend::Rust {
            rust_build::rustc(&emitted, &module.name, &runtime, output, target)?;
        } else {
            llvm_link::link(&emitted, &runtime, output, target.link)?;
        }
        timer.phase(if self == Backend::Rust { "rustc" } else { "link" });
        Ok(())
    }
}

/// The interpreter and the JIT have no code to write: `build` and `--emit` with them are usage
/// errors.
pub(crate) fn no_executable() -> Failure {
    eprintln!(
        "nagic: error: --backend=interp and --backend=jit build no executable; run the program with `nagic run \
         --backend=interp|jit FILE`"
    );
    Failure::Usage
}
