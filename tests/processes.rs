//! Several processes of one service on one PostgreSQL database, on both emitters: behind one port
//! with `--reuse-port`, a rolling restart (start the new process, SIGTERM the old) under
//! keep-alive load loses no request; and three processes share one job queue through a `kill -9`
//! of one of them, every job ending completed or dead-lettered, its attempts counted by the
//! rules, and no job ever in two attempts at once (from the attempts' own start and end lines).

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use support::{Backend, Engine, Server, TestDb, build, temp_dir};

/// One keep-alive client: sends `GET path` again and again until `stop`, opening a new connection
/// when the server answers `Connection: close`; counts the answers with `expected` status in `ok`
/// and describes every other outcome (a refused connection, a connection closed under a request,
/// another status) in `failed`.
fn client(port: u16, path: &str, expected: u16, stop: &AtomicBool, ok: &AtomicU64, failed: &Mutex<Vec<String>>) {
    let mut connection: Option<BufReader<TcpStream>> = None;
    while !stop.load(Ordering::Relaxed) {
        let reader = match &mut connection {
            Some(reader) => reader,
            None => match TcpStream::connect(("127.0.0.1", port)) {
                Ok(stream) => connection.insert(BufReader::new(stream)),
                Err(error) => {
                    failed.lock().unwrap().push(format!("connect: {error}"));
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
            },
        };
        match exchange(reader, path) {
            Ok((status, close)) => {
                if status == expected {
                    ok.fetch_add(1, Ordering::Relaxed);
                } else {
                    failed.lock().unwrap().push(format!("status {status}"));
                }
                if close {
                    connection = None;
                }
            }
            Err(error) => {
                failed.lock().unwrap().push(format!("exchange: {error}"));
                connection = None;
            }
        }
    }
}

/// One request and its answer on a kept-alive connection: the status, and whether the server
/// closes the connection after it.
fn exchange(reader: &mut BufReader<TcpStream>, path: &str) -> std::io::Result<(u16, bool)> {
    reader.get_mut().write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())?;
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed before the answer"));
    }
    let status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let (mut length, mut close) = (0usize, false);
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let header = line.trim_end().to_ascii_lowercase();
        if header.is_empty() {
            break;
        }
        if let Some(value) = header.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        close |= header == "connection: close";
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok((status, close))
}

/// Sends SIGTERM to `server` without waiting for it.
fn terminate(server: &Server) {
    let pid = server.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs").success());
}

/// Waits for `server` to exit after a SIGTERM; its status.
fn wait_exit(mut server: Server) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = server.child.try_wait().expect("the status") {
            return status;
        }
        assert!(Instant::now() < deadline, "the service did not stop after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How many request lines for `GET /users/1` `log` holds.
fn served(log: &Path) -> usize {
    std::fs::read_to_string(log).expect("the log reads").lines().filter(|l| l.contains("path=/users/1 ")).count()
}

fn a_rolling_restart_behind_one_port_loses_no_request(backend: Backend) {
    let exe = build("examples/users.nagi", backend);
    let db = TestDb::new(Engine::Postgres, "rolling");
    let dir = temp_dir("rolling");
    let logs: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("process-{i}.log"))).collect();
    let flags = ["--reuse-port", "--workers", "1"];
    let first = Server::start_on("127.0.0.1:0", &exe, db.path(), Some(&logs[0]), &flags, &[]);
    let port = first.port;
    let listen = format!("127.0.0.1:{port}");
    assert_eq!(first.send_json("POST", "/users", r#"{"id":1,"name":"Ada","age":36}"#).0, 201);
    let second = Server::start_on(&listen, &exe, db.path(), Some(&logs[1]), &flags, &[]);
    let (stop, ok, failed) = (AtomicBool::new(false), AtomicU64::new(0), Mutex::new(Vec::new()));
    let third = std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| client(port, "/users/1", 200, &stop, &ok, &failed));
        }
        std::thread::sleep(Duration::from_millis(700));
        // The old process goes while the new one serves.
        terminate(&first);
        assert!(wait_exit(first).success());
        std::thread::sleep(Duration::from_millis(300));
        // A rolling restart of the other: start the new version, then stop the old.
        let third = Server::start_on(&listen, &exe, db.path(), Some(&logs[2]), &flags, &[]);
        std::thread::sleep(Duration::from_millis(300));
        terminate(&second);
        assert!(wait_exit(second).success());
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, Ordering::Relaxed);
        third
    });
    let failed = failed.into_inner().unwrap();
    let ok = ok.into_inner();
    eprintln!("rolling restart: {ok} answers, {} failed", failed.len());
    assert!(
        failed.is_empty(),
        "{} of {} requests failed: {:?}",
        failed.len(),
        ok + failed.len() as u64,
        &failed[..failed.len().min(10)]
    );
    assert!(ok > 100, "too few requests to mean anything: {ok}");
    assert!(third.stop().success());
    // Each of the three processes answered some of them.
    for log in &logs {
        assert!(served(log) > 0, "{} answered no request", log.display());
    }
}

