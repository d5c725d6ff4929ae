//! Durable job queues: jobs stored in the service's SQLite database, run by a pool of workers
//! per queue with retries, exponential backoff with jitter, and a dead-letter table, surviving
//! `kill -9`. The rules live here once; both emitters give the runtime a queue's handler as a
//! [`Handler`], the same value a route has, so a job attempt runs exactly as a request does.
//!
//! The rules (docs/http.md, "Job queues"):
//!
//! - **Storage.** A job is a row of `nagi_jobs` (its queue, its payload as JSON, its state,
//!   how many attempts have started, when it may run next, the last error). Pushing a job is an
//!   `INSERT` made by the database thread like every other write: pushed from a request, it is
//!   part of the request's transaction, so the job exists only if the request commits.
//! - **An attempt is a request.** Each attempt runs the handler inside a request context of its
//!   own, with the job as the JSON body and the attempt number (from 1) as the query parameter
//!   `attempt`; its writes are one transaction, and the job is marked done in that same
//!   transaction, so the handler's writes and the job's completion commit together or not at
//!   all. A 2xx answer is success; any other answer, a trap or a failure is a failed attempt.
//! - **Attempts.** The attempt count is taken when an attempt starts (the claim), so
//!   `max_attempts = 3` means at most 3 runs: after the third failure the job is moved to
//!   `nagi_dead_letters`, exactly once, in one transaction. A failed attempt before the last is
//!   queued again after `min · 2^(n-1)` milliseconds, at most `max`, with equal jitter (half the
//!   delay fixed, half random), so retries of many jobs do not arrive together.
//! - **At most once at a time.** A worker claims a job with one `UPDATE … RETURNING` on the
//!   database thread, which runs one statement at a time, so no job is claimed twice; each
//!   worker runs one attempt at a time, so at most `workers` attempts of a queue run at once.
//! - **At least once.** A job that was running when the process died is queued again when the
//!   service starts (its interrupted attempt counts, and its writes were never committed); when
//!   that attempt was its last, it is dead-lettered instead, so no job runs more than
//!   `max_attempts` times.
//! - **Shutdown.** On SIGTERM workers stop claiming, running attempts get a grace period to
//!   finish, and what is left stays queued (an attempt cut short is rolled back and runs again
//!   at the next start).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::FutureExt;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::context::{self, RequestContext};
use crate::db::{self, DbHandle, FromRow, Row, RowError, SqlValue};
use crate::http::{Handler, Request};
use crate::traces::{Detail, Kind, Span};

mod postgres;
mod schedule;

pub(crate) use postgres::TABLES as POSTGRES_TABLES;

/// The tables of every service that declares a queue, made at start as the program's own are.
pub const TABLES: [&str; 3] = [
    schedule::TABLE,
    "CREATE TABLE IF NOT EXISTS nagi_jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, \
     payload TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL, run_at INTEGER NOT NULL, \
     last_error TEXT, created_at INTEGER NOT NULL, finished_at INTEGER)",
    "CREATE TABLE IF NOT EXISTS nagi_dead_letters (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, \
     payload TEXT NOT NULL, attempts INTEGER NOT NULL, last_error TEXT NOT NULL, created_at INTEGER NOT NULL, \
     dead_at INTEGER NOT NULL)",
];

/// The index a worker's claim reads, made when the queues start.
const READY_INDEX: &str = "CREATE INDEX IF NOT EXISTS nagi_jobs_ready ON nagi_jobs (queue, state, run_at, id)";

/// The longest an idle worker sleeps before it looks for work again, in milliseconds, when no
/// push wakes it and no queued job falls due sooner.
const IDLE_MS: u64 = 1000;

/// How long a worker waits after the database failed it (busy, closed) before trying again.
const RETRY_MS: u64 = 100;

