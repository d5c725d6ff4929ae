//! A service's metrics in Prometheus's text exposition format (0.0.4), through the `metrics`
//! facade and `metrics-exporter-prometheus`, served on a listener of their own
//! (`--metrics-listen ADDR`, off by default, so that they are never public by accident) at
//! `GET /metrics`. docs/http.md ("Metrics") lists every name and what each label may hold.
//!
//! Labels hold only what the program declares (a route's method and path template, never the
//! request's path) and status classes, so every series is bounded by the program's size. With
//! metrics off nothing is recorded: a route's handles are `None`, one branch per request.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use metrics::{Counter, Gauge, Histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// `http_server_request_duration_seconds`: how long requests took, by method, route template and
/// status class (OpenTelemetry's `http.server.request.duration`).
pub(crate) const REQUEST_DURATION: &str = "http_server_request_duration_seconds";
/// `http_server_active_requests`: requests being answered now.
const ACTIVE_REQUESTS: &str = "http_server_active_requests";
/// `http_server_open_connections`: connections open now.
const OPEN_CONNECTIONS: &str = "http_server_open_connections";
/// `http_server_rejected_connections_total`: connections refused at `--max-connections`.
const REJECTED_CONNECTIONS: &str = "http_server_rejected_connections_total";
/// `http_server_refused_total`: requests refused by the server's own limits, by reason.
const REFUSED: &str = "http_server_refused_total";
/// `nagi_supervisor_restarts_total` and `nagi_supervisor_give_ups_total`, by supervisor.
const RESTARTS: &str = "nagi_supervisor_restarts_total";
const GIVE_UPS: &str = "nagi_supervisor_give_ups_total";
/// `nagi_log_records_dropped_total`: log records the bounded log queue dropped.
const LOG_DROPPED: &str = "nagi_log_records_dropped_total";
/// `nagi_trace_spans_dropped_total` and `nagi_trace_spans_exported_total`: spans the trace
/// exporter dropped (a full queue, a collector that failed or did not answer) and sent.
const SPANS_DROPPED: &str = "nagi_trace_spans_dropped_total";
const SPANS_EXPORTED: &str = "nagi_trace_spans_exported_total";
/// Per actor name (`actor` label): messages waiting in the mailboxes of the live actors, calls
/// and sends made; read at each scrape. Messages sent to stopped actors, and tasks alive.
const MAILBOX_DEPTH: &str = "nagi_actor_mailbox_depth";
const ACTOR_CALLS: &str = "nagi_actor_calls_total";
const ACTOR_SENDS: &str = "nagi_actor_sends_total";
const DEAD_LETTERS: &str = "nagi_actor_dead_letters_total";
const TASKS_ALIVE: &str = "nagi_tasks_alive";
/// `process_resident_memory_bytes` and `process_open_fds`: the process's, at each scrape.
const RSS: &str = "process_resident_memory_bytes";
const OPEN_FDS: &str = "process_open_fds";

/// Per job queue (`queue` label; a scheduled job is a queue named after its function): jobs
/// waiting and running, the age of the oldest waiting one (read from the database at each
/// scrape), and what attempts ended in since the start.
const QUEUE_JOBS: &str = "nagi_queue_jobs";
const QUEUE_OLDEST: &str = "nagi_queue_oldest_queued_age_seconds";
const QUEUE_COMPLETED: &str = "nagi_queue_jobs_completed_total";
const QUEUE_RETRIED: &str = "nagi_queue_jobs_retried_total";
const QUEUE_DEAD: &str = "nagi_queue_jobs_dead_lettered_total";
const QUEUE_LAST_COMPLETED: &str = "nagi_queue_last_completed_timestamp_seconds";

/// `db_statement_duration_seconds`: how long statements took on the database thread, by the
/// statement's source position (`users.nagi:17`; OpenTelemetry's `db.client.operation.duration`).
const STATEMENT_DURATION: &str = "db_statement_duration_seconds";
/// `db_statement_rows_total`: rows queries returned, by the statement's source position.
const STATEMENT_ROWS: &str = "db_statement_rows_total";
/// `db_wait_seconds`: how long statements waited for the database thread.
const DB_WAIT: &str = "db_wait_seconds";
/// `db_transactions_total`: request and job transactions by outcome.
const TRANSACTIONS: &str = "db_transactions_total";
/// The statement label of a statement the compiler did not name: the runtime's own (queues,
/// schedules) and hand-written Low's.
const OTHER_STATEMENT: &str = "(other)";
/// OpenTelemetry's advised buckets for `db.client.operation.duration`, in seconds.
const DB_BUCKETS: [f64; 9] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0];

