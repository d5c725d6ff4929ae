//! Connection limits over real sockets: the header timeout (a client that sends nothing, one that
//! trickles its head), the idle timeout of keep-alive connections, hundreds of idle sockets at
//! once, the cap on open connections, and shutdown with such connections open.
//!
//! The timeouts under test are short (1 s for the head, 2 s idle) and every bound on a duration is
//! generous, so that a loaded machine does not fail them; each test prints what it measured
//! (`cargo test -- --nocapture` shows it).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::service::{Server, fresh_db_path};

const HEADER_MS: u64 = 1_000;
const IDLE_MS: u64 = 2_000;

/// The longest the server may take to close a connection whose deadline is at most 2 s.
const CLOSED_WITHIN: Duration = Duration::from_secs(3);

/// The lower bound of an expiry, a little under the timeout because the server's clock starts at
/// the accept, a moment after the client's.
fn at_least(ms: u64) -> Duration {
    Duration::from_millis(ms * 9 / 10)
}

/// A server with the short timeouts of these tests.
async fn short_timeouts() -> Server {
    Server::start_with(fresh_db_path(), |config| {
        config.header_timeout_ms = HEADER_MS;
        config.idle_timeout_ms = IDLE_MS;
    })
    .await
}

/// How a read loop ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// The server closed the connection (end of file).
    Closed,
    /// The connection was reset: closed too, without an orderly end.
    Reset,
    /// Still open when the time was up.
    Open,
}

/// Reads until the server closes the connection or `limit` passes; returns what was read, how it
/// ended, and after how long.
async fn read_until_closed(stream: &mut (impl AsyncRead + Unpin), limit: Duration) -> (String, End, Duration) {
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buffer = [0u8; 4096];
    let end = loop {
        match tokio::time::timeout_at(start + limit, stream.read(&mut buffer)).await {
            Err(_) => break End::Open,
            Ok(Ok(0)) => break End::Closed,
            Ok(Ok(n)) => got.extend_from_slice(&buffer[..n]),
            Ok(Err(_)) => break End::Reset,
        }
    };
    (String::from_utf8_lossy(&got).into_owned(), end, start.elapsed())
}

/// Reads one whole answer (head and Content-Length body) from a connection that stays open;
/// returns its status and body.
async fn read_answer(stream: &mut TcpStream) -> (u16, String) {
    let mut got = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |value| value.trim().parse().expect("a content length"));
            if got.len() >= end + 4 + length {
                let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
                return (status, String::from_utf8_lossy(&got[end + 4..end + 4 + length]).into_owned());
            }
        }
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
            .await
            .expect("the answer arrives in time")
            .expect("the connection reads");
        assert!(
            n > 0,
            "the server closed the connection in the middle of an answer: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buffer[..n]);
    }
}

const HEALTH: &[u8] = b"GET /health HTTP/1.1\r\nHost: test\r\n\r\n";

