//! Integration tests of scheduled jobs (issue 32, docs/language.md §9.11), each on both emitters
//! from one body, over real processes and a real SQLite file: a job every second runs once per
//! tick over five seconds; a `kill -9` in the middle of an attempt, a downtime over several
//! ticks and a restart run the interrupted tick once more (its first run committed nothing) and
//! the missed ticks once in all, and no tick twice.

mod support;

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use support::{Backend, Engine, Server, TestDb, build, temp_dir};

const SCHEDULED: &str = "tests/fixtures/scheduled.nagi";

/// Microseconds since 1970 now.
fn now_us() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as i64
}

/// The ticks the file's `runs` holds, in order, as microseconds since 1970.
fn ticks(db: &Path) -> Vec<i64> {
    let conn = rusqlite::Connection::open(db).expect("the database file opens");
    let mut stmt = conn.prepare("SELECT tick FROM runs ORDER BY tick").unwrap();
    let texts: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    texts.iter().map(|t| micros(t)).collect()
}

/// `2026-12-05T06:34:47.000000Z` as microseconds since 1970.
fn micros(text: &str) -> i64 {
    let (date, time) = text.trim_end_matches('Z').split_once('T').expect("an RFC 3339 time");
    let d: Vec<i64> = date.split('-').map(|p| p.parse().unwrap()).collect();
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let t: Vec<i64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
    // Days since 1970 by the civil-from-days inverse (Howard Hinnant's algorithm).
    let (y, m) = if d[1] <= 2 { (d[0] - 1, d[1] + 9) } else { (d[0], d[1] - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let frac: i64 = format!("{frac:0<6}")[..6].parse().unwrap();
    ((days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2]) * 1_000_000) + frac
}

const SECOND: i64 = 1_000_000;

/// Sleeps until `offset` past the next whole second of the wall clock.
fn sleep_until_past_a_second(offset: Duration) {
    let into = now_us().rem_euclid(SECOND);
    std::thread::sleep(Duration::from_micros((SECOND - into) as u64) + offset);
}

/// Over about five seconds a job every second runs once per whole second, each tick once. The
/// service starts 300 ms past a second and stops 500 ms past one, so that no tick falls while it
/// starts or stops.
fn a_job_every_second_runs_once_per_tick(backend: Backend) {
    let exe = build(SCHEDULED, backend);
    let db = temp_dir("every").join("scheduled.db");
    sleep_until_past_a_second(Duration::from_millis(300));
    let started = now_us();
    let server = Server::start(&exe, &db, None, &[]);
    std::thread::sleep(Duration::from_millis(4500));
    sleep_until_past_a_second(Duration::from_millis(500));
    let stopping = now_us();
    assert!(server.stop().success());
    let ticks = ticks(&db);
    // The whole seconds after the start, up to the stop (an attempt running then finishes).
    let expected: Vec<i64> = ((started / SECOND + 1)..=(stopping / SECOND)).map(|s| s * SECOND).collect();
    eprintln!("{backend:?}: {} ticks in {:.1} s", ticks.len(), (stopping - started) as f64 / 1e6);
    assert_eq!(ticks, expected, "one run per whole second between the start and the stop");
    assert!((5..=6).contains(&ticks.len()), "{ticks:?}");
}

/// A `kill -9` 200 ms into an attempt, about three seconds down, a restart: the interrupted
/// tick runs again (its first run was rolled back), the ticks missed while down run once in
/// all (the latest of them), and no tick runs twice.
fn kill_9_during_a_tick_and_restart_runs_no_tick_twice(backend: Backend) {
    let exe = build(SCHEDULED, backend);
    let dir = temp_dir("kill");
    let db = dir.join("scheduled.db");
    let log = dir.join("service.log");
    let mut server = Server::start(&exe, &db, Some(&log), &[]);
    std::thread::sleep(Duration::from_millis(1500));
    sleep_until_past_a_second(Duration::from_millis(200));
    let interrupted = now_us() / SECOND * SECOND;
    server.child.kill().expect("kill -9");
    server.child.wait().expect("the killed service's status");
    let before_restart = ticks(&db);
    assert!(!before_restart.contains(&interrupted), "the interrupted attempt's write was rolled back");
    std::thread::sleep(Duration::from_millis(2000));
    sleep_until_past_a_second(Duration::from_millis(300));
    let restarted = now_us();
    let server = Server::start(&exe, &db, Some(&log), &[]);
    std::thread::sleep(Duration::from_millis(1500));
    sleep_until_past_a_second(Duration::from_millis(500));
    let stopped = now_us();
    assert!(server.stop().success());

    let ticks = ticks(&db);
    let mut unique = ticks.clone();
    unique.dedup();
    assert_eq!(unique, ticks, "a tick ran twice: {ticks:?}");
    assert!(ticks.contains(&interrupted), "the interrupted tick ran again after the restart: {ticks:?}");
    // While down: the seconds after the interrupted tick up to the restart; only the latest ran.
    let missed: Vec<i64> = ticks.iter().copied().filter(|&t| t > interrupted && t <= restarted).collect();
    assert_eq!(missed, vec![restarted / SECOND * SECOND], "the missed ticks run once, as the latest: {ticks:?}");
    // After the restart, every whole second up to the stop.
    let after: Vec<i64> = ticks.iter().copied().filter(|&t| t > restarted).collect();
    let expected: Vec<i64> = ((restarted / SECOND + 1)..=(stopped / SECOND)).map(|s| s * SECOND).collect();
    assert_eq!(after, expected);
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("missed while stopped, runs now"), "{log}");
    assert!(log.contains("interrupted jobs queued again"), "{log}");
}

/// Two processes on one PostgreSQL database, both scheduling the job: over about five seconds
/// each whole second's tick is pushed once and runs once, whichever process pushes it.
fn two_processes_on_one_database_push_and_run_each_tick_once(backend: Backend) {
    let exe = build(SCHEDULED, backend);
    let db = TestDb::new(Engine::Postgres, "two-schedulers");
    sleep_until_past_a_second(Duration::from_millis(300));
    let started = now_us();
    let first = Server::start(&exe, db.path(), None, &[]);
    let second = Server::start(&exe, db.path(), None, &[]);
    std::thread::sleep(Duration::from_millis(4500));
    sleep_until_past_a_second(Duration::from_millis(500));
    let stopping = now_us();
    assert!(first.stop().success() && second.stop().success());
    let format = |column: &str| format!("to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')");
    let ticks: Vec<i64> = db
        .rows(&format!("SELECT {} FROM runs ORDER BY tick", format("tick")))
        .iter()
        .map(|row| micros(row[0].as_deref().expect("a tick")))
        .collect();
    let expected: Vec<i64> = ((started / SECOND + 1)..=(stopping / SECOND)).map(|s| s * SECOND).collect();
    assert_eq!(ticks, expected, "one run per whole second between the start and the stop");
    // Each tick was pushed once: as many jobs as runs, none dead-lettered.
    let jobs = db.rows("SELECT count(*) FROM nagi_jobs");
    assert_eq!(jobs, [[Some(expected.len().to_string())]], "jobs pushed");
    assert_eq!(db.rows("SELECT count(*) FROM nagi_dead_letters"), [[Some("0".to_owned())]]);
}

crate::on_every_backend!(
    a_job_every_second_runs_once_per_tick,
    kill_9_during_a_tick_and_restart_runs_no_tick_twice,
    two_processes_on_one_database_push_and_run_each_tick_once,
);
