//! The pass manager: pipelines as text, running them, and what happens when a pass fails.
//!
//! A pipeline is written as pass names separated by commas (`inline,const-fold,dce`); spaces
//! around names are ignored, a name may repeat, and the empty string is the empty pipeline
//! (`-O0`). [`run_pipeline`] runs the passes in order. After each pass it puts every function's
//! arenas back in canonical order ([`crate::body::canonicalize`]), verifies the module when
//! asked to (`verify_each`), records the pass's time, and calls the [`Observer`] (which the
//! driver uses for `--print-low-after`). Without `verify_each`, the module is verified once at
//! the end, so a broken pass never reaches an emitter either way.
//!
//! When a pass panics or leaves a module the verifier rejects, [`run_pipeline`] answers a
//! [`Failure`] naming the pass and holding the module that pass was given, recomputed by
//! replaying the passes before it on a copy of the pipeline's input (passes are deterministic),
//! so the driver can write a reproducer that runs that one pass. When only the final check
//! finds the module broken, the same replay, verifying after each pass, finds the culprit.

use std::any::Any;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use nagi_low::{Diagnostic, Module};

use crate::{Pass, pass_by_name, registry};

/// A parsed pipeline: the passes to run, in order.
#[derive(Clone)]
pub struct Pipeline {
    passes: Vec<&'static dyn Pass>,
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pipeline({:?})", self.to_string())
    }
}

/// A pipeline names a pass that does not exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineError {
    /// The name as written.
    pub unknown: String,
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = registry().iter().map(|p| p.name()).collect();
        if self.unknown.is_empty() {
            write!(f, "the pipeline has an empty pass name (two commas in a row?); known passes: {}", known.join(", "))
        } else {
            write!(f, "unknown pass `{}`; known passes: {}", self.unknown, known.join(", "))
        }
    }
}

impl std::error::Error for PipelineError {}

impl Pipeline {
    /// Reads `text`: pass names separated by commas. The empty string (or only spaces) is the
    /// empty pipeline; an unknown or empty name is an error that lists the known passes.
    pub fn parse(text: &str) -> Result<Pipeline, PipelineError> {
        if text.trim().is_empty() {
            return Ok(Pipeline { passes: Vec::new() });
        }
        let passes = text
            .split(',')
            .map(|name| {
                let name = name.trim();
                pass_by_name(name).ok_or_else(|| PipelineError { unknown: name.to_string() })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Pipeline { passes })
    }

    /// A pipeline of the given passes, which need not be in the registry (tools and tests
    /// build pipelines of their own passes this way).
    pub fn from_passes(passes: Vec<&'static dyn Pass>) -> Pipeline {
        Pipeline { passes }
    }

    /// The default `-O` pipeline ([`crate::default_pipeline`]).
    pub fn default_o() -> Pipeline {
        Pipeline::parse(crate::default_pipeline()).unwrap_or_else(|_| Pipeline { passes: Vec::new() })
    }

    /// The passes, in order.
    pub fn passes(&self) -> &[&'static dyn Pass] {
        &self.passes
    }

    /// Whether the pipeline runs nothing.
    pub fn is_empty(&self) -> bool {
        self.passes.is_empty()
    }
}

/// The canonical text of the pipeline: names joined by commas, no spaces.
impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.passes.iter().map(|p| p.name()).collect();
        f.write_str(&names.join(","))
    }
}

/// How to run a pipeline.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Verify the module after every pass (the driver sets this in debug builds and with
    /// `--verify-each`); otherwise it is verified once, after the last pass.
    pub verify_each: bool,
}