/// One queue the program declares.
#[derive(Clone)]
pub struct Queue {
    /// The queue's name, as jobs record it.
    pub name: &'static str,
    /// The handler of a job: it gets the job as its JSON body and `attempt` as a query
    /// parameter, and succeeds with a 2xx answer.
    pub handler: Handler,
    /// How many attempts of this queue may run at once (at least 1).
    pub workers: u16,
    /// How many attempts a job gets before it is dead-lettered (at least 1).
    pub max_attempts: u32,
    /// The delay after a first failed attempt, in milliseconds.
    pub backoff_min_ms: u64,
    /// The longest delay between attempts, in milliseconds.
    pub backoff_max_ms: u64,
    /// The ticks at which the runtime pushes a job itself (a scheduled job's), each job
    /// `{"at": "<the tick, RFC 3339>"}`.
    pub schedule: Option<crate::schedule::Schedule>,
}

/// Milliseconds since the Unix epoch, the unit of every time the tables hold.
fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The delay before the attempt after failed attempt `attempt` (from 1), in milliseconds:
/// `min · 2^(attempt-1)`, at most `max`, half of it fixed and half random.
pub fn backoff_ms(min: u64, max: u64, attempt: u32) -> u64 {
    let base = crate::backoff::exponential(Duration::from_millis(min), Duration::from_millis(max), attempt);
    let base = u64::try_from(base.as_millis()).unwrap_or(max);
    let half = base / 2;
    base - half + fastrand::u64(0..=half)
}

/// Pushes a job on `queue` with its `payload` (JSON), to run no sooner than `delay_ms` from now;
/// gives its id. Inside a request (or a job's attempt) it is part of that request's transaction.
///
/// # Panics
/// Unwinds as any statement does when the database fails (a 500 or 503 for a request).
pub async fn push(queue: &str, payload: String, delay_ms: i64) -> i64 {
    let now = now_ms();
    let args = vec![
        SqlValue::Text(queue.to_owned()),
        SqlValue::Text(payload),
        SqlValue::Integer(now.saturating_add(delay_ms.max(0))),
        SqlValue::Integer(now),
    ];
    let pushed: Vec<Id> = db::query(
        "INSERT INTO nagi_jobs (queue, payload, state, attempts, run_at, created_at) \
         VALUES (?1, ?2, 'queued', 0, ?3, ?4) RETURNING id",
        args,
    )
    .await;
    if db::on_postgres() {
        // Sent when the job commits: every process's idle worker of the queue wakes.
        db::exec(&postgres::notify_sql(queue), Vec::new()).await;
    }
    wake(queue);
    pushed.first().map_or(0, |id| id.0)
}

/// [`push`] of a job value, encoded as its JSON as `json.encode` encodes it (the Rust path's
/// `queue.push`).
pub async fn push_value<T: serde::Serialize>(queue: &str, job: &T, delay_ms: i64) -> i64 {
    push(queue, crate::json::json_encode(job), delay_ms).await
}

/// A job a worker claimed: its id, payload, and the number of the attempt it starts.
struct Claimed {
    id: i64,
    payload: String,
    attempt: i64,
}

impl FromRow for Claimed {
    const COLUMNS: &'static [&'static str] = &["id", "payload", "attempts"];

    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
        Ok(Claimed {
            id: row.i64(columns[0], "id")?,
            payload: row.string(columns[1], "payload")?,
            attempt: row.i64(columns[2], "attempts")?,
        })
    }
}

/// One integer column, `id` or a count.
struct Id(i64);

impl FromRow for Id {
    const COLUMNS: &'static [&'static str] = &["id"];

    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
        Ok(Id(row.i64(columns[0], "id")?))
    }
}

/// A job in the dead-letter table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadLetter {
    /// The job's id, as it was in `nagi_jobs`.
    pub id: i64,
    /// Its payload, JSON.
    pub payload: String,
    /// How many attempts it had.
    pub attempts: i64,
    /// Why its last attempt failed.
    pub last_error: String,
}

