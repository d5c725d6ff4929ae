//! The database thread: owns the connection, runs jobs in order, gives each request one
//! transaction for its writes, and keeps each request's statements out of other requests'
//! transactions.
//!
//! A request's first statement that writes (SQLite's `sqlite3_stmt_readonly` says which) begins
//! `BEGIN IMMEDIATE` on its behalf, so a request that only reads takes no write lock. The
//! transaction stays open until the request ends: the HTTP wrapper then asks for a commit when
//! the answer is 2xx and a rollback otherwise (an error answer, a trap, a panic, a timeout or a
//! client that went away). An explicit `db.begin`/`db.commit`/`db.rollback` inside a request
//! becomes `SAVEPOINT`/`RELEASE`/`ROLLBACK TO` within that transaction; one still open when the
//! request ends is rolled back, the rest of the request's work is committed or not as above.

use std::any::{Any, TypeId};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, params_from_iter};
use tokio::sync::{mpsc, oneshot};

use super::row::{FromRow, Row, RowError};
use super::{DbError, DbErrorKind, DbOptions, SqlValue};
use crate::budget::{Budget, Hold};
#[cfg(test)]
use crate::shaped_json::{Shape, Value};

/// How many prepared statements rusqlite keeps.
const STATEMENT_CACHE: usize = 128;

thread_local! {
    // The deadline of the job running on this thread: a statement that finds the database locked
    // by another connection (another process) retries until then, and fails with `SQLITE_BUSY`
    // after. Each job's deadline is its own budget counted from when it was queued, so jobs queued
    // behind a blocked one do not each wait a whole budget in turn.
    static DEADLINE: std::cell::Cell<Instant> = std::cell::Cell::new(Instant::now());
}

/// SQLite's busy handler: sleeps a little (1 ms at first, up to 10 ms) and retries while the
/// running job's deadline has not passed.
fn busy_handler(attempt: i32) -> bool {
    let left = DEADLINE.with(|d| d.get()).saturating_duration_since(Instant::now());
    if left.is_zero() {
        return false;
    }
    let step = Duration::from_millis(match attempt {
        0..=3 => 1,
        4..=10 => 5,
        _ => 10,
    });
    std::thread::sleep(step.min(left));
    true
}

type Reply<T> = oneshot::Sender<Result<T, DbError>>;

/// One unit of work, tagged with the request that sent it (0 outside requests).
pub(crate) struct Job {
    pub(crate) owner: u64,
    pub(crate) op: Op,
    /// The request's "has a transaction" flag, set here when the thread begins one for it, so
    /// the wrapper knows to end it.
    pub(crate) began: Option<Arc<AtomicBool>>,
    /// When the job was queued: its lock-wait budget counts from here.
    pub(crate) queued: Instant,
}

/// What a job does.
pub(crate) enum Op {
    /// A statement without result rows; answers the number of changed rows. With `commit`, the
    /// owner's last statement: its request transaction is committed right after it, in this job
    /// (`db.exec_commit`).
    Exec { sql: String, args: Vec<SqlValue>, commit: bool, reply: Reply<i64> },
    /// A query whose rows are fed to `sink`; answers the sink with the decoded rows in it, and the
    /// memory budget's hold of them (when the database has a budget).
    Query { sql: String, args: Vec<SqlValue>, sink: Box<dyn RowSink>, reply: Reply<(Box<dyn RowSink>, Option<Hold>)> },
    /// `BEGIN IMMEDIATE`.
    Begin { reply: Reply<()> },
    /// `COMMIT`.
    Commit { reply: Reply<()> },
    /// `ROLLBACK`.
    Rollback { reply: Reply<()> },
    /// The owner's request has ended: commit its transaction (`commit`, for a 2xx answer) or roll
    /// it back, drop its deferred jobs, and answer `reply` (if any) with the outcome.
    RequestEnded { commit: bool, reply: Option<Reply<()>> },
    /// Stop: roll back, close the connection, end the thread.
    Shutdown,
}

