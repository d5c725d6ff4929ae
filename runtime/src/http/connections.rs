//! The connection layer under the route table: the accept loop with its cap on open connections,
//! and one driver per connection that enforces the header and idle timeouts around hyper's
//! HTTP/1 connection.
//!
//! `axum::serve` builds hyper's connection itself and exposes none of these limits, so this module
//! drives hyper directly. Hyper's own `header_read_timeout` is not used either, for two reasons:
//! its timer also runs while a keep-alive connection waits for its next request, so every idle
//! connection would be cut at the header timeout and the idle timeout could never be longer; and
//! it closes the connection without a word, where a client whose request had begun should be told
//! 408. So the driver keeps its own deadlines, derived from what it can observe of the connection:
//! bytes read and written (counted by [`Tracked`], the socket wrapper) and requests begun and
//! answered (counted by [`Counted`], the service wrapper). Each of those events happens while
//! hyper's connection future is being polled, and that poll happens inside the driver's own poll,
//! so the driver sees every change right after it happens, without a wake-up of its own.

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;

use super::dispatch::Dispatch;
use super::wrapper::{AnswerBody, ErrorBody};
use crate::budget::{Budget, Hold};
use crate::config::Config;

/// How long the 408 answer to a timed-out head may take to write, and then how long the client's
/// further bytes are read and thrown away before the socket is closed. Closing a socket with
/// unread bytes makes the kernel send a reset, which can destroy the 408 before the client reads
/// it; draining for a moment first lets the answer arrive. Both are short so that a client cannot
/// use them to hold the connection.
const ANSWER_WRITE: Duration = Duration::from_millis(1_000);
const ANSWER_LINGER: Duration = Duration::from_millis(500);

/// How long the accept loop waits after an accept error that is not about one connection (most
/// often EMFILE: the process is out of file descriptors) before it tries again, as hyper and axum
/// do, so that the loop does not spin while the descriptors are gone.
const ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The shortest time between two log lines about refused connections, so that a flood of
/// connections over the limit cannot flood the log as well.
const REFUSAL_REPORT: Duration = Duration::from_secs(1);

/// The connection limits of one server, from its [`Config`].
pub(crate) struct Limits {
    /// The longest a request head may take to arrive.
    header_timeout: Duration,
    /// The longest a keep-alive connection may wait for its next request, and the longest a
    /// client may take no byte of an answer.
    idle_timeout: Duration,
    /// The most connections open at once.
    max_connections: u32,
    /// Hyper's HTTP/1 settings, shared by every connection.
    http1: http1::Builder,
    /// The 503 written to a connection over the limit as it is closed.
    refusal: Vec<u8>,
    /// How long a stopping server keeps accepting, answering with `Connection: close`
    /// (`--drain-ms`).
    drain: Duration,
    /// Set while the server drains: every answer then closes its connection.
    draining: Arc<AtomicBool>,
}

impl Limits {
    /// The limits of `config`: `--header-timeout-ms`, `--idle-timeout-ms` and `--max-connections`.
    pub(crate) fn from_config(config: &Config) -> Limits {
        let mut http1 = http1::Builder::new();
        // The driver enforces the header timeout itself (see the module comment); turning hyper's
        // off also means hyper needs no timer.
        http1.header_read_timeout(None);
        // Hyper's read buffer grows to about 400 KiB for a head by default, and a connection
        // keeps it while the head arrives; capped, a longer head is hyper's 431.
        http1.max_buf_size(usize::try_from(config.max_head_bytes).unwrap_or(usize::MAX));
        Limits {
            header_timeout: Duration::from_millis(config.header_timeout_ms),
            idle_timeout: Duration::from_millis(config.idle_timeout_ms),
            // Tokio's semaphore holds fewer permits than a u32 can count on 32-bit targets.
            max_connections: config.max_connections.min(u32::try_from(Semaphore::MAX_PERMITS).unwrap_or(u32::MAX)),
            http1,
            drain: config.drain(),
            draining: Arc::default(),
            refusal: closing_answer(
                "503 Service Unavailable",
                "overloaded",
                &format!("the server has {} connections open already", config.max_connections),
            )
            .into_bytes(),
        }
    }
}

