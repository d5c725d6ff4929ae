//! `nagi-bench http`: the users service as a user would run it — built by `nagic` on both
//! emitters, against a hand-written Axum + rusqlite baseline with and without an access log —
//! under `wrk`, every server pinned to CPU 0 with one worker and wrk pinned to CPU 1.
//!
//! A run: build (release `nagic`, the baseline, the service on both emitters), then per round
//! start every server on a fresh database, seed 100 users, check every case's answer on every
//! server (a mismatch stops the run before any timing), then for each case time the servers
//! one after the other in an order rotated per case and round (a warm-up, then the measured
//! run), and stop them. The records, wrk's outputs, the report and the chart go to
//! `bench/results/DATE-TIME/`. See `bench/README.md` ("The HTTP bench").
//!
//! Three other modes share the build, the servers and the records: `--soak SECS` ([`soak`]: one
//! long run per server, its memory and open files watched), `--sinks` ([`sinks`]: the Nagi
//! servers with their log going to a fast, a throttled and a stalled stdout) and
//! `--instructions N` ([`instructions`]: each server under callgrind, its instructions per
//! request counted).

pub mod cases;
pub mod chart;
pub mod client;
pub mod instructions;
pub mod otlp_sink;
pub mod procfs;
pub mod profile;
pub mod report;
pub mod server;
pub mod sinks;
pub mod soak;
pub mod wrk;

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::machine::Machine;
use cases::Case;
use server::{Builds, Server};

/// The CPU the servers are pinned to.
pub const SERVER_CPU: u32 = 0;

/// Which run `nagi-bench http` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every case on every server, timed and compared (the default).
    Compare,
    /// `--soak SECS`: the 4 KiB echo for SECS seconds per server, its RSS and open files
    /// watched ([`soak`]).
    Soak(Duration),
    /// `--sinks`: the Nagi servers' throughput with stdout to /dev/null, a throttled pipe and a
    /// stalled pipe, and their log queue's peak ([`sinks`]).
    Sinks,
    /// `--instructions N`: each server's instructions per request over N requests of each case,
    /// under callgrind ([`instructions`]).
    Instructions(u64),
}

/// What `nagi-bench http` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// Which run.
    pub mode: Mode,
    /// Rounds (every server and case once per round).
    pub rounds: u32,
    /// Length of each measured run.
    pub duration: Duration,
    /// Length of the warm-up before each measured run.
    pub warmup: Duration,
    /// A smoke run (1 round of 1 s): not a measurement.
    pub quick: bool,
    /// The cases to run.
    pub cases: Vec<Case>,
    /// The servers to run.
    pub servers: Vec<&'static str>,
    /// wrk's threads, connections and CPU.
    pub load: wrk::Load,
    /// Also write the result into `bench/README.md` and `bench/reference/`.
    pub reference: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            mode: Mode::Compare,
            rounds: 3,
            duration: Duration::from_secs(5),
            warmup: Duration::from_secs(1),
            quick: false,
            cases: cases::CASES.to_vec(),
            servers: server::DEFAULT.to_vec(),
            load: wrk::Load { threads: 2, connections: 64, cpu: 1 },
            reference: false,
        }
    }
}

/// The usage line of `nagi-bench http`.
pub const USAGE: &str = "nagi-bench http [--soak SECS | --sinks | --instructions N] [--rounds N] [--duration SECS] [--warmup SECS] [--quick] [--cases a,b] [--servers a,b] [--connections N] [--threads N] [--reference]";

/// The flags that only the timed runs (the comparison and `--sinks`) take.
const TIMED_FLAGS: [&str; 5] = ["--rounds", "--duration", "--warmup", "--quick", "--cases"];

