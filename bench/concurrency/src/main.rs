//! `concurrency EXPERIMENT [--quick]`: runs one experiment of the concurrency bench in this
//! fresh process (so that its resident-memory figures start from a clean process) and prints
//! its records as JSON lines. `nagi-bench concurrency` runs them all; see bench/README.md.

use std::process::ExitCode;
use std::time::Duration;

use nagi_bench_concurrency::{Caller, live_actors, parked_tasks, pipelining, restart_latency};

const USAGE: &str = "usage: concurrency pipelining|restart|parked-1000|parked-10000|parked-100000|actors [--quick]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    // Traps on purpose (the restart experiment) are expected; the default hook would print each.
    std::panic::set_hook(Box::new(|_| {}));
    let scale = |n: usize| if quick { (n / 100).max(10) } else { n };
    let record = match args.first().map(String::as_str) {
        // Both placements of the caller, each printed as a record of its own.
        Some("pipelining") => {
            let rounds = if quick { 1 } else { 5 };
            println!("{}", pipelining(scale(20_000), 64, 4, 32, rounds, Caller::Outside));
            pipelining(scale(20_000), 64, 4, 32, rounds, Caller::Worker)
        }
        Some("restart") => restart_latency(scale(200), Duration::from_millis(1), 4),
        Some("parked-1000") => parked_tasks(scale(1_000), 4),
        Some("parked-10000") => parked_tasks(scale(10_000), 4),
        Some("parked-100000") => parked_tasks(scale(100_000), 4),
        Some("actors") => live_actors(scale(10_000), 64, 4),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    println!("{record}");
    ExitCode::SUCCESS
}
