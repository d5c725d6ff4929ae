//! `nagic openapi` and `nagic client`: a service's HTTP interface as the compiler knows it
//! ([`nagi_high::api`]), written as an OpenAPI 3.1 document or a typed TypeScript client.

use std::path::Path;

use clap::ValueEnum;

use crate::failure::Failure;
use crate::load::load_described;
use crate::output::write_output;

/// The languages `nagic client` writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lang {
    /// TypeScript, on the platform's `fetch` (compiles under `tsc --strict`).
    Ts,
}

/// `nagic openapi FILE [-o OUT]`: the service's OpenAPI 3.1 document, indented.
pub(crate) fn openapi(input: &Path, output: Option<&Path>) -> Result<(), Failure> {
    let compiled = described_service(input)?;
    let document = nagi_high::api::openapi::document(&compiled.program, &compiled.sources, &compiled.module.name);
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    write_output(output, &text)
}

/// `nagic client --lang=ts FILE [-o OUT]`: the service's typed client.
pub(crate) fn client(lang: Lang, input: &Path, output: Option<&Path>) -> Result<(), Failure> {
    let compiled = described_service(input)?;
    let text = match lang {
        Lang::Ts => nagi_high::api::typescript::client(&compiled.program, &compiled.sources, &compiled.module.name),
    };
    write_output(output, &text)
}

/// The compiled program of `input`, which must be a High Nagi service (Low text keeps no doc
/// comments, defaults or failure statuses to describe).
fn described_service(input: &Path) -> Result<nagi_high::Compiled, Failure> {
    if input.extension().is_none_or(|e| e != "nagi") {
        eprintln!("{}: error: the API is described from High Nagi (a `.nagi` file)", input.display());
        return Err(Failure::Input);
    }
    let compiled = load_described(input)?;
    if !nagi_high::api::has_routes(&compiled.program) {
        eprintln!("{}: error: the program has no routes, so no HTTP interface to describe", input.display());
        return Err(Failure::Input);
    }
    Ok(compiled)
}
