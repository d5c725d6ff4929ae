//! Completion: after `receiver.`, the receiver's fields and methods (or a module's members, or an
//! enum's variants); elsewhere, the locals in scope, the program's functions and types, the
//! builtins and the keywords.
//!
//! The receiver is read from the text before the cursor (`post.author.` → `post`, `author`) and
//! resolved in an analysis of the program, so the file being typed need not check: the language
//! server asks with the last analysis that did, or with one of the text whose unfinished
//! member access it removed.

use super::{Analysis, ty_name};
use crate::tir::{FnIdx, Program, Ty};

#[cfg(test)]
mod tests {
    use super::context;

    #[test]
    fn the_context_is_read_across_multi_byte_characters() {
        assert_eq!(context("// 注意：x", "// 注意：x".len()), (None, "x".to_string()));
        assert_eq!(context("a — post.ti", "a — post.ti".len()), (Some(vec!["post".to_string()]), "ti".to_string()));
        assert_eq!(context("é", 1), (None, String::new()));
    }
}

/// What a completion inserts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Field,
    Method,
    Function,
    Class,
    Enum,
    Variant,
    Local,
    Keyword,
    Module,
}

/// One completion: the text, what it is, and a detail (its type or signature).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: Kind,
    pub detail: Option<String>,
}

/// The methods of each built-in type (docs/language.md §6.6).
const STRING_METHODS: &[&str] = &[
    "len",
    "clone",
    "contains",
    "starts_with",
    "ends_with",
    "find",
    "split",
    "trim",
    "to_lower",
    "to_upper",
    "replace",
    "slice",
    "parse_i64",
    "parse_f64",
];
const ARRAY_METHODS: &[&str] = &["len", "push", "clone", "sort", "sort_by", "reverse", "contains", "slice"];
const MAP_METHODS: &[&str] = &["len", "get", "contains", "insert", "remove", "clone"];

/// The keywords that start a statement or a declaration.
const KEYWORDS: &[&str] = &[
    "let", "var", "if", "else", "match", "while", "for", "in", "return", "break", "continue", "try", "catch", "scope",
    "spawn", "send", "defer", "fn", "class", "enum", "route", "table", "import", "pub", "true", "false", "none",
];

/// The text before `offset` in `text`: the receiver's names when a member is being typed
/// (`post.au|` gives `["post"]`), and the unfinished name.
pub fn context(text: &str, offset: usize) -> (Option<Vec<String>>, String) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    // Where the run of characters `keep` accepts, ending at the end of `text`, starts.
    let run_start = |text: &str, keep: &dyn Fn(char) -> bool| {
        text.char_indices().rev().find(|(_, c)| !keep(*c)).map_or(0, |(i, c)| i + c.len_utf8())
    };
    let word_start = run_start(before, &|c| c.is_alphanumeric() || c == '_');
    let word = before[word_start..].to_string();
    let rest = &before[..word_start];
    let Some(rest) = rest.strip_suffix('.') else { return (None, word) };
    let chain_start = run_start(rest, &|c| c.is_alphanumeric() || c == '_' || c == '.');
    let chain: Vec<String> = rest[chain_start..].split('.').map(str::to_string).collect();
    if chain.iter().any(String::is_empty) {
        return (None, word);
    }
    (Some(chain), word)
}

/// The completions at `offset` (of the span space) for the receiver `chain` (from
/// [`context`]) or, without one, for a name.
pub fn completions(analysis: &Analysis, offset: usize, chain: Option<&[String]>) -> Vec<Completion> {
    let Some(program) = analysis.program.as_ref() else { return Vec::new() };
    let function = enclosing(program, offset);
    match chain {
        Some(chain) => members(program, function, offset, chain),
        None => names(program, function, offset),
    }
}

/// The innermost function whose declaration holds `offset`.
fn enclosing(program: &Program, offset: usize) -> Option<FnIdx> {
    let at = offset as u32;
    program
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.span.start <= at && at <= f.span.end)
        .min_by_key(|(_, f)| f.span.end - f.span.start)
        .map(|(i, _)| i)
}

/// The type of the local `name` of `function` declared last before `offset`.
fn local_type(program: &Program, function: Option<FnIdx>, offset: usize, name: &str) -> Option<Ty> {
    let f = &program.functions[function?];
    f.locals
        .iter()
        .filter(|l| l.name == name && (l.span.start as usize) <= offset)
        .max_by_key(|l| l.span.start)
        .map(|l| l.ty.clone())
}