/// Parses the arguments after `http`. The servers, cases and connections a flag does not set
/// are the mode's defaults ([`soak`] and [`sinks`] have their own).
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut options = Options::default();
    let (mut servers, mut list, mut connections) = (None, None, None);
    let mut given = Vec::new();
    let mut args = args.into_iter();
    let seconds = |v: Option<String>, flag: &str| -> Result<Duration, String> {
        let s: u64 = v
            .and_then(|v| v.parse().ok())
            .filter(|s| *s > 0)
            .ok_or(format!("{flag} needs a whole number of seconds"))?;
        Ok(Duration::from_secs(s))
    };
    let number = |v: Option<String>, flag: &str| -> Result<u32, String> {
        v.and_then(|v| v.parse().ok()).filter(|n| *n > 0).ok_or(format!("{flag} needs a positive number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--soak" | "--sinks" | "--instructions" => {
                if options.mode != Mode::Compare {
                    return Err("--soak, --sinks and --instructions are three runs; choose one".into());
                }
                options.mode = match arg.as_str() {
                    "--soak" => Mode::Soak(seconds(args.next(), "--soak")?),
                    "--sinks" => Mode::Sinks,
                    _ => Mode::Instructions(u64::from(number(args.next(), "--instructions")?)),
                };
            }
            "--rounds" => options.rounds = number(args.next(), "--rounds")?,
            "--duration" => options.duration = seconds(args.next(), "--duration")?,
            "--warmup" => options.warmup = seconds(args.next(), "--warmup")?,
            "--connections" => connections = Some(number(args.next(), "--connections")?),
            "--threads" => options.load.threads = number(args.next(), "--threads")?,
            "--quick" => {
                options.quick = true;
                options.rounds = 1;
                options.duration = Duration::from_secs(1);
            }
            "--reference" => options.reference = true,
            "--cases" => {
                let names = args.next().ok_or("--cases needs a list")?;
                list = Some(
                    names
                        .split(',')
                        .map(|n| cases::case(n).ok_or(format!("no case `{n}`; cases: {}", case_names())))
                        .collect::<Result<Vec<_>, _>>()?,
                );
            }
            "--servers" => {
                let names = args.next().ok_or("--servers needs a list")?;
                servers = Some(
                    names
                        .split(',')
                        .map(|n| {
                            server::NAMES
                                .iter()
                                .copied()
                                .find(|s| *s == n)
                                .ok_or(format!("no server `{n}`; servers: {}", server::NAMES.join(",")))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                );
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
        given.push(arg);
    }
    let named = |names: &[&str]| names.iter().filter_map(|n| cases::case(n)).collect::<Vec<_>>();
    let (default_servers, default_cases, default_connections) = match options.mode {
        Mode::Compare => (server::DEFAULT.to_vec(), cases::CASES.to_vec(), options.load.connections),
        Mode::Soak(_) => {
            if let Some(flag) = given.iter().find(|g| TIMED_FLAGS.contains(&g.as_str())) {
                return Err(format!(
                    "--soak runs `{}` once per server for SECS seconds; it takes no {flag}",
                    soak::CASE
                ));
            }
            (soak::SERVERS.to_vec(), named(&[soak::CASE]), soak::CONNECTIONS)
        }
        Mode::Sinks => {
            if let Some(other) = servers.iter().flatten().find(|s| !sinks::is_nagi(s)) {
                return Err(format!(
                    "--sinks runs only Nagi servers (they report their log queue); `{other}` is not one"
                ));
            }
            (sinks::SERVERS.to_vec(), named(&sinks::CASES), options.load.connections)
        }
        Mode::Instructions(_) => {
            let untimed = |g: &&String| {
                TIMED_FLAGS[..4].contains(&g.as_str()) || ["--connections", "--threads"].contains(&g.as_str())
            };
            if let Some(flag) = given.iter().find(untimed) {
                return Err(format!(
                    "--instructions counts requests on one connection, it does not time them; it takes no {flag}"
                ));
            }
            (instructions::SERVERS.to_vec(), cases::CASES.to_vec(), options.load.connections)
        }
    };
    options.servers = servers.unwrap_or(default_servers);
    options.cases = list.unwrap_or(default_cases);
    options.load.connections = connections.unwrap_or(default_connections);
    Ok(options)
}

fn case_names() -> String {
    cases::CASES.iter().map(|c| c.name).collect::<Vec<_>>().join(",")
}

/// Stops with a clear message when wrk or taskset is missing, or there is no second CPU for
/// wrk.
pub fn preflight(load: &wrk::Load) -> Result<(), String> {
    let runs = |program: &str, args: &[&str]| {
        Command::new(program).args(args).stdout(Stdio::null()).stderr(Stdio::null()).status()
    };
    if runs("wrk", &["-v"]).is_err() {
        return Err("`wrk` is not installed (Debian/Ubuntu: `apt-get install wrk`); the HTTP bench needs it".into());
    }
    for cpu in [SERVER_CPU, load.cpu] {
        match runs("taskset", &["-c", &cpu.to_string(), "true"]) {
            Err(_) => return Err("`taskset` is not installed (Debian/Ubuntu: `apt-get install util-linux`); the HTTP bench pins servers and wrk with it".into()),
            Ok(s) if !s.success() => return Err(format!("`taskset -c {cpu}` fails: the bench needs CPUs {SERVER_CPU} and {} (servers, wrk)", load.cpu)),
            Ok(_) => {}
        }
    }
    Ok(())
}

/// wrk's version line (`wrk 4.1.0 [epoll] …`).
fn wrk_version() -> String {
    Command::new("wrk")
        .arg("-v")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.split(" Copyright").next().unwrap_or(l).trim().to_string())
        })
        .unwrap_or_else(|| "wrk (version unknown)".into())
}

/// Appends records to the run's `http.jsonl`.
struct Records {
    file: File,
    all: Vec<Value>,
}

impl Records {
    fn push(&mut self, record: Value) -> Result<(), String> {
        writeln!(self.file, "{record}").map_err(|e| e.to_string())?;
        self.all.push(record);
        Ok(())
    }
}

/// What every mode prepares before its first server starts.
struct Setup {
    /// The workspace.
    root: PathBuf,
    /// `bench/results/DATE-TIME/`, with `wrk/`, `logs/` and `scripts/` made.
    run_dir: PathBuf,
    /// The machine, for the report.
    machine: Machine,
    /// wrk's version line, for the report.
    wrk_version: String,
    /// The executables.
    builds: Builds,
    /// `http.jsonl` of the run.
    records: Records,
    /// Today, `YYYY-MM-DD` (UTC).
    date: String,
}

/// Checks the tools, makes the run's directory, records the machine and builds the servers.
fn setup(options: &Options) -> Result<Setup, String> {
    // Counting instructions needs callgrind, not wrk or a second CPU.
    match options.mode {
        Mode::Instructions(_) => instructions::preflight()?,
        _ => preflight(&options.load)?,
    }
    let root = crate::runner::root();
    let machine =
        Machine::detect(Some(&format!("taskset -c {SERVER_CPU} (servers), taskset -c {} (wrk)", options.load.cpu)));
    let run_dir = root.join("bench/results").join(crate::runner::date("+%Y%m%d-%H%M%S"));
    for sub in ["", "wrk", "logs", "scripts"] {
        std::fs::create_dir_all(run_dir.join(sub)).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    }
    let wrk_version = wrk_version();
    let mut machine_json = machine.to_json();
    machine_json["wrk"] = json!(wrk_version);
    std::fs::write(run_dir.join("machine.json"), format!("{machine_json:#}\n")).map_err(|e| e.to_string())?;
    eprintln!("nagi-bench: results go to {}", run_dir.display());
    eprintln!("nagi-bench: machine: {}; {wrk_version}", machine.line());
    let builds = server::build(&root, &run_dir)?;
    let file = File::create(run_dir.join("http.jsonl")).map_err(|e| e.to_string())?;
    let records = Records { file, all: Vec::new() };
    let date = crate::runner::date("+%Y-%m-%d");
    Ok(Setup { root, run_dir, machine, wrk_version, builds, records, date })
}

/// Writes each case's wrk script (the POSTs') into `scripts/` of the run; the paths, `None`
/// for a case without one, in the order of `list`.
fn write_scripts(run_dir: &Path, list: &[Case]) -> Result<Vec<Option<PathBuf>>, String> {
    let mut scripts = Vec::new();
    for case in list {
        let path = cases::script(case).map(|text| {
            let path = run_dir.join("scripts").join(format!("{}.lua", case.name));
            std::fs::write(&path, text).map(|()| path)
        });
        scripts.push(path.transpose().map_err(|e| e.to_string())?);
    }
    Ok(scripts)
}

/// Writes `report.md` of the run and, with `--reference`, copies the run's `charts` to
/// `bench/reference/` and writes the report as the block between `markers` of
/// `bench/README.md`. `render(dir)` is the report with its charts linked as `{dir}NAME`.
fn publish(
    setup: &Setup,
    reference: bool,
    markers: (&str, &str),
    charts: &[&str],
    render: impl Fn(&str) -> String,
) -> Result<(), String> {
    std::fs::write(setup.run_dir.join("report.md"), render("")).map_err(|e| e.to_string())?;
    if reference {
        let dir = setup.root.join("bench/reference");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        for chart in charts {
            std::fs::copy(setup.run_dir.join(chart), dir.join(chart)).map_err(|e| format!("{chart}: {e}"))?;
        }
        crate::runner::update_block(&setup.root.join("bench/README.md"), markers.0, markers.1, &render("reference/"))?;
        eprintln!("nagi-bench: wrote the block {} of bench/README.md", markers.0);
    }
    eprintln!("nagi-bench: report: {}", setup.run_dir.join("report.md").display());
    Ok(())
}

/// Runs the bench in the mode `options` ask for; returns the directory of this run's results.
pub fn run(options: &Options) -> Result<PathBuf, String> {
    let mut setup = setup(options)?;
    match options.mode {
        Mode::Compare => compare(options, &mut setup)?,
        Mode::Soak(seconds) => soak::run(options, seconds, &mut setup)?,
        Mode::Sinks => sinks::run(options, &mut setup)?,
        Mode::Instructions(n) => instructions::run(options, n, &mut setup)?,
    }
    Ok(setup.run_dir)
}

/// The markers around the generated HTTP block in `bench/README.md`.
pub const BEGIN: &str = "<!-- http-reference:begin (generated by `nagi-bench http --reference`) -->";
/// The end marker.
pub const END: &str = "<!-- http-reference:end -->";

/// The comparison: every round, then the report, the chart and, with `--reference`, the
/// README block.
fn compare(options: &Options, setup: &mut Setup) -> Result<(), String> {
    let scripts = write_scripts(&setup.run_dir, &options.cases)?;
    let mut invocation = 0;
    for round in 1..=options.rounds {
        eprintln!("nagi-bench: round {round} of {}", options.rounds);
        run_round(options, setup, round, &scripts, &mut invocation)?;
    }
    let summaries = report::summarize(&setup.records.all);
    let title = format!(
        "users service under wrk -t{} -c{}: median req/s ({})",
        options.load.threads, options.load.connections, setup.date
    );
    chart::draw(&setup.run_dir.join("http.svg"), &title, &summaries)?;
    publish(setup, options.reference, (BEGIN, END), &["http.svg"], |dir| {
        render(&setup.date, &setup.machine, &setup.wrk_version, options, &summaries, &format!("{dir}http.svg"))
    })
}

/// One round: fresh databases, start and seed every server, check, time every case, stop.
fn run_round(
    options: &Options,
    setup: &mut Setup,
    round: u32,
    scripts: &[Option<PathBuf>],
    invocation: &mut u64,
) -> Result<(), String> {
    let db_dir = setup.run_dir.join(format!("db-r{round}"));
    std::fs::create_dir_all(&db_dir).map_err(|e| e.to_string())?;
    let mut servers = Vec::new();
    for name in &options.servers {
        let log = setup.run_dir.join("logs").join(format!("{}-r{round}.stderr", file_name(name)));
        let db = db_dir.join(format!("{}.db", file_name(name)));
        let server = start_pinned(&setup.builds, name, &db, server::Stdout::Null, &log)?;
        server.seed()?;
        servers.push(server);
    }
    check(&servers, &options.cases, round, None, &mut setup.records)?;
    for (k, (case, script)) in options.cases.iter().zip(scripts).enumerate() {
        let n = servers.len();
        for order in 0..n {
            let server = &servers[(order + k + round as usize) % n];
            let record =
                measure(options, server, server.name, case, script.as_deref(), invocation, &setup.run_dir, round)?;
            setup.records.push(record.with_order(order))?;
        }
    }
    for server in servers {
        server.stop()?;
    }
    std::fs::remove_dir_all(&db_dir).map_err(|e| e.to_string())?;
    Ok(())
}

/// A name as a piece of a file name: anything but letters, digits and `-` becomes `-`
/// (`baseline+log` → `baseline-log`, `nagi-rust@stalled` → `nagi-rust-stalled`).
fn file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect()
}

