//! The bench's check step, fast and without timing: every native variant (hand-written Rust,
//! the Rust emitter's kernels, the LLVM emitter's at `-O2` and `-O3`, all built by `build.rs`
//! from `examples/kernels.nagi`) gives docs/design.md §6's results on the shared input, and no kernel
//! call allocates.

use nagi_bench::kernels::{self, Kernel};
use nagi_bench_native::{Input, variants};
use nagi_runtime::alloc_count::{CountingAlloc, count};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

#[test]
fn every_native_variant_gives_the_expected_results_without_allocating() {
    let input = Input::new();
    let mut checked = 0;
    for variant in variants() {
        for kernel in Kernel::ALL {
            let (value, allocations) = count(|| variant.run(kernel, &input));
            if let Err(message) = kernels::check(variant.name, kernel, value) {
                panic!("{message}");
            }
            assert_eq!(allocations.allocations, 0, "{} {kernel} allocated: {allocations:?}", variant.name);
            checked += 1;
        }
    }
    assert_eq!(checked, 28);
    // The counter does count on this thread: the check above is not vacuous.
    let (_, counts) = count(|| std::hint::black_box(vec![1u8; 16]));
    assert_eq!(counts.allocations, 1);
}

#[test]
fn the_variants_are_the_four_native_ones() {
    let names: Vec<&str> = variants().iter().map(|v| v.name).collect();
    assert_eq!(names, ["rust", "nagi-rust", "nagi-llvm-O2", "nagi-llvm-O3"]);
}