impl FromRow for DeadLetter {
    const COLUMNS: &'static [&'static str] = &["id", "job", "attempts", "last_error"];

    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
        Ok(DeadLetter {
            id: row.i64(columns[0], "id")?,
            payload: row.string(columns[1], "job")?,
            attempts: row.i64(columns[2], "attempts")?,
            last_error: row.string(columns[3], "last_error")?,
        })
    }
}

/// The query of a queue's dead letters, oldest first, whose columns are the fields of the
/// language's `DeadLetter` class: `id`, `attempts`, `last_error`, and `job`, the payload.
pub const DEAD_LETTERS_SQL: &str = "SELECT id, attempts, last_error, payload AS job FROM nagi_dead_letters \
     WHERE queue = ?1 ORDER BY dead_at, id";

/// The dead-lettered jobs of `queue`, oldest first.
pub async fn dead_letters(queue: &str) -> Vec<DeadLetter> {
    dead_letter_rows(queue).await
}

/// The dead-lettered jobs of `queue`, oldest first, as rows of `T` ([`DEAD_LETTERS_SQL`]'s
/// columns): the Rust path's `queue.dead_letters<C>`.
pub async fn dead_letter_rows<T: FromRow>(queue: &str) -> Vec<T> {
    db::query(DEAD_LETTERS_SQL, vec![SqlValue::Text(queue.to_owned())]).await
}

/// [`retry_dead`] as the language has it (`queue.retry`): the new job's id, or 0 when `queue`
/// has no dead letter `id` (job ids start at 1).
pub async fn retry(queue: &str, id: i64) -> i64 {
    retry_dead(queue, id).await.unwrap_or(0)
}

/// Pushes the dead-lettered job `id` of `queue` again, as a new job with fresh attempts, and
/// removes it from the dead letters; gives the new job's id, or `None` when there is no such
/// dead letter. Inside a request it is part of the request's transaction.
pub async fn retry_dead(queue: &str, id: i64) -> Option<i64> {
    let found: Vec<DeadLetter> = db::query(
        "DELETE FROM nagi_dead_letters WHERE queue = ?1 AND id = ?2 RETURNING id, payload AS job, attempts, last_error",
        vec![SqlValue::Text(queue.to_owned()), SqlValue::Integer(id)],
    )
    .await;
    let dead = found.into_iter().next()?;
    Some(push(queue, dead.payload, 0).await)
}

/// What every worker of one queue shares.
struct Shared {
    queue: Queue,
    db: DbHandle,
    /// Woken by a push, so that an idle worker claims at once.
    pushed: Notify,
    /// Set when the service stops; workers then claim nothing more.
    stopping: AtomicBool,
    /// Woken when the service stops.
    stop: Notify,
    /// Attempts running now, and the most that ever ran at once.
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    /// The queue's metrics, when they are on.
    metrics: Option<crate::metrics::QueueMetrics>,
}

/// The queues of the running service, by name, for [`wake`].
static RUNNING: std::sync::RwLock<Vec<Arc<Shared>>> = std::sync::RwLock::new(Vec::new());

/// Wakes an idle worker of `queue`, if the queue runs in this process.
fn wake(queue: &str) {
    let running = RUNNING.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(shared) = running.iter().find(|s| s.queue.name == queue) {
        shared.pushed.notify_one();
    }
}

/// The workers of every queue of a service, from [`start`] until [`Workers::stop`].
pub struct Workers {
    queues: Vec<Arc<Shared>>,
    tasks: Vec<JoinHandle<()>>,
    /// Tasks that never end by themselves, stopped first (on PostgreSQL: the `LISTEN`
    /// connection and the recovery of jobs whose process died).
    background: Vec<JoinHandle<()>>,
}

/// On PostgreSQL: every [`postgres::RECOVER_MS`], puts the jobs of `shared`'s queue that a
/// process which died left running through the stopped-process rule.
async fn recoverer(shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(Duration::from_millis(postgres::RECOVER_MS)).await;
        let queue = shared.queue.clone();
        if let Err(error) = in_transaction(&shared.db, async move { Ok(recover(&queue).await) }).await {
            tracing::warn!(target: "nagi::queue", queue = shared.queue.name, "cannot recover jobs: {error}");
        }
    }
}