/// Starts the server `name` pinned to [`SERVER_CPU`] on the new database `db`, its stdout to
/// `stdout` and its stderr to the new file `log` (not seeded yet: [`Server::seed`]).
fn start_pinned(
    builds: &Builds,
    name: &'static str,
    db: &Path,
    stdout: server::Stdout,
    log: &Path,
) -> Result<Server, String> {
    let stderr = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    server::start(&builds.contender(name), Some(SERVER_CPU), db, stdout, stderr)
}

/// Sends each case's check request to every server; any answer other than the expected status
/// and body stops the run, naming the server and the case. `tag`, a (field, value), is added to
/// every record when given (the sink of a `--sinks` server).
fn check(
    servers: &[Server],
    list: &[Case],
    round: u32,
    tag: Option<(&str, &str)>,
    records: &mut Records,
) -> Result<(), String> {
    for server in servers {
        for case in list {
            let (ok, answer) = check_answer(server, case)?;
            let (status, body) = cases::expected(case);
            let mut record = json!({
                "kind": "check", "server": server.name, "case": case.name, "round": round, "ok": ok,
                "status": answer.status, "expected_status": status, "body_matches": answer.body == body,
            });
            if let Some((field, value)) = tag {
                record[field] = json!(value);
            }
            records.push(record)?;
            if !ok {
                let shown: String = answer.body.chars().take(300).collect();
                return Err(format!(
                    "{} answered {} {} with {} {shown:?}; expected {status} and the bench's body",
                    server.name, case.method, case.path, answer.status
                ));
            }
        }
    }
    Ok(())
}