impl Job {
    /// Whether nobody waits for the answer any more (the request's future was dropped), so running
    /// the statement would only write data for a request that has already been answered.
    fn is_abandoned(&self) -> bool {
        match &self.op {
            Op::Exec { reply, .. } => reply.is_closed(),
            Op::Query { reply, .. } => reply.is_closed(),
            Op::Begin { reply } | Op::Commit { reply } | Op::Rollback { reply } => reply.is_closed(),
            Op::RequestEnded { .. } | Op::Shutdown => false,
        }
    }
}

/// Which class a sink decodes, to key the column-index cache: a Rust type of the Rust path, or
/// a descriptor of the LLVM path (its address; descriptors are constants of the program).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ClassKey {
    Rust(TypeId),
    Shape(usize),
}

/// Receives decoded rows on the database thread; the generic half lives in generated code (or
/// is a descriptor of the LLVM path).
pub(crate) trait RowSink: Send {
    /// Identifies the class, to key the column-index cache.
    fn class(&self) -> ClassKey;
    /// How many columns (fields) the class has.
    fn column_count(&self) -> usize;
    /// The name of column `i`, which is the name of field `i`.
    fn column(&self, i: usize) -> &str;
    /// Decodes one row; `Ok(false)` when no more rows are wanted.
    fn accept(&mut self, row: &Row<'_>, columns: &[usize]) -> Result<bool, RowError>;
    /// Hands the sink back to the async side.
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send>;
}

/// Collects rows of class `T` (all of them, or only the first).
pub(crate) struct Collect<T> {
    pub(crate) rows: Vec<T>,
    first_only: bool,
}

impl<T> Collect<T> {
    pub(crate) fn new(first_only: bool) -> Collect<T> {
        Collect { rows: Vec::new(), first_only }
    }
}

impl<T: FromRow> RowSink for Collect<T> {
    fn class(&self) -> ClassKey {
        ClassKey::Rust(TypeId::of::<T>())
    }

    fn column_count(&self) -> usize {
        T::COLUMNS.len()
    }

    fn column(&self, i: usize) -> &str {
        T::COLUMNS[i]
    }

