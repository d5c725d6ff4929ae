//! Traces: an OpenTelemetry span per request, SQL statement, job attempt, actor call and outbound
//! call, exported over OTLP/HTTP (protobuf) to `--otlp-endpoint` (off by default), with W3C
//! Trace Context (`traceparent`) read from requests and sent on outbound calls. docs/http.md
//! ("Traces") lists every span's name and attributes.
//!
//! The messages are OpenTelemetry's (OTLP v1), written by [`otlp`] (and decoded in the tests by
//! `opentelemetry-proto`); what surrounds them is written for a service that must never wait on
//! its telemetry:
//!
//! - A span costs its code a clock read at each end and, when sampled, one push into a bounded
//!   queue under a short lock. Its names and attributes are made from the raw parts it kept (the
//!   route's template, the statement's text, the queue's name) by the exporter thread, off the
//!   request's path. With tracing off, a span is `None`: one branch.
//! - The exporter is a thread of its own that sends a batch when [`BATCH`] spans wait or
//!   [`DELAY`] has passed. A full queue drops the span and counts it (the log queue's rule); a
//!   batch the collector refuses, fails or does not take within [`EXPORT_TIMEOUT`] is dropped
//!   and counted too, so a stalled or absent collector costs a request nothing.
//! - Sampling is decided where a trace starts: a request with a valid `traceparent` follows its
//!   sampled flag (parent-based, as OpenTelemetry's default sampler), any other trace is sampled
//!   when its trace id falls within `--trace-sample-ratio`. Children follow their parent.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

mod otlp;

use otlp::{Attributes, Encoder, SpanHead};

/// Most spans waiting for the exporter; a span beyond it is dropped and counted (OpenTelemetry's
/// default `max_queue_size`).
const CAPACITY: usize = 2048;
/// Most spans in one export request (OpenTelemetry's default `max_export_batch_size`).
const BATCH: usize = 512;
/// Longest time a span waits for a batch to fill before it is sent anyway.
const DELAY: Duration = Duration::from_secs(1);
/// Longest time one export request may take; then its spans are dropped and counted.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// The W3C Trace Context header.
pub(crate) const TRACEPARENT: &str = "traceparent";

/// A span's identity as W3C Trace Context carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SpanContext {
    /// The trace's id, never 0.
    pub(crate) trace_id: u128,
    /// The span's id, never 0.
    pub(crate) span_id: u64,
    /// Whether the trace is recorded (the `sampled` flag).
    pub(crate) sampled: bool,
}

impl SpanContext {
    /// The `traceparent` header value that makes this span the parent of the receiver's.
    pub(crate) fn traceparent(&self) -> String {
        format!("00-{:032x}-{:016x}-{:02x}", self.trace_id, self.span_id, u8::from(self.sampled))
    }
}

/// Parses a `traceparent` header value (W3C Trace Context §3.2): version 00, or a later version
/// read as 00 (its extra fields after a `-` ignored); `None` for anything malformed, an all-zero
/// id or version `ff`.
pub(crate) fn parse_traceparent(value: &[u8]) -> Option<(u128, u64, bool)> {
    let text = std::str::from_utf8(value).ok()?;
    fn hex(field: &str, len: usize) -> Option<&str> {
        (field.len() == len && field.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))).then_some(field)
    }
    let version = hex(text.get(0..2)?, 2)?;
    let valid_length = match version {
        "00" => text.len() == 55,
        "ff" => false,
        _ => text.len() == 55 || text.as_bytes().get(55) == Some(&b'-'),
    };
    if !valid_length || text.as_bytes()[2] != b'-' || text.as_bytes()[35] != b'-' || text.as_bytes()[52] != b'-' {
        return None;
    }
    let trace_id = u128::from_str_radix(hex(&text[3..35], 32)?, 16).ok()?;
    let parent = u64::from_str_radix(hex(&text[36..52], 16)?, 16).ok()?;
    let flags = u8::from_str_radix(hex(&text[53..55], 2)?, 16).ok()?;
    (trace_id != 0 && parent != 0).then_some((trace_id, parent, flags & 1 == 1))
}

/// What a span stands for (OpenTelemetry's span kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A request the service answered.
    Server,
    /// A call the service made: a SQL statement, an outbound HTTP call.
    Client,
    /// A job attempt.
    Consumer,
    /// An actor call.
    Internal,
}

