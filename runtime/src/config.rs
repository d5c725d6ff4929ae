//! The command line and environment every compiled service accepts.
//!
//! Each flag has a `NAGI_*` environment variable; a flag given on the command line wins over the
//! variable, which wins over the default (clap's `env` behaviour).

use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};

/// A service's settings, from `--flags` and `NAGI_*` variables.
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(about = "A Nagi service: JSON over HTTP with its data in SQLite.", long_about = None)]
pub struct Config {
    /// Address and port to listen on (a host name is resolved).
    #[arg(long, env = "NAGI_LISTEN", value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// SQLite database file, created if missing; `:memory:` for a database that lives as long as
    /// the process; or a PostgreSQL database's URL (`postgres://user:password@host:port/name`).
    #[arg(long, env = "NAGI_DB", value_name = "PATH|URL")]
    pub db: String,

    /// Most connections to a PostgreSQL database (the pool's size); not used with SQLite.
    #[arg(long = "db-pool-size", env = "NAGI_DB_POOL_SIZE", value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub db_pool_size: u32,

    /// Tokio worker threads.
    #[arg(long, env = "NAGI_WORKERS", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub workers: u16,

    /// Longest time a request may take, in milliseconds, body reading included; then 503.
    #[arg(long = "timeout-ms", env = "NAGI_TIMEOUT_MS", value_name = "MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,

    /// Longest time a database statement waits for a lock another connection (another process)
    /// holds, in milliseconds, counted from when the request queued it; then the request is
    /// answered 503 with `Retry-After`.
    #[arg(long = "busy-timeout-ms", env = "NAGI_BUSY_TIMEOUT_MS", value_name = "MS", default_value_t = 5_000)]
    pub busy_timeout_ms: u64,

    /// Largest request body, in bytes; a larger one is answered 413.
    #[arg(long = "body-limit", env = "NAGI_BODY_LIMIT", value_name = "BYTES", default_value_t = 1_048_576)]
    pub body_limit: usize,

    /// Longest time a request head (request line and headers) may take to arrive, in
    /// milliseconds: counted from the connection's start for its first request and from the first
    /// byte for later ones. Then the connection is closed, after a 408 when part of a head had
    /// arrived.
    #[arg(long = "header-timeout-ms", env = "NAGI_HEADER_TIMEOUT_MS", value_name = "MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: u64,

    /// Longest time, in milliseconds, a keep-alive connection may wait for its next request, and a
    /// client may go without taking a byte of an answer; then the connection is closed.
    #[arg(long = "idle-timeout-ms", env = "NAGI_IDLE_TIMEOUT_MS", value_name = "MS", default_value_t = 60_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_ms: u64,

    /// Threads of the blocking pool: most blocking tasks (`spawn_blocking`) running at once; the
    /// others wait for one without holding a worker.
    #[arg(long = "blocking-threads", env = "NAGI_BLOCKING_THREADS", value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub blocking_threads: u16,

    /// How long a stopping service waits for running job attempts to finish before it cancels
    /// them (they are rolled back and run again at the next start), in milliseconds.
    #[arg(long = "shutdown-grace-ms", env = "NAGI_SHUTDOWN_GRACE_MS", value_name = "MS", default_value_t = 10_000)]
    pub shutdown_grace_ms: u64,

    /// Listen with SO_REUSEPORT, so that several processes on one machine share the port (the
    /// kernel spreads connections among them) and a new version can start beside the old one.
    #[arg(long = "reuse-port", env = "NAGI_REUSE_PORT")]
    pub reuse_port: bool,

    /// After SIGTERM, keep accepting and answering for this long, in milliseconds, each answer
    /// with `Connection: close`, before the listener closes (so that clients move to the
    /// processes that stay); 1000 with `--reuse-port`, else 0.
    #[arg(long = "drain-ms", env = "NAGI_DRAIN_MS", value_name = "MS")]
    pub drain_ms: Option<u64>,

