//! Logging that never blocks a request: `tracing` events are formatted on the caller's thread into
//! one record each, try-pushed into a bounded in-memory queue, and written to stdout by a separate
//! writer thread.
//!
//! The queue holds at most [`MAX_RECORDS`] records and [`MAX_BYTES`] bytes of payload, and a record
//! is cut to [`MAX_RECORD`] bytes. When a record does not fit, it is dropped and counted: a slow,
//! stalled or closed stdout costs log lines, never a request's latency or success. The writer
//! reports the count as a `nagi: dropped N log records` line when writing resumes, and the total at
//! shutdown (to stdout if it still takes writes, and to stderr).
//!
//! The request side holds the queue's lock only to push a finished record; the writer holds it only
//! to pop, never while writing.

use std::collections::VecDeque;
use std::fmt::Display;
use std::io::{self, BufWriter, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// The most records the queue holds.
pub const MAX_RECORDS: usize = 8_192;
/// The most payload bytes the queue holds (16 MiB).
pub const MAX_BYTES: usize = 16 * 1024 * 1024;
/// The longest formatted record (64 KiB); longer ones are cut and end with ` [cut]`.
pub const MAX_RECORD: usize = 64 * 1024;

/// How much the writer takes from the queue at once, so that at most this much is held outside
/// the queue's accounting while it is being written.
const BATCH_BYTES: usize = 256 * 1024;
const BATCH_RECORDS: usize = 256;

const CUT_MARK: &[u8] = b" [cut]\n";

/// A bounded queue of formatted log records, shared by the producers and one writer thread.
pub struct LogQueue {
    state: Mutex<State>,
    ready: Condvar,
    max_records: usize,
    max_bytes: usize,
}

struct State {
    records: VecDeque<Vec<u8>>,
    bytes: usize,
    dropped: u64,
    /// How many records the writer has taken and not finished writing.
    in_flight: usize,
    closed: bool,
}

impl LogQueue {
    /// A queue holding at most `max_records` records and `max_bytes` payload bytes.
    pub fn new(max_records: usize, max_bytes: usize) -> LogQueue {
        LogQueue {
            state: Mutex::new(State { records: VecDeque::new(), bytes: 0, dropped: 0, in_flight: 0, closed: false }),
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
        let record = cut(record);
        let mut state = self.lock();
        if state.closed || state.records.len() >= self.max_records || state.bytes + record.len() > self.max_bytes {
            state.dropped += 1;
            return false;
        }
        state.bytes += record.len();
        state.records.push_back(record);
        drop(state);
        self.ready.notify_one();
        true
    }

    /// How many records have been dropped (or lost to a failed write) so far.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// How many records are queued.
    pub fn len(&self) -> usize {
        self.lock().records.len()
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
        (state.records.len() + state.in_flight) as u64
    }

    /// Waits for records and takes up to one batch of them; `None` once closed and empty.
    fn next_batch(&self) -> Option<Vec<Vec<u8>>> {
        let mut state = self.lock();
        while state.records.is_empty() {
            if state.closed {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        let mut batch = Vec::new();
        let mut bytes = 0;
        while bytes < BATCH_BYTES && batch.len() < BATCH_RECORDS {
            let Some(record) = state.records.pop_front() else { break };
            state.bytes -= record.len();
            bytes += record.len();
            batch.push(record);
        }
        state.in_flight = batch.len();
        Some(batch)
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
        ShutdownReport { drained, dropped: self.queue.dropped(), unwritten }
    }
}

/// The writer thread's loop.
fn write_records(queue: &LogQueue, sink: &mut dyn Write) {
    let mut reported = 0;
    let mut broken = false;
    while let Some(batch) = queue.next_batch() {
        let mut lost = 0;
        for record in &batch {
            if broken || sink.write_all(record).is_err() {
                broken = true;
                lost += 1;
            }
        }
        if !broken && sink.flush().is_err() {
            broken = true;
        }
        queue.batch_done(lost);
        // Records were dropped while the sink was slow; now that a write went through, say so.
        let dropped = queue.dropped();
        if !broken && dropped > reported {
            broken =
                writeln!(sink, "nagi: dropped {} log records", dropped - reported).and_then(|()| sink.flush()).is_err();
            reported = dropped;
        }
    }
    let dropped = queue.dropped();
    if !broken && dropped > 0 {
        let _ = writeln!(sink, "nagi: dropped {dropped} log records in total").and_then(|()| sink.flush());
    }
}

/// The `MakeWriter` that hands each formatted event to the queue as one record.
struct QueueWriter(Arc<LogQueue>);

/// One event's formatted bytes, pushed into the queue when the formatter drops it.
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
        if !self.bytes.is_empty() {
            self.queue.try_push(std::mem::take(&mut self.bytes));
        }
    }
}

impl<'a> MakeWriter<'a> for QueueWriter {
    type Writer = RecordBuffer<'a>;

    fn make_writer(&'a self) -> RecordBuffer<'a> {
        RecordBuffer { queue: &self.0, bytes: Vec::new() }
    }
}

static GLOBAL: OnceLock<Arc<LogQueue>> = OnceLock::new();

/// Keeps the process's log writer; [`LogGuard::shutdown`] writes out what is queued.
pub struct LogGuard {
    writer: LogWriter,
}

/// Installs the process-wide `tracing` subscriber: the standard `fmt` format without colours
/// (`<time> <LEVEL> <target>: <message> <fields>`), events at `level` and above, written to stdout
/// through the queue. Printed lines of the program (`print`) go through the queue too from then on.
///
/// When a global subscriber is already installed (e.g. by a test), the runtime's events go to that
/// one and the returned guard's writer stays idle.
pub fn init(level: tracing::Level) -> LogGuard {
    let queue = Arc::new(LogQueue::new(MAX_RECORDS, MAX_BYTES));
    let sink = Box::new(BufWriter::with_capacity(64 * 1024, io::stdout()));
    let writer = LogWriter::start(Arc::clone(&queue), sink);
    let subscriber = tracing_subscriber::fmt()
        .with_writer(QueueWriter(Arc::clone(&queue)))
        .with_ansi(false)
        .with_max_level(level)
        .finish();
    if tracing::subscriber::set_global_default(subscriber).is_ok() {
        let _ = GLOBAL.set(queue);
    }
    LogGuard { writer }
}

impl LogGuard {
    /// Writes out the queue, waiting at most 2 s for a stalled stdout, and reports on stderr how
    /// many records were lost, as `nagi: dropped N log records`: those dropped while the queue was
    /// full plus, when stdout stalled, those still unwritten.
    pub fn shutdown(self) {
        let report = self.writer.shutdown(Duration::from_secs(2));
        let mut stderr = io::stderr();
        let lost = report.dropped + report.unwritten;
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
            queue.try_push(format!("{value}\n").into_bytes());
            true
        }
        _ => false,
    }
}
