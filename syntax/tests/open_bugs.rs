//! Tests that show known bugs of the lexer (they fail until the bug is fixed, then guard
//! against its return). Kept in their own test binary, which cargo runs after the others, so
//! a failure here does not stop the rest of `cargo test -p nagi-syntax` from running.

use nagi_syntax::ast::Span;
use nagi_syntax::lexer::{LexError, Tok, lex};
use nagi_syntax::parse;

#[test]
fn a_unicode_escape_holds_hex_digits_only() {
    // `\u{+41}` is not a hex code (Rust's own `\u{…}` rejects it too), but the lexer reads
    // the digits with `u32::from_str_radix`, which accepts a leading `+`, so this lexes as
    // the string "A" instead of failing with a bad unicode escape at the `\u`.
    let got = lex(r#""\u{+41}""#);
    assert!(
        matches!(&got, Err(LexError { message, span: Span { start: 1, end: 3 } })
            if message == r"bad unicode escape; write `\u{hex}`"),
        "expected a bad unicode escape at 1..3, got {got:?}"
    );
}

#[test]
fn a_comment_line_at_the_start_of_a_class_literal_keeps_it_a_class_literal() {
    // The class-literal lookahead skips whitespace and line breaks after `{` but not comment
    // lines (the `else` lookahead does skip them), so a comment before the first field turns
    // the literal's `{` into a block brace and the program fails to parse.
    let src = "fn main() {\n    let u = User {\n        // the id\n        id: 1,\n    }\n}\n";
    let brace = lex(src).unwrap().into_iter().find(|(l, _, _)| *l == 29).map(|(_, t, _)| t);
    assert_eq!(brace, Some(Tok::LitBrace), "the `{{` after `User`");
    assert!(parse(src).is_ok(), "{:?}", parse(src));
}