    fn accept(&mut self, row: &Row<'_>, columns: &[usize]) -> Result<bool, RowError> {
        self.rows.push(T::from_row(row, columns)?);
        Ok(!self.first_only)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

/// Collects rows of a class that a [`Shape`] describes as values (all of them, or only the
/// first), for the tests of `decode_fields` (`db::query_shaped`).
#[cfg(test)]
pub(crate) struct CollectValues<S> {
    pub(crate) rows: Vec<Value>,
    shape: S,
    key: usize,
    first_only: bool,
}

#[cfg(test)]
impl<S> CollectValues<S> {
    /// A sink for `shape`, a class, which `key` identifies among the program's classes.
    pub(crate) fn new(shape: S, key: usize, first_only: bool) -> CollectValues<S> {
        CollectValues { rows: Vec::new(), shape, key, first_only }
    }
}

#[cfg(test)]
impl<S: Shape + Send + 'static> RowSink for CollectValues<S> {
    fn class(&self) -> ClassKey {
        ClassKey::Shape(self.key)
    }

    fn column_count(&self) -> usize {
        self.shape.field_count()
    }

    fn column(&self, i: usize) -> &str {
        self.shape.field_name(i)
    }

    fn accept(&mut self, row: &Row<'_>, columns: &[usize]) -> Result<bool, RowError> {
        self.rows.push(super::row::decode_shaped(row, columns, self.shape)?);
        Ok(!self.first_only)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

/// Converts a rusqlite error into its kind by SQLite's result code: a lock held too long,
/// a unique or primary-key violation, a full disk, or any other failure.
pub(super) fn db_error(error: rusqlite::Error) -> DbError {
    let kind = match &error {
        rusqlite::Error::SqliteFailure(failure, _) => match failure.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => DbErrorKind::Busy,
            ErrorCode::ConstraintViolation
                if matches!(
                    failure.extended_code,
                    rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                ) =>
            {
                DbErrorKind::Conflict
            }
            ErrorCode::DiskFull => DbErrorKind::Full,
            _ => DbErrorKind::Failed,
        },
        _ => DbErrorKind::Failed,
    };
    DbError::new(kind, error.to_string())
}

/// Why the database file at `path` cannot be opened for writing, found by opening it (or creating
/// it, as SQLite would) with the operating system's own answer: `Read-only file system`,
/// `Permission denied`, `No such file or directory` for a missing folder, `Is a directory`.
fn unwritable(path: &str, sqlite: &str) -> DbError {
    let why = match std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path) {
        Err(error) => error.to_string(),
        Ok(_) => format!("SQLite opened it read-only ({sqlite})"),
    };
    DbError::new(DbErrorKind::Unwritable, format!("the database {path} cannot be written: {why}"))
}

fn open(path: &str, create_sql: &[String], options: &DbOptions) -> Result<Connection, DbError> {
    let busy = options.busy;
    let conn = if path == ":memory:" { Connection::open_in_memory() } else { Connection::open(path) }
        .map_err(|e| unwritable(path, &e.to_string()))?;
    // SQLite falls back to read-only when the file cannot be written, and would then fail every
    // write; a service that cannot write stops here instead, before it listens.
    if conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false) {
        return Err(unwritable(path, "attempt to write a readonly database"));
    }
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // Opening (the schema check included) gets one budget.
    DEADLINE.with(|d| d.set(Instant::now() + busy));
    conn.busy_handler(Some(busy_handler)).map_err(db_error)?;
    if path != ":memory:" {
        // journal_mode answers with the mode in force, so it is read as a query.
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)).map_err(db_error)?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(target: "nagi::db", "{path}: journal mode is {mode}, not WAL");
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL").map_err(db_error)?;
    }
    conn.execute_batch("PRAGMA foreign_keys = ON").map_err(db_error)?;
    if let Some(max_bytes) = options.max_bytes {
        let page_size: u64 = conn.query_row("PRAGMA page_size", [], |row| row.get(0)).map_err(db_error)?;
        let pages = (max_bytes / page_size.max(1)).max(1);
        // A count under the file's present size leaves it as it is; SQLite answers the count in force.
        let _: u64 =
            conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |row| row.get(0)).map_err(db_error)?;
    }
    super::schema::ensure(&conn, path, create_sql)?;
    if path != ":memory:" {
        // A write lock taken and given back: the journal (the WAL file beside the database) can
        // be created and the file written, which a read-only folder or mount would refuse.
        conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK").map_err(|e| match db_error(e) {
            full @ DbError { kind: DbErrorKind::Full | DbErrorKind::Busy, .. } => full,
            other => unwritable(path, &other.message),
        })?;
    }
    Ok(conn)
}

/// The thread's body: opens the database, reports the outcome, then serves jobs until shutdown.
pub(crate) fn run(
    path: &str,
    create_sql: &[String],
    options: &DbOptions,
    receiver: mpsc::Receiver<Job>,
    opened: std::sync::mpsc::Sender<Result<(), DbError>>,
) {
    let conn = match open(path, create_sql, options) {
        Ok(conn) => conn,
        Err(error) => {
            let _ = opened.send(Err(error));
            return;
        }
    };
    let _ = opened.send(Ok(()));
    tracing::info!(target: "nagi::db", "opened {path}");
    let mut worker = Worker {
        conn,
        busy: options.busy,
        max_rows: options.max_query_rows,
        budget: options.budget.clone(),
        statements: Statements::default(),
        owner: None,
        savepoints: 0,
        deferred: VecDeque::new(),
        metrics: None,
        last_rows: 0,
    };
    worker.serve(receiver);
    worker.finish(path);
}

