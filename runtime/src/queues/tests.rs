//! Tests of the queue rules over a real SQLite file: attempts, backoff, dead letters, recovery
//! after a stopped process, and pushes that belong to a request's transaction.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use super::*;
use crate::db::{Database, DbOptions};
use crate::http::{HandlerFuture, Reply};

/// The handler's own table: one row per successful attempt, committed with the job's completion.
const DONE: &str = "CREATE TABLE IF NOT EXISTS done (n INTEGER PRIMARY KEY, attempt INTEGER NOT NULL)";

#[derive(serde::Deserialize)]
struct TestJob {
    n: i64,
}

/// Every attempt the handler started, as (queue, n, attempt), and the jobs running now, as
/// (queue, n): the tests run at once, each with a queue of its own.
static RUNS: Mutex<Vec<(String, i64, i64)>> = Mutex::new(Vec::new());
static RUNNING: Mutex<Vec<(String, i64)>> = Mutex::new(Vec::new());

/// The attempts `queue`'s jobs started, as (n, attempt).
fn runs_of(queue: &str) -> Vec<(i64, i64)> {
    RUNS.lock().unwrap().iter().filter(|(q, _, _)| q == queue).map(|(_, n, a)| (*n, *a)).collect()
}

/// Fails by id, deterministically: `n % 10 == 0` always (a 500 answer), `n % 10 == 1` on its
/// first attempt (a 503), `n % 10 == 3` traps on its first attempt; every other job succeeds,
/// writing its row of `done` first. Each attempt sleeps a little, so attempts overlap.
fn handler(request: Request) -> HandlerFuture {
    Box::pin(async move {
        let job: TestJob = request.json();
        let attempt: i64 = request.query("attempt");
        let queue = request.uri_path().trim_start_matches("/queues/").to_owned();
        let me = (queue.clone(), job.n);
        {
            let mut running = RUNNING.lock().unwrap();
            assert!(!running.contains(&me), "job {} runs twice at once", job.n);
            running.push(me.clone());
            RUNS.lock().unwrap().push((queue, job.n, attempt));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
        db::exec("INSERT INTO done (n, attempt) VALUES (?1, ?2)", vec![SqlValue::Integer(job.n), attempt.into()]).await;
        RUNNING.lock().unwrap().retain(|r| *r != me);
        match job.n % 10 {
            0 => Reply::json_bytes(500, br#"{"error":"always fails"}"#.to_vec()),
            1 if attempt == 1 => Reply::json_bytes(503, br#"{"error":"busy once"}"#.to_vec()),
            3 if attempt == 1 => crate::trap("the first attempt traps"),
            _ => Reply::json_bytes(200, b"{}".to_vec()),
        }
    })
}

fn queue(name: &'static str, workers: u16) -> Queue {
    Queue {
        name,
        handler: Handler::new(handler),
        workers,
        max_attempts: 3,
        backoff_min_ms: 1,
        backoff_max_ms: 8,
        schedule: None,
    }
}

fn open(dir: &std::path::Path) -> Database {
    let path = dir.join("jobs.db");
    let mut tables: Vec<&str> = TABLES.to_vec();
    tables.push(DONE);
    Database::open(path.to_str().unwrap(), &tables, &DbOptions::default()).expect("opens")
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nagi-queue-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits until no job of the queue is queued or running.
async fn drained(db: &DbHandle) {
    for _ in 0..3000 {
        let left: Option<Id> = in_transaction(db, async {
            Ok(db::query_one("SELECT COUNT(*) AS id FROM nagi_jobs WHERE state != 'done'", vec![]).await)
        })
        .await
        .unwrap();
        if left.is_some_and(|Id(n)| n == 0) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the queue did not drain within a minute");
}

async fn count(db: &DbHandle, sql: &'static str) -> i64 {
    in_transaction(db, async { Ok(db::query_one::<Id>(sql, vec![]).await) }).await.unwrap().map_or(-1, |Id(n)| n)
}

#[test]
fn backoff_doubles_up_to_its_bound_with_half_of_it_random() {
    for _ in 0..100 {
        let first = backoff_ms(10, 1000, 1);
        assert!((5..=10).contains(&first), "{first}");
        let third = backoff_ms(10, 1000, 3);
        assert!((20..=40).contains(&third), "{third}");
        let bounded = backoff_ms(10, 1000, 40);
        assert!((500..=1000).contains(&bounded), "{bounded}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_jobs_on_eight_workers_end_done_or_dead_lettered_with_exact_attempts() {
    let dir = scratch("thousand");
    let database = open(&dir);
    let db = database.handle();
    in_transaction(&db, async {
        for n in 0..1000 {
            push("thousand", format!(r#"{{"n":{n}}}"#), 0).await;
        }
        Ok(())
    })
    .await
    .unwrap();
    let workers = start(&[queue("thousand", 8)], &db).await.unwrap();
    drained(&db).await;
    let peak = workers.peak("thousand").unwrap();
    workers.stop(Duration::from_secs(5)).await;

    let mut runs: HashMap<i64, Vec<i64>> = HashMap::new();
    for (n, attempt) in runs_of("thousand") {
        runs.entry(n).or_default().push(attempt);
    }
    assert_eq!(runs.len(), 1000, "every job ran");
    for (n, attempts) in &runs {
        let expected: &[i64] = match n % 10 {
            0 => &[1, 2, 3],
            1 | 3 => &[1, 2],
            _ => &[1],
        };
        let mut sorted = attempts.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, expected, "the attempts of job {n}");
    }
    assert_eq!(count(&db, "SELECT COUNT(*) AS id FROM nagi_dead_letters WHERE attempts = 3").await, 100);
    assert_eq!(count(&db, "SELECT COUNT(*) AS id FROM nagi_dead_letters").await, 100);
    assert_eq!(count(&db, "SELECT COUNT(*) AS id FROM nagi_jobs WHERE state = 'done'").await, 900);
    // A failed attempt's writes were rolled back: `done` has exactly the successful ones.
    assert_eq!(count(&db, "SELECT COUNT(*) AS id FROM done").await, 900);
    assert_eq!(count(&db, "SELECT COUNT(*) AS id FROM done WHERE attempt = 2").await, 200);
    assert!((1..=8).contains(&peak), "peak attempts at once: {peak}");
    let dead = in_transaction(&db, async { Ok(dead_letters("thousand").await) }).await.unwrap();
    assert!(dead.iter().all(|d| d.last_error.starts_with("500 ")), "{:?}", dead.first());
    database.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_queues_interrupted_jobs_again_and_dead_letters_an_interrupted_last_attempt() {
    let dir = scratch("recover");
    let database = open(&dir);
    let db = database.handle();
    // What a process killed during two attempts leaves: job 7 in its first, job 17 in its last.
    in_transaction(&db, async {
        for (n, attempts) in [(7, 1), (17, 3)] {
            db::exec(
                "INSERT INTO nagi_jobs (queue, payload, state, attempts, run_at, created_at) \
                 VALUES ('recover', ?1, 'running', ?2, 0, 0)",
                vec![SqlValue::Text(format!(r#"{{"n":{n}}}"#)), SqlValue::Integer(attempts)],
            )
            .await;
        }
        Ok(())
    })
    .await
    .unwrap();
    let workers = start(&[queue("recover", 2)], &db).await.unwrap();
    drained(&db).await;
    workers.stop(Duration::from_secs(5)).await;
    assert_eq!(runs_of("recover"), vec![(7, 2)], "only job 7 runs again, as its second attempt");
    let dead = in_transaction(&db, async { Ok(dead_letters("recover").await) }).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].attempts, dead[0].last_error.as_str()), (3, "the process stopped during its last attempt"));
    database.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_pushed_by_a_failed_request_never_exists_and_a_dead_letter_can_be_pushed_again() {
    let dir = scratch("rollback");
    let database = open(&dir);
    let db = database.handle();
    let failed = in_transaction(&db, async {
        push("work", r#"{"n":5}"#.to_owned(), 0).await;
        Err::<(), _>("the request answered 409".to_owned())
    })
    .await;
    assert!(failed.is_err());
    assert_eq!(count(&db, "SELECT COUNT(*) AS id FROM nagi_jobs").await, 0, "the push was rolled back");
    // A dead letter pushed again is a new job with fresh attempts.
    in_transaction(&db, async {
        db::exec(
            "INSERT INTO nagi_dead_letters (id, queue, payload, attempts, last_error, created_at, dead_at) \
             VALUES (41, 'work', '{\"n\":4}', 3, 'gave up', 0, 0)",
            vec![],
        )
        .await;
        Ok(())
    })
    .await
    .unwrap();
    let again = in_transaction(&db, async { Ok(retry_dead("work", 41).await) }).await.unwrap();
    assert!(again.is_some_and(|id| id != 41));
    assert_eq!(in_transaction(&db, async { Ok(retry_dead("work", 41).await) }).await.unwrap(), None);
    assert_eq!(count(&db, "SELECT COUNT(*) AS id FROM nagi_jobs WHERE attempts = 0").await, 1);
    assert_eq!(count(&db, "SELECT COUNT(*) AS id FROM nagi_dead_letters").await, 0);
    database.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
