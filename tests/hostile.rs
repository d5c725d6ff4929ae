//! Input rules that hold against hostile clients (docs/http.md), on both emitters from one
//! harness: the users service (`examples/users.nagi`) built by `nagic build` and sent requests
//! written byte by byte. A class body is a JSON object; a body that is not well-formed JSON is 400
//! whatever else is wrong with it; `-0` is an integer; an HTTP/1.1 request has one `Host`; echoed
//! input is capped; a head over `--max-head-bytes` is 431; a database that cannot be written
//! stops the service before it listens, with exit status 2; a full database is 507 until there is
//! room; a query returns at most `--max-query-rows` rows; a client that stops reading is closed
//! and logged.
//!
//! The memory bound (`--memory-limit`) is checked on the service's resident memory as the kernel
//! counts it (`VmHWM`, the peak, from `/proc/PID/status`) while clients hold bodies half sent,
//! leave answers unread and send heads that never end.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use support::{Backend, Server, build, temp_dir};

const USERS: &str = "examples/users.nagi";

fn start(tag: &str, backend: Backend) -> (Server, std::path::PathBuf) {
    let db = temp_dir(tag).join("users.db");
    (Server::start(&build(USERS, backend), &db, None, &[]), db)
}

/// The number of rows of `users`, read from the file.
fn count(db: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(db).expect("the database file opens");
    conn.query_row("SELECT count(*) FROM users", [], |r| r.get(0)).expect("users exists")
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A `POST /users` of `body` (any bytes) as JSON.
fn post(body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST /users HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

fn a_class_body_is_a_json_object(backend: Backend) {
    let (server, db) = start("array-body", backend);
    let (status, text) = server.raw(&post(br#"[9219,"a",1]"#));
    assert_eq!(status, 422, "{text}");
    assert_eq!(json(&text)["detail"], "the body must be a JSON object (class User), found an array", "{text}");
    assert_eq!(server.raw(&post(b"7")).0, 422);
    assert_eq!(count(&db), 0, "a refused body wrote a row");
    assert_eq!(server.raw(&post(br#"{"id":9219,"name":"a","age":1}"#)).0, 201);
}

/// A class inside a body is a JSON object too: the array form is 422 at any depth, naming the
/// field and the class.
fn a_class_is_a_json_object_at_every_depth(backend: Backend) {
    let db = temp_dir("nested-body").join("orders.db");
    let server = Server::start(&build("tests/fixtures/nested_body.nagi", backend), &db, None, &[]);
    let line = r#"{"sku":"a","qty":1}"#;
    let ok = format!(r#"{{"id":1,"first":{line},"rest":[{line},{line}],"gift":{line}}}"#);
    assert_eq!(server.send_json("POST", "/orders", &ok), (201, "3".to_owned()));
    for (body, field) in [
        (r#"{"id":1,"first":["a",1],"rest":[]}"#.to_owned(), "first"),
        (format!(r#"{{"id":1,"first":{line},"rest":[{line},["a",1]]}}"#), "rest[1]"),
        (format!(r#"{{"id":1,"first":{line},"rest":[],"gift":["a",1]}}"#), "gift"),
    ] {
        let (status, text) = server.send_json("POST", "/orders", &body);
        assert_eq!(status, 422, "{body}: {text}");
        let detail = json(&text)["detail"].as_str().unwrap_or("").to_owned();
        let expected = format!("{field}: invalid type: sequence, expected struct Line at line 1 column ");
        assert!(detail.starts_with(&expected), "{body}: {detail}");
    }
}

fn a_body_that_is_not_well_formed_json_is_400_whatever_else_is_wrong(backend: Backend) {
    let (server, db) = start("malformed", backend);
    let deep = "[".repeat(100_000);
    let bodies: [&[u8]; 5] = [
        // A type error (name: 5) before the syntax error (the body ends).
        br#"{"id":1,"name":5,"age":"#,
        // Bytes that are not UTF-8 inside a string (RFC 8259 section 8.1).
        b"{\"id\":1,\"name\":\"caf\xe9\",\"age\":1}",
        // A lone surrogate escape.
        br#"{"id":1,"name":"\ud800","age":1}"#,
        br#"{"id":"x","name":"\ud800","age":1}"#,
        deep.as_bytes(),
    ];
    for body in bodies {
        let (status, text) = server.raw(&post(body));
        assert_eq!(status, 400, "{}: {text}", String::from_utf8_lossy(&body[..body.len().min(40)]));
        assert!(json(&text)["detail"].as_str().unwrap_or("").starts_with("malformed JSON: "), "{text}");
    }
    assert_eq!(count(&db), 0, "a refused body wrote a row");
    // A data error in a well-formed body stays 422.
    assert_eq!(server.raw(&post(br#"{"id":1,"name":5,"age":1}"#)).0, 422);
}

fn minus_zero_is_an_integer_zero(backend: Backend) {
    let (server, db) = start("minus-zero", backend);
    let (status, text) = server.raw(&post(br#"{"id":-0,"name":"a -0 \"-0\"","age":-0}"#));
    assert_eq!(status, 201, "{text}");
    assert_eq!(json(&text), serde_json::json!({"id": 0, "name": "a -0 \"-0\"", "age": 0}));
    assert_eq!(count(&db), 1);
    // -0.5 and -01 are not the integer zero.
    assert_eq!(server.raw(&post(br#"{"id":-0.5,"name":"b","age":1}"#)).0, 422);
    assert_eq!(server.raw(&post(br#"{"id":-01,"name":"b","age":1}"#)).0, 400);
}

fn an_http_1_1_request_has_exactly_one_host(backend: Backend) {
    let (server, _db) = start("host", backend);
    let (status, text) = server.raw(b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 400, "{text}");
    assert!(json(&text)["detail"].as_str().unwrap_or("").contains("Host"), "{text}");
    let two = b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n";
    assert_eq!(server.raw(two).0, 400);
    // HTTP/1.0 needs none.
    assert_eq!(server.raw(b"GET /health HTTP/1.0\r\n\r\n").0, 200);
    assert_eq!(server.get("/health").0, 200);
}

fn echoed_input_is_capped(backend: Backend) {
    let (server, _db) = start("echo", backend);
    // 20,000 digits: within the head limit (a 60,000-digit path is a 431 before any route).
    let digits = "9".repeat(20_000);
    let (status, text) = server.get(&format!("/users/{digits}"));
    assert_eq!(status, 400);
    let detail = json(&text)["detail"].as_str().unwrap_or("").to_owned();
    assert!(detail.len() < 300 && detail.contains('…'), "{} bytes: {detail}", detail.len());
    let long = "x".repeat(60_000);
    let (status, text) = server.raw(&post(format!(r#"{{"id":"{long}","name":"a","age":1}}"#).as_bytes()));
    assert_eq!(status, 422);
    let detail = json(&text)["detail"].as_str().unwrap_or("").to_owned();
    assert!(detail.len() < 500 && detail.contains("expected i64"), "{} bytes: {detail}", detail.len());
}

fn a_head_over_the_limit_is_431(backend: Backend) {
    let (server, _db) = start("head", backend);
    // Hyper checks the limit when a read leaves the head unfinished, so a head may pass it by
    // less than one read; 334 KiB (the size that held 400 KiB per connection before) may not.
    let big =
        format!("GET /health HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\nConnection: close\r\n\r\n", "a".repeat(334 * 1024));
    assert_eq!(server.raw(big.as_bytes()).0, 431);
    let fits = format!("GET /health HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\nConnection: close\r\n\r\n", "a".repeat(20_000));
    assert_eq!(server.raw(fits.as_bytes()).0, 200);
}

/// A database that cannot be written stops the service at start, naming the path and the
/// operating system's reason, with exit status 2 (a misconfiguration), not per request.
fn an_unwritable_database_stops_the_service_with_status_2(backend: Backend) {
    let exe = build(USERS, backend);
    let dir = temp_dir("unwritable");
    let missing = dir.join("no-such-folder").join("users.db");
    for (db, reason) in [(dir.clone(), "Is a directory"), (missing, "No such file or directory")] {
        let output = support::run_to_exit(&exe, &db);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{}: {stderr}", db.display());
        assert!(stderr.contains(&format!("the database {} cannot be written", db.display())), "{stderr}");
        assert!(stderr.contains(reason), "{stderr}");
    }
}

/// A field of `/proc/PID/status` in KiB (`VmRSS`, or `VmHWM`: the peak so far).
fn memory_kib(server: &Server, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).expect("the status reads");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':')?.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in:\n{status}"))
}

/// What the service may hold beyond its memory limit, by docs/http.md ("Memory"): a connection's
/// head buffer and a small answer, at most 64 KiB each, per open connection; the answer a worker
/// thread is serializing, up to twice its size while its buffer grows (`answer` bytes, the
/// largest); and a fixed slack for the allocator's own keeping and the program's working memory.
fn margin_kib(connections: u64, answer: u64) -> u64 {
    connections * 2 * 64 + 2 * answer / 1024 + 16 * 1024
}

const MIB: u64 = 1024 * 1024;

/// 300 connections each send 999,999 bytes of a 1,000,000-byte body and hold. The bodies that fit
/// in the memory limit are read; the rest are answered 503 without being read, `/health` answers
/// throughout, and the peak resident memory stays under the limit plus the documented margin.
/// Then the held bodies are finished: each writes its row, and no refused one wrote anything.
fn bodies_beyond_the_memory_limit_are_refused_and_memory_stays_bounded(backend: Backend) {
    const LIMIT: u64 = 64 * MIB;
    const BODY: usize = 1_000_000;
    let dir = temp_dir("memory-bodies");
    let (db, log) = (dir.join("users.db"), dir.join("stdout.log"));
    let server = Server::start(&build(USERS, backend), &db, Some(&log), &["--memory-limit", &LIMIT.to_string()]);
    let before = memory_kib(&server, "VmRSS");
    // `{"id":N,"name":"a","age":1` padded with spaces to one byte short of the body; `}` ends it.
    let unfinished = |id: usize| {
        let mut request = format!(
            "POST /users HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n\
             Content-Length: {BODY}\r\n\r\n"
        )
        .into_bytes();
        let mut body = format!(r#"{{"id":{id},"name":"a","age":1"#).into_bytes();
        body.resize(BODY - 1, b' ');
        request.extend_from_slice(&body);
        request
    };
    let port = server.port;
    // One thread per connection: a refused body's write blocks until its connection is closed.
    let senders: Vec<_> = (0..300)
        .map(|id| {
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connects");
                stream.set_write_timeout(Some(Duration::from_secs(10))).expect("timeout");
                // A refused body's connection is closed under the write: not an error here.
                let _ = stream.write_all(&unfinished(id));
                (id, stream)
            })
        })
        .collect();
    let mut streams = Vec::new();
    for (n, sender) in senders.into_iter().enumerate() {
        if n % 30 == 0 {
            assert_eq!(server.get("/health").0, 200, "/health while bodies are held");
        }
        streams.push(sender.join().expect("a sender thread"));
    }
    // Past the half second a body waits for room, every body that did not fit has its 503.
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(server.get("/health").0, 200, "/health while bodies are held");
    let peak = memory_kib(&server, "VmHWM");
    let (mut held, mut refused) = (Vec::new(), 0);
    for (id, mut stream) in streams {
        // Every 503 has arrived by now: a stream with nothing to read is one whose body is held.
        stream.set_nonblocking(true).expect("non-blocking");
        let mut answer = Vec::new();
        match stream.read_to_end(&mut answer) {
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock && answer.is_empty() => {
                held.push((id, stream))
            }
            _ => {
                let text = String::from_utf8_lossy(&answer);
                assert!(answer.is_empty() || text.starts_with("HTTP/1.1 503"), "{text}");
                refused += 1;
            }
        }
    }
    eprintln!(
        "{backend:?}: {} bodies held, {refused} refused; VmRSS {before} KiB at start, VmHWM {peak} KiB",
        held.len()
    );
    assert!(refused > 0 && !held.is_empty(), "{} held, {refused} refused", held.len());
    assert!(held.len() as u64 <= LIMIT / BODY as u64, "{} bodies of {BODY} bytes held under {LIMIT}", held.len());
    let bound = before + LIMIT / 1024 + margin_kib(300, 0);
    assert!(peak <= bound, "VmHWM {peak} KiB over {bound} KiB");
    let accepted = held.len() as i64;
    for (id, mut stream) in held {
        stream.set_nonblocking(false).expect("blocking");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        stream.write_all(b"}").expect("the last byte");
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 201"), "user {id}: {text}");
    }
    assert_eq!(count(&db), accepted, "only the bodies that were read wrote a row");
    assert!(server.stop().success());
    let text = std::fs::read_to_string(&log).expect("the log reads");
    assert!(!text.contains("memory budget still counts"), "{text}");
}

/// 20 clients ask for a 5 MB page and never read it: the answers that fit in the memory limit
/// wait in memory for their clients, the others are answered 503, and the peak resident memory
/// stays under the limit plus the margin.
fn answers_nobody_reads_stay_within_the_memory_limit(backend: Backend) {
    const LIMIT: u64 = 32 * MIB;
    let db = temp_dir("memory-answers").join("users.db");
    seed_users(&db, 1_000, 5_000);
    let server = Server::start(&build(USERS, backend), &db, None, &["--memory-limit", &LIMIT.to_string()]);
    let before = memory_kib(&server, "VmRSS");
    let mut clients = Vec::new();
    for _ in 0..20 {
        clients.push(unread_page(&server));
    }
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(server.get("/health").0, 200);
    let peak = memory_kib(&server, "VmHWM");
    let mut statuses = Vec::new();
    for mut stream in clients {
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).expect("an answer begins");
        statuses.push(String::from_utf8_lossy(&head[9..12]).into_owned());
    }
    let served = statuses.iter().filter(|s| *s == "200").count() as u64;
    eprintln!("{backend:?}: answers {statuses:?}; VmRSS {before} KiB at start, VmHWM {peak} KiB");
    assert!(statuses.iter().all(|s| s == "200" || s == "503"), "{statuses:?}");
    assert!(served >= 1 && served < 20, "{statuses:?}");
    let bound = before + LIMIT / 1024 + margin_kib(20, 5_100_000);
    assert!(peak <= bound, "VmHWM {peak} KiB over {bound} KiB");
}

/// 300 connections each send 334 KiB of a head that never ends: each is answered 431 (or
/// closed) at `--max-head-bytes`, and the peak resident memory stays under the margin.
fn heads_that_never_end_hold_little(backend: Backend) {
    let (server, _db) = start("memory-heads", backend);
    let before = memory_kib(&server, "VmRSS");
    let head = format!("GET /health HTTP/1.1\r\nHost: a\r\nX-Big: {}", "a".repeat(334 * 1024));
    let mut streams = Vec::new();
    for _ in 0..300 {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connects");
        stream.set_write_timeout(Some(Duration::from_secs(10))).expect("timeout");
        let _ = stream.write_all(head.as_bytes());
        streams.push(stream);
    }
    assert_eq!(server.get("/health").0, 200);
    let peak = memory_kib(&server, "VmHWM");
    for mut stream in streams {
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer);
        assert!(answer.is_empty() || text.starts_with("HTTP/1.1 431"), "{text}");
    }
    eprintln!("{backend:?}: 300 unfinished heads; VmRSS {before} KiB at start, VmHWM {peak} KiB");
    let bound = before + margin_kib(300, 0);
    assert!(peak <= bound, "VmHWM {peak} KiB over {bound} KiB");
}

/// `users` filled with `rows` users whose names are `name_bytes` long, written straight into the
/// database file before the service starts.
fn seed_users(db: &std::path::Path, rows: i64, name_bytes: usize) {
    let mut conn = rusqlite::Connection::open(db).expect("the database file opens");
    conn.execute_batch(
        "CREATE TABLE users (id INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL, age INTEGER NOT NULL)",
    )
    .expect("the table");
    let tx = conn.transaction().expect("begin");
    let name = "n".repeat(name_bytes);
    for id in 0..rows {
        tx.execute("INSERT INTO users (id, name, age) VALUES (?1, ?2, 30)", (id, &name)).expect("insert");
    }
    tx.commit().expect("commit");
}

/// A connection that asks for a page of 1,000 users and reads nothing of it, with a receive
/// buffer made small (before it connects) so that the answer stalls in the server.
fn unread_page(server: &Server) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a socket");
    socket.set_recv_buffer_size(4096).expect("a small receive buffer");
    let address: std::net::SocketAddr = format!("127.0.0.1:{}", server.port).parse().expect("an address");
    socket.connect(&address.into()).expect("connects");
    let mut stream: TcpStream = socket.into();
    stream.write_all(b"GET /users?limit=1000 HTTP/1.1\r\nHost: a\r\n\r\n").expect("writes");
    stream
}

/// A client that stops taking its answer is closed after the idle timeout, and `nagi::conn` says
/// so in the log.
fn a_client_that_stops_reading_is_closed_and_logged(backend: Backend) {
    let dir = temp_dir("slow-reader");
    let (db, log) = (dir.join("users.db"), dir.join("stdout.log"));
    seed_users(&db, 1_000, 5_000);
    let server = Server::start(&build(USERS, backend), &db, Some(&log), &["--idle-timeout-ms", "1000"]);
    let mut stream = unread_page(&server);
    let mut first = [0u8; 1];
    stream.read_exact(&mut first).expect("the answer starts");
    std::thread::sleep(Duration::from_millis(2_500));
    let text = std::fs::read_to_string(&log).expect("the log reads");
    let line = text.lines().find(|line| line.contains("took no byte of its answer"));
    assert!(line.is_some_and(|line| line.contains("nagi::conn") && line.contains("1000 ms")), "{text}");
}

/// A write that would grow the database past `--db-max-bytes` is answered 507 with
/// `Retry-After`, as a full disk is (both are SQLite's `SQLITE_FULL`), writes nothing, and the
/// service keeps serving; once rows are deleted, writes fit again.
fn a_full_database_is_507_until_there_is_room(backend: Backend) {
    let db = temp_dir("full").join("users.db");
    let server = Server::start(&build(USERS, backend), &db, None, &["--db-max-bytes", "65536"]);
    let name = "n".repeat(2_000);
    let user = |id: i64| format!(r#"{{"id":{id},"name":"{name}","age":1}}"#);
    let mut id = 0;
    let (status, text) = loop {
        let (status, text) = server.send_json("POST", "/users", &user(id));
        if status != 201 {
            break (status, text);
        }
        id += 1;
        assert!(id < 100, "64 KiB never filled");
    };
    assert_eq!(status, 507, "{text}");
    assert!(json(&text)["detail"].as_str().unwrap_or("").contains("nothing was written"), "{text}");
    let head = server.head_json_with("POST", "/users", "", &user(id));
    assert!(head.to_ascii_lowercase().contains("retry-after: 60"), "{head}");
    assert_eq!(count(&db), id, "the refused write left nothing");
    assert_eq!(server.get("/health").0, 200);
    for gone in 0..4 {
        assert_eq!(server.request("DELETE", &format!("/users/{gone}"), None, "").0, 200);
    }
    assert_eq!(server.send_json("POST", "/users", &user(id)).0, 201, "a write fits once there is room");
    assert_eq!(count(&db), id - 4 + 1);
}

/// A `db.query` returns at most `--max-query-rows` rows: one with more is answered 500 naming
/// the flag. The users example pages with a bounded `limit`, as a careful service does.
fn a_query_returns_at_most_max_query_rows(backend: Backend) {
    let db = temp_dir("query-rows").join("users.db");
    seed_users(&db, 8, 1);
    let server = Server::start(&build(USERS, backend), &db, None, &["--max-query-rows", "5"]);
    let (status, text) = server.get("/users?limit=8");
    assert_eq!(status, 500, "{text}");
    assert!(json(&text)["detail"].as_str().unwrap_or("").contains("more than 5 rows"), "{text}");
    let (status, text) = server.get("/users?limit=5");
    assert_eq!((status, json(&text).as_array().map(Vec::len)), (200, Some(5)), "{text}");
    for (query, detail) in
        [("limit=0", "limit is 1 to 1000"), ("limit=1001", "limit is 1 to 1000"), ("offset=-1", "offset is 0 or more")]
    {
        let (status, text) = server.get(&format!("/users?{query}"));
        assert_eq!((status, json(&text)["detail"].as_str()), (422, Some(detail)), "{text}");
    }
}

crate::on_every_backend!(
    a_class_is_a_json_object_at_every_depth,
    a_client_that_stops_reading_is_closed_and_logged,
    a_full_database_is_507_until_there_is_room,
    a_query_returns_at_most_max_query_rows,
    bodies_beyond_the_memory_limit_are_refused_and_memory_stays_bounded,
    answers_nobody_reads_stay_within_the_memory_limit,
    heads_that_never_end_hold_little,
    a_class_body_is_a_json_object,
    a_body_that_is_not_well_formed_json_is_400_whatever_else_is_wrong,
    minus_zero_is_an_integer_zero,
    an_http_1_1_request_has_exactly_one_host,
    echoed_input_is_capped,
    a_head_over_the_limit_is_431,
    an_unwritable_database_stops_the_service_with_status_2,
);
