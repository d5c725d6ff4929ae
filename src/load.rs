//! Reading the input: a High Nagi file (`.nagi`, parsed, checked and lowered by `nagi-high`) or
//! a Low file (`.low`, parsed and verified), then the `--replace` files' functions swapped in;
//! every diagnostic is printed to stderr.

use std::path::{Path, PathBuf};

use nagi_high::modules::Directory;
use nagi_low::{Module, SourceMap};

use crate::failure::{Failure, report};

/// A verified Low module read from a file, with what is needed to report on it.
pub(crate) struct Loaded {
    pub(crate) module: Module,
    /// Spans and comments of the Low text; empty for High input and after a replacement.
    pub(crate) source: SourceMap,
    /// The OpenAPI document of a High Nagi service (compact JSON); `None` otherwise.
    pub(crate) openapi: Option<String>,
}

/// Reads and verifies `path`, then replaces its functions by those of the `replace` files (in
/// order), printing every diagnostic to stderr.
pub(crate) fn load(path: &Path, replace: &[PathBuf]) -> Result<Loaded, Failure> {
    let mut loaded = load_one(path)?;
    for replacement in replace {
        let with = load_one(replacement)?;
        let name = replacement.display().to_string();
        if let Err(diagnostics) = nagi_low::replace::replace_functions(&mut loaded.module, &with.module) {
            return Err(report(&diagnostics, &name, ""));
        }
        // Spans and comments belong to the original text; after a replacement they would
        // point at the wrong lines, so the module is printed without them.
        loaded.source = SourceMap::default();
    }
    if !replace.is_empty()
        && let Err(diagnostics) = nagi_low::verify(&loaded.module, None)
    {
        return Err(report(&diagnostics, &path.display().to_string(), ""));
    }
    Ok(loaded)
}

/// Reads one input file without replacements.
fn load_one(path: &Path) -> Result<Loaded, Failure> {
    let name = path.display().to_string();
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("{name}: error: cannot read the file: {e}");
            return Err(Failure::Input);
        }
    };
    let is_low = path.extension().is_some_and(|e| e == "low");
    let text = String::from_utf8(bytes).map_err(|e| invalid_utf8(&name, e, is_low))?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("low") => {}
        Some("nagi") => {
            let compiled = compile_described(path, &name, &text)?;
            let openapi = compiled.openapi_text();
            return Ok(Loaded { module: compiled.module, source: SourceMap::default(), openapi });
        }
        _ => {
            eprintln!("{name}: error: unknown input kind; nagic reads High Nagi (`.nagi`) and Low (`.low`) files");
            return Err(Failure::Input);
        }
    }
    let (module, source) = nagi_low::parse(&text).map_err(|d| report(&[d], &name, &text))?;
    nagi_low::verifier::verify(&module, Some(&source)).map_err(|d| report(&d, &name, &text))?;
    Ok(Loaded { module, source, openapi: None })
}

/// Compiles the High Nagi program at `path` (whose main file's text is `text`), keeping the
/// checked program beside its module ([`nagi_high::Compiled`]); diagnostics go to stderr.
fn compile_described(path: &Path, name: &str, text: &str) -> Result<nagi_high::Compiled, Failure> {
    let mut loader = modules_beside(path);
    nagi_high::compile_described(name, text, &module_name(path), &mut loader).map_err(|(diagnostics, sources)| {
        eprint!("{}", sources.render(&diagnostics));
        Failure::Input
    })
}

/// Reads and compiles the High Nagi program at `path` for a description of its interface
/// (`nagic openapi`, `nagic client`).
pub(crate) fn load_described(path: &Path) -> Result<nagi_high::Compiled, Failure> {
    let (name, text) = read_high(path)?;
    compile_described(path, &name, &text)
}

/// The name (as messages show it) and the text of the High Nagi file at `path`; a file that
/// cannot be read or is not UTF-8 is reported.
fn read_high(path: &Path) -> Result<(String, String), Failure> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        eprintln!("{name}: error: cannot read the file: {e}");
        Failure::Input
    })?;
    let text = String::from_utf8(bytes).map_err(|e| invalid_utf8(&name, e, false))?;
    Ok((name, text))
}

/// Reads the High Nagi program at `path` as a test build (`nagic test`): its module, whose
/// `main` runs the test `NAGI_TEST` names, and its tests in that order. Diagnostics go to stderr.
pub(crate) fn load_tests(path: &Path) -> Result<(Module, Vec<nagi_high::TestCase>), Failure> {
    let (name, text) = read_high(path)?;
    let mut loader = modules_beside(path);
    nagi_high::compile_tests(&name, &text, &module_name(path), &mut loader).map_err(|(diagnostics, sources)| {
        eprint!("{}", sources.render(&diagnostics));
        Failure::Input
    })
}

/// Reports a source file that is not UTF-8 at its first bad byte (`H101` for High Nagi, `L104`
/// for Low): the lines before it are shown as they are.
fn invalid_utf8(name: &str, error: std::string::FromUtf8Error, is_low: bool) -> Failure {
    let at = error.utf8_error().valid_up_to();
    let bytes = error.as_bytes();
    let byte = bytes[at];
    let text = String::from_utf8_lossy(bytes);
    // The lossy text keeps every byte before `at` in place, so `at` is an offset into it too.
    let span = nagi_low::Span { start: at as u32, end: (at + char::REPLACEMENT_CHARACTER.len_utf8()) as u32 };
    let code = if is_low { "L104" } else { "H101" };
    let diagnostic = nagi_low::Diagnostic::new(
        code,
        format!("invalid UTF-8: byte 0x{byte:02x} does not start or continue a character"),
    )
    .at(Some(span))
    .label("not UTF-8");
    report(&[diagnostic], name, &text)
}

/// The Low module name for an input file: its stem, with characters other than letters,
/// digits and `_` replaced by `_`.
fn module_name(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("main");
    let name: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') { name } else { format!("m_{name}") }
}

/// The loader of the program whose main file is `path`: its modules are read from the files
/// beside it (the compiler crates do no IO; the driver reads for them).
fn modules_beside(path: &Path) -> Directory<impl FnMut(&Path) -> std::io::Result<Vec<u8>>> {
    Directory { dir: path.parent().map(Path::to_path_buf).unwrap_or_default(), read: |file: &Path| std::fs::read(file) }
}
