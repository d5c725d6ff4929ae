//! The Rust emitter: verified Low → the source of one safe Rust crate that links
//! `nagi-runtime`.
//!
//! Entry points: [`emit`], and [`emit_module`] for the module `program` alone. The output is a crate root (`main.rs`) with `#![forbid(unsafe_code)]`:
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

/// The module `program` of [`emit`]'s crate root alone, for another crate to `include!` and
/// call: `#[forbid(unsafe_code)] #[allow(…)] mod program { … }` with one `pub fn` per Low
/// function (named as in Low; a Rust keyword becomes a raw identifier) and one struct per
/// class. The including crate must depend on `nagi-runtime`, which the functions call by full
/// path. Unlike [`emit`] it needs neither `main` nor routes: any module can be a library.
/// The benchmarks (`bench/native`) call the kernels this way.
pub fn emit_module(module: &Module) -> String {
    service::library_module(module)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn module(text: &str) -> Module {
        let (module, _) = nagi_low::parse(text).expect("parses");
        nagi_low::verify(&module, None).expect("verifies");
        module
    }

    #[test]
    fn a_module_without_main_is_a_library() {
        let m = module("nagi-low 1\nmodule lib\n\nfn $one(%xs: &[i64]) -> i64 {\n  return 1_i64\n}\n");
        assert_eq!(emit(&m).unwrap_err().code, "R100");
        let source = emit_module(&m);
        assert!(source.starts_with("#[forbid(unsafe_code)]\n#[allow("), "{source}");
        assert!(source.contains("mod program {\n"), "{source}");
        assert!(source.contains("    pub fn one(mut xs: &::std::vec::Vec<i64>) -> i64 {"), "{source}");
        assert!(!source.contains("fn main"), "{source}");
    }

    #[test]
    fn the_crate_root_holds_the_same_module() {
        let m = module("nagi-low 1\nmodule p\n\nfn $main() -> unit {\n  return\n}\n");
        let root = emit(&m).expect("a program");
        let module = emit_module(&m);
        let program = &module[module.find("mod program").expect("module")..];
        assert!(root.contains(program), "{root}\n---\n{module}");
    }
}