/// OpenTelemetry's advised buckets for `http.server.request.duration`, in seconds.
const DURATION_BUCKETS: [f64; 14] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];

/// The status classes a request's duration is labelled with, by the status's first digit.
const STATUS_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// How often histogram samples are folded into their buckets, which bounds what they hold.
const UPKEEP: std::time::Duration = std::time::Duration::from_secs(1);

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
static ON: AtomicBool = AtomicBool::new(false);

/// Installs the process's recorder (once); the error says why it could not be.
pub(crate) fn install() -> Result<(), String> {
    if HANDLE.get().is_some() {
        return Ok(());
    }
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(REQUEST_DURATION.to_owned()), &DURATION_BUCKETS)
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(STATEMENT_DURATION.to_owned()), &DB_BUCKETS))
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(DB_WAIT.to_owned()), &DB_BUCKETS))
        .and_then(PrometheusBuilder::install_recorder)
        .map_err(|e| format!("cannot start the metrics: {e}"))?;
    describe();
    let _ = HANDLE.set(handle);
    ON.store(true, Ordering::Release);
    Ok(())
}

/// Whether metrics are recorded.
pub(crate) fn on() -> bool {
    ON.load(Ordering::Acquire)
}

/// The `# HELP` line of every metric, which validators ask for.
fn describe() {
    metrics::describe_histogram!(
        REQUEST_DURATION,
        metrics::Unit::Seconds,
        "How long requests took, by method, route template (never the path) and status class."
    );
    metrics::describe_gauge!(ACTIVE_REQUESTS, "Requests being answered now.");
    metrics::describe_gauge!(OPEN_CONNECTIONS, "HTTP connections open now.");
    metrics::describe_counter!(REJECTED_CONNECTIONS, "Connections refused because --max-connections were open.");
    metrics::describe_counter!(
        REFUSED,
        "Requests the server's limits refused, by reason: body_too_large (413), head_timeout (408), overloaded (503, memory), timeout (503)."
    );
    metrics::describe_counter!(RESTARTS, "Crashed children the supervisor restarted.");
    metrics::describe_counter!(
        GIVE_UPS,
        "Times the supervisor gave up (more restarts than its intensity within its period)."
    );
    metrics::describe_counter!(LOG_DROPPED, "Log records dropped because the bounded log queue was full.");
    metrics::describe_gauge!(RSS, metrics::Unit::Bytes, "Resident memory of the process.");
    metrics::describe_counter!(
        SPANS_DROPPED,
        "Spans the trace exporter dropped: its queue was full, or the collector failed or did not answer in time."
    );
    metrics::describe_counter!(SPANS_EXPORTED, "Spans the collector took.");
    metrics::describe_histogram!(
        STATEMENT_DURATION,
        metrics::Unit::Seconds,
        "How long statements took on the database thread, by the statement's source position."
    );
    metrics::describe_histogram!(
        DB_WAIT,
        metrics::Unit::Seconds,
        "How long statements waited for the database thread."
    );
    metrics::describe_counter!(STATEMENT_ROWS, "Rows queries returned, by the statement's source position.");
    metrics::describe_counter!(TRANSACTIONS, "Request and job transactions, by outcome: committed or rolled_back.");
    metrics::describe_gauge!(QUEUE_JOBS, "Jobs of the queue by state: queued (waiting or backing off) or running.");
    metrics::describe_gauge!(
        QUEUE_OLDEST,
        metrics::Unit::Seconds,
        "Age of the queue's oldest queued job; 0 when none waits."
    );
    metrics::describe_counter!(QUEUE_COMPLETED, "Jobs of the queue whose attempt succeeded.");
    metrics::describe_counter!(QUEUE_RETRIED, "Failed attempts of the queue's jobs that are queued again.");
    metrics::describe_counter!(QUEUE_DEAD, "Jobs of the queue moved to the dead letters after their last attempt.");
    metrics::describe_gauge!(
        QUEUE_LAST_COMPLETED,
        metrics::Unit::Seconds,
        "When a job of the queue last succeeded, in Unix seconds."
    );
    metrics::describe_gauge!(OPEN_FDS, "File descriptors the process holds open.");
    metrics::describe_gauge!(MAILBOX_DEPTH, "Messages waiting in the mailboxes of the live actors of this name.");
    metrics::describe_counter!(ACTOR_CALLS, "Calls made to actors of this name (each waits for its answer).");
    metrics::describe_counter!(ACTOR_SENDS, "Messages sent to actors of this name without waiting.");
    metrics::describe_counter!(DEAD_LETTERS, "Messages sent to actors that had stopped (dead letters).");
    metrics::describe_gauge!(TASKS_ALIVE, "Tasks the program's scopes spawned that have not finished.");
}

