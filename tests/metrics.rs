//! Integration tests of a service's metrics and JSON logs (issue 34, docs/http.md "Metrics",
//! "Logging"), each on both
//! emitters from one body: the users service with `--metrics-listen`, a known sequence of
//! requests, and a scrape whose counts must match exactly, whose series stay one per route
//! template (not per path) after 10,000 distinct ids, and which `promtool check metrics` (the
//! distribution's `prometheus` package, which .ci/run installs) accepts.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use support::{Backend, Server, build, get_on, temp_dir};

const USERS: &str = "examples/users.nagi";
const DURATION: &str = "http_server_request_duration_seconds";

/// The value of the series `name{labels}` in the exposition `text`.
fn value(text: &str, name: &str, labels: &str) -> Option<f64> {
    let series = format!("{name}{{{labels}}} ");
    text.lines().find_map(|line| line.strip_prefix(&series)).and_then(|v| v.trim().parse().ok())
}

/// The count of requests of `method` `route` answered with a status of `class`.
fn requests(text: &str, method: &str, route: &str, class: &str) -> Option<f64> {
    value(text, &format!("{DURATION}_count"), &format!(r#"method="{method}",route="{route}",status_class="{class}""#))
}

/// `examples/users.nagi:LINE` of the line of the users example that holds `sql`: the position
/// the compiler names the statement by.
fn statement_position(sql: &str) -> String {
    let text = std::fs::read_to_string(support::root().join(USERS)).unwrap();
    let line = text.lines().position(|l| l.contains(sql)).unwrap_or_else(|| panic!("no {sql:?} in {USERS}"));
    format!("{USERS}:{}", line + 1)
}

/// A service of `source` built with `backend`, serving metrics, and the metrics' port.
fn start_with_metrics(tag: &str, source: &str, backend: Backend, extra: &[&str]) -> (Server, u16) {
    let dir = temp_dir(tag);
    let log = dir.join("service.log");
    let mut flags = vec!["--metrics-listen", "127.0.0.1:0"];
    flags.extend(extra);
    let server = Server::start(&build(source, backend), &dir.join("service.db"), Some(&log), &flags);
    (server, metrics_port(&log))
}

/// Scrapes `port` until `done` holds of the exposition (what the service does after answering,
/// such as a job's attempt or a supervisor's restart, lands a moment later); at most 60 s.
fn scrape_until(port: u16, done: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, text) = get_on(port, "/metrics");
        if done(&text) {
            return text;
        }
        assert!(std::time::Instant::now() < deadline, "the scrape never showed what was expected:\n{text}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The port of the service's `metrics on http://127.0.0.1:PORT/metrics` log line.
fn metrics_port(log: &std::path::Path) -> u16 {
    let text = std::fs::read_to_string(log).unwrap();
    text.split("metrics on http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no metrics line in the log:\n{text}"))
}

/// `promtool check metrics` of `text`: its complaints, or `Ok`.
fn promtool(text: &str) -> Result<(), String> {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("promtool cannot run ({e}): install the distribution's `prometheus` package, as .ci/run does")
        });
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }
}

