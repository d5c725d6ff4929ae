//! Integration tests of durable job queues, on both emitters (LLVM at `-O2` and `-O0`) from one
//! harness: `tests/fixtures/queue_service.nagi` built by `nagic build`, run as a real process on
//! a real SQLite file or a database of a real PostgreSQL server, which the tests read directly. A thousand jobs on eight workers, with failures
//! injected by id, end with exact counts of completed, retried and dead-lettered jobs; a
//! `kill -9` in the middle loses none of them; SIGTERM lets running attempts finish and leaves
//! the rest queued; a job pushed by a request that then fails never exists; dead letters are
//! listed and pushed again from the language; and `nagic test` of the service pushes jobs in its
//! tests without running them.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{Backend, Engine, Server, TestDb, build, temp_dir};

const SERVICE: &str = "tests/fixtures/queue_service.nagi";

/// The queue's `max_attempts` in the fixture.
const MAX_ATTEMPTS: i64 = 3;
/// The queue's `workers` in the fixture.
const WORKERS: usize = 8;

/// Starts the service on `db`, its log (standard output) appended to `log`.
fn start(exe: &Path, db: &TestDb, log: &Path) -> Server {
    Server::start(exe, db.path(), Some(log), &[])
}

/// Every job's payload id, attempts and state (`dead` for a dead letter), by payload id.
fn outcomes(db: &TestDb) -> Vec<(i64, i64, String)> {
    let id = db.json_integer("payload", "id");
    let sql = format!(
        "SELECT {id} AS id, attempts, state FROM nagi_jobs \
         UNION ALL SELECT {id} AS id, attempts, 'dead' FROM nagi_dead_letters ORDER BY 1"
    );
    let int = |cell: &Option<String>| cell.as_deref().and_then(|c| c.parse().ok()).expect("an integer");
    db.rows(&sql).iter().map(|row| (int(&row[0]), int(&row[1]), row[2].clone().unwrap_or_default())).collect()
}

/// Waits until `total` jobs exist and every one is done or dead-lettered.
fn wait_settled(db: &TestDb, total: i64) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let settled = db.integer("SELECT count(*) FROM nagi_jobs WHERE state = 'done'")
            + db.integer("SELECT count(*) FROM nagi_dead_letters");
        if settled == total {
            return;
        }
        assert!(Instant::now() < deadline, "{settled} of {total} jobs settled after 120 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Pushes jobs `from..from + count` in one request.
fn push(server: &Server, from: i64, count: i64, sleep_ms: i64) {
    let (status, body) = server.send_json("POST", &format!("/jobs?from={from}&count={count}&sleep_ms={sleep_ms}"), "");
    assert_eq!((status, body.as_str()), (201, count.to_string().as_str()));
}

/// The fixture's failure rule: how many attempts job `id` takes to complete, or `None` when
/// every attempt fails.
fn attempts_to_complete(id: i64) -> Option<i64> {
    match id % 10 {
        0 => None,
        1 | 2 => Some(2),
        _ => Some(1),
    }
}

/// The peak of attempts at once that the service logged when it stopped.
fn logged_peak(log: &Path) -> usize {
    let text = std::fs::read_to_string(log).expect("the log reads");
    let line = text
        .lines()
        .rev()
        .find(|l| l.contains("peak attempts at once:"))
        .unwrap_or_else(|| panic!("no peak in:\n{text}"));
    let peak = line.split("peak attempts at once: ").nth(1).and_then(|rest| rest.split_whitespace().next());
    peak.and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("no peak in {line}"))
}

fn files(tag: &str, engine: Engine) -> (TestDb, PathBuf) {
    (TestDb::new(engine, tag), temp_dir(tag).join("service.log"))
}

