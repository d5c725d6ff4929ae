//! Benchmarks: the CPU-kernel emitter comparison (issue 6), the HTTP bench of the users service,
//! and the passes scaling bench.
//!
//! The kernel comparison runs the seven kernels of docs/design.md §6 ("CPU kernels") in every variant —
//! hand-written Rust, `examples/kernels.nagi` through the Rust emitter and through the LLVM
//! emitter at `-O2` and `-O3`, CPython and Node — on one input, checks every result, then
//! times them. One command runs it all: `cargo run -p nagi-bench --release -- kernels` (see
//! `bench/README.md`).
//!
//! This crate is the runner and the reporting; it is light on purpose (no runtime, no LLVM), so
//! it builds in seconds. The native variants live in `bench/native` (crate
//! `nagi-bench-native`), which the runner builds once per CPU level with cargo.
//!
//! - [`kernels`]: the kernels' names, the input and the expected results (the one list every
//!   variant is checked against).
//! - [`records`]: the JSONL records every variant writes, and their medians.
//! - [`machine`]: the machine line recorded with the results.
//! - [`report`]: the Markdown table; [`chart`]: the SVG bar chart.
//! - [`disasm`]: packed integer adds in each native variant's `integer_sum`.
//! - [`runner`]: building, pinning and running the variants.
//! - [`http`]: the HTTP bench (`nagi-bench http`): the users service built by both emitters
//!   against a hand-written Axum baseline (`bench/http-baseline`), under wrk.
//! - [`concurrency`]: the concurrency bench (`nagi-bench concurrency`): the runtime's actors,
//!   supervisors and scopes (`bench/concurrency`), one process per experiment.
//! - [`queue`]: the queue bench (`nagi-bench queue`): a service's durable job queue
//!   (`bench/queue/queue.nagi`) built by both emitters with 1 and 8 workers: throughput and
//!   push → start latency.

#![warn(missing_docs)]

pub mod chart;
pub mod concurrency;
pub mod disasm;
pub mod http;
pub mod kernels;
pub mod machine;
pub mod queue;
pub mod records;
pub mod report;
pub mod runner;
