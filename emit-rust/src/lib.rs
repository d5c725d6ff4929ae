//! The Rust emitter: verified Low → the source of one safe Rust crate that links
//! `nagi-runtime`.
//!
//! Entry point: [`emit`]. The output is a crate root (`main.rs`) with `#![forbid(unsafe_code)]`:
//! a module `program` holding one struct per class (serde derives, and a row decoder for
//! classes that queries return) and one function per Low function, then the process entry —
//! `nagi_runtime::program::run_main` for a program with `main`, `nagi_runtime::http::serve`
//! for a service with routes. [`cargo_manifest`] gives a `Cargo.toml` for building the crate
//! with plain `cargo`; the driver builds it faster by calling `rustc` against a prebuilt
//! runtime. The emitter does no IO.
//!
//! Semantics are spelled out so the result never depends on debug or release: integer
//! `+ - *` as `wrapping_*`, division and remainder through the runtime's trapping helpers,
//! shifts as `wrapping_shl`/`wrapping_shr` (which mask the count), float → int with `as`
//! (which saturates, NaN → 0), float `min`/`max` through the runtime, and indexing through a
//! bounds check that traps with Nagi's message.

mod body;
mod names;
mod service;

use nagi_low::{Diagnostic, Module};

/// Emits the crate root for `module`.
///
/// Errors: a module with neither a `main` function nor routes has nothing to run (`R100`).
pub fn emit(module: &Module) -> Result<String, Diagnostic> {
    service::crate_root(module)
}

/// A `Cargo.toml` for the emitted crate, depending on the runtime at `runtime_path` (an
/// absolute path to the `runtime/` directory of a Nagi checkout). It declares its own
/// workspace so that it builds wherever it is written.
pub fn cargo_manifest(package: &str, runtime_path: &str) -> String {
    format!(
        "[package]\nname = \"{package}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nnagi-runtime = {{ path = {runtime_path:?} }}\n\n\
         [profile.release]\nopt-level = 3\n\n[workspace]\n"
    )
}
