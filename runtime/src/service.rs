//! A whole service and how it runs: its tables, routes and job queues, the database it opens
//! before it listens, the queue workers that run beside the server, and the process around them
//! (the command line, logging, Tokio, signals, the exit status).
//!
//! This is the runtime's composition root for services: it sits above [`crate::http`] (which
//! serves routes) and [`crate::queues`] (which run jobs as requests), so neither names the
//! other's setup. The Rust path's generated `main` calls [`serve`]; the LLVM path's adapter
//! (`cabi::service`) builds a [`Service`] from its descriptors and calls [`serve_and_check`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::db::{Database, DbOptions};
use crate::http::{self, Route};
use crate::panic_hook::{HookMode, install_hook};
use crate::queues::{self, Queue};

/// A table the service needs, created at start.
#[derive(Clone, Copy)]
pub struct Table {
    /// The table's name.
    pub name: &'static str,
    /// Its `CREATE TABLE IF NOT EXISTS ...` statement in SQLite's column types.
    pub create_sql: &'static str,
    /// The same statement in PostgreSQL's column types, run when the service starts on a
    /// PostgreSQL database.
    pub postgres_sql: &'static str,
}

/// A whole service: its name (the default database is `./<name>.db`), tables, routes and job
/// queues.
pub struct Service {
    /// The service's name.
    pub name: &'static str,
    /// Its tables.
    pub tables: Vec<Table>,
    /// Its routes.
    pub routes: Vec<Route>,
    /// Its job queues (`crate::queues`), whose workers run while it serves.
    pub queues: Vec<Queue>,
    /// Its OpenAPI 3.1 document (compact JSON), written by the compiler, served with
    /// `--openapi-route`; `None` for a service built from Low text, which has none.
    pub openapi: Option<&'static str>,
}

/// Why the server could not start or stopped with an error.
#[derive(Debug)]
pub struct ServeError {
    message: String,
    /// The process exit status: 2 when the database file does not match the program's tables or
    /// cannot be written (a misconfiguration), 1 otherwise.
    pub status: i32,
}

impl ServeError {
    fn new(message: impl Into<String>) -> ServeError {
        ServeError { message: message.into(), status: 1 }
    }

    fn database(error: crate::db::DbError) -> ServeError {
        let misconfigured = matches!(
            error.kind,
            crate::db::DbErrorKind::Schema | crate::db::DbErrorKind::Unwritable | crate::db::DbErrorKind::Unavailable
        );
        let status = if misconfigured { 2 } else { 1 };
        ServeError { message: error.to_string(), status }
    }
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ServeError {}

/// Runs a service as a process: parses the command line and `NAGI_*` environment (see
/// [`Config`]), sets up logging, opens the database on its thread, starts Tokio with `--workers`
/// threads, and serves until SIGINT or SIGTERM. Then it stops accepting, finishes in-flight
/// requests, closes the database, flushes the log, and exits 0 (1 when it could not start, with
/// `error: ...` on stderr).
pub fn serve(service: Service) -> ! {
    serve_and_check(service, || {})
}

/// [`serve`], then `leak_check` once the service stopped cleanly and Tokio has shut down (which
/// dropped every task, so what the program's code still owns was truly leaked), before the log
/// is flushed. The LLVM path's adapter logs the buffers its code still owns there.
pub fn serve_and_check(service: Service, leak_check: fn()) -> ! {
    let config = Config::parse_for(service.name);
    // After the command line, so that `--help` works without the configuration; before anything
    // listens.
    crate::configuration::bind_or_exit();
    crate::tasks::set_blocking_threads(usize::from(config.blocking_threads));
    crate::outbound::configure(
        config.outbound_timeout_ms,
        usize::try_from(config.outbound_connections).unwrap_or(usize::MAX),
        config.outbound_body_limit,
    );
    // Lines printed before serving went to the buffered stdout; write them before the log's.
    crate::rt::flush_stdout();
    let log = crate::logging::init(config.log.into(), config.log_format == crate::config::LogFormat::Json);
    install_hook(HookMode::Serve);
    let result = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(usize::from(config.workers))
        .thread_name("nagi-worker")
        .enable_all()
        .build()
        .map_err(|e| ServeError::new(format!("cannot start Tokio: {e}")))
        .and_then(|runtime| {
            // The database is opened (and its schema checked) before the port is bound, so a
            // service that cannot start never accepts a connection.
            let (listen, reuse_port) = (config.listen.clone(), config.reuse_port);
            let bind = async move {
                bind(&listen, reuse_port).await.map_err(|e| ServeError::new(format!("cannot listen on {listen}: {e}")))
            };
            let result = runtime.block_on(serve_on(bind, service, config, shutdown_signal()));
            // Shutting Tokio down drops every task, the actors' with their states (a
            // supervised actor lives as long as the process), so what the program's code still
            // owns after it was truly leaked: a leak check that costs nothing while serving.
            runtime.shutdown_timeout(Duration::from_secs(1));
            if result.is_ok() {
                leak_check();
            }
            result
        });
    if let Err(error) = &result {
        tracing::error!(target: "nagi", "{error}");
    }
    // No stdout flush here: printed lines went through the log queue, and the log writer may be
    // blocked on a stalled stdout while holding its lock, which would block this thread too.
    log.shutdown();
    match result {
        Ok(()) => std::process::exit(0),
        Err(error) => {
            eprintln!("error: {error}");
            std::process::exit(error.status)
        }
    }
}

/// The listener on `listen` (a host name is resolved, the first address taken), with
/// SO_REUSEPORT when `reuse_port`, so that other processes may listen on the same port.
async fn bind(listen: &str, reuse_port: bool) -> std::io::Result<tokio::net::TcpListener> {
    if !reuse_port {
        return tokio::net::TcpListener::bind(listen).await;
    }
    let address = tokio::net::lookup_host(listen)
        .await?
        .next()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "the name resolves to no address"))?;
    let socket = if address.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    #[cfg(unix)]
    socket.set_reuseport(true)?;
    socket.bind(address)?;
    // The backlog Tokio's own `TcpListener::bind` uses.
    socket.listen(1024)
}

