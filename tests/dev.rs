//! `nagic dev` and `nagic new` (issue 37): a copy of users.nagi served by `nagic dev`, its route's
//! body changed ten times while a client polls every 10 ms — each new behaviour answers, no
//! request is refused or fails, and the time from save to new behaviour is measured — then a
//! syntax error, which prints `file:line:col` while the old version keeps serving, and Ctrl-C,
//! which stops everything. And the starter service of `nagic new`: it checks, its tests pass,
//! it is formatted, and `nagic dev` serves it.

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{nagic, root, temp_dir};

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `GET path` on a connection of its own: the status and body, or why it failed.
fn get(port: u16, path: &str) -> Result<(u16, String), String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n").map_err(|e| format!("write: {e}"))?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).map_err(|e| format!("read: {e}"))?;
    let status = answer.get(9..12).and_then(|s| s.parse().ok()).ok_or_else(|| format!("no status in {answer:?}"))?;
    let body = answer.split_once("\r\n\r\n").map_or(String::new(), |(_, b)| b.to_string());
    Ok((status, body))
}

/// `nagic dev FILE -- --listen 127.0.0.1:PORT --db DB`, its output in files of `dir`.
fn dev(file: &Path, port: u16, dir: &Path) -> Child {
    dev_in(file, &[file.as_os_str()], port, dir)
}

/// `nagic dev INPUT… -- --listen … --db DIR/app.db` started in `cwd`.
fn dev_in(cwd: &Path, input: &[&std::ffi::OsStr], port: u16, dir: &Path) -> Child {
    let cwd = if cwd.is_dir() { cwd } else { cwd.parent().unwrap() };
    Command::new(env!("CARGO_BIN_EXE_nagic"))
        .current_dir(cwd)
        .arg("dev")
        .args(input)
        .args(["--", "--listen", &format!("127.0.0.1:{port}"), "--db", dir.join("app.db").to_str().unwrap()])
        .stdout(std::fs::File::create(dir.join("dev.out")).unwrap())
        .stderr(std::fs::File::create(dir.join("dev.err")).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .expect("nagic dev starts")
}

/// Waits (up to 60 s) until `GET path` answers `body`.
fn wait_for(port: u16, path: &str, body: &str) -> Duration {
    let started = Instant::now();
    loop {
        if get(port, path).is_ok_and(|(status, text)| status == 200 && text == body) {
            return started.elapsed();
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{path} never answered {body}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Ctrl-C: SIGINT to `nagic dev`, which stops its service and exits 0; nothing listens then.
fn interrupt(mut child: Child, port: u16) {
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "nagic dev did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "nagic dev ended with {status}");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "the service still listens after Ctrl-C");
}

/// The users service with `GET /health` answering `text`.
fn users_with_health(text: &str) -> String {
    let users = std::fs::read_to_string(root().join("examples/users.nagi")).unwrap();
    let changed = users.replacen("    return \"ok\"\n", &format!("    return \"{text}\"\n"), 1);
    assert_ne!(changed, users);
    changed
}

/// Whether Linux migrates a closing listener's queued connections to the other listeners of its
/// SO_REUSEPORT group (net.ipv4.tcp_migrate_req): without it, a connection that arrives as the
/// replaced process closes its listener is reset, which no server can prevent.
fn migrating_requests() -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_migrate_req").is_ok_and(|v| v.trim() == "1")
}

#[test]
fn nagic_dev_swaps_each_saved_version_in_without_refusing_a_request() {
    assert!(
        migrating_requests(),
        "net.ipv4.tcp_migrate_req is not 1: set it (`sysctl -w net.ipv4.tcp_migrate_req=1`, as .ci/run does) so that \
         a swap resets no queued connection"
    );
    let dir = temp_dir("dev");
    let file = dir.join("users.nagi");
    std::fs::write(&file, users_with_health("v0")).unwrap();
    let port = free_port();
    let child = dev(&file, port, &dir);
    wait_for(port, "/health", "\"v0\"");

    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let poller = {
        let (stop, answered, failures) = (Arc::clone(&stop), Arc::clone(&answered), Arc::clone(&failures));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match get(port, "/health") {
                    Ok((200, _)) => {
                        answered.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok((status, body)) => failures.lock().unwrap().push(format!("{status} {body}")),
                    Err(why) => failures.lock().unwrap().push(why),
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let mut latencies = Vec::new();
    for version in 1..=10 {
        std::fs::write(&file, users_with_health(&format!("v{version}"))).unwrap();
        latencies.push(wait_for(port, "/health", &format!("\"v{version}\"")));
        // A pause, as between two saves: the previous process drains meanwhile.
        std::thread::sleep(Duration::from_millis(300));
    }

    // A syntax error: the diagnostic, with its place; the last version keeps serving.
    let broken = users_with_health("v10").replacen("route GET \"/users/{id}\"", "route GET \"/users/{id}\" $", 1);
    std::fs::write(&file, &broken).unwrap();
    let line = broken.lines().position(|l| l.contains(" $")).unwrap() + 1;
    let expected = format!("users.nagi:{line}:");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let err = std::fs::read_to_string(dir.join("dev.err")).unwrap();
        if err.contains(&expected) && err.contains("error[H100]") {
            break;
        }
        assert!(Instant::now() < deadline, "no diagnostic at {expected} in:\n{err}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Once the replaced process has drained (nagic dev's --drain-ms, 200 ms), every answer is
    // the last good version's.
    std::thread::sleep(Duration::from_millis(600));
    for _ in 0..5 {
        assert_eq!(get(port, "/health"), Ok((200, "\"v10\"".to_string())));
    }

    stop.store(true, Ordering::Relaxed);
    poller.join().unwrap();
    let failures = failures.lock().unwrap().clone();
    assert!(failures.is_empty(), "{} of the polls failed: {failures:?}", failures.len());
    assert!(answered.load(Ordering::Relaxed) > 100, "the client polled throughout");
    latencies.sort();
    println!(
        "nagic dev, save to new behaviour over 10 edits: median {} ms, max {} ms ({} polls, none failed)",
        latencies[5].as_millis(),
        latencies[9].as_millis(),
        answered.load(Ordering::Relaxed)
    );
    interrupt(child, port);
}

#[test]
fn nagic_new_makes_a_service_that_checks_passes_its_tests_and_serves() {
    let dir = temp_dir("new");
    let service = dir.join("notes");
    let out = nagic(&["new", service.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let file = service.join("notes.nagi");
    assert!(service.join("README.md").is_file());
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("// The notes service"), "{text}");
    for args in [vec!["check", file.to_str().unwrap()], vec!["fmt", "--check", file.to_str().unwrap()]] {
        let out = nagic(&args);
        assert!(
            out.status.success(),
            "nagic {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // As the README has it: `cd notes`, then `nagic test` and `nagic dev` with no argument.
    let out = Command::new(env!("CARGO_BIN_EXE_nagic"))
        .current_dir(&service)
        .args(["test", "--backend=llvm"])
        .output()
        .expect("nagic test runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && report.contains("2 passed"), "{report}{}", String::from_utf8_lossy(&out.stderr));
    // Again is refused: the directory exists.
    assert_eq!(nagic(&["new", service.to_str().unwrap()]).status.code(), Some(1));

    let port = free_port();
    let child = dev_in(&service, &[], port, &dir);
    wait_for(port, "/health", "\"ok\"");
    let note = r#"{"id":1,"title":"first","body":"hello"}"#;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /notes HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{note}",
        note.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert_eq!(get(port, "/notes/1"), Ok((200, note.to_string())));
    interrupt(child, port);
}