struct Worker {
    conn: Connection,
    /// Each job's lock-wait budget.
    busy: Duration,
    /// The most rows one query returns.
    max_rows: u64,
    /// The memory budget queries' rows are counted in, if any.
    budget: Option<Arc<Budget>>,
    /// What the thread keeps per SQL text: column indices and metrics handles (hashbrown's
    /// foldhash: SipHash's flooding defence buys nothing for keys that are the program's own
    /// statements).
    statements: Statements,
    /// The request that owns the open transaction, if one is open.
    owner: Option<u64>,
    /// How many explicit transactions (savepoints) the owner has open inside its request
    /// transaction.
    savepoints: u32,
    /// Jobs of other requests that arrived while a transaction was open, in arrival order.
    deferred: VecDeque<Job>,
    /// The statements' metrics, made at the first statement after metrics were turned on.
    metrics: Option<crate::metrics::DbMetrics>,
    /// How many rows the last query returned (for its metrics).
    last_rows: u64,
}

/// What the database thread keeps for one SQL text.
#[derive(Default)]
struct Statement {
    /// Column indices per class, resolved when the statement was first run for it.
    columns: hashbrown::HashMap<ClassKey, Vec<usize>>,
    /// Its metrics' handles (by its source position), once metrics are on.
    metrics: Option<crate::metrics::StatementMetrics>,
}

/// Begins the request transaction of `owner` (a request, not 0) on `conn` if none is open,
/// recording it in the worker's `(owner, savepoints)`, and marks the request's flag so its
/// wrapper ends it.
fn begin_request(
    conn: &Connection,
    (open_owner, savepoints): (&mut Option<u64>, &mut u32),
    owner: u64,
    began: Option<&AtomicBool>,
) -> Result<(), DbError> {
    if owner == 0 || !conn.is_autocommit() {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE").map_err(db_error)?;
    *open_owner = Some(owner);
    *savepoints = 0;
    if let Some(flag) = began {
        flag.store(true, Ordering::Relaxed);
    }
    Ok(())
}

/// `sql` prepared from `conn`'s statement cache, with the request transaction begun first
/// ([`begin_request`]) when SQLite says the statement writes (`sqlite3_stmt_readonly`;
/// `INSERT ... RETURNING` is a query that writes), so that read-only requests take no write
/// lock. One cache lookup serves both the check and the run.
fn prepare_for<'c>(
    conn: &'c Connection,
    transaction: (&mut Option<u64>, &mut u32),
    owner: u64,
    began: Option<&AtomicBool>,
    sql: &str,
) -> Result<rusqlite::CachedStatement<'c>, DbError> {
    let statement = conn.prepare_cached(sql).map_err(db_error)?;
    if !statement.readonly() {
        begin_request(conn, transaction, owner, began)?;
    }
    Ok(statement)
}

/// What the thread keeps for `sql` in `statements`, made when it is first seen.
fn kept<'a>(statements: &'a mut Statements, sql: &str) -> &'a mut Statement {
    statements.entry_ref(sql).or_default()
}

/// The database thread's statements by SQL text.
type Statements = hashbrown::HashMap<String, Statement>;

/// How many times the database thread yields its CPU, looking for the next job in between, before
/// it sleeps on the channel.
const YIELDS_BEFORE_SLEEP: u32 = 16;

/// The next job, or `None` once every sender is gone. When `yields` (no transaction is open), an
/// empty channel is looked at again after each of a few `sched_yield`s before the thread sleeps
/// on it. On a core the thread shares with a request worker, a yield lets the worker run on and
/// queue its next statements, which the thread then takes one after another without a sleep and
/// a wake-up (two context switches and a futex call) per statement; on a core of its own a yield
/// returns at once and costs a system call. While a request's transaction is open, the job that
/// can run next is that request's, which needs a whole round trip through the worker, so the
/// thread sleeps at once: yielding then measured slower (`POST /users`, 15.5k against 11.5k
/// req/s). Measured in bench/README.md ("The database thread's hand-offs").
fn next_job(receiver: &mut mpsc::Receiver<Job>, yields: bool) -> Option<Job> {
    for _ in 0..if yields { YIELDS_BEFORE_SLEEP } else { 0 } {
        match receiver.try_recv() {
            Ok(job) => return Some(job),
            Err(mpsc::error::TryRecvError::Disconnected) => return None,
            Err(mpsc::error::TryRecvError::Empty) => std::thread::yield_now(),
        }
    }
    receiver.blocking_recv()
}

