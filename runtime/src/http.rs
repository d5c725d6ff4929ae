//! HTTP for generated code: requests with typed parameters and JSON bodies, JSON replies, and the
//! server (Axum on Tokio) that routes requests to the program's handlers.
//!
//! A [`Handler`] is a function from the request to the future of its reply: a generated function
//! on the Rust path, or the LLVM path's adapter over a route's descriptors (`cabi::service`),
//! whose future binds its parameters with the same functions; routes are registered when the
//! server starts, so generated code instantiates none of Axum's generics. A whole service (its
//! tables, queues and process) is [`crate::service`]'s. Errors inside a handler unwind (see [`crate::HttpError`] and
//! [`crate::Trap`]) and the per-request wrapper answers them with `{"error": "...", "detail":
//! "..."}`, whichever path the handler came from. The rules are written out in `docs/http.md`.

pub(crate) mod binding;
mod connections;
pub(crate) mod dispatch;
mod wrapper;

pub(crate) use dispatch::next_request_id;
pub(crate) use wrapper::EndGuard;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::HttpError;
use crate::budget::Budget;
use crate::config::Config;
use crate::db::DbHandle;
use crate::shaped_json::{self, Shape};

/// An HTTP request as a handler sees it: method, path parameters, query parameters, headers, and
/// the body, already read in full (and within the body limit).
pub struct Request {
    method: Method,
    path: String,
    params: Vec<(String, String)>,
    query: Vec<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
}

impl Request {
    /// The path parameter `name` (`{name}` in the route), percent-decoded and parsed as `T`.
    ///
    /// A value that does not parse answers 400 `{"error":"bad request","detail":"path parameter
    /// `id`: expected an i64 integer, got \"abc\""}`.
    pub fn path<T: Param>(&self, name: &str) -> T {
        match self.params.iter().find(|(key, _)| key == name) {
            Some((_, text)) => parse_param("path", name, text),
            None => crate::trap(&format!("the route has no path parameter `{name}`")),
        }
    }

    /// The query parameter `name` (`?name=value`, form-decoded: `+` is a space) parsed as `T`.
    /// Missing or unparsable answers 400. When a name repeats, the first value counts.
    pub fn query<T: Param>(&self, name: &str) -> T {
        match self.query_text(name) {
            Some(text) => parse_param("query", name, text),
            None => HttpError::new(400, "bad request", format!("missing query parameter `{name}`")).raise(),
        }
    }

    /// The query parameter `name` parsed as `T`, or `None` when it is absent. Present but
    /// unparsable answers 400 (an empty value, `?limit=`, counts as present).
    pub fn query_opt<T: Param>(&self, name: &str) -> Option<T> {
        self.query_text(name).map(|text| parse_param("query", name, text))
    }

    /// The request header `name` (any case) parsed as `T`. Missing, not visible ASCII text
    /// (RFC 9110 lets a field value carry other bytes; a parameter cannot be made of them), or
    /// unparsable answers 400. When the header repeats, the first value counts.
    pub fn header<T: Param>(&self, name: &str) -> T {
        match self.header_text(name) {
            Some(text) => parse_param("header", name, text),
            None => HttpError::new(400, "bad request", format!("missing header `{name}`")).raise(),
        }
    }

    /// The request header `name` parsed as `T`, or `None` when it is absent. Present but not
    /// text or unparsable answers 400 (an empty value counts as present).
    pub fn header_opt<T: Param>(&self, name: &str) -> Option<T> {
        self.header_text(name).map(|text| parse_param("header", name, text))
    }

    fn header_text(&self, name: &str) -> Option<&str> {
        let value = self.headers.get(name)?;
        match value.to_str() {
            Ok(text) => Some(text),
            Err(_) => {
                HttpError::new(400, "bad request", format!("header `{name}`: the value is not visible ASCII text"))
                    .raise()
            }
        }
    }

