//! Rust spellings of Low names and types.
//!
//! Low names are `[A-Za-z0-9_]+`, with `.` in qualified names; Rust keywords become raw identifiers (`r#loop`) and names
//! that cannot be raw (`self`, `crate`, `super`, `Self`, `_`) or that start with a digit get a
//! prefix. Generated code names everything outside `program` by full path (`::std::…`,
//! `nagi_runtime::…`) and calls program functions as `self::f`, so no Low name can shadow
//! what the generated code needs.

use std::collections::HashSet;

use nagi_low::{ArenaGet, Module, Type};

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static", "struct", "trait",
    "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "gen", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// A Rust identifier for the Low name `name`. The `.` of a qualified name (`accounts.find`,
/// an item of a module) is written `__`, which High reserves for that in item names.
pub fn ident(name: &str) -> String {
    if name.contains('.') {
        return ident(&name.replace('.', "__"));
    }
    if matches!(name, "self" | "crate" | "super" | "Self" | "_") || name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("n_{name}")
    } else if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// A Rust loop label for the Low label `name` (labels cannot be raw identifiers).
pub fn label(name: &str) -> String {
    if KEYWORDS.contains(&name) || name == "static" || name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("'l_{name}")
    } else {
        format!("'{name}")
    }
}

/// Gives every local of a function a distinct Rust name, keeping Low's names where possible.
pub struct LocalNames {
    taken: HashSet<String>,
}

impl LocalNames {
    pub fn new() -> LocalNames {
        LocalNames { taken: HashSet::new() }
    }

    /// A fresh Rust name based on `name`.
    pub fn fresh(&mut self, name: &str) -> String {
        let base = ident(name);
        let mut candidate = base.clone();
        let mut n = 1;
        while !self.taken.insert(candidate.clone()) {
            candidate = format!("{}_{n}", base.trim_start_matches("r#"));
            n += 1;
        }
        candidate
    }
}

/// The Rust type of a Low type.
pub fn rust_type(module: &Module, ty: &Type) -> String {
    rust_type_in(module, ty, None)
}

/// The Rust type of a Low type whose references all carry the lifetime `lifetime` (such as
/// `'nagi`), for a signature that must name it: a boxed future borrows its arguments.
pub fn rust_type_with_lifetime(module: &Module, ty: &Type, lifetime: &str) -> String {
    rust_type_in(module, ty, Some(lifetime))
}

fn rust_type_in(module: &Module, ty: &Type, lifetime: Option<&str>) -> String {
    let rust_type = |module: &Module, ty: &Type| rust_type_in(module, ty, lifetime);
    match ty {
        Type::I32 => "i32".into(),
        Type::I64 => "i64".into(),
        Type::F64 => "f64".into(),
        Type::Bool => "bool".into(),
        Type::Unit => "()".into(),
        Type::String => "::std::string::String".into(),
        Type::Time => "nagi_runtime::time::Time".into(),
        Type::Duration => "nagi_runtime::time::Duration".into(),
        Type::Uuid => "nagi_runtime::ids::Uuid".into(),
        Type::Array(t) => format!("::std::vec::Vec<{}>", rust_type(module, t)),
        Type::Option(t) => format!("::std::option::Option<{}>", rust_type(module, t)),
        Type::Map(k, v) => format!("nagi_runtime::map::Map<{}, {}>", rust_type(module, k), rust_type(module, v)),
        Type::Scope => "nagi_runtime::tasks::Scope".into(),
        Type::Defer => "nagi_runtime::defers::Defer".into(),
        Type::Task(t) => format!("nagi_runtime::tasks::Task<{}>", rust_type(module, t)),
        Type::Actor(c) => format!(
            "nagi_runtime::actors::Actor<{}>",
            module.classes.get(*c).map_or_else(|| "()".into(), |c| ident(&c.name))
        ),
        Type::Class(c) => module.classes.get(*c).map_or_else(|| "()".into(), |c| ident(&c.name)),
        Type::Enum(e) => module.enums.get(*e).map_or_else(|| "()".into(), |e| ident(&e.name)),
        Type::Ref { mutable, pointee } => {
            let lifetime = lifetime.map(|l| format!("{l} ")).unwrap_or_default();
            format!("&{lifetime}{}{}", if *mutable { "mut " } else { "" }, rust_type(module, pointee))
        }
    }
}