/// Sees the module after each pass; the driver prints it for `--print-low-after`.
pub trait Observer {
    /// Pass number `position` (1-based) of the pipeline, called `pass`, has left `module`.
    fn after_pass(&mut self, position: usize, pass: &'static str, module: &Module);
}

/// The observer that looks at nothing.
impl Observer for () {
    fn after_pass(&mut self, _: usize, _: &'static str, _: &Module) {}
}

/// How long one pass took.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// The pass's name.
    pub pass: &'static str,
    /// The pass itself and the arena clean-up after it; verification is not included.
    pub elapsed: Duration,
    /// Verification after the pass (zero when it did not run).
    pub verify: Duration,
}

/// What went wrong in a pass.
#[derive(Debug)]
pub enum FailureKind {
    /// The pass panicked, with this message.
    Panicked(String),
    /// The verifier rejected the module the pass left.
    Broke(Vec<Diagnostic>),
}

/// A pass failed. Holds what a reproducer needs.
#[derive(Debug)]
pub struct Failure {
    /// The pass's position in the pipeline, 1-based.
    pub position: usize,
    /// The pass's name.
    pub pass: &'static str,
    /// What went wrong.
    pub kind: FailureKind,
    /// The module the failing pass was given; running `pass` alone on it fails the same way.
    pub input: Module,
}

/// Runs `pipeline` on `module`, in place. Answers each pass's time, or the first failure;
/// after a failure `module` is unspecified (the caller reports and stops).
pub fn run_pipeline(
    module: &mut Module,
    pipeline: &Pipeline,
    options: &RunOptions,
    observer: &mut dyn Observer,
) -> Result<Vec<Timing>, Box<Failure>> {
    if pipeline.is_empty() {
        return Ok(Vec::new());
    }
    let input = module.clone();
    let mut timings = Vec::with_capacity(pipeline.passes.len());
    for (i, &pass) in pipeline.passes.iter().enumerate() {
        let start = Instant::now();
        let ran = run_one(pass, module);
        let elapsed = start.elapsed();
        let fail = |kind| Failure { position: i + 1, pass: pass.name(), kind, input: replay(&input, pipeline, i) };
        if let Err(message) = ran {
            return Err(Box::new(fail(FailureKind::Panicked(message))));
        }
        let mut verify = Duration::ZERO;
        if options.verify_each {
            let start = Instant::now();
            let checked = nagi_low::verify(module, None);
            verify = start.elapsed();
            if let Err(diagnostics) = checked {
                return Err(Box::new(fail(FailureKind::Broke(diagnostics))));
            }
        }
        timings.push(Timing { pass: pass.name(), elapsed, verify });
        observer.after_pass(i + 1, pass.name(), module);
    }
    if !options.verify_each
        && let Err(diagnostics) = nagi_low::verify(module, None)
    {
        return Err(Box::new(find_culprit(&input, pipeline).unwrap_or_else(|| {
            // Unreachable for deterministic passes: the replay breaks where the run did. Blame
            // the last pass rather than lose the report.
            let last = pipeline.passes.len() - 1;
            Failure {
                position: last + 1,
                pass: pipeline.passes[last].name(),
                kind: FailureKind::Broke(diagnostics),
                input: replay(&input, pipeline, last),
            }
        })));
    }
    Ok(timings)
}

/// Runs one pass and the arena clean-up, turning a panic into its message.
fn run_one(pass: &dyn Pass, module: &mut Module) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| {
        pass.run(module);
        for (_, func) in module.functions.iter_mut() {
            crate::body::canonicalize(func);
        }
    }))
    .map_err(|payload| panic_message(&*payload))
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// The module that pass number `upto` (0-based) of `pipeline` was given: the passes before
/// it, run again on `input`.
fn replay(input: &Module, pipeline: &Pipeline, upto: usize) -> Module {
    let mut module = input.clone();
    for &pass in &pipeline.passes[..upto] {
        if run_one(pass, &mut module).is_err() {
            // Passes are deterministic, so this does not happen; the input is the next best
            // thing to hand back.
            return input.clone();
        }
    }
    module
}

/// Replays `pipeline` on `input`, verifying after each pass, and answers the first pass that
/// breaks the module.
fn find_culprit(input: &Module, pipeline: &Pipeline) -> Option<Failure> {
    let mut module = input.clone();
    for (i, &pass) in pipeline.passes.iter().enumerate() {
        let before = module.clone();
        if let Err(message) = run_one(pass, &mut module) {
            return Some(Failure {
                position: i + 1,
                pass: pass.name(),
                kind: FailureKind::Panicked(message),
                input: before,
            });
        }
        if let Err(diagnostics) = nagi_low::verify(&module, None) {
            return Some(Failure {
                position: i + 1,
                pass: pass.name(),
                kind: FailureKind::Broke(diagnostics),
                input: before,
            });
        }
    }
    None
}