/// Starts the workers of `queues` on the current Tokio runtime, with `db` (the service's open
/// database, whose tables include [`TABLES`]): first makes the claim's index and queues again
/// the jobs a stopped process left running (see the module's rules).
///
/// Errors: the database failed while recovering, as text.
pub async fn start(queues: &[Queue], db: &DbHandle) -> Result<Workers, String> {
    let on_postgres = db.postgres().is_some();
    let mut last_ticks = Vec::with_capacity(queues.len());
    for queue in queues {
        let queue = queue.clone();
        let last = in_transaction(db, async move {
            db::exec(READY_INDEX, Vec::new()).await;
            recover(&queue).await;
            Ok(match &queue.schedule {
                Some(ticks) => Some(schedule::catch_up(&queue, ticks).await),
                None => None,
            })
        })
        .await?;
        last_ticks.push(last);
    }
    let mut workers = Workers { queues: Vec::new(), tasks: Vec::new(), background: Vec::new() };
    if let (Some(engine), false) = (db.postgres(), queues.is_empty()) {
        workers.background.push(engine.listen(postgres::CHANNEL, wake));
    }
    for (queue, last) in queues.iter().zip(last_ticks) {
        let shared = Arc::new(Shared {
            queue: queue.clone(),
            db: db.clone(),
            pushed: Notify::new(),
            stopping: AtomicBool::new(false),
            stop: Notify::new(),
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            metrics: crate::metrics::QueueMetrics::new(queue.name),
        });
        for _ in 0..queue.workers.max(1) {
            workers.tasks.push(tokio::spawn(worker(Arc::clone(&shared))));
        }
        if let (Some(ticks), Some(last)) = (&queue.schedule, last) {
            workers.tasks.push(tokio::spawn(schedule::ticker(Arc::clone(&shared), ticks.clone(), last)));
        }
        if on_postgres {
            workers.background.push(tokio::spawn(recoverer(Arc::clone(&shared))));
        }
        workers.queues.push(shared);
    }
    RUNNING.write().unwrap_or_else(std::sync::PoisonError::into_inner).extend(workers.queues.iter().cloned());
    Ok(workers)
}

/// Queues again the jobs of `queue` that were running when the process stopped, and
/// dead-letters those whose interrupted attempt was their last. Runs inside a transaction. On
/// PostgreSQL, where other processes run jobs of the same queue, only the jobs whose process
/// died are taken (`queues/postgres.rs`).
async fn recover(queue: &Queue) {
    let stopped = if db::on_postgres() {
        if postgres::mark_orphans(queue.name).await == 0 {
            return;
        }
        "orphaned"
    } else {
        "running"
    };
    let state = SqlValue::Text(stopped.to_owned());
    let name = SqlValue::Text(queue.name.to_owned());
    let max = SqlValue::Integer(i64::from(queue.max_attempts));
    let now = SqlValue::Integer(now_ms());
    db::exec(
        "INSERT INTO nagi_dead_letters (id, queue, payload, attempts, last_error, created_at, dead_at) \
         SELECT id, queue, payload, attempts, 'the process stopped during its last attempt', created_at, ?3 \
         FROM nagi_jobs WHERE queue = ?1 AND state = ?4 AND attempts >= ?2",
        vec![name.clone(), max.clone(), now.clone(), state.clone()],
    )
    .await;
    db::exec(
        "DELETE FROM nagi_jobs WHERE queue = ?1 AND state = ?3 AND attempts >= ?2",
        vec![name.clone(), max, state.clone()],
    )
    .await;
    let requeued = db::exec(
        "UPDATE nagi_jobs SET state = 'queued', run_at = ?2, \
         last_error = 'the process stopped during this attempt' WHERE queue = ?1 AND state = ?3",
        vec![name, now, state],
    )
    .await;
    if requeued > 0 {
        tracing::warn!(target: "nagi::queue", queue = queue.name, requeued, "{requeued} interrupted jobs queued again");
    }
}

