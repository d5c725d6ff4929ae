//! Name resolution, type checking and diagnostics for High Nagi, and lowering of typed High into
//! Low.
//!
//! The pipeline inside this crate: [`check::check`] turns a parsed `SourceFile` into the typed
//! IR of [`tir`] (or every diagnostic it found), and lowering turns [`tir::Program`] into Low.

pub mod check;
pub mod lower;
pub mod sql;
mod sql_text;
pub mod tir;

use nagi_low::{Diagnostic, Module, Span};

/// Compiles High Nagi source text into a verified Low module called `module_name`: parse,
/// check (with SQL prepared against the declared tables), lower, verify.
///
/// Errors: every diagnostic found, in source order within each phase; a syntax error stops
/// before checking, and checking errors stop before lowering. A lowered module that fails the
/// Low verifier is a compiler bug, reported as `H900` with the verifier's messages as notes.
pub fn compile(text: &str, module_name: &str) -> Result<Module, Vec<Diagnostic>> {
    let file = nagi_syntax::parse(text).map_err(|e| {
        vec![Diagnostic::new("H100", e.message).at(Some(Span { start: e.span.start, end: e.span.end })).label(e.label)]
    })?;
    let program = check::check(&file, &|classes, tables| sql::sqlite_checker(classes, tables))?;
    let module = lower::lower(&program, module_name)?;
    if let Err(errors) = nagi_low::verify(&module, None) {
        let mut bug = Diagnostic::new("H900", "internal compiler error: lowering produced Low that does not verify");
        for error in errors {
            bug = bug.note(error.message);
        }
        return Err(vec![bug.note("please report this with the input file")]);
    }
    Ok(module)
}
