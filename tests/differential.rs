//! The emitters' differential test for services: every example and golden service is built by
//! both emitters, both builds are sent one transcript of good and bad requests, and the answers
//! (status, content type, body, byte for byte) and the database files' final rows must be
//! identical.
//!
//! The transcript is derived from the service's own Low (its routes, their parameters and
//! their body classes), so every service gets every binding rule: path parameters that parse
//! and that do not, required and optional query parameters (missing, bad, present), JSON bodies
//! that fit and every way one can fail to (no or a wrong content type, empty, malformed,
//! trailing bytes, a missing, unknown or duplicate field, `null`, a wrong type, an `i32` out of
//! range, the array form, a body over the limit), unicode and injection-shaped text, ids that
//! exist and ids that do not, and the whole transcript twice, so writes meet their conflicts.
//!
//! The same transcript then runs on PostgreSQL, through both emitters, against the SQLite run:
//! the answers and the final rows must be the same, apart from the differences docs/http.md
//! ("PostgreSQL") documents: a database error's `detail` is the engine's own message.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nagi_low::{ArenaGet, Module, ParamSource, Type};
use support::{Backend, Engine, Server, TestDb, build, root, temp_dir};

/// The services: every example and golden service, and the test fixtures.
const SERVICES: &[&str] = &[
    "examples/users.nagi",
    "examples/blog/blog.nagi",
    "golden/high/query_params.nagi",
    "golden/high/select_star.nagi",
    "golden/high/todo_service.nagi",
    "golden/high/transactions.nagi",
    "golden/high/users.nagi",
    "golden/low/audit_log.low",
    "golden/low/bank.low",
    "golden/low/users_service.low",
    "golden/high/headers.nagi",
    "golden/high/enum_service.nagi",
    "golden/high/map_service.nagi",
    "golden/high/failures.nagi",
    "golden/high/optional_query.nagi",
    "tests/fixtures/calc.nagi",
    "tests/fixtures/context.nagi",
    "tests/fixtures/ledger.nagi",
    "golden/high/generic_service.nagi",
];

/// One request of the transcript.
struct Request {
    method: String,
    path: String,
    content_type: Option<&'static str>,
    /// Further header lines, each `Name: value` without the line break.
    headers: Vec<String>,
    body: String,
}

/// The module of a service source, `.nagi` or `.low`.
fn module(source: &str) -> Module {
    let text = std::fs::read_to_string(root().join(source)).expect("the service source");
    if source.ends_with(".low") {
        nagi_low::parse(&text).expect("the golden Low parses").0
    } else {
        let dir = root().join(source).parent().map(Path::to_path_buf).unwrap_or_default();
        let mut loader = nagi_high::modules::Directory { dir, read: |file: &Path| std::fs::read(file) };
        nagi_high::compile_program(source, &text, "service", &mut loader)
            .unwrap_or_else(|(d, sources)| panic!("{source} compiles: {}", sources.render(&d)))
    }
}

/// Text values that stress encoding and binding: plain, unicode (combining marks, CJK, an
/// emoji outside the BMP), and SQL- and JSON-shaped text that must be stored verbatim.
const TEXTS: &[&str] =
    &["Ada", "Zoë Łukasz 東京 🚀 e\u{301}", "x'); DROP TABLE users; --", "\"quoted\" \\ back\\slash \t tab", ""];

/// The integers of the four rounds: small ones, zero (a divisor, a missing id), and one deep
/// enough to overflow a recursion's stack.
const INTEGERS: [i64; 4] = [1, 2, 0, 100_000_000];

