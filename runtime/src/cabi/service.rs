//! Services on the LLVM path: the descriptor of a service's tables, routes and job queues that
//! emitted code hands to [`nagi_rt_serve`], and the [`Service`] it describes, which
//! [`crate::service`] runs exactly as it runs the Rust path's.
//!
//! Every descriptor is a constant of the program: it lives as long as the process and nothing
//! writes to it. `docs/c-abi.md` ("Services") is the reference for the layouts.

use super::frame::GuardedPollFn;
use super::routes::{self, RouteDesc};
use super::{items, static_text};
use crate::http::Route;
use crate::service::{self, Service, Table};

/// A table the service needs: `{ i8* name, i64 name_len, i8* create_sql, i64 create_sql_len,
/// i8* postgres_sql, i64 postgres_sql_len }`.
#[repr(C)]
pub struct TableDesc {
    /// The table's name, UTF-8.
    pub name: *const u8,
    /// The name's length in bytes.
    pub name_len: usize,
    /// Its `CREATE TABLE IF NOT EXISTS ...` statement, UTF-8.
    pub create_sql: *const u8,
    /// The statement's length in bytes.
    pub create_sql_len: usize,
    /// The same statement in PostgreSQL's column types, UTF-8.
    pub postgres_sql: *const u8,
    /// Its length in bytes.
    pub postgres_sql_len: usize,
}

/// A whole service: `{ i8* name, i64 name_len, %nagi.TableDesc* tables, i64 table_count,
/// %nagi.RouteDesc* routes, i64 route_count, guarded_poll, %nagi.QueueDesc* queues,
/// i64 queue_count, i8* openapi, i64 openapi_len }`.
#[repr(C)]
pub struct ServiceDesc {
    /// The service's name (the default database is `./<name>.db`).
    pub name: *const u8,
    /// The name's length in bytes.
    pub name_len: usize,
    /// The tables, created at start.
    pub tables: *const TableDesc,
    /// How many tables `tables` points to.
    pub table_count: usize,
    /// The routes.
    pub routes: *const RouteDesc,
    /// How many routes `routes` points to.
    pub route_count: usize,
    /// The emitted function that polls a frame under a trap guard.
    pub guarded_poll: GuardedPollFn,
    /// The job queues ([`super::queues::QueueDesc`]).
    pub queues: *const super::queues::QueueDesc,
    /// How many queues `queues` points to.
    pub queue_count: usize,
    /// The service's OpenAPI document, UTF-8 JSON; null when it has none.
    pub openapi: *const u8,
    /// The document's length in bytes (0 when it has none).
    pub openapi_len: usize,
}

// SAFETY (both impls): descriptors are immutable constants of the program; nothing writes
// through their pointers, and the functions they name may be called from any thread.
unsafe impl Sync for TableDesc {}
unsafe impl Sync for ServiceDesc {}

/// The [`Service`] that `desc` describes: its name, tables, routes and queues whose handlers are
/// the described frames, polled through `desc.guarded_poll`.
///
/// # Safety
/// `desc` and everything it points to must be descriptors as documented here (the emitter's
/// constants): valid for the rest of the process, never written, with functions that follow
/// the frame protocol of `docs/c-abi.md`.
pub unsafe fn to_service(desc: &'static ServiceDesc) -> Service {
    // SAFETY (every call below): the caller vouches for the descriptors.
    let tables = unsafe { items(desc.tables, desc.table_count) };
    let routes = unsafe { items(desc.routes, desc.route_count) };
    let queues = unsafe { items(desc.queues, desc.queue_count) };
    Service {
        name: unsafe { static_text(desc.name, desc.name_len) },
        tables: tables
            .iter()
            .map(|t| Table {
                name: unsafe { static_text(t.name, t.name_len) },
                create_sql: unsafe { static_text(t.create_sql, t.create_sql_len) },
                // SAFETY: as above.
                postgres_sql: unsafe { static_text(t.postgres_sql, t.postgres_sql_len) },
            })
            .collect(),
        routes: routes
            .iter()
            .map(|r| Route {
                method: unsafe { static_text(r.method, r.method_len) },
                path: unsafe { static_text(r.path, r.path_len) },
                handler: routes::handler(r, desc.guarded_poll),
            })
            .collect(),
        queues: queues.iter().map(|q| unsafe { q.to_queue(desc.guarded_poll) }).collect(),
        openapi: (!desc.openapi.is_null()).then(|| unsafe { static_text(desc.openapi, desc.openapi_len) }),
    }
}

/// Serves the described service as a process, exactly as `service::serve` serves the Rust path's:
/// the command line, the log, the database, Tokio, and the routes. It never returns: the process
/// exits 0 after a graceful shutdown, 1 (or 2 for a database that does not match the tables)
/// when it cannot start. The emitted C `main` returns what this returns.
///
/// # Safety
/// `service` points to a [`ServiceDesc`] as [`to_service`] requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_serve(service: *const ServiceDesc) -> i32 {
    // SAFETY: the emitter passes its service descriptor, a constant of the program.
    let desc: &'static ServiceDesc = unsafe { &*service };
    // SAFETY: as above.
    service::serve_and_check(unsafe { to_service(desc) }, log_live_buffers)
}

/// Logs the buffers emitted code still owns once the service has stopped: every task is dropped
/// by then, so a count left is a leak (a check that costs nothing while serving).
fn log_live_buffers() {
    let buffers = super::live_buffers();
    tracing::info!(target: "nagi::memory", buffers, "buffers the compiled code still owns at shutdown: {buffers}");
}