impl Workers {
    /// The most attempts of `queue` that ran at once since the start; `None` for an unknown
    /// queue.
    pub fn peak(&self, queue: &str) -> Option<usize> {
        self.queues.iter().find(|s| s.queue.name == queue).map(|s| s.peak.load(Ordering::Relaxed))
    }

    /// Stops every worker: no more claims, running attempts get up to `grace` to finish, and
    /// those that do not are cancelled (rolled back; they run again at the next start).
    pub async fn stop(self, grace: Duration) {
        for task in &self.background {
            task.abort();
        }
        for shared in &self.queues {
            shared.stopping.store(true, Ordering::SeqCst);
            shared.stop.notify_waiters();
        }
        let deadline = tokio::time::Instant::now() + grace;
        for mut task in self.tasks {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                task.abort();
                let _ = task.await;
            }
        }
        let mut running = RUNNING.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        running.retain(|s| !self.queues.iter().any(|q| Arc::ptr_eq(q, s)));
        for shared in &self.queues {
            let peak = shared.peak.load(Ordering::Relaxed);
            tracing::info!(target: "nagi::queue", queue = shared.queue.name, peak, "queue {} stopped; peak attempts at once: {peak}", shared.queue.name);
        }
    }
}

/// One worker: claims a job, runs its attempt, records the outcome, until the service stops.
async fn worker(shared: Arc<Shared>) {
    while !shared.stopping.load(Ordering::SeqCst) {
        let name = shared.queue.name;
        let claimed = match shared.db.postgres() {
            Some(engine) => postgres::claim(engine, name).await.map(|job| job.map(|(job, lease)| (job, Some(lease)))),
            None => in_transaction(&shared.db, async move { Ok(claim(name).await.map(|job| (job, None))) }).await,
        };
        match claimed {
            Ok(Some((job, lease))) => {
                let running = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                shared.peak.fetch_max(running, Ordering::SeqCst);
                let id = job.id;
                let attempt = job.attempt;
                let outcome = run_attempt(&shared, job).await;
                shared.in_flight.fetch_sub(1, Ordering::SeqCst);
                match outcome {
                    Err(error) => record_failure(&shared, id, attempt, error).await,
                    Ok(()) => {
                        if let Some(metrics) = &shared.metrics {
                            metrics.completed(now_ms() as f64 / 1000.0);
                        }
                    }
                }
                if let Some(lease) = lease {
                    postgres::release(lease, id).await;
                }
            }
            Ok(None) => idle(&shared).await,
            Err(error) => {
                tracing::warn!(target: "nagi::queue", queue = name, "cannot claim a job: {error}");
                tokio::time::sleep(Duration::from_millis(RETRY_MS)).await;
            }
        }
    }
}

/// Claims the next due job of `queue`: marks it running and counts its attempt.
async fn claim(queue: &'static str) -> Option<Claimed> {
    db::query_one(
        "UPDATE nagi_jobs SET state = 'running', attempts = attempts + 1 WHERE id = (SELECT id FROM nagi_jobs \
         WHERE queue = ?1 AND state = 'queued' AND run_at <= ?2 ORDER BY run_at, id LIMIT 1) \
         RETURNING id, payload, attempts",
        vec![SqlValue::Text(queue.to_owned()), SqlValue::Integer(now_ms())],
    )
    .await
}

/// Waits until a push, the next queued job's time, [`IDLE_MS`] or the stop, whichever is first.
async fn idle(shared: &Shared) {
    let name = shared.queue.name;
    let next: Result<Option<Id>, String> = in_transaction(&shared.db, async move {
        Ok(db::query_one(
            "SELECT run_at AS id FROM nagi_jobs WHERE queue = ?1 AND state = 'queued' ORDER BY run_at LIMIT 1",
            vec![SqlValue::Text(name.to_owned())],
        )
        .await)
    })
    .await;
    let wait = match next {
        Ok(Some(Id(at))) => u64::try_from(at - now_ms()).unwrap_or(0).min(IDLE_MS),
        _ => IDLE_MS,
    };
    if wait == 0 {
        return;
    }
    tokio::select! {
        () = shared.pushed.notified() => {}
        () = shared.stop.notified() => {}
        () = tokio::time::sleep(Duration::from_millis(wait)) => {}
    }
}

