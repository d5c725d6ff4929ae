//! `nagic new NAME`: a starter service in the directory `NAME` — a class stored in a table,
//! CRUD routes, a test, and a README that says how to run, test and change it — which
//! `nagic dev NAME` serves at once.

use std::path::Path;

use crate::failure::Failure;

/// The service, with `NAME` for its name (its file is `NAME.nagi`).
const SERVICE: &str = include_str!("new/service.nagi");

/// Its README.
const README: &str = include_str!("new/README.md");

/// `nagic new NAME`: refuses a name that is not an identifier and a directory that exists.
pub(crate) fn new(path: &Path) -> Result<(), Failure> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        eprintln!(
            "nagic: error: `{name}` cannot name a service; use lower-case letters, digits and `_` (e.g. `notes`)"
        );
        return Err(Failure::Usage);
    }
    if path.exists() {
        eprintln!("{}: error: already exists; choose another name", path.display());
        return Err(Failure::Input);
    }
    let write = |file: &Path, text: &str| {
        std::fs::write(file, text.replace("NAME", name)).map_err(|e| {
            eprintln!("{}: error: cannot write the file: {e}", file.display());
            Failure::Input
        })
    };
    std::fs::create_dir_all(path).map_err(|e| {
        eprintln!("{}: error: cannot create the directory: {e}", path.display());
        Failure::Input
    })?;
    write(&path.join(format!("{name}.nagi")), SERVICE)?;
    write(&path.join("README.md"), README)?;
    println!("created {0}/{1}.nagi and {0}/README.md; serve it with `nagic dev {0}`", path.display(), name);
    Ok(())
}
