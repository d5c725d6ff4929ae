//! `run --backend=jit`: the program compiled by LLVM's JIT and run in this process, against the
//! runtime this driver links (no linker, no executable), reported as a compiled program reports
//! its end: stdout flushed, a trap's `error: <message>` on stderr (printed by the runtime's
//! hook) and exit status 101.

use std::path::Path;

use nagi_low::Module;
use nagi_runtime::cabi::inprocess;
use nagi_runtime::rt;

use crate::failure::{Failure, report};
use crate::target::Target;
use crate::timer::Timer;

/// The exit status of a program that trapped, as compiled programs use.
const TRAP_EXIT: u8 = 101;

/// The stack the program runs on: what a compiled program's main thread gets by default on
/// Linux (the usual `ulimit -s`), so that recursion overflows at the same depth as there.
const PROGRAM_STACK: usize = 8 << 20;

/// Compiles `module` (verified, from `input`) with the JIT at `--llvm-opt` and runs its `main`
/// on a thread of its own.
pub(crate) fn run(module: &Module, input: &Path, target: &Target, timer: &mut Timer) -> Result<(), Failure> {
    let options = target.llvm(None);
    crate::configuration::bind(module);
    inprocess::begin();
    let result = std::thread::scope(|scope| {
        let thread = std::thread::Builder::new().name("main".to_string()).stack_size(PROGRAM_STACK);
        let program = thread.spawn_scoped(scope, || {
            let mut phases = Vec::new();
            let outcome = nagi_emit_llvm::run_main(module, &options, &inprocess::symbol, &mut |phase| {
                phases.push(phase.to_string());
            });
            if matches!(outcome, Ok(code) if code != 0) {
                // The hook has printed the trap; its payload lives in this thread's slot.
                let _ = inprocess::take_trap();
            }
            (outcome, phases)
        });
        program.map(|handle| handle.join())
    });
    rt::flush_stdout();
    let (outcome, phases) = match result {
        Ok(Ok(joined)) => joined,
        _ => {
            eprintln!("nagic: error: the program's thread could not run");
            return Err(Failure::Exit(TRAP_EXIT));
        }
    };
    for phase in &phases {
        timer.phase(phase);
    }
    timer.phase("jit run");
    match outcome {
        Ok(0) => Ok(()),
        Ok(_) => Err(Failure::Exit(TRAP_EXIT)),
        Err(diagnostic) => Err(report(&[diagnostic], &input.display().to_string(), "")),
    }
}
