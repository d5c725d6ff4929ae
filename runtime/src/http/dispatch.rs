//! The request path between hyper's connection and the handlers: the route table, the method
//! rules (404, 405 with `Allow`, `HEAD` answered by the `GET` route), the request timeout, the
//! body limit's early check, and the request's log line.
//!
//! This used to be an Axum `Router` with three layers (the body limit, the timeout and a
//! `from_fn` middleware for the log) and a normalizing step that turned their plain-text answers
//! into JSON. Per request, that stack cloned and boxed a service per layer and rebuilt the route
//! from its boxed handler: about 25 allocations a request before a handler ran, half of what a
//! `GET /health` cost in all (see bench/README.md, "The JSON-path gap"). The rules themselves
//! are few and are the runtime's own (every answer is JSON, see docs/http.md), so they are written
//! here once, on `matchit`, the route matcher Axum itself uses, so that paths match exactly as
//! they did.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, Method, header};
use hyper::body::{Body, Incoming};

use super::wrapper::{self, Answer, Shared};
use super::{Handler, Route};
use crate::budget::Budget;
use crate::config::Config;
use crate::db::DbHandle;
use crate::metrics::{RouteMetrics, ServerMetrics};

/// Request ids are unique in the process and start at 1.
static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

/// A fresh request id, never 0, unique in the process: a request's, or a job attempt's.
pub(crate) fn next_request_id() -> u64 {
    NEXT_REQUEST.fetch_add(1, Ordering::Relaxed)
}

/// One route's handler and its path parameters' names by position (the route table knows them
/// as `p0`, `p1`, …; see [`positional_path`]).
struct Endpoint {
    method: Method,
    handler: Handler,
    names: Arc<[String]>,
    /// The route's path template, as declared (`/users/{id}`): what logs and metrics name it by.
    template: Arc<str>,
    /// Its request metrics (method and path template), when metrics are on.
    metrics: Option<RouteMetrics>,
}

/// The routes of one path, in the order the program declares them.
struct PathRoutes {
    endpoints: Vec<Endpoint>,
    /// The `Allow` header of a 405 on this path: its methods in order, `HEAD` after `GET`.
    allow: HeaderValue,
}

impl PathRoutes {
    /// The endpoint for `method`: an exact match, or for `HEAD` the `GET` route (hyper then sends
    /// its head without the body).
    fn endpoint(&self, method: &Method) -> Option<&Endpoint> {
        let exact = self.endpoints.iter().find(|e| e.method == *method);
        if exact.is_none() && *method == Method::HEAD {
            return self.endpoints.iter().find(|e| e.method == Method::GET);
        }
        exact
    }
}

/// The route table of one server and what every request shares.
pub(crate) struct Dispatch {
    table: matchit::Router<usize>,
    paths: Vec<PathRoutes>,
    shared: Arc<Shared>,
    timeout: Duration,
    /// The request metrics of requests no route took (404, 405, a bad host), when metrics are on.
    unmatched: Option<RouteMetrics>,
    /// Requests in flight and connections, when metrics are on.
    server: Option<ServerMetrics>,
}

impl Dispatch {
    /// The table of `routes` with the limits of `config`.
    ///
    /// Panics when a route's method is not a valid HTTP token, two routes have the same method
    /// and path, or two paths conflict in the matcher; the compiler rejects all three, so a
    /// generated service never does.
    pub(crate) fn new(routes: &[Route], config: &Config, db: DbHandle, budget: Arc<Budget>) -> Dispatch {
        let shared = Arc::new(Shared { db, body_limit: config.body_limit, timeout_ms: config.timeout_ms, budget });
        let mut table = matchit::Router::new();
        let mut keys: Vec<String> = Vec::new();
        let mut paths: Vec<PathRoutes> = Vec::new();
        for route in routes {
            // Paths are matched with their parameters renamed by position (`/users/{p0}`): the
            // matcher refuses two routes whose parameters at one position have different names
            // (`GET /entries/{id}` and `POST /entries/{parts}`), which Nagi allows.
            let (path, names) = positional_path(route.path);
            let method = Method::from_bytes(route.method.to_ascii_uppercase().as_bytes())
                .unwrap_or_else(|_| panic!("route {} {}: invalid method", route.method, route.path));
            let at = match keys.iter().position(|known| *known == path) {
                Some(at) => at,
                None => {
                    table
                        .insert(path.clone(), paths.len())
                        .unwrap_or_else(|e| panic!("route {} {}: {e}", route.method, route.path));
                    keys.push(path);
                    paths.push(PathRoutes { endpoints: Vec::new(), allow: HeaderValue::from_static("") });
                    paths.len() - 1
                }
            };
            let routes = &mut paths[at];
            assert!(
                routes.endpoints.iter().all(|e| e.method != method),
                "route {} {}: declared twice",
                route.method,
                route.path
            );
            let metrics = RouteMetrics::new(route.method, route.path);
            let template = Arc::from(route.path);
            routes.endpoints.push(Endpoint {
                method,
                handler: route.handler.clone(),
                names: names.into(),
                template,
                metrics,
            });
        }
        for routes in &mut paths {
            routes.allow = allow_header(&routes.endpoints);
        }
        Dispatch {
            table,
            paths,
            shared,
            timeout: Duration::from_millis(config.timeout_ms),
            unmatched: RouteMetrics::new("", ""),
            server: ServerMetrics::new(),
        }
    }