/// The exposition of every metric now, after the values read at a scrape (the log queue's drops,
/// the process's memory and descriptors) are brought up to date.
pub(crate) fn render() -> String {
    if let Some(dropped) = crate::logging::dropped_records() {
        metrics::counter!(LOG_DROPPED).absolute(dropped);
    }
    if let Some(dropped) = crate::traces::dropped() {
        metrics::counter!(SPANS_DROPPED).absolute(dropped);
    }
    if let Some(exported) = crate::traces::exported() {
        metrics::counter!(SPANS_EXPORTED).absolute(exported);
    }
    crate::actors::with_counts(|actors| {
        for actor in actors {
            metrics::gauge!(MAILBOX_DEPTH, "actor" => actor.name).set(actor.depth() as f64);
            metrics::counter!(ACTOR_CALLS, "actor" => actor.name).absolute(actor.calls.load(Ordering::Relaxed));
            metrics::counter!(ACTOR_SENDS, "actor" => actor.name).absolute(actor.sends.load(Ordering::Relaxed));
        }
    });
    metrics::counter!(DEAD_LETTERS).absolute(crate::actors::dead_letters());
    metrics::gauge!(ACTIVE_REQUESTS).set(ACTIVE.load(Ordering::Relaxed) as f64);
    metrics::gauge!(TASKS_ALIVE).set(crate::tasks::alive() as f64);
    if let Some(rss) = resident_bytes() {
        metrics::gauge!(RSS).set(rss as f64);
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        metrics::gauge!(OPEN_FDS).set(fds.count() as f64);
    }
    flush_accumulated();
    HANDLE.get().map(PrometheusHandle::render).unwrap_or_default()
}

/// The process's resident memory in bytes (Linux's `/proc/self/statm`, in pages).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).unwrap_or(4096))
}

/// Why the server refused a request itself (a label of `http_server_refused_total`).
#[derive(Clone, Copy)]
pub(crate) enum Refusal {
    /// 413: a body over `--body-limit`.
    BodyTooLarge,
    /// 408: a head that did not arrive within `--header-timeout-ms`.
    HeadTimeout,
    /// 503: a body or an answer that did not fit in `--memory-limit`.
    Overloaded,
    /// 503: a request that took longer than `--timeout-ms`.
    Timeout,
}

/// Counts a refusal, when metrics are on (a rare path: the handle is looked up each time).
pub(crate) fn refused(reason: Refusal) {
    if on() {
        let reason = match reason {
            Refusal::BodyTooLarge => "body_too_large",
            Refusal::HeadTimeout => "head_timeout",
            Refusal::Overloaded => "overloaded",
            Refusal::Timeout => "timeout",
        };
        metrics::counter!(REFUSED, "reason" => reason).increment(1);
    }
}

/// Counts a supervisor's restart of a crashed child (`restart`) or its giving up, when metrics
/// are on (rare events: the handle is looked up each time).
pub(crate) fn supervisor_event(supervisor: &'static str, restart: bool) {
    if on() {
        metrics::counter!(if restart { RESTARTS } else { GIVE_UPS }, "supervisor" => supervisor).increment(1);
    }
}

/// The request metrics of one route, or of requests that matched none (an empty template).
pub(crate) struct RouteMetrics {
    durations: [Arc<Accumulated>; 5],
}

impl RouteMetrics {
    /// The handles of `method` `template`'s series; `None` when metrics are off.
    pub(crate) fn new(method: &str, template: &str) -> Option<RouteMetrics> {
        if !on() {
            return None;
        }
        let durations = STATUS_CLASSES.map(|class| {
            let handle = metrics::histogram!(REQUEST_DURATION, "method" => method.to_owned(), "route" => template.to_owned(), "status_class" => class);
            Accumulated::new(handle, &DURATION_BUCKETS)
        });
        Some(RouteMetrics { durations })
    }