    /// Largest request head (request line and headers), in bytes; a larger one is answered 431
    /// and the connection closed. It bounds what a connection holds while its head arrives.
    #[arg(long = "max-head-bytes", env = "NAGI_MAX_HEAD_BYTES", value_name = "BYTES", default_value_t = 32_768,
          value_parser = clap::value_parser!(u32).range(8192..))]
    pub max_head_bytes: u32,

    /// Memory for request bodies, query results and answers, in bytes, all requests together: a
    /// body is counted at its declared length before it is read, a query's rows until its request
    /// ends, an answer over 64 KiB from when it is built until the client has taken it. A body
    /// that does not fit within half a second, rows that do not fit, or a large answer of a
    /// request that wrote nothing, is answered 503 with `Retry-After`. At least `--body-limit`.
    #[arg(long = "memory-limit", env = "NAGI_MEMORY_LIMIT", value_name = "BYTES", default_value_t = 268_435_456)]
    pub memory_limit: u64,

    /// Most rows one `db.query` returns: a query that has more fails, and its request is answered
    /// 500 saying so (page with `LIMIT`), so that one request cannot load a whole table into
    /// memory.
    #[arg(long = "max-query-rows", env = "NAGI_MAX_QUERY_ROWS", value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_query_rows: u64,

    /// Largest size of the database file, in bytes (SQLite's `max_page_count`); a write that would
    /// grow it further is answered 507 with `Retry-After`, as a full disk is. No limit by default
    /// but the disk's.
    #[arg(long = "db-max-bytes", env = "NAGI_DB_MAX_BYTES", value_name = "BYTES",
          value_parser = clap::value_parser!(u64).range(65_536..))]
    pub db_max_bytes: Option<u64>,

    /// Most connections open at once; a connection beyond it is answered 503 and closed.
    #[arg(long = "max-connections", env = "NAGI_MAX_CONNECTIONS", value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// Longest time an outbound call (`http.get` and its siblings) may take when it gives no
    /// timeout of its own, in milliseconds: waiting for a connection, sending and reading the
    /// whole answer; then the call fails with 504.
    #[arg(long = "outbound-timeout-ms", env = "NAGI_OUTBOUND_TIMEOUT_MS", value_name = "MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub outbound_timeout_ms: u64,

    /// Most outbound calls in flight to one host (scheme, host and port) at once; a further call
    /// waits for one to end, within its timeout.
    #[arg(long = "outbound-connections", env = "NAGI_OUTBOUND_CONNECTIONS", value_name = "N", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub outbound_connections: u32,

    /// Largest body of an outbound call's answer, in bytes; a larger one fails the call with 502.
    #[arg(
        long = "outbound-body-limit",
        env = "NAGI_OUTBOUND_BODY_LIMIT",
        value_name = "BYTES",
        default_value_t = 8_388_608
    )]
    pub outbound_body_limit: usize,

    /// Where to serve the service's metrics (Prometheus text format, `GET /metrics`), on a
    /// listener of their own; no metrics when unset. Keep it off the public interface.
    #[arg(long = "metrics-listen", env = "NAGI_METRICS_LISTEN", value_name = "ADDR:PORT")]
    pub metrics_listen: Option<String>,

    /// Serve the service's OpenAPI 3.1 document (the one `nagic openapi` writes) at this path,
    /// as `GET PATH`; not served when unset. The path must start with `/`, hold no `{`, and not
    /// be a path of the program's own routes.
    #[arg(long = "openapi-route", env = "NAGI_OPENAPI_ROUTE", value_name = "PATH", value_parser = openapi_route)]
    pub openapi_route: Option<String>,

    /// Where to send traces, over OTLP/HTTP (protobuf): a collector's base URL such as
    /// `http://localhost:4318` (`/v1/traces` is added) or the full URL; no traces when unset.
    #[arg(long = "otlp-endpoint", env = "NAGI_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// The share of new traces recorded, from 0 to 1; a request whose `traceparent` says whether
    /// its trace is sampled follows it.
    #[arg(long = "trace-sample-ratio", env = "NAGI_TRACE_SAMPLE_RATIO", value_name = "RATIO",
          default_value = "1", value_parser = parse_ratio)]
    pub trace_sample_ratio: SampleRatio,

    /// Least severe log level written.
    #[arg(long, env = "NAGI_LOG", value_name = "LEVEL", value_enum, default_value_t = LogLevel::Info)]
    pub log: LogLevel,

    /// How log lines are written: `text` (the default) or `json`, one JSON object per line.
    #[arg(long = "log-format", env = "NAGI_LOG_FORMAT", value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// A sampling ratio for `--trace-sample-ratio`: a number from 0 to 1 (never NaN, so it is `Eq`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleRatio(pub f64);

impl Eq for SampleRatio {}

fn parse_ratio(text: &str) -> Result<SampleRatio, String> {
    match text.trim().parse::<f64>() {
        Ok(ratio) if (0.0..=1.0).contains(&ratio) => Ok(SampleRatio(ratio)),
        _ => Err(format!("`{text}` is not a ratio from 0 to 1")),
    }
}