/// A JSON value of type `ty`, the `n`-th of its kind.
fn value(module: &Module, ty: &Type, n: usize) -> serde_json::Value {
    match ty {
        Type::I32 | Type::I64 => serde_json::json!(INTEGERS[n % 4]),
        Type::F64 => serde_json::json!(n as f64 + 0.5),
        Type::Bool => serde_json::json!(n % 2 == 1),
        Type::String => serde_json::json!(TEXTS[n % TEXTS.len()]),
        // Offsets and fractions the services write back in UTC at a fixed width.
        Type::Time => serde_json::json!(
            [
                "2026-12-05T04:23:34Z",
                "1969-12-31T23:59:59.999999-01:00",
                "9999-12-31T23:59:59.5Z",
                "0000-01-01T00:00:00Z"
            ][n % 4]
        ),
        Type::Duration => serde_json::json!(["250ms", "-90s", "0s", "1500us"][n % 4]),
        Type::Uuid => {
            serde_json::json!(["0192f0c2-5c3e-7b9a-8f00-5d1c2e3f4a5b", "0192F0C25C3E7B9A8F005D1C2E3F4A5B"][n % 2])
        }
        Type::Option(inner) if n % 3 == 2 => {
            let _ = inner;
            serde_json::Value::Null
        }
        Type::Option(inner) => value(module, inner, n),
        Type::Array(elem) => serde_json::Value::Array((0..n % 3).map(|i| value(module, elem, n + i)).collect()),
        // A JSON object whose keys are an `i64`'s text or strings, out of key order.
        Type::Map(k, v) => {
            let key = |i: usize| {
                if **k == Type::String { TEXTS[i % TEXTS.len()].to_string() } else { format!("{}", 7 - i as i64) }
            };
            serde_json::Value::Object((0..n % 3).map(|i| (key(i), value(module, v, n + i))).collect())
        }
        Type::Class(c) => {
            let class = module.classes.get(*c).expect("a class");
            let fields = class.fields.iter().map(|f| (f.name.clone(), value(module, &f.ty, n))).collect();
            serde_json::Value::Object(fields)
        }
        // serde's externally tagged form: a variant's name, or an object of one key.
        Type::Enum(e) => {
            let data = module.enums.get(*e).expect("an enum");
            let variant = &data.variants[n % data.variants.len()];
            match &variant.payload {
                None => serde_json::json!(variant.name),
                Some(payload) => serde_json::json!({ variant.name.clone(): value(module, payload, n) }),
            }
        }
        // Route parameters are never scopes or tasks (V249).
        Type::Unit | Type::Ref { .. } | Type::Scope | Type::Task(_) | Type::Actor(_) | Type::Defer => {
            serde_json::Value::Null
        }
    }
}

/// Path-parameter text for type `ty`: the `n`-th good value, or text that does not parse.
fn path_text(ty: &Type, n: usize, good: bool) -> String {
    match (ty, good) {
        (Type::I32 | Type::I64, true) => INTEGERS[n % 4].to_string(),
        (Type::F64, true) => format!("{}.5", n + 1),
        (Type::Bool, true) => (n % 2 == 1).to_string(),
        (Type::String, true) => percent(TEXTS[n % TEXTS.len()]),
        (Type::String, false) => percent("?%/"),
        (_, false) => "abc".to_string(),
        _ => "1".to_string(),
    }
}

