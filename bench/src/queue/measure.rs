//! One measured run of the queue bench: a service started on a fresh database, its jobs
//! pushed (all in one request, or one per request; waiting outside the database first, or
//! not), waited for, the service stopped, and the database read back to check that every job
//! ran exactly once and to compute the figures.

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};

use crate::http::client;
use crate::http::server::{self, Contender, Stdout};

/// The three experiments, each on a fresh service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Experiment {
    /// All jobs pushed in one request onto an idle queue: throughput, and how long jobs wait
    /// behind the backlog.
    Backlog,
    /// One job per request, [`SPACING`] apart, onto an idle queue: the wake-up path.
    Single,
    /// All jobs pushed in one request onto an idle queue, each waiting [`WAIT`] outside the
    /// database before its insert: throughput when the handler waits on something else.
    Waiting,
}

impl Experiment {
    /// Every experiment, in the order a round runs them.
    pub const ALL: [Experiment; 3] = [Experiment::Backlog, Experiment::Single, Experiment::Waiting];

    /// Its name in records and tables.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::Backlog => "backlog",
            Experiment::Single => "single",
            Experiment::Waiting => "waiting",
        }
    }

    /// How long each of its jobs waits before its insert, in milliseconds.
    pub fn wait_ms(self) -> u64 {
        match self {
            Experiment::Waiting => WAIT.as_millis() as u64,
            Experiment::Backlog | Experiment::Single => 0,
        }
    }

    /// Whether it pushes all its jobs in one request (and so measures throughput).
    pub fn pushes_at_once(self) -> bool {
        self != Experiment::Single
    }
}

/// How long each job of [`Experiment::Waiting`] waits (`sleep`) before its insert: a call to
/// a server outside the database, as far as the queue can tell.
pub const WAIT: Duration = Duration::from_millis(10);

/// The pause between one push's answer and the next push in [`Experiment::Single`]: long
/// enough for the previous job to have run, so that each push finds the queue idle.
pub const SPACING: Duration = Duration::from_millis(5);

/// How often the bench asks the service how many jobs have started.
const POLL: Duration = Duration::from_millis(20);

/// A service the bench runs: the executable one emitter built for one worker count.
#[derive(Clone, Debug)]
pub struct Variant {
    /// `rust` or `llvm`.
    pub emitter: &'static str,
    /// The queue's `workers`.
    pub workers: u16,
    /// The service's executable.
    pub exe: PathBuf,
}

/// What one run measured, after its checks passed.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// Jobs per second from the push's answer (its commit precedes it) to the last job's
    /// `finished_at`; only for the experiments that push at once
    /// ([`Experiment::pushes_at_once`]).
    pub jobs_per_s: Option<f64>,
    /// From the push's answer to the first job's start, in milliseconds (negative when a job
    /// started before the answer reached the bench); only for the experiments that push at
    /// once.
    pub first_start_ms: Option<f64>,
    /// How long a push request took as the bench saw it (sent to answered), in milliseconds:
    /// the one request of an experiment that pushes at once, the median one of
    /// [`Experiment::Single`].
    pub push_ms: f64,
    /// Each job's start (its insert into `starts`, so after its wait in
    /// [`Experiment::Waiting`]) minus its `created_at`, in whole milliseconds (both clocks
    /// count whole milliseconds), in job order.
    pub latencies_ms: Vec<i64>,
    /// The most attempts that ran at once, from the service's shutdown line.
    pub peak: u64,
}

/// A job as the database holds it after the run.
struct Row {
    n: i64,
    state: String,
    attempts: i64,
    created_at: i64,
    finished_at: Option<i64>,
    started_at: Option<i64>,
}

