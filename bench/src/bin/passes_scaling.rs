//! `passes_scaling`: how the default pass pipeline's time grows with program size.
//!
//! Generates Low modules of 2,000, 4,000 and 8,000 small functions, runs the default pipeline
//! (`nagi_passes::default_pipeline`, verifying once at the end as a release `nagic` does) on
//! each, and prints the best of several runs in milliseconds and per function. Compile time
//! should grow linearly: the time per function should stay flat as the count doubles.
//!
//! Run with `cargo run --release -p nagi-bench --bin passes_scaling` (optionally followed by
//! the sizes to measure, e.g. `1000 16000`; `--print N` prints the module of `N` functions). The generated program mixes what the passes act
//! on: small leaf functions that `inline` takes, constants for `const-fold`, copies for
//! `copy-prop`, dead values for `dce`, a dead branch for `unreachable`, a clone for
//! `clone-elim`, and functions nothing calls for `dead-fn`; the larger functions form one long
//! call chain, so the call graph is as deep as it is large.

use std::fmt::Write;
use std::time::{Duration, Instant};

use nagi_passes::{Pipeline, RunOptions};

/// Runs of each size; the best is reported, since noise only ever adds time.
const RUNS: usize = 5;

/// A module of `n` functions (plus `main`) in Low text.
fn generate(n: usize) -> String {
    let mut out = String::from("nagi-low 1\nmodule scaling\n");
    // Every tenth function is never called: `dead-fn` removes it. The others that are not
    // leaves form one long chain (each calls the previous live one), and each also calls the
    // leaf just before it, which `inline` takes.
    let dead = |i: usize| i % 10 == 9 && !i.is_multiple_of(4);
    let leaf = |i: usize| i.is_multiple_of(4);
    let previous = |i: usize| (1..i).rev().find(|&j| !dead(j) && !leaf(j)).unwrap_or(0);
    for i in 0..n {
        out.push('\n');
        if i.is_multiple_of(4) {
            // A leaf: small enough to inline.
            let _ = write!(
                out,
                "fn $f{i}(%x: i64, %s: &str) -> i64 {{\n  let %k: i64\n  let %y: i64\n  let %n: i64\n  \
                 %k = const {i}_i64\n  %y = mul.i64 %x, %k\n  %n = str.len %s\n  %y = add.i64 %y, %n\n  \
                 return %y\n}}\n"
            );
            continue;
        }
        let _ = write!(
            out,
            "fn $f{i}(%x: i64, %s: &str) -> i64 {{\n  let %a: i64\n  let %b: i64\n  let %c: i64\n  \
             let %d: i64\n  let %t: String\n  let %u: String\n  let %n: i64\n  let %flag: bool\n  \
             let %r: i64\n  let %q: i64\n  \
             %a = const {i}_i64\n  %b = copy %x\n  %c = add.i64 %a, 3_i64\n  %d = mul.i64 %b, %c\n  \
             %flag = gt.i64 %a, {big}_i64\n  if %flag {{\n    trap \"never\"\n  }}\n  \
             %t = clone %s\n  %u = clone %t\n  drop %t\n  %n = str.len %u\n  drop %u\n  \
             %d = add.i64 %d, %n\n  %r = call $f{j}(%d, %s)\n  %q = call $f{k}(%r, %s)\n  \
             %r = add.i64 %r, %q\n  return %r\n}}\n",
            big = n + 1,
            j = previous(i),
            k = i - i % 4,
        );
    }
    let _ = write!(
        out,
        "\nfn $main() -> unit {{\n  let %s: String\n  let %r: &str\n  let %v: i64\n  %s = string \"x\"\n  \
         %r = borrow %s\n  %v = call $f{}(1_i64, %r)\n  rtcall print.i64(%v)\n  drop %s\n  return\n}}\n",
        previous(n)
    );
    out
}

fn measure(n: usize) -> (Duration, usize, usize) {
    let text = generate(n);
    let (module, _) = nagi_low::parse(&text).unwrap_or_else(|d| panic!("{}", d.render("generated.low", &text)));
    if let Err(d) = nagi_low::verify(&module, None) {
        panic!("{}", nagi_low::diagnostic::render_all(&d, "generated.low", &text));
    }
    let ops: usize = module.functions.values().map(|f| f.ops.len()).sum();
    let pipeline = Pipeline::parse(nagi_passes::default_pipeline()).expect("the default pipeline parses");
    let mut best = Duration::MAX;
    let mut kept = 0;
    for _ in 0..RUNS {
        let mut m = module.clone();
        let start = Instant::now();
        let result = nagi_passes::run_pipeline(&mut m, &pipeline, &RunOptions { verify_each: false }, &mut ());
        let elapsed = start.elapsed();
        if let Err(f) = result {
            panic!("pass {} failed on the generated module: {:?}", f.pass, f.kind);
        }
        kept = m.functions.len();
        best = best.min(elapsed);
    }
    (best, ops, kept)
}

fn run() {
    // `--print N` writes the generated module instead, to look at it or feed it to `nagic`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--print") {
        let n = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20);
        print!("{}", generate(n));
        return;
    }
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![2000, 4000, 8000] } else { sizes };
    println!("default pipeline: {}", nagi_passes::default_pipeline());
    println!("best of {RUNS} runs, verifying once at the end\n");
    println!("{:>9} {:>9} {:>10} {:>11} {:>12}", "functions", "ops", "kept", "time (ms)", "µs/function");
    for n in sizes {
        let (time, ops, kept) = measure(n);
        let ms = time.as_secs_f64() * 1e3;
        println!("{n:>9} {ops:>9} {kept:>10} {ms:>11.1} {:>12.2}", time.as_secs_f64() * 1e6 / n as f64);
    }
}

fn main() {
    // The driver compiles on a thread with a large stack (petgraph's Tarjan SCC recurses once
    // per function on a long call chain); the bench does the same so it measures the same.
    let worker = std::thread::Builder::new().stack_size(256 * 1024 * 1024).spawn(run);
    if worker.map(|h| h.join()).is_err() {
        eprintln!("passes_scaling: the bench thread failed");
        std::process::exit(1);
    }
}
