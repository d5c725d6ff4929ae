//! The per-request context: which request the running code serves, and what its handler leaves
//! for the answer (headers, the memory its query results hold).
//!
//! The HTTP wrapper sets it as a Tokio task-local around each handler future, so that the
//! database thread can tell the requests apart (to keep one request's statements out of
//! another's transaction) and logs and actor messages can name the request. Code outside a
//! request has request id 0. The database a request talks to is [`crate::db`]'s own task-local,
//! set beside this one.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::{HeaderName, HeaderValue};

use crate::budget::Hold;

/// What the running request carries.
#[derive(Clone)]
pub(crate) struct RequestContext {
    /// A process-unique request id, never 0.
    pub(crate) id: u64,
    /// What the handler leaves for its answer, shared with the wrapper that sends it (one
    /// allocation for both of its parts).
    pub(crate) state: Arc<Mutex<RequestState>>,
    /// The span of the request or job attempt, when tracing is on: the parent of the spans its
    /// code opens (statements, actor calls, outbound calls).
    pub(crate) trace: Option<crate::traces::SpanContext>,
}

/// What a request's handler leaves for the wrapper that answers it.
#[derive(Default)]
pub(crate) struct RequestState {
    /// The headers the handler set for its answer ([`crate::http::set_header`]), in the order
    /// set, a name set again replacing its value.
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// The memory budget's holds of the request's query results, given back when the request
    /// ends.
    pub(crate) held: Option<Hold>,
}

/// Sets the response header `name` of the current request; `false` outside a request.
pub(crate) fn set_header(name: HeaderName, value: HeaderValue) -> bool {
    CONTEXT
        .try_with(|c| {
            let headers = &mut c.state.lock().unwrap_or_else(PoisonError::into_inner).headers;
            match headers.iter_mut().find(|(n, _)| *n == name) {
                Some(entry) => entry.1 = value,
                None => headers.push((name, value)),
            }
        })
        .is_ok()
}

tokio::task_local! {
    static CONTEXT: RequestContext;
}

/// Runs `future` with `context` as the current request. A plain function returning the
/// task-local future, not an `async fn`: an `async fn` would keep `future` as its parameter and
/// again inside the task-local future, twice its size (request futures are boxed and moved by
/// that size; bench/README.md, "Instructions per request").
pub(crate) fn scope<F: Future>(context: RequestContext, future: F) -> impl Future<Output = F::Output> {
    CONTEXT.scope(context, future)
}

/// Whether the running code serves an HTTP request.
pub(crate) fn in_request() -> bool {
    CONTEXT.try_with(|_| ()).is_ok()
}

/// The current request's id, or 0 outside a request.
pub(crate) fn request_id() -> u64 {
    CONTEXT.try_with(|c| c.id).unwrap_or(0)
}

/// The running request's or job attempt's span, when tracing is on.
pub(crate) fn trace() -> Option<crate::traces::SpanContext> {
    CONTEXT.try_with(|c| c.trace).ok().flatten()
}

/// Keeps `hold` (of a query's rows) until the current request ends; outside a request it is
/// given back at once.
pub(crate) fn keep(hold: Hold) {
    let _ = CONTEXT.try_with(|c| hold.add_to(&mut c.state.lock().unwrap_or_else(PoisonError::into_inner).held));
}
