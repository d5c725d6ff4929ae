//! A small hand-written service that uses only the runtime's public API, shaped like the code the
//! Rust emitter generates, and a harness that serves it in-process on a free port.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use nagi_runtime::config::Config;
use nagi_runtime::db::{self, FromRow, Row, RowError};
use nagi_runtime::http::{self, Handler, HandlerFuture, Request, Route};
use nagi_runtime::ops;
use nagi_runtime::serde_json::Value;
use nagi_runtime::service::{self, ServeError, Service, Table};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The class every test stores, as the emitter generates it.
#[derive(nagi_runtime::serde::Serialize, nagi_runtime::serde::Deserialize, Debug, Clone, PartialEq)]
#[serde(crate = "nagi_runtime::serde", deny_unknown_fields)]
pub struct Person {
    pub id: i64,
    pub name: String,
    pub age: i32,
}

impl FromRow for Person {
    const COLUMNS: &'static [&'static str] = &["id", "name", "age"];

    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
        Ok(Person {
            id: row.i64(columns[0], "id")?,
            name: row.string(columns[1], "name")?,
            age: row.i32(columns[2], "age")?,
        })
    }
}

/// A one-column result.
pub struct Count {
    pub n: i64,
}

impl FromRow for Count {
    const COLUMNS: &'static [&'static str] = &["n"];

    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
        Ok(Count { n: row.i64(columns[0], "n")? })
    }
}

const INSERT: &str = "INSERT INTO people (id, name, age) VALUES (?1, ?2, ?3)";
const SELECT_ONE: &str = "SELECT id, name, age FROM people WHERE id = ?1";

fn insert_args(p: &Person) -> Vec<db::SqlValue> {
    vec![p.id.into(), (&p.name).into(), p.age.into()]
}

fn create(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let p: Person = req.json();
        db::exec(INSERT, insert_args(&p)).await;
        http::reply(201, &p)
    })
}

fn read(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let id: i64 = req.path("id");
        let p = db::query_one::<Person>(SELECT_ONE, vec![id.into()]).await;
        http::reply_option(200, &p)
    })
}

fn list(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let limit: i64 = req.query_opt("limit").unwrap_or(100);
        let offset: i64 = req.query_opt("offset").unwrap_or(0);
        let people = db::query::<Person>(
            "SELECT id, name, age FROM people ORDER BY id LIMIT ?1 OFFSET ?2",
            vec![limit.into(), offset.into()],
        )
        .await;
        http::reply(200, &people)
    })
}

fn update(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let id: i64 = req.path("id");
        let p: Person = req.json();
        let changed = db::exec(
            "UPDATE people SET name = ?2, age = ?3 WHERE id = ?1",
            vec![id.into(), (&p.name).into(), p.age.into()],
        )
        .await;
        let found = if changed == 0 { None } else { Some(Person { id, ..p }) };
        http::reply_option(200, &found)
    })
}

fn delete(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let id: i64 = req.path("id");
        let changed = db::exec("DELETE FROM people WHERE id = ?1", vec![id.into()]).await;
        http::reply_option(200, &(changed > 0).then_some(changed))
    })
}

fn count(_req: Request) -> HandlerFuture {
    Box::pin(async move {
        let c = db::query_one::<Count>("SELECT COUNT(*) AS n FROM people", vec![]).await;
        http::reply(200, &ops::unwrap(c).n)
    })
}

fn health(_req: Request) -> HandlerFuture {
    Box::pin(async move { http::reply(200, &"ok") })
}

fn divide(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let n: i64 = req.path("n");
        http::reply(200, &ops::div_i64(100, n))
    })
}

fn panics(_req: Request) -> HandlerFuture {
    Box::pin(async move { panic!("a plain panic") })
}

fn params(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let name: String = req.path("name");
        let n: i32 = req.query("n");
        let x: Option<f64> = req.query_opt("x");
        let b: Option<bool> = req.query_opt("b");
        http::reply(200, &(name, n, x, b))
    })
}

