//! `http-baseline`: the HTTP bench's hand-written baseline — `examples/users.nagi`'s routes (and
//! the bench's `POST /echo`) written by hand in plain Axum 0.8 and rusqlite, as an Axum user
//! would, with the limits the Nagi runtime applies.
//!
//! ```text
//! http-baseline [--listen ADDR:PORT] [--db PATH] [--workers N] [--access-log]
//! ```
//!
//! Routes and answers are the Nagi service's on the bench's cases (same statuses, same JSON):
//! `GET /health` → `"ok"`; `POST /echo` → 201 with the body; `GET /users/{id}` → the user or 404;
//! `GET /users?limit=&offset=` → the users by id; `POST /users` → 201 with the user, 409 on a
//! duplicate id. The limits: a 30 s request timeout (503), a 1 MiB body limit, `--workers` Tokio
//! workers (1 by default), and one SQLite thread (see `db.rs`). Without `--access-log` it logs
//! nothing per request; with it, one `tracing` line per request goes to stdout through
//! `tracing-appender`'s non-blocking (bounded, lossy) writer.

mod db;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use tower_http::timeout::TimeoutLayer;

use db::{Db, DbError};

/// A user, as `examples/users.nagi` declares it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct User {
    /// The key.
    pub id: i64,
    /// The name.
    pub name: String,
    /// The age.
    pub age: i32,
}

/// The Nagi runtime's error body: `{"error": ..., "detail": ...}`.
#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    detail: &'a str,
}

fn error(status: StatusCode, error: &str, detail: &str) -> Response {
    (status, Json(ErrorBody { error, detail })).into_response()
}

fn db_error(e: DbError) -> Response {
    match e {
        DbError::Conflict(message) => error(StatusCode::CONFLICT, "conflict", &message),
        DbError::Failed(message) => error(StatusCode::INTERNAL_SERVER_ERROR, "database error", &message),
    }
}

async fn health() -> Json<&'static str> {
    Json("ok")
}

async fn echo(Json(user): Json<User>) -> (StatusCode, Json<User>) {
    (StatusCode::CREATED, Json(user))
}

async fn get_user(State(db): State<Db>, Path(id): Path<i64>, method: Method, uri: Uri) -> Response {
    match db.get(id).await {
        Ok(Some(user)) => Json(user).into_response(),
        Ok(None) => error(StatusCode::NOT_FOUND, "not found", &format!("{method} {}: no such resource", uri.path())),
        Err(e) => db_error(e),
    }
}

/// The query of `GET /users`, with the route's defaults.
#[derive(Deserialize)]
struct Page {
    #[serde(default = "default_limit")]
    limit: i64,
    #[serde(default)]
    offset: i64,
}

fn default_limit() -> i64 {
    100
}

async fn list_users(State(db): State<Db>, Query(page): Query<Page>) -> Response {
    match db.list(page.limit, page.offset).await {
        Ok(users) => Json(users).into_response(),
        Err(e) => db_error(e),
    }
}

async fn create_user(State(db): State<Db>, Json(user): Json<User>) -> Response {
    match db.insert(user).await {
        Ok(user) => (StatusCode::CREATED, Json(user)).into_response(),
        Err(e) => db_error(e),
    }
}

static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

/// `--access-log`: one line per request (id, method, path, status, microseconds), as the Nagi
/// runtime writes at `--log info`.
async fn access_log(request: Request, next: Next) -> Response {
    let start = Instant::now();
    let id = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed);
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
    tracing::info!(target: "access", request = id, method = %method, path = %path, status = response.status().as_u16(), micros);
    response
}

/// The router: the routes, the 1 MiB body limit, the 30 s timeout (503), and the access log
/// when `access_log`.
pub fn app(db: Db, access_log_on: bool) -> Router {
    let app = Router::new()
        .route("/health", get(health))
        .route("/echo", post(echo))
        .route("/users/{id}", get(get_user))
        .route("/users", get(list_users).post(create_user))
        .with_state(db)
        .layer(DefaultBodyLimit::max(1_048_576))
        .layer(TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, Duration::from_secs(30)));
    if access_log_on { app.layer(axum::middleware::from_fn(access_log)) } else { app }
}

struct Args {
    listen: String,
    db: String,
    workers: usize,
    access_log: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { listen: "127.0.0.1:8080".into(), db: "./users.db".into(), workers: 1, access_log: false };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--listen" => args.listen = value()?,
            "--db" => args.db = value()?,
            "--workers" => args.workers = value()?.parse().map_err(|e| format!("--workers: {e}"))?,
            "--access-log" => args.access_log = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if args.workers == 0 {
        return Err("--workers must be at least 1".into());
    }
    Ok(args)
}

async fn shutdown_signal() {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match terminate.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
    }
}

fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!(
                "http-baseline: {message}\nusage: http-baseline [--listen ADDR:PORT] [--db PATH] [--workers N] [--access-log]"
            );
            return std::process::ExitCode::from(2);
        }
    };
    // Kept alive until the end of main: dropping it flushes the writer.
    let _guard = args.access_log.then(|| {
        let (writer, guard) = tracing_appender::non_blocking(std::io::stdout());
        tracing_subscriber::fmt().with_writer(writer).with_ansi(false).with_max_level(tracing::Level::INFO).init();
        guard
    });
    let db = match Db::open(&args.db) {
        Ok(db) => db,
        Err(message) => {
            eprintln!("error: {message}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.workers)
        .enable_all()
        .build()
        .expect("Tokio starts");
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
        tracing::info!("http-baseline listening on http://{}", args.listen);
        axum::serve(listener, app(db, args.access_log))
            .with_graceful_shutdown(shutdown_signal())
            .await
            .map_err(|e| e.to_string())
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}