/// Accepts connections on `listener` and serves `app` on each until `shutdown` completes; then
/// stops accepting, lets every open connection finish its request in flight (idle ones close at
/// once), and returns when the last one has closed.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Arc<Dispatch>,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let limits = Arc::new(limits);
    // One permit per open connection. A connection task holds its permit until it ends, so at
    // shutdown, taking back every permit is how the loop waits for the last connection.
    let permits = Arc::new(Semaphore::new(limits.max_connections as usize));
    let (stop, stopping) = watch::channel(false);
    let mut refusals = Refusals::default();
    let mut shutdown = pin!(shutdown);
    // After the shutdown signal, with `--drain-ms`: when to stop accepting.
    let mut drain_until: Option<Instant> = None;
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown, if drain_until.is_none() => {
                if limits.drain.is_zero() {
                    break;
                }
                limits.draining.store(true, Ordering::SeqCst);
                tracing::info!(target: "nagi", "draining for {} ms: every answer closes its connection", limits.drain.as_millis());
                drain_until = Some(Instant::now() + limits.drain);
                continue;
            }
            () = tokio::time::sleep_until(drain_until.unwrap_or_else(Instant::now)), if drain_until.is_some() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            // The client gave up between connecting and the accept; nothing to do.
            Err(error) if is_connection_error(&error) => continue,
            Err(error) => {
                tracing::error!(target: "nagi", "cannot accept a connection: {error}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        admit(stream, peer, &app, &limits, &permits, &stopping, &mut refusals);
    }
    // Connections the kernel queued for this listener before it closes would be reset with it:
    // take them first (with `--reuse-port`, new ones now go to the other processes).
    while let Some(Ok((stream, peer))) = futures_util::FutureExt::now_or_never(listener.accept()) {
        admit(stream, peer, &app, &limits, &permits, &stopping, &mut refusals);
    }
    tracing::info!(target: "nagi", "shutting down: no new connections, finishing in-flight requests");
    drop(listener);
    if drain_until.is_some() {
        // Every answer now closes its connection: a client whose request is on its way gets
        // its answer rather than a connection closed under it. Idle connections are closed
        // below, after a wait of at most the drain again.
        if let Ok(all) = tokio::time::timeout(limits.drain, permits.acquire_many(limits.max_connections)).await {
            drop(all);
        }
    }
    let _ = stop.send(true);
    let _ = permits.acquire_many(limits.max_connections).await;
    refusals.report_total(limits.max_connections);
}

/// Serves the accepted connection `stream` on a task of its own when a place is free, else
/// answers it 503 and closes it.
fn admit(
    stream: TcpStream,
    peer: SocketAddr,
    app: &Arc<Dispatch>,
    limits: &Arc<Limits>,
    permits: &Arc<Semaphore>,
    stopping: &watch::Receiver<bool>,
    refusals: &mut Refusals,
) {
    match Arc::clone(permits).try_acquire_owned() {
        Ok(permit) => {
            let limits = Arc::clone(limits);
            let app = Arc::clone(app);
            let stopping = stopping.clone();
            tokio::spawn(async move {
                let open = app.server_metrics().map(|m| m.open_connections.clone());
                if let Some(open) = &open {
                    open.increment(1.0);
                }
                drive(stream, peer, Arc::clone(&app), &limits, stopping).await;
                if let Some(open) = open {
                    open.decrement(1.0);
                }
                drop(permit);
            });
        }
        Err(_) => {
            refuse(stream, &limits.refusal);
            refusals.count(limits.max_connections);
            if let Some(metrics) = app.server_metrics() {
                metrics.rejected_connections.increment(1);
            }
        }
    }
}

/// Whether an accept error concerns only the connection being accepted.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// Answers a connection over the limit with 503 and closes it, without waiting for anything.
///
/// The socket is brand new, so its send buffer is empty and the short answer is written whole by
/// one non-blocking write; when even that fails, closing is answer enough. What the client has
/// sent already (usually its request) is read and dropped first, because closing a socket with
/// unread bytes makes the kernel reset the connection, and the reset can overtake the 503. Both
/// are done on the plain socket: Tokio's `try_read` and `try_write` would answer "would block"
/// without trying, since its reactor has not yet seen the new socket become ready.
fn refuse(stream: TcpStream, answer: &[u8]) {
    let Ok(mut stream) = stream.into_std() else { return };
    let mut scratch = [0u8; 4096];
    for _ in 0..4 {
        if !matches!(io::Read::read(&mut stream, &mut scratch), Ok(n) if n > 0) {
            break;
        }
    }
    let _ = io::Write::write(&mut stream, answer);
}

/// The count of connections refused for the limit, and when it was last logged.
#[derive(Default)]
struct Refusals {
    total: u64,
    unreported: u64,
    last_report: Option<Instant>,
}

