//! The tidy test: rules of the tree that no compiler checks, each the written rule of a document
//! (rust-analyzer's `xtask/src/tidy.rs` is the model). A rule reads the tree as it is in the
//! checkout, so a change that breaks one fails `cargo test` with the file and the rule:
//!
//! - a crate depends only on the compiler crates ARCHITECTURE.md ("Crates", "Invariants")
//!   allows it, and every workspace member has its entry here;
//! - a core crate (the compiler's: syntax, High, Low, passes, emitters, interpreter, ABI) does
//!   no IO: no `std::fs`, no `std::process` outside its tests (ARCHITECTURE.md, "Invariants");
//! - every diagnostic code the compiler can give is documented (docs/language.md §13 for `H`,
//!   docs/low.md for `V`, docs/c-abi.md for `M`, docs/interp.md for `I`) and is on its checker's
//!   checklist (`high/src/check.rs` and `low/src/verifier.rs` name every code they give), and
//!   every documented code exists;
//! - every relative link in a Markdown file of the tree names a file that exists;
//! - the runtime exports exactly the C functions of `nagi_abi`'s list (docs/c-abi.md), so that
//!   the LLVM emitter's declarations and the JIT's address table, both made of the list, cover
//!   every one;
//! - no file of the driver (`src/`) or of the LLVM emitter imports, through `crate::` paths, a
//!   file that imports it back, directly or around a longer cycle (ARCHITECTURE.md, "Crates").
//!   The runtime is not under this rule yet: its core and its C-ABI adapter still import each
//!   other (issue 31);
//! - the dev profile leaves unoptimized exactly the crates that run only inside the compiler
//!   (proc macros, build scripts and their dependencies), as Cargo.toml's comment says.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every workspace member (its directory) and the `nagi-*` crates it may depend on
/// (`[dependencies]` and `[build-dependencies]`), with the rule of ARCHITECTURE.md that says so.
const DEPENDENCY_RULES: &[(&str, &[&str], &str)] = &[
    (".", &["*"], "the driver: every compiler crate"),
    ("abi", &[], "nagi-abi depends on nothing"),
    ("syntax", &[], "nagi-syntax depends on no other compiler crate"),
    ("low", &[], "nagi-low depends on no other compiler crate"),
    (
        "high",
        &["nagi-syntax", "nagi-low", "nagi-abi"],
        "nagi-high is the only crate that sees both High and Low (and the SQL text rule of nagi-abi)",
    ),
    ("passes", &["nagi-low"], "passes see only Low"),
    ("emit-rust", &["nagi-low"], "emitters see only Low"),
    ("emit-llvm", &["nagi-low", "nagi-abi"], "emitters see only Low (and the C ABI's list)"),
    ("interp", &["nagi-low", "nagi-abi"], "the interpreter depends on nagi-low alone (and nagi-abi's trap texts)"),
    ("interp-host", &["nagi-low", "nagi-interp", "nagi-runtime"], "the interpreter's host is the runtime"),
    ("runtime", &["nagi-abi"], "nagi-runtime depends on no compiler crate"),
    ("progen", &["nagi-high", "nagi-low"], "progen checks what it draws with nagi-high"),
    ("bench", &["nagi-low", "nagi-passes"], "the passes bench"),
    (
        "bench/native",
        &["nagi-bench", "nagi-runtime", "nagi-low", "nagi-high", "nagi-passes", "nagi-emit-rust", "nagi-emit-llvm"],
        "the kernel bench builds its kernels with both emitters",
    ),
    ("bench/http-baseline", &[], "the hand-written baseline uses no Nagi crate"),
    ("bench/concurrency", &["nagi-runtime"], "the concurrency bench calls the runtime"),
    ("bench/micro", &["nagi-runtime", "nagi-abi"], "the micro-benchmarks call the runtime with layout descriptors"),
];

/// The crates that do no IO (ARCHITECTURE.md, "Invariants").
const CORE_CRATES: &[&str] = &["abi", "syntax", "high", "low", "passes", "emit-rust", "emit-llvm", "interp"];