    /// Decodes the JSON body straight into `T` (no intermediate JSON tree) under the binding rules:
    /// 415 for a missing or non-JSON content type, 400 for an empty or malformed body or trailing
    /// bytes, 422 when the JSON does not fit `T` (missing field, `null` for a non-option, wrong
    /// type, integer out of range, duplicate or unknown field). The detail names the field.
    pub fn json<T: DeserializeOwned>(&self) -> T {
        binding::check_content_type(self.headers.get(header::CONTENT_TYPE)).unwrap_or_else(|e| e.raise());
        binding::decode_typed(&self.body).unwrap_or_else(|e| e.raise())
    }

    /// Decodes the JSON body into a value of the type `shape` describes (a value tree: the
    /// interpreter's), under exactly the binding rules of [`Request::json`]:
    /// the same checks in the same order, and the same answers, detail included, as
    /// `json::<T>()` gives for the equivalent derived class.
    pub fn json_shaped<S: Shape>(&self, shape: S) -> shaped_json::Value {
        binding::decode_shaped(self.json_body().unwrap_or_else(|e| e.raise()), shape).unwrap_or_else(|e| e.raise())
    }

    /// The body of a request that says it is JSON: 415 for a missing or non-JSON content type
    /// (the first rule of [`Request::json`]; the LLVM path decodes the text itself).
    pub(crate) fn json_body(&self) -> Result<&[u8], HttpError> {
        binding::check_content_type(self.headers.get(header::CONTENT_TYPE))?;
        Ok(&self.body)
    }

    /// The request method, e.g. `GET`.
    pub fn method(&self) -> &str {
        self.method.as_str()
    }

    /// The request path, e.g. `/users/7` (without the query).
    pub fn uri_path(&self) -> &str {
        &self.path
    }

    /// A header's value, when present and valid text (for hand-written handlers; a header
    /// parameter binds through [`Request::header`]).
    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The raw body bytes.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The request an attempt of a job of `queue` hands its handler (`crate::queues`): a `POST
    /// /queues/<queue>` with the job as its JSON `body` and the attempt number as the query
    /// parameter `attempt`.
    pub(crate) fn for_job(queue: &str, payload: Vec<u8>, attempt: i64) -> Request {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Request {
            method: Method::POST,
            path: format!("/queues/{queue}"),
            params: Vec::new(),
            query: vec![("attempt".to_owned(), attempt.to_string())],
            headers,
            body: Bytes::from(payload),
        }
    }

    fn query_text(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// A request as the wrapper would build it, for unit tests of binding.
    #[cfg(test)]
    pub(crate) fn for_test(
        params: &[(&str, &str)],
        query: &[(&str, &str)],
        content_type: Option<&str>,
        body: &str,
    ) -> Request {
        let mut headers = HeaderMap::new();
        if let Some(value) = content_type {
            headers.insert(header::CONTENT_TYPE, value.parse().expect("a header value"));
        }
        let pairs = |list: &[(&str, &str)]| list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Request {
            method: Method::POST,
            path: "/test".to_owned(),
            params: pairs(params),
            query: pairs(query),
            headers,
            body: Bytes::copy_from_slice(body.as_bytes()),
        }
    }
}

fn parse_param<T: Param>(place: &str, name: &str, text: &str) -> T {
    T::parse(text).unwrap_or_else(|| {
        HttpError::new(
            400,
            "bad request",
            format!("{place} parameter `{name}`: expected {}, got {}", T::EXPECTED, binding::echo(text)),
        )
        .raise()
    })
}

/// A type that a path, query or header parameter parses into.
pub trait Param: Sized {
    /// What a valid value looks like, for the 400 answer's detail.
    const EXPECTED: &'static str = "a valid value";

    /// Parses the (already percent-decoded) text; `None` when it is not a valid value.
    fn parse(text: &str) -> Option<Self>;
}

impl Param for i32 {
    const EXPECTED: &'static str = "an i32 integer";

    /// As [`integer_param`], in range.
    fn parse(text: &str) -> Option<i32> {
        integer_param(text).and_then(|v| i32::try_from(v).ok())
    }
}

impl Param for i64 {
    const EXPECTED: &'static str = "an i64 integer";