impl Refusals {
    /// Counts one refusal; logs the count since the last line when that line is old enough.
    fn count(&mut self, max: u32) {
        self.total += 1;
        self.unreported += 1;
        let now = Instant::now();
        if self.last_report.is_none_or(|last| now.duration_since(last) >= REFUSAL_REPORT) {
            tracing::warn!(
                target: "nagi::conn",
                "refused {} connection(s) with 503: {max} open already (--max-connections)",
                self.unreported
            );
            self.unreported = 0;
            self.last_report = Some(now);
        }
    }

    /// Logs the total at shutdown, when there was any.
    fn report_total(&self, max: u32) {
        if self.total > 0 {
            tracing::info!(
                target: "nagi::conn",
                "refused {} connection(s) in total over --max-connections {max}",
                self.total
            );
        }
    }
}

/// What one connection has done so far, counted by its socket and service wrappers.
struct Counters {
    /// The memory budget, and the bytes of answers that hyper has taken from their bodies but
    /// may not have written out yet; given back at the next completed flush, or with the
    /// connection.
    budget: Arc<Budget>,
    parked: AtomicUsize,
    /// Bytes read from the socket.
    read: AtomicU64,
    /// Bytes written to the socket.
    written: AtomicU64,
    /// Whether bytes were written since the last completed flush, that is, whether hyper may still
    /// hold part of an answer in its buffer.
    unflushed: AtomicBool,
    /// Requests whose head was complete and handed to the router.
    begun: AtomicU64,
    /// Requests begun whose answer has not been written out yet.
    in_flight: AtomicU64,
    /// Requests whose handler has answered and whose answer is being written.
    responding: AtomicU64,
}

/// The counters at one moment; the driver compares snapshots to notice changes.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct Snapshot {
    read: u64,
    written: u64,
    unflushed: bool,
    begun: u64,
    in_flight: u64,
    responding: u64,
}

impl Counters {
    fn new(budget: Arc<Budget>) -> Counters {
        Counters {
            budget,
            parked: AtomicUsize::new(0),
            read: AtomicU64::new(0),
            written: AtomicU64::new(0),
            unflushed: AtomicBool::new(false),
            begun: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            responding: AtomicU64::new(0),
        }
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            read: self.read.load(Ordering::Relaxed),
            written: self.written.load(Ordering::Relaxed),
            unflushed: self.unflushed.load(Ordering::Relaxed),
            begun: self.begun.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            responding: self.responding.load(Ordering::Relaxed),
        }
    }

    /// Keeps an answer's hold until the connection has written out what it has buffered.
    fn park(&self, hold: Hold) {
        self.parked.fetch_add(hold.detach(), Ordering::Relaxed);
    }

    /// Gives back the parked bytes: everything buffered has been written out.
    fn flushed(&self) {
        if self.parked.load(Ordering::Relaxed) > 0 {
            self.budget.release(self.parked.swap(0, Ordering::Relaxed));
        }
    }
}

impl Drop for Counters {
    fn drop(&mut self) {
        self.budget.release(*self.parked.get_mut());
    }
}

/// What a connection is doing, as the driver sees it; each phase has its own deadline.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// No request handed to the router yet: the first head must be complete within the header
    /// timeout of the connection's start.
    Fresh,
    /// Between requests with nothing of the next one read: the connection is closed after the
    /// idle timeout.
    Idle,
    /// Between requests with part of the next head read: the head must be complete within the
    /// header timeout of its first byte.
    Head,
    /// A handler is running. The request timeout (the router's `TimeoutLayer`) bounds it, body
    /// reading included, so the connection has no deadline of its own.
    Handling,
    /// The answer is being written: the connection is closed when the client has taken no byte
    /// of it for the idle timeout.
    Responding,
}

/// One connection's deadline bookkeeping.
struct Deadlines<'a> {
    limits: &'a Limits,
    counters: &'a Counters,
    seen: Snapshot,
    phase: Phase,
    /// The bytes read when the connection last became idle; more than that means the next head
    /// has begun.
    read_at_idle: u64,
    deadline: Option<Instant>,
}

