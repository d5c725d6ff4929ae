//! The runtime that compiled Nagi programs link: traps, printing, typed JSON, HTTP on Axum, SQLite
//! on a dedicated thread, and logging through a bounded queue.
//!
//! Generated code calls only the small, mostly non-generic facade below, so that a rebuild of a
//! program compiles the program's own classes and handlers and none of the Axum or Tokio generics.
//! The only generic entry points are the ones that must be instantiated per class: JSON decode and
//! encode ([`http::Request::json`], [`http::reply`], [`rt::json_encode`]) and row decoding
//! ([`db::query`], [`db::query_one`]).
//!
//! Control flow for errors: a Nagi trap panics with a [`Trap`] payload and a handler-side HTTP
//! error panics with an [`HttpError`] payload. [`program::run_main`] turns a trap into
//! `error: <message>` and exit status 101; the HTTP server turns either into a JSON error answer and
//! keeps serving.

#![warn(missing_docs)]

pub mod actors;
#[cfg(feature = "counting-alloc")]
pub mod alloc_count;
pub mod arrays;
mod backoff;
pub mod budget;
pub mod cabi;
pub mod config;
pub mod configuration;
mod context;
pub mod db;
pub mod defers;
pub mod failure;
pub mod http;
pub mod ids;
mod json;
pub mod logging;
pub mod map;
mod metrics;
pub mod ops;
pub mod outbound;
mod panic_hook;
pub mod program;
pub mod queues;
pub mod rt;
pub mod schedule;
pub mod secrets;
pub mod service;
pub mod shaped_json;
pub mod stack;
pub mod strings;
pub mod supervisors;
pub mod tasks;
pub mod time;
mod traces;
mod trap;

pub use trap::{HttpError, Trap, trap};

/// Serde, re-exported so that generated code can derive through the runtime:
/// `#[derive(nagi_runtime::serde::Serialize)] #[serde(crate = "nagi_runtime::serde")]`.
pub use serde;
/// serde_json, re-exported for generated code and tests that build JSON values.
pub use serde_json;
