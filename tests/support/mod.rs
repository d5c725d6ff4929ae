//! Shared helpers for the integration tests: building Nagi programs with the real `nagic`,
//! starting compiled services on free loopback ports, and speaking HTTP/1.1 over a plain
//! `TcpStream` (so requests such as a chunked body or a wrong content type are sent exactly as
//! written).

#![allow(dead_code, reason = "each test binary uses a different subset of these helpers")]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod engines;

#[allow(unused_imports, reason = "each test binary uses a different subset of these helpers")]
pub use engines::{Engine, Relay, TestDb, WriteLock};

/// The workspace root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh empty directory under the system temp directory.
pub fn temp_dir(tag: &str) -> PathBuf {
    static COUNTER: Mutex<u32> = Mutex::new(0);
    let mut n = COUNTER.lock().unwrap();
    *n += 1;
    let dir = std::env::temp_dir().join(format!("nagi-test-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `nagic` with `args` from the workspace root.
pub fn nagic(args: &[&str]) -> std::process::Output {
    nagic_with_env(args, &[])
}

/// Runs `nagic` with `args` from the workspace root, with the environment variables `vars` set
/// (for it and the processes it starts).
pub fn nagic_with_env(args: &[&str], vars: &[(&str, &Path)]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nagic"));
    command.args(args).current_dir(root());
    for (name, value) in vars {
        command.env(name, value);
    }
    command.output().expect("nagic starts")
}

/// A backend that builds services: the tests of compiled services run on each, from one list
/// ([`on_every_backend!`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Low → Rust → rustc.
    Rust,
    /// Low → LLVM IR → object, linked with the runtime's static library (LLVM's `-O2`, the
    /// default).
    Llvm,
    /// The LLVM emitter with LLVM's optimizations off (`--llvm-opt=0`).
    LlvmO0,
}

impl Backend {
    /// The `nagic build` flag that selects its emitter.
    pub fn flag(self) -> &'static str {
        match self {
            Backend::Rust => "--backend=rust",
            Backend::Llvm | Backend::LlvmO0 => "--backend=llvm",
        }
    }

    /// Every `nagic build` flag it takes: the emitter and, for [`Backend::LlvmO0`], LLVM's level.
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Backend::Rust => &["--backend=rust"],
            Backend::Llvm => &["--backend=llvm"],
            Backend::LlvmO0 => &["--backend=llvm", "--llvm-opt=0"],
        }
    }
}

/// The executables built so far in this test binary; its lock is also held by anything else
/// that writes into the runtime's target directory ([`with_builds_held`]).
static BUILT: Mutex<Vec<(String, Backend, PathBuf)>> = Mutex::new(Vec::new());

/// Runs `f` while no build of this test binary runs: for a cargo build into the runtime's
/// target directory, which may rewrite the dependency rlibs a concurrent Rust-path link reads.
pub fn with_builds_held<T>(f: impl FnOnce() -> T) -> T {
    let _held = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    f()
}

/// Builds `source` (relative to the workspace root) with `backend` and returns the executable.
/// Builds of the same source and backend share one executable per test binary.
pub fn build(source: &str, backend: Backend) -> PathBuf {
    // A test that panicked while building leaves the list as it was: still usable.
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, _, exe)) = built.iter().find(|(s, b, _)| s == source && *b == backend) {
        return exe.clone();
    }
    let dir = temp_dir("build");
    let exe = dir.join("app");
    let mut args = vec!["build", source];
    args.extend(backend.flags());
    args.extend(["-o", exe.to_str().unwrap()]);
    let out = nagic(&args);
    assert!(
        out.status.success(),
        "nagic build {source} {} failed:\n{}",
        backend.flags().join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    built.push((source.to_string(), backend, exe.clone()));
    exe
}

/// Declares one `#[test]` per backend for each named function `fn NAME(backend: Backend)`:
/// `rust::NAME` and `llvm::NAME`, so a capability is tested on both emitters by one body.
#[macro_export]
macro_rules! on_every_backend {
    ($($name:ident),* $(,)?) => {
        mod rust {
            $(#[test]
            fn $name() {
                super::$name($crate::support::Backend::Rust)
            })*
        }
        mod llvm {
            $(#[test]
            fn $name() {
                super::$name($crate::support::Backend::Llvm)
            })*
        }
    };
}

