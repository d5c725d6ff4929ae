//! The driver's side of the pass pipeline: the optimization flags, running the pipeline on a
//! verified module, `--print-low-after`, per-pass `--timings`, reproducers for failing passes,
//! and `--emit=cost`.
//!
//! `-O` (the default pipeline, [`nagi_passes::default_pipeline`]) is the default for `build`,
//! `run`, `--emit=rust|llvm` and `--emit=cost`; `--emit=low` defaults to `-O0`, so that it prints a
//! Low file back as written (comments included) unless passes are asked for. `--passes=LIST`
//! runs exactly the passes listed. The verifier runs after every pass in debug builds of
//! `nagic` and with `--verify-each`, and once after the last pass otherwise.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nagi_low::Module;
use nagi_passes::manager::{self, Failure as PassFailure, FailureKind, Observer, Pipeline, RunOptions};

use crate::failure::Failure;

/// The flags that choose and watch the pass pipeline; part of every command's options.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct PassOptions {
    /// Optimization level: `-O` (or `-O1`) runs the default pipeline, `-O0` runs no passes.
    #[arg(
        short = 'O',
        long = "opt-level",
        value_name = "LEVEL",
        num_args = 0..=1,
        default_missing_value = "1",
        require_equals = true,
        value_parser = ["0", "1"],
        global = true,
        conflicts_with = "passes"
    )]
    opt_level: Option<String>,
    /// Runs exactly these passes, in order (comma-separated, e.g. `inline,const-fold,dce`).
    #[arg(long, value_name = "PIPELINE", global = true)]
    passes: Option<String>,
    /// Verifies the module after every pass (always on in debug builds of nagic).
    #[arg(long, global = true)]
    verify_each: bool,
    /// Prints the module after the named passes (comma-separated), to stderr or `--print-low-dir`.
    #[arg(long, value_name = "PASS[,PASS]", global = true)]
    print_low_after: Option<String>,
    /// Prints the module after every pass.
    #[arg(long, global = true)]
    print_low_after_all: bool,
    /// Writes the printed modules to DIR as `NN-pass.low` (and the input as `00-input.low`).
    #[arg(long, value_name = "DIR", global = true)]
    print_low_dir: Option<PathBuf>,
}

/// Rewrites `-O0` and `-O1` (which clap would read as `-O` followed by a flag `-0`) to
/// `--opt-level=0` and `--opt-level=1`. Arguments after `--` belong to the program `nagic run`
/// starts and are left alone.
pub(crate) fn normalize_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut passthrough = false;
    for arg in args {
        if !passthrough && arg == "--" {
            passthrough = true;
        }
        if !passthrough
            && let Some(level) = arg.to_str().and_then(|a| a.strip_prefix("-O"))
            && !level.is_empty()
            && !level.starts_with('=')
        {
            out.push(OsString::from(format!("--opt-level={level}")));
            continue;
        }
        out.push(arg);
    }
    out
}

/// Which pipeline a command runs when neither `-O…` nor `--passes` is given.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Default {
    /// The default pipeline (`build`, `run`, `--emit=rust|llvm`, `--emit=cost`).
    Optimize,
    /// No passes (`--emit=low`).
    None,
}

/// The pipeline the options ask for; an unknown pass name is a usage error.
fn pipeline(options: &PassOptions, default: Default) -> Result<Pipeline, Failure> {
    let parsed = match (&options.passes, options.opt_level.as_deref(), default) {
        (Some(text), _, _) => Pipeline::parse(text),
        (None, Some("0"), _) | (None, None, Default::None) => Ok(Pipeline::parse("").expect("empty")),
        _ => Pipeline::parse(nagi_passes::default_pipeline()),
    };
    parsed.map_err(|e| {
        eprintln!("nagic: error: --passes: {e}");
        Failure::Usage
    })
}

/// The flags that reproduce `pipeline` on the command line, for messages and the cost report.
pub(crate) fn pipeline_flags(pipeline: &Pipeline) -> String {
    let text = pipeline.to_string();
    if text.is_empty() {
        "-O0".to_string()
    } else if text == nagi_passes::default_pipeline() {
        "-O".to_string()
    } else {
        format!("--passes='{text}'")
    }
}

/// Which passes `--print-low-after` names; `None` prints after every pass.
fn print_filter(options: &PassOptions) -> Result<Option<Vec<String>>, Failure> {
    if options.print_low_after_all {
        return Ok(None);
    }
    let names: Vec<String> = options
        .print_low_after
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    for name in &names {
        if nagi_passes::pass_by_name(name).is_none() {
            let e = manager::PipelineError { unknown: name.clone() };
            eprintln!("nagic: error: --print-low-after: {e}");
            return Err(Failure::Usage);
        }
    }
    Ok(Some(names))
}

/// Prints the module after the passes `--print-low-after` names.
struct Printer {
    /// `None`: after every pass; otherwise after these.
    only: Option<Vec<String>>,
    dir: Option<PathBuf>,
    enabled: bool,
    /// A file could not be written; reported once.
    failed: bool,
}

