//! The queue bench (`nagi-bench queue [--quick] [--pin]`): the durable job queues of a
//! compiled service, built from `bench/queue/queue.nagi` by both emitters with 1 and with 8
//! workers.
//!
//! A run builds `nagic` (debug: it only translates, the runtime a service links is always
//! built in release) and the four services, then for several rounds runs, for each
//! experiment, every service in an order rotated per round, each time on a fresh database in a
//! scratch directory ([`measure`]): the **backlog** experiment pushes all jobs in one request
//! and measures the throughput and how long jobs wait to start; the **single** experiment
//! pushes one job per request onto an idle queue and measures how soon it starts (the wake-up
//! path); the **waiting** experiment pushes all jobs in one request, each waiting
//! [`measure::WAIT`] outside the database (`sleep`) before its insert, and measures the
//! throughput (what workers are for). Every run checks that each job ran exactly once, that none was dead-lettered and
//! that no more attempts ran at once than the queue has workers. Each service runs with one
//! Tokio worker thread (`--workers 1`), not pinned, or with `--pin` pinned to CPU 0 by
//! `taskset` (its Tokio worker and its database thread then share one core). The records go to
//! `bench/results/DATE-TIME/queue.jsonl`, the table to `queue.md` beside them. See
//! `bench/README.md` ("The queue bench").

pub mod measure;

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::http::server;
use crate::machine::Machine;
use measure::{Experiment, Variant};

/// The emitters the services are built with, as `nagic build --backend=` names them.
pub const EMITTERS: [&str; 2] = ["rust", "llvm"];

/// The worker counts of the two variants of the service.
pub const WORKERS: [u16; 2] = [1, 8];

/// The CPU `--pin` pins the services to.
pub const PIN_CPU: u32 = 0;

/// The usage line of `nagi-bench queue`.
pub const USAGE: &str = "nagi-bench queue [--quick] [--pin]";

/// What `nagi-bench queue` was asked to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `--quick`: tiny sizes, a smoke run, not a measurement.
    pub quick: bool,
    /// `--pin`: every service pinned to CPU [`PIN_CPU`] with `taskset`.
    pub pin: bool,
}

/// Parses the arguments after `queue`.
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut options = Options::default();
    for arg in args {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--pin" => options.pin = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

/// The line of the template that the variants replace.
const TEMPLATE_WORKERS: &str = "\n    workers 1\n";

/// How big a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Rounds: every experiment on every service once per round.
    pub rounds: u32,
    /// Jobs pushed in one request by the backlog experiment.
    pub backlog: u64,
    /// Jobs pushed one per request by the single experiment.
    pub single: u64,
    /// Jobs pushed in one request by the waiting experiment.
    pub waiting: u64,
}

impl Sizes {
    /// The measured run's sizes, or the tiny ones of `--quick` (a smoke run).
    pub fn new(quick: bool) -> Sizes {
        if quick {
            Sizes { rounds: 1, backlog: 200, single: 20, waiting: 40 }
        } else {
            Sizes { rounds: 5, backlog: 5_000, single: 200, waiting: 400 }
        }
    }

    /// How many jobs `experiment` pushes.
    pub fn jobs(self, experiment: Experiment) -> u64 {
        match experiment {
            Experiment::Backlog => self.backlog,
            Experiment::Single => self.single,
            Experiment::Waiting => self.waiting,
        }
    }
}