/// [`on_every_backend!`] on both database engines: each named function takes a [`Backend`] and
/// an [`Engine`], and runs as `sqlite::rust::NAME`, `sqlite::llvm::NAME`,
/// `postgres::rust::NAME` and `postgres::llvm::NAME`.
#[macro_export]
macro_rules! on_every_backend_and_engine {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $crate::on_every_backend_and_engine!(@engine Sqlite, $($name),*);
        }
        mod postgres {
            $crate::on_every_backend_and_engine!(@engine Postgres, $($name),*);
        }
    };
    (@engine $engine:ident, $($name:ident),*) => {
        mod rust {
            $(#[test]
            fn $name() {
                super::super::$name($crate::support::Backend::Rust, $crate::support::Engine::$engine)
            })*
        }
        mod llvm {
            $(#[test]
            fn $name() {
                super::super::$name($crate::support::Backend::Llvm, $crate::support::Engine::$engine)
            })*
        }
    };
}

/// [`on_every_backend_and_engine!`] and the LLVM emitter with LLVM's optimizations off on SQLite
/// as well (`sqlite::llvm_o0::NAME`).
#[macro_export]
macro_rules! on_every_backend_engine_and_llvm_level {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $crate::on_every_backend_and_engine!(@engine Sqlite, $($name),*);
            mod llvm_o0 {
                $(#[test]
                fn $name() {
                    super::super::$name($crate::support::Backend::LlvmO0, $crate::support::Engine::Sqlite)
                })*
            }
        }
        mod postgres {
            $crate::on_every_backend_and_engine!(@engine Postgres, $($name),*);
        }
    };
}

/// [`on_every_backend!`] and the LLVM emitter with LLVM's optimizations off as well:
/// `rust::NAME`, `llvm::NAME` (`-O2`) and `llvm_o0::NAME`.
#[macro_export]
macro_rules! on_every_backend_and_llvm_level {
    ($($name:ident),* $(,)?) => {
        $crate::on_every_backend!($($name),*);
        mod llvm_o0 {
            $(#[test]
            fn $name() {
                super::$name($crate::support::Backend::LlvmO0)
            })*
        }
    };
}

/// A running service; killed when dropped.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Server {
    /// Starts `exe` on `--db db` with `extra` arguments, its standard output (the log) appended
    /// to `log`, or to a fresh file when `None`. It listens on a port the system picks
    /// (`--listen 127.0.0.1:0`), read back from its log's `listening on` line: a port chosen by
    /// the test could be taken by another test's service before this one binds it.
    pub fn start(exe: &Path, db: &Path, log: Option<&Path>, extra: &[&str]) -> Server {
        Server::start_with_env(exe, db, log, extra, &[])
    }

    /// [`Server::start`] with the environment variables `vars` set for the service.
    pub fn start_with_env(exe: &Path, db: &Path, log: Option<&Path>, extra: &[&str], vars: &[(&str, &str)]) -> Server {
        Server::start_on("127.0.0.1:0", exe, db, log, extra, vars)
    }

    /// [`Server::start_with_env`] listening on `listen` (a port another process shares, with
    /// `--reuse-port`).
    pub fn start_on(
        listen: &str,
        exe: &Path,
        db: &Path,
        log: Option<&Path>,
        extra: &[&str],
        vars: &[(&str, &str)],
    ) -> Server {
        let own_log;
        let log = match log {
            Some(path) => path,
            None => {
                own_log = temp_dir("log").join("stdout.log");
                &own_log
            }
        };
        let file = std::fs::File::options().create(true).append(true).open(log).expect("the log file opens");
        let from = file.metadata().expect("the log's size").len() as usize;
        let mut child = Command::new(exe)
            .args(["--listen", listen, "--db", db.to_str().unwrap()])
            .args(extra)
            .envs(vars.iter().copied())
            .stdout(file)
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the service starts");
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            let text = std::fs::read(log).expect("the log reads");
            let text = String::from_utf8_lossy(text.get(from..).unwrap_or_default());
            if let Some(port) = listening_port(&text) {
                break port;
            }
            assert!(child.try_wait().expect("the service's status").is_none(), "the service ended at start:\n{text}");
            if Instant::now() >= deadline {
                // Not left running behind the failed test (its stderr is the test's).
                let _ = child.kill();
                panic!("the service did not start listening:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Server::adopt(child, port)
    }

    /// Wraps a child started elsewhere (with its own stdio), once it accepts connections.
    pub fn adopt(child: Child, port: u16) -> Server {
        let server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the service did not start listening on port {port}");
            std::thread::sleep(Duration::from_millis(25));
        }
        server
    }

    /// Sends SIGTERM and waits for a graceful exit; returns its exit status.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the service did not stop after SIGTERM");
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Sends one request and returns the status and body.
    pub fn request(&self, method: &str, path: &str, content_type: Option<&str>, body: &str) -> (u16, String) {
        self.raw(&request_bytes(method, path, "", content_type, body))
    }

    /// Sends `json` as [`Server::send_json`] does, with the further header lines `headers`
    /// (each `Name: value\r\n`).
    pub fn send_json_with(&self, method: &str, path: &str, headers: &str, json: &str) -> (u16, String) {
        self.raw(&request_bytes(method, path, headers, Some("application/json"), json))
    }

    /// Like [`Server::send_json_with`], returning the answer's head (status line and headers).
    pub fn head_json_with(&self, method: &str, path: &str, headers: &str, json: &str) -> String {
        self.raw_head(&request_bytes(method, path, headers, Some("application/json"), json))
    }

    /// GET `path`.
    pub fn get(&self, path: &str) -> (u16, String) {
        self.request("GET", path, None, "")
    }

    /// GET `path` with the further header lines `headers` (each `Name: value\r\n`).
    #[allow(dead_code)]
    pub fn get_with(&self, path: &str, headers: &str) -> (u16, String) {
        self.raw(&request_bytes("GET", path, headers, None, ""))
    }

    /// Sends `json` with `Content-Type: application/json`.
    pub fn send_json(&self, method: &str, path: &str, json: &str) -> (u16, String) {
        self.request(method, path, Some("application/json"), json)
    }

    /// Writes raw bytes and returns the response's head (status line and headers) as text.
    pub fn raw_head(&self, bytes: &[u8]) -> String {
        let response = self.exchange(bytes).expect("the service accepts");
        let text = String::from_utf8_lossy(&response);
        text.split("\r\n\r\n").next().unwrap_or("").to_string() + "\r\n"
    }

    /// Writes raw bytes on a new connection and reads until the server closes it; `None` when
    /// the connection is refused.
    fn exchange(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        exchange(self.port, bytes)
    }

    /// Writes raw bytes and parses the response (status, body; chunked responses decoded).
    /// Status 0 means no answer: the connection was refused or closed without a response.
    pub fn raw(&self, bytes: &[u8]) -> (u16, String) {
        raw_on(self.port, bytes)
    }
}

