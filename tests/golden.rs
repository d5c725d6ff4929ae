//! Golden-file tests, one named test per file (libtest-mimic), driven through the `nagic`
//! binary where the user-visible behaviour is what is tested.
//!
//! - `golden/low/*.low` are canonical Low: each must parse, verify, print back byte for byte
//!   (`print(parse(text)) == text`), re-parse to an equal module (`parse(print(m)) == m`), and
//!   come back unchanged from `nagic --emit=low`.
//! - `golden/low/errors/*.low` each hold one fault: `nagic check` must exit 1 without
//!   panicking, and its stderr must equal the `.err` file beside it.
//! - `golden/high/*.nagi` lower to the Low in the `.low` file beside each (`nagic --emit=low`),
//!   and that Low parses, verifies and prints back identically.
//! - `golden/high/*.nagi` also go through the default pass pipeline to the Low in the
//!   `.opt.low` file beside each (`nagic --emit=low -O`), which parses, verifies and prints
//!   back identically too.
//! - `golden/high/errors/*.nagi` each hold one fault, checked like the Low error files.
//! - `examples/*.nagi` check cleanly, and their static cost reports (`nagic --emit=cost`) are
//!   the `golden/cost/NAME.cost` files.
//!
//! `UPDATE_GOLDENFILES=1 cargo test --test golden` rewrites the expected files (canonical
//! `.low` text and `.err` diagnostics); review the diff like any other change.

use std::path::{Path, PathBuf};
use std::process::Command;

use goldenfile::Mint;
use libtest_mimic::{Arguments, Failed, Trial};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn blessing() -> bool {
    std::env::var("UPDATE_GOLDENFILES").as_deref() == Ok("1")
}

/// The files directly in `dir` (relative to the workspace root) ending in `.{ext}`, sorted.
fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file() && p.extension().is_some_and(|e| e == ext));
    out.sort();
    out
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap_or_default().to_string_lossy().into_owned()
}

