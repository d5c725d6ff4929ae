//! `nagi-bench`: the runner of the CPU-kernel comparison and of the HTTP bench.
//!
//! ```text
//! nagi-bench kernels [--levels x86-64-v2,native] [--reference] [--quick] [--no-python] [--no-node]
//! nagi-bench disasm  [--levels x86-64-v2,native]
//! nagi-bench chart   bench/results/DATE-TIME [--reference]
//! nagi-bench http    [--soak SECS | --sinks] [--rounds N] [--duration SECS] [--warmup SECS] [--quick] [--cases …] [--servers …] [--reference]
//! nagi-bench concurrency [--quick]
//! nagi-bench queue   [--quick] [--pin]
//! ```
//!
//! `kernels` builds, checks, times and reports everything (see `bench/README.md`); `disasm`
//! only builds and disassembles the native variants' kernels; `chart` redraws a run's charts
//! from its records; `http` runs the HTTP bench (`nagi_bench::http`), or with `--soak` or `--sinks`
//! its soak or its log-sink gates; `concurrency` and `queue` run the concurrency bench
//! (`nagi_bench::concurrency`) and the queue bench (`nagi_bench::queue`).

use std::process::ExitCode;

use nagi_bench::runner::{self, Options};

const USAGE: &str =
    "usage: nagi-bench kernels [--levels x86-64-v2,native] [--reference] [--quick] [--no-python] [--no-node]
       nagi-bench disasm [--levels x86-64-v2,native]
       nagi-bench chart RESULTS_DIR [--reference]
       nagi-bench http [--soak SECS | --sinks] [--rounds N] [--duration SECS] [--warmup SECS] [--quick] [--cases a,b] [--servers a,b] [--connections N] [--threads N] [--reference]
       nagi-bench concurrency [--quick]
       nagi-bench queue [--quick] [--pin]";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(command) = args.next() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if command == "concurrency" {
        let quick = args.any(|a| a == "--quick");
        return match nagi_bench::concurrency::run(quick) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("nagi-bench: error: {message}");
                ExitCode::FAILURE
            }
        };
    }
    if command == "queue" {
        return match nagi_bench::queue::parse_args(args).and_then(nagi_bench::queue::run) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("nagi-bench: error: {message}\nusage: {}", nagi_bench::queue::USAGE);
                ExitCode::FAILURE
            }
        };
    }
    if command == "http" {
        return match nagi_bench::http::parse_args(args).and_then(|o| nagi_bench::http::run(&o)) {
            Ok(_) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("nagi-bench: error: {message}\nusage: {}", nagi_bench::http::USAGE);
                ExitCode::FAILURE
            }
        };
    }
    let mut options = Options::default();
    let mut directory = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--levels" => match args.next() {
                Some(list) => options.levels = list.split(',').map(str::to_string).collect(),
                None => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--reference" => options.reference = true,
            "--quick" => options.quick = true,
            "--no-python" => options.no_python = true,
            "--no-node" => options.no_node = true,
            other if command == "chart" && directory.is_none() && !other.starts_with('-') => {
                directory = Some(std::path::PathBuf::from(other));
            }
            other => {
                eprintln!("nagi-bench: unknown argument `{other}`\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let result = match command.as_str() {
        "kernels" => runner::kernels(&options).map(|_| ()),
        "disasm" => runner::disasm(&options.levels),
        "chart" => match &directory {
            Some(dir) => runner::chart(dir, options.reference),
            None => Err("chart needs the results directory of a run".into()),
        },
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("nagi-bench: error: {message}");
            ExitCode::FAILURE
        }
    }
}
