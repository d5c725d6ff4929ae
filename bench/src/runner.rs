//! Running the comparison: build the native variants per CPU level, check every variant, time
//! them pinned to one CPU, disassemble, and write the raw records, the report and the charts.
//!
//! The order is what the issue asks for: everything is built and every variant's results are
//! checked (native at each level, CPython, Node) before anything is timed; a mismatch stops the
//! run with the variant and the kernel named. Then, level by level: criterion on the native
//! variants, Node, CPython, all under `taskset -c 0` when the platform has it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::disasm;
use crate::kernels;
use crate::machine::{Machine, command_line};
use crate::records::{self, Summaries};
use crate::report::{self, Level};

/// What `nagi-bench kernels` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// CPU levels to build and run the native variants for (`x86-64-v2`, `native`, …).
    pub levels: Vec<String>,
    /// A short criterion budget and short CPython/Node loops: a smoke run, not a measurement.
    pub quick: bool,
    /// Also write the result as the reference: `bench/reference/` and the block in
    /// `bench/README.md`.
    pub reference: bool,
    /// Leave out CPython.
    pub no_python: bool,
    /// Leave out Node.
    pub no_node: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            levels: vec!["x86-64-v2".into(), "native".into()],
            quick: false,
            reference: false,
            no_python: false,
            no_node: false,
        }
    }
}

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("bench/ is inside the workspace").to_path_buf()
}