/// Runs one attempt of `job` as a request of its own; marks the job done in the attempt's
/// transaction when the handler answers 2xx. Errors: why the attempt failed.
async fn run_attempt(shared: &Shared, job: Claimed) -> Result<(), String> {
    let handler = shared.queue.handler.clone();
    let request = Request::for_job(shared.queue.name, job.payload.into_bytes(), job.attempt);
    let id = job.id;
    let (queue, attempt) = (shared.queue.name, job.attempt);
    let mut span = Span::root(Kind::Consumer, || Detail::Job { queue, job: id, attempt });
    let result = traced_transaction(&shared.db, span.as_ref().map(Span::context), async move {
        let reply = crate::defers::Cancellable::new(handler.call(request)).await;
        if !(200..300).contains(&reply.status()) {
            return Err(format!("{} {}", reply.status(), String::from_utf8_lossy(reply.body())));
        }
        db::exec(
            "UPDATE nagi_jobs SET state = 'done', finished_at = ?2, last_error = NULL WHERE id = ?1",
            vec![SqlValue::Integer(id), SqlValue::Integer(now_ms())],
        )
        .await;
        Ok(())
    })
    .await;
    if let (Some(span), Err(why)) = (&mut span, &result) {
        span.fail(|| why.clone());
    }
    result
}

/// Records failed attempt `attempt` of job `id` (rolled back already): queues the job again
/// after its backoff, or moves it to the dead letters after its last attempt. The database
/// failing here is retried until the service stops; a job left running then is recovered at
/// the next start.
async fn record_failure(shared: &Shared, id: i64, attempt: i64, error: String) {
    let queue = &shared.queue;
    let last = attempt >= i64::from(queue.max_attempts);
    // "job id" is the queue's own number for the job (what `push` gave and `dead_letters()`
    // lists), never a field of the payload, which may have an `id` of its own.
    let max = queue.max_attempts;
    tracing::warn!(
        target: "nagi::queue",
        queue = queue.name,
        job_id = id,
        attempt,
        "queue {}: job id {id} failed attempt {attempt} of {max}: {error}",
        queue.name
    );
    loop {
        match write_failure(shared, id, attempt, error.clone()).await {
            Ok(()) => {
                if let Some(metrics) = &shared.metrics {
                    metrics.failed(last);
                }
                if last {
                    tracing::warn!(
                        target: "nagi::queue",
                        queue = queue.name,
                        job_id = id,
                        "queue {}: job id {id} moved to the dead letters after {attempt} attempts",
                        queue.name
                    );
                }
                return;
            }
            Err(problem) => {
                tracing::error!(
                    target: "nagi::queue",
                    queue = queue.name,
                    job_id = id,
                    "queue {}: cannot record the failure of job id {id}: {problem}",
                    queue.name
                );
                if shared.stopping.load(Ordering::SeqCst) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(RETRY_MS)).await;
            }
        }
    }
}

