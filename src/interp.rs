//! `nagic run --backend=interp`: the verified module runs in the Low interpreter
//! (`nagi_interp`), inside this process, with no build step.
//!
//! [`RuntimeHost`] is the interpreter's host: every print, format, JSON text and trapping
//! helper is `nagi_runtime`'s own function (the `try_` forms of the trapping ones), so the
//! interpreter shares the compiled programs' semantics instead of restating them, and prints
//! through the same buffered stdout. The end of a run is reported as a compiled program reports
//! it (`runtime/src/program.rs`): stdout flushed, then a trap's `error: <message>` on stderr and
//! exit status 101.

mod json;

use std::path::Path;

use nagi_interp::{Host, Options, RunError, Stop, Value};
use nagi_low::{ClassId, Module};
use nagi_runtime::{ops, rt};

use crate::failure::{Failure, report};
use crate::timer::Timer;

/// The exit status of a program that trapped (Rust's for a panic, as compiled programs use).
const TRAP_EXIT: u8 = 101;

/// Runs `module` (verified, from `input`) to its end, with calls at most `max_frames` deep.
pub(crate) fn run(module: &Module, input: &Path, max_frames: usize, timer: &mut Timer) -> Result<(), Failure> {
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

/// The interpreter's host: `nagi_runtime` itself.
struct RuntimeHost;

impl Host for RuntimeHost {
    fn print_i32(&mut self, v: i32) {
        rt::print_i32(v);
    }

    fn print_i64(&mut self, v: i64) {
        rt::print_i64(v);
    }

    fn print_f64(&mut self, v: f64) {
        rt::print_f64(v);
    }

    fn print_bool(&mut self, v: bool) {
        rt::print_bool(v);
    }

    fn print_str(&mut self, v: &str) {
        rt::print_str(v);
    }

    fn fmt_i32(&mut self, v: i32) -> String {
        rt::fmt_i32(v)
    }

    fn fmt_i64(&mut self, v: i64) -> String {
        rt::fmt_i64(v)
    }

    fn fmt_f64(&mut self, v: f64) -> String {
        rt::fmt_f64(v)
    }

    fn fmt_bool(&mut self, v: bool) -> String {
        rt::fmt_bool(v)
    }

    fn div_i32(&self, a: i32, b: i32) -> Result<i32, String> {
        ops::try_div_i32(a, b).map_err(str::to_string)
    }

    fn div_i64(&self, a: i64, b: i64) -> Result<i64, String> {
        ops::try_div_i64(a, b).map_err(str::to_string)
    }

    fn rem_i32(&self, a: i32, b: i32) -> Result<i32, String> {
        ops::try_rem_i32(a, b).map_err(str::to_string)
    }

    fn rem_i64(&self, a: i64, b: i64) -> Result<i64, String> {
        ops::try_rem_i64(a, b).map_err(str::to_string)
    }

    fn index(&self, index: i64, len: usize) -> Result<usize, String> {
        ops::try_index(index, len)
    }

    fn fmin(&self, a: f64, b: f64) -> f64 {
        ops::fmin(a, b)
    }

    fn fmax(&self, a: f64, b: f64) -> f64 {
        ops::fmax(a, b)
    }

    fn json_encode(&mut self, module: &Module, class: ClassId, value: &Value) -> Result<String, String> {
        json::encode(module, class, value)
    }

    fn json_decode(&mut self, module: &Module, class: ClassId, text: &str) -> Option<Value> {
        json::decode(module, class, text)
    }
}

#[cfg(test)]
mod tests {
    /// The two trap messages the interpreter words itself are the runtime's.
    #[test]
    fn the_interpreters_own_trap_messages_are_the_runtimes() {
        assert_eq!(nagi_interp::UNWRAP_OF_NONE, nagi_runtime::ops::UNWRAP_OF_NONE);
        assert_eq!(nagi_interp::STACK_OVERFLOW, nagi_runtime::stack::STACK_OVERFLOW);
    }
}
