//! Routes on the LLVM path: the descriptor of a route's handler and its parameters, and the
//! future that runs one request through the handler's frame.
//!
//! A handler of the LLVM emitter is an explicit state machine: a frame that `start` makes from
//! the handler's arguments, a `poll` that runs it until it waits or returns, and `drop` and
//! `finish` that drop an unfinished or a finished frame ([`super::frame`]). An async handler's
//! frame is on the heap, made and freed by those functions; a sync handler's frame, which one
//! poll always finishes, is made in room the runtime gives `start`, on its own stack when it
//! fits, so a sync request allocates no frame. The runtime's handler
//! for a route ([`handler`]) binds the request's parameters with the Rust path's own functions
//! (`Request::path`, `query`, `query_opt`, the body rules of `Request::json` through `Request::json_body` and
//! `json::decode_body`, which decodes straight into the argument block), starts the frame, polls it through the emitted `guarded_poll` (which turns a
//! trap into a return value, see [`super::guard`]), and encodes the result as `http::reply` and
//! `http::reply_option` do. The per-request wrapper runs this future exactly as it runs a Rust
//! handler's, so both paths answer a request byte for byte alike.
//!
//! Every descriptor is a constant of the program: it lives as long as the process and nothing
//! writes to it. `docs/c-abi.md` ("Services") is the reference for the layouts and the protocol.

use std::alloc::Layout;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll};

use super::frame::{Frame, FrameFn, GuardedPollFn, PollFn, Polled};
use super::json::{self, TypeDesc, Typed};
use super::{items, static_text};
use crate::http::{self, Handler, Reply, Request};
use crate::shaped_json::{self, Kind, Value};

/// `start`: moves the handler's arguments out of an argument block into a new frame, returns it.
/// `room` is where the frame goes when the route's `frame_size` is not 0, null otherwise (then
/// `start` allocates the frame).
pub type StartFn = unsafe extern "C" fn(args: *mut u8, room: *mut u8) -> *mut u8;

// [`ParamDesc::source`]'s codes, `nagi_abi::param_source`: a path parameter, a required or
// optional query parameter, the JSON body, a required or optional request header.
pub use nagi_abi::param_source::{
    BODY as SOURCE_BODY, HEADER as SOURCE_HEADER, HEADER_OPT as SOURCE_HEADER_OPT, PATH as SOURCE_PATH,
    QUERY as SOURCE_QUERY, QUERY_OPT as SOURCE_QUERY_OPT,
};

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
/// i64 param_count, i64 args_size, i64 args_align, i64 frame_size, i64 frame_align, start, poll,
/// drop, finish, i64 result_offset, %nagi.TypeDesc* result, i64 status }`.
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
    /// 0 when `start` allocates the frame (an async handler). Otherwise the size of the room the
    /// runtime gives `start` to make the frame in (a sync handler: its `poll` never answers 0 or
    /// 2, so the frame lives only while the runtime polls it once).
    pub frame_size: usize,
    /// The room's alignment; 0 when `frame_size` is.
    pub frame_align: usize,
    /// Makes a frame from a filled argument block, moving the values out of it. The runtime
    /// frees the block afterwards without dropping anything in it. Like `drop` and `finish`, it
    /// runs outside any trap guard, so it must not trap (a trap there ends the process); it only
    /// moves and frees memory.
    pub start: StartFn,
    /// Runs the frame; never called by the runtime, only passed to `guarded_poll`.
    pub poll: PollFn,
    /// Drops a frame that is not finished (a heap frame of a request dropped while it waited,
    /// or any frame whose poll answered 2), then frees it unless it is in the runtime's room.
    pub drop: FrameFn,
    /// Drops the result of a frame whose poll returned true, then frees the frame unless it is
    /// in the runtime's room.
    pub finish: FrameFn,
    /// Where the handler's result sits in a finished frame.
    pub result_offset: usize,
    /// The handler's result type; an `Option` answers `none` with 404.
    pub result: *const TypeDesc,
    /// The status of the route's own answer: 201 for POST, 200 otherwise.
    pub status: u64,
}

