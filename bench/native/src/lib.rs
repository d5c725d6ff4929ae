//! The native variants of the CPU-kernel comparison, each a table of seven callable kernels:
//!
//! | variant | what runs |
//! | --- | --- |
//! | `rust` | [`handwritten`]: idiomatic Rust with iterators, the baseline |
//! | `nagi-rust` | `examples/kernels.nagi` through the Rust emitter, compiled in this crate ([`emitted::rust`]) |
//! | `nagi-llvm-O2`, `nagi-llvm-O3` | the same file through the LLVM emitter at `-O2` / `-O3`, linked as objects ([`emitted::llvm`]) |
//!
//! All are compiled for one CPU level: the `-C target-cpu` this crate is built with, which
//! `build.rs` also hands to the LLVM emitter ([`TARGET_CPU`]). Each kernel is called through a
//! function pointer the optimizer cannot see through, so no variant is inlined into the timing
//! loop and each keeps its own symbol for the disassembly.

#![warn(missing_docs)]

pub mod emitted;
pub mod handwritten;

use std::hint::black_box;

pub use nagi_bench::kernels::{Kernel, Value};

/// The CPU level this crate and its kernels were compiled for.
pub const TARGET_CPU: &str = env!("NAGI_BENCH_TARGET_CPU");

/// Where `build.rs` left the emitted Low, Rust, LLVM IR and objects.
pub const OUT_DIR: &str = env!("NAGI_BENCH_OUT_DIR");

/// The shared input, prepared once, outside any timed region.
pub struct Input {
    /// `x_i = (i*17 + 13) % 997 - 498`.
    pub ints: Vec<i64>,
    /// `x_i / 7`.
    pub floats: Vec<f64>,
    /// The iteration count of `loop`.
    pub n: i64,
}

impl Input {
    /// The input of docs/design.md §6: 100,000 elements.
    pub fn new() -> Input {
        let ints = nagi_bench::kernels::input_ints();
        let floats = nagi_bench::kernels::input_floats(&ints);
        Input { ints, floats, n: nagi_bench::kernels::N as i64 }
    }
}

impl Default for Input {
    fn default() -> Input {
        Input::new()
    }
}

/// One kernel of one variant: takes its argument from the input, returns the result.
pub type KernelFn = fn(&Input) -> Value;

/// A variant: a name and its seven kernels in [`Kernel::ALL`]'s order.
pub struct Variant {
    /// `rust`, `nagi-rust`, `nagi-llvm-O2` or `nagi-llvm-O3`.
    pub name: &'static str,
    /// The kernels.
    pub kernels: [KernelFn; 7],
}

impl Variant {
    /// Runs `kernel` once.
    pub fn run(&self, kernel: Kernel, input: &Input) -> Value {
        self.kernel(kernel)(input)
    }

    /// The function that runs `kernel`.
    pub fn kernel(&self, kernel: Kernel) -> KernelFn {
        let index = Kernel::ALL.iter().position(|k| *k == kernel).expect("every kernel is in ALL");
        self.kernels[index]
    }
}

/// Calls `f(arg)` through a pointer the optimizer must treat as unknown, so the kernel is
/// neither inlined nor specialized for the call site.
#[inline(always)]
pub fn opaque<A, R>(f: fn(A) -> R, arg: A) -> R {
    black_box(f)(arg)
}

/// The four native variants, hand-written Rust first.
pub fn variants() -> [Variant; 4] {
    [handwritten::variant(), emitted::rust::variant(), emitted::llvm::variant_o2(), emitted::llvm::variant_o3()]
}