impl Deadlines<'_> {
    /// Looks at the counters and moves to the phase they show; returns whether the deadline moved.
    /// The clock is read only when something changed.
    fn observe(&mut self) -> bool {
        let now = self.counters.snapshot();
        if now == self.seen {
            return false;
        }
        let before = (self.phase, self.deadline);
        let at = Instant::now();
        // Hyper drops an answer's body as soon as it has taken its bytes into its own buffer, so
        // an answer the client is slow to take may be over for the counters while its bytes still
        // wait: `unflushed` says so.
        if now.in_flight > 0 && now.responding == 0 {
            self.phase = Phase::Handling;
            self.deadline = None;
        } else if now.responding > 0 || (now.begun > 0 && now.unflushed) {
            // Any byte the client took resets the clock; so does the start of the answer.
            if self.phase != Phase::Responding || now.written != self.seen.written {
                self.deadline = Some(at + self.limits.idle_timeout);
            }
            self.phase = Phase::Responding;
        } else if now.begun > 0 {
            // A request was begun and finished since the last look (possibly within one poll, for
            // a quick handler), so the connection has just become idle.
            let just_idle = now.begun != self.seen.begun || self.seen.in_flight > 0 || self.seen.unflushed;
            if just_idle {
                self.phase = Phase::Idle;
                self.read_at_idle = now.read;
                self.deadline = Some(at + self.limits.idle_timeout);
            } else if self.phase == Phase::Idle && now.read > self.read_at_idle {
                self.phase = Phase::Head;
                self.deadline = Some(at + self.limits.header_timeout);
            }
        }
        // In `Fresh`, the deadline set at the start stands whatever arrives.
        self.seen = now;
        (self.phase, self.deadline) != before
    }
}

/// How a connection's drive ended.
enum Ending {
    /// Hyper finished the connection: the client closed it, asked for `Connection: close`, the
    /// server is shutting down, or an error.
    Closed(Result<(), hyper::Error>),
    /// The deadline of this phase passed.
    Expired(Phase),
}

/// Serves one connection until it closes or a deadline passes; starts a graceful close (finish
/// the request in flight, then close) when `stopping` turns true.
async fn drive(
    stream: TcpStream,
    peer: SocketAddr,
    app: Arc<Dispatch>,
    limits: &Limits,
    mut stopping: watch::Receiver<bool>,
) {
    let counters = Arc::new(Counters::new(Arc::clone(app.budget())));
    let io = TokioIo::new(Tracked { stream, counters: Arc::clone(&counters) });
    let service = Counted { inner: app, counters: Arc::clone(&counters), draining: Arc::clone(&limits.draining) };
    let mut conn = limits.http1.serve_connection(io, service);
    let mut deadlines = Deadlines {
        limits,
        counters: &counters,
        seen: Snapshot::default(),
        phase: Phase::Fresh,
        read_at_idle: 0,
        deadline: Some(Instant::now() + limits.header_timeout),
    };
    let mut sleep = pin!(tokio::time::sleep_until(deadlines.deadline.unwrap_or_else(Instant::now)));
    let mut stop = pin!(async move {
        let _ = stopping.wait_for(|stop| *stop).await;
    });
    let mut stop_seen = false;
    let ending = poll_fn(|cx| {
        if !stop_seen && stop.as_mut().poll(cx).is_ready() {
            stop_seen = true;
            Pin::new(&mut conn).graceful_shutdown();
        }
        if let Poll::Ready(result) = Pin::new(&mut conn).poll(cx) {
            return Poll::Ready(Ending::Closed(result));
        }
        if deadlines.observe()
            && let Some(deadline) = deadlines.deadline
        {
            sleep.as_mut().reset(deadline);
        }
        if deadlines.deadline.is_some() && sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Ending::Expired(deadlines.phase));
        }
        Poll::Pending
    })
    .await;
    let header_ms = limits.header_timeout.as_millis();
    let idle_ms = limits.idle_timeout.as_millis();
    match ending {
        Ending::Closed(Ok(())) => {}
        Ending::Closed(Err(error)) => tracing::debug!(target: "nagi::conn", "connection from {peer}: {error}"),
        Ending::Expired(Phase::Fresh) if counters.read.load(Ordering::Relaxed) == 0 => {
            tracing::debug!(target: "nagi::conn", "connection from {peer} sent nothing within {header_ms} ms; closed");
        }
        Ending::Expired(Phase::Fresh | Phase::Head) => {
            // A 408 only when hyper has written out all of the previous answer: its buffer goes
            // with the connection, and a 408 after half an answer would be garbage to the client.
            let answered = !counters.unflushed.load(Ordering::Relaxed);
            if answered {
                crate::metrics::refused(crate::metrics::Refusal::HeadTimeout);
                answer_timeout(conn.into_parts().io.into_inner().stream, header_ms).await;
            }
            let what = if answered { "answered 408 and closed" } else { "closed" };
            tracing::info!(
                target: "nagi::conn",
                "connection from {peer}: the request head did not arrive within {header_ms} ms; {what}"
            );
        }
        Ending::Expired(Phase::Idle) => {
            tracing::debug!(target: "nagi::conn", "connection from {peer} idle for {idle_ms} ms; closed");
        }
        Ending::Expired(Phase::Responding | Phase::Handling) => {
            // `Handling` has no deadline; it is matched only to keep this match exhaustive.
            tracing::info!(target: "nagi::conn", "connection from {peer} took no byte of its answer for {idle_ms} ms; closed");
        }
    }
}