impl Worker {
    fn serve(&mut self, mut receiver: mpsc::Receiver<Job>) {
        loop {
            let job = match self.next_deferred() {
                Some(job) => job,
                None => match next_job(&mut receiver, self.owner.is_none()) {
                    Some(job) => job,
                    None => return,
                },
            };
            match job.op {
                Op::Shutdown => return,
                Op::RequestEnded { commit, reply } => {
                    let result = self.request_ended(job.owner, commit);
                    if let Some(reply) = reply {
                        let _ = reply.send(result);
                    }
                }
                _ if self.owner.is_some_and(|owner| owner != job.owner) => self.deferred.push_back(job),
                _ if job.is_abandoned() => {}
                _ => self.execute(job),
            }
        }
    }

    /// The first deferred job that may run now: all of them once no transaction is open.
    fn next_deferred(&mut self) -> Option<Job> {
        let at = match self.owner {
            None if !self.deferred.is_empty() => 0,
            None => return None,
            Some(owner) => self.deferred.iter().position(|job| job.owner == owner)?,
        };
        self.deferred.remove(at)
    }

    fn execute(&mut self, job: Job) {
        DEADLINE.with(|d| d.set(job.queued + self.busy));
        let owner = job.owner;
        let began = job.began;
        let started = Instant::now();
        let queued = job.queued;
        match job.op {
            Op::Exec { sql, args, commit, reply } => {
                let mut result = self.exec(owner, began.as_deref(), &sql, &args);
                self.measure(&sql, queued, started, None);
                self.settle(owner, &sql, result.as_ref().err());
                // Committed only while the request still waits: one whose future was dropped (the
                // timeout, a client gone) is answered with an error, so its writes must not stay;
                // its wrapper's notice rolls them back.
                if commit && result.is_ok() && owner != 0 && !reply.is_closed() {
                    match self.request_ended(owner, true) {
                        Ok(()) => {
                            // Nothing is left for the wrapper to end.
                            if let Some(flag) = &began {
                                flag.store(false, Ordering::Relaxed);
                            }
                        }
                        Err(error) => result = Err(error),
                    }
                }
                let _ = reply.send(result);
            }
            Op::Query { sql, args, mut sink, reply } => {
                self.last_rows = 0;
                let result = self.query(owner, began.as_deref(), &sql, &args, sink.as_mut());
                self.measure(&sql, queued, started, Some(self.last_rows));
                self.settle(owner, &sql, result.as_ref().err());
                let _ = reply.send(result.map(|hold| (sink, hold)));
            }
            Op::Begin { reply } => {
                let result = self.begin(owner, began.as_deref());
                self.settle(owner, "BEGIN", result.as_ref().err());
                let _ = reply.send(result);
            }
            Op::Commit { reply } => {
                let result = self.end_explicit(owner, true);
                self.settle(owner, "COMMIT", result.as_ref().err());
                let _ = reply.send(result);
            }
            Op::Rollback { reply } => {
                let result = self.end_explicit(owner, false);
                self.settle(owner, "ROLLBACK", result.as_ref().err());
                let _ = reply.send(result);
            }
            Op::RequestEnded { .. } | Op::Shutdown => unreachable!("control jobs are handled in serve"),
        }
    }

