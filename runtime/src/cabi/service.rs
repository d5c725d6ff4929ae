//! Services on the LLVM path: the descriptors of a service's tables and routes that emitted code
//! hands to [`nagi_rt_serve`], and the future that runs one route's handler frame.
//!
//! A handler of the LLVM emitter is an explicit state machine: a heap frame that `start` makes
//! from the handler's arguments, a `poll` that runs it until it waits or returns, and `drop` and
//! `finish` that free an unfinished or a finished frame. The runtime's future for a route
//! ([`LlvmRoute`]) binds the request's parameters with the Rust path's own functions
//! (`Request::path`, `query`, `query_opt`, and `json_shaped`, which applies the body rules of
//! `Request::json`), starts the frame, polls it through the emitted `guarded_poll` (which turns a
//! trap into a return value, see [`super::guard`]), and encodes the result as `http::reply` and
//! `http::reply_option` do. The per-request wrapper runs this future exactly as it runs a Rust
//! handler's, so both paths answer a request byte for byte alike.
//!
//! Every descriptor is a constant of the program: it lives as long as the process and nothing
//! writes to it. `docs/c-abi.md` ("Services") is the reference for the layouts and the protocol.

use std::alloc::Layout;
use std::future::Future;
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll};

use nagi_abi::poll;

use super::json::{self, TypeDesc, Typed};
use crate::http::{self, Handler, HandlerFuture, Reply, Request, Route, Service, Table};
use crate::shaped_json::{Kind, Value};

/// `start`: moves the handler's arguments out of an argument block into a new frame, returns it.
pub type StartFn = unsafe extern "C" fn(args: *mut u8) -> *mut u8;
/// `poll`: runs a frame until it waits (0), has its result (1), or failed (2: an awaited
/// operation failed; the frame is left suspended, to be dropped). Only `guarded_poll` calls it.
pub type PollFn = unsafe extern "C" fn(frame: *mut u8, cx: *mut u8) -> i32;
/// `drop` (a frame that is not finished) or `finish` (a frame whose poll returned true): drops
/// the values the frame holds and frees it.
pub type FrameFn = unsafe extern "C" fn(frame: *mut u8);
/// The emitted `guarded_poll`: calls `poll(frame, cx)` under a guard; 0 pending, 1 ready,
/// 2 failed (the frame must be dropped), 3 trapped (the frame is leaked).
pub type GuardedPollFn = unsafe extern "C" fn(poll: PollFn, frame: *mut u8, cx: *mut u8) -> i32;

// [`ParamDesc::source`]'s codes, `nagi_abi::param_source`: a path parameter, a required or
// optional query parameter, the JSON body, a required or optional request header.
pub use nagi_abi::param_source::{
    BODY as SOURCE_BODY, HEADER as SOURCE_HEADER, HEADER_OPT as SOURCE_HEADER_OPT, PATH as SOURCE_PATH,
    QUERY as SOURCE_QUERY, QUERY_OPT as SOURCE_QUERY_OPT,
};

/// A table the service needs: `{ i8* name, i64 name_len, i8* create_sql, i64 create_sql_len }`.
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
}

/// One parameter of a route's handler:
/// `{ i8* name, i64 name_len, i64 source, %nagi.TypeDesc* ty, i64 offset }`.
#[repr(C)]
pub struct ParamDesc {
    /// The parameter's name: the path or query parameter it binds.
    pub name: *const u8,
    /// The name's length in bytes.
    pub name_len: usize,
    /// Where its value comes from: [`SOURCE_PATH`], [`SOURCE_QUERY`], [`SOURCE_QUERY_OPT`],
    /// [`SOURCE_BODY`], [`SOURCE_HEADER`] or [`SOURCE_HEADER_OPT`].
    pub source: u64,
    /// The parameter's Low type: `i32`, `i64`, `f64`, `bool` or `String` for a path or required
    /// query parameter, `Option` of one of those for an optional one, a class for the body.
    pub ty: *const TypeDesc,
    /// Where the value goes in the argument block.
    pub offset: usize,
}