/// A log line format for `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `tracing`'s text format: `<time> <LEVEL> <target>: <message> <fields>`.
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, then the event's fields.
    Json,
}

/// A log level for `--log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// Errors and warnings.
    Warn,
    /// One line per request and the runtime's events (the default).
    Info,
    /// Also error answers and transaction bookkeeping.
    Debug,
    /// Everything, including the libraries' traces.
    Trace,
}

impl From<LogLevel> for tracing::Level {
    fn from(level: LogLevel) -> tracing::Level {
        match level {
            LogLevel::Error => tracing::Level::ERROR,
            LogLevel::Warn => tracing::Level::WARN,
            LogLevel::Info => tracing::Level::INFO,
            LogLevel::Debug => tracing::Level::DEBUG,
            LogLevel::Trace => tracing::Level::TRACE,
        }
    }
}

impl Config {
    /// How long a stopping service keeps accepting (`--drain-ms`, by default 1 s with
    /// `--reuse-port` and none without).
    pub fn drain(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.drain_ms.unwrap_or(if self.reuse_port { 1_000 } else { 0 }))
    }

    /// The settings a test or embedding program starts from: listen on `127.0.0.1:0` (any free
    /// port), the given database, and every other setting at its default.
    pub fn new(db: impl Into<String>) -> Config {
        Config {
            listen: "127.0.0.1:0".to_owned(),
            db: db.into(),
            db_pool_size: 16,
            workers: 1,
            timeout_ms: 30_000,
            busy_timeout_ms: 5_000,
            body_limit: 1_048_576,
            header_timeout_ms: 10_000,
            idle_timeout_ms: 60_000,
            max_connections: 10_000,
            max_head_bytes: 32_768,
            memory_limit: 268_435_456,
            max_query_rows: 10_000,
            db_max_bytes: None,
            blocking_threads: 4,
            shutdown_grace_ms: 10_000,
            reuse_port: false,
            drain_ms: None,
            outbound_timeout_ms: 10_000,
            outbound_connections: 100,
            outbound_body_limit: 8_388_608,
            metrics_listen: None,
            openapi_route: None,
            otlp_endpoint: None,
            trace_sample_ratio: SampleRatio(1.0),
            log: LogLevel::Info,
            log_format: LogFormat::Text,
        }
    }

    /// The clap command for `service`: named after it, with `--db` defaulting to `./<service>.db`.
    pub fn command_for(service: &str) -> clap::Command {
        // clap wants 'static strings for names and defaults; a service parses its command line
        // once, so leaking these two short strings is the simplest correct choice.
        let name: &'static str = Box::leak(service.to_owned().into_boxed_str());
        let default_db: &'static str = Box::leak(format!("./{service}.db").into_boxed_str());
        let command = Config::command().name(name).mut_arg("db", |arg| arg.required(false).default_value(default_db));
        // The program's own configuration, listed after the flags (values never shown).
        match crate::configuration::help() {
            Some(help) => command.after_help(help),
            None => command,
        }
    }

    /// Parses `args` (the first is the program name) and the `NAGI_*` environment for `service`.
    pub fn try_parse_for<I, T>(service: &str, args: I) -> Result<Config, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut command = Config::command_for(service);
        let matches = command.try_get_matches_from_mut(args)?;
        let config = Config::from_arg_matches(&matches).map_err(|e| e.format(&mut command))?;
        if config.memory_limit < config.body_limit as u64 {
            let message = format!(
                "--memory-limit {} is less than --body-limit {}: a body at the limit could never be read",
                config.memory_limit, config.body_limit
            );
            return Err(command.error(clap::error::ErrorKind::ArgumentConflict, message));
        }
        Ok(config)
    }

    /// Parses the process's command line and environment for `service`; on `--help`, `--version`
    /// or an error, prints what clap prints and exits (status 0 for help, 2 for an error).
    pub fn parse_for(service: &str) -> Config {
        Config::try_parse_for(service, std::env::args_os()).unwrap_or_else(|e| e.exit())
    }
}

/// `--openapi-route`: a path starting with `/`, without a path parameter, a query or a fragment.
fn openapi_route(text: &str) -> Result<String, String> {
    if !text.starts_with('/') {
        return Err(format!("{text:?} is not a path: it must start with `/`, as /openapi.json does"));
    }
    if let Some(bad) = text.chars().find(|c| matches!(c, '{' | '}' | '?' | '#') || c.is_whitespace()) {
        return Err(format!("the path {text:?} cannot hold {bad:?}"));
    }
    Ok(text.to_string())
}
