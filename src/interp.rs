//! `nagic run --backend=interp`: the verified module runs in the Low interpreter
//! (`nagi_interp`), inside this process, with no build step.
//!
//! The host is `nagi_interp_host::RuntimeHost`, the runtime's own functions. The end of a run is
//! reported as a compiled program reports it (`runtime/src/program.rs`): stdout flushed, then a
//! trap's `error: <message>` on stderr and exit status 101.

use std::path::Path;

use nagi_interp::{Options, RunError, Stop};
use nagi_interp_host::RuntimeHost;
use nagi_low::Module;
use nagi_runtime::rt;

use crate::failure::{Failure, report};
use crate::timer::Timer;

/// The exit status of a program that trapped (Rust's for a panic, as compiled programs use).
const TRAP_EXIT: u8 = 101;

/// Runs `module` (verified, from `input`) to its end, with calls at most `max_frames` deep.
pub(crate) fn run(module: &Module, input: &Path, max_frames: usize, timer: &mut Timer) -> Result<(), Failure> {
    crate::configuration::bind(module);
    let result = nagi_interp::run(module, &mut RuntimeHost, &Options { max_frames, ..Options::default() });
    rt::flush_stdout();
    timer.phase("interpret");
    match result {
        Ok(()) => Ok(()),
        Err(RunError::Refused(diagnostic)) => Err(report(&[diagnostic], &input.display().to_string(), "")),
        Err(RunError::Stopped(Stop::Trap(message))) => {
            eprintln!("error: {message}");
            Err(Failure::Exit(TRAP_EXIT))
        }
        Err(RunError::Stopped(Stop::Fault(message))) => {
            eprintln!("error: internal error: {message}");
            Err(Failure::Exit(TRAP_EXIT))
        }
        // No step limit is set here.
        Err(RunError::Stopped(Stop::OutOfSteps)) => {
            eprintln!("error: internal error: the interpreter ran out of steps");
            Err(Failure::Exit(TRAP_EXIT))
        }
    }
}
