//! Integration tests of a service's traces (issue 34, docs/http.md "Traces"), each on both
//! emitters from one body: services built from examples and fixtures export to an OTLP/HTTP
//! receiver run by this harness (a hyper server decoding OpenTelemetry's protobuf messages), and
//! the spans it gets must form one trace per request, the request's span the parent of its SQL
//! statements', actor calls' and outbound calls' spans, named after the source; a request's
//! `traceparent` is followed, and an outbound call carries one to the service it calls. With the
//! collector stalled, requests go on and the dropped spans are counted.

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message;
use support::{Backend, Server, build, get_on, temp_dir};

const USERS: &str = "examples/users.nagi";

/// One span as the receiver got it: ids in hex, attributes as text.
#[derive(Clone, Debug)]
struct Received {
    service: String,
    trace_id: String,
    span_id: String,
    parent: String,
    name: String,
    /// OTLP's span kind: 1 internal, 2 server, 3 client, 5 consumer.
    kind: i32,
    /// OTLP's status code: 0 unset, 2 error.
    status: i32,
    attributes: HashMap<String, String>,
}

impl Received {
    fn attribute(&self, key: &str) -> &str {
        self.attributes.get(key).map_or("", String::as_str)
    }
}

/// An OTLP/HTTP receiver on a port of its own, keeping every span it is sent.
struct Receiver {
    port: u16,
    spans: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let spans: Arc<Mutex<Vec<Received>>> = Arc::default();
        let kept = Arc::clone(&spans);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((stream, _)) = listener.accept().await else { continue };
                    let kept = Arc::clone(&kept);
                    let answer = move |request: hyper::Request<hyper::body::Incoming>| {
                        let kept = Arc::clone(&kept);
                        async move {
                            assert_eq!(request.uri().path(), "/v1/traces");
                            assert_eq!(request.headers()["content-type"], "application/x-protobuf");
                            let body = request.into_body().collect().await.unwrap().to_bytes();
                            let export = ExportTraceServiceRequest::decode(body).expect("an OTLP export request");
                            kept.lock().unwrap().extend(received(export));
                            Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::new())))
                        }
                    };
                    tokio::spawn(async move {
                        let io = hyper_util::rt::TokioIo::new(stream);
                        let service = hyper::service::service_fn(answer);
                        let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                    });
                }
            });
        });
        Receiver { port, spans }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans received once `done` holds of them (spans come in batches, a second apart);
    /// at most 30 s.
    fn spans_when(&self, done: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let spans = self.spans.lock().unwrap().clone();
            if done(&spans) {
                return spans;
            }
            assert!(Instant::now() < deadline, "the receiver never got what was expected: {spans:#?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The spans of one export request.
fn received(export: ExportTraceServiceRequest) -> Vec<Received> {
    let text = |value: Option<Value>| match value {
        Some(Value::StringValue(s)) => s,
        Some(Value::IntValue(n)) => n.to_string(),
        other => format!("{other:?}"),
    };
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let mut spans = Vec::new();
    for resource_spans in export.resource_spans {
        let resource = resource_spans.resource.unwrap_or_default();
        let service = resource
            .attributes
            .into_iter()
            .find(|a| a.key == "service.name")
            .map(|a| text(a.value.and_then(|v| v.value)))
            .unwrap_or_default();
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                spans.push(Received {
                    service: service.clone(),
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    name: span.name,
                    kind: span.kind,
                    status: span.status.map_or(0, |s| s.code),
                    attributes: span
                        .attributes
                        .into_iter()
                        .map(|a| (a.key, text(a.value.and_then(|v| v.value))))
                        .collect(),
                });
            }
        }
    }
    spans
}

/// `FILE:LINE` of the line of `file` that holds `text`: the position a statement's span is
/// named by.
fn position(file: &str, text: &str) -> String {
    let source = std::fs::read_to_string(support::root().join(file)).unwrap();
    let line = source.lines().position(|l| l.contains(text)).unwrap_or_else(|| panic!("no {text:?} in {file}"));
    format!("{file}:{}", line + 1)
}