    /// As [`integer_param`].
    fn parse(text: &str) -> Option<i64> {
        integer_param(text)
    }
}

/// An integer parameter's text: a JSON number (`-` and no `+`, no leading zero, digits on both
/// sides of a point) that is an integer, or a whole number written with a fraction or an
/// exponent whose magnitude is below 2^53 (`30.0`, `3e1`), the integer it equals, as in a JSON
/// body (docs/http.md, "Path and query parameters"). The document `--openapi-route` serves says
/// `type: integer`, which is this set of texts.
fn integer_param(text: &str) -> Option<i64> {
    if !json_number(text) {
        return None;
    }
    if let Ok(v) = text.parse::<i64>() {
        return Some(v);
    }
    text.parse::<f64>().ok().and_then(crate::json::whole)
}

/// Whether `text` is a number in JSON's grammar (RFC 8259 §6):
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn json_number(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > start).then_some(i)
    };
    let mut i = usize::from(b.first() == Some(&b'-'));
    i = match b.get(i) {
        Some(b'0') => i + 1,
        Some(b'1'..=b'9') => digits(i).unwrap_or(i),
        _ => return false,
    };
    if b.get(i) == Some(&b'.') {
        let Some(next) = digits(i + 1) else { return false };
        i = next;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1 + usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let Some(next) = digits(i) else { return false };
        i = next;
    }
    i == b.len()
}

impl Param for f64 {
    const EXPECTED: &'static str = "a finite number";

    /// A decimal or exponent number (Rust's `str::parse::<f64>`); `NaN` and infinities are refused.
    fn parse(text: &str) -> Option<f64> {
        text.parse::<f64>().ok().filter(|v| v.is_finite())
    }
}

impl Param for bool {
    const EXPECTED: &'static str = "true or false";

    /// Exactly `true` or `false`.
    fn parse(text: &str) -> Option<bool> {
        match text {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }
}

impl Param for String {
    const EXPECTED: &'static str = "text";

    /// Any text.
    fn parse(text: &str) -> Option<String> {
        Some(text.to_owned())
    }
}

impl Param for crate::time::Time {
    const EXPECTED: &'static str = "an RFC 3339 time, such as 2026-12-05T10:00:00Z";

    /// RFC 3339 with any offset, as in JSON (`time::parse`).
    fn parse(text: &str) -> Option<crate::time::Time> {
        crate::time::parse(text)
    }
}

impl Param for crate::time::Duration {
    const EXPECTED: &'static str = "a duration such as 250ms, 5s or 1h";

    /// A duration literal's text, as in JSON (`time::parse_duration`).
    fn parse(text: &str) -> Option<crate::time::Duration> {
        crate::time::parse_duration(text).map(crate::time::Duration::from_micros)
    }
}

impl Param for crate::ids::Uuid {
    const EXPECTED: &'static str = "a UUID";

    /// Any form the `uuid` crate reads, as in JSON (`ids::parse`).
    fn parse(text: &str) -> Option<crate::ids::Uuid> {
        crate::ids::parse(text).map(crate::ids::Uuid)
    }
}

/// A handler's answer: a status and a JSON body.
pub struct Reply {
    status: StatusCode,
    body: ReplyBody,
}

enum ReplyBody {
    Json(Vec<u8>),
    /// No content: the answer to a handler without a result (204).
    Empty,
    /// `none` from an option route; the wrapper writes the 404 with the request's path.
    NotFound,
}

impl Reply {
    /// The answer to `none` from a `T?` route: 404, whose body the wrapper writes with the
    /// request's method and path.
    fn not_found() -> Reply {
        Reply { status: StatusCode::NOT_FOUND, body: ReplyBody::NotFound }
    }

