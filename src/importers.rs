//! Which programs a `.nagi` file is a module of: `nagic check accounts.nagi` checks the file in
//! the context of the programs that import it, since a module may use what its importer declares
//! (a table in the main file is visible to the SQL of every module).
//!
//! Imports name paths below the importing file's directory (`import billing/invoices`), so a
//! file's importers, and theirs, live in its directory or one above it. The walk goes up to the
//! project's root (a directory holding `.git` or `Cargo.toml`) and at most [`MAX_LEVELS`] levels.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// How many directories above a file's own are searched for its importers.
const MAX_LEVELS: usize = 8;

/// The programs (files no other file imports) that import `file`, directly or through other
/// modules, sorted; empty when nothing imports it, and then the file is a program of its own.
pub(crate) fn programs_importing(file: &Path) -> Vec<PathBuf> {
    let Ok(file) = file.canonicalize() else { return Vec::new() };
    let mut imported_by: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
    for candidate in candidates(&file) {
        let Ok(text) = std::fs::read_to_string(&candidate) else { continue };
        let dir = candidate.parent().unwrap_or(Path::new("/"));
        for import in nagi_high::modules::imports_of(&text) {
            if let Ok(target) = dir.join(format!("{import}.nagi")).canonicalize() {
                imported_by.entry(target).or_default().push(candidate.clone());
            }
        }
    }
    let mut roots = Vec::new();
    let mut seen = HashSet::from([file.clone()]);
    let mut stack = vec![file.clone()];
    while let Some(at) = stack.pop() {
        match imported_by.get(&at) {
            Some(importers) => {
                for importer in importers {
                    if seen.insert(importer.clone()) {
                        stack.push(importer.clone());
                    }
                }
            }
            None if at != file => roots.push(at),
            None => {}
        }
    }
    roots.sort();
    // Named as the user would: relative to the working directory when below it.
    let cwd = std::env::current_dir().and_then(|d| d.canonicalize()).unwrap_or_default();
    roots.into_iter().map(|root| root.strip_prefix(&cwd).map(Path::to_path_buf).unwrap_or(root)).collect()
}

/// The `.nagi` files in `file`'s directory and the directories above it, up to the project's
/// root.
fn candidates(file: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dir = file.parent();
    for _ in 0..=MAX_LEVELS {
        let Some(at) = dir else { break };
        if let Ok(entries) = std::fs::read_dir(at) {
            for entry in entries.filter_map(Result::ok) {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "nagi") && path.is_file() {
                    out.extend(path.canonicalize().ok());
                }
            }
        }
        if at.join(".git").exists() || at.join("Cargo.toml").exists() {
            break;
        }
        dir = at.parent();
    }
    out
}