/// The text of a reproducer file: `input` printed as Low, with a header saying what failed
/// and how to run it again. `file` is the name the reproducer will be written under.
pub fn reproducer(failure: &Failure, pipeline: &Pipeline, file: &str) -> String {
    let low = nagi_low::print_module(&failure.input, None);
    let what = match &failure.kind {
        FailureKind::Panicked(message) => format!("panicked: {}", message.lines().next().unwrap_or("")),
        FailureKind::Broke(d) => format!("left a module the verifier rejects ({} errors)", d.len()),
    };
    let header = format!(
        "// nagic reproducer: pass `{}` (number {} of pipeline `{}`) {what}.\n\
         // This is the module the pass was given. Run it again with:\n\
         //   nagic --emit=low --passes='{}' {file}\n",
        failure.pass, failure.position, pipeline, failure.pass
    );
    // Comments may not come before the version line, so the header goes right after it.
    match low.split_once('\n') {
        Some((version, rest)) => format!("{version}\n{header}{rest}"),
        None => format!("{low}\n{header}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass that panics, as a buggy one would.
    struct Panics;

    impl Pass for Panics {
        fn name(&self) -> &'static str {
            "panics"
        }
        fn description(&self) -> &'static str {
            "panics"
        }
        fn run(&self, _: &mut Module) {
            panic!("this pass is broken on purpose");
        }
    }

    /// A pass that removes every `return`, which breaks V245 in any function with one.
    struct DropsReturns;

    impl Pass for DropsReturns {
        fn name(&self) -> &'static str {
            "drops-returns"
        }
        fn description(&self) -> &'static str {
            "removes returns"
        }
        fn run(&self, module: &mut Module) {
            for (_, func) in module.functions.iter_mut() {
                for (_, block) in func.blocks.iter_mut() {
                    block.ops.retain(|op| !matches!(func.ops[*op].kind, nagi_low::OpKind::Return { .. }));
                }
            }
        }
    }

    const TEXT: &str = "nagi-low 1\nmodule m\n\nfn $main() -> unit {\n  let %x: i64\n  %x = add.i64 1_i64, 2_i64\n  \
                        rtcall print.i64(%x)\n  return\n}\n";

    fn module() -> Module {
        nagi_low::parse(TEXT).expect("the test module parses").0
    }

    fn folded() -> Module {
        let mut m = module();
        crate::const_fold::ConstFold.run(&mut m);
        for (_, f) in m.functions.iter_mut() {
            crate::body::canonicalize(f);
        }
        m
    }

    #[test]
    fn unknown_names_list_the_known_passes() {
        let e = Pipeline::parse("inline, nope").unwrap_err();
        assert_eq!(e.unknown, "nope");
        let text = e.to_string();
        assert!(text.contains("unknown pass `nope`") && text.contains("const-fold") && text.contains("dead-fn"));
        assert!(Pipeline::parse(" ").unwrap().is_empty());
        assert_eq!(Pipeline::parse(" dce , inline ").unwrap().to_string(), "dce,inline");
        assert!(Pipeline::parse("dce,,inline").is_err());
        assert_eq!(Pipeline::default_o().to_string(), crate::default_pipeline());
    }

    #[test]
    fn a_panicking_pass_is_named_and_gets_the_module_it_was_given() {
        let pipeline = Pipeline::from_passes(vec![&crate::const_fold::ConstFold, &Panics]);
        let mut m = module();
        let failure = run_pipeline(&mut m, &pipeline, &RunOptions::default(), &mut ()).unwrap_err();
        assert_eq!((failure.pass, failure.position), ("panics", 2));
        assert!(matches!(&failure.kind, FailureKind::Panicked(msg) if msg.contains("broken on purpose")));
        assert_eq!(failure.input, folded());
        let repro = reproducer(&failure, &pipeline, "nagic-repro-panics.low");
        assert!(
            repro.starts_with(
                "nagi-low 1\n// nagic reproducer: pass `panics` (number 2 of pipeline `const-fold,panics`)"
            )
        );
        assert!(repro.contains("nagic --emit=low --passes='panics' nagic-repro-panics.low"));
        let (again, source) = nagi_low::parse(&repro).expect("the reproducer parses");
        nagi_low::verify(&again, Some(&source)).expect("the reproducer verifies");
        assert_eq!(again, folded());
    }

    #[test]
    fn a_pass_that_breaks_verification_is_found_with_or_without_verify_each() {
        let pipeline = Pipeline::from_passes(vec![&crate::const_fold::ConstFold, &DropsReturns, &crate::dce::Dce]);
        for verify_each in [true, false] {
            let mut m = module();
            let failure = run_pipeline(&mut m, &pipeline, &RunOptions { verify_each }, &mut ()).unwrap_err();
            assert_eq!((failure.pass, failure.position), ("drops-returns", 2), "verify_each: {verify_each}");
            assert!(matches!(&failure.kind, FailureKind::Broke(d) if d.iter().any(|d| d.code == "V245")));
            assert_eq!(failure.input, folded());
        }
    }

    #[test]
    fn the_observer_sees_every_pass_and_timings_are_recorded() {
        struct Seen(Vec<(usize, &'static str)>);
        impl Observer for Seen {
            fn after_pass(&mut self, position: usize, pass: &'static str, _: &Module) {
                self.0.push((position, pass));
            }
        }
        let mut seen = Seen(Vec::new());
        let mut m = module();
        let pipeline = Pipeline::parse("const-fold,dce").unwrap();
        let timings = run_pipeline(&mut m, &pipeline, &RunOptions { verify_each: true }, &mut seen).unwrap();
        assert_eq!(seen.0, vec![(1, "const-fold"), (2, "dce")]);
        assert_eq!(timings.iter().map(|t| t.pass).collect::<Vec<_>>(), vec!["const-fold", "dce"]);
    }
}