/// Sends `case`'s check request to `server`; whether the answer has the expected status, a
/// JSON content type and exactly the expected body, and the answer.
pub fn check_answer(server: &Server, case: &Case) -> Result<(bool, client::Answer), String> {
    let answer = client::request(server.address, case.method, case.path, cases::body(case).as_deref())?;
    let (status, body) = cases::expected(case);
    let json = answer.content_type.as_deref().is_some_and(|t| t.starts_with("application/json"));
    Ok((answer.status == status && json && answer.body == body, answer))
}

/// A `run` record under construction.
struct RunRecord(Value);

impl RunRecord {
    fn with_order(mut self, order: usize) -> Value {
        self.0["order"] = json!(order);
        self.0
    }
}

/// Warms `server` up on `case`, then measures it: wrk's figures, the server's CPU over the
/// measured run, its peak RSS over the warm-up and the run. `label` names the run in the
/// progress line and wrk's output file (the server's name, or more when one server runs in
/// several setups).
#[allow(clippy::too_many_arguments)]
fn measure(
    options: &Options,
    server: &Server,
    label: &str,
    case: &Case,
    script: Option<&Path>,
    invocation: &mut u64,
    run_dir: &Path,
    round: u32,
) -> Result<RunRecord, String> {
    let url = format!("http://{}{}", server.address, case.path);
    let mut next_args = || {
        *invocation += 1;
        vec![(cases::WRK_ID_BASE + *invocation as i64 * 1_000_000_000).to_string()]
    };
    let reset = procfs::reset_peak(server.pid);
    let warm_args = next_args();
    let warmup = options.warmup.min(options.duration);
    wrk::run(&options.load, &url, warmup, script.map(|p| (p, warm_args.as_slice())))?;
    let args = next_args();
    let before = procfs::cpu_ticks(server.pid).ok_or(format!("{} has exited", server.name))?;
    let start = Instant::now();
    let run = wrk::run(&options.load, &url, options.duration, script.map(|p| (p, args.as_slice())))?;
    let wall = start.elapsed().as_secs_f64();
    let after = procfs::cpu_ticks(server.pid).ok_or(format!("{} has exited", server.name))?;
    let rss = procfs::peak_rss_kib(server.pid);
    let name = format!("r{round}-{}-{}.txt", case.name, file_name(label));
    std::fs::write(run_dir.join("wrk").join(name), &run.output).map_err(|e| e.to_string())?;
    let r = &run.result;
    let cpu_pct = procfs::ticks_to_secs(after.saturating_sub(before)) / wall * 100.0;
    eprintln!(
        "nagi-bench: r{round} {:<10} {label:<19} {:>9.0} req/s  p50 {:>7.0} µs  p99 {:>7.0} µs  cpu {cpu_pct:>3.0}%  wrk {:>3.0}%  non-2xx {}  socket errors {}",
        case.name,
        r.rps,
        r.p50_us,
        r.p99_us,
        run.wrk_cpu_pct,
        r.non2xx,
        r.socket_error_total()
    );
    Ok(RunRecord(json!({
        "kind": "run", "server": server.name, "case": case.name, "round": round,
        "rps": r.rps, "p50_us": r.p50_us, "p99_us": r.p99_us, "requests": r.requests, "seconds": r.seconds,
        "non2xx": r.non2xx, "socket_errors": r.socket_errors, "cpu_pct": cpu_pct,
        "peak_rss_kib": rss, "peak_reset": reset, "wrk_cpu_pct": run.wrk_cpu_pct,
    })))
}