// SAFETY (both impls): descriptors are immutable constants of the program; nothing writes
// through their pointers, and the functions they name may be called from any thread.
unsafe impl Sync for ParamDesc {}
unsafe impl Sync for RouteDesc {}

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

/// The handler of the route `desc` describes, its frame polled through `guarded_poll`.
///
/// Panics when the argument block's or the frame's layout is not a valid layout (a size that
/// overflows, an alignment that is not a power of two, a frame size without an alignment), so
/// a broken descriptor stops the service before it listens instead of failing every request;
/// the per-request code then takes the layouts as given.
pub(crate) fn handler(desc: &'static RouteDesc, guarded_poll: GuardedPollFn) -> Handler {
    if Layout::from_size_align(desc.args_size, desc.args_align.max(1)).is_err() {
        panic!("a route's argument block has an invalid layout ({} bytes at {})", desc.args_size, desc.args_align)
    }
    if desc.frame_size != 0 && Layout::from_size_align(desc.frame_size, desc.frame_align).is_err() {
        panic!("a route's frame has an invalid layout ({} bytes at {})", desc.frame_size, desc.frame_align)
    }
    Handler::new(move |request| Box::pin(RouteFuture { desc, guarded_poll, state: State::Bind(request) }))
}

/// Where a route's future is.
#[allow(clippy::large_enum_variant, reason = "the future is boxed once; boxing the request too would allocate twice")]
enum State {
    /// Not polled yet: the request, whose parameters are bound at the first poll.
    Bind(Request),
    /// The frame is started and has not returned; dropping it drops the frame.
    Running(Frame),
    /// The frame is finished, or it failed (see [`Polled::Failed`]).
    Done,
}

/// The future of one request to an LLVM route.
struct RouteFuture {
    desc: &'static RouteDesc,
    guarded_poll: GuardedPollFn,
    state: State,
}

impl Future for RouteFuture {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        let this = self.get_mut();
        let desc = this.desc;
        if let State::Bind(request) = &this.state {
            if desc.frame_size != 0 {
                return Poll::Ready(run_in_room(this, cx));
            }
            let frame = start(desc, request, ptr::null_mut());
            // Replacing the state drops the request in place, before the handler runs.
            this.state = State::Running(Frame::new(frame, desc.poll, desc.drop, Some(this.guarded_poll)));
        }
        let State::Running(frame) = &mut this.state else { panic!("a route's future was polled after it completed") };
        match frame.poll(cx) {
            Polled::Pending => Poll::Pending,
            Polled::Returned(frame) => {
                this.state = State::Done;
                // SAFETY: the frame has returned, and nothing else finishes it.
                Poll::Ready(unsafe { answer(desc, frame) })
            }
            Polled::Failed(payload) => {
                this.state = State::Done;
                std::panic::resume_unwind(super::guard::reason(payload, "a handler"))
            }
        }
    }
}

/// The answer of a returned frame ([`reply`]), after which the frame is finished: exactly once,
/// also when the encoding unwinds.
///
/// # Safety
/// `frame` is a frame of `desc` whose poll answered ready and that nothing else finishes.
unsafe fn answer(desc: &RouteDesc, frame: *mut u8) -> Reply {
    /// Finishes the frame when dropped: after the answer, or while its encoding unwinds.
    struct Finish<'a>(&'a RouteDesc, *mut u8);
    impl Drop for Finish<'_> {
        fn drop(&mut self) {
            // SAFETY: the caller of `answer` hands over the returned frame, finished once, here.
            unsafe { (self.0.finish)(self.1) }
        }
    }
    let _finish = Finish(desc, frame);
    // SAFETY: the frame has returned, so its result is at `result_offset`.
    unsafe { reply(desc, frame) }
}