/// `GET /health` on a new connection; the status (`None` when the server closed the connection
/// without a whole answer) and how long the answer took, connecting included.
async fn health(addr: SocketAddr) -> (Option<u16>, Duration) {
    let start = Instant::now();
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    let _ = stream.write_all(b"GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").await;
    let (text, _, _) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
    let status = text.strip_prefix("HTTP/1.1 ").and_then(|rest| rest.get(..3)).and_then(|code| code.parse().ok());
    (status, start.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_connection_is_closed_at_the_header_timeout() {
    let server = short_timeouts().await;
    let mut stream = TcpStream::connect(server.addr).await.expect("connects");
    let (text, end, after) = read_until_closed(&mut stream, CLOSED_WITHIN).await;
    eprintln!("silent connection: {end:?} after {after:?}");
    assert_ne!(end, End::Open, "still open after {after:?}");
    assert_eq!(text, "", "a client that sent nothing gets no answer");
    assert!(after >= at_least(HEADER_MS), "closed after {after:?}, before the header timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickled_head_is_answered_408_and_closed() {
    let server = short_timeouts().await;
    let (mut reader, mut writer) = TcpStream::connect(server.addr).await.expect("connects").into_split();
    // One byte every 300 ms: a complete head would take 11 s.
    let trickle = tokio::spawn(async move {
        for byte in HEALTH {
            if writer.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        // Keep the writing half open, as a slow client would, until the test ends.
        std::future::pending::<()>().await;
    });
    let (text, end, after) = read_until_closed(&mut reader, CLOSED_WITHIN).await;
    trickle.abort();
    eprintln!("trickled head: {end:?} after {after:?}, answer {text:?}");
    assert_ne!(end, End::Open, "still open after {after:?}");
    assert!(after >= at_least(HEADER_MS), "closed after {after:?}, before the header timeout");
    assert!(text.starts_with("HTTP/1.1 408 "), "no 408 but {text:?}");
    assert!(
        text.contains(r#"{"error":"timeout","detail":"the request head did not arrive within 1000 ms"}"#),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keep_alive_connection_waits_past_the_header_timeout_and_closes_at_the_idle_timeout() {
    let server = short_timeouts().await;
    let mut stream = TcpStream::connect(server.addr).await.expect("connects");
    stream.write_all(HEALTH).await.expect("writes");
    assert_eq!(read_answer(&mut stream).await, (200, "\"ok\"".to_owned()));
    // Longer than the header timeout, shorter than the idle timeout: the connection must still
    // take a request, because the header timeout runs only once a head has begun.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    stream.write_all(HEALTH).await.expect("writes");
    assert_eq!(read_answer(&mut stream).await, (200, "\"ok\"".to_owned()));
    let (text, end, after) = read_until_closed(&mut stream, CLOSED_WITHIN).await;
    eprintln!("idle keep-alive connection: {end:?} after {after:?}");
    assert_ne!(end, End::Open, "still open after {after:?}");
    assert_eq!(text, "", "an idle connection is closed without an answer");
    assert!(after >= at_least(IDLE_MS), "closed after {after:?}, before the idle timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_second_head_is_answered_408_at_the_header_timeout() {
    let server = short_timeouts().await;
    let mut stream = TcpStream::connect(server.addr).await.expect("connects");
    stream.write_all(HEALTH).await.expect("writes");
    assert_eq!(read_answer(&mut stream).await.0, 200);
    // Half a head, then nothing: the header timeout, not the longer idle timeout, applies from
    // its first byte.
    stream.write_all(b"GET /hea").await.expect("writes");
    let (text, end, after) = read_until_closed(&mut stream, CLOSED_WITHIN).await;
    eprintln!("stalled second head: {end:?} after {after:?}");
    assert_ne!(end, End::Open, "still open after {after:?}");
    assert!(text.starts_with("HTTP/1.1 408 "), "no 408 but {text:?}");
    assert!(after >= at_least(HEADER_MS), "closed after {after:?}, before the header timeout");
    assert!(
        after < Duration::from_millis(IDLE_MS),
        "closed after {after:?}: the idle timeout applied, not the header timeout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_idle_sockets_do_not_slow_health() {
    let server = Server::start().await;
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(server.addr).await.expect("connects"));
    }
    let mut times = Vec::new();
    for _ in 0..10 {
        let (status, took) = health(server.addr).await;
        assert_eq!(status, Some(200));
        times.push(took);
    }
    times.sort();
    eprintln!(
        "/health with 300 idle sockets open: fastest {:?}, median {:?}, slowest {:?}",
        times[0], times[5], times[9]
    );
    // Unloaded, each takes about a millisecond; 500 ms leaves room for a busy machine while still
    // catching a server that serves connections one after another.
    assert!(times[9] < Duration::from_millis(500), "{times:?}");
    // Nothing was closed to make room: every idle socket is still open, with nothing to read.
    let mut buffer = [0u8; 16];
    for socket in &idle {
        let read = socket.try_read(&mut buffer);
        assert!(matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock), "{read:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_limit_are_refused_with_503_and_health_recovers() {
    let server = Server::start_with(fresh_db_path(), |config| config.max_connections = 50).await;
    let mut sockets = Vec::new();
    for _ in 0..60 {
        sockets.push(TcpStream::connect(server.addr).await.expect("connects"));
    }
    // A refused socket is answered and closed at once; an accepted one stays silent and open.
    let ends = futures_util::future::join_all(
        sockets.iter_mut().map(|socket| read_until_closed(socket, Duration::from_millis(1_000))),
    )
    .await;
    let open = ends.iter().filter(|(_, end, _)| *end == End::Open).count();
    let answered_503 = ends.iter().filter(|(text, _, _)| text.starts_with("HTTP/1.1 503 ")).count();
    eprintln!("60 sockets with --max-connections 50: {open} open, {} refused, {answered_503} answered 503", 60 - open);
    // The harness's own HTTP client keeps one connection open from its first request, so the
    // test's sockets get 49 or 50 places.
    assert!((49..=50).contains(&open), "{open} open");
    assert_eq!(answered_503, 60 - open, "every refused connection is told 503");
    let refused =
        ends.iter().find(|(text, _, _)| !text.is_empty()).map(|(text, _, _)| text.clone()).unwrap_or_default();
    assert!(
        refused.ends_with(r#"{"error":"overloaded","detail":"the server has 50 connections open already"}"#),
        "{refused}"
    );

    let (status, _) = health(server.addr).await;
    assert_ne!(status, Some(200), "a new connection at the limit is refused");
    drop(sockets);
    // The server notices the closed sockets as soon as it reads their end; give it a moment.
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let (status, _) = health(server.addr).await;
        if status == Some(200) {
            break;
        }
        assert!(Instant::now() < deadline, "/health still answers {status:?} after the sockets closed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_silent_and_idle_connections_at_once() {
    let server = Server::start().await;
    let mut silent = TcpStream::connect(server.addr).await.expect("connects");
    let mut idle = TcpStream::connect(server.addr).await.expect("connects");
    idle.write_all(HEALTH).await.expect("writes");
    assert_eq!(read_answer(&mut idle).await.0, 200);
    let start = Instant::now();
    server.stop().await.expect("clean stop");
    let took = start.elapsed();
    eprintln!("shutdown with a silent and an idle connection open: {took:?}");
    // The default timeouts are 10 s and 60 s: a shutdown that waited for them would take that long.
    assert!(took < Duration::from_secs(2), "shutdown took {took:?}");
    for stream in [&mut silent, &mut idle] {
        let (_, end, _) = read_until_closed(stream, Duration::from_secs(1)).await;
        assert_ne!(end, End::Open);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_an_answer_is_disconnected_after_the_idle_timeout() {
    let server = short_timeouts().await;
    // An answer of about 5 MB: far more than the sockets' buffers hold while the client reads
    // nothing (its receive buffer is made small, too), so the server's writing stalls.
    let name = "n".repeat(480);
    let mut conn = rusqlite::Connection::open(&server.db_path).expect("open");
    let tx = conn.transaction().expect("begin");
    for id in 0..10_000 {
        tx.execute("INSERT INTO people (id, name, age) VALUES (?1, ?2, 30)", (id, &name)).expect("insert");
    }
    tx.commit().expect("commit");
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("receive buffer");
    let mut stream = socket.connect(server.addr).await.expect("connects");
    stream.write_all(b"GET /people?limit=10000 HTTP/1.1\r\nHost: test\r\n\r\n").await.expect("writes");
    // The first byte means the handler has answered and the writing has begun; from then on the
    // client takes nothing for longer than the idle timeout.
    let mut first = [0u8; 1];
    stream.read_exact(&mut first).await.expect("the answer starts");
    tokio::time::sleep(Duration::from_millis(IDLE_MS + 1_500)).await;
    // What the kernel had buffered still arrives, then the end: the rest of the answer never does.
    let (text, end, _) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
    let text = format!("{}{text}", char::from(first[0]));
    let (head, body) = text.split_once("\r\n\r\n").expect("a whole head");
    let length: usize = head
        .to_ascii_lowercase()
        .lines()
        .find_map(|line| line.strip_prefix("content-length:").map(|v| v.trim().parse().expect("a length")))
        .expect("a content length");
    eprintln!("stalled reader: {end:?} with {} of {length} body bytes", body.len());
    assert_ne!(end, End::Open, "the connection of a client that stopped reading is still open");
    assert!(body.len() < length, "the whole answer arrived, so the writing never stalled");
}
