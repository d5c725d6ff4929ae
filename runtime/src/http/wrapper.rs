//! The per-request wrapper around generated handlers, and the outer layer that logs each request
//! and makes sure every error answer is JSON.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{FromRequestParts, RawPathParams, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use serde::Serialize;

use super::{Handler, Reply, ReplyBody, Request};
use crate::context::{self, RequestContext};
use crate::db::DbHandle;
use crate::{HttpError, Trap};

/// What every request of one server shares.
pub(crate) struct Shared {
    pub(crate) db: DbHandle,
    pub(crate) body_limit: usize,
    pub(crate) timeout_ms: u64,
}

/// Request ids are unique in the process; 0 means "no request".
static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

/// The request's id, assigned by the outer layer and carried in the request's extensions so that
/// the request log line and the handler's logs name the same id.
#[derive(Clone, Copy)]
struct RequestId(u64);

/// The body of every error answer.
#[derive(Serialize)]
pub(crate) struct ErrorBody<'a> {
    pub(crate) error: &'a str,
    pub(crate) detail: &'a str,
}

/// An error answer: `status` with `{"error": error, "detail": detail}`. A 503 (a locked
/// database, the request timeout) also says `Retry-After: 1`: both are worth retrying soon.
pub(crate) fn error_response(status: u16, error: &str, detail: &str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_vec(&ErrorBody { error, detail }).unwrap_or_default();
    let mut response =
        (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// Tells the database thread that a request ended, also when its future is dropped (by the
/// timeout, or a client that went away), so that a transaction it left open is rolled back and
/// its deferred statements are discarded.
struct EndGuard {
    id: u64,
    db: DbHandle,
    armed: bool,
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if self.armed {
            self.db.request_ended_nowait(self.id);
        }
    }
}

/// Runs one handler for one request: sets the request context, reads the body within the limit,
/// binds path and query parameters, and turns the handler's reply, error or panic into a response.
///
/// `names` are the route's path parameter names by position: the router knows them as `p0`,
/// `p1`, … (see `positional_path`).
pub(crate) async fn handle(
    shared: Arc<Shared>,
    handler: Handler,
    names: Arc<[String]>,
    request: axum::extract::Request,
) -> Response {
    let id = match request.extensions().get::<RequestId>() {
        Some(RequestId(id)) => *id,
        None => NEXT_REQUEST.fetch_add(1, Ordering::Relaxed),
    };
    let began = Arc::new(AtomicBool::new(false));
    let context = RequestContext { id, db: shared.db.clone(), began: Arc::clone(&began) };
    let mut guard = EndGuard { id, db: shared.db.clone(), armed: true };
    let response = context::scope(context, run(&shared, handler, &names, request)).await;
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
    guard.armed = false;
    response
}

async fn run(shared: &Shared, handler: Handler, names: &[String], request: axum::extract::Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let params = match RawPathParams::from_request_parts(&mut parts, &()).await {
        Ok(params) => params
            .iter()
            .map(|(key, value)| {
                let position = key.strip_prefix('p').and_then(|n| n.parse::<usize>().ok());
                let name = position.and_then(|i| names.get(i)).map_or(key, String::as_str);
                (name.to_owned(), value.to_owned())
            })
            .collect(),
        Err(rejection) => return error_response(400, "bad request", &rejection.body_text()),
    };
    let query = parts
        .uri
        .query()
        .map(|query| form_urlencoded::parse(query.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    let body = match axum::body::to_bytes(body, shared.body_limit).await {
        Ok(body) => body,
        Err(error) if is_length_limit(&error) => return too_large(shared.body_limit),
        Err(error) => return error_response(400, "bad request", &format!("cannot read the request body: {error}")),
    };
    let method = parts.method;
    let path = parts.uri.path().to_owned();
    let request = Request { method: method.clone(), path: path.clone(), params, query, headers: parts.headers, body };
    // The handler is called inside the guarded future, so a panic before its first await is
    // caught too.
    match AssertUnwindSafe(async move { handler.call(request).await }).catch_unwind().await {
        Ok(reply) => reply_response(reply, &method, &path),
        Err(payload) => panic_response(payload),
    }
}

/// Whether reading the body failed because it passed the limit, either ours or the one of
/// tower-http's `RequestBodyLimitLayer` (for a chunked body, which has no Content-Length).
fn is_length_limit(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = source {
        if error.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = error.source();
    }
    false
}

fn too_large(limit: usize) -> Response {
    error_response(413, "payload too large", &format!("the request body is larger than the limit of {limit} bytes"))
}

fn reply_response(reply: Reply, method: &Method, path: &str) -> Response {
    match reply.body {
        ReplyBody::Json(body) => {
            (reply.status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
        }
        ReplyBody::NotFound => error_response(404, "not found", &format!("{method} {path}: no such resource")),
    }
}

/// The answer for a handler that unwound: its HTTP error, or 500 for a trap or another panic.
/// The panic hook has already logged traps and panics.
fn panic_response(payload: Box<dyn Any + Send>) -> Response {
    if let Some(error) = payload.downcast_ref::<HttpError>() {
        error_response(error.status, &error.error, &error.detail)
    } else if let Some(trap) = payload.downcast_ref::<Trap>() {
        error_response(500, "trap", &trap.message)
    } else {
        error_response(500, "internal error", &crate::trap::payload_text(payload.as_ref()))
    }
}

/// The fallback for paths no route matches.
pub(crate) async fn not_found(method: Method, uri: Uri) -> Response {
    error_response(404, "not found", &format!("no route for {method} {}", uri.path()))
}

/// The outermost layer: logs one line per request (method, path, status, microseconds) and turns
/// the plain-text or empty error answers of Axum and tower-http (405, 413, the timeout's 503) into
/// the JSON error shape.
pub(crate) async fn log_and_normalize(
    State(shared): State<Arc<Shared>>,
    mut request: axum::extract::Request,
    next: Next,
) -> Response {
    let start = Instant::now();
    let id = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed);
    request.extensions_mut().insert(RequestId(id));
    let method = request.method().clone();
    // A clone of the URI shares its bytes: no copy of the path per request.
    let uri = request.uri().clone();
    let path = uri.path();
    let response = normalize(next.run(request).await, &shared, &method, path);
    let micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
    let status = response.status().as_u16();
    if tracing::enabled!(target: "nagi::request", tracing::Level::INFO)
        && !crate::logging::request_line(id, method.as_str(), path, status, micros)
    {
        tracing::info!(target: "nagi::request", request = id, method = %method, path = %path, status, micros);
    }
    response
}

fn normalize(response: Response, shared: &Shared, method: &Method, path: &str) -> Response {
    let status = response.status();
    let is_json =
        response.headers().get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (error, detail) = match status {
        StatusCode::METHOD_NOT_ALLOWED => ("method not allowed".to_owned(), format!("{path} does not accept {method}")),
        StatusCode::PAYLOAD_TOO_LARGE => (
            "payload too large".to_owned(),
            format!("the request body is larger than the limit of {} bytes", shared.body_limit),
        ),
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::REQUEST_TIMEOUT => {
            ("timeout".to_owned(), format!("the request did not finish within {} ms", shared.timeout_ms))
        }
        other => (other.canonical_reason().unwrap_or("error").to_ascii_lowercase(), String::new()),
    };
    let (mut parts, _) = response.into_parts();
    // Keep headers such as `Allow` on a 405, but take the new body's type and length.
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let body: Body = error_response(status.as_u16(), &error, &detail).into_body();
    Response::from_parts(parts, body)
}