fn sleep(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let ms: u64 = u64::try_from(req.query::<i64>("ms")).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        http::reply(200, &"slept")
    })
}

/// Begins a transaction, inserts the body, waits `ms`, then commits when `commit=true` and rolls
/// back otherwise.
fn tx_hold(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let p: Person = req.json();
        let ms: i64 = req.query("ms");
        let commit: bool = req.query_opt("commit").unwrap_or(false);
        db::begin().await;
        db::exec(INSERT, insert_args(&p)).await;
        tokio::time::sleep(Duration::from_millis(u64::try_from(ms).unwrap_or(0))).await;
        if commit {
            db::commit().await
        } else {
            db::rollback().await
        }
        http::reply(200, &p)
    })
}

/// Begins a transaction, inserts, and returns without ending it.
fn tx_leave_open(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let p: Person = req.json();
        db::begin().await;
        db::exec(INSERT, insert_args(&p)).await;
        http::reply(200, &p)
    })
}

/// Begins a transaction, inserts, and traps.
fn tx_trap(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let p: Person = req.json();
        db::begin().await;
        db::exec(INSERT, insert_args(&p)).await;
        nagi_runtime::trap("boom")
    })
}

/// Inserts the body and a second row with `db::exec_commit`, then waits `ms` before answering.
/// Generated code never waits after `exec_commit` (V248); this handler does, so that a test can
/// see the writes committed before the request ends.
fn tx_commit_early(req: Request) -> HandlerFuture {
    Box::pin(async move {
        let p: Person = req.json();
        let ms: i64 = req.query("ms");
        db::exec(INSERT, insert_args(&p)).await;
        let second = Person { id: p.id + 1, name: p.name.clone(), age: p.age };
        db::exec_commit(INSERT, insert_args(&second)).await;
        tokio::time::sleep(Duration::from_millis(u64::try_from(ms).unwrap_or(0))).await;
        http::reply(201, &p)
    })
}

/// The test service.
pub fn service() -> Service {
    Service {
        name: "people",
        tables: vec![Table {
            name: "people",
            create_sql: "CREATE TABLE IF NOT EXISTS people (id INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL, age INTEGER NOT NULL)",
            postgres_sql: "CREATE TABLE IF NOT EXISTS \"people\" (\"id\" bigint NOT NULL, \"name\" text NOT NULL, \"age\" integer NOT NULL, PRIMARY KEY (\"id\"))",
        }],
        routes: vec![
            Route { method: "POST", path: "/people", handler: Handler::new(create) },
            Route { method: "GET", path: "/people", handler: Handler::new(list) },
            Route { method: "GET", path: "/people/{id}", handler: Handler::new(read) },
            Route { method: "PUT", path: "/people/{id}", handler: Handler::new(update) },
            Route { method: "DELETE", path: "/people/{id}", handler: Handler::new(delete) },
            Route { method: "GET", path: "/count", handler: Handler::new(count) },
            Route { method: "GET", path: "/health", handler: Handler::new(health) },
            Route { method: "GET", path: "/divide/{n}", handler: Handler::new(divide) },
            Route { method: "GET", path: "/panic", handler: Handler::new(panics) },
            Route { method: "GET", path: "/params/{name}", handler: Handler::new(params) },
            Route { method: "GET", path: "/sleep", handler: Handler::new(sleep) },
            Route { method: "POST", path: "/tx/hold", handler: Handler::new(tx_hold) },
            Route { method: "POST", path: "/tx/leave-open", handler: Handler::new(tx_leave_open) },
            Route { method: "POST", path: "/tx/trap", handler: Handler::new(tx_trap) },
            Route { method: "POST", path: "/tx/commit-early", handler: Handler::new(tx_commit_early) },
        ],
        queues: Vec::new(),
        openapi: None,
    }
}

/// A running test server with its own database file.
pub struct Server {
    pub base: String,
    /// The address the server listens on, for tests that speak raw TCP.
    pub addr: SocketAddr,
    pub db_path: PathBuf,
    pub client: reqwest::Client,
    keep_file: bool,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), ServeError>>>,
}