/// What a core crate may not name outside its tests.
const IO: &[&str] = &["std::fs", "std::process", "File::open", "File::create", "Command::new"];

/// The `nagi-*` crates of the sections `sections` of the manifest `text`.
fn nagi_dependencies(text: &str, sections: &[&str]) -> Vec<String> {
    let mut section = String::new();
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.to_owned();
        } else if sections.contains(&section.as_str())
            && let Some(name) = line.split(['=', '.', ' ']).next()
            && name.starts_with("nagi-")
        {
            found.push(name.to_owned());
        }
    }
    found
}

/// The workspace members of the root manifest.
fn members() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).expect("the root manifest reads");
    let list = text.split("members = [").nth(1).and_then(|rest| rest.split(']').next()).expect("a members list");
    list.split(',').map(|m| m.trim().trim_matches('"').to_owned()).filter(|m| !m.is_empty()).collect()
}

/// The violations of [`DEPENDENCY_RULES`].
fn dependency_violations() -> Vec<String> {
    let mut violations = Vec::new();
    for member in members() {
        let Some((_, allowed, rule)) = DEPENDENCY_RULES.iter().find(|(dir, _, _)| *dir == member) else {
            violations
                .push(format!("{member}: a workspace member without an entry in tests/tidy.rs's DEPENDENCY_RULES"));
            continue;
        };
        let manifest = root().join(&member).join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).expect("a member's manifest reads");
        for dependency in nagi_dependencies(&text, &["[dependencies]", "[build-dependencies]"]) {
            if !allowed.contains(&"*") && !allowed.contains(&dependency.as_str()) {
                violations.push(format!("{}: depends on {dependency}, but {rule}", manifest.display()));
            }
        }
    }
    violations
}

/// The `.rs` files under `dir`, in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source directory lists") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Whether `path` holds only tests (a `tests.rs` file or a file under a `tests` directory).
fn is_test_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "tests.rs") || path.components().any(|c| c.as_os_str() == "tests")
}

