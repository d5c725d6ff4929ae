//! The per-request wrapper around generated handlers: the request context, the body read within
//! the limit, the end of the request's transaction, and every answer, error answers as JSON.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Bytes;
use axum::http::{HeaderValue, Method, StatusCode, header};
use futures_util::FutureExt;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use serde::Serialize;

use super::{Handler, Reply, ReplyBody, Request};
use crate::context::{self, RequestContext};
use crate::db::DbHandle;
use crate::{HttpError, Trap};

/// An answer as the connection layer sends it: the status, headers and the whole body.
pub(crate) type Answer = hyper::Response<Full<Bytes>>;

/// What every request of one server shares.
pub(crate) struct Shared {
    pub(crate) db: DbHandle,
    pub(crate) body_limit: usize,
    pub(crate) timeout_ms: u64,
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
    let mut answer = hyper::Response::new(Full::new(Bytes::from(body)));
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
/// parameters, named and percent-decoded.
pub(crate) async fn handle(
    shared: &Shared,
    id: u64,
    handler: Handler,
    params: Vec<(String, String)>,
    request: hyper::Request<Incoming>,
) -> Answer {
    let began = Arc::new(AtomicBool::new(false));
    let headers = context::ResponseHeaders::default();
    let context =
        RequestContext { id, db: shared.db.clone(), began: Arc::clone(&began), headers: Arc::clone(&headers) };
    let mut guard = EndGuard::new(id, shared.db.clone());
    let response = context::scope(context, run(shared, handler, params, request)).await;
    // Only a request that wrote (or began a transaction) has a transaction to end; a read-only
    // request needs no notice. A 2xx answer is sent only once its writes are committed.
    let response = if began.load(Ordering::Relaxed) {
        match shared.db.request_ended(id, response.status().is_success()).await {
            Ok(()) => response,
            Err(error) => {
                error_response(500, "database error", &format!("the request's writes could not be committed: {error}"))
            }
        }
    } else {
        response
    };
    guard.disarm();
    // The headers a handler set belong to its answer, not to an error answer in its place.
    let mut response = response;
    if response.status().is_success() {
        let set = std::mem::take(&mut *headers.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for (name, value) in set {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

async fn run(
    shared: &Shared,
    handler: Handler,
    params: Vec<(String, String)>,
    request: hyper::Request<Incoming>,
) -> Answer {
    let (parts, body) = request.into_parts();
    let query = parts
        .uri
        .query()
        .map(|query| form_urlencoded::parse(query.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let body = match Limited::new(body, shared.body_limit).collect().await {
        Ok(body) => body.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => return too_large(shared.body_limit),
        Err(error) => return error_response(400, "bad request", &format!("cannot read the request body: {error}")),
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

/// The 413 for a body longer than the limit.
pub(crate) fn too_large(limit: usize) -> Answer {
    error_response(413, "payload too large", &format!("the request body is larger than the limit of {limit} bytes"))
}

fn reply_response(reply: Reply, method: &Method, path: &str) -> Answer {
    match reply.body {
        ReplyBody::Json(body) => json_answer(reply.status, body),
        ReplyBody::Empty => {
            let mut answer = hyper::Response::new(Full::new(Bytes::new()));
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