fn a_thousand_jobs_end_with_exact_counts(backend: Backend, engine: Engine) {
    let exe = build(SERVICE, backend);
    let (db, log) = files("queue-thousand", engine);
    let server = start(&exe, &db, &log);
    push(&server, 1, 1000, 0);
    wait_settled(&db, 1000);
    let outcomes = outcomes(&db);
    assert_eq!(outcomes.len(), 1000);
    for (id, attempts, state) in &outcomes {
        match attempts_to_complete(*id) {
            Some(n) => assert_eq!((*attempts, state.as_str()), (n, "done"), "job {id}"),
            None => assert_eq!((*attempts, state.as_str()), (MAX_ATTEMPTS, "dead"), "job {id}"),
        }
    }
    let done = outcomes.iter().filter(|o| o.2 == "done").count();
    let retried = outcomes.iter().filter(|o| o.2 == "done" && o.1 > 1).count();
    let dead = outcomes.iter().filter(|o| o.2 == "dead").count();
    assert_eq!((done, retried, dead), (900, 200, 100));
    // One committed run per completed job, from its successful attempt: the failed attempts'
    // writes were rolled back with them.
    assert_eq!(db.integer("SELECT count(*) FROM runs"), 900);
    assert_eq!(
        db.integer(&format!(
            "SELECT count(*) FROM runs JOIN nagi_jobs ON {} = runs.id WHERE runs.attempt = nagi_jobs.attempts",
            db.json_integer("nagi_jobs.payload", "id")
        )),
        900
    );
    let errors =
        db.integer("SELECT count(*) FROM nagi_dead_letters WHERE last_error LIKE '503 %this job always fails%'");
    assert_eq!(errors, 100);
    dead_letters_are_listed_and_pushed_again(&server, &db);
    assert!(server.stop().success());
    let peak = logged_peak(&log);
    assert!((1..=WORKERS).contains(&peak), "peak attempts at once: {peak}");
    failures_are_logged_with_the_queue_and_the_job_id(&log);
}

/// Each failed attempt is logged once, naming the queue and the queue's own job id (not the
/// payload's `id`, which is another number): `queue jobs: job id 57 failed attempt 1 of 3: …`.
fn failures_are_logged_with_the_queue_and_the_job_id(log: &Path) {
    let text = std::fs::read_to_string(log).expect("the log reads");
    let failed: Vec<&str> = text.lines().filter(|l| l.contains("failed attempt")).collect();
    // 100 jobs fail 3 attempts and 200 fail one; job 10, pushed again, fails up to 3 more.
    assert!((500..=503).contains(&failed.len()), "{} failed attempts logged", failed.len());
    for line in &failed {
        let rest = line.split("WARN nagi::queue: queue jobs: job id ").nth(1).unwrap_or_else(|| panic!("{line}"));
        let (id, rest) = rest.split_once(' ').unwrap_or_else(|| panic!("{line}"));
        assert!(id.parse::<u64>().is_ok(), "{line}");
        assert!(rest.starts_with("failed attempt ") && rest.contains(" of 3: 503 "), "{line}");
    }
    let dead = text.lines().filter(|l| l.contains("moved to the dead letters after 3 attempts")).count();
    assert!((100..=101).contains(&dead), "{dead} dead letters logged");
}

/// The language lists the 100 dead letters (jobs 10, 20, … 1000) and pushes job 10 again: it
/// runs its 3 attempts anew and is dead-lettered again under its new id.
fn dead_letters_are_listed_and_pushed_again(server: &Server, db: &TestDb) {
    let (status, body) = server.get("/dead");
    assert_eq!(status, 200, "{body}");
    let dead: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    let dead = dead.as_array().expect("an array");
    let jobs: BTreeSet<i64> = dead
        .iter()
        .map(|d| {
            assert_eq!(d["attempts"], 3, "{d}");
            assert!(d["last_error"].as_str().is_some_and(|e| e.contains("this job always fails")), "{d}");
            let job: serde_json::Value =
                serde_json::from_str(d["job"].as_str().expect("the job's JSON")).expect("JSON");
            job["id"].as_i64().expect("the job's id")
        })
        .collect();
    assert_eq!(jobs, (1..=100).map(|i| i * 10).collect());
    let first = dead[0]["id"].as_i64().expect("an id");
    let (status, body) = server.send_json("POST", &format!("/dead/{first}/retry"), "");
    assert_eq!(status, 201, "{body}");
    let again: i64 = body.parse().expect("the new job's id");
    assert!(again > 1000, "{again}");
    assert_eq!(server.send_json("POST", &format!("/dead/{first}/retry"), ""), (201, "0".to_string()));
    wait_settled(db, 1000);
    assert_eq!(db.integer(&format!("SELECT attempts FROM nagi_dead_letters WHERE id = {again}")), MAX_ATTEMPTS);
    assert_eq!(db.integer(&format!("SELECT count(*) FROM nagi_dead_letters WHERE id = {first}")), 0);
}