fn percent(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The bodies a route with a body of class `class` is sent: good ones, then each failure.
fn bodies(module: &Module, class: &Type, n: usize) -> Vec<(Option<&'static str>, String)> {
    const JSON: Option<&str> = Some("application/json");
    let good = value(module, class, n);
    let mut out = vec![(JSON, good.to_string()), (Some("application/problem+json; charset=utf-8"), good.to_string())];
    out.push((None, good.to_string()));
    out.push((Some("text/plain"), good.to_string()));
    out.push((JSON, String::new()));
    out.push((JSON, "{\"id\":".to_string()));
    out.push((JSON, format!("{good} x")));
    if let serde_json::Value::Object(fields) = &good {
        let mut missing = fields.clone();
        if let Some(first) = fields.keys().next() {
            missing.remove(first);
        }
        out.push((JSON, serde_json::Value::Object(missing).to_string()));
        let mut unknown = fields.clone();
        unknown.insert("admin".to_string(), serde_json::json!(true));
        out.push((JSON, serde_json::Value::Object(unknown).to_string()));
        for (key, v) in fields {
            let mut changed = fields.clone();
            changed.insert(key.clone(), serde_json::Value::Null);
            out.push((JSON, serde_json::Value::Object(changed.clone()).to_string()));
            let wrong = if v.is_string() { serde_json::json!(12) } else { serde_json::json!("12") };
            changed.insert(key.clone(), wrong);
            out.push((JSON, serde_json::Value::Object(changed.clone()).to_string()));
            if v.is_i64() {
                changed.insert(key.clone(), serde_json::json!(2_147_483_648_i64));
                out.push((JSON, serde_json::Value::Object(changed.clone()).to_string()));
                changed.insert(key.clone(), serde_json::json!(3.5));
                out.push((JSON, serde_json::Value::Object(changed).to_string()));
            }
        }
        // A duplicate key, written by hand since a JSON object value cannot hold one.
        if let Some((key, v)) = fields.iter().next() {
            let text = good.to_string();
            out.push((JSON, format!("{{\"{key}\":{v},{}", &text[1..])));
        }
        let array: Vec<serde_json::Value> = fields.values().cloned().collect();
        out.push((JSON, serde_json::Value::Array(array).to_string()));
    }
    out.push((JSON, "[]".to_string()));
    out.push((JSON, "\"text\"".to_string()));
    out
}

/// The transcript of one service: for each route in order, the requests above.
fn transcript(module: &Module) -> Vec<Request> {
    let mut out = Vec::new();
    for n in 0..INTEGERS.len() {
        for route in &module.routes {
            let handler = module.functions.get(route.handler).expect("the handler");
            let params: Vec<(&str, &Type, ParamSource)> = handler
                .params
                .iter()
                .map(|&p| {
                    let local = &handler.locals[p];
                    (local.name.as_str(), &local.ty, route.param_source(&local.name, &local.ty))
                })
                .collect();
            let path = |good: bool| {
                let mut path = route.path.clone();
                for (name, ty, source) in &params {
                    if *source == ParamSource::Path {
                        path = path.replace(&format!("{{{name}}}"), &path_text(ty, n, good));
                    }
                }
                path
            };
            // The values of the parameters from `required` and `optional` (an optional one not
            // in round 1), except `skip`; `bad` sends text where a number belongs.
            let values = |required: ParamSource, optional: ParamSource, skip: Option<&str>, bad: bool| {
                let mut out = Vec::new();
                for (name, ty, source) in &params {
                    let inner = match ty {
                        _ if *source == required => *ty,
                        Type::Option(inner) if *source == optional && n != 1 => &**inner,
                        _ => continue,
                    };
                    if skip == Some(*name) {
                        continue;
                    }
                    out.push((*name, if bad { "abc".to_string() } else { path_text(inner, n, true) }));
                }
                out
            };
            let query = |skip: Option<&str>, bad: bool| {
                let parts: Vec<String> = values(ParamSource::Query, ParamSource::OptionalQuery, skip, bad)
                    .into_iter()
                    .map(|(name, text)| format!("{name}={text}"))
                    .collect();
                if parts.is_empty() { String::new() } else { format!("?{}", parts.join("&")) }
            };
            let headers = |skip: Option<&str>, bad: bool| -> Vec<String> {
                values(ParamSource::Header, ParamSource::OptionalHeader, skip, bad)
                    .into_iter()
                    .map(|(name, text)| format!("{}: {text}", nagi_low::RouteDecl::header_name(name)))
                    .collect()
            };
            let body_class = params.iter().find(|(_, _, s)| *s == ParamSource::Body).map(|(_, ty, _)| *ty);
            let method = route.method.name().to_string();
            let mut send_with =
                |path: String, headers: Vec<String>, content_type: Option<&'static str>, body: String| {
                    out.push(Request { method: method.clone(), path, content_type, headers, body });
                };
            for (name, _, source) in &params {
                if matches!(source, ParamSource::Header | ParamSource::OptionalHeader) {
                    let path = format!("{}{}", path(true), query(None, false));
                    send_with(path.clone(), headers(Some(name), false), None, String::new());
                    send_with(path, headers(None, true), None, String::new());
                }
            }
            let good_headers = headers(None, false);
            let mut send = |path: String, content_type: Option<&'static str>, body: String| {
                send_with(path, good_headers.clone(), content_type, body);
            };
            match body_class {
                Some(class) => {
                    for (content_type, body) in bodies(module, class, n) {
                        send(format!("{}{}", path(true), query(None, false)), content_type, body);
                    }
                }
                None => send(format!("{}{}", path(true), query(None, false)), None, String::new()),
            }
            let has_path = params.iter().any(|(_, ty, s)| *s == ParamSource::Path && **ty != Type::String);
            if has_path {
                send(format!("{}{}", path(false), query(None, false)), Some("application/json"), "{}".to_string());
            }
            for (name, _, source) in &params {
                if matches!(source, ParamSource::Query | ParamSource::OptionalQuery) {
                    send(format!("{}{}", path(true), query(Some(name), false)), None, String::new());
                    send(format!("{}{}", path(true), query(None, true)), None, String::new());
                }
            }
        }
    }
    // Routes that do not exist, a method a path does not take, and a body over the limit.
    let none = Vec::new;
    out.push(Request {
        method: "GET".into(),
        path: "/no/such/route".into(),
        content_type: None,
        headers: none(),
        body: String::new(),
    });
    if let Some(route) = module.routes.first() {
        let other = if route.method.name() == "DELETE" { "PATCH" } else { "DELETE" };
        let path = route.path.replace(['{', '}'], "");
        out.push(Request { method: other.into(), path, content_type: None, headers: none(), body: String::new() });
    }
    if let Some(route) = module.routes.iter().find(|r| matches!(r.method.name(), "POST" | "PUT")) {
        let path = route.path.replace(['{', '}'], "");
        let body = format!("{{\"name\":\"{}\"}}", "x".repeat(2 << 20));
        let method = route.method.name().into();
        out.push(Request { method, path, content_type: Some("application/json"), headers: none(), body });
    }
    out
}