/// Runs a request to a route whose frame is made in the runtime's room (`frame_size` is not 0):
/// binds, starts the frame in room on this stack (allocated when it does not fit), polls it
/// once, encodes its result and finishes it, all in this one poll of the request's future.
fn run_in_room(this: &mut RouteFuture, cx: &mut Context<'_>) -> Reply {
    let (desc, guarded_poll) = (this.desc, this.guarded_poll);
    let State::Bind(request) = &this.state else { unreachable!("a route's future binds once") };
    let mut inline = InlineRoom::uninit();
    let room = Room::new(&mut inline, desc.frame_size, desc.frame_align);
    let frame = start(desc, request, room.at);
    // As on the heap path, the request is dropped (in place, not moved) before the handler runs.
    this.state = State::Done;
    // Declared after `room`, so a frame dropped while unwinding is dropped before its room goes.
    let mut running = Frame::new(frame, desc.poll, desc.drop, Some(guarded_poll));
    match running.poll(cx) {
        // SAFETY: the frame has returned, and nothing else finishes it; its room outlives this.
        Polled::Returned(frame) => unsafe { answer(desc, frame) },
        Polled::Failed(payload) => std::panic::resume_unwind(super::guard::reason(payload, "a handler")),
        Polled::Pending => crate::trap("a sync route's frame waited"),
    }
}

/// Binds every parameter of `desc` from `request` into a new argument block, then makes the
/// frame (in `room`, when the route's frame goes in the runtime's room). A JSON body is decoded
/// straight into its place; other parameters are bound as values and written. Binding fails by
/// unwinding with its answer (400, 415, 422, …); the block's guard then frees the parameters
/// bound before it and the block (when allocated), so a failed binding leaks nothing.
fn start(desc: &RouteDesc, request: &Request, room: *mut u8) -> *mut u8 {
    // SAFETY (both calls): `start` moves the values out of a block whose every parameter is
    // written, and keeps no pointer to it; `room` is null or room of the route's frame layout.
    let frame = if desc.param_count == 0 {
        // Nothing to bind or to fail: the empty block is any aligned pointer.
        unsafe { (desc.start)(ptr::NonNull::<InlineRoom>::dangling().as_ptr().cast(), room) }
    } else {
        // A block that fits lives on this stack: one allocation and free fewer per request.
        let mut inline = InlineRoom::uninit();
        let mut block = Arguments { desc, room: Room::new(&mut inline, desc.args_size, desc.args_align), bound: 0 };
        for param in desc.params() {
            bind_into(request, param, block.room.at);
            block.bound += 1;
        }
        let frame = unsafe { (desc.start)(block.room.at, room) };
        // The values moved into the frame: the block is let go of without dropping anything.
        block.bound = 0;
        frame
    };
    assert!(!frame.is_null(), "a route's start returned no frame");
    frame
}

/// Binds `param` from `request` into the argument block at `args`: a JSON body decoded straight
/// into its place, another parameter bound as a value and written.
fn bind_into(request: &Request, param: &ParamDesc, args: *mut u8) {
    // SAFETY: the block holds the parameter's type at its offset, as the emitter laid it out.
    let at = unsafe { args.add(param.offset) };
    if param.source == SOURCE_BODY {
        let body = request.json_body().unwrap_or_else(|e| e.raise());
        // SAFETY: as above.
        unsafe { json::decode_body(body, param.ty(), at) }.unwrap_or_else(|e| e.raise());
    } else {
        let value = bind(request, param);
        // SAFETY: as above.
        unsafe { json::write(value, param.ty(), at) };
    }
}

/// The largest argument block or frame kept on the stack while a request runs (bytes).
const INLINE_ROOM: usize = 256;

/// Room for an argument block or a frame of up to [`INLINE_ROOM`] bytes aligned to 16, the
/// largest alignment of a Low type.
#[repr(align(16))]
struct InlineRoom([std::mem::MaybeUninit<u8>; INLINE_ROOM]);

impl InlineRoom {
    fn uninit() -> InlineRoom {
        InlineRoom([std::mem::MaybeUninit::uninit(); INLINE_ROOM])
    }
}

/// Memory of a given layout: the caller's [`InlineRoom`] when it fits, else allocated through
/// the ABI (which keeps the count of buffers emitted code owns exact) and freed on drop. It
/// never drops what is in it, and it borrows the [`InlineRoom`] it may point into.
struct Room<'a> {
    at: *mut u8,
    /// The layout `at` was allocated with; `None` when `at` is the caller's [`InlineRoom`].
    allocated: Option<Layout>,
    inline: PhantomData<&'a mut InlineRoom>,
}

