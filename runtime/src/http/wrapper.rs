//! The per-request wrapper around generated handlers: the request context, the body read within
//! the limit, the end of the request's transaction, and every answer, error answers as JSON.

use std::any::Any;
use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderValue, Method, StatusCode, header};
use bytes::BytesMut;
use futures_util::FutureExt;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use serde::Serialize;

use super::{Handler, Reply, ReplyBody, Request};
use crate::budget::{Budget, Hold};
use crate::context::{self, RequestContext, RequestState};
use crate::db;
use crate::db::DbHandle;
use crate::{HttpError, Trap};

/// An answer as the connection layer sends it: the status, headers and the whole body.
pub(crate) type Answer = hyper::Response<AnswerBody>;

/// How long a request body waits for room in the memory budget before it is answered 503.
const BODY_WAIT: Duration = Duration::from_millis(500);

/// Answers up to this size are sent whatever the memory budget holds and are not counted in it,
/// so that small answers such as `/health`'s or an error's never fail for memory that large
/// bodies and answers hold, and cost no bookkeeping: one per open connection at most is waiting
/// to be written, which the connection count bounds (docs/http.md, "Memory").
const SMALL_ANSWER: usize = 64 * 1024;

/// What every request of one server shares.
pub(crate) struct Shared {
    pub(crate) db: DbHandle,
    pub(crate) body_limit: usize,
    pub(crate) timeout_ms: u64,
    /// The memory budget of request bodies, query results and answers (`--memory-limit`).
    pub(crate) budget: Arc<Budget>,
}

/// The whole body of an answer, with the part of the memory budget it holds until the connection
/// has written it out (the connection layer takes the hold over when hyper drops the body).
pub(crate) struct AnswerBody {
    data: Option<Bytes>,
    hold: Option<Hold>,
}

impl AnswerBody {
    /// A body of `data`, counted nowhere yet.
    fn new(data: Bytes) -> AnswerBody {
        AnswerBody { data: (!data.is_empty()).then_some(data), hold: None }
    }

    /// The body's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.data.as_ref().map_or(0, Bytes::len)
    }

    /// The hold of the memory budget the body carries, taken out of it.
    pub(crate) fn take_hold(&mut self) -> Option<Hold> {
        self.hold.take()
    }
}

impl Body for AnswerBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().data.take().map(|data| Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len() as u64)
    }
}

/// The body of every error answer.
#[derive(Serialize)]
pub(crate) struct ErrorBody<'a> {
    pub(crate) error: &'a str,
    pub(crate) detail: &'a str,
}

/// An error answer: `status` with `{"error": error, "detail": detail}`. A 503 (a locked
/// database, the request timeout) also says `Retry-After: 1`: both are worth retrying soon; a
/// 507 (a full disk) says `Retry-After: 60`.
pub(crate) fn error_response(status: u16, error: &str, detail: &str) -> Answer {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_vec(&ErrorBody { error, detail }).unwrap_or_default();
    let mut response = json_answer(status, body);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    } else if status == StatusCode::INSUFFICIENT_STORAGE {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
    }
    response
}

/// `status` with a JSON `body`.
fn json_answer(status: StatusCode, body: Vec<u8>) -> Answer {
    let mut answer = hyper::Response::new(AnswerBody::new(Bytes::from(body)));
    *answer.status_mut() = status;
    answer.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    answer
}

/// Tells the database thread that a request ended, also when its future is dropped (by the
/// timeout, or a client that went away), so that a transaction it left open is rolled back and
/// its deferred statements are discarded. A job's attempt (`crate::queues`) has one too.
pub(crate) struct EndGuard {
    id: u64,
    db: DbHandle,
    armed: bool,
}

impl EndGuard {
    /// An armed guard of request `id` on `db`.
    pub(crate) fn new(id: u64, db: DbHandle) -> EndGuard {
        EndGuard { id, db, armed: true }
    }

    /// The request ended its transaction itself: nothing to tell when the guard goes.
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if self.armed {
            self.db.request_ended_nowait(self.id);
        }
    }
}