    /// Records a request answered with `status` after `seconds`.
    pub(crate) fn record(&self, status: u16, seconds: f64) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.durations[class].record(seconds);
    }
}

/// Requests being answered now, counted by the server as two plain atomic steps per request and
/// turned into `http_server_active_requests` at each scrape (a gauge's own steps are a
/// compare-and-swap loop on a float).
static ACTIVE: AtomicI64 = AtomicI64::new(0);

/// The server-wide handles: requests in flight, connections open and refused.
pub(crate) struct ServerMetrics {
    pub(crate) open_connections: Gauge,
    pub(crate) rejected_connections: Counter,
}

impl ServerMetrics {
    /// The handles; `None` when metrics are off.
    pub(crate) fn new() -> Option<ServerMetrics> {
        on().then(|| ServerMetrics {
            open_connections: metrics::gauge!(OPEN_CONNECTIONS),
            rejected_connections: metrics::counter!(REJECTED_CONNECTIONS),
        })
    }

    /// A request has begun.
    pub(crate) fn request_began(&self) {
        ACTIVE.fetch_add(1, Ordering::Relaxed);
    }

    /// A request has ended.
    pub(crate) fn request_ended(&self) {
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The source position the compiler put at the start of a statement's text (`/*nagi FILE:LINE*/
/// SQL`, docs/http.md "Metrics"), or `(other)`.
pub(crate) fn statement_label(sql: &str) -> &str {
    crate::traces::split_statement(sql).0.unwrap_or(OTHER_STATEMENT)
}

/// Records `count` samples of bucket `at` of `bounds` whose sum is `sum` into `handle`, as that
/// many samples at their mean (which lies in the bucket: the bucket counts and the sum stay
/// exact).
fn hand_over(handle: &Histogram, bounds: &[f64], at: usize, count: u64, sum: f64) {
    if count == 0 {
        return;
    }
    // Rounding may put the mean a hair outside its bucket; it is kept inside.
    let mut mean = sum / count as f64;
    if let Some(upper) = bounds.get(at) {
        mean = mean.min(*upper);
    }
    if let Some(lower) = at.checked_sub(1).and_then(|below| bounds.get(below)) {
        mean = mean.max(lower.next_up());
    }
    handle.record_many(mean, usize::try_from(count).unwrap_or(usize::MAX));
}

/// A histogram recorded from any thread into per-bucket atomic counts and sums (two relaxed
/// atomic additions a sample), handed to the exporter at each scrape and each upkeep: the
/// exporter's own histogram keeps every raw sample until then, at an allocation-backed queue
/// push and an epoch pin per sample. A bucket's samples are handed over as that many samples at
/// their mean, which lies in the bucket, so the exported bucket counts, count and sum are
/// exactly those of the samples.
struct Accumulated {
    handle: Histogram,
    bounds: &'static [f64],
    counts: Vec<AtomicU64>,
    /// Sums in nanoseconds (the samples are durations): integers, so they add atomically.
    sums: Vec<AtomicU64>,
}

impl Accumulated {
    /// A histogram handed to the exporter with every other ([`flush_accumulated`]) while it
    /// lives.
    fn new(handle: Histogram, bounds: &'static [f64]) -> Arc<Accumulated> {
        let zeros = || (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        let accumulated = Arc::new(Accumulated { handle, bounds, counts: zeros(), sums: zeros() });
        ACCUMULATED.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::downgrade(&accumulated));
        accumulated
    }

    fn record(&self, seconds: f64) {
        let at = self.bounds.partition_point(|bound| *bound < seconds);
        self.counts[at].fetch_add(1, Ordering::Relaxed);
        self.sums[at].fetch_add((seconds * 1e9) as u64, Ordering::Relaxed);
    }

    /// Hands what was recorded to the exporter. A sample recorded meanwhile may have its count
    /// handed over now and its duration at the next hand-over (or the reverse): totals stay
    /// exact, and the bucket's mean is kept within the bucket.
    fn flush(&self) {
        for at in 0..self.counts.len() {
            let count = self.counts[at].swap(0, Ordering::Relaxed);
            if count > 0 {
                let sum = self.sums[at].swap(0, Ordering::Relaxed) as f64 / 1e9;
                hand_over(&self.handle, self.bounds, at, count, sum);
            }
        }
    }
}

/// Every accumulated histogram (requests' and statements' durations, statements' waits), handed
/// to the exporter before each scrape and at each upkeep; one that is gone (with its route table
/// or its database) leaves a dead entry, swept then.
static ACCUMULATED: Mutex<Vec<Weak<Accumulated>>> = Mutex::new(Vec::new());

/// Hands every accumulated histogram to the exporter.
fn flush_accumulated() {
    let mut all = ACCUMULATED.lock().unwrap_or_else(PoisonError::into_inner);
    all.retain(|histogram| match histogram.upgrade() {
        Some(histogram) => {
            histogram.flush();
            true
        }
        None => false,
    });
}

/// One statement's metrics: its duration and rows, by its source position.
pub(crate) struct StatementMetrics {
    duration: Arc<Accumulated>,
    rows: Counter,
}

impl StatementMetrics {
    /// The handles of statement `sql`, labelled by its source position (or `(other)`).
    pub(crate) fn new(sql: &str) -> StatementMetrics {
        let label = statement_label(sql).to_owned();
        StatementMetrics {
            duration: Accumulated::new(
                metrics::histogram!(STATEMENT_DURATION, "statement" => label.clone()),
                &DB_BUCKETS,
            ),
            rows: metrics::counter!(STATEMENT_ROWS, "statement" => label),
        }
    }
}

/// The database thread's metrics beside each statement's own ([`StatementMetrics`], which the
/// thread keeps with the statement).
pub(crate) struct DbMetrics {
    wait: Arc<Accumulated>,
    committed: Counter,
    rolled_back: Counter,
}

impl DbMetrics {
    /// The handles; `None` when metrics are off.
    pub(crate) fn new() -> Option<DbMetrics> {
        on().then(|| DbMetrics {
            wait: Accumulated::new(metrics::histogram!(DB_WAIT), &DB_BUCKETS),
            committed: metrics::counter!(TRANSACTIONS, "outcome" => "committed"),
            rolled_back: metrics::counter!(TRANSACTIONS, "outcome" => "rolled_back"),
        })
    }

    /// A statement whose metrics are `statement` that waited `waited` for the thread, then took
    /// `took` and, for a query, returned `rows`.
    pub(crate) fn statement(
        &self,
        statement: &StatementMetrics,
        waited: std::time::Duration,
        took: std::time::Duration,
        rows: Option<u64>,
    ) {
        self.wait.record(waited.as_secs_f64());
        statement.duration.record(took.as_secs_f64());
        if let Some(rows) = rows {
            statement.rows.increment(rows);
        }
    }

    /// A transaction ended, committed or not.
    pub(crate) fn transaction(&self, committed: bool) {
        if committed { &self.committed } else { &self.rolled_back }.increment(1);
    }
}

/// The metrics of one job queue.
pub(crate) struct QueueMetrics {
    queued: Gauge,
    running: Gauge,
    oldest: Gauge,
    completed: Counter,
    retried: Counter,
    dead_lettered: Counter,
    last_completed: Gauge,
}

impl QueueMetrics {
    /// The handles of `queue`'s series; `None` when metrics are off.
    pub(crate) fn new(queue: &'static str) -> Option<QueueMetrics> {
        on().then(|| QueueMetrics {
            queued: metrics::gauge!(QUEUE_JOBS, "queue" => queue, "state" => "queued"),
            running: metrics::gauge!(QUEUE_JOBS, "queue" => queue, "state" => "running"),
            oldest: metrics::gauge!(QUEUE_OLDEST, "queue" => queue),
            completed: metrics::counter!(QUEUE_COMPLETED, "queue" => queue),
            retried: metrics::counter!(QUEUE_RETRIED, "queue" => queue),
            dead_lettered: metrics::counter!(QUEUE_DEAD, "queue" => queue),
            last_completed: metrics::gauge!(QUEUE_LAST_COMPLETED, "queue" => queue),
        })
    }

    /// An attempt succeeded, at `unix_seconds`.
    pub(crate) fn completed(&self, unix_seconds: f64) {
        self.completed.increment(1);
        self.last_completed.set(unix_seconds);
    }

    /// An attempt failed: its job is queued again, or dead-lettered after its last attempt.
    pub(crate) fn failed(&self, dead: bool) {
        if dead { &self.dead_lettered } else { &self.retried }.increment(1);
    }

    /// What the database holds now: jobs queued and running, and the oldest queued job's age.
    pub(crate) fn observed(&self, queued: i64, running: i64, oldest_age_seconds: f64) {
        self.queued.set(queued as f64);
        self.running.set(running as f64);
        self.oldest.set(oldest_age_seconds);
    }
}

/// What a scrape reads first: values that live elsewhere (the queues' tables), brought up to
/// date by the service before the exposition is rendered.
pub(crate) type BeforeScrape = fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Serves `GET /metrics` on `listener` (any other request is 404) until its task is aborted, when
/// the service has stopped.
pub(crate) async fn serve(listener: tokio::net::TcpListener, before_scrape: BeforeScrape) {
    use http_body_util::Full;
    use hyper::body::Bytes;
    let answer = move |request: hyper::Request<hyper::body::Incoming>| async move {
        let found = request.method() == hyper::Method::GET && request.uri().path() == "/metrics";
        if found {
            before_scrape().await;
        }
        let response = if found {
            hyper::Response::builder()
                .header("content-type", "text/plain; version=0.0.4; charset=utf-8")
                .body(Full::new(Bytes::from(render())))
        } else {
            hyper::Response::builder().status(404).body(Full::new(Bytes::from_static(b"metrics are at /metrics\n")))
        };
        Ok::<_, std::convert::Infallible>(response.unwrap_or_default())
    };
    let accept = async {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let io = hyper_util::rt::TokioIo::new(stream);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(answer);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    };
    // The exporter keeps a histogram's samples until they are folded into its buckets: without
    // a scrape they would grow with every request, so they are folded every second.
    let upkeep = async {
        let mut every = tokio::time::interval(UPKEEP);
        loop {
            every.tick().await;
            flush_accumulated();
            if let Some(handle) = HANDLE.get() {
                handle.run_upkeep();
            }
        }
    };
    tokio::join!(accept, upkeep);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of `series` (name and labels) in the exposition `text`.
    fn series_value(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|v| v.strip_prefix(' ')))
            .unwrap_or_else(|| panic!("no {series} in {text}"))
            .parse()
            .unwrap()
    }

