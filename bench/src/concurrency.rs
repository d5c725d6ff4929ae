//! The concurrency bench (`nagi-bench concurrency [--quick]`): builds `bench/concurrency`
//! (crate `nagi-bench-concurrency`, the runtime's actors, supervisors and scopes) in release
//! mode, runs each experiment in a fresh process so that its memory figures start clean, writes
//! the records to `bench/results/DATE-TIME/concurrency.jsonl`, and prints the table of
//! bench/README.md ("The concurrency bench") with the Nagi 0.1 prototype's figures beside.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::machine::Machine;

/// The experiments, in the order they run: each is one process.
const EXPERIMENTS: [&str; 6] = ["pipelining", "restart", "parked-1000", "parked-10000", "parked-100000", "actors"];

/// Runs the bench; `quick` runs tiny sizes (a smoke run, not a measurement).
pub fn run(quick: bool) -> Result<(), String> {
    let root = crate::runner::root();
    let status = Command::new("cargo")
        .args(["build", "--release", "-p", "nagi-bench-concurrency"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cargo: {e}"))?;
    if !status.success() {
        return Err("building nagi-bench-concurrency failed".into());
    }
    let exe = root.join("target/release/concurrency");
    let run_dir = root.join("bench/results").join(crate::runner::date("+%Y%m%d-%H%M%S"));
    std::fs::create_dir_all(&run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    let machine = Machine::detect(None);
    eprintln!("nagi-bench: results go to {}; machine: {}", run_dir.display(), machine.line());
    let mut file = std::fs::File::create(run_dir.join("concurrency.jsonl")).map_err(|e| e.to_string())?;
    let mut records = Vec::new();
    for experiment in EXPERIMENTS {
        eprintln!("nagi-bench: {experiment} …");
        let mut command = Command::new(&exe);
        command.arg(experiment);
        if quick {
            command.arg("--quick");
        }
        let out = command.output().map_err(|e| format!("{}: {e}", exe.display()))?;
        if !out.status.success() {
            return Err(format!("{experiment} failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let record: Value = serde_json::from_str(line).map_err(|e| format!("{experiment}: {e}: {line}"))?;
            writeln!(file, "{line}").map_err(|e| e.to_string())?;
            records.push(record);
        }
    }
    let table = table(&records);
    std::fs::write(run_dir.join("concurrency.md"), &table).map_err(|e| e.to_string())?;
    println!("{table}");
    write_machine(&run_dir, &machine)
}

fn write_machine(run_dir: &Path, machine: &Machine) -> Result<(), String> {
    std::fs::write(run_dir.join("machine.json"), format!("{:#}\n", machine.to_json())).map_err(|e| e.to_string())
}

/// The record of `experiment` (with `key == value`, when given).
fn find<'a>(records: &'a [Value], experiment: &str, key: Option<(&str, u64)>) -> Option<&'a Value> {
    records.iter().find(|r| r["experiment"] == experiment && key.is_none_or(|(k, v)| r[k].as_u64() == Some(v)))
}

/// The Markdown table of a run: each experiment, what was measured, the goal, the prototype.
pub fn table(records: &[Value]) -> String {
    let num = |r: Option<&Value>, key: &str| r.and_then(|r| r[key].as_f64());
    let f = |v: Option<f64>, digits: usize, unit: &str| v.map_or("—".to_string(), |v| format!("{v:.digits$}{unit}"));
    let mut rows = Vec::new();
    // The caller on a worker (as a handler runs) is the measurement; outside the runtime (how
    // the bench measured before) shows what a thread wake-up per call and answer costs.
    for (caller, place) in [("worker", "a task on a worker"), ("outside", "outside the runtime (`block_on`)")] {
        let p = records.iter().find(|r| r["experiment"] == "pipelining" && r["caller"] == caller);
        let messages = p.and_then(|r| r["messages"].as_u64()).unwrap_or(0);
        let kmsgs = |key: &str| f(num(p, key).map(|v| v / 1e3), 0, "k msg/s");
        let goal = if caller == "worker" { ("≥ 25×", "24.95×") } else { ("—", "—") };
        rows.push(format!(
            "| {messages} messages, mailbox 64, 4 workers, caller {place}: 32 callers in flight / serial | {} (serial {}, callers {}) | {} | {} |",
            f(num(p, "callers_ratio_median"), 2, "×"),
            kmsgs("serial_msgs_per_s"),
            kmsgs("callers_msgs_per_s"),
            goal.0,
            goal.1,
        ));
        rows.push(format!(
            "| the same, one caller keeping a window of 32 calls in flight / serial | {} (window {}) | {} | — |",
            f(num(p, "window_ratio_median"), 2, "×"),
            kmsgs("window_msgs_per_s"),
            goal.0,
        ));
    }
    let r = find(records, "restart_latency", None);
    rows.push(format!(
        "| supervisor restart, crash → new child's first poll, backoff 1 ms | median {} (p10 {}, p90 {}) | ≤ 1.5 ms | 1.951–2.137 ms |",
        f(num(r, "median_ms"), 3, " ms"),
        f(num(r, "p10_ms"), 3, " ms"),
        f(num(r, "p90_ms"), 3, " ms"),
    ));
    for n in [1_000, 10_000, 100_000] {
        let t = find(records, "parked_tasks", Some(("tasks", n)));
        rows.push(format!(
            "| {n} tasks parked at once (each polled before any finishes) | {} to park, {} per task | ≤ 1 KiB per task | — |",
            f(num(t, "park_s").map(|s| s * 1e3), 1, " ms"),
            f(num(t, "bytes_per_task"), 0, " B"),
        ));
    }
    let a = find(records, "live_actors", None);
    rows.push(format!(
        "| {} live actors (mailbox 64, each answered one call) | {} per actor, {} to start and call | — | — |",
        a.and_then(|r| r["actors"].as_u64()).unwrap_or(0),
        f(num(a, "bytes_per_actor"), 0, " B"),
        f(num(a, "start_and_call_s").map(|s| s * 1e3), 1, " ms"),
    ));
    format!("| experiment | measured | goal | prototype |\n| --- | --- | --- | --- |\n{}\n", rows.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_each_experiment_and_a_dash_for_a_missing_one() {
        let records = vec![
            serde_json::json!({"experiment": "pipelining", "caller": "worker", "messages": 20000,
                "callers_ratio_median": 30.5, "serial_msgs_per_s": 50000.0, "callers_msgs_per_s": 1525000.0}),
            serde_json::json!({"experiment": "parked_tasks", "tasks": 1000, "park_s": 0.002, "bytes_per_task": 400.0}),
        ];
        let table = table(&records);
        assert!(table.contains("| 20000 messages, mailbox 64, 4 workers, caller a task on a worker: 32 callers in flight / serial | 30.50× (serial 50k msg/s, callers 1525k msg/s) | ≥ 25× |"), "{table}");
        assert!(
            table.contains(
                "| the same, one caller keeping a window of 32 calls in flight / serial | — (window —) | ≥ 25× |"
            ),
            "{table}"
        );
        assert!(table.contains("| 0 messages, mailbox 64, 4 workers, caller outside the runtime (`block_on`): 32 callers in flight / serial | — (serial —, callers —) | — |"), "{table}");
        assert!(
            table.contains(
                "| 1000 tasks parked at once (each polled before any finishes) | 2.0 ms to park, 400 B per task |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| 10000 tasks parked at once (each polled before any finishes) | — to park, — per task |"),
            "{table}"
        );
        assert_eq!(table.lines().count(), 11, "{table}");
    }
}
