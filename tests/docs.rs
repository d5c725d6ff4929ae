//! The documentation's code is compiled: every block fenced as ```` ```nagi ```` in
//! `docs/language.md` (and the other documents listed in [`DOCUMENTS`]) is a test named after its
//! document and line, so an example cannot drift from the compiler (rustdoc's rule).
//!
//! - A block compiles as a program of its own, and must compile without a diagnostic.
//! - A line ending in `// error[CODE]` marks an expected error: the block must then fail with
//!   exactly the marked codes, each on its marked line.
//! - A block whose first line is `// PATH.nagi` is the file `PATH.nagi` of one program: other
//!   blocks of the same document that `import PATH` read it, as files beside them.
//! - A block with `test "…"` blocks compiles as a test build (`nagic test`).
//! - A ```` ```low ```` block that is a whole module (its first line `nagi-low 1`) must parse and
//!   verify; other Low blocks are pieces of a module, shown in prose.
//! - A block whose first line is `// excerpt of PATH` (relative to its document) is a piece of
//!   that file, which is compiled by the tests of its own: its lines must appear in the file in
//!   the same order (compared trimmed, a trailing `// comment` left out).

mod support;

use std::collections::{BTreeSet, HashMap};

use libtest_mimic::{Arguments, Failed, Trial};

/// The documents whose Nagi blocks are compiled.
const DOCUMENTS: &[&str] = &[
    "docs/language.md",
    "docs/http.md",
    "docs/low.md",
    "README.md",
    "examples/blog/README.md",
    "examples/board/README.md",
];

/// One fenced Nagi block.
#[derive(Clone)]
struct Block {
    /// The document's path and the line of the block's first line of code.
    document: &'static str,
    line: usize,
    text: String,
    /// Whether the block is Low rather than High Nagi.
    low: bool,
}

impl Block {
    /// The file this block is, when its first line names one (`// posts.nagi`).
    fn file(&self) -> Option<String> {
        let first = self.text.lines().next()?.trim();
        let path = first.strip_prefix("// ")?.split_whitespace().next()?;
        path.strip_suffix(".nagi").map(str::to_owned)
    }

    /// The expected errors: (line within the block, from 1; code).
    fn expected_errors(&self) -> BTreeSet<(usize, String)> {
        let mut out = BTreeSet::new();
        for (i, line) in self.text.lines().enumerate() {
            if let Some(rest) = line.split("// error[").nth(1)
                && let Some(code) = rest.split(']').next()
            {
                out.insert((i + 1, code.to_owned()));
            }
        }
        out
    }
}

fn blocks(document: &'static str) -> Vec<Block> {
    let text = std::fs::read_to_string(support::root().join(document)).expect("the document reads");
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match current.as_mut() {
            Some(block) if line.trim_start().starts_with("```") => {
                out.push(block.clone());
                current = None;
            }
            Some(block) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            None if line.trim() == "```nagi" || line.trim() == "```low" => {
                let low = line.trim() == "```low";
                current = Some(Block { document, line: i + 2, text: String::new(), low });
            }
            None => {}
        }
    }
    out
}

/// Reads the modules of a block's program from the other blocks of its document.
struct Files(HashMap<String, Block>);

impl nagi_high::modules::Loader for Files {
    fn load(&mut self, path: &str) -> Result<(String, String), String> {
        match self.0.get(path) {
            Some(block) => Ok((format!("{}:{} ({path}.nagi)", block.document, block.line), block.text.clone())),
            None => Err(format!("no block of this document is the file `{path}.nagi`")),
        }
    }
}

/// A line as an excerpt compares it: trimmed, without a trailing `// comment`.
fn code_of(line: &str) -> &str {
    line.split("  //").next().unwrap_or(line).trim()
}

/// Checks that the lines of `excerpt` (after its first) appear in order in the file `path`.
fn check_excerpt(block: &Block, path: &str) -> Result<(), Failed> {
    let dir = std::path::Path::new(block.document).parent().unwrap_or(std::path::Path::new(""));
    let file = support::root().join(dir).join(path);
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut lines = text.lines().map(code_of);
    for wanted in block.text.lines().skip(1).map(code_of).filter(|l| !l.is_empty()) {
        if !lines.any(|l| l == wanted) {
            return Err(format!(
                "{}:{}: the excerpt's line `{wanted}` is not in {} (in this order)",
                block.document,
                block.line,
                file.display()
            )
            .into());
        }
    }
    Ok(())
}

/// A Low block that is a whole module parses and verifies.
fn verify_low(block: &Block) -> Result<(), Failed> {
    if !block.text.starts_with("nagi-low ") {
        return Ok(());
    }
    let name = format!("{}:{}", block.document, block.line);
    let (module, source) = nagi_low::parse(&block.text).map_err(|d| d.render(&name, &block.text))?;
    nagi_low::verify(&module, Some(&source))
        .map_err(|ds| ds.iter().map(|d| d.render(&name, &block.text)).collect::<Vec<_>>().join("\n"))?;
    Ok(())
}

fn compile(block: &Block, files: HashMap<String, Block>) -> Result<(), Failed> {
    if block.low {
        return verify_low(block);
    }
    if let Some(path) = block.text.lines().next().and_then(|l| l.trim().strip_prefix("// excerpt of ")) {
        return check_excerpt(block, path.trim());
    }
    let name = format!("{}:{}", block.document, block.line);
    let mut loader = Files(files);
    let result = if block.text.contains("\ntest \"") || block.text.starts_with("test \"") {
        nagi_high::compile_tests(&name, &block.text, "doc", &mut loader).map(|_| ())
    } else {
        nagi_high::compile_program(&name, &block.text, "doc", &mut loader).map(|_| ())
    };
    let expected = block.expected_errors();
    match result {
        Ok(()) if expected.is_empty() => Ok(()),
        Ok(()) => Err(format!("{name}: compiles, but the block marks the errors {expected:?}").into()),
        Err((diagnostics, sources)) => {
            let rendered = sources.render(&diagnostics);
            // Each diagnostic's line within the block (its span's start, in the block's file).
            let found: BTreeSet<(usize, String)> = diagnostics
                .iter()
                .map(|d| {
                    let at = d.span.map_or(String::new(), |s| sources.locate(s.start as usize));
                    let line = at
                        .strip_prefix(&format!("{name}:"))
                        .and_then(|rest| rest.split(':').next()?.parse().ok())
                        .unwrap_or(0);
                    (line, d.code.to_string())
                })
                .collect();
            if expected.is_empty() {
                Err(format!("{name}: the block does not compile:\n{rendered}").into())
            } else if found != expected {
                Err(format!(
                    "{name}: expected the errors {expected:?} (line in block, code), found {found:?}:\n{rendered}"
                )
                .into())
            } else {
                Ok(())
            }
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for &document in DOCUMENTS {
        let blocks = blocks(document);
        let files: HashMap<String, Block> =
            blocks.iter().filter(|b| !b.low).filter_map(|b| Some((b.file()?, b.clone()))).collect();
        for block in blocks {
            let files = files.clone();
            let name = format!("{document}:{}", block.line);
            trials.push(Trial::test(name, move || compile(&block, files)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