/// A body over the limit (413), seven requests to `/users/{id}` (five found, two not), a path
/// no route takes, then 10,000 distinct ids: the scrape counts each exactly, by method, template
/// and status class, the series stay one per route template and class, and promtool accepts the
/// exposition.
fn a_scrape_counts_requests_by_route_template(backend: Backend) {
    let (server, port) = start_with_metrics("metrics", USERS, backend, &["--body-limit", "100"]);
    let long = format!(r#"{{"id":9,"name":"{}","age":30}}"#, "n".repeat(100));
    assert_eq!(server.send_json("POST", "/users", &long).0, 413);
    for id in [1, 2] {
        let user = format!(r#"{{"id":{id},"name":"u{id}","age":30}}"#);
        assert_eq!(server.send_json("POST", "/users", &user).0, 201);
    }
    for id in [1, 2, 1, 2, 1, 3, 4] {
        server.get(&format!("/users/{id}"));
    }
    assert_eq!(server.get("/nowhere").0, 404);

    let (status, first) = get_on(port, "/metrics");
    assert_eq!(status, 200, "{first}");
    assert_eq!(requests(&first, "GET", "/users/{id}", "2xx"), Some(5.0), "{first}");
    assert_eq!(requests(&first, "GET", "/users/{id}", "4xx"), Some(2.0), "{first}");
    assert_eq!(requests(&first, "POST", "/users", "2xx"), Some(2.0), "{first}");
    assert_eq!(requests(&first, "", "", "4xx"), Some(1.0), "the path no route takes: {first}");
    assert_eq!(requests(&first, "GET", "/health", "2xx"), Some(0.0), "{first}");
    assert_eq!(requests(&first, "POST", "/users", "4xx"), Some(1.0), "the 413: {first}");
    assert_eq!(value(&first, "http_server_refused_total", r#"reason="body_too_large""#), Some(1.0), "{first}");
    // Every request finished, each on a connection of its own, now closed.
    assert_eq!(value(&first, "http_server_active_requests", ""), None, "a gauge without labels has no braces");
    assert!(first.lines().any(|l| l == "http_server_active_requests 0"), "{first}");
    assert!(first.lines().any(|l| l.starts_with("process_resident_memory_bytes ")), "{first}");
    promtool(&first).unwrap_or_else(|complaints| panic!("promtool: {complaints}\n{first}"));

    for id in 1000..11_000 {
        assert_eq!(server.get(&format!("/users/{id}")).0, 404);
    }
    let (_, second) = get_on(port, "/metrics");
    assert_eq!(requests(&second, "GET", "/users/{id}", "4xx"), Some(10_002.0), "{second}");
    // Each statement by its source position: the insert twice, the lookup once per GET.
    let insert = statement_position("INSERT INTO users");
    let lookup = statement_position("SELECT id, name, age FROM users WHERE id = ?");
    let statements =
        |position: &str| value(&second, "db_statement_duration_seconds_count", &format!(r#"statement="{position}""#));
    assert_eq!(statements(&insert), Some(2.0), "{insert}: {second}");
    assert_eq!(statements(&lookup), Some(10_007.0), "{lookup}: {second}");
    // The lookups found a row five times.
    let rows = value(&second, "db_statement_rows_total", &format!(r#"statement="{lookup}""#));
    assert_eq!(rows, Some(5.0), "{second}");
    assert_eq!(value(&second, "db_transactions_total", r#"outcome="committed""#), Some(2.0), "{second}");
    let series = |text: &str| text.lines().filter(|l| l.starts_with(&format!("{DURATION}_count{{"))).count();
    // Six routes and the requests no route takes, five status classes each: 10,000 ids add none.
    assert_eq!((series(&first), series(&second)), (35, 35));
    assert!(!second.contains("/users/1000\""), "a path became a label");
    promtool(&second).unwrap_or_else(|complaints| panic!("promtool: {complaints}"));
    assert_eq!(get_on(port, "/").0, 404, "only /metrics is served");
    assert!(server.stop().success());
}

/// Thirty jobs of the queue test's service (tests/fixtures/queue_service.nagi: ids ending in 0
/// always fail, in 1 or 2 fail once): once they are done, the scrape counts 27 completed, 3
/// dead-lettered and 12 retried attempts (6 jobs retried once, 3 retried twice before their last
/// attempt), and nothing queued or running.
fn a_scrape_counts_a_queues_jobs(backend: Backend) {
    let (server, port) = start_with_metrics("queue-metrics", "tests/fixtures/queue_service.nagi", backend, &[]);
    assert_eq!(server.request("POST", "/jobs?from=1&count=30", None, ""), (201, "30".to_owned()));
    let queue = |text: &str, name: &str, extra: &str| value(text, name, &format!(r#"queue="jobs"{extra}"#));
    let text = scrape_until(port, |text| {
        let done = queue(text, "nagi_queue_jobs_completed_total", "").unwrap_or(0.0)
            + queue(text, "nagi_queue_jobs_dead_lettered_total", "").unwrap_or(0.0);
        done == 30.0
    });
    assert_eq!(queue(&text, "nagi_queue_jobs_completed_total", ""), Some(27.0), "{text}");
    assert_eq!(queue(&text, "nagi_queue_jobs_dead_lettered_total", ""), Some(3.0), "{text}");
    assert_eq!(queue(&text, "nagi_queue_jobs_retried_total", ""), Some(12.0), "{text}");
    assert_eq!(queue(&text, "nagi_queue_jobs", r#",state="queued""#), Some(0.0), "{text}");
    assert_eq!(queue(&text, "nagi_queue_jobs", r#",state="running""#), Some(0.0), "{text}");
    assert_eq!(queue(&text, "nagi_queue_oldest_queued_age_seconds", ""), Some(0.0), "{text}");
    assert!(queue(&text, "nagi_queue_last_completed_timestamp_seconds", "").is_some_and(|t| t > 1.7e9), "{text}");
    promtool(&text).unwrap_or_else(|complaints| panic!("promtool: {complaints}\n{text}"));
    assert!(server.stop().success());
}

/// The actor test's service (tests/fixtures/counter_service.nagi): three crashes of the
/// counter under supervisor `App` are three restarts; a crash under `Fragile` (intensity 0) is
/// its giving up; the six calls are counted by actor name.
fn a_scrape_counts_supervisor_restarts_and_give_ups(backend: Backend) {
    let (server, port) = start_with_metrics("supervisor-metrics", "tests/fixtures/counter_service.nagi", backend, &[]);
    for _ in 0..2 {
        assert_eq!(server.send_json("POST", "/hits", "").0, 201);
    }
    for _ in 0..3 {
        assert_eq!(server.send_json("POST", "/crash", "").0, 503);
    }
    assert_eq!(server.send_json("POST", "/fragile/crash", "").0, 503);
    // A restart is counted when the supervisor has handled the crash, just after the answer.
    let text = scrape_until(port, |text| {
        value(text, "nagi_supervisor_give_ups_total", r#"supervisor="Fragile""#).is_some()
            && value(text, "nagi_supervisor_restarts_total", r#"supervisor="App""#) == Some(3.0)
    });
    assert_eq!(value(&text, "nagi_supervisor_give_ups_total", r#"supervisor="Fragile""#), Some(1.0), "{text}");
    assert_eq!(value(&text, "nagi_supervisor_restarts_total", r#"supervisor="Fragile""#), None, "{text}");
    // Six calls to the two supervisors' `Counter` actors, none waiting now, nothing sent to a
    // stopped one, and no task of a scope alive.
    assert_eq!(value(&text, "nagi_actor_calls_total", r#"actor="Counter""#), Some(6.0), "{text}");
    assert_eq!(value(&text, "nagi_actor_sends_total", r#"actor="Counter""#), Some(0.0), "{text}");
    assert_eq!(value(&text, "nagi_actor_mailbox_depth", r#"actor="Counter""#), Some(0.0), "{text}");
    assert!(text.lines().any(|l| l == "nagi_actor_dead_letters_total 0"), "{text}");
    assert!(text.lines().any(|l| l == "nagi_tasks_alive 0"), "{text}");
    promtool(&text).unwrap_or_else(|complaints| panic!("promtool: {complaints}\n{text}"));
    assert!(server.stop().success());
}

/// `--log-format json`: every line the service writes is one JSON object; a request's line names
/// its route template beside its path (escaped as JSON), and the start and the stop are objects
/// too.
fn json_logs_are_one_object_per_line(backend: Backend) {
    let dir = temp_dir("json-log");
    let log = dir.join("service.log");
    let server = Server::start(&build(USERS, backend), &dir.join("users.db"), Some(&log), &["--log-format", "json"]);
    assert_eq!(server.send_json("POST", "/users", r#"{"id":7,"name":"ann \"a\"","age":30}"#).0, 201);
    assert_eq!(server.get("/users/7").0, 200);
    assert_eq!(server.get("/nowhere").0, 404);
    assert!(server.stop().success());
    let text = std::fs::read_to_string(&log).unwrap();
    let objects: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not one JSON object ({e}): {line}")))
        .collect();
    let requests: Vec<&serde_json::Value> = objects.iter().filter(|o| o["target"] == "nagi::request").collect();
    assert_eq!(requests.len(), 3, "{text}");
    assert_eq!(
        (&requests[1]["route"], &requests[1]["path"], &requests[1]["status"]),
        (&"/users/{id}".into(), &"/users/7".into(), &200.into())
    );
    assert_eq!((&requests[2]["route"], &requests[2]["status"]), (&"".into(), &404.into()));
    assert!(requests.iter().all(|r| r["level"] == "INFO" && r["timestamp"].as_str().is_some_and(|t| t.ends_with('Z'))));
    assert!(
        objects
            .iter()
            .any(|o| o["target"] == "nagi" && o["message"].as_str().is_some_and(|m| m.contains("listening on"))),
        "{text}"
    );
}

/// Without `--metrics-listen` nothing listens for metrics; with an address that cannot be bound,
/// the service stops before it listens, exit status 2, saying so.
fn metrics_are_off_by_default_and_a_bad_address_stops_the_service(backend: Backend) {
    let dir = temp_dir("metrics-off");
    let log = dir.join("service.log");
    let exe = build(USERS, backend);
    let server = Server::start(&exe, &dir.join("users.db"), Some(&log), &[]);
    assert!(server.stop().success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("metrics on"), "{text}");
    let out = support::run_to_exit_with(&exe, &dir.join("other.db"), &["--metrics-listen", "256.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen for metrics on 256.0.0.1:1"));
}

crate::on_every_backend!(
    a_scrape_counts_requests_by_route_template,
    a_scrape_counts_a_queues_jobs,
    a_scrape_counts_supervisor_restarts_and_give_ups,
    json_logs_are_one_object_per_line,
    metrics_are_off_by_default_and_a_bad_address_stops_the_service,
);