impl Printer {
    fn write(&mut self, file: &str, title: &str, module: &Module) {
        let text = nagi_low::print_module(module, None);
        match &self.dir {
            Some(dir) => {
                let path = dir.join(file);
                if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, text))
                    && !self.failed
                {
                    self.failed = true;
                    eprintln!("{}: error: cannot write the file: {e}", path.display());
                }
            }
            None => eprint!("// ===== {title} =====\n{text}"),
        }
    }
}

impl Observer for Printer {
    fn after_pass(&mut self, position: usize, pass: &'static str, module: &Module) {
        let wanted = match &self.only {
            None => true,
            Some(names) => names.iter().any(|n| n == pass),
        };
        if self.enabled && wanted {
            self.write(&format!("{position:02}-{pass}.low"), &format!("Low after pass {position} ({pass})"), module);
        }
    }
}

/// Runs the pipeline the options ask for (or `default`) on `module`, in place, and returns
/// it; each pass's time (and its verification's) is given to `timings`. After any pass ran
/// (the pipeline is not empty), the module's source map no longer matches it.
pub(crate) fn optimize(
    module: &mut Module,
    pass_options: &PassOptions,
    default: Default,
    mut timings: impl FnMut(&str, Duration, Duration),
) -> Result<Pipeline, Failure> {
    let pipeline = pipeline(pass_options, default)?;
    let only = print_filter(pass_options)?;
    let enabled = pass_options.print_low_after_all || only.as_ref().is_some_and(|o| !o.is_empty());
    if enabled {
        say_what_will_not_print(&pipeline, only.as_deref());
    }
    if pipeline.is_empty() {
        return Ok(pipeline);
    }
    let mut printer = Printer { only, dir: pass_options.print_low_dir.clone(), enabled, failed: false };
    if enabled && printer.dir.is_some() {
        printer.write("00-input.low", "input", module);
    }
    let run = RunOptions { verify_each: pass_options.verify_each || cfg!(debug_assertions) };
    match manager::run_pipeline(module, &pipeline, &run, &mut printer) {
        Ok(times) => {
            for t in times {
                timings(t.pass, t.elapsed, t.verify);
            }
            Ok(pipeline)
        }
        Err(failure) => Err(report_failure(&failure, &pipeline)),
    }
}

/// `--print-low-after` prints after the passes that run; say so when some it names never will,
/// instead of printing nothing without a word.
fn say_what_will_not_print(pipeline: &Pipeline, only: Option<&[String]>) {
    if pipeline.is_empty() {
        eprintln!(
            "nagic: note: --print-low-after: no pass runs, so nothing is printed (this command runs no passes \
             unless -O or --passes=… is given)"
        );
        return;
    }
    let text = pipeline.to_string();
    let running: Vec<&str> = text.split(',').collect();
    for name in only.unwrap_or_default() {
        if !running.contains(&name.as_str()) {
            eprintln!("nagic: note: --print-low-after: pass `{name}` is not in the pipeline `{text}`");
        }
    }
}

/// Reports a failed pass, writes the reproducer into the current directory, and says how to
/// run it again.
fn report_failure(failure: &PassFailure, pipeline: &Pipeline) -> Failure {
    let what = match &failure.kind {
        FailureKind::Panicked(message) => format!("panicked: {message}"),
        FailureKind::Broke(_) => "left a module that fails verification:".to_string(),
    };
    eprintln!(
        "nagic: internal compiler error: pass `{}` (number {} of pipeline `{pipeline}`) {what}",
        failure.pass, failure.position
    );
    if let FailureKind::Broke(diagnostics) = &failure.kind {
        eprint!("{}", nagi_low::diagnostic::render_all(diagnostics, &format!("after pass {}", failure.pass), ""));
    }
    let file = format!("nagic-repro-{}.low", failure.pass);
    let text = manager::reproducer(failure, pipeline, &file);
    match std::fs::write(Path::new(&file), text) {
        Ok(()) => eprintln!(
            "nagic: the module pass `{}` was given is in {file}; re-run it with\n  nagic --emit=low --passes='{}' {file}\n  \
             or: nagic build --passes='{}' {file}",
            failure.pass, failure.pass, failure.pass
        ),
        Err(e) => eprintln!("nagic: cannot write the reproducer {file}: {e}"),
    }
    Failure::Exit(101)
}

/// `nagic --emit=cost`: the static cost report of the module after the pipeline.
pub(crate) fn cost_report(module: &Module, pipeline: &Pipeline, input: &Path) -> String {
    let command = format!("nagic --emit=low {} {}", pipeline_flags(pipeline), input.display());
    nagi_passes::cost::report(module).render(&command)
}

/// `nagic --list-passes`: every pass with what it does, and the default pipeline.
pub(crate) fn list_passes() -> String {
    let mut out = String::new();
    for pass in nagi_passes::registry() {
        out.push_str(&format!("{:<12} {}\n", pass.name(), pass.description()));
    }
    out.push_str(&format!("\n-O runs: {}\n", nagi_passes::default_pipeline()));
    out
}
