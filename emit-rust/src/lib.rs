//! The Rust emitter: verified Low → the source of one safe Rust crate that links
//! `nagi-runtime`.
//!
//! Entry points: [`emit`], and [`emit_module`] for the module `program` alone. The output is a crate root (`main.rs`) with `#![forbid(unsafe_code)]`:
//! a module `program` holding one struct per class (serde derives, and a row decoder for
//! classes that queries return) and one function per Low function, then the process entry —
//! `nagi_runtime::program::run_main` for a program with `main`, `nagi_runtime::service::serve`
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
mod classes;
mod crate_root;
mod names;
mod routes;
mod supervisors;

use nagi_low::{Diagnostic, Module};

/// Emits the crate root for `module`.
///
/// Errors: a module with neither a `main` function nor routes has nothing to run (`R100`).
pub fn emit(module: &Module) -> Result<String, Diagnostic> {
    crate_root::crate_root(module, None)
}

/// [`emit`] for a service described by the OpenAPI document `openapi` (compact JSON), which the
/// binary serves with `--openapi-route`.
pub fn emit_described(module: &Module, openapi: Option<&str>) -> Result<String, Diagnostic> {
    crate_root::crate_root(module, openapi)
}

/// The module `program` of [`emit`]'s crate root alone, for another crate to `include!` and
/// call: `#[forbid(unsafe_code)] #[allow(…)] mod program { … }` with one `pub fn` per Low
/// function (named as in Low; a Rust keyword becomes a raw identifier) and one struct per
/// class. The including crate must depend on `nagi-runtime`, which the functions call by full
/// path. Unlike [`emit`] it needs neither `main` nor routes: any module can be a library.
/// The benchmarks (`bench/native`) call the kernels this way.
pub fn emit_module(module: &Module) -> String {
    crate_root::library_module(module)
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
    fn deep_nesting_emits_without_recursion() {
        // 5,000 nested `if`s inside a loop. Parsing and verifying get a big stack like nagic's
        // main thread; the emitter runs on this test thread's ordinary stack, which a
        // recursion per nesting level would overflow.
        let depth = 5000;
        let mut text = String::from(
            "nagi-low 1\nmodule deep\n\nfn $main() -> unit {\n  let %c: bool\n  %c = const true\n  loop @l {\n",
        );
        for _ in 0..depth {
            text.push_str("  if %c {\n");
        }
        text.push_str("  rtcall print.bool(%c)\n");
        for _ in 0..depth {
            text.push_str("  } else {\n  break @l\n  }\n");
        }
        text.push_str("  break @l\n  }\n  return\n}\n");
        let m = std::thread::Builder::new()
            .stack_size(256 * 1024 * 1024)
            .spawn(move || module(&text))
            .expect("thread")
            .join()
            .expect("parses and verifies");
        let root = emit(&m).expect("a program");
        assert_eq!(root.matches("if c {").count(), depth);
        assert_eq!(root.matches("} else {").count(), depth);
        assert_eq!(root.matches("break 'l;").count(), depth + 1);
        // Indentation stops growing at MAX_INDENT levels, so the output stays linear: about
        // 3 MB here, where indenting every level would write about 200 MB.
        assert!(root.len() < 8_000_000, "{} bytes", root.len());
        let print = root.find("nagi_runtime::rt::print_bool(c);").expect("the innermost call");
        let line_start = root[..print].rfind('\n').map_or(0, |n| n + 1);
        assert_eq!(print - line_start, 4 * body::MAX_INDENT);
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