/// With `--metrics-listen`: installs the metrics recorder and serves `/metrics` on its own
/// listener, before the routes are set up (their handles need the recorder). A recorder or an
/// address that fails stops the service before it listens (exit status 2).
async fn start_metrics(config: &Config) -> Result<Option<tokio::task::JoinHandle<()>>, ServeError> {
    let Some(address) = &config.metrics_listen else { return Ok(None) };
    let misconfigured = |message: String| ServeError { message, status: 2 };
    crate::metrics::install().map_err(misconfigured)?;
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| misconfigured(format!("cannot listen for metrics on {address}: {e}")))?;
    let bound = listener.local_addr().map_err(|e| ServeError::new(e.to_string()))?;
    tracing::info!(target: "nagi", "metrics on http://{bound}/metrics");
    Ok(Some(tokio::spawn(crate::metrics::serve(listener, || Box::pin(queues::observe_metrics())))))
}

/// Serves `service` on `listener` until SIGINT or SIGTERM, with the database and limits of
/// `config`: the request timeout and body limit, and the connection limits (header and idle
/// timeouts, the most open connections; see `docs/http.md`). `config.workers` and `config.listen`
/// are not used: the caller owns the runtime and the listener. Opens the database and creates the
/// tables first; closes it after the last connection has closed.
pub async fn serve_with(listener: tokio::net::TcpListener, service: Service, config: Config) -> Result<(), ServeError> {
    serve_until(listener, service, config, shutdown_signal()).await
}

/// Like [`serve_with`], but shuts down gracefully when `shutdown` completes instead of on a signal
/// (for tests and embedding).
pub async fn serve_until<F>(
    listener: tokio::net::TcpListener,
    service: Service,
    config: Config,
    shutdown: F,
) -> Result<(), ServeError>
where
    F: Future<Output = ()> + Send + 'static,
{
    serve_on(std::future::ready(Ok(listener)), service, config, shutdown).await
}

/// `service` with the route `GET <--openapi-route>` answering its OpenAPI document, when the
/// flag asks for it. Errors (exit status 2, before anything is opened): a service that has no
/// document, or a path one of its own routes takes.
fn with_openapi_route(mut service: Service, config: &Config) -> Result<Service, ServeError> {
    let Some(path) = &config.openapi_route else { return Ok(service) };
    let misconfigured = |message: String| ServeError { message, status: 2 };
    let Some(document) = service.openapi else {
        return Err(misconfigured(format!(
            "--openapi-route {path}: this service was built from Low text, which has no API description; build it from its .nagi source"
        )));
    };
    // A route of the program whose path matches it (parameters renamed by position, as the
    // dispatcher's table has them, so that every route is in the check).
    let mut table = matchit::Router::new();
    for route in &service.routes {
        let (positional, _) = crate::http::dispatch::positional_path(route.path);
        let _ = table.insert(positional, ());
    }
    if table.at(path).is_ok() {
        return Err(misconfigured(format!("--openapi-route {path}: the program has a route on this path")));
    }
    let path: &'static str = Box::leak(path.clone().into_boxed_str());
    let handler = http::Handler::new(move |_| {
        Box::pin(async move { http::Reply::json_bytes(200, document.as_bytes().to_vec()) })
    });
    service.routes.push(http::Route { method: "GET", path, handler });
    Ok(service)
}

