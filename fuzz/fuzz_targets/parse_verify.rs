//! Fuzz target: Low text → parse → verify, plus the printer round trip.
//!
//! For every input that is valid UTF-8:
//! - `parse` must not panic; an error must render (`Diagnostic::render`) without panicking;
//! - on success, `verify` must not panic, and its diagnostics must render;
//! - the printer round trip must hold: `parse(print_module(&m, None))` succeeds and gives a
//!   module equal to `m`, and printing that module again gives the same text. With the source
//!   map, printing must not panic either, and must read back as the same module.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nagi_low::verifier::verify;
use nagi_low::{parse, print_module};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (module, source) = match parse(text) {
        Ok(parsed) => parsed,
        Err(diagnostic) => {
            let _ = diagnostic.render("fuzz.low", text);
            return;
        }
    };

    // The verifier must not panic, with or without the source map, and its errors must render.
    if let Err(diagnostics) = verify(&module, Some(&source)) {
        for diagnostic in &diagnostics {
            let _ = diagnostic.render("fuzz.low", text);
        }
    }
    if let Err(diagnostics) = verify(&module, None) {
        for diagnostic in &diagnostics {
            let _ = diagnostic.render("fuzz.low", "");
        }
    }

    // Round trip without the source map (the canonical form).
    let printed = print_module(&module, None);
    let reparsed = match parse(&printed) {
        Ok((reparsed, _)) => reparsed,
        Err(diagnostic) => panic!(
            "printed module does not parse:\n{}\n--- input ---\n{text}\n--- printed ---\n{printed}",
            diagnostic.render("printed.low", &printed)
        ),
    };
    assert!(
        reparsed == module,
        "parse(print(m)) != m\n--- input ---\n{text}\n--- printed ---\n{printed}\n--- m ---\n{module:#?}\n--- reparsed ---\n{reparsed:#?}"
    );
    let printed_again = print_module(&reparsed, None);
    assert!(
        printed_again == printed,
        "printing is not stable\n--- input ---\n{text}\n--- first ---\n{printed}\n--- second ---\n{printed_again}"
    );

    // Round trip with the source map (comments kept): must also read back as the same module.
    let printed_with_comments = print_module(&module, Some(&source));
    match parse(&printed_with_comments) {
        Ok((reparsed, _)) => assert!(
            reparsed == module,
            "parse(print(m, source)) != m\n--- input ---\n{text}\n--- printed ---\n{printed_with_comments}"
        ),
        Err(diagnostic) => panic!(
            "module printed with its source map does not parse:\n{}\n--- input ---\n{text}\n--- printed ---\n{printed_with_comments}",
            diagnostic.render("printed.low", &printed_with_comments)
        ),
    }
});
