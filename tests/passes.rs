//! Pass filetests, one named test per case (libtest-mimic): `golden/passes/PASS/NAME.low` is a
//! module, and `golden/passes/PASS/NAME.expected.low` is what it becomes after pass `PASS`
//! alone (the directory's name is the pipeline), printed canonically.
//!
//! Each case checks that the input parses and verifies, that the pass runs with the verifier
//! after it, that the result equals the expected file, and that the expected file is itself
//! canonical Low that verifies. The input may carry comments saying what the case is about;
//! the output is printed without them (the pass's edits leave them nowhere to attach).
//!
//! Besides, every canonical Low file under `golden/low/` goes through each pass alone and
//! through the default pipeline with the verifier after every pass (`passes::every_pass::…`),
//! so each pass meets every construct those files hold.
//!
//! `UPDATE_GOLDENFILES=1 cargo test --test passes` rewrites the expected files; review the
//! diff like any other change.

use std::path::{Path, PathBuf};

use goldenfile::Mint;
use libtest_mimic::{Arguments, Failed, Trial};
use nagi_passes::{Pipeline, RunOptions};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

/// Every case: the pass directory's name and the input file, sorted.
fn cases() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(root().join("golden/passes")) else { return out };
    for dir in dirs.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()) {
        let pass = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let Ok(files) = std::fs::read_dir(&dir) else { continue };
        for file in files.filter_map(Result::ok).map(|e| e.path()) {
            let name = file.file_name().unwrap_or_default().to_string_lossy().into_owned();
            if name.ends_with(".low") && !name.ends_with(".expected.low") {
                out.push((pass.clone(), file));
            }
        }
    }
    out.sort();
    out
}

/// Parses and verifies `text`, rendering any diagnostic against it.
fn load(text: &str, name: &str) -> Result<nagi_low::Module, Failed> {
    let (module, source) = nagi_low::parse(text).map_err(|d| d.render(name, text))?;
    nagi_low::verify(&module, Some(&source)).map_err(|d| nagi_low::diagnostic::render_all(&d, name, text))?;
    Ok(module)
}

fn run_case(pass: &str, path: &Path) -> Result<(), Failed> {
    let name = relative(path);
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let mut module = load(&text, &name)?;
    let pipeline = Pipeline::parse(pass).map_err(|e| format!("golden/passes/{pass}: {e}"))?;
    nagi_passes::run_pipeline(&mut module, &pipeline, &RunOptions { verify_each: true }, &mut ()).map_err(|f| {
        let detail = match &f.kind {
            nagi_passes::FailureKind::Panicked(m) => format!("panicked: {m}"),
            nagi_passes::FailureKind::Broke(d) => nagi_low::diagnostic::render_all(d, "output", ""),
        };
        format!("{name}: pass {pass} failed: {detail}")
    })?;
    let printed = nagi_low::print_module(&module, None);
    // The output must itself be canonical, verified Low that reads back to the same module.
    let reparsed = load(&printed, &format!("{name} after {pass}"))?;
    if reparsed != module {
        return Err(format!("{name}: the output of {pass} does not re-parse to the same module").into());
    }
    let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
    let dir = path.parent().expect("cases live in a directory");
    let mut mint = Mint::new(dir);
    let mut expected = mint.new_goldenfile(format!("{stem}.expected.low")).map_err(|e| e.to_string())?;
    std::io::Write::write_all(&mut expected, printed.as_bytes()).map_err(|e| e.to_string())?;
    // The mint compares (or, with UPDATE_GOLDENFILES=1, rewrites) when dropped, and panics with
    // a diff on a mismatch; libtest-mimic reports the panic as this test's failure.
    drop(mint);
    Ok(())
}

/// Runs every pass alone, then the default pipeline, on the module in `path`, verifying after
/// each pass.
fn every_pass(path: &Path) -> Result<(), Failed> {
    let name = relative(path);
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let module = load(&text, &name)?;
    let mut pipelines: Vec<String> = nagi_passes::registry().iter().map(|p| p.name().to_string()).collect();
    pipelines.push(nagi_passes::default_pipeline().to_string());
    for text in pipelines {
        let pipeline = Pipeline::parse(&text).map_err(|e| e.to_string())?;
        let mut m = module.clone();
        nagi_passes::run_pipeline(&mut m, &pipeline, &RunOptions { verify_each: true }, &mut ())
            .map_err(|f| format!("{name}: pass {} (number {} of `{text}`) failed: {:?}", f.pass, f.position, f.kind))?;
    }
    Ok(())
}

/// Every pass has at least five cases, so a pass added without tests fails here by name.
fn coverage() -> Result<(), Failed> {
    let cases = cases();
    let mut missing = Vec::new();
    for pass in nagi_passes::registry() {
        let n = cases.iter().filter(|(p, _)| p == pass.name()).count();
        if n < 5 {
            missing.push(format!("{} has {n} cases", pass.name()));
        }
    }
    if missing.is_empty() { Ok(()) } else { Err(format!("fewer than 5 cases: {}", missing.join("; ")).into()) }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![Trial::test("passes::coverage", coverage)];
    for (pass, path) in cases() {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        trials.push(Trial::test(format!("passes::{pass}::{stem}"), move || run_case(&pass, &path)));
    }
    let mut lows: Vec<PathBuf> = std::fs::read_dir(root().join("golden/low"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    lows.retain(|p| p.extension().is_some_and(|e| e == "low"));
    lows.sort();
    for path in lows {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        trials.push(Trial::test(format!("passes::every_pass::{stem}"), move || every_pass(&path)));
    }
    libtest_mimic::run(&args, trials).exit();
}