    /// Samples gathered on a thread reach the exporter with their exact bucket counts, count
    /// and sum, whatever bucket their mean falls in.
    #[test]
    fn gathered_samples_are_exported_with_exact_buckets_and_sum() {
        let recorder = PrometheusBuilder::new().set_buckets(&DB_BUCKETS).unwrap().build_recorder();
        let handle = recorder.handle();
        let histogram = metrics::with_local_recorder(&recorder, || metrics::histogram!("t_seconds"));
        let accumulated = Accumulated::new(histogram, &DB_BUCKETS);
        let samples = [0.0005, 0.001, 0.001, 0.003, 0.02, 7.0, 12.0, 0.005];
        for value in samples {
            accumulated.record(value);
        }
        accumulated.flush();
        // A second hand-over adds to the first.
        accumulated.record(0.001);
        accumulated.flush();
        handle.run_upkeep();
        let text = handle.render();
        let value = |series: &str| series_value(&text, series);
        assert_eq!(value(r#"t_seconds_bucket{le="0.001"}"#), 4.0, "{text}");
        assert_eq!(value(r#"t_seconds_bucket{le="0.005"}"#), 6.0, "{text}");
        assert_eq!(value(r#"t_seconds_bucket{le="0.05"}"#), 7.0, "{text}");
        assert_eq!(value(r#"t_seconds_bucket{le="10"}"#), 8.0, "{text}");
        assert_eq!(value(r#"t_seconds_bucket{le="+Inf"}"#), 9.0, "{text}");
        assert_eq!(value("t_seconds_count"), 9.0, "{text}");
        let sum: f64 = samples.iter().sum::<f64>() + 0.001;
        assert!((value("t_seconds_sum") - sum).abs() < 1e-9, "{text}");

        // The same through the atomic accumulation that any thread records into.
        let histogram = metrics::with_local_recorder(&recorder, || metrics::histogram!("u_seconds"));
        let accumulated = Accumulated::new(histogram, &DB_BUCKETS);
        for value in samples {
            accumulated.record(value);
        }
        accumulated.flush();
        handle.run_upkeep();
        let text = handle.render();
        let value = |series: &str| series_value(&text, series);
        assert_eq!(value(r#"u_seconds_bucket{le="0.001"}"#), 3.0, "{text}");
        assert_eq!(value(r#"u_seconds_bucket{le="+Inf"}"#), 8.0, "{text}");
        assert!((value("u_seconds_sum") - samples.iter().sum::<f64>()).abs() < 1e-6, "{text}");
    }
}
