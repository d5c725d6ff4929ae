//! The native half of the kernel comparison: checks, allocation counts and criterion timings of
//! every native variant, written as JSONL records (`nagi_bench::records`).
//!
//! `nagi-bench kernels` builds this once per CPU level and runs it pinned to one CPU:
//!
//! ```text
//! kernels --check --level x86-64-v2 --out results/native-x86-64-v2.jsonl   # results and allocations
//! kernels --time  --level x86-64-v2 --out results/native-x86-64-v2.jsonl   # criterion
//! kernels --paths                                                          # where build.rs put things
//! ```
//!
//! Without `--check`, `--time` or `--paths` (as under plain `cargo bench`) it does both, at the
//! level it was compiled for. `--quick` shortens criterion's budget for a smoke run.
//!
//! The check runs every variant's every kernel once on the shared input and stops the process
//! (exit status 1) on the first wrong result, naming the variant and the kernel; it also counts
//! the allocations of one call of each (expected 0) with the runtime's counting allocator,
//! installed here as the global allocator. Timing is criterion's, with a budget cut down from its
//! defaults so that both CPU levels fit in a few minutes: 1 s warm-up, 2 s measurement, 20
//! samples per kernel and variant. Every sample (iterations, total time) becomes one record.

use std::fs::OpenOptions;
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput};
use nagi_bench::kernels::{self, Kernel, N};
use nagi_bench::records::Record;
use nagi_bench_native::{Input, OUT_DIR, TARGET_CPU, variants};
use nagi_runtime::alloc_count::{CountingAlloc, count};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

struct Args {
    check: bool,
    time: bool,
    paths: bool,
    quick: bool,
    level: String,
    out: Option<PathBuf>,
}

fn args() -> Args {
    let mut args = Args { check: false, time: false, paths: false, quick: false, level: TARGET_CPU.into(), out: None };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--check" => args.check = true,
            "--time" => args.time = true,
            "--paths" => args.paths = true,
            "--quick" => args.quick = true,
            "--level" => args.level = it.next().expect("--level LEVEL"),
            "--out" => args.out = Some(PathBuf::from(it.next().expect("--out FILE"))),
            // `cargo bench` passes `--bench` (and filters); there is nothing to filter here.
            _ => {}
        }
    }
    if !args.check && !args.time && !args.paths {
        args.check = true;
        args.time = true;
    }
    args
}

fn main() {
    let args = args();
    if args.paths {
        let exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default();
        println!("{}", serde_json::json!({ "target_cpu": TARGET_CPU, "out_dir": OUT_DIR, "exe": exe }));
        return;
    }
    let out = args.out.clone().unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../results/native-{}.jsonl", args.level))
    });
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).expect("create the results directory");
    }
    let mut sink = OpenOptions::new().create(true).append(true).open(&out).expect("open the results file");
    let mut write = |record: Record| {
        writeln!(sink, "{}", record.to_json_line()).expect("write a result");
    };
    // Prepared once, before any timing.
    let input = Input::new();
    let base = |variant: &str, kernel: Kernel| Record::new(&args.level, variant, kernel).with("target_cpu", TARGET_CPU);
    if args.check {
        for variant in variants() {
            for kernel in Kernel::ALL {
                let (value, counts) = count(|| variant.run(kernel, &input));
                let verdict = kernels::check(variant.name, kernel, value);
                write(
                    base(variant.name, kernel).kind("check").with("value", value.to_json()).with("ok", verdict.is_ok()),
                );
                write(
                    base(variant.name, kernel)
                        .kind("alloc")
                        .with("allocations", counts.allocations)
                        .with("bytes", counts.bytes),
                );
                if let Err(message) = verdict {
                    eprintln!("nagi-bench: {message} (CPU level {})", args.level);
                    std::process::exit(1);
                }
            }
        }
        eprintln!(
            "nagi-bench: {} native variants × {} kernels: results as expected",
            variants().len(),
            Kernel::ALL.len()
        );
    }
    if args.time {
        let criterion_dir = out.with_file_name(format!("criterion-{}", args.level));
        let (warm_up, measurement, samples) = if args.quick {
            (Duration::from_millis(50), Duration::from_millis(200), 10)
        } else {
            (Duration::from_secs(1), Duration::from_secs(2), 20)
        };
        let mut criterion = Criterion::default()
            .output_directory(&criterion_dir)
            .without_plots()
            .warm_up_time(warm_up)
            .measurement_time(measurement)
            .sample_size(samples);
        for kernel in Kernel::ALL {
            let mut group = criterion.benchmark_group(kernel.name());
            group.throughput(Throughput::Elements(N as u64));
            for variant in variants() {
                let f = variant.kernel(kernel);
                group.bench_function(variant.name, |b| b.iter(|| f(black_box(&input))));
            }
            group.finish();
        }
        for kernel in Kernel::ALL {
            for variant in variants() {
                let dir = criterion_dir.join(kernel.name()).join(variant.name).join("new");
                let sample = read_json(&dir.join("sample.json"));
                let iters = sample["iters"].as_array().expect("criterion's sample.json has iters");
                let times = sample["times"].as_array().expect("criterion's sample.json has times");
                for (i, (n, ns)) in iters.iter().zip(times).enumerate() {
                    write(
                        base(variant.name, kernel)
                            .kind("sample")
                            .with("tool", "criterion")
                            .with("sample", i)
                            .with("iters", n.as_f64().unwrap_or(0.0))
                            .with("ns", ns.as_f64().unwrap_or(0.0)),
                    );
                }
                let estimates = read_json(&dir.join("estimates.json"));
                let median = &estimates["median"];
                write(
                    base(variant.name, kernel)
                        .kind("estimate")
                        .with("tool", "criterion")
                        .with("median_ns", median["point_estimate"].clone())
                        .with("lower_ns", median["confidence_interval"]["lower_bound"].clone())
                        .with("upper_ns", median["confidence_interval"]["upper_bound"].clone()),
                );
            }
        }
    }
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}