fn kill_9_in_the_middle_loses_no_job(backend: Backend, engine: Engine) {
    let exe = build(SERVICE, backend);
    let (db, log) = files("queue-kill", engine);
    let mut server = start(&exe, &db, &log);
    push(&server, 1, 1000, 3);
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.integer("SELECT count(*) FROM runs") < 200 {
        assert!(Instant::now() < deadline, "the jobs did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    server.child.kill().expect("kill -9");
    server.child.wait().expect("the service ends");
    let unfinished = db.integer("SELECT count(*) FROM nagi_jobs WHERE state != 'done'");
    assert!(unfinished > 0, "every job had finished before the kill");
    let server = start(&exe, &db, &log);
    wait_settled(&db, 1000);
    let outcomes = outcomes(&db);
    let ids: BTreeSet<i64> = outcomes.iter().map(|o| o.0).collect();
    assert_eq!((outcomes.len(), ids), (1000, (1..=1000).collect()));
    for (id, attempts, state) in &outcomes {
        assert!((1..=MAX_ATTEMPTS).contains(attempts), "job {id} ran {attempts} times");
        // An interrupted attempt counts, so a job completes at its expected attempt or later.
        match attempts_to_complete(*id) {
            Some(n) => assert!(state == "done" && *attempts >= n, "job {id}: {state} after {attempts}"),
            None => assert_eq!((*attempts, state.as_str()), (MAX_ATTEMPTS, "dead"), "job {id}"),
        }
    }
    assert_eq!(db.integer("SELECT count(*) FROM runs"), 900);
    assert!(server.stop().success());
}

fn sigterm_finishes_running_attempts_and_leaves_the_rest_queued(backend: Backend, engine: Engine) {
    let exe = build(SERVICE, backend);
    let (db, log) = files("queue-term", engine);
    let server = start(&exe, &db, &log);
    // Ids ending in 3 to 9 succeed at their first attempt.
    push(&server, 3, 5, 300);
    push(&server, 13, 5, 300);
    push(&server, 23, 5, 300);
    push(&server, 33, 5, 300);
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.stop().success());
    let running = db.integer("SELECT count(*) FROM nagi_jobs WHERE state = 'running'");
    let done = db.integer("SELECT count(*) FROM nagi_jobs WHERE state = 'done'");
    let queued = db.integer("SELECT count(*) FROM nagi_jobs WHERE state = 'queued'");
    assert_eq!(running, 0, "an attempt was cut short");
    assert!(done >= 1 && queued >= 1 && done + queued == 20, "{done} done, {queued} queued");
    let server = start(&exe, &db, &log);
    wait_settled(&db, 20);
    assert_eq!(db.integer("SELECT count(*) FROM runs"), 20);
    assert!(server.stop().success());
}

fn a_job_pushed_by_a_failed_request_never_runs(backend: Backend, engine: Engine) {
    let exe = build(SERVICE, backend);
    let (db, log) = files("queue-rollback", engine);
    let server = start(&exe, &db, &log);
    let (status, body) = server.send_json("POST", "/orders", r#"{"id": 5003}"#);
    assert_eq!(status, 201, "{body}");
    let (status, body) = server.send_json("POST", "/orders", r#"{"id": 5003}"#);
    assert_eq!(status, 409, "{body}");
    wait_settled(&db, 1);
    // Jobs pushed later run after the failed request's would have: the queue is drained.
    push(&server, 7, 1, 0);
    wait_settled(&db, 2);
    let pushed = format!("SELECT count(*) FROM nagi_jobs WHERE {} = 5003", db.json_integer("payload", "id"));
    assert_eq!(db.integer(&pushed), 1);
    assert_eq!(db.integer("SELECT count(*) FROM runs WHERE id = 5003"), 1);
    assert!(server.stop().success());
}

fn a_test_build_pushes_jobs_without_running_them(backend: Backend) {
    let mut args = vec!["test", SERVICE];
    args.extend(backend.flags());
    let out = support::nagic(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("test result: ok. 1 passed; 0 failed"), "{stdout}");
}

// On both engines and every backend: `sqlite::rust::NAME`, `postgres::llvm::NAME`, … and
// `sqlite::llvm_o0::NAME`.
crate::on_every_backend_engine_and_llvm_level!(
    a_thousand_jobs_end_with_exact_counts,
    kill_9_in_the_middle_loses_no_job,
    sigterm_finishes_running_attempts_and_leaves_the_rest_queued,
    a_job_pushed_by_a_failed_request_never_runs,
);

// `nagic test` runs a test build on an in-memory SQLite database: `rust::NAME`, `llvm::NAME`,
// `llvm_o0::NAME`.
crate::on_every_backend_and_llvm_level!(a_test_build_pushes_jobs_without_running_them);