/// `text` with its inline test modules (`#[cfg(test)] mod tests { … }`, to the brace that
/// closes it) blanked out.
fn without_tests(text: &str) -> String {
    const START: &str = "#[cfg(test)]\nmod tests {";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(START) {
        out.push_str(&rest[..at]);
        let body = &rest[at + START.len()..];
        let end = closing_brace(body);
        // The module's lines stay as empty lines, so that line numbers still point into the file.
        out.extend(std::iter::repeat_n('\n', rest[at..at + START.len() + end].matches('\n').count()));
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// The byte just after the `}` that closes a block whose `{` comes right before `body`; braces in
/// strings, raw strings, characters and line comments do not count.
fn closing_brace(body: &str) -> usize {
    let bytes = body.as_bytes();
    let (mut depth, mut i) = (1usize, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i += body[i..].find('\n').unwrap_or(body.len() - i);
            }
            b'r' if matches!(bytes.get(i + 1), Some(b'"' | b'#')) => {
                let hashes = bytes[i + 1..].iter().take_while(|b| **b == b'#').count();
                let close = format!("\"{}", "#".repeat(hashes));
                let open = i + 1 + hashes + 1;
                i = open + body[open..].find(&close).map_or(body.len() - open, |at| at + close.len()) - 1;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            // A character literal ('{', '\'', '\n'); a lifetime has no closing quote.
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => i += 3,
            _ => {}
        }
        i += 1;
    }
    body.len()
}

/// The non-test sources at `path` (a file, or every file under a directory), each with its text
/// and its inline test modules blanked out ([`without_tests`]).
fn sources(path: &Path) -> Vec<(PathBuf, String)> {
    let files = if path.is_dir() { rust_files(path) } else { vec![path.to_path_buf()] };
    files
        .into_iter()
        .filter(|file| !is_test_file(file))
        .map(|file| {
            let text = std::fs::read_to_string(&file).expect("a source file reads");
            let text = without_tests(&text);
            (file, text)
        })
        .collect()
}

/// The violations of the no-IO rule of [`CORE_CRATES`].
fn io_violations() -> Vec<String> {
    let mut violations = Vec::new();
    for krate in CORE_CRATES {
        for (file, text) in sources(&root().join(krate).join("src")) {
            for (n, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                if let Some(name) = IO.iter().find(|name| line.contains(*name)) {
                    violations.push(format!(
                        "{}:{}: `{name}` in a core crate, which does no IO (ARCHITECTURE.md, \"Invariants\")",
                        file.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    violations
}

/// The codes (`H123`) quoted as string literals in the non-test sources at `paths` (files or
/// directories), with the first file each is in.
fn codes_given(paths: &[&str], letter: char) -> BTreeMap<String, PathBuf> {
    let mut codes = BTreeMap::new();
    for path in paths {
        for (file, text) in sources(&root().join(path)) {
            for code in codes_in(&text, letter, true) {
                codes.entry(code).or_insert_with(|| file.clone());
            }
        }
    }
    codes
}

/// The codes `L123` of `letter` in `text`: quoted (`"H123"`) when `quoted`, else as words.
fn codes_in(text: &str, letter: char, quoted: bool) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut codes = BTreeSet::new();
    for (at, _) in text.match_indices(letter) {
        let digits = bytes.get(at + 1..at + 4);
        if !digits.is_some_and(|d| d.iter().all(u8::is_ascii_digit)) {
            continue;
        }
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + 4).copied();
        let bounded = if quoted {
            before == Some(b'"') && after == Some(b'"')
        } else {
            !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !after.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        };
        if bounded {
            codes.insert(text[at..at + 4].to_owned());
        }
    }
    codes
}

/// A file's module doc (its `//!` lines).
fn module_doc(path: &str) -> String {
    let text = std::fs::read_to_string(root().join(path)).expect("a source file reads");
    text.lines().filter(|l| l.starts_with("//!")).collect::<Vec<_>>().join("\n")
}

/// The violations of the code rules: a code given but not documented, documented but never
/// given, or given by the checker or the verifier but missing from its checklist.
fn code_violations() -> Vec<String> {
    let families: [(char, &[&str], &str); 4] = [
        ('H', &["high/src", "src"], "docs/language.md"),
        ('V', &["low/src"], "docs/low.md"),
        ('M', &["emit-llvm/src"], "docs/c-abi.md"),
        ('I', &["interp/src", "src"], "docs/interp.md"),
    ];
    let mut violations = Vec::new();
    for (letter, dirs, doc) in families {
        let given = codes_given(dirs, letter);
        let text = std::fs::read_to_string(root().join(doc)).expect("a document reads");
        let documented = codes_in(&text, letter, false);
        for (code, file) in &given {
            if !documented.contains(code) {
                violations.push(format!("{code} (given in {}) is not documented in {doc}", file.display()));
            }
        }
        for code in documented.difference(&given.keys().cloned().collect()) {
            violations.push(format!("{code} is documented in {doc} but no code gives it"));
        }
    }
    for (letter, dirs, checklist) in [
        ('H', &["high/src/check.rs", "high/src/check"][..], "high/src/check.rs"),
        ('V', &["low/src"][..], "low/src/verifier.rs"),
    ] {
        let listed = codes_in(&module_doc(checklist), letter, false);
        for (code, file) in codes_given(dirs, letter) {
            if !listed.contains(&code) {
                violations
                    .push(format!("{code} (given in {}) is missing from the checklist of {checklist}", file.display()));
            }
        }
    }
    violations
}

/// The Markdown files of the tree (not the build's, not the bench's results).
fn markdown_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a directory lists") {
            let path = entry.expect("an entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "results" && name != "node_modules" {
                    dirs.push(path);
                }
            } else if name.ends_with(".md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The violations of the link rule: a relative link (outside code blocks) to a missing file.
fn link_violations() -> Vec<String> {
    let mut violations = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).expect("a document reads");
        let mut fenced = false;
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            for link in line.split("](").skip(1).filter_map(|rest| rest.split(')').next()) {
                let target = link.split('#').next().unwrap_or("");
                let external = target.contains("://") || target.starts_with("mailto:");
                if target.is_empty() || external || target.contains(' ') {
                    continue;
                }
                let dir = file.parent().unwrap_or(root());
                if !dir.join(target).exists() {
                    violations.push(format!("{}:{}: the link `{link}` names no file", file.display(), n + 1));
                }
            }
        }
    }
    violations
}

/// The violations of the C-ABI rule: a `pub extern "C" fn` of the runtime that `nagi_abi`'s list
/// lacks, or a listed function the runtime does not export.
fn abi_violations() -> Vec<String> {
    let mut exported = BTreeMap::new();
    for (file, text) in sources(&root().join("runtime/src")) {
        for line in text.lines().filter(|l| l.trim_start().starts_with("pub")) {
            if let Some(rest) = line.split("extern \"C\" fn ").nth(1) {
                exported.insert(rest.split('(').next().unwrap_or("").to_owned(), file.clone());
            }
        }
    }
    let listed: BTreeSet<String> = nagi_abi::Function::ALL.iter().map(|f| f.symbol().to_owned()).collect();
    let mut violations = Vec::new();
    for (name, file) in &exported {
        if !listed.contains(name) {
            violations.push(format!(
                "{name} (in {}) is exported but not in nagi_abi's list (abi/src/lib.rs)",
                file.display()
            ));
        }
    }
    for name in listed.iter().filter(|name| !exported.contains_key(*name)) {
        violations.push(format!("{name} is in nagi_abi's list but the runtime does not export it"));
    }
    violations
}

/// The modules of the crate whose sources are `dir` (`a/b.rs` is `a::b`; the crate root is left
/// out, since it declares every module, and so are test-only modules) and the modules each names
/// through `crate::` and `super::` paths.
fn module_graph(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules = BTreeMap::new();
    let mut test_only = BTreeSet::new();
    for (file, text) in sources(dir) {
        let relative = file.strip_prefix(dir).expect("under the directory").with_extension("");
        let name = relative.to_string_lossy().trim_end_matches("/mod").replace('/', "::");
        let name = if name == "lib" || name == "main" { String::new() } else { name };
        test_only.extend(test_only_children(&text).into_iter().map(|child| join(&name, &child)));
        if !name.is_empty() {
            let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            modules.insert(name, code.join("\n"));
        }
    }
    modules.retain(|name, _| !test_only.iter().any(|t| name == t || name.starts_with(&format!("{t}::"))));
    let mut graph = BTreeMap::new();
    for (name, text) in &modules {
        let mut named = BTreeSet::new();
        for segments in named_paths(name, text) {
            let module = (1..=segments.len()).rev().map(|k| segments[..k].join("::")).find(|m| modules.contains_key(m));
            if let Some(module) = module
                && module != *name
                && !module.starts_with(&format!("{name}::"))
                && !name.starts_with(&format!("{module}::"))
            {
                named.insert(module);
            }
        }
        graph.insert(name.clone(), named);
    }
    graph
}

/// `parent::child`, or `child` at the crate root.
fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() { child.to_owned() } else { format!("{parent}::{child}") }
}

/// The child modules a file declares under `#[cfg(test)]` (`#[cfg(test)] pub(crate) mod testing;`).
fn test_only_children(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|pair| pair[0] == "#[cfg(test)]")
        .filter_map(|pair| pair[1].strip_suffix(';')?.split("mod ").nth(1).map(str::to_owned))
        .collect()
}