/// GET `path` from the service on `port` (for a thread that does not own the [`Server`]).
pub fn get_on(port: u16, path: &str) -> (u16, String) {
    raw_on(port, &request_bytes("GET", path, "", None, ""))
}

/// [`Server::raw`] on `port`.
fn raw_on(port: u16, bytes: &[u8]) -> (u16, String) {
    match exchange(port, bytes) {
        Some(response) => parse_response(&response),
        None => (0, String::new()),
    }
}

/// Writes raw bytes on a new connection to `port` and reads until the server closes it; `None`
/// when the connection is refused.
fn exchange(port: u16, bytes: &[u8]) -> Option<Vec<u8>> {
    {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        // A server may answer (413, say) and close before it has read a large body, so a
        // failed write is not an error here: the response, if any, is what the test checks.
        let _ = stream.write_all(bytes);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        Some(response)
    }
}

/// Runs the service `exe` on `--db db` (and a port the system picks) to its end, for a service
/// that must stop at start: its exit status and stderr tell why.
pub fn run_to_exit(exe: &Path, db: &Path) -> std::process::Output {
    run_to_exit_with(exe, db, &[])
}

/// [`run_to_exit`] with the further flags `extra`, for a service that a flag must stop at start.
pub fn run_to_exit_with(exe: &Path, db: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(exe).args(["--listen", "127.0.0.1:0", "--db"]).arg(db).args(extra).output().expect("the service runs")
}

/// The count of an LLVM build's `buffers the compiled code still owns at shutdown: N` line in
/// its log, if the log has one.
pub fn owned_at_shutdown(log: &str) -> Option<&str> {
    log.lines().find_map(|l| l.split("still owns at shutdown: ").nth(1)?.split_whitespace().next())
}

/// The port of a service's `listening on http://127.0.0.1:PORT` log line in `log`, if it is
/// there yet.
pub fn listening_port(log: &str) -> Option<u16> {
    let rest = log.split("listening on http://127.0.0.1:").nth(1)?;
    rest.split_whitespace().next()?.parse().ok()
}

/// An HTTP/1.1 request that closes its connection, with the further header lines `headers`.
fn request_bytes(method: &str, path: &str, headers: &str, content_type: Option<&str>, body: &str) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n");
    if let Some(ct) = content_type {
        head.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    if !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH") {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    format!("{head}{body}").into_bytes()
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_response(response: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(response);
    let Some((head, body)) = text.split_once("\r\n\r\n") else { return (0, text.into_owned()) };
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    if !chunked {
        return (status, body.to_string());
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    (status, out)
}
