//! The Rust emitter: verified Low → safe Rust source that links `nagi-runtime`. Filled by the
//! Rust emitter issue; this crate holds no code yet.
