//! SQLite for generated code: one connection on a dedicated thread, reached through async calls.
//!
//! The thread owns a `rusqlite::Connection` and is fed by a bounded channel (capacity 64) of jobs,
//! each answered through its own oneshot channel, so a request awaits its statement without
//! blocking a Tokio worker. Statements go through rusqlite's prepared-statement cache (128
//! entries); the column indices a class decodes from are resolved once per statement and class.
//! Parameters are always bound, never spliced into the SQL text.
//!
//! Errors unwind out of the handler as an [`HttpError`]: a unique or primary-key violation is a
//! 409, any other failed statement or undecodable row a 500 (and is logged). A failed statement
//! rolls back any open transaction, so the next request starts clean.
//!
//! Transactions: each request's writes form one transaction, begun (`BEGIN IMMEDIATE`) by its
//! first statement that writes and ended when the request ends: committed before a 2xx answer
//! is sent, rolled back for any other answer, a trap, a panic, a timeout or a client gone away.
//! Requests that only read take no write lock. Inside a request, [`begin`]/[`commit`]/
//! [`rollback`] are savepoints of that transaction; outside requests they are real
//! transactions. While a request owns an open transaction, the database thread defers the
//! statements of every other request until it ends, so no request's statements run inside
//! another's transaction (they share the one connection).

mod micro;
mod postgres;
mod row;
mod schema;
mod thread;

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use rusqlite::ToSql;
use rusqlite::types::{ToSqlOutput, ValueRef};
use tokio::sync::{mpsc, oneshot};

pub(crate) use micro::decode_rows;
pub use micro::rows_of;
pub(crate) use postgres::{Engine as PostgresEngine, Lease};
pub use postgres::{is_postgres_url, redacted};
pub(crate) use row::{Accessor, FieldOut, FieldRead, decode_fields};
pub use row::{FromRow, Row, RowError};
pub(crate) use thread::{ClassKey, Collect, RowSink};

use crate::HttpError;
use crate::budget::Hold;
#[cfg(test)]
use crate::shaped_json::{Shape, Value};
use crate::traces::{Detail, Kind, Span};
use thread::{Job, Op};

/// A statement parameter: SQLite's storage classes except BLOB.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    /// SQL NULL (an option's `none`).
    Null,
    /// An INTEGER: `i32`, `i64`, and `bool` as 0 or 1.
    Integer(i64),
    /// A REAL: `f64`.
    Real(f64),
    /// A TEXT: `String`.
    Text(String),
}

impl From<i32> for SqlValue {
    fn from(v: i32) -> SqlValue {
        SqlValue::Integer(i64::from(v))
    }
}

impl From<i64> for SqlValue {
    fn from(v: i64) -> SqlValue {
        SqlValue::Integer(v)
    }
}

impl From<f64> for SqlValue {
    fn from(v: f64) -> SqlValue {
        SqlValue::Real(v)
    }
}

impl From<bool> for SqlValue {
    fn from(v: bool) -> SqlValue {
        SqlValue::Integer(i64::from(v))
    }
}

impl From<&str> for SqlValue {
    fn from(v: &str) -> SqlValue {
        SqlValue::Text(v.to_owned())
    }
}

impl From<&String> for SqlValue {
    fn from(v: &String) -> SqlValue {
        SqlValue::Text(v.clone())
    }
}

impl From<String> for SqlValue {
    fn from(v: String) -> SqlValue {
        SqlValue::Text(v)
    }
}

impl From<crate::time::Time> for SqlValue {
    /// A `Time` is stored as its fixed-width RFC 3339 text (`time.rs`), so that SQL's text
    /// order is the instants' order.
    fn from(v: crate::time::Time) -> SqlValue {
        SqlValue::Text(crate::time::format_time(v.micros()))
    }
}

impl From<crate::ids::Uuid> for SqlValue {
    /// A `Uuid` is stored as its canonical text.
    fn from(v: crate::ids::Uuid) -> SqlValue {
        SqlValue::Text(crate::ids::format(v.0))
    }
}

impl From<crate::time::Duration> for SqlValue {
    /// A `Duration` is stored as an INTEGER of microseconds.
    fn from(v: crate::time::Duration) -> SqlValue {
        SqlValue::Integer(v.micros())
    }
}

