//! `nagic fmt` (issue 35): every `.nagi` file of the repository is in the canonical layout, and
//! the layout is idempotent and meaning-preserving — formatting a program changes neither its
//! Low (source positions aside) nor, formatted again, its text — on every golden, example and
//! fixture and on seeded progen programs (`NAGI_FMT_SEEDS` sets how many; 300 by default).

mod support;

use std::path::{Path, PathBuf};

use support::{nagic, root, temp_dir};

/// Every `.nagi` file under the repository's program directories.
fn repository_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "nagi") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for dir in ["examples", "golden", "tests/fixtures", "bench", "src/new"] {
        walk(&root().join(dir), &mut files);
    }
    files
}

/// The syntax-error goldens, which exist not to parse: `nagic fmt` leaves them untouched.
fn is_syntax_error_golden(path: &Path) -> bool {
    path.parent().is_some_and(|d| d.ends_with("errors"))
        && path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("syntax_"))
}

#[test]
fn every_nagi_file_of_the_repository_is_formatted() {
    let files: Vec<PathBuf> = repository_files().into_iter().filter(|p| !is_syntax_error_golden(p)).collect();
    assert!(files.len() > 100, "found {} files", files.len());
    let mut args = vec!["fmt", "--check"];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    let out = nagic(&args);
    assert!(
        out.status.success(),
        "not formatted (run `nagic fmt` on them):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every formatted file of the repository, with its indentation taken away and its blank lines
/// doubled (neither changes what it means: line breaks end statements, indentation does not),
/// formats back to itself.
#[test]
fn every_file_formats_back_from_a_mangled_layout() {
    for path in repository_files().into_iter().filter(|p| !is_syntax_error_golden(p)) {
        let text = std::fs::read_to_string(&path).unwrap();
        let mangled: String = text
            .lines()
            .map(|line| if line.trim().is_empty() { "\n\n".to_string() } else { format!("{}\n", line.trim_start()) })
            .collect();
        let formatted = nagi_syntax::format::format(&mangled).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        assert_eq!(formatted, text, "{} does not format back from its mangled layout", path.display());
    }
}

/// A file that does not parse is left as it is, with the compiler's `file:line:col` diagnostic
/// and exit status 1; `--check` lists an unformatted file and changes nothing.
#[test]
fn a_file_that_does_not_parse_is_untouched() {
    let dir = temp_dir("fmt");
    let bad = dir.join("bad.nagi");
    let text = "fn main() {\n    let x = 5 $ 3\n}\n";
    std::fs::write(&bad, text).unwrap();
    let out = nagic(&["fmt", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.nagi:2:15: error[H100]"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&bad).unwrap(), text);

    let messy = dir.join("messy.nagi");
    let text = "fn main()   {  let x=1+2\n  print(x) }\n";
    std::fs::write(&messy, text).unwrap();
    let out = nagic(&["fmt", "--check", messy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), messy.to_str().unwrap());
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), text);
    let out = nagic(&["fmt", messy.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), "fn main() {\n    let x = 1 + 2\n    print(x)\n}\n");
}

/// Low text with every source position (`file.nagi:LINE[:COL]`, in SQL markers and assertion
/// messages) replaced, since formatting moves lines.
fn without_positions(low: &str) -> String {
    let mut out = String::with_capacity(low.len());
    let mut rest = low;
    while let Some(at) = rest.find(".nagi:") {
        out.push_str(&rest[..at + ".nagi:".len()]);
        rest = &rest[at + ".nagi:".len()..];
        rest = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':');
        out.push('L');
    }
    out.push_str(rest);
    out
}

/// A program's files formatted, joined back as progen writes them.
fn formatted_program(text: &str) -> String {
    let files = nagi_progen::files(text);
    let mut out = nagi_syntax::format::format(&files.main).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    for (name, module) in &files.modules {
        out.push_str(&format!("// file: {name}.nagi\n"));
        out.push_str(&nagi_syntax::format::format(module).unwrap_or_else(|e| panic!("{e:?}\n{module}")));
    }
    out
}

#[test]
fn formatting_preserves_meaning_and_is_idempotent_on_progen_programs() {
    let seeds: u64 = std::env::var("NAGI_FMT_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    for seed in 0..seeds {
        let text = nagi_progen::from_seed(seed, 4096);
        let before = nagi_progen::compile(&text, "gen").unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let formatted = formatted_program(&text);
        let after = nagi_progen::compile(&formatted, "gen")
            .unwrap_or_else(|e| panic!("seed {seed} formatted:\n{e}\n{formatted}"));
        assert_eq!(
            without_positions(&nagi_low::print_module(&before, None)),
            without_positions(&nagi_low::print_module(&after, None)),
            "seed {seed}: formatting changed the program's Low:\n{formatted}"
        );
        assert_eq!(formatted_program(&formatted), formatted, "seed {seed}: formatting is not idempotent");
    }
}