/// Runs the bench as `options` say.
pub fn run(options: Options) -> Result<(), String> {
    let root = crate::runner::root();
    let run_dir = root.join("bench/results").join(crate::runner::date("+%Y%m%d-%H%M%S"));
    std::fs::create_dir_all(&run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    let pin = options.pin.then_some(PIN_CPU);
    let pinned = pin.map(|cpu| format!("taskset -c {cpu}"));
    // `runner::pin` checks that `taskset -c 0` works here.
    if options.pin && crate::runner::pin().is_none() {
        return Err("--pin needs `taskset` (util-linux) and CPU 0".into());
    }
    let machine = Machine::detect(pinned.as_deref());
    eprintln!("nagi-bench: results go to {}; machine: {}", run_dir.display(), machine.line());
    let scratch = tempfile::Builder::new()
        .prefix("nagi-bench-queue-")
        .tempdir()
        .map_err(|e| format!("cannot make a scratch directory: {e}"))?;
    let sizes = Sizes::new(options.quick);
    let outcome =
        build(&root, scratch.path()).and_then(|variants| measure_all(&variants, sizes, pin, scratch.path(), &run_dir));
    let records = match outcome {
        Ok(records) => records,
        Err(message) => {
            // The failed run's databases and logs are the evidence: they stay.
            let kept = scratch.keep();
            return Err(format!("{message}\n(the services, databases and logs are kept in {})", kept.display()));
        }
    };
    let table = table(&records, sizes, options);
    std::fs::write(run_dir.join("queue.md"), &table).map_err(|e| e.to_string())?;
    println!("{table}");
    std::fs::write(run_dir.join("machine.json"), format!("{:#}\n", machine.to_json())).map_err(|e| e.to_string())
}

/// The template with `workers` workers instead of 1. Errors: the template has no `workers 1`
/// line, or more than one.
pub fn variant_source(template: &str, workers: u16) -> Result<String, String> {
    if template.matches(TEMPLATE_WORKERS).count() != 1 {
        return Err("bench/queue/queue.nagi must have exactly one line `    workers 1`".into());
    }
    Ok(template.replacen(TEMPLATE_WORKERS, &format!("\n    workers {workers}\n"), 1))
}

/// Builds `nagic` with cargo, then the service with each worker count on each emitter into
/// `dir`.
fn build(root: &Path, dir: &Path) -> Result<Vec<Variant>, String> {
    eprintln!("nagi-bench: building nagic");
    let nagic = server::cargo_build(root, "nagic", "nagic", false)?;
    let template_path = root.join("bench/queue/queue.nagi");
    let template = std::fs::read_to_string(&template_path).map_err(|e| format!("{}: {e}", template_path.display()))?;
    let mut variants = Vec::new();
    for workers in WORKERS {
        let source = dir.join(format!("queue-w{workers}.nagi"));
        std::fs::write(&source, variant_source(&template, workers)?).map_err(|e| e.to_string())?;
        for emitter in EMITTERS {
            let exe = dir.join(format!("queue-{emitter}-w{workers}"));
            eprintln!("nagi-bench: nagic build --backend={emitter} (workers {workers})");
            let status = Command::new(&nagic)
                .current_dir(root)
                .arg("build")
                .arg(format!("--backend={emitter}"))
                .arg(&source)
                .arg("-o")
                .arg(&exe)
                .status()
                .map_err(|e| format!("cannot run {}: {e}", nagic.display()))?;
            if !status.success() {
                return Err(format!("nagic build --backend={emitter} {} failed", source.display()));
            }
            variants.push(Variant { emitter, workers, exe });
        }
    }
    Ok(variants)
}

/// Runs every round: in each, each experiment on every variant (pinned to `pin` when given),
/// in an order rotated per round; writes each run's record to `run_dir/queue.jsonl` as it
/// comes and gives them all.
fn measure_all(
    variants: &[Variant],
    sizes: Sizes,
    pin: Option<u32>,
    scratch: &Path,
    run_dir: &Path,
) -> Result<Vec<Value>, String> {
    let path = run_dir.join("queue.jsonl");
    let mut file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut records = Vec::new();
    for round in 1..=sizes.rounds {
        for experiment in Experiment::ALL {
            let jobs = sizes.jobs(experiment);
            for i in 0..variants.len() {
                let variant = &variants[(i + round as usize) % variants.len()];
                let label = format!("r{round}-{}-{}-w{}", experiment.name(), variant.emitter, variant.workers);
                let figures = measure::run(variant, experiment, jobs, pin, scratch, &label)?;
                let record = figures.record(variant, experiment, round, pin.is_some());
                eprintln!(
                    "nagi-bench: {label}: {} jobs/s, push → start median {} ms, p99 {} ms, peak {}",
                    record["jobs_per_s"].as_f64().map_or("—".into(), |v| format!("{v:.0}")),
                    record["latency_median_ms"],
                    record["latency_p99_ms"],
                    record["peak"],
                );
                writeln!(file, "{record}").map_err(|e| e.to_string())?;
                records.push(record);
            }
        }
    }
    Ok(records)
}

/// The records of `experiment` on `emitter` with `workers` workers, one per round.
fn runs<'a>(
    records: &'a [Value],
    experiment: &'a str,
    emitter: &'a str,
    workers: u16,
) -> impl Iterator<Item = &'a Value> {
    records.iter().filter(move |r| {
        r["experiment"] == experiment && r["emitter"] == emitter && r["workers"].as_u64() == Some(u64::from(workers))
    })
}