/// One route: `{ i8* method, i64 method_len, i8* path, i64 path_len, %nagi.ParamDesc* params,
/// i64 param_count, i64 args_size, i64 args_align, start, poll, drop, finish, i64 result_offset,
/// %nagi.TypeDesc* result, i64 status }`.
#[repr(C)]
pub struct RouteDesc {
    /// The method, e.g. `GET`.
    pub method: *const u8,
    /// The method's length in bytes.
    pub method_len: usize,
    /// The path in Nagi syntax, e.g. `/users/{id}`.
    pub path: *const u8,
    /// The path's length in bytes.
    pub path_len: usize,
    /// The handler's parameters, in order.
    pub params: *const ParamDesc,
    /// How many parameters `params` points to.
    pub param_count: usize,
    /// The size of the argument block that the runtime fills and `start` empties.
    pub args_size: usize,
    /// The argument block's alignment.
    pub args_align: usize,
    /// Makes a frame from a filled argument block, moving the values out of it. The runtime
    /// frees the block afterwards without dropping anything in it. Like `drop` and `finish`, it
    /// runs outside any trap guard, so it must not trap (a trap there ends the process); it only
    /// moves and frees memory.
    pub start: StartFn,
    /// Runs the frame; never called by the runtime, only passed to `guarded_poll`.
    pub poll: PollFn,
    /// Drops and frees a frame that is not finished (a request dropped while it waited).
    pub drop: FrameFn,
    /// Drops the result of a frame whose poll returned true, and frees the frame.
    pub finish: FrameFn,
    /// Where the handler's result sits in a finished frame.
    pub result_offset: usize,
    /// The handler's result type; an `Option` answers `none` with 404.
    pub result: *const TypeDesc,
    /// The status of the route's own answer: 201 for POST, 200 otherwise.
    pub status: u64,
}

/// A whole service: `{ i8* name, i64 name_len, %nagi.TableDesc* tables, i64 table_count,
/// %nagi.RouteDesc* routes, i64 route_count, guarded_poll, %nagi.QueueDesc* queues,
/// i64 queue_count }`.
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
}

// SAFETY (the four impls): descriptors are immutable constants of the program; nothing writes
// through their pointers, and the functions they name may be called from any thread.
unsafe impl Sync for TableDesc {}
unsafe impl Sync for ParamDesc {}
unsafe impl Sync for RouteDesc {}
unsafe impl Sync for ServiceDesc {}

/// The `len` items at `ptr` (none for `len == 0`).
///
/// # Safety
/// For `len > 0`, `ptr` points to `len` items that live for `'a`.
pub(super) unsafe fn items<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// The text of a descriptor: program constants are UTF-8 (names and SQL that the compiler
/// wrote), so the lossy conversion borrows in practice; a bad byte is replaced (and that one
/// string leaked) rather than failing the start.
///
/// # Safety
/// `ptr` points to `len` bytes that live for the rest of the process.
pub(super) unsafe fn static_text(ptr: *const u8, len: usize) -> &'static str {
    // SAFETY: forwarded from the caller.
    match String::from_utf8_lossy(unsafe { super::bytes(ptr, len) }) {
        std::borrow::Cow::Borrowed(text) => text,
        std::borrow::Cow::Owned(text) => Box::leak(text.into_boxed_str()),
    }
}

impl ParamDesc {
    /// The parameter's name.
    pub(crate) fn name(&self) -> &str {
        // SAFETY: the name is a constant of the program.
        unsafe { static_text(self.name, self.name_len) }
    }

    /// The parameter's type.
    pub(crate) fn ty(&self) -> &TypeDesc {
        // SAFETY: the emitter points every parameter at a descriptor constant.
        unsafe { &*self.ty }
    }
}

impl RouteDesc {
    /// The handler's parameters.
    pub(crate) fn params(&self) -> &[ParamDesc] {
        // SAFETY: the emitter writes `param_count` descriptors at `params`.
        unsafe { items(self.params, self.param_count) }
    }

    /// The handler's result type.
    fn result(&self) -> &TypeDesc {
        // SAFETY: the emitter points every route at its result's descriptor constant.
        unsafe { &*self.result }
    }
}

/// A route of the LLVM path as the router holds it: its descriptor, and the service's
/// `guarded_poll`.
#[derive(Clone, Copy)]
pub struct LlvmRoute {
    desc: &'static RouteDesc,
    guarded_poll: GuardedPollFn,
}

impl LlvmRoute {
    /// The route `desc` describes, polled through `guarded_poll`.
    pub(crate) fn new(desc: &'static RouteDesc, guarded_poll: GuardedPollFn) -> LlvmRoute {
        LlvmRoute { desc, guarded_poll }
    }