/// The report: date, machine, method, the req/s matrix, the LLVM/Rust matrix, the chart and
/// the full table. `chart` is the chart's path relative to the report.
fn render(
    date: &str,
    machine: &Machine,
    wrk_version: &str,
    options: &Options,
    s: &report::Summaries,
    chart: &str,
) -> String {
    let mut out = format!("Measured {date} on: {}; {wrk_version}.\n\n", machine.line());
    if options.quick {
        out.push_str("**Quick run (`--quick`): a smoke test, not a measurement.**\n\n");
    }
    out.push_str(&format!(
        "Method: every server pinned to CPU {SERVER_CPU} (`taskset`) with 1 Tokio worker, stdout to /dev/null, each on its \
         own fresh SQLite file per round seeded with users 1–{}; `wrk -t{} -c{} --latency` pinned to CPU {}. Every case's \
         answer is checked on every server (status and body) before any timing. Per round, per case, the servers run \
         one after the other in an order rotated per case and round: a {} s warm-up, then a {} s measured run. {} round(s); \
         every figure is the median over the rounds (p50/p99: the median of the rounds' percentiles, not a merged \
         histogram). Server CPU: utime+stime of the server process over the measured run (/proc/PID/stat), % of one CPU. \
         Peak RSS: VmHWM after the run, reset before the warm-up (`/proc/PID/clear_refs`). wrk CPU: sampled every 100 ms. \
         `POST /users` writes a fresh id per request (`scripts/post-users.lua` of the run).\n\n",
        cases::SEEDED, options.load.threads, options.load.connections, options.load.cpu,
        options.warmup.min(options.duration).as_secs_f64(), options.duration.as_secs_f64(), options.rounds
    ));
    for (i, name) in server::NAMES.iter().filter(|n| s.contains_key(**n)).enumerate() {
        out.push_str(&format!("{}`{name}`: {}", if i == 0 { "Servers: " } else { "; " }, server::describe(name)));
    }
    out.push_str(".\n\nMedian req/s, and the ratio to `baseline` (higher is faster):\n\n");
    out.push_str(&report::rps_matrix(s));
    out.push_str(&format!(
        "\nThe LLVM-built Nagi as a ratio of the Rust-built: per log level, the ratio of the median req/s, then the \
         median of each round's ratio (the two servers of a round run within one pass over the servers, so the host's drift between \
         rounds cancels); **bold**: below {:.2}:\n\n",
        report::LLVM_FLOOR
    ));
    out.push_str(&report::llvm_matrix(s));
    let short = report::llvm_shortfalls(s);
    if short.is_empty() {
        out.push_str(&format!(
            "\nThe LLVM-built Nagi reaches {:.2}× of the Rust-built on every case here.\n",
            report::LLVM_FLOOR
        ));
    } else {
        let list: Vec<String> = short.iter().map(|(l, c, r)| format!("{c} at {l} ({r:.3})")).collect();
        out.push_str(&format!("\nBelow {:.2}×: {}.\n", report::LLVM_FLOOR, list.join("; ")));
    }
    out.push_str(&format!(
        "\n![median req/s per case and server]({chart})\n\nEvery figure (medians over the rounds; errors summed):\n\n"
    ));
    out.push_str(&report::full_table(s));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &str) -> Result<Options, String> {
        parse_args(args.split_whitespace().map(str::to_string))
    }

    fn names(list: &[Case]) -> Vec<&'static str> {
        list.iter().map(|c| c.name).collect()
    }

    #[test]
    fn modes_and_their_defaults() {
        let compare = parse("").unwrap();
        assert_eq!((compare.mode, compare.servers.len(), compare.cases.len()), (Mode::Compare, 6, 6));
        assert_eq!(compare.load.connections, 64);

        let soak = parse("--soak 120").unwrap();
        assert_eq!(soak.mode, Mode::Soak(Duration::from_secs(120)));
        assert_eq!(
            (soak.servers, names(&soak.cases), soak.load.connections),
            (soak::SERVERS.to_vec(), vec!["echo-4k"], 128)
        );
        let soak = parse("--connections 32 --soak 3 --servers nagi-llvm --reference").unwrap();
        assert_eq!((soak.servers, soak.load.connections, soak.reference), (vec!["nagi-llvm"], 32, true));
        assert!(parse("--soak").unwrap_err().contains("whole number of seconds"));
        assert!(parse("--soak 0").is_err());
        assert!(parse("--soak 3 --rounds 2").unwrap_err().contains("takes no --rounds"));
        assert!(parse("--cases health --soak 3").unwrap_err().contains("takes no --cases"));

        let sinks = parse("--sinks --quick").unwrap();
        assert_eq!(
            (sinks.mode, sinks.servers, names(&sinks.cases)),
            (Mode::Sinks, sinks::SERVERS.to_vec(), vec!["health", "echo"])
        );
        assert_eq!((sinks.rounds, sinks.duration, sinks.load.connections), (1, Duration::from_secs(1), 64));
        let sinks = parse("--cases echo-4k --sinks --servers nagi-rust-warn").unwrap();
        assert_eq!((sinks.servers, names(&sinks.cases)), (vec!["nagi-rust-warn"], vec!["echo-4k"]));
        assert!(parse("--sinks --servers nagi-rust,baseline").unwrap_err().contains("`baseline` is not one"));
        assert!(parse("--sinks --soak 3").unwrap_err().contains("choose one"));
        assert!(parse("--soak 3 --sinks").unwrap_err().contains("choose one"));

        let counted = parse("--instructions 2000").unwrap();
        assert_eq!(
            (counted.mode, counted.servers, counted.cases.len()),
            (Mode::Instructions(2000), instructions::SERVERS.to_vec(), 6)
        );
        let counted = parse("--cases health,get-user --instructions 10 --servers nagi-llvm").unwrap();
        assert_eq!((counted.servers, names(&counted.cases)), (vec!["nagi-llvm"], vec!["health", "get-user"]));
        assert!(parse("--instructions 0").unwrap_err().contains("positive number"));
        assert!(parse("--instructions 10 --rounds 2").unwrap_err().contains("takes no --rounds"));
        assert!(parse("--connections 8 --instructions 10").unwrap_err().contains("takes no --connections"));
        assert!(parse("--instructions 10 --sinks").unwrap_err().contains("choose one"));
        assert!(parse("--sink").unwrap_err().contains("unknown argument"));
    }

    /// `--reference` of every run writes between its markers in `bench/README.md`.
    #[test]
    fn the_readme_has_every_runs_markers() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
        for (begin, end) in [
            (BEGIN, END),
            (soak::BEGIN, soak::END),
            (sinks::BEGIN, sinks::END),
            (instructions::BEGIN, instructions::END),
        ] {
            let (start, stop) = (readme.find(begin), readme.find(end));
            assert!(start.is_some() && stop.is_some() && start < stop, "{begin} … {end}");
        }
    }

    #[test]
    fn file_names() {
        assert_eq!(file_name("baseline+log"), "baseline-log");
        assert_eq!(file_name("nagi-rust@stalled"), "nagi-rust-stalled");
    }
}
