//! Low → Low optimization passes, the pass manager that runs a pipeline of them, and the
//! static cost report.
//!
//! A pass ([`Pass`]) rewrites a whole [`Module`] in place and keeps it verified: given a module
//! the verifier accepts, it returns one the verifier accepts, which prints the same output
//! when run. Every pass lives in its own file, named after it; most look at one function at a
//! time and provide only [`Pass::run_function`]. A pipeline is a comma-separated
//! list of pass names (`"inline,const-fold,dce"`), run by [`manager::run_pipeline`], which can
//! verify after each pass, time each pass, show the module after any of them, and turn a
//! pass's panic or verification failure into a reproducer. [`default_pipeline`] is the one
//! place the `-O` order lives. `docs/passes.md` describes every pass with an example.
//!
//! Like every core crate, this one does no IO (ARCHITECTURE.md, invariants): printing and files are the
//! driver's, through the [`manager::Observer`] hook.

#![warn(missing_docs)]

pub mod body;
pub mod callgraph;
pub mod clone_elim;
pub mod const_fold;
pub mod copy_prop;
pub mod cost;
pub mod dce;
pub mod dead_fn;
pub mod fold;
pub mod fuse_commit;
pub mod inline;
pub mod manager;
pub mod unreachable;

pub use manager::{Failure, FailureKind, Observer, Pipeline, PipelineError, RunOptions, Timing, run_pipeline};

use nagi_low::{FunctionData, Module};

/// A Low → Low transformation.
///
/// Contract: `run` on a module that verifies leaves a module that verifies and that behaves
/// the same (prints the same, traps the same, answers requests the same). A pass must not
/// panic on any verified module; the manager treats a panic as a compiler bug and writes a
/// reproducer.
pub trait Pass: Sync {
    /// The name used in pipelines and `--print-low-after`, e.g. `const-fold`.
    fn name(&self) -> &'static str;

    /// One line saying what the pass does, for `nagic --list-passes` and error messages.
    fn description(&self) -> &'static str;

    /// Rewrites `module` in place. A pass that looks across functions (inlining, removing
    /// dead functions) provides this. The provided version is the one wrapper every pass that
    /// works on one function at a time shares: it runs [`Pass::run_function`] on each function
    /// in arena order.
    fn run(&self, module: &mut Module) {
        for (_, func) in module.functions.iter_mut() {
            self.run_function(func);
        }
    }

    /// Rewrites one function in place, seeing nothing of the others. Only the provided
    /// [`Pass::run`] calls this, so a pass that provides its own `run` leaves it as it is (it
    /// does nothing); every other pass provides it.
    fn run_function(&self, func: &mut FunctionData) {
        let _ = func;
    }
}

/// Every pass, in the order `nagic --list-passes` shows them.
pub fn registry() -> &'static [&'static dyn Pass] {
    &[
        &inline::Inline,
        &const_fold::ConstFold,
        &copy_prop::CopyProp,
        &dce::Dce,
        &unreachable::Unreachable,
        &clone_elim::CloneElim,
        &dead_fn::DeadFn,
        &fuse_commit::FuseCommit,
    ]
}

/// The pass called `name`, if there is one.
pub fn pass_by_name(name: &str) -> Option<&'static dyn Pass> {
    registry().iter().copied().find(|p| p.name() == name)
}

/// The `-O` pipeline: the one place its order is written down.
///
/// Inlining first exposes constants and copies across calls; folding and propagation then
/// make values unused and branches constant; `unreachable` trims what folded branches cut
/// off; `dce` removes what no longer matters; a second round of folding and propagation
/// catches what the first round's removals exposed; `clone-elim` runs once the code around
/// each clone is final; `dead-fn` removes functions that inlining left uncalled; and
/// `fuse-commit` last, once every call that could follow a statement is known, lets a route's
/// last statement commit its request.
pub fn default_pipeline() -> &'static str {
    "inline,const-fold,copy-prop,unreachable,dce,const-fold,copy-prop,dce,clone-elim,dead-fn,fuse-commit"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bodies nested 5,000 deep (ARCHITECTURE.md, decisions) go through every pass on a test thread's
    /// ordinary stack: every walk uses an explicit stack.
    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        let depth = 5000;
        let mut text = String::from("nagi-low 1\nmodule deep\n\nfn $main() -> unit {\n  let %x: i64\n  let %c: bool\n");
        text.push_str("  %x = const 1_i64\n  %c = const true\n");
        for i in 0..depth {
            if i % 2 == 0 {
                text.push_str("if %c {\n");
            } else {
                text.push_str(&format!("block @b{i} {{\n"));
            }
        }
        text.push_str("%x = add.i64 %x, 1_i64\nrtcall print.i64(%x)\n");
        for _ in 0..depth {
            text.push_str("}\n");
        }
        text.push_str("  return\n}\n");
        let (module, _) = nagi_low::parse(&text).expect("the deep module parses");
        for pass in registry() {
            let mut m = module.clone();
            let pipeline = Pipeline::from_passes(vec![*pass]);
            run_pipeline(&mut m, &pipeline, &RunOptions { verify_each: true }, &mut ())
                .unwrap_or_else(|f| panic!("{} failed: {:?}", f.pass, f.kind));
        }
        let mut m = module;
        run_pipeline(&mut m, &Pipeline::default_o(), &RunOptions { verify_each: true }, &mut ())
            .unwrap_or_else(|f| panic!("{} failed: {:?}", f.pass, f.kind));
        let printed = nagi_low::print_module(&m, None);
        assert!(printed.contains("rtcall print.i64(2_i64)"), "const-fold sees through the nesting:\n{printed}");
    }
}