fn members(program: &Program, function: Option<FnIdx>, offset: usize, chain: &[String]) -> Vec<Completion> {
    let first = &chain[0];
    let ty = local_type(program, function, offset, first);
    let Some(mut ty) = ty else {
        if chain.len() == 1 {
            if let Some(e) = program.enums.iter().find(|e| e.name == *first || e.name.ends_with(&format!(".{first}"))) {
                return e
                    .variants
                    .iter()
                    .map(|v| Completion { label: v.name.clone(), kind: Kind::Variant, detail: Some(e.name.clone()) })
                    .collect();
            }
        }
        return module_members(program, &chain.join("."));
    };
    for segment in &chain[1..] {
        ty = match ty {
            Ty::Class(c) => match program.classes[c].fields.iter().find(|f| f.name == *segment) {
                Some(field) => field.ty.clone(),
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
    }
    of_type(program, &ty)
}

/// The fields and methods of a value of `ty`.
fn of_type(program: &Program, ty: &Ty) -> Vec<Completion> {
    let methods = |names: &[&str]| -> Vec<Completion> {
        names.iter().map(|m| Completion { label: (*m).to_string(), kind: Kind::Method, detail: None }).collect()
    };
    match ty {
        Ty::Class(c) => {
            let mut out: Vec<Completion> = program.classes[*c]
                .fields
                .iter()
                .map(|f| Completion { label: f.name.clone(), kind: Kind::Field, detail: Some(ty_name(program, &f.ty)) })
                .collect();
            out.extend(methods(&["clone"]));
            out
        }
        Ty::Actor(c) => program
            .actors
            .iter()
            .filter(|a| a.class == *c)
            .flat_map(|a| a.handlers.iter())
            .map(|&h| {
                let name = program.functions[h].name.rsplit('.').next().unwrap_or_default().to_string();
                Completion { label: name, kind: Kind::Method, detail: Some(super::signature(program, h)) }
            })
            .collect(),
        Ty::String => methods(STRING_METHODS),
        Ty::Array(item) => {
            let mut out = methods(ARRAY_METHODS);
            if **item == Ty::String {
                out.extend(methods(&["join"]));
            }
            out
        }
        Ty::Map(..) => methods(MAP_METHODS),
        Ty::Task(_) => methods(&["join"]),
        _ => methods(&["clone"]),
    }
}

/// The members of the module used as `alias` (its last path segment): its functions, classes
/// and enums, by their names in it.
fn module_members(program: &Program, alias: &str) -> Vec<Completion> {
    let member = |qualified: &str| -> Option<String> {
        let (path, name) = qualified.rsplit_once('.')?;
        (path == alias || path.ends_with(&format!(".{alias}"))).then(|| name.to_string())
    };
    let mut out = Vec::new();
    for (i, f) in program.functions.iter().enumerate() {
        if let Some(name) = member(&f.name).filter(|_| !f.is_route) {
            out.push(Completion { label: name, kind: Kind::Function, detail: Some(super::signature(program, i)) });
        }
    }
    for c in &program.classes {
        if let Some(name) = member(&c.name) {
            out.push(Completion { label: name, kind: Kind::Class, detail: None });
        }
    }
    for e in &program.enums {
        if let Some(name) = member(&e.name) {
            out.push(Completion { label: name, kind: Kind::Enum, detail: None });
        }
    }
    out
}

/// Everything a name may be at `offset`.
fn names(program: &Program, function: Option<FnIdx>, offset: usize) -> Vec<Completion> {
    let mut out = Vec::new();
    if let Some(f) = function {
        let mut seen = std::collections::HashSet::new();
        for l in program.functions[f].locals.iter().rev() {
            if (l.span.start as usize) <= offset && seen.insert(l.name.clone()) && !l.name.starts_with('%') {
                out.push(Completion {
                    label: l.name.clone(),
                    kind: Kind::Local,
                    detail: Some(ty_name(program, &l.ty)),
                });
            }
        }
    }
    let mut modules = std::collections::BTreeSet::new();
    for (i, f) in program.functions.iter().enumerate() {
        if f.is_route || program.tests.iter().any(|t| t.function == i) {
            continue;
        }
        match f.name.rsplit_once('.') {
            Some((path, _)) => {
                modules.insert(path.rsplit('.').next().unwrap_or(path).to_string());
            }
            None => out.push(Completion {
                label: f.name.clone(),
                kind: Kind::Function,
                detail: Some(super::signature(program, i)),
            }),
        }
    }
    for c in program.classes.iter().filter(|c| !c.name.contains('.')) {
        out.push(Completion { label: c.name.clone(), kind: Kind::Class, detail: None });
    }
    for e in program.enums.iter().filter(|e| !e.name.contains('.')) {
        out.push(Completion { label: e.name.clone(), kind: Kind::Enum, detail: None });
    }
    for m in modules {
        out.push(Completion { label: m, kind: Kind::Module, detail: None });
    }
    for name in crate::check::builtin_function_names() {
        out.push(Completion { label: name.to_string(), kind: Kind::Function, detail: Some("builtin".into()) });
    }
    for k in KEYWORDS {
        out.push(Completion { label: (*k).to_string(), kind: Kind::Keyword, detail: None });
    }
    out
}
