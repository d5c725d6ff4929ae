//! The Low interpreter: a third executor beside the Rust and LLVM emitters, which runs a verified
//! Low module directly, with no code generation, no `rustc` and no LLVM.
//!
//! It gives the same stdout bytes and the same traps as both emitters: everything that leaves
//! it, and every rule the runtime defines (printing, formatting, JSON, index checks, the
//! wording of traps), goes through a [`Host`], which the driver implements with
//! `nagi_runtime`'s own functions. The scalar operations of docs/design.md §2 (wrapping
//! integers, trapping division, masked shifts, saturating casts, IEEE floats, `min`/`max` of
//! floats) are [`nagi_low::eval`]'s, the one definition the constant folder uses too.
//!
//! Layout: [`value`] (values, and references as places), `stack` (frames and local access),
//! `machine` (the run loop, structured control flow, calls and returns), and the operations by
//! group: `scalar` (arithmetic, comparisons, casts), `data` (objects, arrays, strings, options,
//! ownership), `rtcall` (runtime calls). The call stack is an explicit vector of frames and
//! each frame an explicit stack of open blocks, so neither deep Low recursion nor deep nesting
//! uses the host's thread stack; a call deeper than [`Options::max_frames`] is the trap
//! `stack overflow`.
//!
//! What it refuses ([`check`]): routes (services) and the database; `await` runs the awaited
//! call to completion, in place.

mod data;
mod host;
mod machine;
mod maps;
mod rtcall;
mod scalar;
mod stack;
#[cfg(test)]
mod tests;
pub mod value;

use nagi_low::{Diagnostic, FuncId, Module, OpKind};

pub use host::Host;
pub use value::Value;

// The messages of the traps the interpreter words itself (`option.unwrap` of none, a call past
// [`Options::max_frames`]): every backend's, from `nagi_abi`.
pub use nagi_abi::trap_text::{STACK_OVERFLOW, UNWRAP_OF_NONE};

/// The default for [`Options::max_frames`]. The compiled programs trap when the thread's stack
/// is exhausted, which for a small recursive function on the 8 MiB main stack is some 10⁵
/// frames; the interpreter's frames are on the heap, a few hundred bytes each, so this depth
/// costs tens of MiB at most.
pub const DEFAULT_MAX_FRAMES: usize = 100_000;

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The deepest call stack allowed, `$main`'s frame included; a call beyond it traps with
    /// `stack overflow`.
    pub max_frames: usize,
    /// How many operations may run before the run stops with [`Stop::OutOfSteps`]; unlimited
    /// by default. Tests and fuzzers that run generated programs, which may loop forever, set it.
    pub max_steps: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options { max_frames: DEFAULT_MAX_FRAMES, max_steps: u64::MAX }
    }
}

/// Why a run stopped before `$main` returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A Nagi trap, with its message: the program's runtime error (a compiled program prints
    /// `error: <message>` and exits with 101).
    Trap(String),
    /// Something verified Low cannot do happened (a read of a moved local, a reference that
    /// no longer resolves): a bug in the verifier or the interpreter, never the program's
    /// behaviour.
    Fault(String),
    /// [`Options::max_steps`] operations ran and the program had not ended.
    OutOfSteps,
}

/// Checks that the interpreter can run `module` and finds its `$main`: routes (services),
/// tasks and database calls are refused with a diagnostic naming the construct, as the LLVM emitter
/// refuses what it does not support.
pub fn check(module: &Module) -> Result<FuncId, Diagnostic> {
    if module.is_service() {
        let what = match (module.routes.first(), module.queues.values().next()) {
            (Some(route), _) => format!("route {} {}", route.method.name(), route.path),
            (None, Some(queue)) => format!("queue {}", queue.name),
            (None, None) => module.name.clone(),
        };
        return Err(Diagnostic::new(
            "I101",
            format!("the interpreter does not run services ({what}); build services with --backend=rust"),
        ));
    }
    for func in module.functions.values() {
        for op in func.ops.values() {
            if matches!(
                op.kind,
                OpKind::ScopeNew { .. }
                    | OpKind::ActorStart { .. }
                    | OpKind::SupervisorChild { .. }
                    | OpKind::DeferNew { .. }
                    | OpKind::QueuePush { .. }
            ) {
                let what = match op.kind {
                    OpKind::ScopeNew { .. } => "tasks",
                    OpKind::DeferNew { .. } => "deferred calls",
                    OpKind::QueuePush { .. } => "job queues",
                    _ => "actors",
                };
                return Err(Diagnostic::new(
                    "I103",
                    format!(
                        "the interpreter does not run {what} ({} in ${}); run this program with --backend=rust \
                         or --backend=llvm",
                        op.kind.opcode().map_or("?", |o| o.name()),
                        func.name
                    ),
                ));
            }
            if let OpKind::RuntimeCall { func: rt, .. } = &op.kind
                && rt.uses_database()
            {
                return Err(Diagnostic::new(
                    "I102",
                    format!(
                        "the interpreter does not support the database (rtcall {} in ${}); run this program with \
                         --backend=rust",
                        rt.name(),
                        func.name
                    ),
                ));
            }
        }
    }
    module.function_by_name("main").ok_or_else(|| {
        Diagnostic::new("I100", format!("module `{}` has nothing to run: it has no `main` function", module.name))
    })
}

/// Runs `$main` of `module`, which must be verified, to its end: `Ok` when it returned, the
/// trap or fault otherwise. Output already given to the host stays given.
pub fn run(module: &Module, host: &mut dyn Host, options: &Options) -> Result<(), RunError> {
    let main = check(module).map_err(RunError::Refused)?;
    machine::Machine::new(module, host, options).run(main).map_err(RunError::Stopped)
}

/// Why [`run`] did not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// [`check`] refused the module; nothing ran.
    Refused(Diagnostic),
    /// The program stopped.
    Stopped(Stop),
}