    /// The future that answers `request` with this route's handler.
    pub(crate) fn future(self, request: Request) -> HandlerFuture {
        Box::pin(RouteFuture { route: self, state: State::Bind(request) })
    }
}

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
            })
            .collect(),
        routes: routes
            .iter()
            .map(|r| Route {
                method: unsafe { static_text(r.method, r.method_len) },
                path: unsafe { static_text(r.path, r.path_len) },
                handler: Handler::Llvm(LlvmRoute { desc: r, guarded_poll: desc.guarded_poll }),
            })
            .collect(),
        queues: queues.iter().map(|q| unsafe { q.to_queue(desc.guarded_poll) }).collect(),
    }
}

/// Serves the described service as a process, exactly as `http::serve` serves the Rust path's:
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
    http::serve(unsafe { to_service(desc) })
}

/// Where a route's future is.
#[allow(clippy::large_enum_variant, reason = "the future is boxed once; boxing the request too would allocate twice")]
enum State {
    /// Not polled yet: the request, whose parameters are bound at the first poll.
    Bind(Request),
    /// The frame is started and not finished.
    Running(*mut u8),
    /// The frame's poll returned ready and its result is being encoded; `finish` frees it.
    Ready(*mut u8),
    /// The frame is freed, or it trapped and is leaked on purpose (see [`RouteFuture::poll`]).
    Done,
}

/// The future of one request to an LLVM route.
struct RouteFuture {
    route: LlvmRoute,
    state: State,
}

// SAFETY: the future owns its frame alone and touches it only through the route's functions,
// one call at a time (each takes `&mut self`). A frame holds plain data and runtime objects
// (strings, arrays, class values, pending database operations, which are `Send`), nothing tied
// to the thread that made it: the trap guard a poll sets is cleared before the poll returns.
// So the future may move between worker threads between polls.
unsafe impl Send for RouteFuture {}

impl Future for RouteFuture {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        let this = self.get_mut();
        let desc = this.route.desc;
        if let State::Bind(request) = &this.state {
            let frame = start(desc, request);
            this.state = State::Running(frame);
        }
        let State::Running(frame) = this.state else { panic!("a route's future was polled after it completed") };
        // SAFETY: `frame` came from this route's `start` and is neither finished nor dropped;
        // `cx` outlives the call, and emitted code passes it on only to `nagi_rt_op_poll`, which
        // uses it as the `Context` it is.
        let outcome = unsafe { (this.route.guarded_poll)(desc.poll, frame, ptr::from_mut(cx).cast()) };
        match outcome {
            poll::PENDING => Poll::Pending,
            poll::READY => {
                this.state = State::Ready(frame);
                // SAFETY: the frame is ready, so its result is at `result_offset`.
                let reply = unsafe { reply(desc, frame) };
                this.state = State::Done;
                // SAFETY: the frame is ready and is freed exactly once, here.
                unsafe { (desc.finish)(frame) };
                Poll::Ready(reply)
            }
            poll::FAILED => {
                // An awaited operation failed (a database error): the frame stopped at that
                // await as a pending frame does, so dropping it frees everything it holds.
                this.state = State::Done;
                // SAFETY: the frame is started, not finished, and is freed exactly once, here.
                crate::defers::failing(|| unsafe { (desc.drop)(frame) });
                match super::guard::take_failure() {
                    Some(payload) => std::panic::resume_unwind(payload),
                    None => panic!("the handler's poll reported a failure, but none was stored"),
                }
            }
            _ => {
                // `poll::TRAPPED`: the handler trapped in the middle of its code. Its frame is leaked on purpose:
                // which of its values are live at that point is known only to the emitted code,
                // so neither `drop` nor `finish` may free it. What it held leaks with it.
                this.state = State::Done;
                match super::guard::take_failure() {
                    Some(payload) => std::panic::resume_unwind(payload),
                    None => panic!("the handler's guarded poll reported a trap, but none was raised"),
                }
            }
        }
    }
}

impl Drop for RouteFuture {
    fn drop(&mut self) {
        let desc = self.route.desc;
        match self.state {
            // SAFETY: the frame is started and not finished, and is freed exactly once, here
            // (a request dropped while it waited: the timeout, or a client that went away).
            State::Running(frame) => unsafe { (desc.drop)(frame) },
            // SAFETY: the frame is ready (its encoding unwound) and is freed exactly once, here.
            State::Ready(frame) => unsafe { (desc.finish)(frame) },
            State::Bind(_) | State::Done => {}
        }
    }
}

