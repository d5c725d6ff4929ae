//! `nagic fmt [--check] FILE|DIR…`: rewrites High Nagi files in the canonical layout
//! ([`nagi_syntax::format`]); with `--check`, lists the files that are not and changes nothing.
//! A file that does not parse is left as it is, with the compiler's diagnostic.

use std::path::{Path, PathBuf};

use crate::failure::{Failure, report};

/// Formats (or with `check`, checks) every `.nagi` file of `inputs` (directories are walked,
/// skipping hidden ones and `target`). Exit status 1 when a file does not parse, or, with
/// `check`, when one is not formatted.
pub(crate) fn fmt(inputs: &[PathBuf], check: bool) -> Result<(), Failure> {
    let mut files = Vec::new();
    for input in inputs {
        collect(input, &mut files)?;
    }
    let mut failed = false;
    for file in &files {
        let name = file.display().to_string();
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("{name}: error: cannot read the file: {e}");
                failed = true;
                continue;
            }
        };
        let formatted = match nagi_syntax::format::format(&text) {
            Ok(formatted) => formatted,
            Err(e) => {
                let span = nagi_low::Span { start: e.span.start, end: e.span.end };
                let diagnostic = nagi_low::Diagnostic::new("H100", e.message).at(Some(span)).label(e.label);
                let _ = report(&[diagnostic], &name, &text);
                failed = true;
                continue;
            }
        };
        if formatted == text {
            continue;
        }
        if check {
            println!("{name}");
            failed = true;
        } else if let Err(e) = std::fs::write(file, formatted) {
            eprintln!("{name}: error: cannot write the file: {e}");
            failed = true;
        }
    }
    if failed { Err(Failure::Input) } else { Ok(()) }
}

/// `input` if it is a file, else the `.nagi` files under it, sorted.
fn collect(input: &Path, files: &mut Vec<PathBuf>) -> Result<(), Failure> {
    if !input.is_dir() {
        if !input.exists() {
            eprintln!("{}: error: no such file or directory", input.display());
            return Err(Failure::Input);
        }
        files.push(input.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(input)
        .map_err(|e| {
            eprintln!("{}: error: cannot read the directory: {e}", input.display());
            Failure::Input
        })?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        let hidden = entry.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.') || n == "target");
        if entry.is_dir() && !hidden {
            collect(&entry, files)?;
        } else if entry.extension().is_some_and(|e| e == "nagi") {
            files.push(entry);
        }
    }
    Ok(())
}
