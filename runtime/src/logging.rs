//! Logging that never blocks a request: records are appended to one bounded, reused buffer
//! under a short lock, and written to stdout in batches by a separate writer thread.
//!
//! The buffer holds at most [`MAX_RECORDS`] records and [`MAX_BYTES`] bytes of payload, and a record
//! is cut to [`MAX_RECORD`] bytes. When a record does not fit, it is dropped and counted: a slow,
//! stalled or closed stdout costs log lines, never a request's latency or success. The writer
//! reports the count as a `nagi: dropped N log records` line when writing resumes, and the total at
//! shutdown (to stdout if it still takes writes, and to stderr).
//!
//! The request path allocates nothing per record: `tracing` events are formatted into a
//! thread-local scratch buffer and copied into the shared buffer; the one line per request
//! ([`request_line`]) is not formatted on the request's thread at all but stored as its raw
//! fields, which the writer formats. The writer swaps the whole shared buffer for its own empty one
//! (both keep their capacity), formats what it took into one text buffer and writes it with one
//! `write_all`, so a batch of records costs one system call or a few. It wakes when a batch's
//! worth has accumulated or after [`FLUSH_INTERVAL`], not once per record, so that on a machine
//! where it shares a core with the request workers it takes a few wake-ups a second instead of
//! one per request.
//!
//! With `--log-format json` every line is one JSON object: `tracing`'s events through its JSON
//! formatter (their fields flattened beside `timestamp`, `level` and `target`), and the request
//! lines, printed lines and the writer's own notices written by the writer as objects alike.