/// The one transaction of [`record_failure`].
async fn write_failure(shared: &Shared, id: i64, attempt: i64, error: String) -> Result<(), String> {
    let queue = &shared.queue;
    let last = attempt >= i64::from(queue.max_attempts);
    let retry_in = backoff_ms(queue.backoff_min_ms, queue.backoff_max_ms, u32::try_from(attempt).unwrap_or(u32::MAX));
    in_transaction(&shared.db, async move {
        let now = now_ms();
        if last {
            db::exec(
                "INSERT INTO nagi_dead_letters (id, queue, payload, attempts, last_error, created_at, dead_at) \
                 SELECT id, queue, payload, attempts, ?2, created_at, ?3 FROM nagi_jobs WHERE id = ?1",
                vec![SqlValue::Integer(id), SqlValue::Text(error), SqlValue::Integer(now)],
            )
            .await;
            db::exec("DELETE FROM nagi_jobs WHERE id = ?1", vec![SqlValue::Integer(id)]).await;
        } else {
            let run_at = now.saturating_add(i64::try_from(retry_in).unwrap_or(i64::MAX));
            db::exec(
                "UPDATE nagi_jobs SET state = 'queued', run_at = ?2, last_error = ?3 WHERE id = ?1",
                vec![SqlValue::Integer(id), SqlValue::Integer(run_at), SqlValue::Text(error)],
            )
            .await;
        }
        Ok(())
    })
    .await
}

/// Brings the metrics of every running queue up to date with its table: jobs queued and
/// running, and the oldest queued job's age (a scrape's first step, `metrics::BeforeScrape`).
pub(crate) async fn observe_metrics() {
    let running: Vec<Arc<Shared>> = RUNNING.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    for shared in running {
        let Some(metrics) = &shared.metrics else { continue };
        let name = shared.queue.name;
        let counts: Result<Vec<StateCount>, String> = in_transaction(&shared.db, async move {
            Ok(db::query(
                "SELECT state, count(*) AS n, min(created_at) AS oldest FROM nagi_jobs \
                 WHERE queue = ?1 AND state IN ('queued', 'running') GROUP BY state",
                vec![SqlValue::Text(name.to_owned())],
            )
            .await)
        })
        .await;
        let Ok(counts) = counts else { continue };
        let count = |state: &str| counts.iter().find(|c| c.state == state);
        let oldest = count("queued").and_then(|c| c.oldest).map_or(0.0, |at| (now_ms() - at).max(0) as f64 / 1000.0);
        metrics.observed(count("queued").map_or(0, |c| c.n), count("running").map_or(0, |c| c.n), oldest);
    }
}

/// How many jobs of a queue are in one state, and the oldest one's creation (Unix ms).
struct StateCount {
    state: String,
    n: i64,
    oldest: Option<i64>,
}

impl FromRow for StateCount {
    const COLUMNS: &'static [&'static str] = &["state", "n", "oldest"];

    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
        Ok(StateCount {
            state: row.string(columns[0], "state")?,
            n: row.i64(columns[1], "n")?,
            oldest: row.opt_i64(columns[2], "oldest")?,
        })
    }
}

/// Runs `body` as a request of its own: its statements are one transaction of the database
/// thread, kept apart from every other request's, committed when it gives `Ok` and rolled back
/// when it gives `Err`, unwinds (a trap, a failed statement) or is dropped. Errors: `body`'s,
/// the unwinding's text, or a failed commit.
async fn in_transaction<T>(
    db: &DbHandle,
    body: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    traced_transaction(db, None, body).await
}

/// [`in_transaction`] as the job attempt whose span is `trace` (when tracing is on): the
/// statements of `body` are that span's children.
async fn traced_transaction<T>(
    db: &DbHandle,
    trace: Option<crate::traces::SpanContext>,
    body: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    let id = crate::http::next_request_id();
    let session = crate::db::Session::new(db.clone());
    let context = RequestContext { id, state: Default::default(), trace };
    let mut guard = crate::http::EndGuard::new(id, db.clone());
    let running = crate::db::scope(session.clone(), AssertUnwindSafe(body).catch_unwind());
    let outcome = context::scope(context, running).await;
    let outcome = match outcome {
        Ok(result) => result,
        Err(payload) => Err(crate::trap::payload_text(payload.as_ref())),
    };
    if session.began() {
        let committed = db.request_ended(&session, id, outcome.is_ok()).await;
        guard.disarm();
        committed.map_err(|error| format!("the transaction could not be committed: {error}"))?;
    } else {
        guard.disarm();
    }
    outcome
}

#[cfg(test)]
mod tests;
