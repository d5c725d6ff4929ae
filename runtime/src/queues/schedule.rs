//! Scheduled jobs: a queue whose jobs the runtime pushes itself, one per tick of its schedule
//! (`crate::schedule`), each job the tick's time as `{"at": "<RFC 3339>"}`. A tick's attempt is
//! any job's attempt: a transaction, retried per the queue's rules, dead-lettered at the end.
//!
//! **Exactly once per tick.** `nagi_schedules` holds, per scheduled job, the last tick pushed.
//! A tick is pushed by one transaction that moves that row forward only if it is behind
//! (`UPDATE … WHERE last_tick < ?`) and inserts the job: so a tick is pushed once, whatever
//! restarts (or, sharing one database, other processes) happen around it, and the job's attempt
//! commits its writes and its completion together, so a process killed during the attempt
//! leaves the job to run again at the next start with nothing of the first run kept.
//!
//! **Missed ticks run once.** At start, if the latest tick at or before now is after the last
//! one pushed (the service was down over one or more ticks), that latest tick is pushed once,
//! not one job per missed tick. A schedule seen for the first time starts from now: nothing
//! was missed.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{Id, Queue, Shared, in_transaction, push};
use crate::db::{self, DbHandle, SqlValue};
use crate::schedule::Schedule;

/// The table of the last tick pushed per scheduled job, made with the queues' own.
pub(super) const TABLE: &str =
    "CREATE TABLE IF NOT EXISTS nagi_schedules (name TEXT PRIMARY KEY, last_tick INTEGER NOT NULL)";

/// Microseconds since 1970 by the system's clock (never a test's fixed clock: ticks are real).
fn now_us() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// The job of the tick at `tick`.
fn payload(tick: i64) -> String {
    format!(r#"{{"at":"{}"}}"#, crate::time::format_time(tick))
}

/// At start, inside the start's transaction: records a schedule seen for the first time, or
/// pushes the latest tick missed while the service was down (once). Gives the last tick pushed.
pub(super) async fn catch_up(queue: &Queue, schedule: &Schedule) -> i64 {
    let now = now_us();
    let due = schedule.latest_at_or_before(now).unwrap_or(now);
    let name = SqlValue::Text(queue.name.to_owned());
    let last: Option<Id> =
        db::query_one("SELECT last_tick AS id FROM nagi_schedules WHERE name = ?1", vec![name.clone()]).await;
    // Processes sharing one database may start together: the first row and each missed tick
    // are written by whichever comes first, and the others find them written.
    match last {
        None => {
            db::exec(
                "INSERT INTO nagi_schedules (name, last_tick) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
                vec![name, SqlValue::Integer(due)],
            )
            .await;
            due
        }
        Some(Id(last)) if last < due => {
            let moved = db::exec(
                "UPDATE nagi_schedules SET last_tick = ?2 WHERE name = ?1 AND last_tick < ?2",
                vec![name, SqlValue::Integer(due)],
            )
            .await;
            if moved == 1 {
                push(queue.name, payload(due), 0).await;
                let at = crate::time::format_time(due);
                tracing::info!(target: "nagi::schedule", queue = queue.name, "{}: the tick of {at}, missed while stopped, runs now", queue.name);
            }
            due
        }
        Some(Id(last)) => last,
    }
}

/// Pushes each tick of `schedule` after `last` when it falls, until the service stops.
pub(super) async fn ticker(shared: Arc<Shared>, schedule: Schedule, mut last: i64) {
    let name = shared.queue.name;
    loop {
        // Registered before the flag is read, so that a stop between the two still wakes it.
        let stopped = shared.stop.notified();
        tokio::pin!(stopped);
        stopped.as_mut().enable();
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Some(next) = schedule.next_after(last.max(now_us().saturating_sub(1))) else {
            tracing::warn!(target: "nagi::schedule", queue = name, "{name}: the schedule has no tick after now");
            return;
        };
        let wait = Duration::from_micros(u64::try_from(next - now_us()).unwrap_or(0));
        tokio::select! {
            () = stopped => return,
            () = tokio::time::sleep(wait) => {}
        }
        // The clock may have jumped backwards while sleeping: wait for the tick to be due.
        if now_us() < next {
            continue;
        }
        match tick(&shared.db, name, next).await {
            Ok(()) => last = next,
            Err(error) => {
                tracing::warn!(target: "nagi::schedule", queue = name, "{name}: cannot push the tick: {error}");
                tokio::time::sleep(Duration::from_millis(super::RETRY_MS)).await;
            }
        }
    }
}

/// Pushes the job of the tick at `tick` unless it was pushed already, in one transaction.
async fn tick(db: &DbHandle, name: &'static str, tick: i64) -> Result<(), String> {
    in_transaction(db, async move {
        let moved = db::exec(
            "UPDATE nagi_schedules SET last_tick = ?2 WHERE name = ?1 AND last_tick < ?2",
            vec![SqlValue::Text(name.to_owned()), SqlValue::Integer(tick)],
        )
        .await;
        if moved == 1 {
            push(name, payload(tick), 0).await;
        }
        Ok(())
    })
    .await
}
