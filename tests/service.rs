//! Integration tests of the main job: `examples/users.nagi` compiled by `nagic build` into a
//! native service, started as a real process on a free 127.0.0.1 port with a real SQLite file
//! or a database on a real PostgreSQL server, and driven over real HTTP. Rows are read back
//! from the database with rusqlite or the postgres client.

mod support;

use std::process::Stdio;

use support::{Backend, Engine, Server, TestDb, build, temp_dir};

const USERS: &str = "examples/users.nagi";

fn start(tag: &str, backend: Backend, engine: Engine) -> (Server, TestDb) {
    let exe = build(USERS, backend);
    let db = TestDb::new(engine, tag);
    (Server::start(&exe, db.path(), None, &[]), db)
}

/// A whole number read back from the database.
fn int(cell: &Option<String>) -> i64 {
    cell.as_deref().and_then(|text| text.parse().ok()).unwrap_or_else(|| panic!("not an integer: {cell:?}"))
}

/// The rows of `users`, ordered by id, read straight from the database.
fn rows(db: &TestDb) -> Vec<(i64, String, i64)> {
    db.rows("SELECT id, name, age FROM users ORDER BY id")
        .iter()
        .map(|row| (int(&row[0]), row[1].clone().unwrap_or_default(), int(&row[2])))
        .collect()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn crud_over_http_persists_in_the_sqlite_file(backend: Backend, engine: Engine) {
    let (server, db) = start("crud", backend, engine);
    assert_eq!(server.get("/health"), (200, "\"ok\"".to_string()));

    for (id, name, age) in [(1, "Ada", 36), (2, "Grace", 45), (3, "Linus", 28)] {
        let (status, body) =
            server.send_json("POST", "/users", &format!(r#"{{"id":{id},"name":"{name}","age":{age}}}"#));
        assert_eq!(status, 201, "{body}");
        assert_eq!(json(&body), serde_json::json!({"id": id, "name": name, "age": age}));
    }
    let (status, body) = server.get("/users/2");
    assert_eq!((status, json(&body)), (200, serde_json::json!({"id": 2, "name": "Grace", "age": 45})));

    let (status, body) = server.get("/users?limit=2&offset=1");
    assert_eq!(status, 200);
    assert_eq!(
        json(&body),
        serde_json::json!([{"id": 2, "name": "Grace", "age": 45}, {"id": 3, "name": "Linus", "age": 28}])
    );
    let (_, body) = server.get("/users");
    assert_eq!(json(&body).as_array().map(Vec::len), Some(3), "the default limit lists everyone");

    let (status, body) = server.send_json("PUT", "/users/2", r#"{"id":2,"name":"Grace Hopper","age":46}"#);
    assert_eq!((status, json(&body)), (200, serde_json::json!({"id": 2, "name": "Grace Hopper", "age": 46})));
    assert_eq!(server.send_json("PUT", "/users/9", r#"{"id":9,"name":"Nobody","age":1}"#).0, 404);

    let (status, body) = server.request("DELETE", "/users/1", None, "");
    assert_eq!((status, json(&body)), (200, serde_json::json!({"id": 1, "name": "Ada", "age": 36})));
    assert_eq!(server.get("/users/1").0, 404);

    assert_eq!(rows(&db), vec![(2, "Grace Hopper".to_string(), 46), (3, "Linus".to_string(), 28)]);

    // A graceful stop, then a new process on the same file still has the data.
    assert!(server.stop().success());
    let exe = build(USERS, backend);
    let again = Server::start(&exe, db.path(), None, &[]);
    let (status, body) = again.get("/users/3");
    assert_eq!((status, json(&body)), (200, serde_json::json!({"id": 3, "name": "Linus", "age": 28})));
    assert!(again.stop().success());
}

/// Sends a bad request, checks its status and JSON error, then checks nothing was written and
/// the service still answers.
fn rejected(backend: Backend, engine: Engine, tag: &str, content_type: Option<&str>, body: &str, status: u16) {
    let (server, db) = start(tag, backend, engine);
    let (got, text) = server.request("POST", "/users", content_type, body);
    assert_eq!(got, status, "{tag}: {text}");
    let error = json(&text);
    assert!(error["error"].is_string() && error["detail"].is_string(), "{tag}: error body {text}");
    assert!(rows(&db).is_empty(), "{tag}: a rejected request wrote a row");
    assert_eq!(server.get("/health").0, 200, "{tag}: the service stopped answering");
}

const JSON: Option<&str> = Some("application/json");

fn missing_content_type_is_415(backend: Backend, engine: Engine) {
    rejected(backend, engine, "no-ct", None, r#"{"id":1,"name":"a","age":3}"#, 415);
}

fn non_json_content_type_is_415(backend: Backend, engine: Engine) {
    rejected(backend, engine, "text-ct", Some("text/plain"), r#"{"id":1,"name":"a","age":3}"#, 415);
}

fn json_with_parameters_and_suffix_is_accepted(backend: Backend, engine: Engine) {
    let (server, db) = start("ct-ok", backend, engine);
    let ok = r#"{"id":1,"name":"a","age":3}"#;
    assert_eq!(server.request("POST", "/users", Some("application/json; charset=utf-8"), ok).0, 201);
    let ok2 = r#"{"id":2,"name":"b","age":4}"#;
    assert_eq!(server.request("POST", "/users", Some("application/vnd.nagi+json"), ok2).0, 201);
    assert_eq!(rows(&db).len(), 2);
}

fn empty_body_is_400(backend: Backend, engine: Engine) {
    rejected(backend, engine, "empty", JSON, "", 400);
}

fn malformed_json_is_400(backend: Backend, engine: Engine) {
    rejected(backend, engine, "malformed", JSON, r#"{"id":1,"name":"a","#, 400);
}

fn trailing_bytes_are_400(backend: Backend, engine: Engine) {
    rejected(backend, engine, "trailing", JSON, r#"{"id":1,"name":"a","age":3} x"#, 400);
}

fn missing_field_is_422(backend: Backend, engine: Engine) {
    rejected(backend, engine, "missing", JSON, r#"{"id":1,"name":"a"}"#, 422);
}

fn null_for_a_non_option_is_422(backend: Backend, engine: Engine) {
    rejected(backend, engine, "null", JSON, r#"{"id":1,"name":null,"age":3}"#, 422);
}

fn fractional_number_for_an_integer_is_422(backend: Backend, engine: Engine) {
    rejected(backend, engine, "float", JSON, r#"{"id":1,"name":"a","age":30.5}"#, 422);
    // A whole number past 2^53 written as a float is not exactly the integer its text says.
    rejected(backend, engine, "big-float", JSON, r#"{"id":9007199254740993.0,"name":"a","age":3}"#, 422);
}

/// JSON Schema counts `30.0` as an integer (the OpenAPI document's `type: integer`), and so does
/// the runtime: a whole number written with a fraction or an exponent is that integer.
fn whole_number_with_a_fraction_is_an_integer(backend: Backend, engine: Engine) {
    let (server, db) = start("whole", backend, engine);
    let (status, text) = server.request("POST", "/users", JSON, r#"{"id":7.0,"name":"a","age":3e1}"#);
    assert_eq!(status, 201, "{text}");
    assert_eq!(json(&text), serde_json::json!({"id": 7, "name": "a", "age": 30}));
    assert_eq!(rows(&db), vec![(7, "a".to_string(), 30)]);
    // A path parameter too, by the same rule.
    assert_eq!(server.get("/users/7.0"), (200, r#"{"id":7,"name":"a","age":30}"#.to_string()));
    assert_eq!(server.get("/users/7.5").0, 400);
}

fn string_for_an_integer_is_422(backend: Backend, engine: Engine) {
    rejected(backend, engine, "string", JSON, r#"{"id":1,"name":"a","age":"30"}"#, 422);
}

fn integer_out_of_range_is_422(backend: Backend, engine: Engine) {
    rejected(backend, engine, "range", JSON, r#"{"id":1,"name":"a","age":2147483648}"#, 422);
}

fn duplicate_key_is_422(backend: Backend, engine: Engine) {
    rejected(backend, engine, "dup", JSON, r#"{"id":1,"name":"a","name":"b","age":3}"#, 422);
}

fn unknown_field_is_422(backend: Backend, engine: Engine) {
    rejected(backend, engine, "unknown", JSON, r#"{"id":1,"name":"a","age":3,"admin":true}"#, 422);
}

fn the_422_detail_names_the_field(backend: Backend, engine: Engine) {
    let (server, _) = start("detail", backend, engine);
    let (status, text) = server.send_json("POST", "/users", r#"{"id":1,"name":"a","age":"30"}"#);
    assert_eq!(status, 422);
    assert!(json(&text)["detail"].as_str().unwrap_or("").contains("age"), "{text}");
}

fn body_over_the_limit_is_413_with_content_length(backend: Backend, engine: Engine) {
    let (server, db) = start("limit", backend, engine);
    let big = format!(r#"{{"id":1,"name":"{}","age":3}}"#, "x".repeat(2 * 1024 * 1024));
    assert_eq!(server.send_json("POST", "/users", &big).0, 413);
    assert!(rows(&db).is_empty());
    assert_eq!(server.get("/health").0, 200);
}

fn body_over_the_limit_is_413_when_chunked(backend: Backend, engine: Engine) {
    let (server, db) = start("chunked", backend, engine);
    let mut request = b"POST /users HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    let chunk = vec![b' '; 64 * 1024];
    for _ in 0..20 {
        request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        request.extend_from_slice(&chunk);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(server.raw(&request).0, 413);
    assert!(rows(&db).is_empty());
    assert_eq!(server.get("/health").0, 200);
}

fn a_duplicate_id_is_409_and_changes_nothing(backend: Backend, engine: Engine) {
    let (server, db) = start("conflict", backend, engine);
    assert_eq!(server.send_json("POST", "/users", r#"{"id":7,"name":"a","age":3}"#).0, 201);
    let (status, text) = server.send_json("POST", "/users", r#"{"id":7,"name":"b","age":4}"#);
    assert_eq!(status, 409, "{text}");
    assert_eq!(rows(&db), vec![(7, "a".to_string(), 3)]);
}

fn sql_text_in_a_name_is_stored_verbatim(backend: Backend, engine: Engine) {
    let (server, db) = start("injection", backend, engine);
    let name = "x'); DROP TABLE users; --";
    let body = serde_json::json!({"id": 5, "name": name, "age": 1}).to_string();
    assert_eq!(server.send_json("POST", "/users", &body).0, 201);
    let (status, text) = server.get("/users/5");
    assert_eq!((status, json(&text)["name"].as_str().map(str::to_string)), (200, Some(name.to_string())));
    assert_eq!(rows(&db), vec![(5, name.to_string(), 1)]);
}

fn fifty_concurrent_posts_all_land(backend: Backend, engine: Engine) {
    let (server, db) = start("concurrent", backend, engine);
    let server = std::sync::Arc::new(server);
    let handles: Vec<_> = (0..50)
        .map(|i| {
            let server = server.clone();
            std::thread::spawn(move || {
                server.send_json("POST", "/users", &format!(r#"{{"id":{i},"name":"u{i}","age":{i}}}"#)).0
            })
        })
        .collect();
    let statuses: Vec<u16> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(statuses.iter().all(|s| *s == 201), "{statuses:?}");
    assert_eq!(rows(&db).len(), 50);
}

fn a_stalled_stdout_never_blocks_requests(backend: Backend) {
    let exe = build(USERS, backend);
    let db = temp_dir("stalled").join("users.db");
    // A pipe whose reading end nobody reads until the end: once its buffer fills, every write
    // to stdout would block if logging were synchronous.
    let mut child = std::process::Command::new(&exe)
        .args(["--listen", "127.0.0.1:0", "--db", db.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the service starts");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout is piped"));
    let stderr = child.stderr.take().expect("stderr is piped");
    // The port the system picked, from the log's first lines; the rest of the pipe stays unread.
    let mut head = String::new();
    let port = loop {
        let mut line = String::new();
        let read = std::io::BufRead::read_line(&mut stdout, &mut line).expect("the log reads");
        assert!(read > 0, "the service ended before listening:\n{head}");
        head.push_str(&line);
        if let Some(port) = support::listening_port(&line) {
            break port;
        }
    };
    let server = Server::adopt(child, port);
    for i in 0..3000 {
        let (status, _) = if i % 2 == 0 { server.get("/health") } else { server.get("/users/1") };
        assert!(status == 200 || status == 404, "request {i} answered {status}");
    }
    // SIGTERM while the log writer is stuck on the full pipe: the log gets a bounded grace
    // period (2 s), so the service exits well within 5 s instead of waiting for a reader.
    let started = std::time::Instant::now();
    let status = server.stop();
    let took = started.elapsed();
    assert!(status.success(), "the service exited with {status}");
    assert!(took < std::time::Duration::from_secs(5), "shutdown took {took:?}");
    let mut report = String::new();
    let mut stderr = stderr;
    let _ = std::io::Read::read_to_string(&mut stderr, &mut report);
    drop(stdout);
    let line = report
        .lines()
        .find(|l| l.contains("dropped"))
        .unwrap_or_else(|| panic!("no dropped-record report in:\n{report}"));
    let count: u64 = line.split_whitespace().find_map(|w| w.parse().ok()).expect("the report names a count");
    eprintln!("stalled stdout: 3000 requests answered; shutdown took {took:?}; {line}");
    assert!(count > 0, "{line}");
}

#[test]
fn emitted_rust_builds_with_plain_cargo_and_has_no_unsafe() {
    let dir = temp_dir("emit-rust");
    let out = support::nagic(&["--emit=rust", USERS, "-o", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let source = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(source.contains("#![forbid(unsafe_code)]"));
    assert!(!source.contains("unsafe {") && !source.contains("unsafe fn"), "the emitted crate uses unsafe");
    // Share the prebuilt runtime's target directory and lock file so cargo reuses its
    // dependencies instead of compiling them again. Cargo may still rebuild some in place (a
    // build script that reruns on this process's environment), so no other build of this test
    // binary may link against them meanwhile.
    std::fs::copy(support::root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let status = support::with_builds_held(|| {
        std::process::Command::new(env!("CARGO"))
            .args(["build", "--release", "--quiet", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", support::root().join("target/nagi-runtime"))
            .status()
            .unwrap()
    });
    assert!(status.success(), "cargo build of the emitted crate failed");
}

fn a_trap_in_a_handler_is_500_and_the_next_request_works(backend: Backend) {
    let exe = build("tests/fixtures/calc.nagi", backend);
    let db = temp_dir("trap").join("calc.db");
    let server = Server::start(&exe, &db, None, &[]);
    assert_eq!(server.get("/div/84/2"), (200, "42".to_string()));
    let (status, text) = server.get("/div/1/0");
    assert_eq!(status, 500, "{text}");
    assert!(json(&text)["detail"].as_str().unwrap_or("").contains("division by zero"), "{text}");
    assert_eq!(server.get("/div/9/3"), (200, "3".to_string()));
    // Recursion 10^8 deep on a worker thread: the trap `stack overflow`, then the next request.
    let (status, text) = server.get("/sum/100000000");
    assert_eq!(status, 500, "{text}");
    assert_eq!(json(&text)["detail"], "stack overflow", "{text}");
    assert_eq!(server.get("/sum/1000"), (200, "500500".to_string()));
    assert_eq!(server.get("/health"), (200, "\"ok\"".to_string()));
    // A String query parameter's default, and the value a request gives instead.
    assert_eq!(server.get("/greet"), (200, "\"hello world!\"".to_string()));
    assert_eq!(server.get("/greet?name=Ada&punctuation=."), (200, "\"hello Ada.\"".to_string()));
    assert_eq!(server.get("/greet?name="), (200, "\"hello !\"".to_string()));
}

/// A line printed by a handler is written to the service's stdout once, also when a log record
/// (the trap's) follows it on the same thread: both shared one scratch buffer, and the record
/// once began with the printed line again.
fn a_printed_line_is_logged_once_before_the_trap_that_follows_it(backend: Backend) {
    let exe = build("tests/fixtures/calc.nagi", backend);
    let dir = temp_dir("printed-once");
    let log_path = dir.join("stdout.log");
    let server = Server::start(&exe, &dir.join("calc.db"), Some(&log_path), &[]);
    for _ in 0..3 {
        assert_eq!(server.get("/p").0, 500);
    }
    assert_eq!(server.get("/p?d=1"), (200, "1".to_string()));
    assert!(server.stop().success());
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(log.matches("printed once").count(), 4, "{log}");
    assert_eq!(log.lines().filter(|l| *l == "printed once").count(), 4, "{log}");
    assert_eq!(log.matches("trap: division by zero").count(), 3, "{log}");
}

fn a_route_without_a_result_answers_204_with_no_body(backend: Backend) {
    let exe = build("tests/fixtures/context.nagi", backend);
    let db = temp_dir("no-content").join("context.db");
    let server = Server::start(&exe, &db, None, &[]);
    assert_eq!(server.send_json("POST", "/notes", r#"{"id":1,"text":"a"}"#).0, 201);
    let response = server.raw(b"DELETE /notes/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assert_eq!(response, (204, String::new()));
    assert_eq!(server.get("/notes"), (200, "[]".to_string()));
    // The answer carries neither a body nor a content type.
    let head = server.raw_head(b"DELETE /notes/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 204 No Content\r\n"), "{head}");
    assert!(!head.to_ascii_lowercase().contains("content-type"), "{head}");
}

fn header_parameters_bind_and_a_missing_or_malformed_one_is_400(backend: Backend) {
    let exe = build("tests/fixtures/context.nagi", backend);
    let db = temp_dir("headers").join("context.db");
    let server = Server::start(&exe, &db, None, &[]);
    let get = |headers: &str| {
        server.raw(format!("GET /me HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n").as_bytes())
    };
    assert_eq!(get("Authorization: Bearer abc\r\n"), (200, "\"Bearer abc\"".to_string()));
    // Header names are case-insensitive; `x_page` is read from `x-page`.
    assert_eq!(get("authorization: t\r\nX-Page: 3\r\n"), (200, "\"t on page 3\"".to_string()));
    let (status, body) = get("X-Page: 3\r\n");
    assert_eq!(status, 400, "{body}");
    assert_eq!(json(&body), serde_json::json!({"error": "bad request", "detail": "missing header `authorization`"}));
    let (status, body) = get("Authorization: t\r\nX-Page: three\r\n");
    assert_eq!(status, 400, "{body}");
    assert_eq!(json(&body)["detail"], "header parameter `x-page`: expected an i64 integer, got \"three\"", "{body}");
    let (status, body) =
        server.raw(b"GET /me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: caf\xc3\xa9\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 400, "{body}");
    assert_eq!(json(&body)["detail"], "header `authorization`: the value is not visible ASCII text", "{body}");
    let (status, body) = server.get("/bad-header");
    assert_eq!(
        (status, json(&body)["detail"].as_str()),
        (500, Some("the response header \"Content-Type\" is set by the server"))
    );
}

fn enums_in_bodies_use_the_externally_tagged_form_and_an_unknown_variant_is_422(backend: Backend) {
    let exe = build("golden/high/enum_service.nagi", backend);
    let db = temp_dir("enums").join("enums.db");
    let server = Server::start(&exe, &db, None, &[]);
    let post = |body: &str| {
        let (status, text) = server.send_json("POST", "/tasks", body);
        (status, json(&text))
    };
    assert_eq!(
        post(r#"{"title":"a","priority":"High"}"#),
        (201, serde_json::json!({"title": "a", "priority": "High", "rank": 0, "label": "soon"}))
    );
    assert_eq!(
        post(r#"{"title":"b","priority":{"Due":5}}"#),
        (201, serde_json::json!({"title": "b", "priority": {"Due": 5}, "rank": 5, "label": "soon"}))
    );
    // A variant without a payload may also be written as an object whose value is null.
    assert_eq!(post(r#"{"title":"c","priority":{"Low":null}}"#).1["priority"], "Low");
    let (status, body) = post(r#"{"title":"d","priority":"Urgent"}"#);
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["detail"],
        "priority: unknown variant `Urgent`, expected one of `Low`, `High`, `Due` at line 1 column 32"
    );
    let (status, body) = post(r#"{"title":"e","priority":"Due"}"#);
    assert_eq!(
        (status, body["detail"].as_str()),
        (422, Some("priority.Due: invalid type: unit variant, expected newtype variant at line 1 column 30"))
    );
    // Valid JSON of the wrong shape is a data error, not malformed JSON, although serde_json
    // words it as a syntax error.
    let (status, body) = post(r#"{"title":"g","priority":5}"#);
    assert_eq!((status, body["error"].as_str()), (422, Some("unprocessable entity")), "{body}");
    assert_eq!(server.get("/priority/0"), (200, "\"High\"".to_string()));
    assert_eq!(server.get("/priority/-1"), (200, "\"Low\"".to_string()));
    assert_eq!(server.get("/priority/7"), (200, "{\"Due\":7}".to_string()));
}

fn maps_in_bodies_are_json_objects_in_insertion_order(backend: Backend) {
    let exe = build("golden/high/map_service.nagi", backend);
    let db = temp_dir("maps").join("maps.db");
    let server = Server::start(&exe, &db, None, &[]);
    // The raw text shows the order: first insertion, not hash or key order.
    let (status, text) = server.send_json("POST", "/tally", r#"{"words":["b","a","b","c","a","b"]}"#);
    assert_eq!((status, text.as_str()), (201, r#"{"counts":{"b":3,"a":2,"c":1},"distinct":3}"#));
    let (status, text) = server.send_json("POST", "/best", r#"{"by_id":{"7":0.5,"3":2.5,"10":1.0}}"#);
    assert_eq!((status, text.as_str()), (201, r#"{"id":3,"score":2.5,"others":{"7":0.5,"10":1.0}}"#));
    // A repeated key keeps its first place and its last value, as serde's maps do.
    let (status, text) = server.send_json("POST", "/best", r#"{"by_id":{"1":1.0,"2":0.5,"1":0.25}}"#);
    assert_eq!((status, text.as_str()), (201, r#"{"id":2,"score":0.5,"others":{"1":0.25}}"#));
    let (status, body) = server.send_json("POST", "/best", r#"{"by_id":{"x":1.0}}"#);
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        json(&body)["detail"],
        "by_id.?: invalid value: expected key to be a number in quotes at line 1 column 11",
        "{body}"
    );
    let (status, body) = server.send_json("POST", "/tally", r#"{"words":{"a":1}}"#);
    assert_eq!(status, 422, "{body}");
    let (status, body) = server.send_json("POST", "/best", r#"{"by_id":["1"]}"#);
    assert_eq!(
        (status, json(&body)["detail"].as_str()),
        (422, Some("by_id: invalid type: sequence, expected a map at line 1 column 9"))
    );
}

fn fail_answers_its_status_and_message_and_a_failed_request_writes_nothing(backend: Backend, engine: Engine) {
    let exe = build("golden/high/failures.nagi", backend);
    let db = TestDb::new(engine, "failures");
    let server = Server::start(&exe, db.path(), None, &[]);
    let send = |method: &str, path: &str, token: &str, body: &str| {
        let (status, text) = server.send_json_with(method, path, &format!("Authorization: {token}\r\n"), body);
        (status, if text.is_empty() { serde_json::Value::Null } else { json(&text) })
    };
    let error =
        |status: u16, error: &str, detail: &str| (status, serde_json::json!({"error": error, "detail": detail}));
    let account = |name: &str| serde_json::json!({"id": 1, "name": name, "owner": "ann"});
    assert_eq!(send("POST", "/accounts", "ann", r#"{"id":1,"name":"alpha","owner":"x"}"#), (201, account("alpha")));
    let head = |method: &str, path: &str, token: &str, body: &str| {
        server.head_json_with(method, path, &format!("Authorization: {token}\r\n"), body).to_ascii_lowercase()
    };
    let created = head("POST", "/accounts", "dee", r#"{"id":4,"name":"delta","owner":"x"}"#);
    assert!(created.starts_with("http/1.1 201") && created.contains("\r\nlocation: /accounts/4\r\n"), "{created}");
    // A header set before a failure is not sent with the error answer.
    let failed = head("PUT", "/accounts/1/name", "ann", r#"{"id":1,"name":"","owner":"x"}"#);
    assert!(failed.starts_with("http/1.1 422") && !failed.contains("x-renamed-from"), "{failed}");
    let renamed = head("PUT", "/accounts/4/name", "dee", r#"{"id":4,"name":"delta2","owner":"x"}"#);
    assert!(renamed.contains("\r\nx-renamed-from: delta\r\n"), "{renamed}");
    // `fail` in the handler, and in a function it calls with `try`.
    assert_eq!(
        send("POST", "/accounts", "bob", r#"{"id":2,"name":"alpha","owner":"x"}"#),
        error(409, "conflict", "the name alpha is taken")
    );
    assert_eq!(
        send("POST", "/accounts", "bob", r#"{"id":2,"name":"","owner":"x"}"#),
        error(422, "unprocessable entity", "the name must not be empty")
    );
    assert_eq!(server.get("/accounts/9").0, 404);
    assert_eq!(json(&server.get("/accounts/9").1)["detail"], "no account 9");
    // A failure two calls deep.
    assert_eq!(
        send("PUT", "/accounts/1/name", "bob", r#"{"id":1,"name":"beta","owner":"x"}"#),
        error(403, "forbidden", "account 1 belongs to someone else")
    );
    // The rename is written, then the name fails its check: the write is rolled back.
    assert_eq!(
        send("PUT", "/accounts/1/name", "ann", r#"{"id":1,"name":"","owner":"x"}"#),
        error(422, "unprocessable entity", "the name must not be empty")
    );
    assert_eq!(server.get("/accounts/1"), (200, account("alpha").to_string()));
    assert_eq!(send("PUT", "/accounts/1/name", "ann", r#"{"id":1,"name":"beta","owner":"x"}"#), (200, account("beta")));
    // A handler without a result that may fail answers 204 when it does not.
    assert_eq!(send("DELETE", "/accounts/1", "bob", ""), error(403, "forbidden", "account 1 belongs to someone else"));
    assert_eq!(send("DELETE", "/accounts/1", "ann", ""), (204, serde_json::Value::Null));
    assert_eq!(server.get("/accounts/1").0, 404);
    // The service still serves after every failure.
    assert_eq!(send("POST", "/accounts", "cy", r#"{"id":3,"name":"gamma","owner":"x"}"#).0, 201);
}

/// examples/blog: accounts with a token header, posts only their author changes, comments,
/// validation errors with messages, pagination and search.
fn the_blog_example_serves_its_walkthrough(backend: Backend, engine: Engine) {
    let exe = build("examples/blog/blog.nagi", backend);
    let db = TestDb::new(engine, "blog");
    let server = Server::start(&exe, db.path(), None, &[]);
    let send = |method: &str, path: &str, token: Option<&str>, body: &str| {
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        let (status, text) = server.send_json_with(method, path, &auth, body);
        (status, if text.is_empty() { serde_json::Value::Null } else { json(&text) })
    };
    let detail = |answer: (u16, serde_json::Value)| (answer.0, answer.1["detail"].as_str().unwrap_or("").to_string());
    assert_eq!(
        send("POST", "/accounts", None, r#"{"name":"ann","token":"secret-ann"}"#),
        (201, serde_json::json!({"id": 1, "name": "ann"}))
    );
    assert_eq!(
        detail(send("POST", "/accounts", None, r#"{"name":"ann","token":"other-token"}"#)),
        (409, "the name ann is taken".into())
    );
    assert_eq!(
        detail(send("POST", "/accounts", None, r#"{"name":"b!","token":"secret-b"}"#)),
        (422, "a name has 3 to 20 characters".into())
    );
    assert_eq!(
        detail(send("POST", "/accounts", None, r#"{"name":"bo!b","token":"secret-b"}"#)),
        (422, "a name has only letters, digits, _ and -".into())
    );
    assert_eq!(send("POST", "/accounts", None, r#"{"name":"bob","token":"secret-bob"}"#).0, 201);
    let first = r#"{"title":"Hello world","body":"first post, 50% off"}"#;
    assert_eq!(
        send("POST", "/posts", Some("secret-ann"), first),
        (201, serde_json::json!({"id": 1, "author": 1, "title": "Hello world", "body": "first post, 50% off"}))
    );
    assert_eq!(
        detail(send("POST", "/posts", Some("secret-ann"), r#"{"title":"  ","body":"x"}"#)),
        (422, "the title is empty".into())
    );
    assert_eq!(
        detail(send("POST", "/posts", Some("wrong"), r#"{"title":"t","body":"x"}"#)),
        (401, "no account has this token".into())
    );
    assert_eq!(
        detail(send("POST", "/posts", None, r#"{"title":"t","body":"x"}"#)),
        (400, "missing header `authorization`".into())
    );
    assert_eq!(send("POST", "/posts", Some("secret-bob"), r#"{"title":"Second","body":"by bob"}"#).0, 201);
    // Someone else's post: 403, and nothing changes.
    assert_eq!(
        detail(send("PUT", "/posts/1", Some("secret-bob"), r#"{"title":"mine now","body":"x"}"#)),
        (403, "post 1 belongs to another account".into())
    );
    assert_eq!(send("GET", "/posts/1", None, "").1["title"], "Hello world");
    // Pagination, newest first, and a search whose `%` is literal.
    let titles = |answer: (u16, serde_json::Value)| -> Vec<String> {
        answer
            .1
            .as_array()
            .map_or(Vec::new(), |a| a.iter().map(|p| p["title"].as_str().unwrap_or("").to_string()).collect())
    };
    assert_eq!(titles(send("GET", "/posts?limit=1", None, "")), ["Second"]);
    assert_eq!(titles(send("GET", "/posts?limit=1&offset=1", None, "")), ["Hello world"]);
    assert_eq!(titles(send("GET", "/posts?q=50%25", None, "")), ["Hello world"]);
    assert_eq!(titles(send("GET", "/posts?q=5%25%25", None, "")), Vec::<String>::new());
    assert_eq!(titles(send("GET", "/posts?q=by&limit=5", None, "")), ["Second"]);
    assert_eq!(detail(send("GET", "/posts?limit=0", None, "")), (422, "limit is 1 to 100".into()));
    // An account's posts as a `Page<Summary>` (a generic class's instance), longest first.
    assert_eq!(
        send("POST", "/posts", Some("secret-ann"), r#"{"title":"Long","body":"one two three four five six"}"#).0,
        201
    );
    assert_eq!(
        send("GET", "/accounts/1/posts?limit=1", None, ""),
        (200, serde_json::json!({"items": [{"id": 3, "title": "Long", "words": 6}], "next": 1}))
    );
    assert_eq!(
        send("GET", "/accounts/1/posts?offset=1", None, ""),
        (200, serde_json::json!({"items": [{"id": 1, "title": "Hello world", "words": 4}], "next": null}))
    );
    assert_eq!(detail(send("GET", "/accounts/1/posts?offset=-1", None, "")), (422, "offset is not negative".into()));
    assert_eq!(send("DELETE", "/posts/3", Some("secret-ann"), "").0, 204);
    // Comments, then the author deletes the post and its comments.
    assert_eq!(send("POST", "/posts/1/comments", Some("secret-bob"), r#"{"text":"nice"}"#).0, 201);
    assert_eq!(send("GET", "/posts/1/comments", None, "").1.as_array().map(Vec::len), Some(1));
    assert_eq!(
        detail(send("POST", "/posts/9/comments", Some("secret-bob"), r#"{"text":"?"}"#)),
        (404, "no post 9".into())
    );
    assert_eq!(send("DELETE", "/posts/1", Some("secret-ann"), ""), (204, serde_json::Value::Null));
    assert_eq!(detail(send("GET", "/posts/1", None, "")), (404, "no post 1".into()));
    assert_eq!(detail(send("GET", "/posts/1/comments", None, "")), (404, "no post 1".into()));
}

fn a_table_rebuilt_with_another_column_type_stops_the_service_with_status_2(backend: Backend, engine: Engine) {
    let exe = build(USERS, backend);
    let db = TestDb::new(engine, "schema");
    let text = if engine == Engine::Sqlite { "TEXT" } else { "text" };
    db.execute(&format!(
        "CREATE TABLE users (id INTEGER NOT NULL, name TEXT NOT NULL, age {text} NOT NULL, PRIMARY KEY (id));
         INSERT INTO users VALUES (1, 'Ada', 'thirty-six');"
    ));
    let output = support::run_to_exit(&exe, db.path());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains("table `users`:"), "{stderr}");
    let (side, declared) = match engine {
        Engine::Sqlite => ("the file", "INTEGER NOT NULL"),
        Engine::Postgres => ("the database", "integer NOT NULL"),
    };
    assert!(
        stderr.contains(&format!("column `age`: {side} has {text} NOT NULL, the program declares {declared}")),
        "{stderr}"
    );
    // Nothing was changed in the database.
    assert_eq!(db.rows("SELECT age FROM users WHERE id = 1"), [[Some("thirty-six".to_owned())]]);
}

/// A nullable field added at the end of a class: a service built from the new program starts on
/// the old program's database, which gains the column (the log says so), old rows read it as
/// `none`, and new rows store it.
fn a_nullable_field_added_at_the_end_of_a_class_is_added_to_the_table(backend: Backend, engine: Engine) {
    let db = TestDb::new(engine, "added-column");
    let old = Server::start(&build(USERS, backend), db.path(), None, &[]);
    assert_eq!(old.send_json("POST", "/users", r#"{"id":1,"name":"Ada","age":36}"#).0, 201);
    assert!(old.stop().success());
    let dir = temp_dir("added-column");
    let source = dir.join("users_with_email.nagi");
    std::fs::write(
        &source,
        "class User {\n    id: i64\n    name: String\n    age: i32\n    email: String?\n}\n\ntable users: User key id\n\n\
         route POST \"/users\" (body: User) -> User {\n    db.exec(\"INSERT INTO users (id, name, age, email) VALUES (?, \
         ?, ?, ?)\", body.id, body.name, body.age, body.email)\n    return body\n}\n\nroute GET \"/users/{id}\" (id: i64) -> \
         User? {\n    return db.query_one<User>(\"SELECT id, name, age, email FROM users WHERE id = ?\", id)\n}\n",
    )
    .expect("the new program");
    let log = dir.join("service.log");
    let new = Server::start(&build(source.to_str().unwrap(), backend), db.path(), Some(&log), &[]);
    assert_eq!(new.get("/users/1"), (200, r#"{"id":1,"name":"Ada","age":36,"email":null}"#.to_string()));
    let grace = r#"{"id":2,"name":"Grace","age":45,"email":"grace@example.com"}"#;
    assert_eq!(new.send_json("POST", "/users", grace), (201, grace.to_string()));
    assert_eq!(new.get("/users/2"), (200, grace.to_string()));
    assert!(new.stop().success());
    let logged = std::fs::read_to_string(&log).expect("the log");
    assert!(logged.contains("added column `email` to table `users`"), "{logged}");
}

/// The ids in the `entries` table of a ledger database.
fn entry_ids(db: &TestDb) -> Vec<i64> {
    db.rows("SELECT id FROM entries ORDER BY id").iter().map(|row| int(&row[0])).collect()
}

fn a_request_that_fails_after_writing_leaves_no_row(backend: Backend, engine: Engine) {
    let exe = build("tests/fixtures/ledger.nagi", backend);
    let db = TestDb::new(engine, "requesttx");
    let server = Server::start(&exe, db.path(), None, &[]);
    // Insert, then divide by zero: 500, and the insert is rolled back.
    let (status, text) = server.send_json("POST", "/entries/0", r#"{"id":1,"amount":10}"#);
    assert_eq!(status, 500, "{text}");
    assert!(json(&text)["detail"].as_str().unwrap_or("").contains("division by zero"), "{text}");
    assert_eq!(entry_ids(&db), Vec::<i64>::new(), "the trapped request's row was kept");
    assert_eq!(server.get("/entries/1").0, 404);
    // The same with a good divisor: 201, and the row is in the file.
    let (status, text) = server.send_json("POST", "/entries/2", r#"{"id":1,"amount":10}"#);
    assert_eq!((status, json(&text)), (201, serde_json::json!({"id": 1, "amount": 5})));
    assert_eq!(entry_ids(&db), vec![1]);
    // An explicit transaction that committed is still undone by a 404 answer after it ...
    assert_eq!(server.request("POST", "/pairs/10?keep=false", None, "").0, 404);
    assert_eq!(entry_ids(&db), vec![1]);
    // ... and kept by a 2xx one.
    let (status, text) = server.request("POST", "/pairs/20?keep=true", None, "");
    assert_eq!((status, json(&text)), (201, serde_json::json!({"id": 20, "amount": 1})));
    assert_eq!(entry_ids(&db), vec![1, 20, 21]);
}

fn a_database_locked_by_another_process_answers_503_within_the_busy_budget(backend: Backend, engine: Engine) {
    use std::time::{Duration, Instant};
    // One worker thread: if a parked write blocked it, `/health` would wait too.
    let db = TestDb::new(engine, "locked");
    let server = Server::start(&build(USERS, backend), db.path(), None, &["--workers", "1"]);
    assert_eq!(server.send_json("POST", "/users", r#"{"id":1,"name":"first","age":1}"#).0, 201);
    // Another process's connection holds the write lock for 9 s (readers go on).
    let locker = db.hold_write_lock("users");
    let start = Instant::now();
    let budget = Duration::from_millis(5_000);
    let (writes, health) = std::thread::scope(|scope| {
        let health = scope.spawn(|| {
            let mut worst = Duration::ZERO;
            while start.elapsed() < Duration::from_secs(11) {
                let sent = Instant::now();
                assert_eq!(server.get("/health").0, 200);
                worst = worst.max(sent.elapsed());
                std::thread::sleep(Duration::from_millis(100));
            }
            worst
        });
        // Ten writes while the lock has long to go (they run out of budget), ten that are still
        // within budget when it is released at 9 s.
        let writers: Vec<_> = (0..20u32)
            .map(|i| {
                let server = &server;
                scope.spawn(move || {
                    let at = if i < 10 {
                        Duration::from_millis(100 + 50 * u64::from(i))
                    } else {
                        Duration::from_millis(5_500)
                    };
                    std::thread::sleep(at.saturating_sub(start.elapsed()));
                    let sent = Instant::now();
                    let id = 100 + i64::from(i);
                    let body = format!(r#"{{"id":{id},"name":"w{i}","age":2}}"#);
                    let (status, text) = server.send_json("POST", "/users", &body);
                    (id, status, text, sent.elapsed())
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs(9).saturating_sub(start.elapsed()));
        locker.release();
        let writes: Vec<_> = writers.into_iter().map(|w| w.join().expect("writer")).collect();
        (writes, health.join().expect("health poller"))
    });
    let mut acknowledged: Vec<i64> = vec![1];
    for (id, status, text, took) in &writes {
        assert!(*took <= budget + Duration::from_millis(500), "write {id} took {took:?} ({status} {text})");
        match status {
            201 => acknowledged.push(*id),
            503 => assert_eq!(json(text)["error"], "database busy", "{text}"),
            other => panic!("write {id}: unexpected {other} {text}"),
        }
    }
    let busy = writes.iter().filter(|w| w.1 == 503).count();
    assert!(busy >= 10, "the writes sent early should run out of budget: {writes:?}");
    assert!(acknowledged.len() > 1, "the writes sent late should land once the lock is gone: {writes:?}");
    assert!(health < Duration::from_millis(250), "/health took {health:?} while the database was locked");
    let ids: Vec<i64> = rows(&db).into_iter().map(|(id, _, _)| id).collect();
    acknowledged.sort_unstable();
    assert_eq!(ids, acknowledged, "rows in the file must be exactly the acknowledged writes");
}

fn kill_9_during_concurrent_writes_loses_no_acknowledged_write(backend: Backend, engine: Engine) {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;
    let (server, db) = start("kill9", backend, engine);
    let stop = AtomicBool::new(false);
    let acknowledged = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for writer in 0..8i64 {
            let (server, stop, acknowledged) = (&server, &stop, &acknowledged);
            scope.spawn(move || {
                let mut n = 0i64;
                while !stop.load(Ordering::Relaxed) {
                    let id = writer * 1_000_000 + n;
                    n += 1;
                    let body = format!(r#"{{"id":{id},"name":"w{writer}","age":{}}}"#, n % 100);
                    // A write counts once the service has answered 201; a request cut off by
                    // the kill (no answer) may or may not have landed.
                    if server.send_json("POST", "/users", &body).0 == 201 {
                        acknowledged.lock().unwrap().push(id);
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_secs(2));
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &server.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        // Let the writers see the dead server before they stop.
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Ordering::Relaxed);
    });
    let acknowledged = acknowledged.into_inner().unwrap();
    assert!(acknowledged.len() > 50, "too few writes to mean anything: {}", acknowledged.len());
    // A new process on the same file (it recovers the WAL) has every acknowledged row.
    drop(server);
    let again = Server::start(&build(USERS, backend), db.path(), None, &[]);
    assert_eq!(again.get("/health").0, 200);
    let stored: std::collections::HashSet<i64> = rows(&db).into_iter().map(|(id, _, _)| id).collect();
    let lost: Vec<i64> = acknowledged.iter().copied().filter(|id| !stored.contains(id)).collect();
    assert!(lost.is_empty(), "{} of {} acknowledged writes lost: {lost:?}", lost.len(), acknowledged.len());
    eprintln!("kill -9: {} acknowledged writes, all in the file ({} rows)", acknowledged.len(), stored.len());
    assert!(again.stop().success());
}

fn connection_limits_from_the_command_line(backend: Backend) {
    let exe = build(USERS, backend);
    let dir = temp_dir("limits");
    let log_path = dir.join("stdout.log");
    let flags = ["--header-timeout-ms", "1000", "--idle-timeout-ms", "2000", "--max-connections", "3"];
    let server = Server::start(&exe, &dir.join("users.db"), Some(&log_path), &flags);
    let connect = || std::net::TcpStream::connect(("127.0.0.1", server.port)).expect("connects");

    // A connection that sends nothing is closed at the header timeout, without an answer.
    let mut silent = connect();
    silent.set_read_timeout(Some(std::time::Duration::from_secs(3))).unwrap();
    let start = std::time::Instant::now();
    let read = std::io::Read::read(&mut silent, &mut [0u8; 64]);
    let after = start.elapsed();
    eprintln!("silent connection to the process: {read:?} after {after:?}");
    assert!(
        matches!(read, Ok(0)) || matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
        "{read:?}"
    );
    assert!(after >= std::time::Duration::from_millis(900) && after < std::time::Duration::from_secs(3), "{after:?}");

    // Three connections take every place; the next one is answered 503 and closed.
    let held: Vec<_> = (0..3).map(|_| connect()).collect();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let (status, text) = server.get("/health");
    assert_eq!(status, 503, "{text}");
    assert_eq!(json(&text)["error"], "overloaded", "{text}");
    drop(held);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while server.get("/health").0 != 200 {
        assert!(std::time::Instant::now() < deadline, "/health did not recover after the connections closed");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    assert!(server.stop().success());
    let log = std::fs::read_to_string(&log_path).unwrap();
    // The refusals are counted in the log; retries of /health above may add to the count.
    let refused = log.lines().find(|line| line.contains("connection(s) with 503: 3 open already (--max-connections)"));
    assert!(refused.is_some_and(|line| line.contains("WARN nagi::conn: refused ")), "{log}");
    assert!(log.contains("connection(s) in total over --max-connections 3"), "{log}");
}

/// On PostgreSQL, the database server going away while the service runs: each statement fails
/// within the busy budget as 503 `database unavailable` with `Retry-After`, never a hang;
/// `/health` stays fast; nothing is half-written; and the service serves again once the server
/// is back.
fn a_database_server_that_goes_away_is_503_and_the_service_comes_back(backend: Backend) {
    use std::time::{Duration, Instant};
    let db = TestDb::new(Engine::Postgres, "goes-away");
    let (relay, url) = support::Relay::to(&db);
    let flags = ["--busy-timeout-ms", "1000"];
    let server = Server::start(&build(USERS, backend), std::path::Path::new(&url), None, &flags);
    assert_eq!(server.send_json("POST", "/users", r#"{"id":1,"name":"Ada","age":36}"#).0, 201);
    assert_eq!(server.get("/users/1").0, 200);
    relay.cut();
    for (method, path, body) in [
        ("GET", "/users/1", ""),
        ("POST", "/users", r#"{"id":2,"name":"Grace","age":45}"#),
        ("PUT", "/users/1", r#"{"id":1,"name":"Ada L.","age":37}"#),
        ("GET", "/users", ""),
    ] {
        let sent = Instant::now();
        let head = server.head_json_with(method, path, "", body).to_ascii_lowercase();
        let took = sent.elapsed();
        assert!(head.starts_with("http/1.1 503"), "{method} {path} while the server is away: {head}");
        assert!(head.contains("\r\nretry-after: 1\r\n"), "{head}");
        assert!(took < Duration::from_millis(2_500), "{method} {path} took {took:?}");
        let (status, text) = server.send_json(method, path, body);
        assert_eq!((status, json(&text)["error"].as_str()), (503, Some("database unavailable")), "{text}");
        let sent = Instant::now();
        assert_eq!(server.get("/health").0, 200);
        assert!(sent.elapsed() < Duration::from_millis(250), "/health took {:?}", sent.elapsed());
    }
    relay.restore();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.get("/users/1").0 != 200 {
        assert!(Instant::now() < deadline, "the service did not serve again once the server was back");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(server.send_json("POST", "/users", r#"{"id":3,"name":"Linus","age":28}"#).0, 201);
    assert_eq!(rows(&db), vec![(1, "Ada".to_string(), 36), (3, "Linus".to_string(), 28)]);
    assert!(server.stop().success());
}

// The tests of what does not touch the database's engine (and one of PostgreSQL's own) run once
// per backend: `rust::NAME` and `llvm::NAME`.
crate::on_every_backend!(
    a_database_server_that_goes_away_is_503_and_the_service_comes_back,
    a_stalled_stdout_never_blocks_requests,
    a_trap_in_a_handler_is_500_and_the_next_request_works,
    a_printed_line_is_logged_once_before_the_trap_that_follows_it,
    a_route_without_a_result_answers_204_with_no_body,
    header_parameters_bind_and_a_missing_or_malformed_one_is_400,
    enums_in_bodies_use_the_externally_tagged_form_and_an_unknown_variant_is_422,
    maps_in_bodies_are_json_objects_in_insertion_order,
    connection_limits_from_the_command_line,
);

// The rest run on every backend and on both engines: `sqlite::rust::NAME`,
// `postgres::llvm::NAME` and so on.
crate::on_every_backend_and_engine!(
    a_nullable_field_added_at_the_end_of_a_class_is_added_to_the_table,
    crud_over_http_persists_in_the_sqlite_file,
    missing_content_type_is_415,
    non_json_content_type_is_415,
    json_with_parameters_and_suffix_is_accepted,
    empty_body_is_400,
    malformed_json_is_400,
    trailing_bytes_are_400,
    missing_field_is_422,
    null_for_a_non_option_is_422,
    fractional_number_for_an_integer_is_422,
    whole_number_with_a_fraction_is_an_integer,
    string_for_an_integer_is_422,
    integer_out_of_range_is_422,
    duplicate_key_is_422,
    unknown_field_is_422,
    the_422_detail_names_the_field,
    body_over_the_limit_is_413_with_content_length,
    body_over_the_limit_is_413_when_chunked,
    a_duplicate_id_is_409_and_changes_nothing,
    sql_text_in_a_name_is_stored_verbatim,
    fifty_concurrent_posts_all_land,
    fail_answers_its_status_and_message_and_a_failed_request_writes_nothing,
    the_blog_example_serves_its_walkthrough,
    a_table_rebuilt_with_another_column_type_stops_the_service_with_status_2,
    a_request_that_fails_after_writing_leaves_no_row,
    a_database_locked_by_another_process_answers_503_within_the_busy_budget,
    kill_9_during_concurrent_writes_loses_no_acknowledged_write,
);