/// Binds every parameter of `desc` from `request`, then makes the frame. Binding fails by
/// unwinding with its answer (400, 415, 422, …) before any emitted memory holds a value, so a
/// failed binding leaks nothing.
fn start(desc: &RouteDesc, request: &Request) -> *mut u8 {
    let values: Vec<Value> = desc.params().iter().map(|param| bind(request, param)).collect();
    let Ok(layout) = Layout::from_size_align(desc.args_size, desc.args_align.max(1)) else {
        panic!("a route's argument block has an invalid layout ({} bytes at {})", desc.args_size, desc.args_align)
    };
    let args = super::allocate(layout);
    for (value, param) in values.into_iter().zip(desc.params()) {
        // SAFETY: the block holds the parameter's type at its offset, as the emitter laid it out.
        unsafe { json::write(value, param.ty(), args.add(param.offset)) };
    }
    // SAFETY: every parameter is written; `start` moves the values out, so the block is freed
    // below without dropping anything.
    let frame = unsafe { (desc.start)(args) };
    // SAFETY: `args` was allocated above with this layout; freeing it through the ABI keeps the
    // count of buffers emitted code owns exact.
    unsafe { super::nagi_rt_free(args, layout.size(), layout.align()) };
    assert!(!frame.is_null(), "a route's start returned no frame");
    frame
}

/// Where a path, query or header parameter comes from.
#[derive(Clone, Copy)]
enum Place {
    Path,
    Query,
    QueryOpt,
    Header,
    HeaderOpt,
}

/// The value of one parameter, bound by the Rust path's function for its source and type.
pub(crate) fn bind(request: &Request, param: &ParamDesc) -> Value {
    let name = param.name();
    let ty = param.ty();
    match param.source {
        SOURCE_PATH => scalar(request, Place::Path, name, ty),
        SOURCE_QUERY => scalar(request, Place::Query, name, ty),
        SOURCE_QUERY_OPT if ty.kind() == Kind::Option => scalar(request, Place::QueryOpt, name, ty.inner()),
        SOURCE_BODY => request.json_shaped(ty),
        SOURCE_HEADER => scalar(request, Place::Header, name, ty),
        SOURCE_HEADER_OPT if ty.kind() == Kind::Option => scalar(request, Place::HeaderOpt, name, ty.inner()),
        source => panic!("route parameter `{name}`: source {source} with a {:?} is not a parameter", ty.kind()),
    }
}

/// A path, query or header parameter of a scalar type (the payload type, for an optional one).
fn scalar(request: &Request, place: Place, name: &str, ty: &TypeDesc) -> Value {
    match ty.kind() {
        Kind::I32 => typed::<i32>(request, place, name),
        Kind::I64 => typed::<i64>(request, place, name),
        Kind::F64 => typed::<f64>(request, place, name),
        Kind::Bool => typed::<bool>(request, place, name),
        Kind::String => typed::<String>(request, place, name),
        kind => panic!("route parameter `{name}`: a {kind:?} cannot come from the path or the query"),
    }
}

/// `request.path::<T>`, `request.query::<T>` or `request.query_opt::<T>` as a value.
fn typed<T: http::Param + Into<Value>>(request: &Request, place: Place, name: &str) -> Value {
    match place {
        Place::Path => request.path::<T>(name).into(),
        Place::Query => request.query::<T>(name).into(),
        Place::QueryOpt => Value::Option(request.query_opt::<T>(name).map(|v| Box::new(v.into()))),
        Place::Header => request.header::<T>(name).into(),
        Place::HeaderOpt => Value::Option(request.header_opt::<T>(name).map(|v| Box::new(v.into()))),
    }
}

/// The route's answer for its finished frame: the result encoded as `http::reply` encodes it,
/// or `http::reply_option` for an `Option` result (`none` is 404).
///
/// # Safety
/// `frame` is a ready frame of `desc`: its result sits at `result_offset`.
unsafe fn reply(desc: &RouteDesc, frame: *mut u8) -> Reply {
    let ty = desc.result();
    let Ok(status) = u16::try_from(desc.status) else { crate::trap(&format!("invalid HTTP status {}", desc.status)) };
    // SAFETY: the caller guarantees the result at `result_offset`, laid out as `ty` describes.
    unsafe {
        let at = frame.add(desc.result_offset);
        if ty.kind() == Kind::Option {
            let value = (at.read() & 1 != 0).then(|| Typed::new(at.add(ty.payload_offset), ty.inner()));
            http::reply_option(status, &value)
        } else {
            http::reply(status, &Typed::new(at, ty))
        }
    }
}

#[cfg(test)]
mod tests;