/// The path as the user would type it from the workspace root.
fn relative(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

fn nagic(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nagic")).args(args).current_dir(root()).output().expect("nagic starts")
}

fn round_trip(path: &Path) -> Result<(), Failed> {
    let name = relative(path);
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let (module, source) = nagi_low::parse(&text).map_err(|d| d.render(&name, &text))?;
    if let Err(diagnostics) = nagi_low::verifier::verify(&module, Some(&source)) {
        return Err(nagi_low::diagnostic::render_all(&diagnostics, &name, &text).into());
    }
    let printed = nagi_low::print_module(&module, Some(&source));
    if printed != text {
        if blessing() {
            std::fs::write(path, &printed).map_err(|e| format!("{name}: {e}"))?;
        } else {
            return Err(format!(
                "{name} is not in canonical form; the printer writes:\n{printed}\n\
                 run `UPDATE_GOLDENFILES=1 cargo test --test golden` to rewrite it"
            )
            .into());
        }
    }
    let bare = nagi_low::print_module(&module, None);
    let (reparsed, _) = nagi_low::parse(&bare).map_err(|d| d.render(&format!("{name} (printed)"), &bare))?;
    if reparsed != module {
        return Err(format!("{name}: parse(print(m)) differs from m").into());
    }
    let out = nagic(&["--emit=low", &name]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || stdout != printed {
        return Err(format!(
            "`nagic --emit=low {name}` exited {:?} and printed:\n{stdout}\nstderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(())
}

fn diagnostic(path: &Path) -> Result<(), Failed> {
    let name = relative(path);
    let out = nagic(&["check", &name]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if stderr.contains("panicked") {
        return Err(format!("`nagic check {name}` panicked:\n{stderr}").into());
    }
    if out.status.code() != Some(1) {
        return Err(
            format!("`nagic check {name}` exited {:?}, expected 1; stderr:\n{stderr}", out.status.code()).into()
        );
    }
    let dir = path.parent().expect("golden files live in a directory");
    let mut mint = Mint::new(dir);
    let mut expected = mint.new_goldenfile(format!("{}.err", stem(path))).map_err(|e| e.to_string())?;
    std::io::Write::write_all(&mut expected, stderr.as_bytes()).map_err(|e| e.to_string())?;
    // The mint compares (or, with UPDATE_GOLDENFILES=1, rewrites) when dropped, and panics with
    // a diff on a mismatch; libtest-mimic reports the panic as this test's failure.
    drop(mint);
    Ok(())
}

fn lowered(path: &Path) -> Result<(), Failed> {
    lowered_with(path, &[], "low")
}

fn optimized(path: &Path) -> Result<(), Failed> {
    lowered_with(path, &["-O"], "opt.low")
}

/// Checks `nagic --emit=low FLAGS FILE` against the file beside it ending in `.{ext}`.
fn lowered_with(path: &Path, flags: &[&str], ext: &str) -> Result<(), Failed> {
    let name = relative(path);
    let mut args = vec!["--emit=low"];
    args.extend_from_slice(flags);
    args.push(&name);
    let out = nagic(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("`nagic --emit=low {name}` exited {:?}:\n{stderr}", out.status.code()).into());
    }
    let low = String::from_utf8_lossy(&out.stdout).into_owned();
    let (module, source) = nagi_low::parse(&low).map_err(|d| d.render(&format!("{name} (lowered)"), &low))?;
    if let Err(diagnostics) = nagi_low::verifier::verify(&module, Some(&source)) {
        return Err(nagi_low::diagnostic::render_all(&diagnostics, &format!("{name} (lowered)"), &low).into());
    }
    if nagi_low::print_module(&module, Some(&source)) != low {
        return Err(format!("the Low lowered from {name} does not print back identically").into());
    }
    let dir = path.parent().expect("golden files live in a directory");
    let mut mint = Mint::new(dir);
    let mut expected = mint.new_goldenfile(format!("{}.{ext}", stem(path))).map_err(|e| e.to_string())?;
    std::io::Write::write_all(&mut expected, low.as_bytes()).map_err(|e| e.to_string())?;
    drop(mint);
    Ok(())
}

fn cost(path: &Path) -> Result<(), Failed> {
    let name = relative(path);
    let out = nagic(&["--emit=cost", &name]);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("`nagic --emit=cost {name}` exited {:?}:\n{stderr}", out.status.code()).into());
    }
    let mut mint = Mint::new(root().join("golden/cost"));
    let mut expected = mint.new_goldenfile(format!("{}.cost", stem(path))).map_err(|e| e.to_string())?;
    std::io::Write::write_all(&mut expected, &out.stdout).map_err(|e| e.to_string())?;
    drop(mint);
    Ok(())
}

fn example(path: &Path) -> Result<(), Failed> {
    let name = relative(path);
    let out = nagic(&["check", &name]);
    if !out.status.success() {
        return Err(format!("`nagic check {name}` failed:\n{}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for path in files("golden/low", "low") {
        trials.push(Trial::test(format!("low::round_trip::{}", stem(&path)), move || round_trip(&path)));
    }
    for path in files("golden/low/errors", "low") {
        trials.push(Trial::test(format!("low::diagnostic::{}", stem(&path)), move || diagnostic(&path)));
    }
    for path in files("golden/high", "nagi") {
        let opt = path.clone();
        trials.push(Trial::test(format!("high::lowering::{}", stem(&path)), move || lowered(&path)));
        trials.push(Trial::test(format!("high::optimized::{}", stem(&opt)), move || optimized(&opt)));
    }
    for path in files("golden/high/errors", "nagi") {
        trials.push(Trial::test(format!("high::diagnostic::{}", stem(&path)), move || diagnostic(&path)));
    }
    for path in files("examples", "nagi") {
        let cost_path = path.clone();
        trials.push(Trial::test(format!("examples::check::{}", stem(&path)), move || example(&path)));
        trials.push(Trial::test(format!("examples::cost::{}", stem(&cost_path)), move || cost(&cost_path)));
    }
    libtest_mimic::run(&args, trials).exit();
}