    /// The error answer of a recorded failure.
    fn failure(failure: &crate::failure::Failure) -> Reply {
        let status = StatusCode::from_u16(failure.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let error = status.canonical_reason().unwrap_or("error").to_ascii_lowercase();
        let body = serde_json::to_vec(&wrapper::ErrorBody { error: &error, detail: &failure.message });
        Reply { status, body: ReplyBody::Json(body.unwrap_or_default()) }
    }

    /// A reply with an already encoded JSON body; traps on a status outside 100..=999.
    pub fn json_bytes(status: u16, body: Vec<u8>) -> Reply {
        match StatusCode::from_u16(status) {
            Ok(status) => Reply { status, body: ReplyBody::Json(body) },
            Err(_) => crate::trap(&format!("invalid HTTP status {status}")),
        }
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.status.as_u16()
    }

    /// The JSON body (empty for a 204, and for a not-found reply, whose body the server writes).
    pub fn body(&self) -> &[u8] {
        match &self.body {
            ReplyBody::Json(bytes) => bytes,
            ReplyBody::Empty | ReplyBody::NotFound => &[],
        }
    }
}

/// Answers `status` with `value` encoded as JSON (`serde_json::to_vec`, so NaN and infinities are
/// `null`) and `content-type: application/json`. Generated code passes the route's status
/// (`RouteDecl::success_status`: 201 for POST routes, 200 otherwise, and 204 for a handler
/// without a result). A 204 has no body (RFC 9110 §15.3.5), so `value` is not encoded then.
pub fn reply<T: Serialize>(status: u16, value: &T) -> Reply {
    reply_encoded(status, |out| serde_json::to_writer(out, value).map_err(crate::json::encode_failed))
}

/// Answers `status` with the JSON that `encode` appends to a buffer (serde_json for [`reply`],
/// `shaped_json::write` for the LLVM path's results), or with no body for a 204, which is then
/// not encoded. An encoding error traps (`cannot encode JSON: ...`).
pub(crate) fn reply_encoded(status: u16, encode: impl FnOnce(&mut Vec<u8>) -> Result<(), String>) -> Reply {
    if status == 204 {
        return Reply { status: StatusCode::NO_CONTENT, body: ReplyBody::Empty };
    }
    // serde_json::to_string's first capacity, so that both paths grow the body alike.
    let mut body = Vec::with_capacity(128);
    if let Err(message) = encode(&mut body) {
        crate::trap(&message);
    }
    Reply::json_bytes(status, body)
}

/// Like [`reply`] for a `T?` result: `None` answers the failure the handler recorded with
/// `fail` ([`crate::failure`]: its status, `{"error": the status's reason in lower case,
/// "detail": the message}`), or, when it recorded none, 404 `{"error":"not found","detail":"GET
/// /users/7: no such resource"}`.
pub fn reply_option<T: Serialize>(status: u16, value: &Option<T>) -> Reply {
    match value {
        Some(value) => reply(status, value),
        None => reply_missing(),
    }
}

/// The answer of a `T?` result that is `none`: the failure the handler recorded, or 404 (see
/// [`reply_option`]).
pub(crate) fn reply_missing() -> Reply {
    match crate::failure::take() {
        Some(failure) => Reply::failure(&failure),
        None => Reply::not_found(),
    }
}

/// Sets the response header `name: value` of the request being handled (the `http.set_header`
/// row), sent with its successful answer; setting a name again replaces its value. Traps on a
/// name that is not an HTTP token, one the server owns (`content-type`, `content-length`,
/// `transfer-encoding`, `connection`), a value that is not visible ASCII (spaces and tabs
/// allowed), or a call outside a request.
pub fn set_header(name: &str, value: &str) {
    if let Err(message) = try_set_header(name, value) {
        crate::trap(&message);
    }
}

/// [`set_header`], with the trap's message as the error.
pub fn try_set_header(name: &str, value: &str) -> Result<(), String> {
    const OWNED: [&str; 4] = ["content-type", "content-length", "transfer-encoding", "connection"];
    let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        format!("invalid response header name {name:?}: a header name is a token (letters, digits, !#$%&'*+-.^_`|~)")
    })?;
    if OWNED.contains(&header.as_str()) {
        return Err(format!("the response header {name:?} is set by the server"));
    }
    let visible = value.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b));
    let value = HeaderValue::from_str(value)
        .ok()
        .filter(|_| visible)
        .ok_or_else(|| format!("invalid value for the response header {name:?}: it must be visible ASCII text"))?;
    if crate::context::set_header(header, value) {
        Ok(())
    } else {
        Err(format!("set_header({name:?}) outside a request"))
    }
}