/// The paths that `text`, the code of module `name`, names through `crate::` and `super::`, each
/// as its segments from the crate root (`super::guard::fail` in `cabi::db` is `cabi::guard::fail`);
/// a group (`crate::{a, b::c}`) names each of its paths.
fn named_paths(name: &str, text: &str) -> Vec<Vec<String>> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found = Vec::new();
    for (at, _) in text.match_indices("::") {
        // A path starts at `crate::` or `super::` that does not follow another segment.
        let before = &text[..at];
        let first = before.rsplit(|c: char| !is_ident(c)).next().unwrap_or("");
        let start = at - first.len();
        if !(first == "crate" || first == "super") || text[..start].ends_with(|c: char| is_ident(c) || c == ':') {
            continue;
        }
        let mut base: Vec<String> = if first == "crate" {
            Vec::new()
        } else {
            name.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect()
        };
        if first == "super" {
            base.pop();
        }
        let mut rest = &text[at + 2..];
        while let Some(further) = rest.strip_prefix("super::") {
            base.pop();
            rest = further;
        }
        let paths: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
            None => vec![rest],
        };
        for path in paths {
            let mut segments = base.clone();
            segments.extend(
                path.trim()
                    .split("::")
                    .map(|s| &s[..s.find(|c: char| !is_ident(c)).unwrap_or(s.len())])
                    .take_while(|id| {
                        !id.is_empty() && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    })
                    .map(str::to_owned),
            );
            found.push(segments);
        }
    }
    found
}