/// An answer as compared: status, content type and body bytes.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

/// Sends `request` on a new connection and reads the whole answer.
fn send(server: &Server, request: &Request) -> Answer {
    let mut head = format!("{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", request.method, request.path);
    if let Some(ct) = request.content_type {
        head.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    for line in &request.headers {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", request.body.len()));
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("the service accepts");
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(request.body.as_bytes());
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(bytes.len());
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let body = bytes.get(split + 4..).unwrap_or_default().to_vec();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let content_type = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-type").then(|| value.trim().to_string())
    });
    Answer { status, content_type, body }
}

/// A value read back from either engine in one form: an integer as its digits, a float as Rust
/// writes the `f64` (PostgreSQL writes `1e+20`, Rust `1e20`), anything else as its text.
fn normalized(cell: &Option<String>) -> String {
    match cell.as_deref() {
        None => "NULL".to_owned(),
        Some(text) => match (text.parse::<i64>(), text.parse::<f64>()) {
            (Ok(integer), _) => integer.to_string(),
            (_, Ok(float)) => format!("{float:?}"),
            _ => format!("{text:?}"),
        },
    }
}

/// Every row of every table of `db`, as text, tables in order and each table's rows sorted
/// (PostgreSQL has no rowid to order by).
fn all_rows(db: &TestDb, module: &Module) -> Vec<String> {
    let mut out = Vec::new();
    for table in &module.tables {
        let mut rows: Vec<String> = db
            .rows(&format!("SELECT * FROM \"{}\"", table.name))
            .iter()
            .map(|row| format!("{}: {}", table.name, row.iter().map(normalized).collect::<Vec<_>>().join(", ")))
            .collect();
        rows.sort();
        out.extend(rows);
    }
    out
}

/// Runs the transcript against a fresh build of `source` by `backend`, on a fresh database of
/// `engine`.
fn run(
    source: &str,
    backend: Backend,
    engine: Engine,
    requests: &[Request],
    module: &Module,
) -> (Vec<Answer>, Vec<String>) {
    let exe: PathBuf = build(source, backend);
    let dir = temp_dir("differential");
    let db = TestDb::new(engine, "differential");
    let log = dir.join("service.log");
    // A short request timeout: the transcript's largest integers make some handlers loop for
    // minutes (a bulk insert of 10^8 rows), which then answer 503 on both builds, and the LLVM
    // build's frame is cancelled in the middle of an await.
    let server = Server::start(&exe, db.path(), Some(&log), &["--timeout-ms", "2000"]);
    let answers: Vec<Answer> = requests.iter().map(|r| send(&server, r)).collect();
    assert!(server.stop().success(), "{source} on {backend:?} stops cleanly");
    // The LLVM build's code owns nothing once every request has ended, cancelled ones (the
    // timeouts) included, unless a handler trapped: a trapped frame is leaked on purpose.
    let trapped = answers.iter().any(|a| a.status == 500 && String::from_utf8_lossy(&a.body).contains("\"trap\""));
    if backend == Backend::Llvm && !trapped {
        let log = std::fs::read_to_string(dir.join("service.log")).expect("the log");
        let owned = support::owned_at_shutdown(&log);
        assert_eq!(owned, Some("0"), "{source}: the LLVM build leaked; its log:\n{log}");
    }
    (answers, all_rows(&db, module))
}

