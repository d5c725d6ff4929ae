//! The contenders: building them (a release `nagic` and the baseline with cargo, then the users
//! service on both emitters with `nagic`), and starting, seeding and stopping their servers,
//! pinned to one CPU.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use super::{cases, client};

/// The route the bench appends to `examples/users.nagi` (the example itself has no echo).
pub const ECHO_ROUTE: &str = "\nroute POST \"/echo\" (body: User) -> User {\n    return body\n}\n";

/// A server the bench runs: which executable, with which extra flags.
#[derive(Clone, Debug)]
pub struct Contender {
    /// Its name in records and tables.
    pub name: &'static str,
    /// The executable.
    pub exe: PathBuf,
    /// Flags after `--listen`, `--db` and `--workers`.
    pub flags: Vec<&'static str>,
}

/// The contenders of a run that names none (`--servers` picks others): all but the metrics and
/// traces ones.
pub const DEFAULT: [&str; 6] =
    ["baseline", "baseline+log", "nagi-rust", "nagi-llvm", "nagi-rust-warn", "nagi-llvm-warn"];

/// Every contender's name, in report order; the first is the baseline of the ratios.
pub const NAMES: [&str; 10] = [
    "baseline",
    "baseline+log",
    "nagi-rust",
    "nagi-llvm",
    "nagi-rust-warn",
    "nagi-llvm-warn",
    "nagi-rust-metrics",
    "nagi-llvm-metrics",
    "nagi-rust-traces",
    "nagi-llvm-traces",
];

/// What a contender is, for the report.
pub fn describe(name: &str) -> &'static str {
    match name {
        "baseline" => "hand-written Axum 0.8 + rusqlite (`bench/http-baseline`), no per-request log",
        "baseline+log" => {
            "the same with `--access-log`: one `tracing` line per request through `tracing-appender`'s non-blocking writer"
        }
        "nagi-rust" => {
            "examples/users.nagi (+ `POST /echo`) built with `--backend=rust`, `--log info` (the default: one line per request)"
        }
        "nagi-llvm" => "the same built with `--backend=llvm` (`--llvm-opt=2`), `--log info`",
        "nagi-rust-warn" => "the Rust-built service with `--log warn` (no request lines)",
        "nagi-llvm-warn" => "the LLVM-built service with `--log warn`",
        "nagi-rust-metrics" => {
            "the Rust-built service with `--log info` and `--metrics-listen` (metrics recorded, not scraped)"
        }
        "nagi-llvm-metrics" => "the LLVM-built service with `--log info` and `--metrics-listen`",
        "nagi-rust-traces" => {
            "the Rust-built service with `--log info` and `--otlp-endpoint` (every request traced, sent to the bench's OTLP sink)"
        }
        "nagi-llvm-traces" => "the LLVM-built service with `--log info` and `--otlp-endpoint`",
        _ => "",
    }
}

/// The executables a run uses.
#[derive(Clone, Debug)]
pub struct Builds {
    /// The release `nagic`.
    pub nagic: PathBuf,
    /// The baseline.
    pub baseline: PathBuf,
    /// The users service built with the Rust emitter.
    pub nagi_rust: PathBuf,
    /// The users service built with the LLVM emitter.
    pub nagi_llvm: PathBuf,
}

impl Builds {
    /// The contender called `name`.
    pub fn contender(&self, name: &'static str) -> Contender {
        let (exe, flags) = match name {
            "baseline" => (&self.baseline, vec![]),
            "baseline+log" => (&self.baseline, vec!["--access-log"]),
            "nagi-rust" => (&self.nagi_rust, vec!["--log", "info"]),
            "nagi-llvm" => (&self.nagi_llvm, vec!["--log", "info"]),
            "nagi-rust-warn" => (&self.nagi_rust, vec!["--log", "warn"]),
            "nagi-llvm-warn" => (&self.nagi_llvm, vec!["--log", "warn"]),
            "nagi-rust-metrics" => (&self.nagi_rust, vec!["--log", "info", "--metrics-listen", "127.0.0.1:0"]),
            "nagi-llvm-metrics" => (&self.nagi_llvm, vec!["--log", "info", "--metrics-listen", "127.0.0.1:0"]),
            "nagi-rust-traces" => {
                (&self.nagi_rust, vec!["--log", "info", "--otlp-endpoint", super::otlp_sink::endpoint()])
            }
            "nagi-llvm-traces" => {
                (&self.nagi_llvm, vec!["--log", "info", "--otlp-endpoint", super::otlp_sink::endpoint()])
            }
            other => unreachable!("no contender {other}"),
        };
        Contender { name, exe: exe.clone(), flags }
    }
}

/// Builds `nagic` and the baseline in release mode (cargo, in the target directory cargo is
/// given: `CARGO_TARGET_DIR` or the workspace's), then the users service with the echo route on
/// both emitters into `run_dir/bin/`.
pub fn build(root: &Path, run_dir: &Path) -> Result<Builds, String> {
    eprintln!("nagi-bench: building nagic and the baseline (release)");
    // Two cargo calls, so that each package keeps its own features of the shared dependencies
    // (the baseline turns on Axum's `json` and `query`; built together, `nagic` would be
    // rebuilt with them).
    let nagic = cargo_build(root, "nagic", "nagic", true)?;
    let baseline = cargo_build(root, "nagi-http-baseline", "http-baseline", true)?;
    let source = run_dir.join("users-bench.nagi");
    let example =
        std::fs::read_to_string(root.join("examples/users.nagi")).map_err(|e| format!("examples/users.nagi: {e}"))?;
    std::fs::write(&source, example + ECHO_ROUTE).map_err(|e| e.to_string())?;
    let bin = run_dir.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    let service = |backend: &str| -> Result<PathBuf, String> {
        let out = bin.join(format!("users-{backend}"));
        eprintln!("nagi-bench: nagic build --backend={backend} users-bench.nagi");
        let status = Command::new(&nagic)
            .current_dir(root)
            .arg("build")
            .arg(format!("--backend={backend}"))
            .arg(&source)
            .arg("-o")
            .arg(&out)
            .status()
            .map_err(|e| format!("cannot run {}: {e}", nagic.display()))?;
        if status.success() { Ok(out) } else { Err(format!("nagic build --backend={backend} failed")) }
    };
    let nagi_rust = service("rust")?;
    let nagi_llvm = service("llvm")?;
    Ok(Builds { nagic, baseline, nagi_rust, nagi_llvm })
}