/// A cycle of `graph` through `start`, if there is one (as the modules in order).
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_owned(), vec![start.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == start {
                return Some(path.clone());
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

/// The violations of the no-cycle rule in the driver, the LLVM emitter and the runtime.
fn cycle_violations() -> Vec<String> {
    let mut violations = Vec::new();
    for dir in ["src", "emit-llvm/src", "runtime/src"] {
        let graph = module_graph(&root().join(dir));
        let mut reported = BTreeSet::new();
        for module in graph.keys() {
            if let Some(cycle) = cycle_through(&graph, module) {
                let mut key = cycle.clone();
                key.sort();
                if reported.insert(key) {
                    violations.push(format!("{dir}: the files {} import each other in a cycle", cycle.join(" → ")));
                }
            }
        }
    }
    violations
}

/// The runtime's layers as ARCHITECTURE.md's table lists them: each module and the position of
/// its layer (0 for the first row, which may use no later one).
fn runtime_layers(map: &str) -> BTreeMap<String, usize> {
    let table = map.split("`tests/tidy.rs` reads this table").nth(1).expect("ARCHITECTURE.md has the runtime's layers");
    let rows = table.lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|'));
    let mut layers = BTreeMap::new();
    for (at, row) in rows.filter(|r| !r.starts_with("| ---")).skip(1).enumerate() {
        let modules = row.split('|').nth(2).unwrap_or("");
        for module in modules.split('`').skip(1).step_by(2) {
            layers.insert(module.to_owned(), at);
        }
    }
    layers
}

/// The violations of the runtime's layering: a file that uses one of a later layer, or a module
/// the table does not place.
fn layer_violations() -> Vec<String> {
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md reads");
    let layers = runtime_layers(&map);
    let layer = |module: &str| layers.get(module.split("::").next().unwrap_or(module)).copied();
    let mut violations = Vec::new();
    for (module, named) in module_graph(&root().join("runtime/src")) {
        let Some(at) = layer(&module) else {
            violations.push(format!("runtime/src: `{module}` is in no layer of ARCHITECTURE.md's table"));
            continue;
        };
        for other in named.iter().filter(|other| layer(other).is_some_and(|theirs| theirs > at)) {
            violations.push(format!("runtime/src: `{module}` uses `{other}`, which is in a later layer"));
        }
    }
    violations
}

/// The longest a function of the compiler crates may be, in lines from `fn` to its closing
/// brace: a longer one is nearly always a match over every operation that wants a dispatch on
/// the operation's family and a function per family (`nagi_low::facts::Family`).
const MAX_FUNCTION_LINES: usize = 150;

/// The functions in `text` longer than `limit` lines, each as its name, the line its `fn` is on
/// (from 1) and its length in lines. A declaration without a body (`fn f();`) has none.
fn long_functions(text: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    let mut offset = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let mut rest = line.trim_start();
        for qualifier in ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe ", "extern \"C\" "] {
            rest = rest.strip_prefix(qualifier).unwrap_or(rest);
        }
        let Some(signature) = rest.strip_prefix("fn ") else { continue };
        let name: String = signature.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // The body opens at the first `{` outside the parameters and array types; a `;` there
        // ends a declaration.
        let at = start + (line.len() - signature.len());
        let mut depth = 0i32;
        let mut open = None;
        for (i, c) in text[at..].char_indices() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ';' if depth == 0 => break,
                '{' if depth == 0 => {
                    open = Some(at + i + 1);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let close = open + closing_brace(&text[open..]);
        let length = text[start..close].matches('\n').count() + 1;
        if length > limit {
            found.push((name, number + 1, length));
        }
    }
    found
}

/// The violations of the function-length rule in the compiler crates.
fn length_violations() -> Vec<String> {
    let mut violations = Vec::new();
    for dir in
        ["low/src", "passes/src", "emit-rust/src", "emit-llvm/src", "interp/src", "high/src", "syntax/src", "src"]
    {
        for (file, text) in sources(&root().join(dir)) {
            for (name, line, length) in long_functions(&text, MAX_FUNCTION_LINES) {
                let file = file.strip_prefix(root()).unwrap_or(&file).display();
                violations.push(format!(
                    "{file}:{line}: `{name}` is {length} lines, over {MAX_FUNCTION_LINES}; split it into helpers"
                ));
            }
        }
    }
    violations
}

/// The package names `cargo tree` lists for the workspace on this host with `edges`.
fn tree_packages(edges: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let tree = |offline: bool| {
        std::process::Command::new(&cargo)
            .current_dir(root())
            .args(["tree", "--workspace", "--prefix", "none", "-e", edges])
            .args(offline.then_some("--offline"))
            .output()
            .expect("cargo tree runs")
    };
    // Offline first; a checkout that has not downloaded every member's dependencies yet (a
    // `cargo test --test tidy` before any whole-workspace build) lets cargo fetch them.
    let mut output = tree(true);
    if !output.status.success() {
        output = tree(false);
    }
    assert!(output.status.success(), "cargo tree -e {edges}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split(' ').next())
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The crates the dev profile of Cargo.toml builds at `opt-level = 0` by name.
fn unoptimized_in_dev(manifest: &str) -> BTreeSet<String> {
    let section = manifest.split("[profile.dev.package]\n").nth(1).unwrap_or("");
    section
        .lines()
        .take_while(|line| !line.starts_with('['))
        .filter(|line| line.ends_with("= { opt-level = 0 }"))
        .filter_map(|line| line.split(' ').next())
        .map(|name| name.trim_matches('"').to_owned())
        .collect()
}

/// The differences between the crates that run only inside the compiler and the dev profile's
/// unoptimized list (the SQL parser is there for its own reason).
fn profile_violations() -> Vec<String> {
    let everything = tree_packages("normal,dev,build");
    let in_programs = tree_packages("normal,dev,no-proc-macro");
    let host_only: BTreeSet<String> = everything.difference(&in_programs).cloned().collect();
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let mut listed = unoptimized_in_dev(&manifest);
    listed.remove("sqlparser");
    let missing = host_only
        .difference(&listed)
        .map(|n| format!("{n}: runs only in the compiler; add `{n} = {{ opt-level = 0 }}`"));
    let extra = listed
        .difference(&host_only)
        .map(|n| format!("{n}: not a compile-time-only crate (any more); remove its line"));
    missing.chain(extra).collect()
}

fn assert_none(rule: &str, violations: Vec<String>) {
    assert!(violations.is_empty(), "{rule}:\n{}", violations.join("\n"));
}

#[test]
fn crates_depend_only_on_what_the_architecture_allows() {
    assert_none("dependencies", dependency_violations());
}

#[test]
fn core_crates_do_no_io() {
    assert_none("IO in a core crate", io_violations());
}

#[test]
fn every_diagnostic_code_is_documented_and_on_its_checklist() {
    assert_none("diagnostic codes", code_violations());
}

#[test]
fn the_runtime_exports_exactly_the_listed_c_functions() {
    assert_none("the C ABI", abi_violations());
}

#[test]
fn no_file_of_the_driver_the_llvm_emitter_or_the_runtime_imports_one_that_imports_it_back() {
    assert_none("import cycles", cycle_violations());
}

#[test]
fn the_runtime_uses_only_its_own_and_earlier_layers() {
    assert_none("runtime layers", layer_violations());
}

#[test]
fn the_dev_profile_leaves_exactly_the_compile_time_crates_unoptimized() {
    assert_none("Cargo.toml's dev profile", profile_violations());
}

#[test]
fn no_function_of_the_compiler_is_over_150_lines() {
    assert_none("long functions", length_violations());
}

#[test]
fn relative_links_in_the_docs_name_files_that_exist() {
    assert_none("links", link_violations());
}

/// Each rule catches what it is meant to catch: the readers above, on made-up text.
#[test]
fn the_readers_find_what_they_look_for() {
    let manifest = "[dependencies]\nnagi-low.workspace = true\nnagi-abi = { path = \"abi\" }\n\n[dev-dependencies]\nnagi-high.workspace = true\n";
    assert_eq!(nagi_dependencies(manifest, &["[dependencies]"]), ["nagi-low", "nagi-abi"]);
    assert_eq!(codes_in(r#"error("H201", x) "V2010" H301 "#, 'H', true), BTreeSet::from(["H201".to_owned()]));
    assert_eq!(
        codes_in("| H201 | x | H3011 | `H302`", 'H', false),
        BTreeSet::from(["H201".to_owned(), "H302".to_owned()])
    );
    assert_eq!(without_tests("a\n#[cfg(test)]\nmod tests {\nfn f() { std::fs }\n}\nb"), "a\n\n\n\n\nb");
    let braces = "a\n#[cfg(test)]\nmod tests {\n\"{ \\\" {\" '{' '\\'' r#\"{\"# // {\n}\nb";
    assert_eq!(without_tests(braces), "a\n\n\n\n\nb");
    assert!(is_test_file(Path::new("high/src/check/tests.rs")) && is_test_file(Path::new("low/src/tests/a.rs")));
    let graph: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
        .iter()
        .map(|(from, to)| (from.to_string(), BTreeSet::from([to.to_string()])))
        .collect();
    assert_eq!(cycle_through(&graph, "a"), Some(vec!["a".to_owned(), "b".to_owned(), "c".to_owned()]));
    assert_eq!(cycle_through(&graph, "d"), None);
    let paths = named_paths("cabi::db", "use super::guard::fail; use crate::{http::Reply, db};\nsuper::super::x::Y");
    let joined: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(joined, ["cabi::guard::fail", "http", "db", "x"]);
    let map = "`tests/tidy.rs` reads this table:\n\n| layer | modules |\n| --- | --- |\n| rules | `trap`, `ops` |\n| IO | `db` |\n\nmore";
    let layers = runtime_layers(map);
    assert_eq!((layers["trap"], layers["ops"], layers["db"], layers.len()), (0, 0, 1, 3));
    assert_eq!(test_only_children("#[cfg(test)]\npub(crate) mod testing;\nmod tests;"), ["testing"]);
    let code =
        "fn short() {\n}\npub(crate) fn long(x: [u8; 2]) -> u8 {\n    let s = \"}\";\n    1\n}\nfn declared();\n";
    assert_eq!(long_functions(code, 3), [("long".to_owned(), 3, 4)]);
    assert!(long_functions(code, 4).is_empty());
    let manifest = "[profile.dev.package]\n\"*\" = { opt-level = 1 }\nsyn = { opt-level = 0 }\n\n[profile.x]\na = { opt-level = 0 }";
    assert_eq!(unoptimized_in_dev(manifest), BTreeSet::from(["syn".to_owned()]));
}