/// The spans of `trace`.
fn of_trace<'a>(spans: &'a [Received], trace: &str) -> Vec<&'a Received> {
    spans.iter().filter(|s| s.trace_id == trace).collect()
}

/// The one server span named `name` with status `status`.
fn server_span<'a>(spans: &'a [Received], name: &str, status: &str) -> &'a Received {
    let found: Vec<&Received> = spans
        .iter()
        .filter(|s| s.kind == 2 && s.name == name && s.attribute("http.response.status_code") == status)
        .collect();
    assert_eq!(found.len(), 1, "one {name} {status} span: {spans:#?}");
    found[0]
}

/// Four requests to the users example, one with a sampled `traceparent` and one with an
/// unsampled one: four traces, each with one server span named by its route template, its SQL
/// spans children of it and named by their statements' source positions; the sampled
/// `traceparent`'s trace id and parent are kept; the unsampled request records nothing; and the
/// JSON request lines carry the trace ids.
fn a_request_is_one_trace_with_its_statements_as_children(backend: Backend) {
    let receiver = Receiver::start();
    let dir = temp_dir("traces");
    let log = dir.join("service.log");
    let flags = ["--otlp-endpoint", &receiver.url(), "--log-format", "json"];
    let server = Server::start(&build(USERS, backend), &dir.join("users.db"), Some(&log), &flags);
    assert_eq!(server.send_json("POST", "/users", r#"{"id":1,"name":"Ada","age":36}"#).0, 201);
    let incoming = "0af7651916cd43dd8448eb211c80319c";
    let sampled = format!("traceparent: 00-{incoming}-b7ad6b7169203331-01\r\n");
    assert_eq!(server.get_with("/users/1", &sampled).0, 200);
    assert_eq!(server.get("/users/2").0, 404);
    assert_eq!(server.get("/health").0, 200);
    let unsampled = "traceparent: 00-11111111111111111111111111111111-2222222222222222-00\r\n";
    assert_eq!(server.get_with("/users/1", unsampled).0, 200);
    // Stopping sends the last spans.
    assert!(server.stop().success());
    let spans = receiver.spans_when(|spans| spans.len() >= 7);
    assert_eq!(spans.len(), 7, "four requests and three statements: {spans:#?}");
    assert!(spans.iter().all(|s| s.service == "users"), "{spans:#?}");
    assert!(spans.iter().all(|s| s.trace_id != "11111111111111111111111111111111"), "unsampled: {spans:#?}");

    let insert = position(USERS, "INSERT INTO users");
    let lookup = position(USERS, "SELECT id, name, age FROM users WHERE id = ?");
    let post = server_span(&spans, "POST /users", "201");
    let found = server_span(&spans, "GET /users/{id}", "200");
    let missing = server_span(&spans, "GET /users/{id}", "404");
    let health = server_span(&spans, "GET /health", "200");
    assert_eq!((found.trace_id.as_str(), found.parent.as_str()), (incoming, "b7ad6b7169203331"));
    for (request, statement) in
        [(post, Some(&insert)), (found, Some(&lookup)), (missing, Some(&lookup)), (health, None)]
    {
        let trace = of_trace(&spans, &request.trace_id);
        let children: Vec<&&Received> = trace.iter().filter(|s| s.span_id != request.span_id).collect();
        assert_eq!(children.len(), usize::from(statement.is_some()), "{trace:#?}");
        if let Some(position) = statement {
            let child = children[0];
            assert_eq!(
                (child.name.as_str(), child.kind, child.parent.as_str()),
                (position.as_str(), 3, &*request.span_id)
            );
            assert_eq!(child.attribute("db.system.name"), "sqlite");
            assert!(child.attribute("db.query.text").contains(" ?"), "no parameter values: {child:#?}");
        }
        assert_eq!(request.attribute("http.request.method"), request.name.split(' ').next().unwrap());
        assert_eq!(request.status, 0, "a 4xx is not a server span's error: {request:#?}");
    }
    assert_eq!(found.attribute("http.route"), "/users/{id}");
    assert_eq!(found.attribute("url.path"), "/users/1");
    assert!(post.parent.is_empty() && missing.parent.is_empty() && health.parent.is_empty());
    let traces: std::collections::HashSet<&str> = spans.iter().map(|s| s.trace_id.as_str()).collect();
    assert_eq!(traces.len(), 4, "{spans:#?}");

    // Each JSON request line names its trace and span; the unsampled one keeps its trace id.
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|o| o["target"] == "nagi::request")
        .collect();
    assert_eq!(lines.len(), 5, "{text}");
    for (line, span) in lines.iter().zip([post, found, missing, health]) {
        assert_eq!(
            (line["trace_id"].as_str(), line["span_id"].as_str()),
            (Some(&*span.trace_id), Some(&*span.span_id))
        );
    }
    assert_eq!(lines[4]["trace_id"], "11111111111111111111111111111111");
}

/// Job attempts of the queue fixture are traces of their own, their statements children of the
/// attempt's span; failed attempts end as errors. An actor call is a child of its request's span,
/// an error when the actor crashed.
fn job_attempts_and_actor_calls_are_spans(backend: Backend) {
    let receiver = Receiver::start();
    let dir = temp_dir("traces-jobs");
    let flags = ["--otlp-endpoint", &receiver.url()];
    let queue = "tests/fixtures/queue_service.nagi";
    let server = Server::start(&build(queue, backend), &dir.join("jobs.db"), None, &flags);
    assert_eq!(server.request("POST", "/jobs?from=1&count=3", None, ""), (201, "3".to_owned()));
    // Jobs 1 and 2 fail their first attempt: five attempts in all.
    let attempts = |spans: &[Received]| spans.iter().filter(|s| s.name == "process jobs").count();
    let spans = receiver.spans_when(|spans| attempts(spans) == 5);
    let runs = position(queue, "INSERT INTO runs");
    let jobs: Vec<&Received> = spans.iter().filter(|s| s.name == "process jobs").collect();
    assert_eq!(jobs.iter().filter(|s| s.status == 2).count(), 2, "{jobs:#?}");
    for job in &jobs {
        assert_eq!((job.kind, job.parent.as_str(), job.attribute("messaging.destination.name")), (5, "", "jobs"));
        let trace = of_trace(&spans, &job.trace_id);
        assert!(
            trace.iter().any(|s| s.name == runs && s.parent == job.span_id),
            "the attempt's insert is its child: {trace:#?}"
        );
    }
    let request = server_span(&spans, "POST /jobs", "201");
    assert!(jobs.iter().all(|j| j.trace_id != request.trace_id));
    assert!(server.stop().success());

    let counter = "tests/fixtures/counter_service.nagi";
    let server = Server::start(&build(counter, backend), &dir.join("counter.db"), None, &flags);
    assert_eq!(server.send_json("POST", "/hits", "").0, 201);
    assert_eq!(server.send_json("POST", "/crash", "").0, 503);
    assert!(server.stop().success());
    let spans = receiver.spans_when(|spans| spans.iter().filter(|s| s.name == "call Counter").count() == 2);
    for (route, status, error) in [("POST /hits", "201", 0), ("POST /crash", "503", 2)] {
        let request = server_span(&spans, route, status);
        assert_eq!(request.status, error, "{request:#?}");
        let call = spans.iter().find(|s| s.name == "call Counter" && s.trace_id == request.trace_id).unwrap();
        assert_eq!((call.kind, call.parent.as_str(), call.status), (1, &*request.span_id, error), "{call:#?}");
    }
}

/// A service that calls another: the caller's request span is the parent of its outbound call's
/// span, which the `traceparent` it sends makes the parent of the upstream's request span, all in
/// one trace.
fn an_outbound_call_carries_the_trace_to_the_service_it_calls(backend: Backend) {
    let receiver = Receiver::start();
    let dir = temp_dir("traces-outbound");
    let flags = ["--otlp-endpoint", &receiver.url()];
    let upstream = Server::start(&build("tests/fixtures/upstream.nagi", backend), &dir.join("up.db"), None, &flags);
    let url = format!("http://127.0.0.1:{}", upstream.port);
    let caller = Server::start_with_env(
        &build("tests/fixtures/outbound_service.nagi", backend),
        &dir.join("caller.db"),
        None,
        &flags,
        &[("UPSTREAM_URL", &url), ("UPSTREAM_KEY", "k")],
    );
    assert_eq!(caller.get("/address/7").0, 200);
    assert!(caller.stop().success());
    assert!(upstream.stop().success());
    let spans = receiver.spans_when(|spans| spans.iter().filter(|s| s.kind == 2).count() >= 2);
    let (callers, upstreams): (Vec<Received>, Vec<Received>) =
        spans.iter().cloned().partition(|s| s.service == "outbound_service");
    let served = server_span(&callers, "GET /address/{id}", "200");
    let upstream_span = server_span(&upstreams, "GET /address/{id}", "200");
    let trace = of_trace(&spans, &served.trace_id);
    let call = trace.iter().find(|s| s.kind == 3 && s.name == "GET").unwrap_or_else(|| panic!("{trace:#?}"));
    assert_eq!(call.parent, served.span_id);
    assert_eq!(call.attribute("url.full"), format!("{url}/address/7"));
    assert_eq!(call.attribute("http.response.status_code"), "200");
    assert_eq!(upstream_span.service, "upstream");
    assert_eq!((&upstream_span.trace_id, &upstream_span.parent), (&served.trace_id, &call.span_id), "{spans:#?}");
}

/// With a collector that accepts connections and never answers, 10,000 requests are answered
/// 200 and the spans that could not be sent are counted as dropped; an endpoint that is not a URL
/// stops the service before it listens, exit status 2.
fn a_stalled_collector_drops_spans_and_counts_them(backend: Backend) {
    let stalled = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://127.0.0.1:{}", stalled.local_addr().unwrap().port());
    // Connections are accepted and held, never read.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in stalled.incoming() {
            held.push(stream);
        }
    });
    let dir = temp_dir("traces-stalled");
    let log = dir.join("service.log");
    let exe = build(USERS, backend);
    let flags = ["--otlp-endpoint", &endpoint, "--metrics-listen", "127.0.0.1:0"];
    let server = Server::start(&exe, &dir.join("users.db"), Some(&log), &flags);
    for _ in 0..10_000 {
        assert_eq!(server.get("/health").0, 200);
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let port: u16 =
        text.split("metrics on http://127.0.0.1:").nth(1).and_then(|r| r.split('/').next()?.parse().ok()).unwrap();
    let (_, metrics) = get_on(port, "/metrics");
    let counter = |name: &str| {
        metrics.lines().find_map(|l| l.strip_prefix(&format!("{name} "))).and_then(|v| v.parse::<f64>().ok())
    };
    // At most a full queue (2,048) and the batches the exporter holds (2,048) are not counted yet.
    let dropped = counter("nagi_trace_spans_dropped_total").unwrap_or_else(|| panic!("{metrics}"));
    assert!((10_000.0 - 4_096.0..=10_000.0).contains(&dropped), "{dropped} dropped: {metrics}");
    assert_eq!(counter("nagi_trace_spans_exported_total"), Some(0.0), "{metrics}");
    let started = Instant::now();
    assert!(server.stop().success());
    assert!(started.elapsed() < Duration::from_secs(10), "the stop waited on the collector");

    let out = support::run_to_exit_with(&exe, &dir.join("other.db"), &["--otlp-endpoint", "localhost:4318"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--otlp-endpoint localhost:4318: not an http:// or https:// URL"), "{stderr}");
}

crate::on_every_backend_and_llvm_level!(
    a_request_is_one_trace_with_its_statements_as_children,
    job_attempts_and_actor_calls_are_spans,
    an_outbound_call_carries_the_trace_to_the_service_it_calls,
    a_stalled_collector_drops_spans_and_counts_them,
);