/// `cargo build -p PACKAGE` (with `--release` when `release`) and the path of its executable
/// `bin`.
pub(crate) fn cargo_build(root: &Path, package: &str, bin: &str, release: bool) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(root)
        .arg("build")
        .args(release.then_some("--release"))
        .args(["-p", package, "--bin", bin, "--message-format=json-render-diagnostics"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if !output.status.success() {
        return Err(format!("building {package} failed"));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == bin)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or(format!("cargo built {package} but did not report the executable {bin}"))
}

/// A free port on the loopback interface (bound and released; a race with another process is
/// possible but unlikely).
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

/// A running server; dropping it stops it.
pub struct Server {
    /// The contender's name.
    pub name: &'static str,
    /// Its process id (taskset and valgrind exec the server, so this is the server's own).
    pub pid: u32,
    /// Where it listens.
    pub address: SocketAddr,
    /// How long a stop waits after SIGTERM before SIGKILL.
    grace: Duration,
    child: Child,
}

/// Where a server's stdout (its log) goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stdout {
    /// /dev/null: the sink that never slows the writer.
    Null,
    /// A pipe whose read end the bench holds ([`Server::take_stdout`]); whoever holds it decides
    /// how fast the log drains. Left in the server, it is read by nobody and closed when the
    /// server has stopped.
    Pipe,
}

/// Starts `contender` with one worker, pinned to `cpu` when given (`taskset`, which execs the
/// server), on a free port and the database `db` (a new file), stdout to `stdout` and stderr
/// to `stderr`; waits until it answers.
pub fn start(
    contender: &Contender,
    cpu: Option<u32>,
    db: &Path,
    stdout: Stdout,
    stderr: File,
) -> Result<Server, String> {
    let wrapper = match cpu {
        Some(cpu) => vec!["taskset".to_string(), "-c".to_string(), cpu.to_string()],
        None => Vec::new(),
    };
    start_under(contender, &wrapper, db, stdout, stderr, Duration::from_secs(20), Duration::from_secs(5))
}

/// Starts `contender` as [`start`] does, run by the program and arguments of `wrapper` when it
/// is not empty (one that keeps the server's process id, as `taskset`, which execs it, and
/// `valgrind` do), and waits up to `ready` for its first answer; a stop waits `grace` for the
/// graceful shutdown (under valgrind it includes writing the profile).
pub fn start_under(
    contender: &Contender,
    wrapper: &[String],
    db: &Path,
    stdout: Stdout,
    stderr: File,
    ready: Duration,
    grace: Duration,
) -> Result<Server, String> {
    let address: SocketAddr = format!("127.0.0.1:{}", free_port()?).parse().map_err(|e| format!("{e}"))?;
    let mut command = match wrapper.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(&contender.exe);
            c
        }
        None => Command::new(&contender.exe),
    };
    let child = command
        .args(["--listen", &address.to_string(), "--db"])
        .arg(db)
        .args(["--workers", "1"])
        .args(&contender.flags)
        .stdin(Stdio::null())
        .stdout(match stdout {
            Stdout::Null => Stdio::null(),
            Stdout::Pipe => Stdio::piped(),
        })
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", contender.exe.display()))?;
    let server = Server { name: contender.name, pid: child.id(), address, grace, child };
    client::wait_ready(address, ready).map_err(|e| format!("{}: {e}", contender.name))?;
    Ok(server)
}

impl Server {
    /// The read end of the server's stdout when it was started with [`Stdout::Pipe`] (once;
    /// `None` after that, or for /dev/null). Until taken, the read end stays open, unread, for
    /// as long as the server runs.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Writes users 1 to [`cases::SEEDED`] through `POST /users`.
    pub fn seed(&self) -> Result<(), String> {
        for id in 1..=cases::SEEDED {
            let answer = client::request(self.address, "POST", "/users", Some(&cases::seed_user(id)))?;
            if answer.status != 201 {
                return Err(format!("{}: seeding user {id} answered {}: {}", self.name, answer.status, answer.body));
            }
        }
        Ok(())
    }

    /// Stops the server with SIGTERM (its graceful shutdown), or SIGKILL after its grace (5 s
    /// unless [`start_under`] was given another). The read end
    /// of a piped stdout that was not taken is closed after the server has exited.
    pub fn stop(mut self) -> Result<(), String> {
        self.terminate()
    }

    fn terminate(&mut self) -> Result<(), String> {
        if self.child.try_wait().map_err(|e| e.to_string())?.is_some() {
            return Ok(());
        }
        let _ = Command::new("kill").args(["-TERM", &self.pid.to_string()]).status();
        let deadline = Instant::now() + self.grace;
        while Instant::now() < deadline {
            if self.child.try_wait().map_err(|e| e.to_string())?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        Err(format!("{} did not stop within 5 s of SIGTERM; killed", self.name))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.terminate();
    }
}
