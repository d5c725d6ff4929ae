//! Regression tests of two lexer bugs the syntax tests found: a sign in a `\u{…}` escape, and
//! a comment line before the first field of a class literal.

use nagi_syntax::ast::Span;
use nagi_syntax::lexer::{LexError, Tok, lex};
use nagi_syntax::parse;

#[test]
fn a_unicode_escape_holds_hex_digits_only() {
    // `\u{+41}` is not a hex code (Rust's own `\u{…}` rejects it too); the lexer once read
    // the digits with `u32::from_str_radix` alone, which accepts a leading `+`, so this lexed
    // as the string "A" instead of failing with a bad unicode escape at the `\u`.
    let got = lex(r#""\u{+41}""#);
    assert!(
        matches!(&got, Err(LexError { message, span: Span { start: 1, end: 3 } })
            if message == r"bad unicode escape; write `\u{hex}`"),
        "expected a bad unicode escape at 1..3, got {got:?}"
    );
}

#[test]
fn a_comment_line_at_the_start_of_a_class_literal_keeps_it_a_class_literal() {
    // The class-literal lookahead once skipped whitespace and line breaks after `{` but not
    // comment lines (the `else` lookahead did), so a comment before the first field turned
    // the literal's `{` into a block brace and the program failed to parse.
    let src = "fn main() {\n    let u = User {\n        // the id\n        id: 1,\n    }\n}\n";
    let brace = lex(src).unwrap().into_iter().find(|(l, _, _)| *l == 29).map(|(_, t, _)| t);
    assert_eq!(brace, Some(Tok::LitBrace), "the `{{` after `User`");
    assert!(parse(src).is_ok(), "{:?}", parse(src));
}
