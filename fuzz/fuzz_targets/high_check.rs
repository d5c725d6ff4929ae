//! Fuzz target: High Nagi text → parse → check → lower → verify.
//!
//! For every input that is valid UTF-8, nothing may panic, and one oracle must hold: a program
//! the checker accepts lowers either to ownership diagnostics or to Low that passes the Low
//! verifier and prints in a form that parses back to the same module. A failure of that oracle
//! is a front-end bug (it would surface to users as an `H900` internal error).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nagi_high::{check, lower};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(file) = nagi_syntax::parse(text) else { return };
    // SQL is not prepared here: an in-memory database per input would slow the fuzzer tenfold,
    // and SQL checking has its own tests.
    let program = match check::check(&file, &check::no_sql_check) {
        Ok(program) => program,
        Err(diagnostics) => {
            for diagnostic in &diagnostics {
                let _ = diagnostic.render("fuzz.nagi", text);
            }
            return;
        }
    };
    let Ok(module) = lower::lower(&program, "fuzz") else { return };
    if let Err(errors) = nagi_low::verify(&module, None) {
        let printed = nagi_low::print_module(&module, None);
        panic!("checked program lowers to Low that does not verify: {errors:?}\n--- input ---\n{text}\n--- low ---\n{printed}");
    }
    let printed = nagi_low::print_module(&module, None);
    let (reparsed, _) = nagi_low::parse(&printed).expect("lowered Low parses");
    assert_eq!(nagi_low::print_module(&reparsed, None), printed);
});