/// Runs `experiment` with `jobs` jobs on a fresh service of `variant`, pinned to CPU `pin`
/// when given, whose database and log go into `dir` under the name `label`; checks the
/// outcome and gives the figures.
pub fn run(
    variant: &Variant,
    experiment: Experiment,
    jobs: u64,
    pin: Option<u32>,
    dir: &Path,
    label: &str,
) -> Result<Figures, String> {
    let db = dir.join(format!("{label}.db"));
    let stderr_path = dir.join(format!("{label}.stderr"));
    let stderr = std::fs::File::create(&stderr_path).map_err(|e| format!("{}: {e}", stderr_path.display()))?;
    let contender = Contender {
        name: if variant.emitter == "rust" { "nagi-rust" } else { "nagi-llvm" },
        exe: variant.exe.clone(),
        flags: vec!["--log", "info"],
    };
    let mut service = server::start(&contender, pin, &db, Stdout::Pipe, stderr)?;
    // The log is drained as it comes, so that a full pipe never slows the service.
    let mut stdout = service.take_stdout().ok_or("the service's stdout is not a pipe")?;
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let pushed = push(service.address, experiment, jobs).and_then(|answered| {
        wait_started(service.address, jobs, Duration::from_secs(60 + jobs / 100)).map(|()| answered)
    });
    let stopped = service.stop();
    let log = log.join().map_err(|_| "the thread reading the service's log panicked")?;
    std::fs::write(dir.join(format!("{label}.log")), &log).map_err(|e| e.to_string())?;
    let pushed = pushed.map_err(|e| format!("{label}: {e}"))?;
    stopped.map_err(|e| format!("{label}: {e}"))?;
    let peak = peak(&log).ok_or(format!("{label}: the service's log has no `peak attempts at once` line"))?;
    if peak > u64::from(variant.workers) {
        return Err(format!("{label}: {peak} attempts ran at once, more than the queue's {} workers", variant.workers));
    }
    let (rows, dead) = read_jobs(&db).map_err(|e| format!("{label}: reading {}: {e}", db.display()))?;
    check(&rows, dead, jobs).map_err(|e| format!("{label}: {e} (database {})", db.display()))?;
    Ok(figures(&rows, &pushed, experiment, peak))
}

/// Now as Unix milliseconds, with the sub-millisecond part.
fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// The pushes of a run as the bench saw them.
struct Pushed {
    /// When the last push was answered, in Unix milliseconds.
    answered: f64,
    /// How long each push request took, in milliseconds.
    requests_ms: Vec<f64>,
}

/// Pushes the jobs `0..jobs`, each to wait the experiment's [`Experiment::wait_ms`]: all in
/// one request, or one per request [`SPACING`] apart.
fn push(address: SocketAddr, experiment: Experiment, jobs: u64) -> Result<Pushed, String> {
    let mut pushed = Pushed { answered: 0.0, requests_ms: Vec::new() };
    let wait_ms = experiment.wait_ms();
    let mut one = |first: u64, count: u64| -> Result<(), String> {
        let sent = Instant::now();
        let path = format!("/push?first={first}&count={count}&wait_ms={wait_ms}");
        let answer = client::request(address, "POST", &path, None)?;
        pushed.answered = now_ms();
        pushed.requests_ms.push(sent.elapsed().as_secs_f64() * 1e3);
        if answer.status != 201 || answer.body.trim() != count.to_string() {
            return Err(format!(
                "POST /push (first {first}, count {count}) answered {}: {}",
                answer.status, answer.body
            ));
        }
        Ok(())
    };
    if experiment.pushes_at_once() {
        one(0, jobs)?;
    } else {
        for n in 0..jobs {
            one(n, 1)?;
            std::thread::sleep(SPACING);
        }
    }
    Ok(pushed)
}

/// Waits until `jobs` jobs have started (each start commits with its job's completion), at
/// most `timeout`.
fn wait_started(address: SocketAddr, jobs: u64, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        let answer = client::request(address, "GET", "/started", None)?;
        let started = serde_json::from_str::<Value>(&answer.body).ok().and_then(|v| v["n"].as_u64());
        match started {
            Some(n) if n >= jobs => return Ok(()),
            Some(n) if Instant::now() > deadline => {
                return Err(format!("only {n} of {jobs} jobs started within {timeout:?}"));
            }
            Some(_) => std::thread::sleep(POLL),
            None => return Err(format!("GET /started answered {}: {}", answer.status, answer.body)),
        }
    }
}