/// Writes the 408 for a head that did not arrive in time, then closes the socket, draining what
/// the client still sends for a moment so that the close does not reset the answer away.
async fn answer_timeout(mut stream: TcpStream, header_ms: u128) {
    let detail = format!("the request head did not arrive within {header_ms} ms");
    let answer = closing_answer("408 Request Timeout", "timeout", &detail);
    let written = tokio::time::timeout(ANSWER_WRITE, async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
    if matches!(written, Ok(Ok(()))) {
        let _ = tokio::time::timeout(ANSWER_LINGER, async {
            let mut scratch = [0u8; 1024];
            while matches!(stream.read(&mut scratch).await, Ok(n) if n > 0) {}
        })
        .await;
    }
}

/// A whole HTTP/1.1 answer that closes the connection: `status` (code and reason) with the JSON
/// error body `{"error": error, "detail": detail}` every error answer has.
fn closing_answer(status: &str, error: &str, detail: &str) -> String {
    let body = serde_json::to_string(&ErrorBody { error, detail }).unwrap_or_default();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The socket, counting the bytes that go through it.
struct Tracked {
    stream: TcpStream,
    counters: Arc<Counters>,
}

impl AsyncRead for Tracked {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        if read > 0 {
            self.counters.read.fetch_add(read as u64, Ordering::Relaxed);
        }
        polled
    }
}

impl Tracked {
    fn wrote(&self, polled: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = polled
            && n > 0
        {
            self.counters.written.fetch_add(n as u64, Ordering::Relaxed);
            self.counters.unflushed.store(true, Ordering::Relaxed);
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.wrote(polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.wrote(polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Hyper flushes the socket only after its own buffer has been written out, so a flush
        // that completes means no part of an answer is left waiting.
        let polled = Pin::new(&mut self.stream).poll_flush(cx);
        if let Poll::Ready(Ok(())) = polled {
            self.counters.unflushed.store(false, Ordering::Relaxed);
            self.counters.flushed();
        }
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The route table as hyper calls it, counting requests as they begin, are answered and are
/// written out.
struct Counted {
    inner: Arc<Dispatch>,
    counters: Arc<Counters>,
    /// The server's draining flag: set, each answer says `Connection: close`.
    draining: Arc<AtomicBool>,
}

impl hyper::service::Service<hyper::Request<Incoming>> for Counted {
    type Response = hyper::Response<Guarded>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let mut in_flight = InFlight::begin(&self.counters);
        let dispatch = Arc::clone(&self.inner);
        let draining = Arc::clone(&self.draining);
        Box::pin(async move {
            let mut response = dispatch.serve(request).await;
            // Hyper closes the connection after an answer that says so, and the client knows
            // not to send another request on it.
            if draining.load(Ordering::Relaxed) {
                response
                    .headers_mut()
                    .insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
            }
            in_flight.answered();
            Ok(response.map(|body| Guarded { body, in_flight }))
        })
    }
}

/// One request from its head to the end of its answer. Dropped when hyper drops the answer's
/// body, which it does once the body is written out, or with the connection.
struct InFlight {
    counters: Arc<Counters>,
    responding: bool,
}

impl InFlight {
    fn begin(counters: &Arc<Counters>) -> InFlight {
        counters.begun.fetch_add(1, Ordering::Relaxed);
        counters.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight { counters: Arc::clone(counters), responding: false }
    }

    fn answered(&mut self) {
        self.counters.responding.fetch_add(1, Ordering::Relaxed);
        self.responding = true;
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.responding {
            self.counters.responding.fetch_sub(1, Ordering::Relaxed);
        }
        self.counters.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// An answer's body that carries its request's [`InFlight`], so that the request counts as in
/// flight until hyper is done with the body. When hyper drops it, the body's hold of the memory
/// budget is parked with the connection until the answer's bytes are written out.
struct Guarded {
    body: AnswerBody,
    in_flight: InFlight,
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if let Some(hold) = self.body.take_hold() {
            self.in_flight.counters.park(hold);
        }
    }
}

impl hyper::body::Body for Guarded {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
