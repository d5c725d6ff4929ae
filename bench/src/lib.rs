//! Benchmarks: the CPU-kernel emitter comparison and HTTP bench scripts. Filled by the bench
//! issue; this crate holds no code yet.