/// The peak the service logged when its queue stopped (`… peak attempts at once: N`).
pub fn peak(log: &str) -> Option<u64> {
    const MARK: &str = "peak attempts at once: ";
    let at = log.find(MARK)? + MARK.len();
    let digits: String = log[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Every job of the stopped service, with its start from the `starts` table, in job order,
/// and how many jobs were dead-lettered.
fn read_jobs(db: &Path) -> rusqlite::Result<(Vec<Row>, i64)> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let dead: i64 = conn.query_row("SELECT COUNT(*) FROM nagi_dead_letters", [], |r| r.get(0))?;
    let mut statement = conn.prepare(
        "SELECT json_extract(j.payload, '$.n') AS n, j.state, j.attempts, j.created_at, j.finished_at, s.at \
         FROM nagi_jobs j LEFT JOIN starts s ON s.n = json_extract(j.payload, '$.n') ORDER BY n",
    )?;
    let rows = statement.query_map([], |r| {
        Ok(Row {
            n: r.get(0)?,
            state: r.get(1)?,
            attempts: r.get(2)?,
            created_at: r.get(3)?,
            finished_at: r.get(4)?,
            started_at: r.get(5)?,
        })
    })?;
    Ok((rows.collect::<rusqlite::Result<_>>()?, dead))
}

/// Checks that none of the jobs was dead-lettered and that jobs `0..jobs` are each in the
/// table once, done after exactly one attempt, with one start each.
fn check(rows: &[Row], dead: i64, jobs: u64) -> Result<(), String> {
    if dead > 0 {
        return Err(format!("{dead} jobs were dead-lettered"));
    }
    if rows.len() as u64 != jobs {
        return Err(format!("{} jobs in nagi_jobs, {jobs} pushed", rows.len()));
    }
    for (expected, row) in (0..).zip(rows) {
        if row.n != expected {
            return Err(format!("job {expected} is missing or repeated (found {} in its place)", row.n));
        }
        if row.state != "done" || row.attempts != 1 || row.finished_at.is_none() || row.started_at.is_none() {
            return Err(format!(
                "job {} is {} after {} attempts (finished_at {:?}, started {:?}); expected done after 1",
                row.n, row.state, row.attempts, row.finished_at, row.started_at
            ));
        }
    }
    Ok(())
}

/// The figures of a checked run.
fn figures(rows: &[Row], pushed: &Pushed, experiment: Experiment, peak: u64) -> Figures {
    let at_once = experiment.pushes_at_once();
    let first_start = rows.iter().filter_map(|r| r.started_at).min().unwrap_or(0) as f64;
    let last_finish = rows.iter().filter_map(|r| r.finished_at).max().unwrap_or(0) as f64;
    let jobs_per_s = at_once.then(|| {
        let from = pushed.answered.min(first_start);
        rows.len() as f64 / ((last_finish - from).max(1.0) / 1e3)
    });
    Figures {
        jobs_per_s,
        first_start_ms: at_once.then_some(first_start - pushed.answered),
        push_ms: crate::records::median(&mut pushed.requests_ms.clone()).unwrap_or(0.0),
        latencies_ms: rows.iter().map(|r| r.started_at.unwrap_or(r.created_at) - r.created_at).collect(),
        peak,
    }
}

/// The nearest-rank percentile `p` (0 to 100) of `values`; `None` for no values.
pub fn percentile(values: &[i64], p: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = ((p / 100.0 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).map(|v| *v as f64)
}

impl Figures {
    /// The record of this run (one line of `queue.jsonl`).
    pub fn record(&self, variant: &Variant, experiment: Experiment, round: u32, pinned: bool) -> Value {
        let mut latencies: Vec<f64> = self.latencies_ms.iter().map(|v| *v as f64).collect();
        let count = latencies.len().max(1) as f64;
        let mean = latencies.iter().sum::<f64>() / count;
        json!({
            "bench": "queue",
            "experiment": experiment.name(),
            "emitter": variant.emitter,
            "workers": variant.workers,
            "round": round,
            "pinned": pinned,
            "jobs": self.latencies_ms.len(),
            "wait_ms": experiment.wait_ms(),
            "jobs_per_s": self.jobs_per_s,
            "first_start_ms": self.first_start_ms,
            "push_ms": self.push_ms,
            "latency_median_ms": crate::records::median(&mut latencies),
            "latency_p99_ms": percentile(&self.latencies_ms, 99.0),
            "latency_max_ms": self.latencies_ms.iter().max(),
            "latency_mean_ms": mean,
            "peak": self.peak,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_is_read_from_the_shutdown_line() {
        let log = "2026-12-03T07:50:58Z  INFO nagi::queue: queue work stopped; peak attempts at once: 8 queue=\"work\" peak=8\n";
        assert_eq!(peak(log), Some(8));
        assert_eq!(peak("INFO nagi: stopped\n"), None);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<i64> = (1..=200).collect();
        assert_eq!(percentile(&values, 99.0), Some(198.0));
        assert_eq!(percentile(&values, 50.0), Some(100.0));
        assert_eq!(percentile(&[7], 99.0), Some(7.0));
        assert_eq!(percentile(&[], 99.0), None);
    }

    fn row(n: i64, attempts: i64) -> Row {
        Row {
            n,
            state: "done".into(),
            attempts,
            created_at: 1_000,
            finished_at: Some(1_010 + n),
            started_at: Some(1_005 + n),
        }
    }

    #[test]
    fn a_job_run_twice_or_missing_fails_the_check() {
        assert_eq!(check(&[row(0, 1), row(1, 1)], 0, 2), Ok(()));
        assert!(check(&[row(0, 1), row(1, 2)], 0, 2).unwrap_err().contains("job 1 is done after 2 attempts"));
        assert!(check(&[row(0, 1), row(2, 1)], 0, 2).unwrap_err().contains("job 1 is missing"));
        assert!(check(&[row(0, 1)], 0, 2).unwrap_err().contains("1 jobs in nagi_jobs, 2 pushed"));
        assert!(check(&[row(0, 1), row(1, 1)], 1, 2).unwrap_err().contains("1 jobs were dead-lettered"));
    }

    #[test]
    fn throughput_runs_from_the_answer_to_the_last_finish() {
        let rows = [row(0, 1), row(1, 1)];
        let pushed = Pushed { answered: 1_001.0, requests_ms: vec![3.0] };
        let figures = figures(&rows, &pushed, Experiment::Backlog, 1);
        // 2 jobs from 1001 ms to 1011 ms.
        assert_eq!(figures.jobs_per_s, Some(200.0));
        assert_eq!(figures.first_start_ms, Some(4.0));
        assert_eq!(figures.push_ms, 3.0);
        assert_eq!(figures.latencies_ms, vec![5, 6]);
        let single = super::figures(&rows, &pushed, Experiment::Single, 1);
        assert_eq!((single.jobs_per_s, single.first_start_ms), (None, None));
        let waiting = super::figures(&rows, &pushed, Experiment::Waiting, 1);
        assert_eq!(waiting.jobs_per_s, Some(200.0));
    }

    #[test]
    fn only_the_waiting_experiment_waits() {
        assert_eq!(Experiment::Waiting.wait_ms(), 10);
        assert_eq!(Experiment::Backlog.wait_ms(), 0);
        assert_eq!(Experiment::Single.wait_ms(), 0);
        assert!(Experiment::Waiting.pushes_at_once() && !Experiment::Single.pushes_at_once());
    }
}