impl<'a> Room<'a> {
    /// Room of `size` bytes at `align` (0 counts as 1), a layout [`handler`] checked when the
    /// route was set up. Inlined, so the common case is two compares.
    #[inline]
    fn new(inline: &'a mut InlineRoom, size: usize, align: usize) -> Room<'a> {
        if size <= INLINE_ROOM && align <= std::mem::align_of::<InlineRoom>() {
            // A power of two up to the room's own alignment is met by it.
            return Room { at: inline.0.as_mut_ptr().cast(), allocated: None, inline: PhantomData };
        }
        let Ok(layout) = Layout::from_size_align(size, align.max(1)) else {
            unreachable!("a route's layouts are checked when its handler is made")
        };
        Room { at: super::allocate(layout), allocated: Some(layout), inline: PhantomData }
    }
}

impl Drop for Room<'_> {
    fn drop(&mut self) {
        if let Some(layout) = self.allocated {
            // SAFETY: `at` was allocated with this layout.
            unsafe { super::nagi_rt_free(self.at, layout.size(), layout.align()) };
        }
    }
}

/// A route's argument block while its parameters are bound: on drop, the first `bound`
/// parameters are freed, then the block's room.
struct Arguments<'a> {
    desc: &'a RouteDesc,
    room: Room<'a>,
    bound: usize,
}

impl Drop for Arguments<'_> {
    fn drop(&mut self) {
        for param in &self.desc.params()[..self.bound] {
            // SAFETY: the parameter was written at its offset and nothing else holds it.
            unsafe { json::drop_value(self.room.at.add(param.offset), param.ty()) };
        }
    }
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
        // As the shaped JSON holds them: a `Time` and a `Duration` as microseconds, a `Uuid` as
        // its canonical text.
        Kind::Time => typed_as(request, place, name, |t: crate::time::Time| Value::I64(t.micros())),
        Kind::Duration => typed_as(request, place, name, |d: crate::time::Duration| Value::I64(d.micros())),
        Kind::Uuid => typed_as(request, place, name, |u: crate::ids::Uuid| Value::Str(crate::ids::format(u.0))),
        kind => panic!("route parameter `{name}`: a {kind:?} cannot come from the path or the query"),
    }
}

/// `request.path::<T>`, `request.query::<T>` or `request.query_opt::<T>` as a value.
fn typed<T: http::Param + Into<Value>>(request: &Request, place: Place, name: &str) -> Value {
    typed_as(request, place, name, T::into)
}

/// [`typed`] with the value made by `value`.
fn typed_as<T: http::Param>(request: &Request, place: Place, name: &str, value: impl Fn(T) -> Value) -> Value {
    match place {
        Place::Path => value(request.path::<T>(name)),
        Place::Query => value(request.query::<T>(name)),
        Place::QueryOpt => Value::Option(request.query_opt::<T>(name).map(|v| Box::new(value(v)))),
        Place::Header => value(request.header::<T>(name)),
        Place::HeaderOpt => Value::Option(request.header_opt::<T>(name).map(|v| Box::new(value(v)))),
    }
}

/// The route's answer for its finished frame: the result written by `shaped_json::write` into
/// the body (`http::reply_encoded`, so a 204 has none), or for an `Option` result that is `none`
/// the failure the handler recorded, or 404 (`http::reply_missing`, as `http::reply_option`).
///
/// # Safety
/// `frame` is a ready frame of `desc`: its result sits at `result_offset`.
unsafe fn reply(desc: &RouteDesc, frame: *mut u8) -> Reply {
    let ty = desc.result();
    let Ok(status) = u16::try_from(desc.status) else { crate::trap(&format!("invalid HTTP status {}", desc.status)) };
    // SAFETY: the caller guarantees the result at `result_offset`, laid out as `ty` describes.
    unsafe {
        let at = frame.add(desc.result_offset);
        let (at, ty) = match ty.kind() {
            Kind::Option if at.read() & 1 == 0 => return http::reply_missing(),
            Kind::Option => (at.add(ty.payload_offset), ty.inner()),
            _ => (at, ty),
        };
        http::reply_encoded(status, |out| shaped_json::write(&Typed::new(at, ty), out))
    }
}

#[cfg(test)]
mod tests;
