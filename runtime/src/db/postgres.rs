//! PostgreSQL for generated code: the same statements, transactions and errors as the SQLite
//! thread's (`db/thread.rs`), on a pool of connections to a database server (`--db
//! postgres://…`), so one compiled program runs on either engine.
//!
//! - **Statements.** A program's SQL is sent in its PostgreSQL form (`nagi_abi::sql::to_postgres`:
//!   `?` → `$n`), prepared once per connection (deadpool's statement cache), parameters written
//!   as the types PostgreSQL inferred (`postgres/values.rs`), rows read into the cells
//!   `db/row.rs` checks, so decoding rules are SQLite's.
//! - **One transaction per request.** A request's first statement that writes (any statement but
//!   `SELECT`, `VALUES`, `SHOW` and `EXPLAIN`) takes a connection from the pool for the rest of the
//!   request and begins a transaction on it; statements that only read, before that, run on any
//!   pooled connection. The transaction ends with the request as on SQLite: committed before a 2xx
//!   answer, rolled back otherwise; `db.begin`/`db.commit`/`db.rollback` inside a request are
//!   savepoints. A request whose future is dropped (timeout, client gone) rolls its transaction
//!   back when its [`Held`] goes. Many requests' transactions run at once (PostgreSQL's default
//!   isolation, READ COMMITTED), where SQLite runs one at a time.
//! - **Errors.** A unique violation is a conflict (409); a serialization failure, a deadlock or a
//!   lock not granted within `--busy-timeout-ms` (`lock_timeout`) is busy (503); a server that
//!   cannot be reached, or no connection free within the busy budget, is unavailable (503); each
//!   with `Retry-After`, never a hang. A failed statement rolls back the request's transaction.

mod values;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod};
use futures_util::TryStreamExt;
use tokio_postgres::error::SqlState;

use super::row::{Cell, Row};
use super::schema::{Column, compare, mismatch};
use super::thread::{RowFeed, RowSink, resolve_columns};
use super::{DbError, DbErrorKind, DbOptions, SqlValue};
use crate::budget::{Budget, Hold};
use values::{Param, Read};

/// Whether `url` names a PostgreSQL database rather than a SQLite file.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// `url` with its password (in the authority, or a `password=` parameter) replaced by `***`, for
/// the log and for messages.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let parameters: Vec<String> = query
                .split('&')
                .map(|p| if p.starts_with("password=") { "password=***".to_owned() } else { p.to_owned() })
                .collect();
            format!("{path}?{}", parameters.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// What a request (or the code outside requests) holds of the database: the connection its
/// transaction runs on, while one is open, and how many savepoints are open inside it.
#[derive(Default)]
pub(crate) struct Held {
    client: Option<Object>,
    savepoints: u32,
}

impl Drop for Held {
    /// A transaction left open (the request's future was dropped) is rolled back before its
    /// connection goes back to the pool; without a Tokio runtime to do that on, the connection is
    /// closed instead, which rolls it back on the server.
    fn drop(&mut self) {
        let Some(client) = self.client.take() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if client.batch_execute("ROLLBACK").await.is_err() {
                        drop(Object::take(client));
                    }
                });
            }
            Err(_) => drop(Object::take(client)),
        }
    }
}

/// Where a statement runs: the holder of its transaction, whether that is a request's (else the
/// code outside requests, whose statements commit one by one unless `db.begin` opened a real
/// transaction), and the request's "has a transaction" flag.
pub(crate) struct Place {
    pub(crate) held: Arc<tokio::sync::Mutex<Held>>,
    pub(crate) request: bool,
    pub(crate) began: Option<Arc<AtomicBool>>,
}

/// An open PostgreSQL database: the pool, and the settings statements run with.
pub(crate) struct Engine {
    pool: Pool,
    max_rows: u64,
    budget: Option<Arc<Budget>>,
    /// What code outside requests holds.
    outside: Arc<tokio::sync::Mutex<Held>>,
    /// The URL without its password.
    shown: String,
    /// How to connect, for the connections outside the pool (`LISTEN`).
    config: tokio_postgres::Config,
    /// The statements' metrics, made at the first statement after metrics were turned on, and
    /// each statement's handles by its SQL text.
    metrics: std::sync::Mutex<(
        Option<crate::metrics::DbMetrics>,
        hashbrown::HashMap<String, crate::metrics::StatementMetrics>,
    )>,
}

