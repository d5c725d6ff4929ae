//! Input rules that hold against hostile clients (docs/http.md), on both emitters from one
//! harness: the users service (`examples/users.nagi`) built by `nagic build` and sent requests
//! written byte by byte. A class body is a JSON object; a body that is not well-formed JSON is 400
//! whatever else is wrong with it; `-0` is an integer; an HTTP/1.1 request has one `Host`; echoed
//! input is capped; a head over `--max-head-bytes` is 431; a database that cannot be written
//! stops the service before it listens, with exit status 2.

mod support;

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

crate::on_every_backend!(
    a_class_body_is_a_json_object,
    a_body_that_is_not_well_formed_json_is_400_whatever_else_is_wrong,
    minus_zero_is_an_integer_zero,
    an_http_1_1_request_has_exactly_one_host,
    echoed_input_is_capped,
    a_head_over_the_limit_is_431,
    an_unwritable_database_stops_the_service_with_status_2,
);