/// One attempt as the fixture prints it: its start and, unless its process was killed, its end
/// (RFC 3339 texts of one width, which sort as the instants do).
#[derive(Debug)]
struct Attempt {
    job: i64,
    number: i64,
    start: String,
    end: Option<String>,
}

/// The attempts `log` records (`attempt ID N start|end TIME`), in the order they started.
fn attempts(log: &Path) -> Vec<Attempt> {
    let text = std::fs::read_to_string(log).expect("the log reads");
    let mut found: Vec<Attempt> = Vec::new();
    let mut open: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.split("attempt ").nth(1) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let [job, number, what, at] = fields[..] else { continue };
        let (Ok(job), Ok(number)) = (job.parse::<i64>(), number.parse::<i64>()) else { continue };
        match what {
            "start" => {
                open.insert((job, number), found.len());
                found.push(Attempt { job, number, start: at.to_owned(), end: None });
            }
            "end" => {
                let at_index = open.remove(&(job, number)).unwrap_or_else(|| panic!("an end without a start: {line}"));
                found[at_index].end = Some(at.to_owned());
            }
            _ => {}
        }
    }
    found
}

/// The current time as the fixture prints it (RFC 3339, UTC, six fractional digits).
fn now_text(db: &TestDb) -> String {
    let rows = db.rows("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')");
    rows[0][0].clone().expect("the server's time")
}