/// The median across rounds of `key` in the records of `experiment` on one variant.
fn median_of(records: &[Value], experiment: &str, emitter: &str, workers: u16, key: &str) -> Option<f64> {
    let mut values: Vec<f64> = runs(records, experiment, emitter, workers).filter_map(|r| r[key].as_f64()).collect();
    crate::records::median(&mut values)
}

/// The median across rounds of the throughput of `a` over that of `b` in the same round, in
/// `experiment`; each is `(emitter, workers)`.
fn ratio(records: &[Value], experiment: &str, a: (&str, u16), b: (&str, u16)) -> Option<f64> {
    let mut ratios: Vec<f64> = runs(records, experiment, a.0, a.1)
        .filter_map(|ra| {
            let rb = runs(records, experiment, b.0, b.1).find(|rb| rb["round"] == ra["round"])?;
            Some(ra["jobs_per_s"].as_f64()? / rb["jobs_per_s"].as_f64()?)
        })
        .collect();
    crate::records::median(&mut ratios)
}

/// The emitter's name in the table.
fn emitter_name(emitter: &str) -> &'static str {
    if emitter == "rust" { "Rust emitter" } else { "LLVM emitter" }
}

/// The peak attempts at once of `experiment` on one variant across rounds: one number when
/// every round reached the same, else the lowest and the highest.
fn peaks(records: &[Value], experiment: &str, emitter: &str, workers: u16) -> String {
    let peaks: Vec<u64> = runs(records, experiment, emitter, workers).filter_map(|r| r["peak"].as_u64()).collect();
    match (peaks.iter().min(), peaks.iter().max()) {
        (Some(low), Some(high)) if low == high => low.to_string(),
        (Some(low), Some(high)) => format!("{low}–{high}"),
        _ => "—".to_string(),
    }
}

