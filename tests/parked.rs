//! Capacity of a service: 10,000 keep-alive connections at once, and 10,000 requests parked at
//! once in an `await`.
//!
//! Parked requests: each `POST /users` of `examples/users.nagi`
//! waits for the database, which another connection holds locked, on a service with one worker.
//! While they wait, `/health` is still answered; once the lock is released every one of them is
//! answered 201 and stored; and afterwards the compiled code owns nothing (the LLVM build reports
//! the buffers its code still owns when it stops: a frame leaked by a cancelled or finished
//! request would show there). The resident memory before, while parked and after is printed, per
//! parked request, for `bench/README.md`; it is reported, not asserted (the allocator keeps
//! freed pages).

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use support::{Backend, Server, build, temp_dir};

const PARKED: usize = 10_000;

/// The service's resident memory in KiB (`VmRSS` of /proc/PID/status).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the service's status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number")
}

/// One capacity test at a time: each holds 10,000 client sockets in this process, and two at
/// once would pass the descriptor limit (and measure each other).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Makes room for this many sockets in this process and the service it starts.
fn raise_fd_limit(wanted: u64) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid rlimit to fill and then pass back.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        assert!(
            limit.rlim_max >= wanted,
            "this test needs {wanted} file descriptors; the hard limit is {}",
            limit.rlim_max
        );
        limit.rlim_cur = limit.rlim_cur.max(wanted);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
}