    /// The server-wide metrics, when metrics are on.
    pub(crate) fn server_metrics(&self) -> Option<&ServerMetrics> {
        self.server.as_ref()
    }

    /// The memory budget of request bodies, query results and answers; the connection layer
    /// gives an answer's part back once the answer is written out.
    pub(crate) fn budget(&self) -> &Arc<Budget> {
        &self.shared.budget
    }

    /// Answers one request and writes its log line: routes it, runs its handler within the
    /// request timeout (503 `timeout` after `--timeout-ms`), and answers every failure with the
    /// JSON error body.
    pub(crate) async fn serve(&self, request: hyper::Request<Incoming>) -> Answer {
        let start = Instant::now();
        let id = next_request_id();
        let method = request.method().clone();
        // A clone of the URI shares its bytes: no copy of the path per request.
        let uri = request.uri().clone();
        let path = uri.path();
        if let Some(server) = &self.server {
            server.request_began();
        }
        let mut span =
            crate::traces::Span::server(request.headers().get(crate::traces::TRACEPARENT).map(HeaderValue::as_bytes));
        let trace = span.as_ref().map(crate::traces::Span::context);
        // The route that took the request, known once it is routed (a timeout keeps it).
        let mut taken: Option<&Endpoint> = None;
        // The route's future is built straight into the timeout's (a named local would be a
        // second slot of the same size in this future).
        let answer = match tokio::time::timeout(self.timeout, self.route(id, trace, path, request, &mut taken)).await {
            Ok(answer) => answer,
            Err(_) => {
                crate::metrics::refused(crate::metrics::Refusal::Timeout);
                wrapper::error_response(
                    503,
                    "timeout",
                    &format!("the request did not finish within {} ms", self.shared.timeout_ms),
                )
            }
        };
        let elapsed = start.elapsed();
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let status = answer.status().as_u16();
        if let Some(server) = &self.server {
            server.request_ended();
            if let Some(metrics) = taken.map_or(self.unmatched.as_ref(), |e| e.metrics.as_ref()) {
                metrics.record(status, elapsed.as_secs_f64());
            }
        }
        let route = taken.map_or("", |e| &*e.template);
        if tracing::enabled!(target: "nagi::request", tracing::Level::INFO)
            && !crate::logging::request_line(id, trace, method.as_str(), path, route, status, micros)
        {
            tracing::info!(target: "nagi::request", request = id, method = %method, path = %path, status, micros);
        }
        if let Some(span) = &mut span {
            span.set_detail(|| crate::traces::Detail::Request {
                method: method.clone(),
                route: taken.map(|e| Arc::clone(&e.template)),
                path: crate::traces::Path::new(path),
                status,
                request: id,
            });
        }
        answer
    }

