//! The editor support of `editors/vscode` (issue 35): its TextMate grammar checked by
//! `vscode-tmgrammar-test` (npm), with the assertions of `editors/vscode/tests/*.test.nagi`
//! and with snapshots of goldens that use every kind of declaration (the scopes of each token,
//! kept in `editors/vscode/tests/snapshots/`; `UPDATE_GOLDENFILES=1` writes them again, as the
//! other goldens are written).

mod support;

use std::path::Path;
use std::process::Command;

use support::{root, temp_dir};

/// The goldens whose highlighting is kept as snapshots.
const SNAPSHOTS: &[&str] = &[
    "golden/high/users.nagi",
    "golden/high/enums.nagi",
    "golden/high/actors.nagi",
    "golden/high/supervisors.nagi",
    "golden/high/queues.nagi",
    "golden/high/schedules.nagi",
    "golden/high/failures.nagi",
    "golden/high/headers.nagi",
    "golden/high/maps.nagi",
    "examples/board/board.nagi",
];

fn tool(name: &str) -> Command {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
        .unwrap_or(false);
    assert!(found, "`{name}` is not installed; install it with `npm install -g vscode-tmgrammar-test` (.ci/run does)");
    Command::new(name)
}

fn editor() -> std::path::PathBuf {
    root().join("editors/vscode")
}

#[test]
fn the_grammar_passes_its_assertions() {
    let out = tool("vscode-tmgrammar-test")
        .args(["-g", "syntaxes/nagi.tmLanguage.json", "--config", "package.json", "tests/*.test.nagi"])
        .current_dir(editor())
        .output()
        .expect("vscode-tmgrammar-test runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}{}", String::from_utf8_lossy(&out.stderr));
    assert!(report.contains("run successfuly") || report.contains("run successfully"), "{report}");
}

#[test]
fn the_goldens_highlight_as_their_snapshots() {
    let dir = temp_dir("snapshots");
    let kept = editor().join("tests/snapshots");
    let update = std::env::var_os("UPDATE_GOLDENFILES").is_some();
    for source in SNAPSHOTS {
        let name = Path::new(source).file_name().unwrap();
        std::fs::copy(root().join(source), dir.join(name)).unwrap();
        let snap = kept.join(format!("{}.snap", name.to_str().unwrap()));
        if !update {
            assert!(snap.is_file(), "no snapshot {} (run with UPDATE_GOLDENFILES=1)", snap.display());
            std::fs::copy(&snap, dir.join(snap.file_name().unwrap())).unwrap();
        }
    }
    let grammar = editor().join("syntaxes/nagi.tmLanguage.json");
    let config = editor().join("package.json");
    let mut command = tool("vscode-tmgrammar-snap");
    command.args(["-g", grammar.to_str().unwrap(), "--config", config.to_str().unwrap(), "*.nagi"]);
    if update {
        command.arg("--updateSnapshot");
    }
    let out = command.current_dir(&dir).output().expect("vscode-tmgrammar-snap runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the highlighting changed:\n{report}{}", String::from_utf8_lossy(&out.stderr));
    if update {
        std::fs::create_dir_all(&kept).unwrap();
        for source in SNAPSHOTS {
            let name = format!("{}.snap", Path::new(source).file_name().unwrap().to_str().unwrap());
            std::fs::copy(dir.join(&name), kept.join(&name)).unwrap();
        }
    }
    // Keywords, types and strings of the service golden got their scopes.
    let users = std::fs::read_to_string(kept.join("users.nagi.snap")).unwrap();
    for scope in [
        "keyword.declaration.route.nagi",
        "entity.name.type.nagi",
        "string.quoted.double.nagi",
        "support.variable.nagi",
    ] {
        assert!(users.contains(scope), "users.nagi.snap has no {scope}");
    }
}