    /// Records statement `sql`'s wait (from `queued` to `started`), run (from `started`) and, for a
    /// query, the rows it returned, when metrics are on.
    fn measure(&mut self, sql: &str, queued: Instant, started: Instant, rows: Option<u64>) {
        if self.metrics.is_none() {
            self.metrics = crate::metrics::DbMetrics::new();
        }
        let Some(metrics) = &self.metrics else { return };
        let took = started.elapsed();
        let statement = kept(&mut self.statements, sql);
        let handles = statement.metrics.get_or_insert_with(|| crate::metrics::StatementMetrics::new(sql));
        metrics.statement(handles, started.saturating_duration_since(queued), took, rows);
    }

    /// `db.begin`: a real `BEGIN IMMEDIATE` outside requests; inside one, a savepoint in the
    /// request transaction.
    fn begin(&mut self, owner: u64, began: Option<&AtomicBool>) -> Result<(), DbError> {
        if owner == 0 {
            return self.conn.execute_batch("BEGIN IMMEDIATE").map_err(db_error);
        }
        begin_request(&self.conn, (&mut self.owner, &mut self.savepoints), owner, began)?;
        self.conn.execute_batch(&format!("SAVEPOINT nagi_{}", self.savepoints)).map_err(db_error)?;
        self.savepoints += 1;
        Ok(())
    }

    /// `db.commit` (`commit`) or `db.rollback`: ends the innermost savepoint of a request, or the
    /// real transaction outside requests (or when the request has no savepoint open).
    fn end_explicit(&mut self, owner: u64, commit: bool) -> Result<(), DbError> {
        if owner == 0 || self.savepoints == 0 {
            return self.conn.execute_batch(if commit { "COMMIT" } else { "ROLLBACK" }).map_err(db_error);
        }
        let name = format!("nagi_{}", self.savepoints - 1);
        let sql = if commit { format!("RELEASE {name}") } else { format!("ROLLBACK TO {name}; RELEASE {name}") };
        self.conn.execute_batch(&sql).map_err(db_error)?;
        self.savepoints -= 1;
        Ok(())
    }

    /// After a job: logs a failure and rolls back any open transaction; then records who owns the
    /// transaction from the connection's real state, so that `BEGIN`/`COMMIT` sent as plain SQL
    /// through `exec` are tracked too.
    fn settle(&mut self, owner: u64, sql: &str, error: Option<&DbError>) {
        if let Some(error) = error {
            match error.kind {
                DbErrorKind::Conflict => {
                    tracing::debug!(target: "nagi::db", request = owner, "conflict: {error} ({sql})");
                }
                DbErrorKind::Busy => {
                    tracing::warn!(target: "nagi::db", request = owner, "database busy: {error} ({sql})");
                }
                _ => tracing::error!(target: "nagi::db", request = owner, "statement failed: {error} ({sql})"),
            }
            if !self.conn.is_autocommit()
                && let Err(e) = self.conn.execute_batch("ROLLBACK")
            {
                tracing::error!(target: "nagi::db", request = owner, "rollback after a failure failed: {e}");
            }
        }
        self.owner = if self.conn.is_autocommit() { None } else { Some(owner) };
        if self.owner.is_none() {
            self.savepoints = 0;
        }
    }

    /// Ends `request`'s transaction: commits it when `commit` (after rolling back an explicit
    /// transaction the request left open), else rolls it back. Errors: the commit failed (the
    /// transaction is then rolled back).
    fn request_ended(&mut self, request: u64, commit: bool) -> Result<(), DbError> {
        let mut result = Ok(());
        if self.owner == Some(request) && !self.conn.is_autocommit() {
            if self.savepoints > 0 {
                tracing::debug!(target: "nagi::db", request, "rolling back a transaction the request left open");
                if let Err(e) = self.conn.execute_batch("ROLLBACK TO nagi_0; RELEASE nagi_0") {
                    tracing::error!(target: "nagi::db", request, "rollback to the savepoint failed: {e}");
                }
                self.savepoints = 0;
            }
            if commit {
                result = self.conn.execute_batch("COMMIT").map_err(db_error);
                if let Err(error) = &result {
                    tracing::error!(target: "nagi::db", request, "commit failed: {error}");
                }
            }
            if let Some(metrics) = &self.metrics {
                metrics.transaction(commit && result.is_ok());
            }
            if !self.conn.is_autocommit()
                && let Err(e) = self.conn.execute_batch("ROLLBACK")
            {
                tracing::error!(target: "nagi::db", request, "rollback failed: {e}");
            }
            self.owner = if self.conn.is_autocommit() { None } else { Some(request) };
        }
        self.deferred.retain(|job| job.owner != request);
        result
    }

