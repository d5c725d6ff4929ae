//! Integration tests of outbound calls (issue 32, docs/language.md §9.10), each on both emitters
//! from one body: a compiled service calls a second compiled Nagi service (the upstream) over
//! loopback and answers what it got, a success, an upstream error, a body of the wrong shape, a
//! call past its timeout, a refused connection; a thousand calls wait at once on one worker;
//! and other requests' writes go on while a handler waits on a slow upstream.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use support::{Backend, Engine, Server, TestDb, build, get_on as get, temp_dir};

const UPSTREAM: &str = "tests/fixtures/upstream.nagi";
const CALLER: &str = "tests/fixtures/outbound_service.nagi";
const KEY: &str = "k-123";

/// The upstream service, and the caller configured to call it at `upstream_url` (the
/// upstream's own when `None`), with its log file and `extra` flags.
fn start(
    tag: &str,
    backend: Backend,
    upstream_url: Option<&str>,
    extra: &[&str],
) -> (Server, Server, std::path::PathBuf) {
    let dir = temp_dir(tag);
    let upstream = Server::start(&build(UPSTREAM, backend), &dir.join("upstream.db"), None, &[]);
    let url = upstream_url.map_or_else(|| format!("http://127.0.0.1:{}", upstream.port), str::to_owned);
    let log = dir.join("caller.log");
    let caller = Server::start_with_env(
        &build(CALLER, backend),
        &dir.join("caller.db"),
        Some(&log),
        extra,
        &[("UPSTREAM_URL", &url), ("UPSTREAM_KEY", KEY)],
    );
    (upstream, caller, log)
}

/// The answer's `detail`.
fn detail(body: &str) -> String {
    let answer: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    answer["detail"].as_str().unwrap_or_else(|| panic!("no detail in {body}")).to_owned()
}