    /// Finds the route of `path` and the request's method, checks the declared body length
    /// against the limit, decodes the path parameters and runs the handler.
    async fn route<'a>(
        &'a self,
        id: u64,
        trace: Option<crate::traces::SpanContext>,
        path: &str,
        request: hyper::Request<Incoming>,
        taken: &mut Option<&'a Endpoint>,
    ) -> Answer {
        if let Some(problem) = host_problem(&request) {
            return wrapper::error_response(400, "bad request", problem);
        }
        let method = request.method();
        let Ok(found) = self.table.at(path) else {
            return wrapper::error_response(404, "not found", &format!("no route for {method} {path}"));
        };
        let routes = &self.paths[*found.value];
        let Some(endpoint) = routes.endpoint(method) else {
            let mut answer =
                wrapper::error_response(405, "method not allowed", &format!("{path} does not accept {method}"));
            answer.headers_mut().insert(header::ALLOW, routes.allow.clone());
            return answer;
        };
        *taken = Some(endpoint);
        // A body declared longer than the limit is refused before any of it is read; one without a
        // length (chunked) is cut off at the limit as it is read (in the wrapper). Hyper knows a
        // request without a body; only one with a body has its length looked up.
        let declared = if request.body().is_end_stream() { None } else { declared_length(request.headers()) };
        if declared.is_some_and(|length| length > self.shared.body_limit as u64) {
            return wrapper::too_large(self.shared.body_limit);
        }
        let mut params = Vec::with_capacity(found.params.len());
        for (key, raw) in found.params.iter() {
            let position = key.strip_prefix('p').and_then(|n| n.parse::<usize>().ok());
            let name = position.and_then(|i| endpoint.names.get(i)).map_or(key, String::as_str);
            match percent_encoding::percent_decode_str(raw).decode_utf8() {
                Ok(value) => params.push((name.to_owned(), value.into_owned())),
                Err(_) => {
                    let detail = format!("path parameter `{name}` is not valid UTF-8 once percent-decoded");
                    return wrapper::error_response(400, "bad request", &detail);
                }
            }
        }
        wrapper::handle(&self.shared, id, trace, &endpoint.handler, params, declared, request).await
    }
}

/// RFC 9112 §3.2: an HTTP/1.1 request carries exactly one `Host` header (an HTTP/1.0 one may
/// carry none); any other is answered 400, as nginx answers it.
fn host_problem(request: &hyper::Request<Incoming>) -> Option<&'static str> {
    match request.headers().get_all(header::HOST).iter().count() {
        0 if request.version() == hyper::Version::HTTP_11 => {
            Some("an HTTP/1.1 request needs a Host header (RFC 9112 section 3.2)")
        }
        0 | 1 => None,
        _ => Some("a request has at most one Host header (RFC 9112 section 3.2)"),
    }
}

/// The request's `Content-Length`, when it has a valid one (hyper has refused a request with an
/// invalid one).
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

/// `GET,HEAD,POST`: the methods of `endpoints` in order, `HEAD` right after `GET` unless the path
/// declares its own `HEAD` route.
fn allow_header(endpoints: &[Endpoint]) -> HeaderValue {
    let has_head = endpoints.iter().any(|e| e.method == Method::HEAD);
    let mut methods: Vec<&str> = Vec::new();
    for endpoint in endpoints {
        methods.push(endpoint.method.as_str());
        if endpoint.method == Method::GET && !has_head {
            methods.push("HEAD");
        }
    }
    // Methods are HTTP tokens, which are valid header text.
    HeaderValue::from_str(&methods.join(",")).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// `path` with its `{name}` parameters renamed `{p0}`, `{p1}`, … by position, and the names in
/// order.
pub(crate) fn positional_path(path: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(path.len());
    let mut names = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else { break };
        out.push_str(&rest[..open]);
        names.push(rest[open + 1..open + close].to_owned());
        out.push_str(&format!("{{p{}}}", names.len() - 1));
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    (out, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoints(methods: &[Method]) -> Vec<Endpoint> {
        let handler = Handler::new(|_| Box::pin(async { super::super::Reply::json_bytes(200, Vec::new()) }));
        methods
            .iter()
            .map(|m| Endpoint {
                method: m.clone(),
                handler: handler.clone(),
                names: Arc::from(Vec::new()),
                template: Arc::from(""),
                metrics: None,
            })
            .collect()
    }

    #[test]
    fn allow_lists_methods_in_order_with_head_after_get() {
        assert_eq!(allow_header(&endpoints(&[Method::POST, Method::GET])), "POST,GET,HEAD");
        assert_eq!(allow_header(&endpoints(&[Method::GET, Method::HEAD])), "GET,HEAD");
        assert_eq!(allow_header(&endpoints(&[Method::DELETE])), "DELETE");
    }

    #[test]
    fn head_is_answered_by_get_unless_declared() {
        let routes =
            PathRoutes { endpoints: endpoints(&[Method::POST, Method::GET]), allow: HeaderValue::from_static("") };
        assert_eq!(routes.endpoint(&Method::HEAD).map(|e| e.method.clone()), Some(Method::GET));
        assert!(routes.endpoint(&Method::PUT).is_none());
        let only_post = PathRoutes { endpoints: endpoints(&[Method::POST]), allow: HeaderValue::from_static("") };
        assert!(only_post.endpoint(&Method::HEAD).is_none());
    }
}