/// The raw parts a span's name and attributes are made from, by the exporter thread.
pub(crate) enum Detail {
    /// A request, once answered: its method, route template (none when no route took it), path,
    /// status and request id.
    Request { method: axum::http::Method, route: Option<Arc<str>>, path: Path, status: u16, request: u64 },
    /// A SQL statement: its text as the compiler gave it, source position prefix included.
    Statement { sql: String },
    /// A job attempt: the queue, the job's id and the attempt's number.
    Job { queue: &'static str, job: i64, attempt: i64 },
    /// A call of the actor named so.
    ActorCall { actor: &'static str },
    /// An outbound HTTP call: its method, URL without the query, and the answer's status once
    /// known.
    Outbound { method: String, url: String, status: Option<u16> },
}

/// A request's path as a span keeps it: copied, since a share of the request's URI would keep
/// the connection's read buffer from being reused until the span is exported (hyper would then
/// allocate a new one per request); most paths fit inline, without an allocation.
pub(crate) enum Path {
    /// A path of at most 62 bytes, in place.
    Inline { len: u8, bytes: [u8; 62] },
    /// A longer one.
    Heap(Box<str>),
}

impl Path {
    /// A copy of `path`.
    pub(crate) fn new(path: &str) -> Path {
        let mut bytes = [0u8; 62];
        match bytes.get_mut(..path.len()) {
            Some(inline) => {
                inline.copy_from_slice(path.as_bytes());
                Path::Inline { len: path.len() as u8, bytes }
            }
            None => Path::Heap(path.into()),
        }
    }

    /// The path's bytes: UTF-8, copied from a `str` whole.
    fn as_bytes(&self) -> &[u8] {
        match self {
            Path::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Path::Heap(path) => path.as_bytes(),
        }
    }
}

/// An open span. Dropping it ends it and, when sampled, queues it for the exporter; a span
/// dropped while its code unwinds (a trap, a failed statement) ends as an error.
pub(crate) struct Span {
    context: SpanContext,
    /// The parent span's id; 0 for a trace's root.
    parent: u64,
    kind: Kind,
    began: Instant,
    detail: Option<Detail>,
    error: Option<String>,
    /// Whether the span ends as an error when dropped while its thread unwinds.
    error_if_unwinding: bool,
}

impl Span {
    /// The span of a request, whose `traceparent` header (if any) is `incoming`; `None` when
    /// tracing is off.
    pub(crate) fn server(incoming: Option<&[u8]>) -> Option<Span> {
        if !on() {
            return None;
        }
        match incoming.and_then(parse_traceparent) {
            Some((trace_id, parent, sampled)) => Some(Span::open(trace_id, parent, sampled, Kind::Server)),
            None => Some(Span::root_of(Kind::Server)),
        }
    }

    /// The root span of a new trace (a job attempt); `None` when tracing is off.
    pub(crate) fn root(kind: Kind, detail: impl FnOnce() -> Detail) -> Option<Span> {
        if !on() {
            return None;
        }
        let mut span = Span::root_of(kind);
        if span.context.sampled {
            span.detail = Some(detail());
        }
        Some(span)
    }

    /// A span whose parent is `parent` (the running request's or job's span, `context::trace`);
    /// `None` when tracing is off or there is no parent. `detail` is made only for a sampled
    /// trace.
    pub(crate) fn child(parent: Option<SpanContext>, kind: Kind, detail: impl FnOnce() -> Detail) -> Option<Span> {
        if !on() {
            return None;
        }
        let parent = parent?;
        let mut span = Span::open(parent.trace_id, parent.span_id, parent.sampled, kind);
        if parent.sampled {
            span.detail = Some(detail());
        }
        Some(span)
    }

    /// The root span of a new trace, sampled by its trace id.
    fn root_of(kind: Kind) -> Span {
        let trace_id = fastrand::u128(1..);
        Span::open(trace_id, 0, sample(trace_id), kind)
    }

    /// A span of `kind` in trace `trace_id` under `parent` (0: none), begun now; its detail is
    /// set once known.
    fn open(trace_id: u128, parent: u64, sampled: bool, kind: Kind) -> Span {
        Span {
            context: SpanContext { trace_id, span_id: fastrand::u64(1..), sampled },
            parent,
            kind,
            began: Instant::now(),
            detail: None,
            error: None,
            error_if_unwinding: true,
        }
    }

    /// The span's identity: what its children and outbound calls carry.
    pub(crate) fn context(&self) -> SpanContext {
        self.context
    }

    /// Sets what the span stands for, once known (a request's status); ignored when unsampled.
    pub(crate) fn set_detail(&mut self, detail: impl FnOnce() -> Detail) {
        if self.context.sampled {
            self.detail = Some(detail());
        }
    }

    /// Sets the answer's status of an outbound call.
    pub(crate) fn set_status(&mut self, status: u16) {
        if let Some(Detail::Outbound { status: known, .. }) = &mut self.detail {
            *known = Some(status);
        }
    }

    /// Ends the span as an error, saying why.
    pub(crate) fn fail(&mut self, why: impl FnOnce() -> String) {
        if self.context.sampled {
            self.error = Some(why());
        }
    }

    /// Ends the span without an error, even if it is dropped while unwinding.
    pub(crate) fn succeed(mut self) {
        self.error = None;
        // While unwinding, a span dropped without this is an error: this one finished first.
        self.error_if_unwinding = false;
        drop(self);
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if !self.context.sampled {
            return;
        }
        let Some(exporter) = EXPORTER.get() else { return };
        let Some(detail) = self.detail.take() else { return };
        let ended = Instant::now();
        let unwinding = self.error_if_unwinding && std::thread::panicking();
        let error = self.error.take().or_else(|| unwinding.then(|| "the code trapped".to_owned()));
        exporter.push(Finished {
            context: self.context,
            parent: self.parent,
            kind: self.kind,
            began: self.began,
            ended,
            detail,
            error,
        });
    }
}

/// A span that has ended, waiting for the exporter; its times are turned into Unix time there
/// (one monotonic clock read at each end of a span, the wall clock read once per process).
struct Finished {
    context: SpanContext,
    parent: u64,
    kind: Kind,
    began: Instant,
    ended: Instant,
    detail: Detail,
    error: Option<String>,
}

static ON: AtomicBool = AtomicBool::new(false);
static EXPORTER: OnceLock<Exporter> = OnceLock::new();
/// The sampling threshold: a root is sampled when its trace id's low 64 bits are below it
/// (`u64::MAX` samples every trace).
static THRESHOLD: AtomicU64 = AtomicU64::new(u64::MAX);

/// Whether spans are made.
pub(crate) fn on() -> bool {
    ON.load(Ordering::Acquire)
}

/// Whether a trace rooted here with `trace_id` is recorded.
fn sample(trace_id: u128) -> bool {
    let threshold = THRESHOLD.load(Ordering::Relaxed);
    threshold == u64::MAX || (trace_id as u64) < threshold
}

/// Nanoseconds since the Unix epoch at `at`, from the wall clock and the monotonic clock read
/// together once (a span's times stay consistent even if the wall clock is set meanwhile).
fn unix_nanos(at: Instant) -> u64 {
    static ANCHOR: OnceLock<(Instant, u64)> = OnceLock::new();
    let (instant, unix) = *ANCHOR.get_or_init(|| {
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
        (Instant::now(), u64::try_from(now.as_nanos()).unwrap_or(u64::MAX))
    });
    match at.checked_duration_since(instant) {
        Some(after) => unix.saturating_add(u64::try_from(after.as_nanos()).unwrap_or(u64::MAX)),
        None => unix.saturating_sub(u64::try_from(instant.duration_since(at).as_nanos()).unwrap_or(u64::MAX)),
    }
}

/// The exporter's queue and its counts.
struct Exporter {
    queue: Mutex<Queue>,
    /// Wakes the exporter thread: a batch is full, or a flush is asked for.
    ready: Condvar,
    /// Wakes a flush's caller: the exporter has sent what was queued when it asked.
    flushed: Condvar,
    dropped: AtomicU64,
    exported: AtomicU64,
}

#[derive(Default)]
struct Queue {
    spans: Vec<Finished>,
    /// How many flushes were asked for, and how many the exporter has finished.
    flushes_asked: u64,
    flushes_done: u64,
}

impl Exporter {
    fn push(&self, span: Finished) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        if queue.spans.len() >= CAPACITY {
            drop(queue);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        queue.spans.push(span);
        let full = queue.spans.len() == BATCH;
        drop(queue);
        if full {
            self.ready.notify_one();
        }
    }
}

/// Spans dropped because the queue was full or the collector did not take them, when tracing is
/// on.
pub(crate) fn dropped() -> Option<u64> {
    EXPORTER.get().map(|e| e.dropped.load(Ordering::Relaxed))
}

/// Spans the collector took, when tracing is on.
pub(crate) fn exported() -> Option<u64> {
    EXPORTER.get().map(|e| e.exported.load(Ordering::Relaxed))
}

/// Starts the exporter (once per process) sending to the OTLP/HTTP `endpoint` (a base URL such
/// as `http://localhost:4318`, to which `/v1/traces` is added unless it ends so), with `service`
/// as the `service.name` resource attribute and `ratio` of new traces sampled. The error says
/// what is wrong with the endpoint.
pub(crate) fn install(endpoint: &str, ratio: f64, service: &str) -> Result<(), String> {
    let url = export_url(endpoint)?;
    THRESHOLD.store(if ratio >= 1.0 { u64::MAX } else { (ratio.max(0.0) * 2f64.powi(64)) as u64 }, Ordering::Relaxed);
    if EXPORTER.get().is_some() {
        return Ok(());
    }
    let exporter = Exporter {
        queue: Mutex::new(Queue { spans: Vec::with_capacity(CAPACITY), ..Queue::default() }),
        ready: Condvar::new(),
        flushed: Condvar::new(),
        dropped: AtomicU64::new(0),
        exported: AtomicU64::new(0),
    };
    if EXPORTER.set(exporter).is_err() {
        return Ok(());
    }
    let service = service.to_owned();
    std::thread::Builder::new()
        .name("nagi-trace-exporter".to_owned())
        .spawn(move || export_loop(&url, &service))
        .map_err(|e| format!("cannot start the trace exporter: {e}"))?;
    ON.store(true, Ordering::Release);
    Ok(())
}

/// The URL spans are posted to, from `--otlp-endpoint`.
fn export_url(endpoint: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(endpoint)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
        .ok_or_else(|| format!("--otlp-endpoint {endpoint}: not an http:// or https:// URL"))?;
    if url.path().ends_with("/v1/traces") {
        return Ok(url);
    }
    let base = url.as_str().trim_end_matches('/');
    reqwest::Url::parse(&format!("{base}/v1/traces")).map_err(|e| format!("--otlp-endpoint {endpoint}: {e}"))
}

/// Sends what is queued now and waits until it has been sent (or dropped), at most `deadline`:
/// a stopping service's last spans.
pub(crate) fn flush(deadline: Duration) {
    let Some(exporter) = EXPORTER.get() else { return };
    let mut queue = exporter.queue.lock().unwrap_or_else(PoisonError::into_inner);
    queue.flushes_asked += 1;
    let asked = queue.flushes_asked;
    exporter.ready.notify_one();
    let _ = exporter
        .flushed
        .wait_timeout_while(queue, deadline, |q| q.flushes_done < asked)
        .unwrap_or_else(PoisonError::into_inner);
}

/// The exporter thread: waits for a full batch, the delay or a flush, then posts what waits in
/// batches; forever (it ends with the process).
fn export_loop(url: &reqwest::Url, service: &str) {
    let Some(exporter) = EXPORTER.get() else { return };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return tracing::error!(target: "nagi::traces", "cannot start the trace exporter: {e}"),
    };
    let client = match reqwest::Client::builder().timeout(EXPORT_TIMEOUT).build() {
        Ok(client) => client,
        Err(e) => return tracing::error!(target: "nagi::traces", "cannot start the trace exporter: {e}"),
    };
    let mut encoder = Encoder::new(service);
    // The name of the span being written.
    let mut name = String::new();
    // The drops already reported in the log, so that a failing collector is one warning per
    // change, not one per batch.
    let mut reported = 0;
    // The queue's vector and this one change places at each batch, so neither grows again.
    let mut spans: Vec<Finished> = Vec::with_capacity(CAPACITY);
    loop {
        let flush = {
            let queue = exporter.queue.lock().unwrap_or_else(PoisonError::into_inner);
            let (mut queue, _) = exporter
                .ready
                .wait_timeout_while(queue, DELAY, |q| q.spans.len() < BATCH && q.flushes_done == q.flushes_asked)
                .unwrap_or_else(PoisonError::into_inner);
            std::mem::swap(&mut queue.spans, &mut spans);
            queue.flushes_asked
        };
        for batch in spans.chunks(BATCH) {
            encoder.begin();
            for span in batch {
                encode(&mut encoder, span, &mut name);
            }
            let sent = runtime.block_on(post(&client, url, encoder.finish()));
            let count = batch.len() as u64;
            match sent {
                Ok(()) => exporter.exported.fetch_add(count, Ordering::Relaxed),
                Err(why) => {
                    tracing::debug!(target: "nagi::traces", "{count} spans not exported: {why}");
                    exporter.dropped.fetch_add(count, Ordering::Relaxed)
                }
            };
        }
        spans.clear();
        let dropped = exporter.dropped.load(Ordering::Relaxed);
        if dropped > reported {
            tracing::warn!(
                target: "nagi::traces",
                "{} spans dropped ({dropped} in all): the trace queue was full or the collector at {url} did not take them",
                dropped - reported
            );
            reported = dropped;
        }
        let mut queue = exporter.queue.lock().unwrap_or_else(PoisonError::into_inner);
        if queue.flushes_done < flush {
            queue.flushes_done = flush;
            exporter.flushed.notify_all();
        }
    }
}

/// Posts one encoded export request; the error says why it was not taken.
async fn post(client: &reqwest::Client, url: &reqwest::Url, body: Vec<u8>) -> Result<(), String> {
    let answer = client
        .post(url.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/x-protobuf")
        .body(body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = answer.status();
    // The body (an `ExportTraceServiceResponse`) is read so the connection can be kept.
    let _ = answer.bytes().await;
    if status.is_success() { Ok(()) } else { Err(format!("the collector answered {status}")) }
}

/// Writes `span` into `encoder`: its name and attributes from its detail (OpenTelemetry's
/// semantic conventions for HTTP, databases and messaging), `name` the buffer its name is made in.
fn encode(encoder: &mut Encoder, span: &Finished, name: &mut String) {
    name.clear();
    let server_error = name_of(&span.detail, name);
    let kind = match span.kind {
        Kind::Internal => 1,
        Kind::Server => 2,
        Kind::Client => 3,
        Kind::Consumer => 5,
    };
    let head = SpanHead {
        trace_id: span.context.trace_id,
        span_id: span.context.span_id,
        parent: span.parent,
        name,
        kind,
        start_unix_ns: unix_nanos(span.began),
        end_unix_ns: unix_nanos(span.ended),
        sampled: span.context.sampled,
        error: span.error.as_deref().or(server_error.then_some("")),
    };
    encoder.span(&head, |attributes| describe(&span.detail, attributes));
}

/// A statement's source position (`/*nagi FILE:LINE*/ `, from the compiler) and its text after
/// it: the one reading of that prefix (metrics label statements by it too).
pub(crate) fn split_statement(sql: &str) -> (Option<&str>, &str) {
    let Some(rest) = sql.strip_prefix("/*nagi ") else { return (None, sql) };
    // A position has no `*`: the first one ends it.
    match rest.find('*').filter(|&end| rest[end..].starts_with("*/")) {
        Some(end) => {
            let query = &rest[end + 2..];
            (Some(&rest[..end]), query.strip_prefix(' ').unwrap_or(query))
        }
        None => (None, sql),
    }
}

/// A statement's operation: its first word in upper case (borrowed when written so).
fn operation(query: &str) -> std::borrow::Cow<'_, str> {
    let word = query.split_ascii_whitespace().next().unwrap_or("");
    if word.bytes().any(|b| b.is_ascii_lowercase()) { word.to_ascii_uppercase().into() } else { word.into() }
}

/// Writes a detail's span name into `name`; whether its status alone makes it an error (a 5xx
/// answer of the service's own; a 4xx or 5xx answer to an outbound call).
fn name_of(detail: &Detail, name: &mut String) -> bool {
    use std::fmt::Write as _;
    match detail {
        Detail::Request { method, route, status, .. } => {
            name.push_str(method.as_str());
            if let Some(route) = route {
                name.push(' ');
                name.push_str(route);
            }
            *status >= 500
        }
        Detail::Statement { sql } => {
            // The compiler's statements are named by their source position; the runtime's own
            // (a queue's bookkeeping) by their operation.
            match split_statement(sql) {
                (Some(position), _) => name.push_str(position),
                (None, query) => name.push_str(&operation(query)),
            }
            false
        }
        Detail::Job { queue, .. } => {
            let _ = write!(name, "process {queue}");
            false
        }
        Detail::ActorCall { actor } => {
            let _ = write!(name, "call {actor}");
            false
        }
        Detail::Outbound { method, status, .. } => {
            name.push_str(method);
            status.is_some_and(|s| s >= 400)
        }
    }
}

/// Writes a detail's attributes.
fn describe(detail: &Detail, attributes: &mut Attributes<'_>) {
    match detail {
        Detail::Request { method, route, path, status, request } => {
            attributes.text("http.request.method", method.as_str());
            if let Some(route) = route {
                attributes.text("http.route", route);
            }
            attributes.utf8("url.path", path.as_bytes());
            attributes.text("url.scheme", "http");
            attributes.int("http.response.status_code", i64::from(*status));
            attributes.int("nagi.request.id", i64::try_from(*request).unwrap_or(i64::MAX));
            if *status >= 500 {
                attributes.text("error.type", &status.to_string());
            }
        }
        // The span's name is the statement's source position, so no `code.*` attributes repeat
        // it; `db.operation.name` is left to the query text (both optional in the conventions,
        // and a third of the span's cost).
        Detail::Statement { sql } => {
            attributes.text("db.system.name", "sqlite");
            attributes.text("db.query.text", split_statement(sql).1);
        }
        Detail::Job { queue, job, attempt } => {
            attributes.text("messaging.system", "nagi");
            attributes.text("messaging.operation.name", "process");
            attributes.text("messaging.destination.name", queue);
            attributes.text("messaging.message.id", &job.to_string());
            attributes.int("nagi.job.attempt", *attempt);
        }
        Detail::ActorCall { actor } => attributes.text("nagi.actor", actor),
        Detail::Outbound { method, url, status } => {
            attributes.text("http.request.method", method);
            attributes.text("url.full", url);
            if let Ok(parsed) = reqwest::Url::parse(url) {
                attributes.text("server.address", parsed.host_str().unwrap_or(""));
                if let Some(port) = parsed.port_or_known_default() {
                    attributes.int("server.port", i64::from(port));
                }
            }
            if let Some(status) = status {
                attributes.int("http.response.status_code", i64::from(*status));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_read_as_w3c_trace_context_writes_it() {
        let valid = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(parse_traceparent(valid), Some((0x4bf92f3577b34da6a3ce929d0e0e4736, 0x00f067aa0ba902b7, true)));
        let unsampled = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
        assert_eq!(parse_traceparent(unsampled).map(|t| t.2), Some(false));
        // A later version may carry more fields after a dash.
        let later = b"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes";
        assert!(parse_traceparent(later).is_some());
        for bad in [
            &b"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"[..],
            b"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            b"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            b"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            b"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            b"",
        ] {
            assert_eq!(parse_traceparent(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_path_is_kept_inline_when_short_and_on_the_heap_when_long() {
        for text in ["/", "/users/ünï", &"a".repeat(62), &"b".repeat(63)] {
            let path = Path::new(text);
            assert_eq!(path.as_bytes(), text.as_bytes());
            assert_eq!(matches!(path, Path::Inline { .. }), text.len() <= 62);
        }
    }

    #[test]
    fn a_context_writes_the_traceparent_it_reads() {
        let context = SpanContext { trace_id: 0xabc, span_id: 0x12, sampled: true };
        let header = context.traceparent();
        assert_eq!(header, "00-00000000000000000000000000000abc-0000000000000012-01");
        assert_eq!(parse_traceparent(header.as_bytes()), Some((0xabc, 0x12, true)));
    }

    #[test]
    fn the_export_url_is_the_endpoint_with_the_traces_path() {
        assert_eq!(export_url("http://localhost:4318").unwrap().as_str(), "http://localhost:4318/v1/traces");
        assert_eq!(export_url("http://collector/otlp/").unwrap().as_str(), "http://collector/otlp/v1/traces");
        assert_eq!(export_url("https://c:4318/v1/traces").unwrap().as_str(), "https://c:4318/v1/traces");
        assert!(export_url("localhost:4318").is_err());
        assert!(export_url("ftp://c/").is_err());
    }

    #[test]
    fn a_statement_span_is_named_by_its_source_position_without_parameter_values() {
        let statement = Detail::Statement { sql: "/*nagi users.nagi:17*/ SELECT * FROM users WHERE id = ?".to_owned() };
        let mut name = String::new();
        assert!(!name_of(&statement, &mut name));
        assert_eq!(name, "users.nagi:17");
        assert_eq!(split_statement("/*nagi users.nagi:17*/ SELECT 1"), (Some("users.nagi:17"), "SELECT 1"));
        assert_eq!(split_statement("SELECT 1"), (None, "SELECT 1"));
        assert_eq!(split_statement("/*nagi unclosed SELECT 1"), (None, "/*nagi unclosed SELECT 1"));
        let mut name = String::new();
        name_of(&Detail::Statement { sql: "update nagi_jobs SET state = 'done'".to_owned() }, &mut name);
        assert_eq!(name, "UPDATE", "the runtime's own statements are named by their operation");
    }
}
