//! Integration tests of what a service reaches outside its process (issue 32), each on both
//! emitters from one body: `Time` and `Duration` through JSON and SQLite, and the accounts
//! pattern (an Argon2id hash, a random API key, a constant-time comparison) over real HTTP
//! against a real SQLite file or PostgreSQL database (`timestamp with time zone` and `uuid`
//! columns there), read back with rusqlite or the postgres client.

mod support;

use support::{Backend, Engine, Server, TestDb, build, temp_dir};

const TIME_SERVICE: &str = "tests/fixtures/time_service.nagi";

fn start(tag: &str, backend: Backend, engine: Engine) -> (Server, TestDb) {
    let exe = build(TIME_SERVICE, backend);
    let db = TestDb::new(engine, tag);
    (Server::start(&exe, db.path(), None, &[]), db)
}

/// The SQL that reads `column`, a `Time`, as the fixed-width RFC 3339 text the service writes.
fn time_text(db: &TestDb, column: &str) -> String {
    match db.engine {
        Engine::Sqlite => column.to_owned(),
        Engine::Postgres => format!("to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"),
    }
}

/// One post as the service answers it, fields in declaration order.
fn post(id: i64, title: &str, created_at: &str, ttl: &str, seen_at: Option<&str>) -> String {
    let seen_at = seen_at.map_or("null".to_string(), |s| format!("\"{s}\""));
    format!(r#"{{"id":{id},"title":"{title}","created_at":"{created_at}","ttl":"{ttl}","seen_at":{seen_at}}}"#)
}

/// Times round trip through a row and a response byte for byte (written in UTC at a fixed
/// width, whatever offset they came in), sort right across a day boundary and a microsecond,
/// compare right in SQL, and a malformed one is a 422 that writes nothing.
fn times_round_trip_through_rows_and_responses_and_sort_in_sql(backend: Backend, engine: Engine) {
    let (server, db) = start("time", backend, engine);
    let first = post(1, "b", "2026-12-05T00:00:00.000001Z", "1h", None);
    let (status, body) = server.send_json("POST", "/posts", &first);
    assert_eq!((status, body.as_str()), (201, first.as_str()));
    // Another offset and a short fraction come back in UTC with six digits.
    let sent = r#"{"id":2,"title":"a","created_at":"2026-12-05T00:59:59.999999+01:00","ttl":"90s","seen_at":"2026-12-05T01:00:00+01:00"}"#;
    let second = post(2, "a", "2026-12-04T23:59:59.999999Z", "90s", Some("2026-12-05T00:00:00.000000Z"));
    let (status, body) = server.send_json("POST", "/posts", sent);
    assert_eq!((status, body.as_str()), (201, second.as_str()));
    let third = post(3, "c", "2026-12-05T00:00:00.000000Z", "1500us", None);
    assert_eq!(server.send_json("POST", "/posts", &third), (201, third.clone()));

    for bad in [
        r#"{"id":4,"title":"d","created_at":"2026-13-05T00:00:00Z","ttl":"1s","seen_at":null}"#,
        r#"{"id":4,"title":"d","created_at":"yesterday","ttl":"1s","seen_at":null}"#,
        r#"{"id":4,"title":"d","created_at":1764892800,"ttl":"1s","seen_at":null}"#,
        r#"{"id":4,"title":"d","created_at":"2026-12-05T00:00:00Z","ttl":"1 s","seen_at":null}"#,
    ] {
        let (status, body) = server.send_json("POST", "/posts", bad);
        assert_eq!(status, 422, "{bad}: {body}");
    }
    let (_, body) = server.send_json("POST", "/posts", r#"{"id":4,"title":"d","created_at":"yesterday","ttl":"1s"}"#);
    assert!(body.contains(r#"created_at: invalid value: string \"yesterday\", expected an RFC 3339 time"#), "{body}");

    // Day boundary (23:59:59.999999 < 00:00:00) and one microsecond (…00.000000 < …00.000001).
    let (status, body) = server.get("/posts");
    assert_eq!((status, body), (200, format!("[{second},{third},{first}]")));
    let (status, body) = server.get("/posts/since?at=2026-12-05T01:00:00%2B01:00");
    assert_eq!((status, body), (200, format!("[{third},{first}]")));
    // A `Time` and a `Duration` as query parameters, parsed as in JSON; a bad one is a 400.
    let (status, body) = server.get("/posts/since?at=2026-12-04T23:59:59.999999Z&within=1us");
    assert_eq!((status, body), (200, format!("[{second}]")));
    let (status, body) = server.get("/posts/since?at=yesterday");
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains(
            r#"query parameter `at`: expected an RFC 3339 time, such as 2026-12-05T10:00:00Z, got \"yesterday\""#
        ),
        "{body}"
    );
    let (status, body) = server.get("/posts/since?at=2026-12-05T00:00:00Z&within=1%20s");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("query parameter `within`: expected a duration such as 250ms, 5s or 1h"), "{body}");

    // The database holds the instants (SQLite as the fixed-width text, PostgreSQL as
    // `timestamp with time zone`) and the microseconds; the 422s wrote nothing.
    assert!(server.stop().success());
    let sql = format!(
        "SELECT id, {}, ttl, {} FROM posts ORDER BY id",
        time_text(&db, "created_at"),
        time_text(&db, "seen_at")
    );
    let text = |s: &str| Some(s.to_owned());
    assert_eq!(
        db.rows(&sql),
        vec![
            vec![text("1"), text("2026-12-05T00:00:00.000001Z"), text("3600000000"), None],
            vec![text("2"), text("2026-12-04T23:59:59.999999Z"), text("90000000"), text("2026-12-05T00:00:00.000000Z")],
            vec![text("3"), text("2026-12-05T00:00:00.000000Z"), text("1500"), None],
        ]
    );
}

/// Signing up stores a PHC-formatted Argon2id hash (never the password) and a random key; the
/// right password logs in, a wrong one is 401, and the key is compared in constant time.
fn accounts_keep_an_argon2id_hash_and_a_random_key(backend: Backend, engine: Engine) {
    let (server, db) = start("accounts", backend, engine);
    let (status, body) = server.send_json("POST", "/accounts", r#"{"name":"ann","password":"correct horse"}"#);
    assert_eq!(status, 201, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    let key = answer["key"].as_str().expect("a key").to_string();
    assert_eq!(key.len(), 43, "32 random bytes as URL-safe base64: {key}");
    assert!(key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{key}");
    let (_, other) = server.send_json("POST", "/accounts", r#"{"name":"bob","password":"correct horse"}"#);
    assert!(!other.contains(&key), "two accounts got one key");

    let (status, body) = server.send_json("POST", "/login", r#"{"name":"ann","password":"correct horse"}"#);
    assert_eq!((status, body), (201, format!(r#"{{"name":"ann","key":"{key}"}}"#)));
    let (status, body) = server.send_json("POST", "/login", r#"{"name":"ann","password":"correct horsE"}"#);
    assert_eq!((status, body.as_str()), (401, r#"{"error":"unauthorized","detail":"wrong name or password"}"#));

    assert_eq!(server.get_with("/whoami", &format!("Authorization: Bearer {key}\r\n")), (200, "\"ann\"".into()));
    let wrong = format!("Authorization: Bearer {}x\r\n", &key[..42]);
    assert_eq!(server.get_with("/whoami", &wrong).0, 401);

    assert!(server.stop().success());
    let hashes: Vec<String> = db
        .rows("SELECT hash FROM accounts ORDER BY name")
        .into_iter()
        .map(|row| row[0].clone().unwrap_or_default())
        .collect();
    assert_eq!(hashes.len(), 2);
    for hash in &hashes {
        assert!(hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{hash}");
        assert!(!hash.contains("correct horse"));
    }
    assert_ne!(hashes[0], hashes[1], "one password, two salts, two hashes");
}

/// `nagic test` with a fixed clock: tests of expiry set the clock where they need it (through
/// the database too, where `now()` is stored and compared in SQL), and a test that sets none
/// reads the system's, each test being a process of its own.
fn nagic_test_fixes_the_clock_for_a_test(backend: Backend) {
    let out = support::nagic(&["test", backend.flag(), "tests/fixtures/clocked"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    for line in [
        "test \"a session expires after an hour\" ... ok",
        "test \"the clock stays where the test set it\" ... ok",
        "test \"a test that sets no clock reads the system's\" ... ok",
        "test result: ok. 3 passed; 0 failed",
    ] {
        assert!(stdout.lines().any(|l| l == line), "no line {line:?} in:\n{stdout}");
    }
}

/// A required configuration value: unset or malformed, the program stops before `main` with
/// exit status 2 and a message naming the variable and what was expected; set, it is read.
fn a_missing_or_malformed_configuration_value_stops_the_program_with_status_2(backend: Backend) {
    let exe = build("tests/fixtures/config_required.low", backend);
    let run = |value: Option<&str>| {
        let mut command = std::process::Command::new(&exe);
        command.env_remove("NAGI_TEST_PAGE_LIMIT");
        if let Some(value) = value {
            command.env("NAGI_TEST_PAGE_LIMIT", value);
        }
        command.output().expect("the program runs")
    };
    let missing = run(None);
    assert_eq!(missing.status.code(), Some(2));
    assert!(missing.stdout.is_empty(), "main ran: {}", String::from_utf8_lossy(&missing.stdout));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        "nagi: configuration: NAGI_TEST_PAGE_LIMIT (i64) is required but not set; set the environment variable NAGI_TEST_PAGE_LIMIT\n"
    );
    let malformed = run(Some("lots"));
    assert_eq!(malformed.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&malformed.stderr),
        "nagi: configuration: NAGI_TEST_PAGE_LIMIT (i64) must be an i64 in decimal, not \"lots\"\n"
    );
    let set = run(Some("25"));
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    assert_eq!(String::from_utf8_lossy(&set.stdout), "http://localhost:9\n25\n0.5\nfalse\n250000\n");
}

/// A service's configuration: without its required variables it stops before listening, with
/// status 2 naming the first; with them it reads every value (defaults where unset), guards a
/// route with the secret, and the secret is in no answer, no printed line and no log line,
/// not even those of a failed and a trapped request that used it.
fn a_service_reads_its_configuration_and_never_shows_the_secret(backend: Backend) {
    let exe = build("tests/fixtures/config_service.nagi", backend);
    let dir = temp_dir("config");
    let unset = std::process::Command::new(&exe)
        .args(["--listen", "127.0.0.1:0", "--db"])
        .arg(dir.join("unset.db"))
        .env_remove("BASE_URL")
        .env_remove("API_KEY")
        .output()
        .expect("the service runs");
    assert_eq!(unset.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&unset.stderr),
        "nagi: configuration: BASE_URL (String) is required but not set; set the environment variable BASE_URL\n"
    );
    assert!(!dir.join("unset.db").exists(), "the service opened its database before stopping");

    let secret = "s3cret-Q7x";
    let log = dir.join("service.log");
    let server = Server::start_with_env(
        &exe,
        &dir.join("service.db"),
        Some(&log),
        &[],
        &[("BASE_URL", "http://mail.local"), ("API_KEY", secret), ("TIMEOUT", "250ms")],
    );
    assert_eq!(server.get("/settings"), (200, "\"http://mail.local 100 250ms\"".into()));
    assert_eq!(server.get_with("/secure", &format!("Authorization: Bearer {secret}\r\n")), (200, "\"welcome\"".into()));
    let (status, body) = server.get_with("/secure", "Authorization: Bearer guess\r\n");
    assert_eq!((status, body.as_str()), (401, r#"{"error":"unauthorized","detail":"wrong key"}"#));
    assert_eq!(server.get("/crash?n=0").0, 500);
    assert!(server.stop().success());
    let log = std::fs::read_to_string(&log).expect("the log was written");
    assert!(log.contains("key: ***"), "{log}");
    assert!(log.contains("division by zero"), "{log}");
    assert!(!log.contains(secret), "the secret reached the log:\n{log}");
}

/// Notes keyed by `uuid_v7()`: every id is a version 7 UUID in canonical text, ids sort as the
/// notes were made (so `ORDER BY id` is creation order), a UUID round trips through a row and
/// a lookup (in another form too), and a malformed one in a body is a 422 that writes nothing.
fn uuid_v7_keys_rows_in_the_order_they_were_made(backend: Backend, engine: Engine) {
    let (server, db) = start("uuids", backend, engine);
    let mut made = Vec::new();
    for text in ["first", "second", "third"] {
        let (status, body) = server.send_json("POST", "/notes", &format!(r#"{{"text":"{text}","parent":null}}"#));
        assert_eq!(status, 201, "{body}");
        let note: serde_json::Value = serde_json::from_str(&body).unwrap();
        let id = note["id"].as_str().expect("an id").to_string();
        assert_eq!((id.len(), &id[14..15], id.to_lowercase() == id), (36, "7", true), "{id}");
        made.push((id, body));
    }
    let child = format!(r#"{{"text":"child","parent":"{}"}}"#, made[0].0.to_uppercase());
    let (status, body) = server.send_json("POST", "/notes", &child);
    assert_eq!(status, 201, "{body}");
    assert!(body.contains(&format!(r#""parent":"{}""#, made[0].0)), "the parent in canonical form: {body}");
    let child: serde_json::Value = serde_json::from_str(&body).unwrap();
    let child_id = child["id"].as_str().expect("an id").to_owned();
    let (status, body) = server.send_json("POST", "/notes", r#"{"text":"x","parent":"not-a-uuid"}"#);
    assert_eq!(status, 422, "{body}");
    assert!(body.contains(r#"parent: invalid value: string \"not-a-uuid\", expected a UUID"#), "{body}");

    let (_, listed) = server.get("/notes");
    let listed: Vec<serde_json::Value> = serde_json::from_str(&listed).unwrap();
    let texts: Vec<&str> = listed.iter().map(|n| n["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["first", "second", "third", "child"], "ORDER BY id is the order the notes were made");
    let bare = made[1].0.replace('-', "");
    assert_eq!(server.get(&format!("/notes/find?id={bare}")), (200, made[1].1.clone()));
    // A `Uuid` as a path parameter and an optional header, in any form the uuid crate reads.
    assert_eq!(server.get(&format!("/notes/{}", made[1].0.to_uppercase())), (200, made[1].1.clone()));
    let (status, body) = server.get("/notes/42");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains(r#"path parameter `id`: expected a UUID, got \"42\""#), "{body}");
    let header = format!("X-Parent: {}\r\n", made[0].0);
    assert_eq!(server.get_with(&format!("/notes/{child_id}"), &header).0, 200);
    let header = format!("X-Parent: {}\r\n", made[1].0);
    assert_eq!(server.get_with(&format!("/notes/{child_id}"), &header).0, 404);
    assert!(server.stop().success());
    assert_eq!(db.rows("SELECT id FROM notes WHERE text = 'first'"), [[Some(made[0].0.clone())]]);
    assert_eq!(db.rows("SELECT count(*) FROM notes"), [[Some("4".to_owned())]], "the 422 wrote nothing");
}

crate::on_every_backend!(
    a_service_reads_its_configuration_and_never_shows_the_secret,
    a_missing_or_malformed_configuration_value_stops_the_program_with_status_2,
    nagic_test_fixes_the_clock_for_a_test,
);

// What the database stores, on both engines: `sqlite::rust::NAME`, `postgres::llvm::NAME`, ….
crate::on_every_backend_and_engine!(
    uuid_v7_keys_rows_in_the_order_they_were_made,
    times_round_trip_through_rows_and_responses_and_sort_in_sql,
    accounts_keep_an_argon2id_hash_and_a_random_key,
);