/// Converts a tokio-postgres error into its kind by SQLSTATE; an error without one is the
/// connection's (unreachable, closed) unless it is a parameter the server's type refused.
fn db_error(error: tokio_postgres::Error) -> DbError {
    let Some(server) = error.as_db_error() else {
        let is_io = std::error::Error::source(&error).is_some_and(|s| s.is::<std::io::Error>());
        let kind = if is_io || error.is_closed() { DbErrorKind::Unavailable } else { DbErrorKind::Failed };
        return DbError::new(kind, error.to_string());
    };
    let code = server.code();
    let kind = if *code == SqlState::UNIQUE_VIOLATION {
        DbErrorKind::Conflict
    } else if *code == SqlState::T_R_SERIALIZATION_FAILURE
        || *code == SqlState::T_R_DEADLOCK_DETECTED
        || *code == SqlState::LOCK_NOT_AVAILABLE
    {
        DbErrorKind::Busy
    } else if *code == SqlState::DISK_FULL {
        DbErrorKind::Full
    } else if code.code().starts_with("08") || code.code().starts_with("57P") {
        // Connection exceptions, and the server shutting down or restarting.
        DbErrorKind::Unavailable
    } else {
        DbErrorKind::Failed
    };
    let mut message = server.message().to_owned();
    if let Some(detail) = server.detail() {
        message.push_str(&format!(" ({detail})"));
    }
    DbError::new(kind, message)
}

fn pool_error(error: PoolError) -> DbError {
    match error {
        PoolError::Backend(error) => db_error(error),
        PoolError::Timeout(_) => DbError::new(
            DbErrorKind::Unavailable,
            "no database connection was free within the busy timeout (--busy-timeout-ms)",
        ),
        other => DbError::new(DbErrorKind::Unavailable, other.to_string()),
    }
}

/// Whether `sql` may write: anything but a statement whose first word is `SELECT`, `VALUES`,
/// `SHOW` or `EXPLAIN` (after comments, such as the `/*nagi FILE:LINE*/` each statement starts
/// with). A `WITH` may hold an `INSERT`, so it counts as a write.
fn writes(sql: &str) -> bool {
    let mut rest = sql.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]).trim_start();
        } else if let Some(after) = rest.strip_prefix("--") {
            rest = after.find('\n').map_or("", |end| &after[end..]).trim_start();
        } else {
            break;
        }
    }
    let word: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
    !["select", "values", "show", "explain"].iter().any(|read| word.eq_ignore_ascii_case(read))
}

impl Engine {
    /// Connects to `url` with a pool of `pool_size` connections and makes the tables of
    /// `create_sql` (PostgreSQL's `CREATE TABLE IF NOT EXISTS` statements) exist as declared, as
    /// SQLite's schema check does. A connection waits at most `options.busy` for a lock
    /// (`lock_timeout`), and for the pool or the server to give it a connection.
    ///
    /// Errors: `Unavailable` when the server cannot be reached (the service exits with 2),
    /// `Schema` naming each differing table and column.
    pub(crate) async fn open(
        url: &str,
        create_sql: &[String],
        options: &DbOptions,
        pool_size: usize,
    ) -> Result<Engine, DbError> {
        let shown = redacted(url);
        let bad_url = |e: tokio_postgres::Error| {
            DbError::new(DbErrorKind::Unwritable, format!("the database URL {shown} is not usable: {e}"))
        };
        let mut config: tokio_postgres::Config = url.parse().map_err(bad_url)?;
        let busy_ms = options.busy.as_millis();
        config.options(format!("-c lock_timeout={busy_ms}"));
        config.connect_timeout(options.busy);
        config.keepalives_idle(Duration::from_secs(30));
        if config.get_application_name().is_none() {
            config.application_name("nagi");
        }
        let manager = Manager::from_config(
            config.clone(),
            tokio_postgres::NoTls,
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(options.busy))
            .create_timeout(Some(options.busy))
            .recycle_timeout(Some(options.busy))
            .build()
            .map_err(|e| DbError::new(DbErrorKind::Failed, e.to_string()))?;
        let engine = Engine {
            pool,
            max_rows: options.max_query_rows,
            budget: options.budget.clone(),
            outside: Arc::default(),
            shown: shown.clone(),
            config,
            metrics: Default::default(),
        };
        let mut client = engine.pool.get().await.map_err(|e| {
            let error = pool_error(e);
            DbError::new(DbErrorKind::Unavailable, format!("cannot reach the database {shown}: {}", error.message))
        })?;
        ensure_schema(&mut client, &shown, create_sql).await?;
        Ok(engine)
    }