/// The command prefix that pins to CPU 0 (`taskset -c 0`), when this platform allows it.
pub fn pin() -> Option<Vec<String>> {
    let works = Command::new("taskset")
        .args(["-c", "0", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    works.then(|| vec!["taskset".into(), "-c".into(), "0".into()])
}

/// A command, pinned when `pin` is given.
fn pinned(pin: &Option<Vec<String>>, program: &str) -> Command {
    match pin {
        Some(prefix) => {
            let mut c = Command::new(&prefix[0]);
            c.args(&prefix[1..]).arg(program);
            c
        }
        None => Command::new(program),
    }
}

/// The bench executable of one CPU level, and what it was built with.
#[derive(Clone, Debug)]
pub struct Built {
    /// The level asked for.
    pub level: String,
    /// The criterion harness (`bench/native/benches/kernels.rs`).
    pub exe: PathBuf,
    /// The `-C target-cpu` it and the LLVM objects were compiled for.
    pub target_cpu: String,
    /// Where its `build.rs` left the emitted Low, Rust, IR and objects.
    pub out_dir: PathBuf,
}

/// Builds `nagi-bench-native`'s bench for `level` in `target/bench-LEVEL`, with
/// `RUSTFLAGS=-C target-cpu=LEVEL` (which its `build.rs` also gives the LLVM emitter).
pub fn build(level: &str) -> Result<Built, String> {
    eprintln!("nagi-bench: building the native variants for -C target-cpu={level}");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(root())
        .args(["bench", "-p", "nagi-bench-native", "--bench", "kernels", "--no-run"])
        .args(["--message-format=json-render-diagnostics", "--target-dir"])
        .arg(root().join(format!("target/bench-{level}")))
        .env("RUSTFLAGS", format!("-C target-cpu={level}"))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if !output.status.success() {
        return Err(format!("building the native variants for {level} failed"));
    }
    let exe = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "kernels")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or("cargo built the bench but did not report its executable")?;
    let paths = Command::new(&exe).arg("--paths").output().map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let paths: serde_json::Value = serde_json::from_slice(&paths.stdout)
        .map_err(|e| format!("{} --paths did not print JSON: {e}", exe.display()))?;
    let target_cpu = paths["target_cpu"].as_str().unwrap_or_default().to_string();
    if target_cpu != level {
        return Err(format!("the bench for {level} was built for target-cpu {target_cpu}"));
    }
    let out_dir = PathBuf::from(paths["out_dir"].as_str().unwrap_or_default());
    Ok(Built { level: level.to_string(), exe, target_cpu, out_dir })
}

/// Runs the native harness in `mode` (`--check` or `--time`), appending to `out`.
fn run_native(pin: &Option<Vec<String>>, built: &Built, mode: &str, quick: bool, out: &Path) -> Result<(), String> {
    let mut c = pinned(pin, &built.exe.display().to_string());
    c.arg(mode).arg("--level").arg(&built.level).arg("--out").arg(out);
    if quick {
        c.arg("--quick");
    }
    let status = c.status().map_err(|e| format!("cannot run {}: {e}", built.exe.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the native variants at {} stopped (see the message above)", built.level))
    }
}

/// A script variant (CPython or Node): its interpreter, script and timing loop sizes.
struct Script {
    name: &'static str,
    program: &'static str,
    script: &'static str,
    /// Warm-up calls, repeats, calls per repeat.
    loops: (u32, u32, u32),
}

const PYTHON: Script =
    Script { name: "CPython", program: "python3", script: "bench/python/kernels.py", loops: (5, 7, 25) };
const NODE: Script = Script { name: "Node", program: "node", script: "bench/node/kernels.js", loops: (50, 7, 100) };

/// Runs a script variant (checks only, or checks then timing), appending its records to `out`.
fn run_script(
    pin: &Option<Vec<String>>,
    script: &Script,
    level: &str,
    check: bool,
    quick: bool,
    out: &Path,
) -> Result<(), String> {
    let file = File::options().create(true).append(true).open(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut c = pinned(pin, script.program);
    c.arg(root().join(script.script)).args(["--expected", &kernels::expected_json(), "--level", level]);
    let (warmup, repeats, calls) = if quick { (1, 3, 2) } else { script.loops };
    if check {
        c.arg("--check");
    } else {
        c.args(["--warmup", &warmup.to_string(), "--repeats", &repeats.to_string(), "--calls", &calls.to_string()]);
    }
    let status = c.stdout(file).status().map_err(|e| format!("cannot run {}: {e}", script.program))?;
    if status.success() { Ok(()) } else { Err(format!("{} stopped (see the message above)", script.name)) }
}

/// `date -u +FORMAT`, or the Unix time when there is no `date`.
pub fn date(format: &str) -> String {
    command_line("date", &["-u", format]).unwrap_or_else(|| {
        let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        secs.to_string()
    })
}

/// Runs the whole comparison; returns the directory of this run's results.
pub fn kernels(options: &Options) -> Result<PathBuf, String> {
    let pin = pin();
    let machine = Machine::detect(pin.as_ref().map(|p| p.join(" ")).as_deref());
    let run_dir = root().join("bench/results").join(date("+%Y%m%d-%H%M%S"));
    std::fs::create_dir_all(&run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    std::fs::write(run_dir.join("machine.json"), format!("{:#}\n", machine.to_json())).map_err(|e| e.to_string())?;
    eprintln!("nagi-bench: results go to {}", run_dir.display());
    eprintln!("nagi-bench: machine: {}", machine.line());

    let mut notes = Vec::new();
    let python = !options.no_python && machine.python.is_some();
    let node = !options.no_node && machine.node.is_some();
    if machine.python.is_none() {
        notes.push("CPython skipped: no `python3` on PATH.".to_string());
    }
    if machine.node.is_none() {
        notes.push("Node skipped: no `node` on PATH.".to_string());
    }
    if pin.is_none() {
        notes.push("Not pinned: `taskset -c 0` is not available here.".to_string());
    }
    for note in &notes {
        eprintln!("nagi-bench: {note}");
    }

    // Build everything, then check every variant, before anything is timed.
    let mut builds = Vec::new();
    for level in &options.levels {
        builds.push(build(level)?);
    }
    let file = |name: &str, level: &str| run_dir.join(format!("{name}-{level}.jsonl"));
    for built in &builds {
        run_native(&pin, built, "--check", options.quick, &file("native", &built.level))?;
        if python {
            run_script(&pin, &PYTHON, &built.level, true, options.quick, &file("python", &built.level))?;
        }
        if node {
            run_script(&pin, &NODE, &built.level, true, options.quick, &file("node", &built.level))?;
        }
    }
    eprintln!("nagi-bench: every variant's results match docs/design.md §6 at every level; timing");

    for built in &builds {
        eprintln!("nagi-bench: timing the native variants at {} (criterion)", built.level);
        run_native(&pin, built, "--time", options.quick, &file("native", &built.level))?;
        if node {
            eprintln!("nagi-bench: timing Node at {}", built.level);
            run_script(&pin, &NODE, &built.level, false, options.quick, &file("node", &built.level))?;
        }
        if python {
            eprintln!("nagi-bench: timing CPython at {}", built.level);
            run_script(&pin, &PYTHON, &built.level, false, options.quick, &file("python", &built.level))?;
        }
    }

    let mut disasm_sections = Vec::new();
    for built in &builds {
        let functions = disasm::disassemble(&built.exe)?;
        disasm::write_listings(&functions, &run_dir.join(format!("disasm-{}", built.level)))
            .map_err(|e| e.to_string())?;
        disasm_sections.push(disasm::summary(&functions));
    }

    let summaries = records::summarize(&read_run(&run_dir)?);
    let date = date("+%Y-%m-%d");
    let report_text = render(&date, &machine, options, &builds, &summaries, &disasm_sections, &notes, "");
    std::fs::write(run_dir.join("report.md"), &report_text).map_err(|e| e.to_string())?;
    let levels: Vec<String> = builds.iter().map(|b| b.level.clone()).collect();
    draw_charts(&run_dir, &summaries, &levels, &date, options.reference)?;
    if options.reference {
        let block = render(&date, &machine, options, &builds, &summaries, &disasm_sections, &notes, "reference/");
        update_readme(&root().join("bench/README.md"), &block)?;
        eprintln!("nagi-bench: wrote bench/reference/ and the reference block of bench/README.md");
    }
    eprintln!("nagi-bench: report: {}", run_dir.join("report.md").display());
    Ok(run_dir)
}

/// Every record of a run directory's JSONL files.
fn read_run(run_dir: &Path) -> Result<Vec<serde_json::Value>, String> {
    let mut records = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(run_dir)
        .map_err(|e| format!("{}: {e}", run_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    for path in paths {
        records.extend(records::read_jsonl(&path)?);
    }
    Ok(records)
}

/// Draws `kernels-LEVEL.svg` in `run_dir` for each level, and copies them to
/// `bench/reference/` when `reference` is set.
fn draw_charts(
    run_dir: &Path,
    summaries: &Summaries,
    levels: &[String],
    date: &str,
    reference: bool,
) -> Result<(), String> {
    for level in levels {
        let Some(summary) = summaries.get(level) else { continue };
        let name = format!("kernels-{level}.svg");
        let title = format!("ns per item, median — CPU level {level} ({date})");
        crate::chart::draw(&run_dir.join(&name), &title, summary)?;
        if reference {
            let dir = root().join("bench/reference");
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            std::fs::copy(run_dir.join(&name), dir.join(&name)).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// `nagi-bench chart DIR [--reference]`: redraws the charts of the run in `DIR` from its JSONL
/// records (dated by `machine.json`'s modification day), e.g. after a change to the chart code.
pub fn chart(run_dir: &Path, reference: bool) -> Result<(), String> {
    let summaries = records::summarize(&read_run(run_dir)?);
    let levels: Vec<String> = summaries.keys().cloned().collect();
    let name = run_dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    // Run directories are named `YYYYMMDD-HHMMSS`.
    let date = match name.get(..8) {
        Some(d) if d.chars().all(|c| c.is_ascii_digit()) => format!("{}-{}-{}", &d[..4], &d[4..6], &d[6..]),
        _ => date("+%Y-%m-%d"),
    };
    draw_charts(run_dir, &summaries, &levels, &date, reference)
}

/// The report: date, machine, protocol, and per level the ratio matrix, the chart, the full
/// table, the disassembly summary and the gaps. `charts` prefixes the chart file names.
#[allow(clippy::too_many_arguments)]
fn render(
    date: &str,
    machine: &Machine,
    options: &Options,
    builds: &[Built],
    summaries: &Summaries,
    disasm_sections: &[String],
    notes: &[String],
    charts: &str,
) -> String {
    let mut out = String::new();
    out.push_str(&format!("Measured {date} on: {}.\n\n", machine.line()));
    if options.quick {
        out.push_str("**Quick run (`--quick`): a smoke test with tiny budgets, not a measurement.**\n\n");
    }
    out.push_str(
        "Protocol: 100,000 elements prepared outside the timed region; every variant's results \
         checked against docs/design.md §6 (floats within 1e-7) before any timing. Native variants: \
         criterion, 1 s warm-up, 2 s measurement, 20 samples; the figure is the median over the \
         samples of time per call. Node: 50 warm-up calls, then 7 repeats of 100 calls; CPython: 5 \
         warm-up calls, then 7 repeats of 25 calls; the figure is the median repeat's time per call. \
         ns/item is µs/call divided by 100,000 (an amortized figure, not the latency of one \
         addition). Allocations: one call per kernel, counted on the calling thread by \
         `nagi_runtime::alloc_count`.\n\n",
    );
    for (i, variant) in report::VARIANTS.iter().enumerate() {
        out.push_str(&format!(
            "{}`{variant}`: {}",
            if i == 0 { "Variants: " } else { "; " },
            report::describe(variant)
        ));
    }
    out.push_str(".\n\n");
    out.push_str(&report::skipped(notes));
    if !notes.is_empty() {
        out.push('\n');
    }
    for (built, disasm) in builds.iter().zip(disasm_sections) {
        let empty = Level::new();
        let level = summaries.get(&built.level).unwrap_or(&empty);
        out.push_str(&format!("### CPU level `{}`\n\n", built.level));
        out.push_str(&format!(
            "Every native variant compiled with `-C target-cpu={}` (rustc) and `--target-cpu={}` (LLVM emitter). \
             Ratio to hand-written Rust (median time per call; lower is faster; **bold**: a Nagi variant more than \
             {:.2}× slower):\n\n",
            built.target_cpu,
            built.target_cpu,
            report::GAP
        ));
        out.push_str(&report::ratio_matrix(level));
        out.push_str(&format!("\n![ns per item at {}]({charts}kernels-{}.svg)\n\n", built.level, built.level));
        out.push_str(&report::full_table(level));
        out.push_str("\nDisassembly (`nagi-bench disasm`):\n\n");
        out.push_str(disasm);
        let gaps = report::gaps(level);
        if gaps.is_empty() {
            out.push_str(&format!(
                "\nNo Nagi variant is more than {:.2}× slower than hand-written Rust here.\n\n",
                report::GAP
            ));
        } else {
            out.push_str(&format!("\nMore than {:.2}× slower than hand-written Rust:", report::GAP));
            let list: Vec<String> = gaps.iter().map(|(v, k, r)| format!(" {v} on {k} ({r:.2}×)")).collect();
            out.push_str(&list.join(";"));
            out.push_str(".\n\n");
        }
    }
    out
}

/// The markers around the generated block in `bench/README.md`.
pub const BEGIN: &str = "<!-- kernels-reference:begin (generated by `nagi-bench kernels --reference`) -->";
/// The end marker.
pub const END: &str = "<!-- kernels-reference:end -->";

/// Replaces the text between [`BEGIN`] and [`END`] in `readme` with `block`.
pub fn update_readme(readme: &Path, block: &str) -> Result<(), String> {
    update_block(readme, BEGIN, END, block)
}

/// Replaces the text between the markers `begin` and `end` in `readme` with `block`.
pub fn update_block(readme: &Path, begin: &str, end: &str, block: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(readme).map_err(|e| format!("{}: {e}", readme.display()))?;
    let (Some(start), Some(stop)) = (text.find(begin), text.find(end)) else {
        return Err(format!("{} has no reference markers ({begin} … {end})", readme.display()));
    };
    let new = format!("{}{begin}\n\n{block}{}", &text[..start], &text[stop..]);
    std::fs::write(readme, new).map_err(|e| format!("{}: {e}", readme.display()))
}

/// `nagi-bench disasm`: builds (if needed) and disassembles the native variants of each level,
/// printing the summary and writing the listings to `bench/results/disasm-LEVEL/`.
pub fn disasm(levels: &[String]) -> Result<(), String> {
    for level in levels {
        let built = build(level)?;
        let functions = disasm::disassemble(&built.exe)?;
        let dir = root().join(format!("bench/results/disasm-{level}"));
        disasm::write_listings(&functions, &dir).map_err(|e| e.to_string())?;
        println!("## CPU level {level} ({})\n", built.exe.display());
        println!("{}", disasm::summary(&functions));
        println!("Listings: {}; LLVM IR and objects: {}\n", dir.display(), built.out_dir.display());
    }
    Ok(())
}
