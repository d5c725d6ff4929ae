//! Where a command's text goes: `write_output` writes it to a file, or to stdout when no path
//! is given.

use std::path::Path;

use crate::failure::Failure;

/// Writes `text` to `path`, or to stdout when there is none.
pub(crate) fn write_output(path: Option<&Path>, text: &str) -> Result<(), Failure> {
    match path {
        None => {
            print!("{text}");
            Ok(())
        }
        Some(path) => std::fs::write(path, text).map_err(|e| {
            eprintln!("{}: error: cannot write the file: {e}", path.display());
            Failure::Input
        }),
    }
}