    fn exec(&mut self, owner: u64, began: Option<&AtomicBool>, sql: &str, args: &[SqlValue]) -> Result<i64, DbError> {
        let mut statement = prepare_for(&self.conn, (&mut self.owner, &mut self.savepoints), owner, began, sql)?;
        let changed = statement.execute(params_from_iter(args)).map_err(db_error)?;
        Ok(i64::try_from(changed).unwrap_or(i64::MAX))
    }

    fn query(
        &mut self,
        owner: u64,
        began: Option<&AtomicBool>,
        sql: &str,
        args: &[SqlValue],
        sink: &mut dyn RowSink,
    ) -> Result<Option<Hold>, DbError> {
        let mut statement = prepare_for(&self.conn, (&mut self.owner, &mut self.savepoints), owner, began, sql)?;
        let by_class = &mut kept(&mut self.statements, sql).columns;
        let class = sink.class();
        let columns = match by_class.get(&class) {
            Some(columns) => columns,
            None => {
                let resolved = resolve_columns(sink, |name| statement.column_index(name).ok())?;
                by_class.entry(class).or_insert(resolved)
            }
        };
        let mut rows = statement.query(params_from_iter(args)).map_err(db_error)?;
        let mut feed = RowFeed::new(self.budget.as_ref(), self.max_rows);
        while let Some(row) = rows.next().map_err(db_error)? {
            let more = feed.accept(&Row::new(row), sink, columns);
            self.last_rows = feed.count;
            if !more? {
                break;
            }
        }
        Ok(feed.finish())
    }

    fn finish(mut self, path: &str) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        // Dropping deferred jobs closes their reply channels; their requests answer 500.
        self.deferred.clear();
        match self.conn.close() {
            Ok(()) => tracing::info!(target: "nagi::db", "closed {path}"),
            Err((_, e)) => tracing::error!(target: "nagi::db", "closing {path} failed: {e}"),
        }
    }
}

/// The column index of each of `sink`'s fields, by name (`index_of` answers a statement's
/// index of a result-column name), in field order. Errors: a field no result column has.
pub(super) fn resolve_columns(
    sink: &dyn RowSink,
    index_of: impl Fn(&str) -> Option<usize>,
) -> Result<Vec<usize>, DbError> {
    (0..sink.column_count())
        .map(|i| {
            let name = sink.column(i);
            index_of(name).ok_or_else(|| {
                DbError::new(
                    DbErrorKind::Row,
                    RowError::new(name, "the query has no result column with this name").to_string(),
                )
            })
        })
        .collect()
}

/// One query's rows on their way into its sink, on either engine: the `--max-query-rows` limit,
/// the decode errors, and the memory budget's count of the rows.
pub(super) struct RowFeed<'a> {
    held: RowBytes<'a>,
    max_rows: u64,
    /// How many rows were fed so far.
    pub(super) count: u64,
}