/// Runs one handler for one request: sets the request context, reads the body within the limit,
/// and turns the handler's reply, error or panic into an answer. `params` are the route's path
/// parameters, named and percent-decoded; `declared` is the body's `Content-Length`, if it has
/// one.
pub(crate) async fn handle(
    shared: &Shared,
    id: u64,
    trace: Option<crate::traces::SpanContext>,
    handler: &Handler,
    params: Vec<(String, String)>,
    declared: Option<u64>,
    request: hyper::Request<Incoming>,
) -> Answer {
    let session = db::Session::new(shared.db.clone());
    let state: Arc<Mutex<RequestState>> = Arc::default();
    let context = RequestContext { id, state: Arc::clone(&state), trace };
    let mut guard = EndGuard::new(id, shared.db.clone());
    // Boxed once here, so that the futures around it (the request context, the timeout, the
    // dispatch and the connection's) hold a pointer rather than the handler's state: each of
    // them was moved by value as it was built, about 30 KB of copies per request (bench/README.md,
    // "Instructions per request").
    let running = Box::pin(db::scope(session.clone(), run(shared, handler, params, declared, request)));
    let response = context::scope(context, running).await;
    // Only a request that wrote (or began a transaction) has a transaction to end; a read-only
    // request needs no notice. A 2xx answer is sent only once its writes are committed.
    let response = if session.began() {
        match shared.db.request_ended(&session, id, response.status().is_success()).await {
            Ok(()) => response,
            Err(error) => {
                error_response(500, "database error", &format!("the request's writes could not be committed: {error}"))
            }
        }
    } else {
        response
    };
    guard.disarm();
    // The headers a handler set belong to its answer, not to an error answer in its place; the
    // query results are gone with the handler, so their holds go before the answer is counted.
    let mut response = response;
    let RequestState { headers, held } = std::mem::take(&mut *state.lock().unwrap_or_else(PoisonError::into_inner));
    drop(held);
    if response.status().is_success() {
        for (name, value) in headers {
            response.headers_mut().insert(name, value);
        }
    }
    hold_answer(&shared.budget, response, session.began())
}

/// Counts a large `answer` in the memory budget until it is written out (a small one is not
/// counted, see [`SMALL_ANSWER`]). The answer of a request that wrote to the database is counted
/// whatever the budget holds (its writes are committed: the answer must go out); one of a request
/// that wrote nothing is replaced by a 503 when it does not fit, so that clients that do not read
/// their answers cannot make answers pile up in memory.
fn hold_answer(budget: &Arc<Budget>, mut answer: Answer, wrote: bool) -> Answer {
    let size = answer.body().len();
    if size <= SMALL_ANSWER {
        return answer;
    }
    let hold = if wrote { Some(budget.charge(size)) } else { budget.try_take(size) };
    match hold {
        Some(hold) => {
            answer.body_mut().hold = Some(hold);
            answer
        }
        // The 503 is a small answer: not counted.
        None => over_budget(budget, &format!("an answer of {size} bytes")),
    }
}

/// The 503 for `what` (a body or an answer) that does not fit in the memory budget.
fn over_budget(budget: &Budget, what: &str) -> Answer {
    crate::metrics::refused(crate::metrics::Refusal::Overloaded);
    error_response(503, "overloaded", &budget.refusal(what))
}