/// The Markdown table of a run: per emitter and worker count, the medians across rounds, then
/// the throughput ratios within the run.
pub fn table(records: &[Value], sizes: Sizes, options: Options) -> String {
    let f = |v: Option<f64>, digits: usize| v.map_or("—".to_string(), |v| format!("{v:.digits$}"));
    let mut out = String::new();
    if options.quick {
        out.push_str("**Quick run (`--quick`): a smoke test with tiny sizes, not a measurement.**\n\n");
    }
    out.push_str(&format!(
        "Backlog: {} jobs pushed in one request. One at a time: {} requests of one job each, {} ms apart. \
         Waiting: {} jobs pushed in one request, each waiting {} ms (`sleep`) before its insert. \
         Each service has one Tokio worker (`--workers 1`) and is {}. Medians across {} round{}; push → start in whole milliseconds (the clocks' \
         resolution); peaks across rounds.\n\n",
        sizes.backlog,
        sizes.single,
        measure::SPACING.as_millis(),
        sizes.waiting,
        measure::WAIT.as_millis(),
        if options.pin {
            format!("pinned to CPU {PIN_CPU} (`taskset -c {PIN_CPU}`)")
        } else {
            "not pinned".to_string()
        },
        sizes.rounds,
        if sizes.rounds == 1 { "" } else { "s" },
    ));
    out.push_str(
        "| emitter | workers | backlog: push request | backlog: jobs/s | backlog: push → start, median / p99 | \
         one at a time: push → start, median / p99 / mean | backlog: peak attempts at once | waiting: jobs/s | \
         waiting: peak attempts at once |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for emitter in EMITTERS {
        for workers in WORKERS {
            let m = |experiment: &str, key: &str| median_of(records, experiment, emitter, workers, key);
            out.push_str(&format!(
                "| {} | {workers} | {} ms | {} | {} / {} ms | {} / {} / {} ms | {} | {} | {} |\n",
                emitter_name(emitter),
                f(m("backlog", "push_ms"), 1),
                f(m("backlog", "jobs_per_s"), 0),
                f(m("backlog", "latency_median_ms"), 0),
                f(m("backlog", "latency_p99_ms"), 0),
                f(m("single", "latency_median_ms"), 1),
                f(m("single", "latency_p99_ms"), 0),
                f(m("single", "latency_mean_ms"), 2),
                peaks(records, "backlog", emitter, workers),
                f(m("waiting", "jobs_per_s"), 0),
                peaks(records, "waiting", emitter, workers),
            ));
        }
    }
    let x = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.2}×"));
    out.push_str(&format!(
        "\nBacklog throughput, medians of the per-round ratios: workers 8 / workers 1 {} (Rust emitter), \
         {} (LLVM emitter); LLVM / Rust {} (workers 1), {} (workers 8).\n",
        x(ratio(records, "backlog", ("rust", 8), ("rust", 1))),
        x(ratio(records, "backlog", ("llvm", 8), ("llvm", 1))),
        x(ratio(records, "backlog", ("llvm", 1), ("rust", 1))),
        x(ratio(records, "backlog", ("llvm", 8), ("rust", 8))),
    ));
    out.push_str(&format!(
        "\nWaiting throughput, medians of the per-round ratios: workers 8 / workers 1 {} (Rust emitter), \
         {} (LLVM emitter).\n",
        x(ratio(records, "waiting", ("rust", 8), ("rust", 1))),
        x(ratio(records, "waiting", ("llvm", 8), ("llvm", 1))),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variants_change_only_the_workers_line() {
        let template = std::fs::read_to_string(crate::runner::root().join("bench/queue/queue.nagi")).unwrap();
        let eight = variant_source(&template, 8).unwrap();
        assert_eq!(eight.replace("\n    workers 8\n", TEMPLATE_WORKERS), template);
        assert_ne!(eight, template);
        assert!(variant_source("queue q {\n}\n", 8).is_err());
    }

    fn record(
        experiment: &str,
        emitter: &str,
        workers: u16,
        round: u32,
        jobs_per_s: Option<f64>,
        median: f64,
    ) -> Value {
        serde_json::json!({"experiment": experiment, "emitter": emitter, "workers": workers, "round": round,
            "jobs_per_s": jobs_per_s, "latency_median_ms": median, "latency_p99_ms": median * 2.0,
            "latency_mean_ms": median, "push_ms": 50.0, "peak": workers})
    }

    #[test]
    fn the_table_shows_medians_ratios_and_a_dash_for_what_is_missing() {
        let mut records = Vec::new();
        for (round, rust1, rust8) in [(1, 1000.0, 1500.0), (2, 1200.0, 1200.0), (3, 900.0, 1800.0)] {
            records.push(record("backlog", "rust", 1, round, Some(rust1), 300.0));
            records.push(record("backlog", "rust", 8, round, Some(rust8), 200.0));
            records.push(record("single", "rust", 1, round, None, 1.0));
        }
        for (round, rust8, peak) in [(1, 700.0, 8), (2, 800.0, 7), (3, 600.0, 8)] {
            records.push(record("waiting", "rust", 1, round, Some(100.0), 2000.0));
            let mut eight = record("waiting", "rust", 8, round, Some(rust8), 300.0);
            eight["peak"] = peak.into();
            records.push(eight);
        }
        let sizes = Sizes { rounds: 3, backlog: 5000, single: 200, waiting: 400 };
        let table = table(&records, sizes, Options::default());
        assert!(
            table.contains("| Rust emitter | 1 | 50.0 ms | 1000 | 300 / 600 ms | 1.0 / 2 / 1.00 ms | 1 | 100 | 1 |"),
            "{table}"
        );
        assert!(
            table.contains("| Rust emitter | 8 | 50.0 ms | 1500 | 200 / 400 ms | — / — / — ms | 8 | 700 | 7–8 |"),
            "{table}"
        );
        assert!(table.contains("| LLVM emitter | 1 | — ms | — | — / — ms | — / — / — ms | — | — | — |"), "{table}");
        // The per-round ratios are 1.5, 1.0 and 2.0 in the backlog, 7, 8 and 6 waiting.
        assert!(table.contains("workers 8 / workers 1 1.50× (Rust emitter), — (LLVM emitter)"), "{table}");
        assert!(
            table.contains(
                "Waiting throughput, medians of the per-round ratios: workers 8 / workers 1 7.00× (Rust emitter)"
            ),
            "{table}"
        );
        assert!(table.contains("each waiting 10 ms (`sleep`) before its insert"), "{table}");
        assert!(!table.contains("Quick run"));
        assert!(table.contains("(`--workers 1`) and is not pinned."), "{table}");
    }

    #[test]
    fn the_arguments_are_quick_and_pin() {
        assert_eq!(parse_args(["--pin".to_string()]), Ok(Options { quick: false, pin: true }));
        assert_eq!(parse_args(Vec::new()), Ok(Options::default()));
        assert!(parse_args(["--rounds".to_string()]).is_err());
    }
}