fn three_processes_share_one_queue_through_a_kill_9(backend: Backend) {
    let exe = build("tests/fixtures/queue_service.nagi", backend);
    let db = TestDb::new(Engine::Postgres, "shared-queue");
    let dir = temp_dir("shared-queue");
    let logs: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("process-{i}.log"))).collect();
    let mut servers: Vec<Option<Server>> =
        logs.iter().map(|log| Some(Server::start(&exe, db.path(), Some(log), &[]))).collect();
    let first = servers[0].as_ref().unwrap();
    let (status, body) = first.send_json("POST", "/jobs?from=1&count=1000&sleep_ms=5", "");
    assert_eq!((status, body.as_str()), (201, "1000"));
    let count = |sql: &str| db.integer(sql);
    let deadline = Instant::now() + Duration::from_secs(60);
    while count("SELECT count(*) FROM runs") < 300 {
        assert!(Instant::now() < deadline, "the jobs did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut killed = servers[1].take().expect("the second process");
    killed.child.kill().expect("kill -9");
    killed.child.wait().expect("the process ends");
    let killed_at = now_text(&db);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let settled = count("SELECT count(*) FROM nagi_jobs WHERE state = 'done'")
            + count("SELECT count(*) FROM nagi_dead_letters");
        if settled == 1000 {
            break;
        }
        assert!(Instant::now() < deadline, "{settled} of 1000 jobs settled");
        std::thread::sleep(Duration::from_millis(50));
    }
    for server in servers.into_iter().flatten() {
        assert!(server.stop().success());
    }
    // Every process ran attempts, and the killed one left some unfinished.
    let per_process: Vec<Vec<Attempt>> = logs.iter().map(|log| attempts(log)).collect();
    for (i, attempts) in per_process.iter().enumerate() {
        assert!(!attempts.is_empty(), "process {i} ran no attempt");
    }
    assert!(
        per_process[0].iter().chain(&per_process[2]).all(|a| a.end.is_some()),
        "a live process left an attempt open"
    );
    // No job was ever in two attempts at once, across the three processes.
    let mut by_job: BTreeMap<i64, Vec<(String, String, i64)>> = BTreeMap::new();
    for attempt in per_process.iter().flatten() {
        let end = attempt.end.clone().unwrap_or_else(|| killed_at.clone());
        by_job.entry(attempt.job).or_default().push((attempt.start.clone(), end, attempt.number));
    }
    for (job, spans) in &mut by_job {
        spans.sort();
        for pair in spans.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "job {job}: attempts overlap: {pair:?}");
        }
        let numbers: Vec<i64> = spans.iter().map(|span| span.2).collect();
        assert!(numbers.windows(2).all(|n| n[0] < n[1]), "job {job}: attempts out of order: {numbers:?}");
    }
    // Each job ended as its failure rule says, its attempts counted exactly: the rule's, plus one
    // for each attempt the kill cut short (which counts, and may have been its last).
    let id = db.json_integer("payload", "id");
    let mut ended: BTreeMap<i64, (i64, String)> = BTreeMap::new();
    for sql in [
        format!("SELECT {id}, attempts, state FROM nagi_jobs"),
        format!("SELECT {id}, attempts, 'dead' FROM nagi_dead_letters"),
    ] {
        for row in db.rows(&sql) {
            let int = |i: usize| row[i].as_deref().and_then(|n| n.parse::<i64>().ok()).expect("an integer");
            assert!(
                ended.insert(int(0), (int(1), row[2].clone().unwrap_or_default())).is_none(),
                "job {} twice",
                int(0)
            );
        }
    }
    assert_eq!(ended.keys().copied().collect::<Vec<_>>(), (1..=1000).collect::<Vec<_>>(), "a job was lost");
    // The killed process's attempts may have no lines: one it had claimed (and counted) but not
    // started, or lines still in its log queue when it was killed. And any of its attempts may
    // have been cut short anywhere, its end line printed or not (before its commit). Those are
    // the only attempts that may add to what the rule needs.
    let mut unlogged_total = 0;
    let in_killed: BTreeMap<i64, i64> = per_process[1].iter().fold(BTreeMap::new(), |mut counts, a| {
        *counts.entry(a.job).or_insert(0) += 1;
        counts
    });
    for (job, (attempts, state)) in &ended {
        let logged = by_job.get(job).map_or(0, Vec::len) as i64;
        let unlogged = attempts - logged;
        assert!(unlogged >= 0, "job {job}: {attempts} attempts counted, {logged} logged");
        unlogged_total += unlogged;
        let cut = in_killed.get(job).copied().unwrap_or(0) + unlogged;
        let needed = match job % 10 {
            0 => None,
            1 | 2 => Some(2),
            _ => Some(1),
        };
        match (needed, state.as_str()) {
            (Some(n), "done") => assert!((n..=n + cut).contains(attempts), "job {job}: done after {attempts}"),
            (Some(_), _) => assert!(*attempts == 3 && cut > 0, "job {job}: {state} after {attempts}"),
            (None, _) => assert_eq!((*attempts, state.as_str()), (3, "dead"), "job {job}"),
        }
    }
    assert!(unlogged_total <= 100, "{unlogged_total} attempts counted that no process logged");
    // One committed run per completed job.
    let done = ended.values().filter(|(_, state)| state == "done").count() as i64;
    assert_eq!(count("SELECT count(*) FROM runs"), done);
    eprintln!(
        "shared queue: {} attempts logged by 3 processes, {} of them left open by kill -9, {unlogged_total} \
         counted but not logged (the killed process's last lines), {done} done",
        by_job.values().map(Vec::len).sum::<usize>(),
        per_process[1].iter().filter(|a| a.end.is_none()).count()
    );
}

crate::on_every_backend!(
    a_rolling_restart_behind_one_port_loses_no_request,
    three_processes_share_one_queue_through_a_kill_9
);