impl<T: Into<SqlValue>> From<Option<T>> for SqlValue {
    /// `None` binds NULL; `Some(v)` binds `v`. Covers `Option<i32>`, `Option<i64>`, `Option<f64>`,
    /// `Option<bool>` and `Option<String>`.
    fn from(v: Option<T>) -> SqlValue {
        v.map_or(SqlValue::Null, Into::into)
    }
}

impl From<&Option<String>> for SqlValue {
    fn from(v: &Option<String>) -> SqlValue {
        v.as_ref().map_or(SqlValue::Null, |s| SqlValue::Text(s.clone()))
    }
}

impl ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            SqlValue::Null => ValueRef::Null,
            SqlValue::Integer(v) => ValueRef::Integer(*v),
            SqlValue::Real(v) => ValueRef::Real(*v),
            SqlValue::Text(v) => ValueRef::Text(v.as_bytes()),
        }))
    }
}

/// What went wrong with a database call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbErrorKind {
    /// A UNIQUE or PRIMARY KEY constraint failed (HTTP 409).
    Conflict,
    /// A statement failed for another reason (HTTP 500).
    Failed,
    /// A row could not be decoded into the class (HTTP 500).
    Row,
    /// The database thread has stopped (HTTP 500).
    Closed,
    /// Another connection (another process) held a lock for longer than the statement's budget
    /// (HTTP 503 with `Retry-After`).
    Busy,
    /// At start: a table in the database file differs from the program's declaration (the
    /// service does not start; exit status 2).
    Schema,
    /// At start: the database file cannot be opened for writing (a read-only file or file
    /// system, a folder that does not exist or cannot be written); the service does not start,
    /// exit status 2.
    Unwritable,
    /// The disk (or the file system's quota) is full, or the database reached `--db-max-bytes`:
    /// HTTP 507 with `Retry-After`; the service stays up and writes again once there is room.
    Full,
    /// A `db.query` found more rows than `--max-query-rows` allows (HTTP 500).
    TooManyRows,
    /// A query's rows do not fit in the memory budget now (HTTP 503 with `Retry-After`).
    Overloaded,
    /// The database server cannot be reached, or gave no connection within the busy budget
    /// (PostgreSQL; HTTP 503 with `Retry-After`). At start, the service does not start (exit
    /// status 2).
    Unavailable,
}

/// How a database thread runs, from the service's settings.
#[derive(Debug, Clone)]
pub struct DbOptions {
    /// The longest a statement waits for a lock another connection holds, counted from when its
    /// request queued it (`--busy-timeout-ms`).
    pub busy: Duration,
    /// The most rows one query returns (`--max-query-rows`).
    pub max_query_rows: u64,
    /// The largest size of the database file in bytes (`--db-max-bytes`), if any.
    pub max_bytes: Option<u64>,
    /// The memory budget a query's rows are counted in (a service's `--memory-limit`); a query
    /// whose rows do not fit fails with [`DbErrorKind::Overloaded`]. `None` counts nothing.
    pub budget: Option<std::sync::Arc<crate::budget::Budget>>,
}

impl DbOptions {
    /// The options of `config`.
    pub fn from_config(config: &crate::config::Config) -> DbOptions {
        DbOptions {
            busy: Duration::from_millis(config.busy_timeout_ms),
            max_query_rows: config.max_query_rows,
            max_bytes: config.db_max_bytes,
            budget: None,
        }
    }
}

impl Default for DbOptions {
    /// The defaults of a service's flags.
    fn default() -> DbOptions {
        DbOptions::from_config(&crate::config::Config::new(":memory:"))
    }
}

/// A database error: its kind and SQLite's (or the decoder's) message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    /// The kind, which decides the HTTP status.
    pub kind: DbErrorKind,
    /// The message, e.g. `UNIQUE constraint failed: people.id`.
    pub message: String,
}

impl DbError {
    pub(crate) fn new(kind: DbErrorKind, message: impl Into<String>) -> DbError {
        DbError { kind, message: message.into() }
    }

    fn closed() -> DbError {
        DbError::new(DbErrorKind::Closed, "the database is closed")
    }