fn post(stream: &mut TcpStream, id: usize) {
    let body = format!(r#"{{"id":{id},"name":"parked {id}","age":30}}"#);
    let request = format!(
        "POST /users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("the request is sent");
}

/// Reads one response's status line and skips the rest of what arrived.
fn status(stream: &mut TcpStream) -> u16 {
    let mut buffer = [0u8; 512];
    let n = stream.read(&mut buffer).unwrap_or(0);
    let text = String::from_utf8_lossy(&buffer[..n]);
    text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn ten_thousand_requests_parked_in_an_await_are_answered_and_leave_nothing_behind(backend: Backend) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // Each process (this one and the service) holds one socket per parked request.
    raise_fd_limit(PARKED as u64 + 1_000);
    let dir = temp_dir("parked");
    let db = dir.join("users.db");
    let log_path = dir.join("service.log");
    let flags =
        ["--workers", "1", "--max-connections", "20000", "--busy-timeout-ms", "120000", "--timeout-ms", "240000"];
    let server = Server::start(&build("examples/users.nagi", backend), &db, Some(&log_path), &flags);
    let pid = server.child.id();
    // Warm up the paths the parked requests take, then take the baseline.
    for id in 0..100 {
        let body = format!(r#"{{"id":{},"name":"warm","age":1}}"#, 1_000_000 + id);
        assert_eq!(server.send_json("POST", "/users", &body).0, 201);
    }
    std::thread::sleep(Duration::from_millis(200));
    let baseline = rss_kib(pid);

    let locker = rusqlite::Connection::open(&db).expect("the file opens");
    // Two waves: memory the first wave leaves resident is kept by the allocator, not leaked, if
    // the second wave (as large) reuses it instead of growing the process.
    let mut report = Vec::new();
    for wave in 0..2 {
        locker.execute_batch("BEGIN IMMEDIATE").expect("takes the write lock");
        let started = Instant::now();
        let mut streams: Vec<TcpStream> = (0..PARKED)
            .map(|i| {
                let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("a connection");
                post(&mut stream, wave * PARKED + i);
                stream
            })
            .collect();
        // Every request is read and parked at its first statement (or waiting for room in the
        // database thread's queue) once the service's memory stops growing.
        let mut parked = rss_kib(pid);
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let now = rss_kib(pid);
            if now <= parked {
                break;
            }
            parked = now;
        }
        let sent = started.elapsed();
        let health_started = Instant::now();
        assert_eq!(server.get("/health"), (200, "\"ok\"".to_string()), "/health while {PARKED} requests wait");
        let health = health_started.elapsed();
        locker.execute_batch("ROLLBACK").expect("releases the lock");
        for stream in &mut streams {
            stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
            assert_eq!(status(stream), 201, "every parked request is stored once the lock is gone");
        }
        let answered = started.elapsed();
        drop(streams);
        std::thread::sleep(Duration::from_millis(500));
        let after = rss_kib(pid);
        let per_request = (parked.saturating_sub(baseline) as f64 * 1024.0) / PARKED as f64;
        report.push(format!(
            "wave {wave}: {PARKED} parked in {sent:.1?}, answered after {answered:.1?}, /health {health:.1?}; RSS \
             parked {parked} KiB ({per_request:.0} B per parked request beyond the baseline), after {after} KiB"
        ));
    }
    let count: i64 = locker.query_row("SELECT count(*) FROM users", [], |r| r.get(0)).expect("the count");
    assert_eq!(count, 2 * PARKED as i64 + 100);
    assert!(server.stop().success());
    let log = std::fs::read_to_string(&log_path).expect("the log");
    eprintln!("{backend:?}: RSS baseline {baseline} KiB; {}", report.join("; "));
    if backend == Backend::Llvm {
        let line = log
            .lines()
            .find(|l| l.contains("buffers the compiled code still owns at shutdown"))
            .unwrap_or_else(|| panic!("no buffer report in the log:\n{log}"));
        let owned = line.split("at shutdown: ").nth(1).and_then(|r| r.split_whitespace().next());
        assert_eq!(owned, Some("0"), "a frame or value leaked: {line}");
    }
}

/// The service's open file descriptors.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

/// Reads one whole `/health` answer (its length is known: `"ok"`), leaving the connection open.
fn health_answer(stream: &mut TcpStream) -> u16 {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 512];
    while !answer.ends_with(b"\"ok\"") {
        let n = stream.read(&mut buffer).expect("an answer");
        assert!(n > 0, "the connection closed before answering");
        answer.extend_from_slice(&buffer[..n]);
    }
    String::from_utf8_lossy(&answer).split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn ten_thousand_keep_alive_connections_are_answered_and_closed_without_a_trace(backend: Backend) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    raise_fd_limit(PARKED as u64 + 1_000);
    let db = temp_dir("connections").join("users.db");
    let flags = ["--workers", "1", "--max-connections", "20000", "--idle-timeout-ms", "120000"];
    let server = Server::start(&build("examples/users.nagi", backend), &db, None, &flags);
    let pid = server.child.id();
    assert_eq!(server.get("/health").0, 200);
    std::thread::sleep(Duration::from_millis(200));
    let (fds_before, rss_before) = (open_fds(pid), rss_kib(pid));
    let started = Instant::now();
    let request = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    let mut streams: Vec<TcpStream> = (0..PARKED)
        .map(|_| {
            let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("a connection");
            stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            stream.write_all(request).expect("the request is sent");
            stream
        })
        .collect();
    for stream in &mut streams {
        assert_eq!(health_answer(stream), 200);
    }
    // Every connection is open and idle now, kept alive; a second request on each still works.
    let answered = started.elapsed();
    let (fds_open, rss_open) = (open_fds(pid), rss_kib(pid));
    for stream in streams.iter_mut().step_by(100) {
        stream.write_all(request).expect("a second request");
        assert_eq!(health_answer(stream), 200);
    }
    drop(streams);
    let deadline = Instant::now() + Duration::from_secs(30);
    while open_fds(pid) > fds_before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let (fds_after, rss_after) = (open_fds(pid), rss_kib(pid));
    assert_eq!(server.get("/health").0, 200);
    assert!(server.stop().success());
    let per_connection = (rss_open.saturating_sub(rss_before) as f64 * 1024.0) / PARKED as f64;
    eprintln!(
        "{backend:?}: {PARKED} keep-alive connections answered in {answered:.1?}; FDs {fds_before} → {fds_open} → \
         {fds_after}; RSS {rss_before} → {rss_open} KiB ({per_connection:.0} B per connection) → {rss_after} KiB"
    );
    assert!(fds_open >= fds_before + PARKED, "every connection was open at once: {fds_open} FDs");
    assert_eq!(fds_after, fds_before, "every closed connection's descriptor is released");
}

crate::on_every_backend!(
    ten_thousand_requests_parked_in_an_await_are_answered_and_leave_nothing_behind,
    ten_thousand_keep_alive_connections_are_answered_and_closed_without_a_trace,
);