use std::cell::RefCell;
use std::fmt::Display;
use std::io::{self, BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use tracing_subscriber::fmt::MakeWriter;

/// The most records the queue holds.
pub const MAX_RECORDS: usize = 8_192;
/// The most payload bytes the queue holds (16 MiB).
pub const MAX_BYTES: usize = 16 * 1024 * 1024;
/// The longest formatted record (64 KiB); longer ones are cut and end with ` [cut]`.
pub const MAX_RECORD: usize = 64 * 1024;

/// How many pending payload bytes or records wake the writer before [`FLUSH_INTERVAL`] ends.
const WAKE_BYTES: usize = 64 * 1024;
const WAKE_RECORDS: usize = 512;

/// The longest a record waits for the writer when few are logged.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(20);

/// A pending record's framing: a kind byte and the payload's length, then the payload.
const TEXT: u8 = 0;
const REQUEST: u8 = 1;
/// A line the program printed (the JSON format wraps it in an object).
const PRINT: u8 = 2;

/// Whether lines are written as JSON objects (`--log-format json`), set once by [`init`].
static JSON: AtomicBool = AtomicBool::new(false);

fn json() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// A line of the runtime's own (not an event), as text or as a JSON object of `level` WARN.
fn notice(sink: &mut dyn Write, message: &str) -> io::Result<()> {
    if json() {
        let at = humantime::format_rfc3339_micros(SystemTime::now());
        writeln!(sink, r#"{{"timestamp":"{at}","level":"WARN","target":"nagi::log","message":{}}}"#, quoted(message))?;
    } else {
        writeln!(sink, "{message}")?;
    }
    sink.flush()
}

/// `text` as a JSON string.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| String::from("\"\""))
}
const HEADER: usize = 5;

const CUT_MARK: &[u8] = b" [cut]\n";

/// A bounded queue of log records, shared by the producers and one writer thread.
pub struct LogQueue {
    state: Mutex<State>,
    ready: Condvar,
    max_records: usize,
    max_bytes: usize,
}

struct State {
    /// The pending records, framed (see [`TEXT`], [`REQUEST`]), in order.
    pending: Vec<u8>,
    /// How many records `pending` holds, and their payload bytes.
    records: usize,
    bytes: usize,
    dropped: u64,
    /// The most records and payload bytes the queue has held at once: what the bench checks
    /// against the limits, and what the shutdown line reports.
    peak_records: usize,
    peak_bytes: usize,
    /// How many records the writer has taken and not finished writing.
    in_flight: usize,
    closed: bool,
}

impl LogQueue {
    /// A queue holding at most `max_records` records and `max_bytes` payload bytes.
    pub fn new(max_records: usize, max_bytes: usize) -> LogQueue {
        LogQueue {
            state: Mutex::new(State {
                pending: Vec::new(),
                records: 0,
                bytes: 0,
                dropped: 0,
                peak_records: 0,
                peak_bytes: 0,
                in_flight: 0,
                closed: false,
            }),
            ready: Condvar::new(),
            max_records,
            max_bytes,
        }
    }

    /// Locks the state. Nothing panics while holding the lock, but a poisoned lock is taken over
    /// anyway: losing logging is worse than a possibly miscounted byte total.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Offers a record (cut to [`MAX_RECORD`] first). Returns `false`, and counts the record as
    /// dropped, when the queue is full by count or bytes, or closed. Never waits for the writer.
    pub fn try_push(&self, record: Vec<u8>) -> bool {
        self.push_text(&cut(record))
    }

    /// [`LogQueue::try_push`] of a record at most [`MAX_RECORD`] bytes long, copied in.
    fn push_text(&self, record: &[u8]) -> bool {
        self.push(TEXT, record.len(), |out| out.extend_from_slice(record))
    }

    /// Appends one record of `kind` whose payload, `len` bytes, `write` appends.
    fn push(&self, kind: u8, len: usize, write: impl FnOnce(&mut Vec<u8>)) -> bool {
        let mut state = self.lock();
        if state.closed || state.records >= self.max_records || state.bytes + len > self.max_bytes {
            state.dropped += 1;
            return false;
        }
        state.pending.push(kind);
        state.pending.extend_from_slice(&(len as u32).to_le_bytes());
        let start = state.pending.len();
        write(&mut state.pending);
        debug_assert_eq!(state.pending.len() - start, len);
        state.records += 1;
        state.bytes += len;
        state.peak_records = state.peak_records.max(state.records);
        state.peak_bytes = state.peak_bytes.max(state.bytes);
        // The first record wakes an idle writer, which then lets more gather; after that only a
        // batch's worth does, so the writer wakes a few times a second, not once per record.
        let wake = state.records == 1 || state.records >= WAKE_RECORDS || state.pending.len() >= WAKE_BYTES;
        drop(state);
        if wake {
            self.ready.notify_one();
        }
        true
    }

    /// How many records have been dropped (or lost to a failed write) so far.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// The most records and payload bytes the queue has held at once, `(records, bytes)`; never
    /// more than the limits it was made with.
    pub fn peak(&self) -> (usize, usize) {
        let state = self.lock();
        (state.peak_records, state.peak_bytes)
    }

    /// How many records are queued.
    pub fn len(&self) -> usize {
        self.lock().records
    }

    /// Whether no record is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many payload bytes are queued.
    pub fn queued_bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Refuses further records and lets the writer finish once the queue is empty.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Ends the writer's current batch, of which `lost` records could not be written.
    fn batch_done(&self, lost: u64) {
        let mut state = self.lock();
        state.dropped += lost;
        state.in_flight = 0;
    }

    /// Records queued or taken by the writer but not yet written.
    fn unwritten(&self) -> u64 {
        let state = self.lock();
        (state.records + state.in_flight) as u64
    }

    /// Waits for records (until a batch's worth is pending, [`FLUSH_INTERVAL`] passes, or the
    /// queue closes) and takes all of them into `batch` (cleared first, its capacity kept and
    /// handed to the producers in exchange); their count, or `None` once closed and empty.
    fn next_batch(&self, batch: &mut Vec<u8>) -> Option<usize> {
        let mut state = self.lock();
        loop {
            if state.records > 0 {
                break;
            }
            if state.closed {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        // A few records: let more gather for a moment, unless the queue is closing.
        if state.records < WAKE_RECORDS && state.pending.len() < WAKE_BYTES && !state.closed {
            let waited = self.ready.wait_timeout(state, FLUSH_INTERVAL);
            state = waited.map_or_else(|poisoned| poisoned.into_inner().0, |(state, _)| state);
        }
        batch.clear();
        std::mem::swap(batch, &mut state.pending);
        let taken = state.records;
        state.records = 0;
        state.bytes = 0;
        state.in_flight = taken;
        Some(taken)
    }
}

/// Cuts a record longer than [`MAX_RECORD`] at a UTF-8 character boundary and marks it with
/// ` [cut]` and a newline, so the result is at most [`MAX_RECORD`] bytes.
pub fn cut(mut record: Vec<u8>) -> Vec<u8> {
    if record.len() <= MAX_RECORD {
        return record;
    }
    let mut end = MAX_RECORD - CUT_MARK.len();
    // Continuation bytes look like 0b10xxxxxx; back up to the start of a character.
    while end > 0 && record[end] & 0xC0 == 0x80 {
        end -= 1;
    }
    record.truncate(end);
    record.extend_from_slice(CUT_MARK);
    record
}

/// The writer thread and its queue.
pub struct LogWriter {
    queue: Arc<LogQueue>,
    done: std::sync::mpsc::Receiver<()>,
    thread: JoinHandle<()>,
}

/// What [`LogWriter::shutdown`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Whether the writer emptied the queue and stopped within the grace period; `false` when the
    /// sink stalled.
    pub drained: bool,
    /// How many records were dropped (or lost to failed writes) in total.
    pub dropped: u64,
    /// How many records were still queued or being written when the grace period ended (0 when
    /// drained); they are lost when the process exits.
    pub unwritten: u64,
    /// The queue's peak, `(records, bytes)`, as [`LogQueue::peak`].
    pub peak: (usize, usize),
}

impl LogWriter {
    /// Starts the writer thread (`nagi-log`), writing records from `queue` to `sink`.
    pub fn start(queue: Arc<LogQueue>, mut sink: Box<dyn Write + Send>) -> LogWriter {
        let (done_tx, done) = std::sync::mpsc::channel();
        let shared = Arc::clone(&queue);
        let thread = std::thread::Builder::new()
            .name("nagi-log".to_owned())
            .spawn(move || {
                write_records(&shared, sink.as_mut());
                let _ = done_tx.send(());
            })
            .expect("the log writer thread must start: without it no log line is written");
        LogWriter { queue, done, thread }
    }

    /// Closes the queue and waits up to `grace` for the writer to write what is queued. A writer
    /// stuck on a stalled sink is left behind (the process is about to exit).
    pub fn shutdown(self, grace: Duration) -> ShutdownReport {
        self.queue.close();
        let drained = self.done.recv_timeout(grace).is_ok();
        if drained {
            let _ = self.thread.join();
        }
        let unwritten = if drained { 0 } else { self.queue.unwritten() };
        ShutdownReport { drained, dropped: self.queue.dropped(), unwritten, peak: self.queue.peak() }
    }
}

/// The writer thread's loop.
fn write_records(queue: &LogQueue, sink: &mut dyn Write) {
    let mut reported = 0;
    let mut broken = false;
    let mut batch = Vec::new();
    let mut text = Vec::new();
    let mut stamps = Timestamps::default();
    while let Some(count) = queue.next_batch(&mut batch) {
        text.clear();
        format_batch(&batch, &mut text, &mut stamps);
        if !broken && sink.write_all(&text).and_then(|()| sink.flush()).is_err() {
            broken = true;
        }
        queue.batch_done(if broken { count as u64 } else { 0 });
        // Records were dropped while the sink was slow; now that a write went through, say so.
        let dropped = queue.dropped();
        if !broken && dropped > reported {
            broken = notice(sink, &format!("nagi: dropped {} log records", dropped - reported)).is_err();
            reported = dropped;
        }
    }
    let dropped = queue.dropped();
    if !broken && dropped > 0 {
        let _ = notice(sink, &format!("nagi: dropped {dropped} log records in total"));
    }
}

/// Appends the text of every framed record in `batch` to `text`.
fn format_batch(batch: &[u8], text: &mut Vec<u8>, stamps: &mut Timestamps) {
    let mut at = 0;
    while at + HEADER <= batch.len() {
        let kind = batch[at];
        let len = u32::from_le_bytes([batch[at + 1], batch[at + 2], batch[at + 3], batch[at + 4]]) as usize;
        let Some(payload) = batch.get(at + HEADER..at + HEADER + len) else { break };
        match kind {
            REQUEST if json() => RequestLine::decode(payload).format_json(text, stamps),
            REQUEST => RequestLine::decode(payload).format(text, stamps),
            PRINT => printed_json(payload, text),
            _ => text.extend_from_slice(payload),
        }
        at += HEADER + len;
    }
}

/// A printed line (`payload`, ending in a newline) as one JSON object of target `nagi::print`.
fn printed_json(payload: &[u8], text: &mut Vec<u8>) {
    let line = String::from_utf8_lossy(payload.strip_suffix(b"\n").unwrap_or(payload));
    let at = humantime::format_rfc3339_micros(SystemTime::now());
    let _ =
        writeln!(text, r#"{{"timestamp":"{at}","level":"INFO","target":"nagi::print","message":{}}}"#, quoted(&line));
}

/// The one line per request, as its raw fields: stored by the request's thread, formatted by
/// the writer exactly as `tracing`'s `fmt` format writes the event it stands for:
/// `<time>  INFO nagi::request: request=<id> method=<m> path=<p> status=<s> micros=<us>`.
struct RequestLine<'a> {
    /// Microseconds since the Unix epoch, when the request ended.
    at_micros: u64,
    id: u64,
    status: u16,
    micros: u64,
    method: &'a [u8],
    path: &'a [u8],
    /// The route's path template (`/users/{id}`); empty for a request no route took.
    route: &'a [u8],
    /// The request's trace and span ids when tracing is on, else zeros.
    trace_id: u128,
    span_id: u64,
}

impl<'a> RequestLine<'a> {
    /// The fixed part of the payload: four numbers, the method's, path's and route's lengths,
    /// and the trace and span ids.
    const FIXED: usize = 8 + 8 + 2 + 8 + 2 + 4 + 4 + 16 + 8;

    fn encoded_len(&self) -> usize {
        Self::FIXED + self.method.len() + self.path.len() + self.route.len()
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.at_micros.to_le_bytes());
        out.extend_from_slice(&self.id.to_le_bytes());
        out.extend_from_slice(&self.status.to_le_bytes());
        out.extend_from_slice(&self.micros.to_le_bytes());
        out.extend_from_slice(&(self.method.len() as u16).to_le_bytes());
        out.extend_from_slice(&(self.path.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.route.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.trace_id.to_le_bytes());
        out.extend_from_slice(&self.span_id.to_le_bytes());
        out.extend_from_slice(self.method);
        out.extend_from_slice(self.path);
        out.extend_from_slice(self.route);
    }

    fn decode(payload: &'a [u8]) -> RequestLine<'a> {
        let number = |at: usize, n: usize| {
            let mut bytes = [0u8; 8];
            bytes[..n].copy_from_slice(payload.get(at..at + n).unwrap_or(&[0; 8][..n]));
            u64::from_le_bytes(bytes)
        };
        let method_len = number(26, 2) as usize;
        let path_len = number(28, 4) as usize;
        let route_len = number(32, 4) as usize;
        let trace_id = u128::from(number(36, 8)) | u128::from(number(44, 8)) << 64;
        let method = payload.get(Self::FIXED..Self::FIXED + method_len).unwrap_or_default();
        let path_at = Self::FIXED + method_len;
        let path = payload.get(path_at..path_at + path_len).unwrap_or_default();
        let route = payload.get(path_at + path_len..path_at + path_len + route_len).unwrap_or_default();
        RequestLine {
            at_micros: number(0, 8),
            id: number(8, 8),
            status: number(16, 2) as u16,
            micros: number(18, 8),
            method,
            path,
            route,
            trace_id,
            span_id: number(52, 8),
        }
    }

    /// The line as one JSON object: `timestamp`, `level`, `target`, then `request` (its id),
    /// `method`, `route` (the template), `path`, `status` and `micros` (its duration), and
    /// `trace_id` and `span_id` (hex, as W3C Trace Context writes them) when tracing is on.
    fn format_json(&self, text: &mut Vec<u8>, stamps: &mut Timestamps) {
        let string = |bytes: &[u8]| quoted(&String::from_utf8_lossy(bytes));
        let trace = if self.trace_id == 0 {
            String::new()
        } else {
            format!(r#","trace_id":"{:032x}","span_id":"{:016x}""#, self.trace_id, self.span_id)
        };
        text.extend_from_slice(br#"{"timestamp":""#);
        stamps.write(self.at_micros, text);
        let _ = writeln!(
            text,
            r#"","level":"INFO","target":"nagi::request","request":{},"method":{},"route":{},"path":{},"status":{},"micros":{}{trace}}}"#,
            self.id,
            string(self.method),
            string(self.route),
            string(self.path),
            self.status,
            self.micros
        );
    }

    /// The line as `tracing`'s default format writes the event (see `request_line`), written
    /// piece by piece: it is most of what the writer thread does per request.
    fn format(&self, text: &mut Vec<u8>, stamps: &mut Timestamps) {
        let mut number = itoa::Buffer::new();
        stamps.write(self.at_micros, text);
        text.extend_from_slice(b"  INFO nagi::request: request=");
        text.extend_from_slice(number.format(self.id).as_bytes());
        text.extend_from_slice(b" method=");
        text.extend_from_slice(self.method);
        text.extend_from_slice(b" path=");
        text.extend_from_slice(self.path);
        text.extend_from_slice(b" status=");
        text.extend_from_slice(number.format(self.status).as_bytes());
        text.extend_from_slice(b" micros=");
        text.extend_from_slice(number.format(self.micros).as_bytes());
        text.push(b'\n');
    }
}

/// The writer thread's timestamps: RFC 3339 in UTC with microseconds, as
/// `humantime::format_rfc3339_micros` writes them, with the date and the time of day formatted
/// once per second rather than once per line.
#[derive(Default)]
struct Timestamps {
    /// The second last formatted (since the Unix epoch) and its `YYYY-MM-DDTHH:MM:SS`.
    second: Option<(u64, [u8; 19])>,
}

impl Timestamps {
    /// Appends the timestamp of `at_micros` (microseconds since the Unix epoch) to `text`.
    fn write(&mut self, at_micros: u64, text: &mut Vec<u8>) {
        let second = at_micros / 1_000_000;
        let prefix = match self.second {
            Some((known, prefix)) if known == second => prefix,
            _ => {
                let at = SystemTime::UNIX_EPOCH + Duration::from_secs(second);
                let formatted = humantime::format_rfc3339_seconds(at).to_string();
                let mut prefix = [b'0'; 19];
                prefix.copy_from_slice(&formatted.as_bytes()[..19]);
                self.second = Some((second, prefix));
                prefix
            }
        };
        text.extend_from_slice(&prefix);
        let mut fraction = *b".000000Z";
        let mut rest = at_micros % 1_000_000;
        for digit in fraction[1..7].iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        text.extend_from_slice(&fraction);
    }
}

/// The `MakeWriter` that hands each formatted event to the queue as one record.
struct QueueWriter(Arc<LogQueue>);

thread_local! {
    /// Each thread's scratch buffer for formatting an event, reused so that logging allocates
    /// nothing per event once it has grown.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// One event's formatted bytes, copied into the queue when the formatter drops it.
struct RecordBuffer<'a> {
    queue: &'a LogQueue,
    bytes: Vec<u8>,
}

impl Write for RecordBuffer<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Keep one byte past the limit so that `cut` sees the record is too long, and no more.
        let room = (MAX_RECORD + 1).saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&buf[..buf.len().min(room)]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for RecordBuffer<'_> {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.bytes);
        if !bytes.is_empty() {
            if bytes.len() > MAX_RECORD {
                bytes = cut(bytes);
            }
            self.queue.push_text(&bytes);
        }
        bytes.clear();
        // Give the buffer back for this thread's next event (unless the thread is ending).
        let _ = SCRATCH.try_with(|scratch| *scratch.borrow_mut() = bytes);
    }
}

impl<'a> MakeWriter<'a> for QueueWriter {
    type Writer = RecordBuffer<'a>;

    fn make_writer(&'a self) -> RecordBuffer<'a> {
        let mut bytes = SCRATCH.try_with(|scratch| std::mem::take(&mut *scratch.borrow_mut())).unwrap_or_default();
        // The scratch buffer is shared with `forward_print`: whatever an earlier user left in it
        // must not become the start of this record (a printed line written twice).
        bytes.clear();
        RecordBuffer { queue: &self.0, bytes }
    }
}

static GLOBAL: OnceLock<Arc<LogQueue>> = OnceLock::new();

/// How many records the process's log queue has dropped so far; `None` before [`init`] installed
/// it.
pub fn dropped_records() -> Option<u64> {
    GLOBAL.get().map(|queue| queue.dropped())
}

/// Keeps the process's log writer; [`LogGuard::shutdown`] writes out what is queued.
pub struct LogGuard {
    writer: LogWriter,
}

/// Installs the process-wide `tracing` subscriber: the standard `fmt` format without colours
/// (`<time> <LEVEL> <target>: <message> <fields>`), or with `json` one JSON object per event,
/// events at `level` and above, written to stdout through the queue. Printed lines of the program (`print`) go through the queue too from then on.
///
/// When a global subscriber is already installed (e.g. by a test), the runtime's events go to that
/// one and the returned guard's writer stays idle.
pub fn init(level: tracing::Level, json: bool) -> LogGuard {
    let queue = Arc::new(LogQueue::new(MAX_RECORDS, MAX_BYTES));
    let sink = Box::new(BufWriter::with_capacity(64 * 1024, io::stdout()));
    let writer = LogWriter::start(Arc::clone(&queue), sink);
    let builder =
        tracing_subscriber::fmt().with_writer(QueueWriter(Arc::clone(&queue))).with_ansi(false).with_max_level(level);
    let installed = if json {
        let subscriber = builder.json().flatten_event(true).with_current_span(false).with_span_list(false).finish();
        tracing::subscriber::set_global_default(subscriber).is_ok()
    } else {
        tracing::subscriber::set_global_default(builder.finish()).is_ok()
    };
    if installed {
        JSON.store(json, Ordering::Relaxed);
        let _ = GLOBAL.set(queue);
    }
    LogGuard { writer }
}

impl LogGuard {
    /// Writes out the queue, waiting at most 2 s for a stalled stdout, and reports on stderr how
    /// many records were lost, as `nagi: dropped N log records`: those dropped while the queue was
    /// full plus, when stdout stalled, those still unwritten. Then, always, the queue's peak
    /// against its limits, as `nagi: log queue peak: R of 8192 records, B of 16777216 bytes`, so
    /// that an operator (and the HTTP bench's log-sink gates) can see how close a slow stdout
    /// came to losing lines.
    pub fn shutdown(self) {
        let report = self.writer.shutdown(Duration::from_secs(2));
        let mut stderr = io::stderr();
        let lost = report.dropped + report.unwritten;
        let (records, bytes) = report.peak;
        let _ =
            writeln!(stderr, "nagi: log queue peak: {records} of {MAX_RECORDS} records, {bytes} of {MAX_BYTES} bytes");
        if report.drained && lost > 0 {
            let _ = writeln!(stderr, "nagi: dropped {lost} log records");
        } else if !report.drained {
            let _ = writeln!(stderr, "nagi: dropped {lost} log records (stdout stopped taking writes)");
        }
    }
}

/// Sends a printed line into the log queue when the process logs through it (under the HTTP
/// server). Returns `false` when the caller should write to stdout itself.
pub(crate) fn forward_print(value: &dyn Display) -> bool {
    match GLOBAL.get() {
        Some(queue) if !queue.is_closed() => {
            SCRATCH.with(|scratch| {
                let mut line = scratch.borrow_mut();
                line.clear();
                let _ = writeln!(line, "{value}");
                let kind = if json() { PRINT } else { TEXT };
                if line.len() > MAX_RECORD {
                    let record = cut(line.clone());
                    queue.push(kind, record.len(), |out| out.extend_from_slice(&record));
                } else {
                    queue.push(kind, line.len(), |out| out.extend_from_slice(&line));
                }
                line.clear();
            });
            true
        }
        _ => false,
    }
}

/// Logs the line of one finished request (`nagi::request` at INFO) through the queue without
/// formatting it here: its fields are stored and the writer thread writes the line `tracing`
/// would have written. Returns `false` when the process does not log through the queue (a test
/// installed its own subscriber): the caller then logs through `tracing`. A path too long for
/// one record is cut.
pub(crate) fn request_line(
    id: u64,
    trace: Option<crate::traces::SpanContext>,
    method: &str,
    path: &str,
    route: &str,
    status: u16,
    micros: u64,
) -> bool {
    let Some(queue) = GLOBAL.get() else { return false };
    let at_micros = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64);
    let mut route_end = route.len().min(1024);
    while !route.is_char_boundary(route_end) {
        route_end -= 1;
    }
    let route = &route.as_bytes()[..route_end];
    let room = MAX_RECORD - RequestLine::FIXED - method.len().min(64) - route.len();
    let mut end = path.len().min(room);
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    let line = RequestLine {
        at_micros,
        id,
        status,
        micros,
        method: &method.as_bytes()[..method.len().min(64)],
        path: &path.as_bytes()[..end],
        route,
        trace_id: trace.map_or(0, |t| t.trace_id),
        span_id: trace.map_or(0, |t| t.span_id),
    };
    queue.push(REQUEST, line.encoded_len(), |out| line.encode(out));
    true
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A `MakeWriter` that collects what `tracing`'s formatter writes.
    #[derive(Clone, Default)]
    struct Collect(Arc<Mutex<Vec<u8>>>);

    impl Write for Collect {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Collect {
        type Writer = Collect;

        fn make_writer(&'a self) -> Collect {
            self.clone()
        }
    }

    /// The writer's request line is the line `tracing`'s `fmt` format writes for the event the
    /// wrapper would otherwise log, after the timestamp, which is RFC 3339 with microseconds.
    #[test]
    fn a_request_line_reads_as_the_tracing_event_it_stands_for() {
        let collect = Collect::default();
        let subscriber = tracing_subscriber::fmt().with_writer(collect.clone()).with_ansi(false).finish();
        tracing::subscriber::with_default(subscriber, || {
            let (method, path) = ("POST", "/users/ünï");
            tracing::info!(target: "nagi::request", request = 7_u64, method = %method, path = %path, status = 201_u16, micros = 345_u64);
        });
        let expected = String::from_utf8(collect.0.lock().unwrap().clone()).unwrap();
        let line = RequestLine {
            at_micros: 1_764_596_823_631_678,
            id: 7,
            status: 201,
            micros: 345,
            method: b"POST",
            path: "/users/ünï".as_bytes(),
            route: b"/users/{name}",
            trace_id: 0,
            span_id: 0,
        };
        let mut framed = Vec::new();
        line.encode(&mut framed);
        assert_eq!(framed.len(), line.encoded_len());
        let mut text = Vec::new();
        RequestLine::decode(&framed).format(&mut text, &mut Timestamps::default());
        let text = String::from_utf8(text).unwrap();
        assert_eq!(&text[..27], "2025-12-01T13:47:03.631678Z");
        let after_time = |s: &str| s.split_once(' ').map(|(_, rest)| rest.to_string()).unwrap();
        assert_eq!(after_time(&text), after_time(&expected), "ours: {text} tracing: {expected}");
        assert_eq!(expected.split_once(' ').unwrap().0.len(), 27, "{expected}");
        // The JSON form: one object, the path escaped as JSON, the route beside it.
        let mut json = Vec::new();
        RequestLine::decode(&framed).format_json(&mut json, &mut Timestamps::default());
        let object: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(
            object,
            serde_json::json!({"timestamp": "2025-12-01T13:47:03.631678Z", "level": "INFO", "target": "nagi::request",
                "request": 7, "method": "POST", "route": "/users/{name}", "path": "/users/ünï", "status": 201, "micros": 345})
        );
        assert_eq!(json.iter().filter(|&&b| b == b'\n').count(), 1);
        // With tracing on, the trace and span ids as W3C Trace Context writes them.
        let traced =
            RequestLine { trace_id: 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736, span_id: 0xf067_aa0b_a902_b7, ..line };
        let mut framed = Vec::new();
        traced.encode(&mut framed);
        let mut json = Vec::new();
        RequestLine::decode(&framed).format_json(&mut json, &mut Timestamps::default());
        let object: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(object["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(object["span_id"], "00f067aa0ba902b7");
    }

    /// The cached date and time of day give humantime's text, in one second and across seconds,
    /// days and years.
    #[test]
    fn timestamps_are_humantimes() {
        let mut stamps = Timestamps::default();
        let seconds = [0_u64, 59, 86_399, 86_400, 951_782_400, 1_764_596_823, 1_764_596_824, 4_102_444_799];
        for second in seconds {
            for micros in [0_u64, 1, 9, 10, 999, 631_678, 999_999] {
                let at = second * 1_000_000 + micros;
                let mut ours = Vec::new();
                stamps.write(at, &mut ours);
                let theirs = humantime::format_rfc3339_micros(SystemTime::UNIX_EPOCH + Duration::from_micros(at));
                assert_eq!(String::from_utf8(ours).unwrap(), theirs.to_string(), "{at}");
            }
        }
    }

    /// Records of both kinds come out of one batch in the order they went in.
    #[test]
    fn text_and_request_records_keep_their_order() {
        let queue = LogQueue::new(MAX_RECORDS, MAX_BYTES);
        assert!(queue.push_text(b"first\n"));
        let line = RequestLine {
            at_micros: 0,
            id: 1,
            status: 200,
            micros: 9,
            method: b"GET",
            path: b"/health",
            route: b"/health",
            trace_id: 0,
            span_id: 0,
        };
        assert!(queue.push(REQUEST, line.encoded_len(), |out| line.encode(out)));
        assert!(queue.push_text(b"last\n"));
        let mut batch = Vec::new();
        assert_eq!(queue.next_batch(&mut batch), Some(3));
        let mut text = Vec::new();
        format_batch(&batch, &mut text, &mut Timestamps::default());
        let text = String::from_utf8(text).unwrap();
        assert_eq!(
            text,
            "first\n1970-01-01T00:00:00.000000Z  INFO nagi::request: request=1 method=GET path=/health status=200 micros=9\nlast\n"
        );
        assert_eq!(queue.len(), 0);
    }
}