/// The body of [`serve_until`]: opens the database first, then awaits `bind` for the listener.
async fn serve_on<B, F>(bind: B, service: Service, config: Config, shutdown: F) -> Result<(), ServeError>
where
    B: Future<Output = Result<tokio::net::TcpListener, ServeError>>,
    F: Future<Output = ()> + Send + 'static,
{
    install_hook(HookMode::Library);
    let service = with_openapi_route(service, &config)?;
    let budget = crate::budget::Budget::new(usize::try_from(config.memory_limit).unwrap_or(usize::MAX));
    let options = DbOptions { budget: Some(Arc::clone(&budget)), ..DbOptions::from_config(&config) };
    let database = open_database(&service, &config, options).await?;
    let listener = match bind.await {
        Ok(listener) => listener,
        Err(error) => {
            database.close().await;
            return Err(error);
        }
    };
    let metrics =
        match start_metrics(&config).await.and_then(|metrics| start_traces(&config, service.name).map(|()| metrics)) {
            Ok(metrics) => metrics,
            Err(error) => {
                database.close().await;
                return Err(error);
            }
        };
    let is_default = crate::db::set_default_if_unset(&database.handle());
    let workers = match queues::start(&service.queues, &database.handle()).await {
        Ok(workers) => workers,
        Err(error) => {
            database.close().await;
            return Err(ServeError::new(format!("cannot start the job queues: {error}")));
        }
    };
    let address = listener.local_addr().map_err(|e| ServeError::new(e.to_string()))?;
    tracing::info!(
        target: "nagi",
        "{} listening on http://{address} with database {}",
        service.name,
        crate::db::redacted(&config.db)
    );
    http::serve_routes(listener, &service.routes, &config, database.handle(), Arc::clone(&budget), shutdown).await;
    if let Some(metrics) = metrics {
        metrics.abort();
    }
    // Every connection has closed, so every body, query result and answer has been given back;
    // a count left is a bookkeeping bug that would shrink the budget until a restart.
    if budget.used() > 0 {
        tracing::error!(target: "nagi", "the memory budget still counts {} bytes at shutdown", budget.used());
    }
    // No request is left to push a job; running attempts get the grace period, the rest stay
    // queued for the next start.
    workers.stop(Duration::from_millis(config.shutdown_grace_ms)).await;
    if is_default {
        crate::db::set_default(None);
    }
    database.close().await;
    // The last requests' spans, sent before the process ends (at most two seconds, so that an
    // absent collector does not hold the exit).
    tokio::task::spawn_blocking(|| crate::traces::flush(Duration::from_secs(2))).await.ok();
    tracing::info!(target: "nagi", "stopped");
    Ok(())
}

/// Opens the database `config.db` names, SQLite's file or PostgreSQL's URL, and makes the
/// service's tables exist as declared.
async fn open_database(service: &Service, config: &Config, options: DbOptions) -> Result<Database, ServeError> {
    if crate::db::is_postgres_url(&config.db) {
        let mut create: Vec<&'static str> = service.tables.iter().map(|table| table.postgres_sql).collect();
        if !service.queues.is_empty() {
            create.extend(queues::POSTGRES_TABLES);
        }
        let pool = usize::try_from(config.db_pool_size).unwrap_or(usize::MAX);
        return Database::open_postgres(&config.db, &create, &options, pool).await.map_err(ServeError::database);
    }
    let mut create: Vec<&'static str> = service.tables.iter().map(|table| table.create_sql).collect();
    if !service.queues.is_empty() {
        create.extend(queues::TABLES);
    }
    let path = config.db.clone();
    // Opening waits for the database thread; keep that wait off the async workers.
    tokio::task::spawn_blocking(move || Database::open(&path, &create, &options))
        .await
        .map_err(|e| ServeError::new(format!("cannot open the database: {e}")))?
        .map_err(ServeError::database)
}

/// With `--otlp-endpoint`: starts the trace exporter. An endpoint that is not an HTTP URL stops
/// the service before it listens (exit status 2).
fn start_traces(config: &Config, service: &str) -> Result<(), ServeError> {
    let Some(endpoint) = &config.otlp_endpoint else { return Ok(()) };
    crate::traces::install(endpoint, config.trace_sample_ratio.0, service)
        .map_err(|message| ServeError { message, status: 2 })?;
    tracing::info!(target: "nagi", "traces to {endpoint} (sampling {})", config.trace_sample_ratio.0);
    Ok(())
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
