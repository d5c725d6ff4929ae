//! Fuzz target: libFuzzer's bytes → a random well-typed High program (`nagi_progen::program`,
//! maybe with a module `lib` beside its main file) → check, lower, the default Low passes →
//! run in this process on three executors, which must agree byte for byte on what the program
//! printed and on its trap, if any:
//!
//! - the Low interpreter, with the runtime as its host (`nagi_interp_host::RuntimeHost`);
//! - the LLVM emitter's JIT at -O0 and at -O2 (`nagi_emit_llvm::run_main`), calling the
//!   runtime's C ABI by address.
//!
//! The program runs twice over: its `main`, then its test build (`nagi_progen::compile_tests`,
//! as `nagic test` builds it) once for each test, selected through `NAGI_TEST` as a test process
//! is (the runtime's `test.selected` reads it on every executor), so failing functions, `try`
//! and assertions are compared too: a failed assertion or a failure ends a test as a trap with
//! its message.
//!
//! Printing is captured per run (`nagi_runtime::rt::capture`); a trap is the interpreter's
//! `Stop::Trap` message, and on the JIT the message the runtime's guard caught. A program the
//! generator writes must check and lower (else that is a generator or checker bug); one that
//! the interpreter cannot finish within its step budget is skipped rather than run natively, and
//! so is one with a `config` (bound once per process, so only the batch mode runs those).
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use nagi_interp::{RunError, Stop};
use nagi_low::Module;
use nagi_runtime::cabi::inprocess;

/// What one executor did: the bytes printed, and the trap's message if it trapped.
type Outcome = (Vec<u8>, Option<String>);

/// The environment variable a test build reads (`nagi_runtime::program::TEST_VARIABLE`).
const TEST_VARIABLE: &str = nagi_runtime::program::TEST_VARIABLE;

fn interpret(module: &Module) -> Option<Outcome> {
    let options = nagi_interp::Options { max_steps: 5_000_000, ..nagi_interp::Options::default() };
    let (result, printed) =
        nagi_runtime::rt::capture(|| nagi_interp::run(module, &mut nagi_interp_host::RuntimeHost, &options));
    match result {
        Ok(()) => Some((printed, None)),
        Err(RunError::Stopped(Stop::Trap(message))) => Some((printed, Some(message))),
        Err(RunError::Stopped(Stop::OutOfSteps)) => None,
        Err(other) => panic!("the interpreter failed on a generated program: {other:?}"),
    }
}

fn jit(module: &Module, opt_level: u8) -> Outcome {
    let options = nagi_emit_llvm::Options { opt_level, ..nagi_emit_llvm::Options::default() };
    let (answer, printed) =
        nagi_runtime::rt::capture(|| nagi_emit_llvm::run_main(module, &options, &inprocess::symbol, &mut |_| {}));
    match answer {
        Ok(0) => (printed, None),
        Ok(_) => (printed, inprocess::take_trap()),
        Err(diagnostic) => panic!("the JIT refused a generated program: {}", diagnostic.message),
    }
}

/// Runs `module` with `NAGI_TEST` set to `test` (or unset) on every executor and panics when
/// they disagree; `false` when the interpreter ran out of steps, so the rest is skipped.
fn compare(module: &Module, test: Option<usize>, text: &str) -> bool {
    // SAFETY: libFuzzer runs this target on one thread, and no executor starts another, so no
    // thread reads the environment while it changes.
    unsafe {
        match test {
            Some(index) => std::env::set_var(TEST_VARIABLE, index.to_string()),
            None => std::env::remove_var(TEST_VARIABLE),
        }
    }
    let run = match test {
        Some(index) => format!("test {index}"),
        None => "main".to_string(),
    };
    // A failure is recorded per thread until the test reports it; none may reach the next run.
    let _ = nagi_runtime::failure::take();
    let Some(reference) = interpret(module) else { return false };
    for level in [0, 2] {
        let _ = nagi_runtime::failure::take();
        let native = jit(module, level);
        if native != reference {
            panic!(
                "the interpreter and the JIT at -O{level} disagree on {run}\n--- program ---\n{text}\n\
                 --- interpreter ---\n{}trap: {:?}\n--- jit ---\n{}trap: {:?}",
                String::from_utf8_lossy(&reference.0),
                reference.1,
                String::from_utf8_lossy(&native.0),
                native.1
            );
        }
    }
    true
}

fn optimize(module: &mut Module, text: &str) {
    let pipeline = nagi_passes::manager::Pipeline::parse(nagi_passes::default_pipeline()).expect("the default");
    nagi_passes::manager::run_pipeline(module, &pipeline, &Default::default(), &mut ())
        .unwrap_or_else(|failure| panic!("pass {} failed on a generated program\n{text}", failure.pass));
}

fuzz_target!(|data: &[u8]| {
    // The runtime raises a trap as its own panic and catches it at once (cabi::guard); its hook
    // reports that as the trap it is, where libFuzzer's hook would abort on any panic.
    inprocess::begin();
    let mut bytes = Unstructured::new(data);
    let Ok(text) = nagi_progen::program(&mut bytes) else { return };
    let mut module = nagi_progen::compile(&text, "fuzz")
        .unwrap_or_else(|errors| panic!("a generated program does not compile:\n{errors}\n{text}"));
    // A program's configuration is bound once per process (as a service's is before it
    // listens), so a program with a `config` would read the first such program's values, or
    // none: those programs run in the batch mode (`nagi-progen`), each in a process of its own.
    if !module.configs.is_empty() {
        return;
    }
    optimize(&mut module, &text);
    if !compare(&module, None, &text) {
        return;
    }
    let (mut tests, count) = nagi_progen::compile_tests(&text, "fuzz")
        .unwrap_or_else(|errors| panic!("a generated program does not compile as a test build:\n{errors}\n{text}"));
    if count == 0 {
        return;
    }
    optimize(&mut tests, &text);
    for test in 0..count {
        if !compare(&tests, Some(test), &text) {
            return;
        }
    }
});
