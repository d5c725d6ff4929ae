//! Builds the Nagi kernels of `examples/kernels.nagi` for the benchmark, with the compiler's own
//! crates (the same calls `nagic` makes):
//!
//! - High → Low (`nagi_high::compile`), then the default Low pipeline without `dead-fn`.
//!   `nagic` runs `dead-fn` because a program is reached from `main`; `main` inlines every
//!   kernel, so `dead-fn` would delete the very functions the bench calls. Every other pass runs
//!   on the kernels' bodies exactly as in `nagic build`.
//! - The Rust emitter's module `program` (`nagi_emit_rust::emit_module`) →
//!   `$OUT_DIR/kernels_rust.rs`, which `src/emitted.rs` includes, so it is compiled in this
//!   crate with this crate's flags (the same `-C target-cpu` as the hand-written kernels).
//! - The LLVM emitter at `-O2` and `-O3`, each kernel exported as the C symbol
//!   `nagi_o{2,3}_<name>` (`nagi_emit_llvm::Options::export`) → `$OUT_DIR/kernels_o{2,3}.o`
//!   (and `.ll`, the optimized IR, for reading), archived into `libnagi_kernels_llvm.a` and
//!   linked into this crate. The LLVM CPU is the `-C target-cpu` of `RUSTFLAGS` (rustc's own
//!   default, `x86-64`, when there is none), so both emitters and the hand-written Rust target
//!   one CPU level.
//!
//! `NAGI_BENCH_TARGET_CPU` and `NAGI_BENCH_OUT_DIR` are passed on to the crate, so the bench
//! records the level it was built for and the runner finds the objects to disassemble.

use std::path::{Path, PathBuf};
use std::process::Command;

use nagi_emit_llvm::{Export, Options};
use nagi_passes::{Pipeline, RunOptions};

/// The Nagi functions the bench calls, in the order of docs/design.md §6 (`loop` is `loop_sum` in Nagi,
/// where `loop` is a keyword).
const KERNELS: [&str; 7] =
    ["integer_sum", "map_reduce", "filter_reduce", "branch", "float_sum", "loop_sum", "closure_chain"];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let source_path = manifest.join("../../examples/kernels.nagi");
    println!("cargo::rerun-if-changed={}", source_path.display());
    println!("cargo::rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");

    let text =
        std::fs::read_to_string(&source_path).unwrap_or_else(|e| panic!("cannot read {}: {e}", source_path.display()));
    let mut module = nagi_high::compile(&text, "kernels").unwrap_or_else(|ds| {
        panic!("{}", nagi_low::diagnostic::render_all(&ds, &source_path.display().to_string(), &text))
    });
    let passes: Vec<&str> = nagi_passes::default_pipeline().split(',').filter(|p| *p != "dead-fn").collect();
    let pipeline = Pipeline::parse(&passes.join(",")).expect("the default pipeline parses");
    nagi_passes::run_pipeline(&mut module, &pipeline, &RunOptions { verify_each: true }, &mut ())
        .unwrap_or_else(|f| panic!("pass {} failed on kernels.nagi: {:?}", f.pass, f.kind));
    for name in KERNELS {
        assert!(module.function_by_name(name).is_some(), "kernels.nagi has no function `{name}`");
    }
    std::fs::write(out.join("kernels.low"), nagi_low::print_module(&module, None)).expect("write the Low");

    std::fs::write(out.join("kernels_rust.rs"), nagi_emit_rust::emit_module(&module)).expect("write the Rust module");

    let cpu = target_cpu();
    let mut objects = Vec::new();
    for level in [2u8, 3] {
        let options = Options {
            target_cpu: cpu.clone(),
            opt_level: level,
            export: KERNELS
                .iter()
                .map(|k| Export { function: k.to_string(), symbol: format!("nagi_o{level}_{k}") })
                .collect(),
            openapi: None,
        };
        let ir = nagi_emit_llvm::emit_ir(&module, &options, &mut |_| {}).unwrap_or_else(|d| fail(d));
        std::fs::write(out.join(format!("kernels_o{level}.ll")), ir).expect("write the IR");
        let object = nagi_emit_llvm::emit_object(&module, &options, &mut |_| {}).unwrap_or_else(|d| fail(d));
        let path = out.join(format!("kernels_o{level}.o"));
        std::fs::write(&path, object).expect("write the object");
        objects.push(path);
    }
    archive(&out.join("libnagi_kernels_llvm.a"), &objects);
    println!("cargo::rustc-link-search=native={}", out.display());
    println!("cargo::rustc-link-lib=static=nagi_kernels_llvm");
    println!("cargo::rustc-env=NAGI_BENCH_TARGET_CPU={cpu}");
    println!("cargo::rustc-env=NAGI_BENCH_OUT_DIR={}", out.display());
}

/// Stops the build with an emitter's diagnostic.
fn fail(d: nagi_low::Diagnostic) -> ! {
    panic!("{}", d.render("examples/kernels.nagi", ""))
}

/// The `-C target-cpu` rustc compiles this crate with, or rustc's default for x86-64.
fn target_cpu() -> String {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split('\x1f').collect();
    let mut cpu = None;
    for (i, flag) in flags.iter().enumerate() {
        let value = match *flag {
            "-C" | "--codegen" => flags.get(i + 1).and_then(|f| f.strip_prefix("target-cpu=")),
            f => f.strip_prefix("-Ctarget-cpu=").or_else(|| f.strip_prefix("--codegen=target-cpu=")),
        };
        if let Some(value) = value {
            cpu = Some(value.to_string());
        }
    }
    cpu.unwrap_or_else(|| "x86-64".to_string())
}

/// `ar crs archive objects…` (`AR` chooses another archiver).
fn archive(archive: &Path, objects: &[PathBuf]) {
    let _ = std::fs::remove_file(archive);
    let ar = std::env::var("AR").unwrap_or_else(|_| "ar".to_string());
    let status = Command::new(&ar)
        .arg("crs")
        .arg(archive)
        .args(objects)
        .status()
        .unwrap_or_else(|e| panic!("cannot run `{ar}` to archive the LLVM kernels: {e}"));
    assert!(status.success(), "`{ar} crs` failed on the LLVM kernels");
}