async fn run(
    shared: &Shared,
    handler: &Handler,
    params: Vec<(String, String)>,
    declared: Option<u64>,
    request: hyper::Request<Incoming>,
) -> Answer {
    let (parts, body) = request.into_parts();
    let query = parts
        .uri
        .query()
        .map(|query| form_urlencoded::parse(query.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    // The hold lives as long as the request: its body is the handler's to keep until it answers.
    // Only a request with a body reads one, in a future of its own (boxed): inline, its state
    // would size this future, boxed for every request, beyond what glibc's per-thread cache of
    // small blocks serves (1,032 bytes).
    let (body, _hold) = if declared == Some(0) || body.is_end_stream() {
        (Bytes::new(), None)
    } else {
        match Box::pin(read_body(shared, body, declared)).await {
            Ok(read) => read,
            Err(answer) => return answer,
        }
    };
    let method = parts.method;
    let path = parts.uri.path().to_owned();
    let request = Request { method: method.clone(), path: path.clone(), params, query, headers: parts.headers, body };
    // A failure recorded on this thread and never answered (none is) must not answer this one.
    crate::failure::take();
    // The handler is called inside the guarded future, so a panic before its first await is
    // caught too. An abandoned request drops it inside `Cancellable`, so that its deferred calls
    // run as a cancellation's (`crate::defers`).
    let handler = crate::defers::Cancellable::new(async move { handler.call(request).await });
    match AssertUnwindSafe(handler).catch_unwind().await {
        Ok(reply) => reply_response(reply, &method, &path),
        Err(payload) => panic_response(payload),
    }
}

/// Reads a request body whole, within the body limit and the memory budget: a body of a declared
/// length holds that much of the budget before any of it is read (one allocation of exactly that
/// size); a chunked body holds its buffer's size as it grows. A body that finds no room within
/// [`BODY_WAIT`] is answered 503 before the handler runs. For a request with a body: [`run`]
/// answers one without a body itself, without this future.
async fn read_body(
    shared: &Shared,
    mut body: Incoming,
    declared: Option<u64>,
) -> Result<(Bytes, Option<Hold>), Answer> {
    let limit = shared.body_limit;
    let declared = declared.and_then(|length| usize::try_from(length).ok());
    let wanted = declared.unwrap_or(0).min(limit);
    let mut hold = match shared.budget.take(wanted, BODY_WAIT).await {
        Some(hold) => hold,
        None => return Err(over_budget(&shared.budget, &format!("a request body of {wanted} bytes"))),
    };
    let mut buffer = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| error_response(400, "bad request", &format!("cannot read the request body: {e}")))?;
        let Ok(data) = frame.into_data() else { continue };
        let length = buffer.len() + data.len();
        if length > limit {
            return Err(too_large(limit));
        }
        // The usual body arrives in one frame of its declared length: kept as it is, no copy.
        if buffer.is_empty() && Some(data.len()) == declared {
            return Ok((data, Some(hold)));
        }
        if length > buffer.capacity() {
            // A declared length is allocated once; a chunked body grows by doubling, within the limit.
            let capacity = declared.unwrap_or_else(|| length.max(buffer.capacity() * 2).min(limit)).max(length);
            if capacity > hold.bytes() {
                let more = capacity - hold.bytes();
                match shared.budget.take(more, BODY_WAIT).await {
                    Some(more) => hold.absorb(more),
                    None => return Err(over_budget(&shared.budget, &format!("a request body of {capacity} bytes"))),
                }
            }
            buffer.reserve(capacity - buffer.len());
        }
        buffer.extend_from_slice(&data);
    }
    Ok((buffer.freeze(), Some(hold)))
}

/// The 413 for a body longer than the limit.
pub(crate) fn too_large(limit: usize) -> Answer {
    crate::metrics::refused(crate::metrics::Refusal::BodyTooLarge);
    error_response(413, "payload too large", &format!("the request body is larger than the limit of {limit} bytes"))
}

fn reply_response(reply: Reply, method: &Method, path: &str) -> Answer {
    match reply.body {
        ReplyBody::Json(body) => json_answer(reply.status, body),
        ReplyBody::Empty => {
            let mut answer = hyper::Response::new(AnswerBody::new(Bytes::new()));
            *answer.status_mut() = reply.status;
            answer
        }
        ReplyBody::NotFound => error_response(404, "not found", &format!("{method} {path}: no such resource")),
    }
}

/// The answer for a handler that unwound: its HTTP error, or 500 for a trap or another panic.
/// The panic hook has already logged traps and panics.
fn panic_response(payload: Box<dyn Any + Send>) -> Answer {
    if let Some(error) = payload.downcast_ref::<HttpError>() {
        error_response(error.status, &error.error, &error.detail)
    } else if let Some(trap) = payload.downcast_ref::<Trap>() {
        error_response(500, "trap", &trap.message)
    } else {
        error_response(500, "internal error", &crate::trap::payload_text(payload.as_ref()))
    }
}

#[cfg(test)]
mod sizes {
    use super::*;

    /// The size of what `make` returns (a future), without making it.
    fn returned_size<F, A, B, C, D, E, G, R>(_: &F) -> usize
    where
        F: Fn(A, B, C, D, E, G) -> R,
    {
        std::mem::size_of::<R>()
    }

    /// The handler's run is boxed for every request ([`handle`]); it must stay within the 1,032
    /// bytes glibc's per-thread cache of small blocks serves, or every request's allocation takes
    /// the allocator's slow path (bench/README.md, "Instructions per request"). It was 2,152
    /// bytes with `db::scope` an `async fn` and the body's reading inline. Nothing is polled.
    #[test]
    fn the_handlers_run_fits_the_allocators_fast_path() {
        let run_in_scope = |session: db::Session,
                            shared: &'static Shared,
                            handler: &'static Handler,
                            params: Vec<(String, String)>,
                            declared: Option<u64>,
                            request: hyper::Request<Incoming>| {
            db::scope(session, run(shared, handler, params, declared, request))
        };
        let size = returned_size(&run_in_scope);
        assert!(size <= 1032, "the handler's run is {size} bytes");
    }
}
