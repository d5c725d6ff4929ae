//! The HTTP server end to end, in-process: a hand-written service on a free 127.0.0.1 port, a real
//! HTTP client, and a real SQLite file read back with a second connection.

mod binding;
mod connections;
mod crud;
mod errors;
mod service;
mod transactions;