impl<'a> RowFeed<'a> {
    /// A feed counting in `budget` (if any) that refuses a query's row past `max_rows`.
    pub(super) fn new(budget: Option<&'a Arc<Budget>>, max_rows: u64) -> RowFeed<'a> {
        RowFeed { held: RowBytes { budget, hold: None, pending: 0 }, max_rows, count: 0 }
    }

    /// Decodes `row` into `sink` (`columns` as resolved); `Ok(false)` when the sink wants no more.
    pub(super) fn accept(&mut self, row: &Row<'_>, sink: &mut dyn RowSink, columns: &[usize]) -> Result<bool, DbError> {
        self.count += 1;
        if self.count > self.max_rows {
            let message = format!(
                "the query returned more than {} rows, the most one query may return (--max-query-rows); page it \
                 with LIMIT",
                self.max_rows
            );
            return Err(DbError::new(DbErrorKind::TooManyRows, message));
        }
        let more = sink
            .accept(row, columns)
            .map_err(|e| DbError::new(DbErrorKind::Row, format!("cannot decode a row: {e}")))?;
        self.held.add(row, columns.len())?;
        Ok(more)
    }

    /// The memory budget's hold of every row fed.
    pub(super) fn finish(self) -> Option<Hold> {
        self.held.finish()
    }
}

/// How many bytes of rows a query reads between two takes from the memory budget.
const ROWS_STEP: usize = 64 * 1024;

/// The memory budget's count of one query's rows: an estimate of what the decoded rows hold (the
/// texts' bytes, counted by [`Row`] as it reads them, and 24 bytes per field), taken from the
/// budget in steps of [`ROWS_STEP`], so that a query whose rows do not fit stops as soon as they
/// stop fitting rather than after it has read them all.
struct RowBytes<'a> {
    budget: Option<&'a Arc<Budget>>,
    hold: Option<Hold>,
    pending: usize,
}

impl RowBytes<'_> {
    /// Counts a decoded `row` of `fields` fields; `Overloaded` when it does not fit.
    fn add(&mut self, row: &Row<'_>, fields: usize) -> Result<(), DbError> {
        let Some(budget) = self.budget else { return Ok(()) };
        self.pending += row.text_bytes() + 24 * fields;
        if self.pending >= ROWS_STEP {
            let taken = budget
                .try_take(self.pending)
                .ok_or_else(|| DbError::new(DbErrorKind::Overloaded, budget.refusal("the rows of this query")))?;
            self.pending = 0;
            taken.add_to(&mut self.hold);
        }
        Ok(())
    }

    /// The hold of every row counted: the last step's bytes are charged whether or not they fit,
    /// being fewer than [`ROWS_STEP`].
    fn finish(mut self) -> Option<Hold> {
        let budget = self.budget?;
        budget.charge(self.pending).add_to(&mut self.hold);
        self.hold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk is SQLite's `SQLITE_FULL`, here made real by a page limit: it is `Full`,
    /// answered 507 with nothing written, and a write fits again once there is room.
    #[test]
    fn a_full_database_is_507_and_writes_again_once_there_is_room() {
        let conn = Connection::open_in_memory().expect("an in-memory database");
        conn.execute_batch("CREATE TABLE t (x TEXT); PRAGMA max_page_count = 8;").expect("the table");
        let big = "x".repeat(4096);
        let error = (0..64)
            .find_map(|_| conn.execute("INSERT INTO t VALUES (?)", [&big]).err())
            .expect("the page limit fills the database");
        let error = db_error(error);
        assert_eq!(error.kind, DbErrorKind::Full, "{error}");
        assert_eq!(error.to_http().status, 507);
        conn.execute_batch("DELETE FROM t; PRAGMA max_page_count = 1000;").expect("room again");
        conn.execute("INSERT INTO t VALUES (?)", [&big]).expect("a write fits again");
    }

    /// A database file that cannot be written is named with the operating system's reason.
    #[test]
    fn an_unwritable_database_names_the_path_and_the_reason() {
        let dir = std::env::temp_dir();
        let error = open(&dir.display().to_string(), &[], &DbOptions::default()).expect_err("a folder is no database");
        assert_eq!(error.kind, DbErrorKind::Unwritable);
        assert!(error.message.contains(&format!("the database {} cannot be written", dir.display())), "{error}");
        assert!(error.message.contains("Is a directory"), "{error}");
    }
}