    /// The HTTP answer for this error: 409 `conflict`, 503 `database busy`, 507 `insufficient
    /// storage` or 500 `database error`.
    pub fn to_http(&self) -> HttpError {
        match self.kind {
            DbErrorKind::Conflict => HttpError::new(409, "conflict", self.message.clone()),
            DbErrorKind::Busy => HttpError::new(
                503,
                "database busy",
                format!("the database is locked by another connection; try again ({})", self.message),
            ),
            DbErrorKind::Full => HttpError::new(
                507,
                "insufficient storage",
                format!(
                    "the database's disk is full or the database is at its size limit; nothing was written, try again \
                     later ({})",
                    self.message
                ),
            ),
            DbErrorKind::Unavailable => HttpError::new(
                503,
                "database unavailable",
                format!("the database cannot be reached now; nothing was written, try again ({})", self.message),
            ),
            DbErrorKind::Overloaded => {
                crate::metrics::refused(crate::metrics::Refusal::Overloaded);
                HttpError::new(503, "overloaded", self.message.clone())
            }
            _ => HttpError::new(500, "database error", self.message.clone()),
        }
    }

    fn raise(self) -> ! {
        self.to_http().raise()
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

/// A cheap, cloneable handle to one open database: the sender to its SQLite thread, or its
/// PostgreSQL pool.
#[derive(Clone)]
pub struct DbHandle {
    engine: Engine,
}

#[derive(Clone)]
enum Engine {
    Sqlite(mpsc::Sender<Job>),
    Postgres(Arc<postgres::Engine>),
}

impl DbHandle {
    /// Ends request `id`'s transaction (`session`'s), from async code: commits it when `commit`
    /// (the request answers 2xx), else rolls it back, and waits for the outcome, so that a 2xx
    /// answer is sent only after its writes are committed.
    ///
    /// Errors: the commit failed (its writes are rolled back), or the database is closed.
    pub(crate) async fn request_ended(&self, session: &Session, id: u64, commit: bool) -> Result<(), DbError> {
        let sender = match &self.engine {
            Engine::Sqlite(sender) => sender,
            Engine::Postgres(engine) => return Box::pin(engine.request_ended(&session.place(engine), commit)).await,
        };
        let (reply, answer) = oneshot::channel();
        let job =
            Job { owner: id, op: Op::RequestEnded { commit, reply: Some(reply) }, began: None, queued: Instant::now() };
        if sender.send(job).await.is_err() {
            return Err(DbError::closed());
        }
        answer.await.unwrap_or_else(|_| Err(DbError::closed()))
    }

    /// The PostgreSQL engine behind this handle, when it is one (the queues' claims and leases
    /// take connections of their own, `queues/postgres.rs`).
    pub(crate) fn postgres(&self) -> Option<&Arc<postgres::Engine>> {
        match &self.engine {
            Engine::Postgres(engine) => Some(engine),
            Engine::Sqlite(_) => None,
        }
    }

    /// Tells the database thread that request `id` has ended without an answer, from a
    /// destructor (the request's future was dropped, e.g. by the timeout): its transaction is
    /// rolled back. Never blocks: when the channel is full the notice is sent from a spawned task.
    /// (On PostgreSQL the request's `Held` rolls its transaction back when it goes.)
    pub(crate) fn request_ended_nowait(&self, id: u64) {
        let Engine::Sqlite(sender) = &self.engine else { return };
        let job =
            Job { owner: id, op: Op::RequestEnded { commit: false, reply: None }, began: None, queued: Instant::now() };
        match sender.try_send(job) {
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => {}
            Err(mpsc::error::TrySendError::Full(job)) => {
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    let sender = sender.clone();
                    runtime.spawn(async move {
                        let _ = sender.send(job).await;
                    });
                }
            }
        }
    }
}

/// An open database: a handle to it, and the thread that owns the connection (SQLite's).
pub struct Database {
    handle: DbHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Database {
    /// Opens `path` (or an in-memory database for `:memory:`) on a new thread and makes the
    /// tables of `create_sql` (`CREATE TABLE IF NOT EXISTS ...` statements) exist as declared:
    /// missing tables are created, a file table that differs is refused with
    /// [`DbErrorKind::Schema`] (see `db/schema.rs`).
    ///
    /// A file database is put in WAL mode with `synchronous = NORMAL` (a commit survives a process
    /// crash; a power loss may lose the last commits), a statement waits at most `busy` (from
    /// when its request queued it; `options.busy`) for a lock another connection holds,
    /// foreign keys are enforced, the statement cache holds 128 statements, and a query returns
    /// at most `options.max_query_rows` rows. Blocks until the database is open.
    pub fn open(path: &str, create_sql: &[&str], options: &DbOptions) -> Result<Database, DbError> {
        let (sender, receiver) = mpsc::channel(64);
        let (opened_tx, opened_rx) = std::sync::mpsc::channel();
        let path = path.to_owned();
        let create: Vec<String> = create_sql.iter().map(|s| (*s).to_owned()).collect();
        let options = options.clone();
        let thread = std::thread::Builder::new()
            .name("nagi-db".to_owned())
            .spawn(move || thread::run(&path, &create, &options, receiver, opened_tx))
            .map_err(|e| DbError::new(DbErrorKind::Failed, format!("cannot start the database thread: {e}")))?;
        match opened_rx.recv() {
            Ok(Ok(())) => Ok(Database { handle: DbHandle { engine: Engine::Sqlite(sender) }, thread: Some(thread) }),
            Ok(Err(error)) => {
                let _ = thread.join();
                Err(error)
            }
            Err(_) => Err(DbError::new(DbErrorKind::Failed, "the database thread stopped while opening")),
        }
    }

    /// Connects to the PostgreSQL database at `url` with a pool of at most `pool_size`
    /// connections, and makes the tables of `create_sql` (PostgreSQL's `CREATE TABLE IF NOT
    /// EXISTS` statements) exist as declared, with the schema check SQLite's [`Database::open`]
    /// makes (`db/postgres.rs`).
    ///
    /// Errors: `Unavailable` (the server cannot be reached within `options.busy`), `Schema`, or
    /// `Unwritable` for a URL that is not one.
    pub async fn open_postgres(
        url: &str,
        create_sql: &[&str],
        options: &DbOptions,
        pool_size: usize,
    ) -> Result<Database, DbError> {
        let create: Vec<String> = create_sql.iter().map(|s| (*s).to_owned()).collect();
        let engine = postgres::Engine::open(url, &create, options, pool_size).await?;
        tracing::info!(target: "nagi::db", "opened {}", engine.shown());
        Ok(Database { handle: DbHandle { engine: Engine::Postgres(Arc::new(engine)) }, thread: None })
    }

    /// A handle for sending jobs to this database.
    pub fn handle(&self) -> DbHandle {
        self.handle.clone()
    }

    /// Closes the database: rolls back a transaction left open, closes the connection (which
    /// checkpoints the WAL) and joins the thread; or closes PostgreSQL's pool. Statements sent
    /// afterwards fail with "the database is closed".
    pub async fn close(self) {
        match &self.handle.engine {
            Engine::Sqlite(sender) => {
                let _ = sender.send(Job { owner: 0, op: Op::Shutdown, began: None, queued: Instant::now() }).await;
            }
            Engine::Postgres(engine) => engine.close(),
        }
        if let Some(thread) = self.thread {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

static DEFAULT: RwLock<Option<DbHandle>> = RwLock::new(None);

/// Sets (or clears) the database used by code running outside an HTTP request. The server sets it
/// to its database when none is set, and clears it when it closes that database.
pub fn set_default(handle: Option<DbHandle>) {
    *DEFAULT.write().unwrap_or_else(|p| p.into_inner()) = handle;
}

/// Makes `handle` the default database unless one is set; returns whether it did.
pub(crate) fn set_default_if_unset(handle: &DbHandle) -> bool {
    let mut default = DEFAULT.write().unwrap_or_else(|p| p.into_inner());
    if default.is_some() {
        return false;
    }
    *default = Some(handle.clone());
    true
}

/// What a request holds of its database: the database of the server (or queue) that runs it,
/// and whether the request has begun a transaction there. The HTTP wrapper and the queue
/// workers run each request inside [`scope`], so that the free functions of this module need
/// no handle argument.
#[derive(Clone)]
pub(crate) struct Session {
    db: DbHandle,
    /// Set once the request has begun a transaction, which the database thread does on its
    /// behalf, so that its runner knows it must tell the database thread when the request ends
    /// (which rolls back a transaction left open).
    began: Arc<AtomicBool>,
    /// On PostgreSQL: the connection the request's transaction runs on, while one is open.
    held: Option<Arc<tokio::sync::Mutex<postgres::Held>>>,
}

impl Session {
    /// A request's session of `db`, with no transaction begun.
    pub(crate) fn new(db: DbHandle) -> Session {
        let held = matches!(db.engine, Engine::Postgres(_)).then(Arc::default);
        Session { db, began: Arc::new(AtomicBool::new(false)), held }
    }

    /// Where the request's statements run on PostgreSQL's `engine`.
    fn place(&self, engine: &postgres::Engine) -> postgres::Place {
        match &self.held {
            Some(held) => {
                postgres::Place { held: Arc::clone(held), request: true, began: Some(Arc::clone(&self.began)) }
            }
            None => engine.outside(),
        }
    }

    /// Whether the request has begun a transaction.
    pub(crate) fn began(&self) -> bool {
        self.began.load(Ordering::Relaxed)
    }
}

tokio::task_local! {
    static SESSION: Session;
}

/// Whether the running request (or job attempt) has begun its transaction, and so holds the
/// database's one writer until it ends; `false` outside requests.
pub(crate) fn holds_writer() -> bool {
    SESSION.try_with(Session::began).unwrap_or(false)
}

/// Runs `future` with `session` as the current request's database. A plain function, not an
/// `async fn`, for the reason `context::scope` gives: the handler's run it wraps is 1 KB.
pub(crate) fn scope<F: Future>(session: Session, future: F) -> impl Future<Output = F::Output> {
    SESSION.scope(session, future)
}

/// Where the running code's statements go.
enum Target {
    /// The SQLite thread.
    Sqlite(ThreadTarget),
    /// A PostgreSQL pool, and where on it.
    Postgres(Arc<postgres::Engine>, postgres::Place),
}

/// The SQLite thread, with the request's id (0 outside requests) and its "has a transaction"
/// flag.
struct ThreadTarget {
    owner: u64,
    sender: mpsc::Sender<Job>,
    began: Option<Arc<AtomicBool>>,
}

/// The current request's database, else the default database outside requests; traps when
/// there is neither.
fn target() -> Target {
    if let Ok(target) = SESSION.try_with(|session| match &session.db.engine {
        Engine::Sqlite(sender) => Target::Sqlite(ThreadTarget {
            owner: crate::context::request_id(),
            sender: sender.clone(),
            began: Some(Arc::clone(&session.began)),
        }),
        Engine::Postgres(engine) => Target::Postgres(Arc::clone(engine), session.place(engine)),
    }) {
        return target;
    }
    match DEFAULT.read().unwrap_or_else(|p| p.into_inner()).as_ref().map(|handle| &handle.engine) {
        Some(Engine::Sqlite(sender)) => Target::Sqlite(ThreadTarget { owner: 0, sender: sender.clone(), began: None }),
        Some(Engine::Postgres(engine)) => Target::Postgres(Arc::clone(engine), engine.outside()),
        None => crate::trap("no database is open"),
    }
}

/// Whether the running code's database is PostgreSQL (the queues' statements differ where the
/// engines do).
pub(crate) fn on_postgres() -> bool {
    let is_postgres = |handle: &DbHandle| matches!(handle.engine, Engine::Postgres(_));
    SESSION
        .try_with(|session| is_postgres(&session.db))
        .unwrap_or_else(|_| DEFAULT.read().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(is_postgres))
}

impl ThreadTarget {
    /// Sends one job to the SQLite thread and awaits its answer; errors unwind as HTTP errors.
    async fn submit<T>(self, make: impl FnOnce(oneshot::Sender<Result<T, DbError>>) -> Op) -> T {
        let (reply, answer) = oneshot::channel();
        let job = Job { owner: self.owner, op: make(reply), began: self.began, queued: Instant::now() };
        if self.sender.send(job).await.is_err() {
            DbError::closed().raise();
        }
        settle(answer.await.unwrap_or_else(|_| Err(DbError::closed())))
    }
}

/// A statement's outcome, its error unwound as an HTTP error.
///
/// The PostgreSQL engine's futures are awaited boxed (`Box::pin`) wherever a statement matches
/// on its [`Target`], and at a request's end ([`DbHandle::request_ended`]): a network round trip
/// dwarfs the one allocation, and inline they would size every SQLite statement's future, and
/// every request future that awaits one, at 2.7 KB (see the `sizes` test).
fn settle<T>(outcome: Result<T, DbError>) -> T {
    outcome.unwrap_or_else(|error| error.raise())
}

/// Runs a statement that returns no rows (INSERT, UPDATE, DELETE, DDL) with bound `args` and returns
/// the number of rows it changed (SQLite's `changes()`).
///
/// A statement that returns rows (`SELECT`, `... RETURNING`) fails here (rusqlite's
/// `ExecuteReturnedResults`, a 500); run it with [`query`] instead.
pub async fn exec(sql: &str, args: Vec<SqlValue>) -> i64 {
    run_exec(Cow::Borrowed(sql), args, false).await
}

/// [`exec`], or [`exec_commit`] when `commit`, for SQL the caller has already copied (the LLVM
/// path's statements, whose text lives in emitted memory): the SQLite thread takes it as it is.
pub(crate) async fn exec_owned(sql: String, args: Vec<SqlValue>, commit: bool) -> i64 {
    run_exec(Cow::Owned(sql), args, commit).await
}

/// [`exec`], or [`exec_commit`] when `commit`. The SQL is copied for the SQLite thread only when
/// it is borrowed.
async fn run_exec(sql: Cow<'_, str>, args: Vec<SqlValue>, commit: bool) -> i64 {
    let span = statement_span(&sql);
    let changed = match target() {
        Target::Sqlite(thread) => {
            let sql = sql.into_owned();
            thread.submit(|reply| Op::Exec { sql, args, commit, reply }).await
        }
        Target::Postgres(engine, place) => settle(Box::pin(engine.exec(&place, &sql, &args, commit)).await),
    };
    span.map(Span::succeed);
    changed
}

/// The span of statement `sql` in the running request's or job's trace, when there is one; it
/// ends as an error when the statement fails (unwinds).
fn statement_span(sql: &str) -> Option<Span> {
    Span::child(crate::context::trace(), Kind::Client, || Detail::Statement { sql: sql.to_owned() })
}

/// [`exec`] as a request's last statement: the request's transaction (this statement's writes
/// and any earlier ones) is committed in the same job of the database thread, so the request
/// needs no second round trip to commit when it has answered. Generated code calls it only where
/// nothing after the statement can fail (`db.exec_commit`, placed by the `fuse-commit` pass), so
/// the request's answer is 2xx exactly when this commits. A failed commit answers 500, as the
/// wrapper's would. Outside a request it is [`exec`].
pub async fn exec_commit(sql: &str, args: Vec<SqlValue>) -> i64 {
    run_exec(Cow::Borrowed(sql), args, true).await
}

/// Runs a query with bound `args` and decodes every row into `T`.
pub async fn query<T: FromRow>(sql: &str, args: Vec<SqlValue>) -> Vec<T> {
    collect(run_query(Cow::Borrowed(sql), args, Box::new(thread::Collect::<T>::new(false))).await)
}

/// Runs a query with bound `args` and decodes its first row into `T`; `None` when there is no row.
/// Rows after the first are not read.
pub async fn query_one<T: FromRow>(sql: &str, args: Vec<SqlValue>) -> Option<T> {
    collect::<T>(run_query(Cow::Borrowed(sql), args, Box::new(thread::Collect::<T>::new(true))).await).pop()
}

/// The non-generic part of [`query`] and [`query_one`], so that generated code instantiates only
/// the row decoder. The SQL is copied for the SQLite thread only when it is borrowed (the LLVM
/// path passes its own copy).
pub(crate) async fn run_query(sql: Cow<'_, str>, args: Vec<SqlValue>, sink: Box<dyn RowSink>) -> Box<dyn Any + Send> {
    let span = statement_span(&sql);
    let (sink, hold): (Box<dyn RowSink>, Option<Hold>) = match target() {
        Target::Sqlite(thread) => {
            let sql = sql.into_owned();
            thread.submit(|reply| Op::Query { sql, args, sink, reply }).await
        }
        Target::Postgres(engine, place) => settle(Box::pin(engine.query(&place, &sql, &args, sink)).await),
    };
    span.map(Span::succeed);
    // The rows are the request's until it ends; outside a request nothing is counted.
    if let Some(hold) = hold {
        crate::context::keep(hold);
    }
    sink.into_any()
}

fn collect<T: FromRow>(sink: Box<dyn Any + Send>) -> Vec<T> {
    match sink.downcast::<thread::Collect<T>>() {
        Ok(collected) => collected.rows,
        Err(_) => unreachable!("the database thread returns the sink it was given"),
    }
}

// The value-tree form of the LLVM path's row decoding, kept for the tests that compare
// `decode_fields` (the rule both forms share) with the Rust path's `FromRow`.
#[cfg(test)]
/// [`query`] (or [`query_one`], when `first_only`) for a class that `shape` describes, on the
/// LLVM path: the same statement, transaction, busy budget and errors, with each row decoded by
/// the accessor the Rust path's `FromRow` uses for each field's type. `key` identifies the class
/// among the program's (its descriptor's address), to key the column indices resolved once per
/// statement.
pub(crate) async fn query_shaped<S: Shape + Send + 'static>(
    sql: &str,
    args: Vec<SqlValue>,
    shape: S,
    key: usize,
    first_only: bool,
) -> Vec<Value> {
    let sink = Box::new(thread::CollectValues::new(shape, key, first_only));
    match run_query(Cow::Borrowed(sql), args, sink).await.downcast::<thread::CollectValues<S>>() {
        Ok(collected) => collected.rows,
        Err(_) => unreachable!("the database thread returns the sink it was given"),
    }
}

/// Begins a write transaction (`BEGIN IMMEDIATE`) owned by the current request. Until it ends,
/// other requests' statements wait. (Inside a request, a savepoint of its transaction.)
pub async fn begin() {
    let _ = SESSION.try_with(|session| session.began.store(true, Ordering::Relaxed));
    match target() {
        Target::Sqlite(thread) => thread.submit(|reply| Op::Begin { reply }).await,
        Target::Postgres(engine, place) => settle(Box::pin(engine.begin(&place)).await),
    }
}

/// Commits the current request's transaction (inside a request, its innermost savepoint).
pub async fn commit() {
    end_explicit(true).await
}

/// Rolls back the current request's transaction (inside a request, its innermost savepoint).
pub async fn rollback() {
    end_explicit(false).await
}

async fn end_explicit(commit: bool) {
    match target() {
        Target::Sqlite(thread) => {
            thread.submit(|reply| if commit { Op::Commit { reply } } else { Op::Rollback { reply } }).await
        }
        Target::Postgres(engine, place) => settle(Box::pin(engine.end_explicit(&place, commit)).await),
    }
}

#[cfg(test)]
mod sizes {
    use super::*;

    /// A row type with no columns: only the statement futures' sizes are looked at.
    struct Nothing;

    impl FromRow for Nothing {
        const COLUMNS: &'static [&'static str] = &[];
        fn from_row(_: &Row<'_>, _: &[usize]) -> Result<Self, RowError> {
            Ok(Nothing)
        }
    }

    /// A statement's future is part of every request future that awaits it, and on the LLVM
    /// path the pending operation around it (a header, the future and its result, about 112
    /// bytes more) is one allocation, which must stay within glibc's per-thread cache of small
    /// blocks (up to 1,032 bytes) that the allocator serves without searching its bins; hence
    /// 900 bytes for the future. The PostgreSQL engine's futures are boxed for that: inline,
    /// they made the SQLite statement's future 2.7 KB. Nothing here is polled.
    #[test]
    fn a_statement_future_fits_the_allocators_fast_path() {
        let query = run_query(Cow::Borrowed("SELECT 1"), vec![], Box::new(Collect::<Nothing>::new(false)));
        let exec = run_exec(Cow::Borrowed("DELETE FROM t"), vec![], false);
        assert!(std::mem::size_of_val(&query) <= 900, "{} bytes", std::mem::size_of_val(&query));
        assert!(std::mem::size_of_val(&exec) <= 900, "{} bytes", std::mem::size_of_val(&exec));
    }
}
