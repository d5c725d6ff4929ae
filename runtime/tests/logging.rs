//! The log queue: bounded by records and bytes, never blocking the producer, dropping and counting
//! what does not fit, and reporting the count when the sink writes again.

use std::io::{self, Write};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nagi_runtime::logging::{LogQueue, LogWriter, MAX_BYTES, MAX_RECORD, MAX_RECORDS, cut};

/// A sink that signals each write, then blocks until the test opens the gate, and keeps what it
/// was given.
struct GatedSink {
    entered: Sender<()>,
    gate: Arc<Mutex<Option<Receiver<()>>>>,
    written: Arc<Mutex<Vec<u8>>>,
}

impl Write for GatedSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _ = self.entered.send(());
        // Block until the gate sender sends or is dropped, once; later writes pass straight through.
        if let Some(gate) = self.gate.lock().expect("gate").take() {
            let _ = gate.recv();
        }
        self.written.lock().expect("written").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct Stalled {
    queue: Arc<LogQueue>,
    writer: LogWriter,
    open_gate: Sender<()>,
    written: Arc<Mutex<Vec<u8>>>,
}

/// A queue whose writer has taken the record `first` and is stuck writing it.
fn stalled(max_records: usize, max_bytes: usize) -> Stalled {
    let queue = Arc::new(LogQueue::new(max_records, max_bytes));
    let (entered_tx, entered) = channel();
    let (open_gate, gate) = channel();
    let written = Arc::new(Mutex::new(Vec::new()));
    let sink = GatedSink { entered: entered_tx, gate: Arc::new(Mutex::new(Some(gate))), written: Arc::clone(&written) };
    let writer = LogWriter::start(Arc::clone(&queue), Box::new(sink));
    assert!(queue.try_push(b"first\n".to_vec()));
    entered.recv_timeout(Duration::from_secs(5)).expect("the writer took the first record");
    Stalled { queue, writer, open_gate, written }
}

#[test]
fn a_stalled_sink_drops_and_counts_by_record_count() {
    let Stalled { queue, writer, open_gate, written } = stalled(MAX_RECORDS, MAX_BYTES);
    let started = Instant::now();
    let accepted = (0..10_000).filter(|i| queue.try_push(format!("record {i}\n").into_bytes())).count();
    assert!(started.elapsed() < Duration::from_secs(2), "pushing into a full queue must not wait");
    assert_eq!(accepted, MAX_RECORDS);
    assert_eq!(queue.len(), MAX_RECORDS);
    assert_eq!(queue.dropped(), (10_000 - MAX_RECORDS) as u64);

    open_gate.send(()).expect("open the gate");
    let report = writer.shutdown(Duration::from_secs(10));
    assert!(report.drained);
    assert_eq!(report.dropped, 1_808);
    // The peak is the limit it reached, never past it; "first" had been taken by the writer.
    assert_eq!(report.peak.0, MAX_RECORDS);
    assert_eq!(
        report.peak.1,
        "record 0\n".len() * 10
            + "record 10\n".len() * 90
            + "record 100\n".len() * 900
            + "record 1000\n".len() * (MAX_RECORDS - 1000)
    );
    let text = String::from_utf8(written.lock().expect("written").clone()).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "first");
    assert_eq!(lines.iter().filter(|l| l.starts_with("record ")).count(), MAX_RECORDS);
    assert!(lines.contains(&"record 0") && lines.contains(&"record 8191") && !lines.contains(&"record 8192"));
    // Reported once writing resumed, and again in total at shutdown.
    assert!(lines.contains(&"nagi: dropped 1808 log records"), "{:?}", &lines[lines.len() - 3..]);
    assert_eq!(lines.last(), Some(&"nagi: dropped 1808 log records in total"));
}

#[test]
fn a_stalled_sink_drops_and_counts_by_bytes() {
    let Stalled { queue, writer, open_gate, .. } = stalled(MAX_RECORDS, MAX_BYTES);
    let big = vec![b'x'; MAX_RECORD];
    let accepted = (0..300).filter(|_| queue.try_push(big.clone())).count();
    assert_eq!(accepted, MAX_BYTES / MAX_RECORD);
    assert!(queue.queued_bytes() <= MAX_BYTES);
    assert_eq!(queue.dropped(), 300 - accepted as u64);
    assert_eq!(queue.peak(), (accepted, accepted * MAX_RECORD));
    drop(open_gate);
    assert!(writer.shutdown(Duration::from_secs(10)).drained);
}

#[test]
fn shutdown_does_not_wait_for_a_sink_that_never_returns() {
    let Stalled { queue, writer, open_gate, .. } = stalled(16, 1024);
    assert!(queue.try_push(b"queued\n".to_vec()));
    let started = Instant::now();
    let report = writer.shutdown(Duration::from_millis(200));
    assert!(!report.drained);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(!queue.try_push(b"after close\n".to_vec()), "a closed queue takes no records");
    drop(open_gate);
}

struct ClosedSink;

impl Write for ClosedSink {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    }

    fn flush(&mut self) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

#[test]
fn a_closed_sink_loses_records_without_failing_producers() {
    let queue = Arc::new(LogQueue::new(MAX_RECORDS, MAX_BYTES));
    let writer = LogWriter::start(Arc::clone(&queue), Box::new(ClosedSink));
    for i in 0..100 {
        queue.try_push(format!("line {i}\n").into_bytes());
    }
    let report = writer.shutdown(Duration::from_secs(5));
    assert!(report.drained);
    assert_eq!(report.dropped, 100, "every record is counted as lost");
}

#[test]
fn long_records_are_cut_at_a_character_boundary() {
    assert_eq!(cut(b"short\n".to_vec()), b"short\n");
    let exact = vec![b'a'; MAX_RECORD];
    assert_eq!(cut(exact.clone()), exact);
    let long = "é".repeat(MAX_RECORD).into_bytes();
    let cut = cut(long);
    assert!(cut.len() <= MAX_RECORD);
    let text = String::from_utf8(cut).expect("still UTF-8");
    assert!(text.ends_with("é [cut]\n"));
    let queue = LogQueue::new(4, MAX_BYTES);
    assert!(queue.try_push(vec![b'z'; 3 * MAX_RECORD]));
    assert_eq!(queue.queued_bytes(), MAX_RECORD);
}