/// A success, a text answer, a JSON body sent with a secret header, an upstream 500, an answer
/// that does not decode, a call past its timeout (answered within the timeout and half a
/// second), and a failure handled with `try?` and with `catch`; the key never reaches the caller's log.
fn outbound_calls_answer_and_fail_as_documented(backend: Backend) {
    let (upstream, caller, log) = start("outbound", backend, None, &[]);
    assert_eq!(caller.get("/address/7"), (200, r#"{"street":"7 Main St","city":"Springfield"}"#.to_owned()));
    // The upstream answers the JSON text of its `String`; the caller answers that text as JSON.
    assert_eq!(caller.get("/text"), (200, r#""\"plain words\"""#.to_owned()));
    assert_eq!(
        caller.send_json("POST", "/verify", r#"{"street":"1 Elm"}"#),
        (201, r#"{"valid":true,"city":"Springfield"}"#.to_owned())
    );

    let (status, body) = caller.get("/via?path=/broken");
    assert_eq!(status, 502, "{body}");
    let upstream_url = format!("http://127.0.0.1:{}", upstream.port);
    assert_eq!(
        detail(&body),
        format!(
            r#"GET {upstream_url}/broken answered 500: "{{\"error\":\"internal server error\",\"detail\":\"the address book is down\"}}""#
        )
    );
    let (status, body) = caller.get("/via?path=/wrong");
    assert_eq!(status, 502, "{body}");
    assert_eq!(
        detail(&body),
        format!(
            "GET {upstream_url}/wrong: the answer does not fit Address: street: invalid type: integer `7`, expected a string at line 1 column 11"
        )
    );

    let started = Instant::now();
    let (status, body) = caller.get("/via?path=/slow%3Fms%3D5000&timeout_ms=1000");
    let took = started.elapsed();
    assert_eq!(status, 504, "{body}");
    assert_eq!(detail(&body), format!("GET {upstream_url}/slow: no answer within 1s"));
    assert!(took >= Duration::from_millis(1000) && took < Duration::from_millis(1500), "answered after {took:?}");

    assert_eq!(caller.get("/city/3"), (200, r#""Springfield""#.to_owned()));
    assert_eq!(caller.get("/city/3?x=1").0, 200);
    assert_eq!(caller.get("/city-or-why?path=/address/3"), (200, r#""Springfield""#.to_owned()));
    assert_eq!(
        caller.get("/city-or-why?path=/slow%3Fms%3D2000"),
        (200, format!(r#""unknown: 504 GET {upstream_url}/slow: no answer within 300ms""#))
    );
    assert!(caller.stop().success());
    assert!(upstream.stop().success());
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("/broken answered 500"), "the failed call is logged:\n{log}");
    assert!(!log.contains(KEY), "the key reached the log:\n{log}");
}

/// A call to a port where nothing listens fails with 502 "cannot connect", and `try?` and
/// `catch` turn it into the route's fallback.
fn a_refused_connection_is_a_502(backend: Backend) {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", dead.local_addr().unwrap().port());
    drop(dead);
    let (upstream, caller, _) = start("refused", backend, Some(&url), &[]);
    let (status, body) = caller.get("/address/1");
    assert_eq!(status, 502, "{body}");
    let detail = detail(&body);
    assert!(detail.starts_with(&format!("GET {url}/address/1: cannot connect: ")), "{detail}");
    assert!(detail.contains("refused"), "{detail}");
    assert_eq!(caller.get("/city/1"), (200, r#""unknown""#.to_owned()));
    let (status, body) = caller.get("/city-or-why?path=/address/1");
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with(&format!(r#""unknown: 502 GET {url}/address/1: cannot connect: "#)), "{body}");
    assert!(caller.stop().success());
    assert!(upstream.stop().success());
}

/// A thousand requests at once on a caller with one worker, each waiting on an upstream call that
/// takes 100 ms: they wait together (at most 100 calls in flight to the one host), so all of them
/// take far less than the 100 s they would one after another.
fn a_thousand_calls_wait_together_on_one_worker(backend: Backend) {
    let (upstream, caller, _) = start("thousand", backend, None, &["--workers", "1"]);
    let port = caller.port;
    let started = Instant::now();
    let clients: Vec<_> = (0..1000)
        .map(|_| {
            std::thread::Builder::new()
                .stack_size(64 * 1024)
                .spawn(move || get(port, "/via?path=/slow%3Fms%3D100"))
                .expect("a client thread starts")
        })
        .collect();
    for client in clients {
        let (status, body) = client.join().expect("the client thread ends");
        assert_eq!((status, body.as_str()), (200, r#"{"street":"1 Slow Lane","city":"Waitville"}"#));
    }
    let took = started.elapsed();
    eprintln!("{backend:?}: 1000 calls of 100 ms took {took:?}");
    assert!(took < Duration::from_secs(20), "1000 calls took {took:?}");
    assert!(caller.stop().success());
    assert!(upstream.stop().success());
}

/// While one request waits 2 s on a slow upstream, other requests write: each write is answered
/// at once, all of them before the waiting request ends.
fn writes_go_on_while_a_handler_waits_on_a_slow_upstream(backend: Backend) {
    let (upstream, caller, _) = start("writer", backend, None, &[]);
    let port = caller.port;
    let waited = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&waited);
    let slow = std::thread::spawn(move || {
        let answer = get(port, "/via?path=/slow%3Fms%3D2000");
        flag.store(true, Ordering::SeqCst);
        answer
    });
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    for id in 1..=20 {
        let one = Instant::now();
        let note = format!(r#"{{"id":{id},"text":"n{id}"}}"#);
        assert_eq!(caller.send_json("POST", "/notes", &note), (201, note.clone()));
        slowest = slowest.max(one.elapsed());
    }
    let writes = started.elapsed();
    assert!(!waited.load(Ordering::SeqCst), "the 20 writes ({writes:?}) waited for the slow call");
    eprintln!("{backend:?}: 20 writes during a 2 s outbound call took {writes:?}, the slowest {slowest:?}");
    assert!(slowest < Duration::from_millis(500), "a write took {slowest:?}");
    assert_eq!(slow.join().unwrap(), (200, r#"{"street":"1 Slow Lane","city":"Waitville"}"#.to_owned()));

    assert_eq!(caller.get("/notes/count"), (200, "20".to_owned()));
    assert!(caller.stop().success());
    assert!(upstream.stop().success());
}

/// A route that writes and then calls out, which only hand-written Low can express (High Nagi
/// rejects it, H431): the runtime traps the call, so the request answers 500 saying why, its
/// write is rolled back, and the service goes on.
fn a_call_after_a_write_traps_and_the_write_is_rolled_back(backend: Backend) {
    let dir = temp_dir("after-write");
    let upstream = Server::start(&build(UPSTREAM, backend), &dir.join("upstream.db"), None, &[]);
    let url = format!("http://127.0.0.1:{}", upstream.port);
    let exe = build("tests/fixtures/write_then_call.low", backend);
    let service = Server::start_with_env(&exe, &dir.join("service.db"), None, &[], &[("UPSTREAM_URL", &url)]);
    let (status, body) = service.send_json("POST", "/notes/checked", r#"{"id":99,"text":"x"}"#);
    assert_eq!(status, 500, "{body}");
    assert_eq!(
        detail(&body),
        format!(
            "GET {url}/address/1: an outbound call after the request's first write would hold the database's \
             writer while it waits; make the call before writing, or push a job"
        )
    );
    assert_eq!(service.get("/notes/count"), (200, "0".to_owned()), "the trapped request's write is rolled back");
    assert!(service.stop().success());
    assert!(upstream.stop().success());
}

/// The board example's walkthrough (examples/board/README.md) beside its checker: sign up (an
/// Argon2id hash and a random token), log in, a post with a UUID v7 id and a creation time that
/// the checker passes, one it takes for spam (422), the pages, and the checker stopped (502);
/// the failed requests write nothing and the key never reaches the log.
fn the_board_example_serves_its_walkthrough(backend: Backend, engine: Engine) {
    let dir = temp_dir("board");
    let key = [("CHECKER_KEY", "dev-key")];
    let checker = Server::start_with_env(
        &build("examples/board/checker.nagi", backend),
        &dir.join("checker.db"),
        None,
        &[],
        &key,
    );
    let checker_url = format!("http://127.0.0.1:{}", checker.port);
    let db = TestDb::new(engine, "board");
    let log = dir.join("board.log");
    let board = Server::start_with_env(
        &build("examples/board/board.nagi", backend),
        db.path(),
        Some(&log),
        &[],
        &[("CHECKER_KEY", "dev-key"), ("CHECKER_URL", &checker_url)],
    );
    let json =
        |body: &str| -> serde_json::Value { serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}")) };
    let (status, body) = board.send_json("POST", "/accounts", r#"{"name":"ann","password":"correct horse"}"#);
    assert_eq!(status, 201, "{body}");
    let signed_up = json(&body);
    assert_eq!(signed_up["token"].as_str().unwrap().len(), 43, "{body}");
    let (status, body) = board.send_json("POST", "/sessions", r#"{"name":"ann","password":"battery staple"}"#);
    assert_eq!((status, detail(&body).as_str()), (401, "wrong name or password"));
    let (status, body) = board.send_json("POST", "/sessions", r#"{"name":"ann","password":"correct horse"}"#);
    assert_eq!(status, 201, "{body}");
    let token = json(&body)["token"].as_str().unwrap().to_owned();
    assert_ne!(token, signed_up["token"].as_str().unwrap());
    let auth = format!("Authorization: Bearer {token}\r\n");

    let (status, body) = board.send_json_with("POST", "/posts", &auth, r#"{"text":"hello, board"}"#);
    assert_eq!(status, 201, "{body}");
    let post = json(&body);
    let id = post["id"].as_str().unwrap();
    assert_eq!((id.len(), &id[14..15]), (36, "7"), "a UUID v7: {id}");
    assert_eq!(post["author"], signed_up["account"]);
    let created_at = post["created_at"].as_str().unwrap().to_owned();
    assert_eq!((created_at.len(), created_at.ends_with('Z')), (27, true), "{created_at}");
    let (status, body) = board.send_json_with("POST", "/posts", &auth, r#"{"text":"BUY NOW"}"#);
    assert_eq!((status, detail(&body).as_str()), (422, "the checker takes this for spam: all capitals"));
    let (status, listed) = board.get("/posts");
    assert_eq!(status, 200);
    assert_eq!(json(&listed).as_array().map(Vec::len), Some(1), "{listed}");
    let encoded = created_at.replace(':', "%3A");
    assert_eq!(board.get(&format!("/posts?before={encoded}")), (200, "[]".to_owned()));

    assert!(checker.stop().success());
    let (status, body) = board.send_json_with("POST", "/posts", &auth, r#"{"text":"anyone there?"}"#);
    assert_eq!(status, 502, "{body}");
    assert!(detail(&body).starts_with(&format!("POST {checker_url}/check: cannot connect: ")), "{body}");
    assert!(board.stop().success());

    let hash = db.rows("SELECT password_hash FROM accounts")[0][0].clone().unwrap_or_default();
    assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{hash}");
    assert_eq!(db.rows("SELECT count(*) FROM posts"), [[Some("1".to_owned())]], "the refused posts wrote nothing");
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(!log.contains("dev-key") && !log.contains("correct horse"), "a secret reached the log:\n{log}");
}

crate::on_every_backend!(
    outbound_calls_answer_and_fail_as_documented,
    a_refused_connection_is_a_502,
    a_thousand_calls_wait_together_on_one_worker,
    writes_go_on_while_a_handler_waits_on_a_slow_upstream,
    a_call_after_a_write_traps_and_the_write_is_rolled_back,
);

// The board example on both engines: `sqlite::rust::NAME`, `postgres::llvm::NAME`, ….
crate::on_every_backend_and_engine!(the_board_example_serves_its_walkthrough);