/// Records `fail(status, message)` of a handler or a function it calls (the `http.fail` row;
/// see [`crate::failure`]).
pub fn fail(status: i64, message: &str) {
    crate::failure::fail(status, message);
}

/// `http.clear_failure`: forgets the failure of a call that `try?` handled ([`crate::failure::clear`]).
pub fn clear_failure() {
    crate::failure::clear();
}

/// `http.failure_status`: the status of the recorded failure, which `catch` handles, or 500
/// when none was recorded; it stays recorded ([`crate::failure::status`]).
pub fn failure_status() -> i64 {
    i64::from(crate::failure::status())
}

/// `http.take_failure`: the message of the recorded failure, which `catch` handles; it is
/// forgotten ([`crate::failure::take_message`]).
pub fn take_failure() -> String {
    crate::failure::take_message()
}

/// What a handler returns: a boxed, sendable future of its reply.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Reply> + Send + 'static>>;

/// A route's handler, from either emitter: a function from the request to the future of its
/// reply. The Rust path's generated functions are handlers as they are; the LLVM path's adapter
/// (`cabi`) makes one per route from its descriptors, so this module never names it. The
/// per-request wrapper runs every handler alike: the same request context, body limit,
/// transaction end, panic catching and answers.
#[derive(Clone)]
pub struct Handler(Arc<dyn Fn(Request) -> HandlerFuture + Send + Sync>);

impl Handler {
    /// The handler that calls `handler` for each request.
    pub fn new(handler: impl Fn(Request) -> HandlerFuture + Send + Sync + 'static) -> Handler {
        Handler(Arc::new(handler))
    }

    /// The handler's future for `request`. Nothing runs until it is first polled.
    pub(crate) fn call(&self, request: Request) -> HandlerFuture {
        (self.0)(request)
    }
}

/// One route: a method, a path in Nagi syntax (`/users/{id}`), and its handler.
#[derive(Clone)]
pub struct Route {
    /// `GET`, `POST`, `PUT`, `DELETE`, `PATCH`, ...
    pub method: &'static str,
    /// The path, with `{name}` for a path parameter.
    pub path: &'static str,
    /// The handler.
    pub handler: Handler,
}

/// Serves `routes` on `listener` with the limits of `config` (the request timeout and body
/// limit, the connection limits: header and idle timeouts, the most open connections; see
/// `docs/http.md`), `db` as every request's database and `budget` as the memory budget, until
/// `shutdown` completes; returns once every connection has closed.
pub(crate) async fn serve_routes<F>(
    listener: tokio::net::TcpListener,
    routes: &[Route],
    config: &Config,
    db: DbHandle,
    budget: Arc<Budget>,
    shutdown: F,
) where
    F: Future<Output = ()> + Send + 'static,
{
    let app = Arc::new(dispatch::Dispatch::new(routes, config, db, budget));
    connections::serve(listener, app, connections::Limits::from_config(config), shutdown).await;
}

#[cfg(test)]
mod tests {
    use super::dispatch::positional_path;
    use super::integer_param;

    #[test]
    fn integer_parameters_are_json_numbers_that_are_whole() {
        for (text, value) in [("0", 0), ("-7", -7), ("30", 30), ("30.0", 30), ("3e1", 30), ("-0.0", 0), ("1E+2", 100)] {
            assert_eq!(integer_param(text), Some(value), "{text}");
        }
        // Not JSON numbers (a `+`, a leading zero, a bare point), or not whole.
        for text in ["+0.0", "+5", "007", "1.", ".5", "1e", "30.5", "inf", "NaN", "", "-", "0x10", "9007199254740993.0"]
        {
            assert_eq!(integer_param(text), None, "{text}");
        }
    }

    #[test]
    fn parameters_are_renamed_by_position() {
        assert_eq!(positional_path("/health"), ("/health".to_owned(), vec![]));
        assert_eq!(
            positional_path("/users/{id}/posts/{post}"),
            ("/users/{p0}/posts/{p1}".to_owned(), vec!["id".to_owned(), "post".to_owned()])
        );
        assert_eq!(positional_path("/entries/{parts}").0, positional_path("/entries/{id}").0);
    }
}