/// An answer: status and parsed JSON body (`Value::Null` when the body is not JSON).
pub struct Answer {
    pub status: u16,
    pub json: Value,
    pub content_type: String,
    pub headers: reqwest::header::HeaderMap,
    /// The body's length in bytes (0 for a `HEAD`).
    pub body_len: usize,
}

impl Answer {
    /// Asserts the JSON error shape and that `detail` mentions `needle`.
    pub fn assert_error(&self, status: u16, needle: &str) {
        assert_eq!(self.status, status, "body: {}", self.json);
        assert_eq!(self.content_type, "application/json");
        assert!(self.json["error"].is_string(), "no error kind in {}", self.json);
        let detail = self.json["detail"].as_str().unwrap_or_else(|| panic!("no detail in {}", self.json));
        assert!(detail.contains(needle), "detail {detail:?} does not mention {needle:?}");
    }
}

static NEXT_DB: AtomicU32 = AtomicU32::new(0);

/// A fresh database path in the temp directory.
pub fn fresh_db_path() -> PathBuf {
    let dir = std::env::temp_dir().join("nagi-runtime-tests");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{}-{}.db", std::process::id(), NEXT_DB.fetch_add(1, Ordering::Relaxed)));
    remove_db(&path);
    path
}

fn remove_db(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

impl Server {
    /// Starts the service on a free port with a fresh file database.
    pub async fn start() -> Server {
        Server::start_with(fresh_db_path(), |_| {}).await
    }

    /// Starts the service on `db_path`, after `adjust` has changed the default test config.
    pub async fn start_with(db_path: PathBuf, adjust: impl FnOnce(&mut Config)) -> Server {
        let mut config = Config::new(db_path.to_str().expect("utf-8 temp path"));
        adjust(&mut config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let base = format!("http://{addr}");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(service::serve_until(listener, service(), config, async move {
            let _ = stopped.await;
        }));
        let server = Server {
            base,
            addr,
            db_path,
            client: reqwest::Client::new(),
            keep_file: false,
            stop: Some(stop),
            task: Some(task),
        };
        // The database is opened and its tables created before the listener accepts; wait for
        // that, so a test can write to the file right away.
        assert_eq!(server.get("/health").await.status, 200);
        server
    }

    /// Shuts down gracefully and waits for the server (and its database thread) to finish.
    pub async fn stop(mut self) -> Result<(), ServeError> {
        self.shutdown().await
    }

    /// Like [`Server::stop`], but leaves the database file for a later server.
    pub async fn stop_keeping_file(mut self) -> Result<(), ServeError> {
        self.keep_file = true;
        self.shutdown().await
    }

    async fn shutdown(&mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => task.await.expect("server task"),
            None => Ok(()),
        }
    }

    /// Sends a request with an optional content type and body.
    pub async fn send(&self, method: &str, path: &str, content_type: Option<&str>, body: &str) -> Answer {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        if !body.is_empty() || content_type.is_some() {
            request = request.body(body.to_owned());
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let content_type =
            response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.expect("body");
        let json = nagi_runtime::serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Answer { status, json, content_type, headers, body_len: bytes.len() }
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.send("GET", path, None, "").await
    }

    pub async fn post_json(&self, path: &str, body: &str) -> Answer {
        self.send("POST", path, Some("application/json"), body).await
    }

    /// The rows of `people`, read with a separate SQLite connection on the file.
    pub fn rows(&self) -> Vec<(i64, String, i64)> {
        let conn = rusqlite::Connection::open(&self.db_path).expect("open db file");
        let mut statement = conn.prepare("SELECT id, name, age FROM people ORDER BY id").expect("prepare");
        statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    }

    /// Asserts that no row was written and the server still answers.
    pub async fn assert_untouched(&self) {
        assert_eq!(self.rows(), vec![], "a failed request wrote a row");
        assert_eq!(self.get("/health").await.status, 200);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if !self.keep_file {
            remove_db(&self.db_path);
        }
    }
}
