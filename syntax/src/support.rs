//! Small helpers the grammar's actions call, kept out of the grammar file so they are
//! ordinary, type-checked Rust.

use crate::ast::{Block, Expr, ExprKind, Ident, PatternKind, Span, Stmt};
use crate::lexer::LexError;

/// The span between two byte offsets.
pub fn sp(l: usize, r: usize) -> Span {
    Span::new(l, r)
}

/// Wraps the `if` of an `else if` in a block, so the AST has one shape for else branches.
pub fn else_if(nested: Stmt) -> Block {
    let span = nested.span;
    Block { stmts: vec![nested], span }
}

/// Checks that `db.NAME` names one of `allowed`.
pub fn check_db_op(op: &Ident, allowed: &[&str]) -> Result<(), LexError> {
    if allowed.contains(&op.name.as_str()) {
        return Ok(());
    }
    let list = allowed.iter().map(|a| format!("`db.{a}`")).collect::<Vec<_>>().join(", ");
    Err(LexError { message: format!("unknown database operation `db.{}`; expected {list}", op.name), span: op.span })
}

/// Checks that a contextual word (such as the `key` of a table declaration) is `expected`.
pub fn check_word(word: &Ident, expected: &str) -> Result<(), LexError> {
    if word.name == expected {
        return Ok(());
    }
    Err(LexError { message: format!("expected `{expected}`, found `{}`", word.name), span: word.span })
}

/// The pattern a lone name is: `_` is the wildcard, any other name a variant.
pub fn pattern_name(name: Ident) -> PatternKind {
    if name.name == "_" {
        PatternKind::Wildcard
    } else {
        PatternKind::Variant { enum_name: None, variant: name, binding: None }
    }
}

/// The class of `module.Class { … }`, named `module.Class`; `module` must be a plain name.
pub fn qualified_class(module: Expr, class: Ident) -> Result<Ident, LexError> {
    match module.kind {
        ExprKind::Name(module) => Ok(Ident {
            name: format!("{}.{}", module.name, class.name),
            span: Span { start: module.span.start, end: class.span.end },
        }),
        _ => Err(LexError {
            message: "a class literal names a class, or a module and a class (`accounts.Account { … }`)".into(),
            span: module.span,
        }),
    }
}
