//! The runtime library both backends link, built once and found again: cargo compiles
//! `nagi-runtime` and its dependencies in release mode into `target/nagi-runtime/` of the Nagi
//! checkout, as an rlib (with its dependencies' rlibs) for the Rust path and a static library
//! for the LLVM path (the runtime's `crate-type` lists both, so both backends link the same
//! build). A stamp file records the artifacts, so later builds skip cargo entirely while the
//! runtime's sources are unchanged.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use crate::failure::Failure;

/// The Nagi checkout this `nagic` was built from; the runtime's sources live in it.
pub(crate) fn checkout() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where the prebuilt runtime is.
pub(crate) struct RuntimeArtifacts {
    /// The rlib the Rust path's `rustc` links (`--extern nagi_runtime=…`).
    pub(crate) rlib: PathBuf,
    /// Its dependencies' rlibs.
    pub(crate) deps: PathBuf,
    /// The static library (runtime, its dependencies and std) the LLVM path's `cc` links.
    pub(crate) staticlib: PathBuf,
}

/// Builds the runtime with cargo if its sources changed since the last build (or it was never
/// built), and returns its rlib, dependency directory and static library. The stamp file
/// holds the rlib's path on its first line and the static library's on its second.
pub(crate) fn artifacts() -> Result<RuntimeArtifacts, Failure> {
    let target = checkout().join("target/nagi-runtime");
    let stamp = target.join("nagic-runtime.stamp");
    let deps = target.join("release/deps");
    let newest_source =
        newest_mtime(&[checkout().join("runtime"), checkout().join("Cargo.lock"), checkout().join("Cargo.toml")]);
    if let Ok(text) = std::fs::read_to_string(&stamp)
        && let Some((rlib, staticlib)) = text.trim().split_once('\n')
    {
        let (rlib, staticlib) = (PathBuf::from(rlib), PathBuf::from(staticlib));
        let stamp_time = std::fs::metadata(&stamp).and_then(|m| m.modified()).ok();
        if rlib.exists() && staticlib.exists() && stamp_time.is_some() && stamp_time >= newest_source {
            return Ok(RuntimeArtifacts { rlib, deps, staticlib });
        }
    }
    eprintln!("nagic: building the runtime (once; later builds reuse it)");
    let output = Command::new(option_env!("CARGO").unwrap_or("cargo"))
        .current_dir(checkout())
        .args(["build", "--release", "--quiet", "-p", "nagi-runtime", "--message-format=json-render-diagnostics"])
        .arg("--target-dir")
        .arg(&target)
        .output()
        .map_err(|e| {
            eprintln!("nagic: error: cannot start cargo to build the runtime: {e}");
            Failure::Input
        })?;
    if !output.status.success() {
        eprint!("{}", String::from_utf8_lossy(&output.stderr));
        eprintln!("nagic: error: building the runtime failed");
        return Err(Failure::Input);
    }
    // Cargo prints one JSON message per artifact; the runtime's rlib and static library are in
    // the one whose target is `nagi_runtime`.
    let messages = String::from_utf8_lossy(&output.stdout);
    let artifact = |suffix: &str| {
        messages
            .lines()
            .filter(|line| line.contains("\"compiler-artifact\"") && line.contains("\"name\":\"nagi_runtime\""))
            .flat_map(|line| line.split('"'))
            .find(|piece| piece.ends_with(suffix))
            .map(PathBuf::from)
    };
    let (Some(rlib), Some(staticlib)) = (artifact(".rlib"), artifact(".a")) else {
        eprintln!("nagic: error: cargo built the runtime but did not report both its rlib and its static library");
        return Err(Failure::Input);
    };
    let _ = std::fs::write(&stamp, format!("{}\n{}", rlib.display(), staticlib.display()));
    Ok(RuntimeArtifacts { rlib, deps, staticlib })
}

/// The latest modification time of any file under `paths`.
fn newest_mtime(paths: &[PathBuf]) -> Option<SystemTime> {
    let mut newest = None;
    let mut stack: Vec<PathBuf> = paths.to_vec();
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.filter_map(Result::ok).map(|e| e.path()));
            }
        } else if let Ok(modified) = meta.modified() {
            newest = newest.max(Some(modified));
        }
    }
    newest
}
