//! Name resolution, type checking and diagnostics for High Nagi, and lowering of typed High into
//! Low.
//!
//! The pipeline inside this crate: [`check::check`] turns a parsed `SourceFile` into the typed
//! IR of [`tir`] (or every diagnostic it found), and lowering turns [`tir::Program`] into Low.

pub mod api;
pub mod check;
pub mod ide;
pub mod lower;
pub mod modules;
pub mod sql;
mod sql_text;
pub mod tir;

use nagi_low::{Diagnostic, Module};

/// Compiles High Nagi source text into a verified Low module called `module_name`: parse,
/// check (with SQL prepared against the declared tables), lower, verify. The text may not
/// `import` (see [`compile_program`]).
///
/// Errors: every diagnostic found, in source order within each phase; a syntax error stops
/// before checking, and checking errors stop before lowering. A lowered module that fails the
/// Low verifier is a compiler bug, reported as `H900` with the verifier's messages as notes.
pub fn compile(text: &str, module_name: &str) -> Result<Module, Vec<Diagnostic>> {
    compile_program("<input>", text, module_name, &mut modules::NoImports).map_err(|(diagnostics, _)| diagnostics)
}

/// Compiles a program whose main file is `main_text` (named `main_name` in messages) and the
/// modules it imports, read through `loader`, into one verified Low module called
/// `module_name` ([`modules`] has the rules).
///
/// Errors: as [`compile`], with the program's files, against which the diagnostics render
/// ([`modules::Sources::render`]).
pub fn compile_program(
    main_name: &str,
    main_text: &str,
    module_name: &str,
    loader: &mut dyn modules::Loader,
) -> Result<Module, (Vec<Diagnostic>, modules::Sources)> {
    compile_described(main_name, main_text, module_name, loader).map(|compiled| compiled.module)
}

/// A test of a test build: its name as written and its `file:line:col`, in the order of the
/// indices `rtcall test.selected` takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestCase {
    pub name: String,
    pub location: String,
}

/// [`compile_program`] as a test build (`nagic test`): the module's `main` runs the test whose
/// index the `NAGI_TEST` environment variable gives, and the tests come back in that order.
pub fn compile_tests(
    main_name: &str,
    main_text: &str,
    module_name: &str,
    loader: &mut dyn modules::Loader,
) -> Result<(Module, Vec<TestCase>), (Vec<Diagnostic>, modules::Sources)> {
    compile_full(main_name, main_text, module_name, loader, true).map(|(compiled, cases)| (compiled.module, cases))
}

/// A program compiled for a service's build: its verified Low module, with the checked program
/// and its files, from which [`api`] describes its HTTP interface.
pub struct Compiled {
    pub module: Module,
    pub program: tir::Program,
    pub sources: modules::Sources,
}

impl Compiled {
    /// The OpenAPI document of the service, compact, for its binary to serve; `None` for a
    /// program without routes.
    pub fn openapi_text(&self) -> Option<String> {
        api::has_routes(&self.program)
            .then(|| api::openapi::document(&self.program, &self.sources, &self.module.name).to_string())
    }
}

/// [`compile_program`], keeping the checked program and its files beside the module.
pub fn compile_described(
    main_name: &str,
    main_text: &str,
    module_name: &str,
    loader: &mut dyn modules::Loader,
) -> Result<Compiled, (Vec<Diagnostic>, modules::Sources)> {
    compile_full(main_name, main_text, module_name, loader, false).map(|(compiled, _)| compiled)
}

fn compile_full(
    main_name: &str,
    main_text: &str,
    module_name: &str,
    loader: &mut dyn modules::Loader,
    tests: bool,
) -> Result<(Compiled, Vec<TestCase>), (Vec<Diagnostic>, modules::Sources)> {
    let (file, sources) = modules::load_program(main_name, main_text, loader)?;
    let locate = |span: nagi_syntax::ast::Span| sources.locate(span.start as usize);
    let checked = check::check(&file, &|classes, tables| sql::sqlite_checker(classes, tables), &locate);
    let program = match checked {
        Ok(program) => program,
        Err(diagnostics) => return Err((diagnostics, sources)),
    };
    let cases = program.tests.iter().map(|t| TestCase { name: t.name.clone(), location: t.location.clone() }).collect();
    let module = match lower::lower_for(&program, module_name, tests) {
        Ok(module) => module,
        Err(diagnostics) => return Err((diagnostics, sources)),
    };
    if let Err(errors) = nagi_low::verify(&module, None) {
        let mut bug = Diagnostic::new("H900", "internal compiler error: lowering produced Low that does not verify");
        for error in errors {
            bug = bug.note(error.message);
        }
        return Err((vec![bug.note("please report this with the input file")], sources));
    }
    Ok((Compiled { module, program, sources }, cases))
}