    /// The URL without its password.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// Runs `sql` (a statement that claims something and locks it for the session) with `args`
    /// on a connection of its own, its rows fed into `sink`; gives the connection as a [`Lease`]
    /// (which the caller releases at once when nothing was claimed) and the sink.
    pub(crate) async fn lease(
        &self,
        sql: &str,
        args: &[SqlValue],
        mut sink: Box<dyn RowSink>,
    ) -> Result<Leased, DbError> {
        let client = self.connect().await?;
        let statement = prepare(&client, sql, args).await?;
        fetch(&client, &statement, args, sink.as_mut(), None, self.max_rows).await?;
        Ok(Leased { lease: Lease { client: Some(client) }, rows: sink })
    }

    /// Listens on `channel` (`LISTEN`) on a connection of its own, calling `notified` with each
    /// notification's payload, until the process ends; a lost connection is made again after a
    /// second. Notifications only wake workers early: they poll anyway.
    pub(crate) fn listen(&self, channel: &'static str, notified: fn(&str)) -> tokio::task::JoinHandle<()> {
        let config = self.config.clone();
        tokio::spawn(async move {
            loop {
                match config.connect(tokio_postgres::NoTls).await {
                    Ok((client, mut connection)) => {
                        let mut messages =
                            std::pin::pin!(futures_util::stream::poll_fn(move |cx| { connection.poll_message(cx) }));
                        let sql = format!("LISTEN {channel}");
                        let listened = futures_util::FutureExt::fuse(client.batch_execute(&sql));
                        let mut listened = std::pin::pin!(listened);
                        loop {
                            tokio::select! {
                                result = &mut listened, if !futures_util::future::FusedFuture::is_terminated(&listened) => {
                                    if let Err(error) = result {
                                        tracing::warn!(target: "nagi::db", "LISTEN {channel} failed: {error}");
                                    }
                                }
                                message = messages.try_next() => match message {
                                    Ok(Some(tokio_postgres::AsyncMessage::Notification(note))) => notified(note.payload()),
                                    Ok(Some(_)) => {}
                                    Ok(None) | Err(_) => break,
                                },
                            }
                        }
                    }
                    Err(error) => tracing::warn!(target: "nagi::db", "cannot listen on {channel}: {}", db_error(error)),
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
    }

    /// Closes the pool: idle connections close now, the rest as they come back.
    pub(crate) fn close(&self) {
        self.pool.close();
    }

    /// The place of code outside requests.
    pub(crate) fn outside(&self) -> Place {
        Place { held: Arc::clone(&self.outside), request: false, began: None }
    }

    async fn connect(&self) -> Result<Object, DbError> {
        self.pool.get().await.map_err(pool_error)
    }

    /// Begins the request transaction of `place` on a connection of its own, unless one is open.
    async fn begin_request(&self, held: &mut Held, place: &Place) -> Result<(), DbError> {
        if held.client.is_some() || !place.request {
            return Ok(());
        }
        let client = self.connect().await?;
        client.batch_execute("BEGIN").await.map_err(db_error)?;
        held.client = Some(client);
        held.savepoints = 0;
        if let Some(flag) = &place.began {
            flag.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// After a failed statement: the open transaction is rolled back (PostgreSQL refuses every
    /// later statement of a transaction that failed), as SQLite's thread does.
    async fn abandon(held: &mut Held) {
        if let Some(client) = held.client.take()
            && let Err(error) = client.batch_execute("ROLLBACK").await
        {
            tracing::error!(target: "nagi::db", "rollback after a failure failed: {error}");
            drop(Object::take(client));
        }
        held.savepoints = 0;
    }

    /// Runs `sql` at `place` (beginning the request's transaction first when it writes); `run`
    /// gets the connection and the prepared statement. A failure rolls the transaction back.
    async fn run<T>(
        &self,
        place: &Place,
        sql: &str,
        args: &[SqlValue],
        run: impl AsyncFnOnce(&Object, &tokio_postgres::Statement) -> Result<(T, Option<u64>), DbError>,
    ) -> Result<T, DbError> {
        let queued = Instant::now();
        let mut held = place.held.lock().await;
        let mut started = queued;
        let result = async {
            if writes(sql) {
                self.begin_request(&mut held, place).await?;
            }
            let pooled;
            let client = match &held.client {
                Some(client) => client,
                None => {
                    pooled = self.connect().await?;
                    &pooled
                }
            };
            started = Instant::now();
            let statement = prepare(client, sql, args).await?;
            run(client, &statement).await
        }
        .await;
        let rows = result.as_ref().ok().and_then(|(_, rows)| *rows);
        self.measure(sql, started.saturating_duration_since(queued), started.elapsed(), rows);
        if let Err(error) = &result {
            log_failure(error, sql);
            Engine::abandon(&mut held).await;
        }
        result.map(|(value, _)| value)
    }

    /// Records statement `sql`'s wait for its connection, its run and, for a query, the rows it
    /// returned, when metrics are on (the SQLite thread's `measure`).
    fn measure(&self, sql: &str, waited: Duration, took: Duration, rows: Option<u64>) {
        let mut metrics = self.metrics.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (db, statements) = &mut *metrics;
        if db.is_none() {
            *db = crate::metrics::DbMetrics::new();
        }
        let Some(db) = db else { return };
        let handles = statements.entry_ref(sql).or_insert_with(|| crate::metrics::StatementMetrics::new(sql));
        db.statement(handles, waited, took, rows);
    }

    /// [`super::exec`]: the number of rows changed; with `commit`, the request's transaction is
    /// committed right after the statement (`db.exec_commit`).
    pub(crate) async fn exec(&self, place: &Place, sql: &str, args: &[SqlValue], commit: bool) -> Result<i64, DbError> {
        let changed = self
            .run(place, sql, args, async |client, statement| {
                execute(client, statement, args).await.map(|changed| (changed, None))
            })
            .await?;
        if commit && place.request {
            self.request_ended(place, true).await?;
            if let Some(flag) = &place.began {
                flag.store(false, Ordering::Relaxed);
            }
        }
        Ok(i64::try_from(changed).unwrap_or(i64::MAX))
    }

    /// [`super::run_query`]: the rows decoded into `sink`, and their hold in the memory budget.
    pub(crate) async fn query(
        &self,
        place: &Place,
        sql: &str,
        args: &[SqlValue],
        mut sink: Box<dyn RowSink>,
    ) -> Result<(Box<dyn RowSink>, Option<Hold>), DbError> {
        let (budget, max_rows) = (self.budget.as_ref(), self.max_rows);
        let hold = self
            .run(place, sql, args, async |client, statement| {
                fetch(client, statement, args, sink.as_mut(), budget, max_rows)
                    .await
                    .map(|(hold, rows)| (hold, Some(rows)))
            })
            .await?;
        Ok((sink, hold))
    }

    /// `db.begin`: a savepoint of the request's transaction (begun here if need be); outside
    /// requests, a real transaction.
    pub(crate) async fn begin(&self, place: &Place) -> Result<(), DbError> {
        let mut held = place.held.lock().await;
        if !place.request {
            if held.client.is_none() {
                let client = self.connect().await?;
                client.batch_execute("BEGIN").await.map_err(db_error)?;
                held.client = Some(client);
            }
            return Ok(());
        }
        self.begin_request(&mut held, place).await?;
        let name = format!("SAVEPOINT nagi_{}", held.savepoints);
        let client = held.client.as_ref().expect("the request transaction was just begun");
        client.batch_execute(&name).await.map_err(db_error)?;
        held.savepoints += 1;
        Ok(())
    }

    /// `db.commit` (`commit`) or `db.rollback`: ends the innermost savepoint of a request, or
    /// the real transaction outside requests (or when the request has no savepoint open).
    pub(crate) async fn end_explicit(&self, place: &Place, commit: bool) -> Result<(), DbError> {
        let mut held = place.held.lock().await;
        let Some(client) = &held.client else {
            return Err(DbError::new(DbErrorKind::Failed, "there is no transaction to end"));
        };
        if !place.request || held.savepoints == 0 {
            let result = client.batch_execute(if commit { "COMMIT" } else { "ROLLBACK" }).await.map_err(db_error);
            if result.is_err() {
                Engine::abandon(&mut held).await;
            }
            held.client = None;
            return result;
        }
        let name = format!("nagi_{}", held.savepoints - 1);
        let sql = if commit { format!("RELEASE {name}") } else { format!("ROLLBACK TO {name}; RELEASE {name}") };
        client.batch_execute(&sql).await.map_err(db_error)?;
        held.savepoints -= 1;
        Ok(())
    }

    /// Ends the request transaction of `place`: commits it when `commit` (after rolling back a
    /// savepoint the request left open), else rolls it back; the connection goes back to the
    /// pool. Errors: the commit failed (the transaction is then rolled back).
    pub(crate) async fn request_ended(&self, place: &Place, commit: bool) -> Result<(), DbError> {
        let mut held = place.held.lock().await;
        let Some(client) = held.client.take() else { return Ok(()) };
        let mut result = Ok(());
        if held.savepoints > 0 {
            if let Err(e) = client.batch_execute("ROLLBACK TO nagi_0; RELEASE nagi_0").await {
                tracing::error!(target: "nagi::db", "rollback to the savepoint failed: {e}");
            }
            held.savepoints = 0;
        }
        let end = if commit { "COMMIT" } else { "ROLLBACK" };
        if let Err(error) = client.batch_execute(end).await {
            let error = db_error(error);
            tracing::error!(target: "nagi::db", "{end} failed: {error}");
            let _ = client.batch_execute("ROLLBACK").await;
            result = Err(error);
        }
        let metrics = self.metrics.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(db) = &metrics.0 {
            db.transaction(commit && result.is_ok());
        }
        result
    }
}

/// Prepares `sql` (SQLite's spelling) on `client`, once per connection. PostgreSQL infers each
/// placeholder's type from where it stands, and cannot where it stands alone (`?1 IS NULL OR
/// owner = ?1`, an idiom of optional filters): such a statement is prepared again with the
/// types of `args` (an integer as `bigint`, a float as `double precision`, a text or NULL as
/// `text`), which is what SQLite would compare them as.
async fn prepare(client: &Object, sql: &str, args: &[SqlValue]) -> Result<tokio_postgres::Statement, DbError> {
    let text = nagi_abi::sql::to_postgres(sql);
    match client.prepare_cached(&text).await {
        Ok(statement) => Ok(statement),
        // PostgreSQL answers 42P08 (ambiguous parameter) for a placeholder it cannot type.
        Err(error)
            if matches!(error.code(), Some(code) if *code == SqlState::AMBIGUOUS_PARAMETER
                || *code == SqlState::INDETERMINATE_DATATYPE) =>
        {
            use tokio_postgres::types::Type;
            let types: Vec<Type> = args
                .iter()
                .map(|arg| match arg {
                    SqlValue::Integer(_) => Type::INT8,
                    SqlValue::Real(_) => Type::FLOAT8,
                    SqlValue::Text(_) | SqlValue::Null => Type::TEXT,
                })
                .collect();
            client.prepare_typed_cached(&text, &types).await.map_err(db_error)
        }
        Err(error) => Err(db_error(error)),
    }
}

/// Runs the prepared `statement` (no rows wanted) with `args` on `client`: the rows it changed.
async fn execute(client: &Object, statement: &tokio_postgres::Statement, args: &[SqlValue]) -> Result<u64, DbError> {
    client.execute_raw(statement, args.iter().map(Param)).await.map_err(db_error)
}

/// Runs the prepared `statement` with `args` on `client` and feeds its rows into `sink`, within
/// `max_rows` and the memory `budget`; gives the rows' hold.
async fn fetch(
    client: &Object,
    statement: &tokio_postgres::Statement,
    args: &[SqlValue],
    sink: &mut dyn RowSink,
    budget: Option<&Arc<Budget>>,
    max_rows: u64,
) -> Result<(Option<Hold>, u64), DbError> {
    let columns = resolve_columns(sink, |name| statement.columns().iter().position(|column| column.name() == name))?;
    let rows = client.query_raw(statement, args.iter().map(Param)).await.map_err(db_error)?;
    let mut rows = std::pin::pin!(rows);
    let mut feed = RowFeed::new(budget, max_rows);
    while let Some(row) = rows.try_next().await.map_err(db_error)? {
        let cells = (0..row.len())
            .map(|i| row.try_get::<_, Read<'_>>(i).map(|read| read.0))
            .collect::<Result<Vec<Cell<'_>>, _>>()
            .map_err(|e| DbError::new(DbErrorKind::Row, format!("cannot decode a row: {e}")))?;
        if !feed.accept(&Row::of_cells(&cells), sink, &columns)? {
            break;
        }
    }
    let rows = feed.count;
    Ok((feed.finish(), rows))
}

/// A connection of its own that a job queue's worker holds for the length of one attempt: the
/// session-level advisory lock its claim took on the job's id lives as long as the connection
/// does, so another process can tell a job whose worker is alive from one whose process died
/// (`queues/postgres.rs`).
pub(crate) struct Lease {
    client: Option<Object>,
}

/// What [`Engine::lease`] claimed: the connection that holds the claim, and the rows of the
/// claiming statement.
pub(crate) struct Leased {
    pub(crate) lease: Lease,
    pub(crate) rows: Box<dyn RowSink>,
}

impl Lease {
    /// Runs `sql` (no rows wanted) on the lease's connection, e.g. to give up a lock.
    pub(crate) async fn exec(&self, sql: &str, args: &[SqlValue]) -> Result<(), DbError> {
        let client = self.client.as_ref().ok_or_else(DbError::closed)?;
        let statement = prepare(client, sql, args).await?;
        execute(client, &statement, args).await.map(|_| ())
    }

    /// Gives the connection back to the pool.
    pub(crate) fn release(mut self) {
        drop(self.client.take());
    }
}

impl Drop for Lease {
    /// A lease dropped without [`Lease::release`] (its attempt was cancelled) closes its
    /// connection, which gives up its locks on the server.
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            drop(Object::take(client));
        }
    }
}

fn log_failure(error: &DbError, sql: &str) {
    match error.kind {
        DbErrorKind::Conflict => tracing::debug!(target: "nagi::db", "conflict: {error} ({sql})"),
        DbErrorKind::Busy | DbErrorKind::Unavailable => {
            tracing::warn!(target: "nagi::db", "database busy or unavailable: {error} ({sql})")
        }
        _ => tracing::error!(target: "nagi::db", "statement failed: {error} ({sql})"),
    }
}

/// The columns of relation `name` (a quoted table name, or `pg_temp.nagi_declared`) as the schema
/// check compares them: names in order, types as PostgreSQL spells them, `NOT NULL`, and each
/// column's position in the primary key.
const COLUMNS_SQL: &str = "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull, \
     coalesce((SELECT array_position(i.indkey::int2[], a.attnum) FROM pg_index i \
     WHERE i.indrelid = a.attrelid AND i.indisprimary), 0)::int8 \
     FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped \
     ORDER BY a.attnum";

async fn columns(client: &impl deadpool_postgres::GenericClient, relation: &str) -> Result<Vec<Column>, DbError> {
    let rows = client.query(COLUMNS_SQL, &[&relation]).await.map_err(db_error)?;
    Ok(rows
        .iter()
        .map(|row| Column { name: row.get(0), ty: row.get(1), not_null: row.get(2), pk: row.get(3) })
        .collect())
}

/// The schema check at start, PostgreSQL's form of `db/schema.rs`'s: in one transaction, under an
/// advisory lock so that processes starting together do not race to create a table. The
/// declaration's columns are read from a temporary table made by the same statement, so both
/// sides are read the same way.
async fn ensure_schema(client: &mut Object, shown: &str, create_sql: &[String]) -> Result<(), DbError> {
    let transaction = client.transaction().await.map_err(db_error)?;
    // The key is any constant the program's own locks are unlikely to use ("nagi" in ASCII).
    transaction.batch_execute("SELECT pg_advisory_xact_lock(1851877225)").await.map_err(db_error)?;
    let mut problems = Vec::new();
    for sql in create_sql {
        let Some(table) = sql.split('"').nth(1) else { continue };
        let quoted = format!("\"{table}\"");
        let have = columns(&transaction, &quoted).await?;
        if have.is_empty() {
            transaction.batch_execute(sql).await.map_err(|e| failed_statement(sql, e))?;
            continue;
        }
        let declared =
            sql.replacen(&format!("CREATE TABLE IF NOT EXISTS {quoted}"), "CREATE TEMP TABLE nagi_declared", 1);
        transaction.batch_execute(&declared).await.map_err(|e| failed_statement(&declared, e))?;
        let want = columns(&transaction, "pg_temp.nagi_declared").await?;
        transaction.batch_execute("DROP TABLE pg_temp.nagi_declared").await.map_err(db_error)?;
        match compare(&have, &want, "the database") {
            Ok(added) => {
                for column in added {
                    let sql = format!("ALTER TABLE {quoted} ADD COLUMN \"{}\" {}", column.name, column.ty);
                    transaction.batch_execute(&sql).await.map_err(|e| failed_statement(&sql, e))?;
                    tracing::warn!(target: "nagi::db", "{shown}: added column `{}` to table `{table}`", column.name);
                }
            }
            Err(lines) => {
                problems.push(format!("table `{table}`:"));
                problems.extend(lines.into_iter().map(|line| format!("  {line}")));
            }
        }
    }
    if !problems.is_empty() {
        return Err(mismatch(shown, &problems));
    }
    transaction.commit().await.map_err(db_error)
}

fn failed_statement(sql: &str, error: tokio_postgres::Error) -> DbError {
    let error = db_error(error);
    DbError::new(error.kind, format!("{sql}: {}", error.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_told_from_writes_after_the_position_comment() {
        assert!(!writes("/*nagi a.nagi:3*/ SELECT id FROM t"));
        assert!(!writes("  select 1"));
        assert!(!writes("-- note\nVALUES (1)"));
        assert!(writes("/*nagi a.nagi:4*/ INSERT INTO t VALUES (1) RETURNING id"));
        assert!(writes("WITH d AS (DELETE FROM t RETURNING id) SELECT count(*) FROM d"));
        assert!(writes("UPDATE t SET a = 1"));
    }

    #[test]
    fn a_password_never_shows() {
        assert_eq!(redacted("postgres://app:s3cret@db.internal:5432/app"), "postgres://app:***@db.internal:5432/app");
        assert_eq!(redacted("postgresql://app@db/app?sslmode=disable"), "postgresql://app@db/app?sslmode=disable");
        assert_eq!(redacted("postgres://u:p@h/d?password=x&a=b"), "postgres://u:***@h/d?password=***&a=b");
        assert!(is_postgres_url("postgresql://h/d") && !is_postgres_url("./app.db"));
    }
}