#[test]
fn every_service_answers_the_transcript_identically_on_both_emitters() {
    for source in SERVICES {
        let module = module(source);
        let requests = transcript(&module);
        let (rust, rust_rows) = run(source, Backend::Rust, Engine::Sqlite, &requests, &module);
        let (llvm, llvm_rows) = run(source, Backend::Llvm, Engine::Sqlite, &requests, &module);
        let mut statuses = std::collections::BTreeMap::new();
        for ((request, r), l) in requests.iter().zip(&rust).zip(&llvm) {
            assert_eq!(
                r,
                l,
                "{source}: {} {} ({:?}, {} bytes) differs between the emitters (left rust, right llvm); body: {}",
                request.method,
                request.path,
                request.content_type,
                request.body.len(),
                String::from_utf8_lossy(&r.body)
            );
            *statuses.entry(r.status).or_insert(0) += 1;
        }
        assert_eq!(rust_rows, llvm_rows, "{source}: the final rows differ");
        eprintln!("{source}: {} requests identical, statuses {statuses:?}, {} rows", requests.len(), rust_rows.len());
        // The transcript must reach the service's handlers and its binding rules alike.
        assert!(statuses.keys().any(|s| (200..300).contains(s)), "{source}: no request succeeded: {statuses:?}");
        assert!(statuses.keys().any(|s| (400..500).contains(s)), "{source}: no request was refused: {statuses:?}");
    }
}

/// An answer as the engines must agree on it: a database error's `detail` is the engine's own
/// message (`UNIQUE constraint failed: users.id` against `duplicate key value violates unique
/// constraint "users_pkey"`), so only its `error` is kept.
fn engine_neutral(answer: &Answer) -> (u16, Option<String>, String) {
    let body = String::from_utf8_lossy(&answer.body).into_owned();
    let body = match serde_json::from_str::<serde_json::Value>(&body) {
        Ok(serde_json::Value::Object(mut error))
            if matches!(
                error.get("error").and_then(|e| e.as_str()),
                Some("conflict" | "database error" | "database busy" | "database unavailable")
            ) && error.len() == 2 =>
        {
            error.remove("detail");
            serde_json::Value::Object(error).to_string()
        }
        _ => body,
    };
    (answer.status, answer.content_type.clone(), body)
}

#[test]
fn every_service_answers_the_transcript_identically_on_both_engines() {
    for source in SERVICES {
        let module = module(source);
        // A service without tables has nothing an engine changes.
        if module.tables.is_empty() {
            continue;
        }
        let requests = transcript(&module);
        let (sqlite, sqlite_rows) = run(source, Backend::Rust, Engine::Sqlite, &requests, &module);
        for backend in [Backend::Rust, Backend::Llvm] {
            let (postgres, postgres_rows) = run(source, backend, Engine::Postgres, &requests, &module);
            for ((request, s), p) in requests.iter().zip(&sqlite).zip(&postgres) {
                assert_eq!(
                    engine_neutral(s),
                    engine_neutral(p),
                    "{source}: {} {} ({:?}, {} bytes) differs between SQLite (left) and PostgreSQL on {backend:?} \
                     (right)",
                    request.method,
                    request.path,
                    request.content_type,
                    request.body.len(),
                );
            }
            assert_eq!(sqlite_rows, postgres_rows, "{source}: the final rows differ between SQLite and PostgreSQL");
        }
        eprintln!(
            "{source}: {} requests answered alike on SQLite and PostgreSQL, {} rows",
            requests.len(),
            sqlite_rows.len()
        );
    }
}
