//! The runtime that generated programs link: HTTP (Axum on Tokio), SQLite, typed JSON, logging,
//! and the C ABI for the LLVM emitter. Filled by the Rust emitter issue; no code yet.
