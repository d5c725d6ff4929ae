//! Tests of the High Nagi lexer (`nagi_syntax::lexer::lex`): where line breaks insert the
//! statement-ending `;`, literals and their errors, comments, keywords and contextual tokens
//! (class-literal braces, `db.query<T>` angle brackets), punctuation, and token spans.

use nagi_syntax::ast::Span;
use nagi_syntax::lexer::{LexError, Tok, lex};

/// The token kinds of `src`, without spans.
fn kinds(src: &str) -> Vec<Tok> {
    lex(src).unwrap_or_else(|e| panic!("{src:?} should lex, got {e:?}")).into_iter().map(|(_, t, _)| t).collect()
}

/// The lexical error of `src`.
fn lex_err(src: &str) -> LexError {
    match lex(src) {
        Ok(toks) => panic!("{src:?} should not lex, got {toks:?}"),
        Err(e) => e,
    }
}

fn span(start: u32, end: u32) -> Span {
    Span { start, end }
}

fn id(s: &str) -> Tok {
    Tok::Ident(s.to_string())
}

/// The byte offsets of the inserted or written `;` tokens of `src`, with their ends.
fn semis(src: &str) -> Vec<(usize, usize)> {
    lex(src).unwrap().into_iter().filter(|(_, t, _)| *t == Tok::Semi).map(|(l, _, r)| (l, r)).collect()
}

// ---------------------------------------------------------------------------------------------
// Line breaks.

#[test]
fn a_line_break_after_each_statement_ending_token_inserts_a_zero_width_semi() {
    // Every token that can end a statement, followed by a line break and then a name.
    let enders: &[(&str, Tok)] = &[
        ("x", id("x")),
        ("42", Tok::Int(42)),
        ("1.5", Tok::Float(1.5)),
        ("\"s\"", Tok::Str("s".into())),
        ("true", Tok::True),
        ("false", Tok::False),
        ("none", Tok::None),
        ("f()", Tok::RParen),
        ("xs[0]", Tok::RBracket),
        ("if c {}", Tok::RBrace),
        ("i32?", Tok::Question),
        ("return", Tok::Return),
        ("break", Tok::Break),
        ("continue", Tok::Continue),
    ];
    for (src_line, last) in enders {
        let src = format!("{src_line}\ny");
        let toks = lex(&src).unwrap();
        let newline = src_line.len();
        let at = toks.iter().position(|(_, t, _)| t == last).expect("the ending token is there");
        // Right after the token: a `;` at the line break, zero bytes wide, then `y`.
        assert_eq!(toks[at + 1], (newline, Tok::Semi, newline), "after {src_line:?}");
        assert_eq!(toks[at + 2], (newline + 1, id("y"), newline + 2), "after {src_line:?}");
    }
}

#[test]
fn a_line_break_after_an_operator_or_opening_token_does_not_end_the_statement() {
    // Binary operators, `=`, `,`, `.`, `->`, `:` and keywords that need more after them.
    for op in [
        "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&&", "||", "==", "!=", "<", "<=", ">", ">=", "=", "+=",
        ",",
    ] {
        let src = format!("a {op}\nb");
        let toks = kinds(&src);
        assert_eq!(toks.len(), 4, "{src:?} gives {toks:?}");
        assert_eq!((&toks[0], &toks[2], &toks[3]), (&id("a"), &id("b"), &Tok::Semi), "{src:?}");
    }
    for src in ["let\nx", "a.\nb", "-> \nT", "x:\nT", "if\nc", "fn\nf", "!\nc", "a as\nT"] {
        assert_eq!(semis(src), vec![(src.len(), src.len())], "only the end of {src:?} ends a statement");
    }
}

#[test]
fn a_line_break_that_starts_with_an_operator_still_ends_the_previous_line() {
    // The rule looks at the token before the break only, so a continuation line that starts
    // with an operator does not continue the statement.
    assert_eq!(kinds("a\n+ b"), vec![id("a"), Tok::Semi, Tok::Plus, id("b"), Tok::Semi]);
    assert_eq!(
        kinds("xs\n.len()"),
        vec![id("xs"), Tok::Semi, Tok::Dot, id("len"), Tok::LParen, Tok::RParen, Tok::Semi]
    );
}

#[test]
fn line_breaks_inside_parentheses_and_brackets_do_not_end_statements() {
    let src = "f(a\n, b\n)\nxs = [\n1,\n2\n]\n";
    // Only the breaks after the closing `)` and `]` end statements.
    assert_eq!(semis(src), vec![(9, 9), (23, 23)]);
    assert_eq!((&src[8..10], &src[22..24]), (")\n", "]\n"));
    // Brackets nested in brackets: only the break after the outermost `)` counts.
    assert_eq!(semis("g([\n(1\n)\n])\n"), vec![(11, 11)]);
}

#[test]
fn line_breaks_inside_class_literal_braces_do_not_end_statements_but_block_braces_do() {
    // A class literal: fields on their own lines, separated by commas.
    let lit = "p = Point {\n    x: 1,\n    y: 2\n}\n";
    assert_eq!(
        kinds(lit),
        vec![
            id("p"),
            Tok::Assign,
            id("Point"),
            Tok::LitBrace,
            id("x"),
            Tok::Colon,
            Tok::Int(1),
            Tok::Comma,
            id("y"),
            Tok::Colon,
            Tok::Int(2),
            Tok::RBrace,
            Tok::Semi,
        ]
    );
    // A block: each line is a statement, and the last one is also ended before the `}`, which
    // is followed by exactly one `;` (no doubled `;` after a written or inserted one).
    assert_eq!(
        kinds("if c {\n    a\n    b\n}\n"),
        vec![Tok::If, id("c"), Tok::LBrace, id("a"), Tok::Semi, id("b"), Tok::Semi, Tok::RBrace, Tok::Semi]
    );
    // On one line, a `;` is inserted right before the block's `}`, zero bytes wide.
    assert_eq!(lex("if c { a }").unwrap()[4], (9, Tok::Semi, 9));
    assert_eq!(kinds("if c { a; }"), vec![Tok::If, id("c"), Tok::LBrace, id("a"), Tok::Semi, Tok::RBrace, Tok::Semi]);
    // A class declaration's braces are block-like: line breaks separate fields.
    assert_eq!(semis("class P {\n    x: i32\n}"), vec![(20, 20), (22, 22)]);
}

#[test]
fn a_class_literal_brace_is_recognised_only_after_a_capitalised_name_before_a_field_or_brace() {
    let brace_of =
        |src: &str| kinds(src).into_iter().find(|t| matches!(t, Tok::LBrace | Tok::LitBrace)).expect("a brace");
    assert_eq!(brace_of("Point {}"), Tok::LitBrace);
    assert_eq!(brace_of("Point { x: 1 }"), Tok::LitBrace);
    assert_eq!(brace_of("Point {\n\n   x : 1 }"), Tok::LitBrace);
    assert_eq!(brace_of("P2_x {}"), Tok::LitBrace);
    // Lowercase name, no field after the brace, a class declaration, a return type.
    assert_eq!(brace_of("point { x: 1 }"), Tok::LBrace);
    assert_eq!(brace_of("while Running { stop() }"), Tok::LBrace);
    assert_eq!(brace_of("class Point {}"), Tok::LBrace);
    assert_eq!(brace_of("fn f() -> Point { x: 1 }"), Tok::LBrace);
    assert_eq!(brace_of("if x == 1 {}"), Tok::LBrace);
    // The documented trap: a capitalised condition followed by `{}` is a class literal.
    assert_eq!(brace_of("while Running {}"), Tok::LitBrace);
}

#[test]
fn no_semi_is_inserted_before_an_else_on_the_next_line_even_after_blank_and_comment_lines() {
    assert_eq!(kinds("}\nelse {"), vec![Tok::RBrace, Tok::Else, Tok::LBrace]);
    assert_eq!(kinds("}\n\n   \t\nelse"), vec![Tok::RBrace, Tok::Else]);
    assert_eq!(kinds("} // done\nelse"), vec![Tok::RBrace, Tok::Else]);
    assert_eq!(kinds("}\n// a comment line\n    // another\nelse"), vec![Tok::RBrace, Tok::Else]);
    // Only the whole word `else` counts.
    assert_eq!(kinds("}\nelsewhere"), vec![Tok::RBrace, Tok::Semi, id("elsewhere"), Tok::Semi]);
    assert_eq!(kinds("}\nelse_x"), vec![Tok::RBrace, Tok::Semi, id("else_x"), Tok::Semi]);
    // The exception does not depend on the token before the break.
    assert_eq!(kinds("x\nelse"), vec![id("x"), Tok::Else]);
}

#[test]
fn comments_run_to_the_end_of_the_line_and_the_break_after_them_still_counts() {
    // The comment's text is ignored, however odd; the line break after it ends `a`.
    let src = "a // \"unterminated \\q $ 0x1\nb";
    assert_eq!(lex(src).unwrap(), vec![(0, id("a"), 1), (27, Tok::Semi, 27), (28, id("b"), 29), (29, Tok::Semi, 29)]);
    // A comment at the end of the file, with no line break.
    assert_eq!(kinds("a // end"), vec![id("a"), Tok::Semi]);
    // Comment lines alone produce nothing, and a comment line after a statement adds no `;`.
    assert_eq!(kinds("// one\n    // two\n"), vec![]);
    assert_eq!(kinds("a\n// c\nb"), vec![id("a"), Tok::Semi, id("b"), Tok::Semi]);
    // A comment after an operator: the statement continues on the next line.
    assert_eq!(kinds("a + // c\nb"), vec![id("a"), Tok::Plus, id("b"), Tok::Semi]);
    // A single `/` is division, `/=` compound division.
    assert_eq!(kinds("a / b /= c"), vec![id("a"), Tok::Slash, id("b"), Tok::SlashAssign, id("c"), Tok::Semi]);
}

#[test]
fn explicit_semis_are_tokens_and_the_end_of_the_file_ends_a_statement() {
    assert_eq!(lex("a; b").unwrap(), vec![(0, id("a"), 1), (1, Tok::Semi, 2), (3, id("b"), 4), (4, Tok::Semi, 4)]);
    // `\r\n` line endings behave like `\n`.
    assert_eq!(semis("a\r\nb\r\n"), vec![(2, 2), (5, 5)]);
    assert_eq!(kinds(""), vec![]);
    assert_eq!(kinds("a +"), vec![id("a"), Tok::Plus]);
}

// ---------------------------------------------------------------------------------------------
// Literals.

#[test]
fn integer_literals_are_decimal_with_ignored_underscores() {
    assert_eq!(
        lex("0 42 1_000_000 1__2 7_ 18446744073709551615").unwrap(),
        vec![
            (0, Tok::Int(0), 1),
            (2, Tok::Int(42), 4),
            (5, Tok::Int(1_000_000), 14),
            (15, Tok::Int(12), 19),
            (20, Tok::Int(7), 22),
            (23, Tok::Int(u64::MAX), 43),
            (43, Tok::Semi, 43),
        ]
    );
    // A leading `-` is a separate token.
    assert_eq!(kinds("-5"), vec![Tok::Minus, Tok::Int(5), Tok::Semi]);
    // `_5` is a name, not a number.
    assert_eq!(kinds("_5"), vec![id("_5"), Tok::Semi]);
}

#[test]
fn integer_literal_errors() {
    assert_eq!(
        lex_err("x = 18446744073709551616"),
        LexError { message: "integer literal is too large for 64 bits".into(), span: span(4, 24) }
    );
    assert_eq!(lex_err("99_999_999_999_999_999_999").span, span(0, 26));
    // No hex, octal or binary literals, and no suffixes.
    for (src, end) in [("0x10", 4), ("0xFF", 4), ("0o7", 3), ("0b101", 5), ("3px", 3), ("10i32", 5), ("1_000abc", 8)] {
        assert_eq!(
            lex_err(src),
            LexError { message: "a number is directly followed by letters".into(), span: span(0, end) },
            "{src:?}"
        );
    }
}

#[test]
fn float_literals_with_fractions_and_exponents() {
    assert_eq!(
        lex("1.5 0.25 1e3 2.5e-3 1E+2 1_000.5 6.02e23 1_e5").unwrap(),
        vec![
            (0, Tok::Float(1.5), 3),
            (4, Tok::Float(0.25), 8),
            (9, Tok::Float(1000.0), 12),
            (13, Tok::Float(0.0025), 19),
            (20, Tok::Float(100.0), 24),
            (25, Tok::Float(1000.5), 32),
            (33, Tok::Float(6.02e23), 40),
            (41, Tok::Float(100000.0), 45),
            (45, Tok::Semi, 45),
        ]
    );
    // A digit is needed on both sides of the `.`: `1.` and `.5` are not floats, and `1..5` is a
    // range, `1.x` a field access.
    assert_eq!(kinds("1."), vec![Tok::Int(1), Tok::Dot]);
    assert_eq!(kinds(".5"), vec![Tok::Dot, Tok::Int(5), Tok::Semi]);
    assert_eq!(kinds("1..5"), vec![Tok::Int(1), Tok::DotDot, Tok::Int(5), Tok::Semi]);
    assert_eq!(kinds("1.x"), vec![Tok::Int(1), Tok::Dot, id("x"), Tok::Semi]);
    assert_eq!(kinds("1.5.x"), vec![Tok::Float(1.5), Tok::Dot, id("x"), Tok::Semi]);
}

#[test]
fn float_literal_errors_an_exponent_without_digits_is_letters_after_a_number() {
    for (src, end) in [("1e", 2), ("1e+", 2), ("2.5E-", 4), ("1e_5", 2), ("1.5f", 4), ("1.5e3x", 6)] {
        assert_eq!(
            lex_err(src),
            LexError { message: "a number is directly followed by letters".into(), span: span(0, end) },
            "{src:?}"
        );
    }
}

#[test]
fn string_literals_resolve_every_escape() {
    let src = r#""a\\b\"c\nd\re\tf\0g\u{41}\u{1F600}\u{e9}""#;
    assert_eq!(
        lex(src).unwrap(),
        vec![(0, Tok::Str("a\\b\"c\nd\re\tf\0gA\u{1F600}\u{e9}".into()), src.len()), (src.len(), Tok::Semi, src.len())]
    );
    assert_eq!(kinds(r#""""#), vec![Tok::Str(String::new()), Tok::Semi]);
    // Raw non-ASCII text is kept, and spans are byte offsets: `é` is 2 bytes, `✓` 3.
    assert_eq!(lex("\"é✓\" x").unwrap()[..2], [(0, Tok::Str("é✓".into()), 7), (8, id("x"), 9)]);
    // `//` inside a string is not a comment.
    assert_eq!(kinds(r#""http://x""#), vec![Tok::Str("http://x".into()), Tok::Semi]);
}

#[test]
fn string_literal_errors() {
    // Unterminated: at the end of the file, and at the end of the line (the span stops there).
    assert_eq!(lex_err(r#"x = "abc"#), LexError { message: "unterminated string literal".into(), span: span(4, 8) });
    assert_eq!(lex_err("\"abc\nx\""), LexError { message: "unterminated string literal".into(), span: span(0, 4) });
    assert_eq!(lex_err("\"abc\\\"").span, span(0, 6), "an escaped quote does not close the string");
    assert_eq!(lex_err("\"abc\\").message, "unterminated string literal");
    // An unknown escape: the span covers the backslash and the escaped character (2 bytes for
    // `é`).
    let known = r#"known escapes are \\ \" \n \r \t \0 \u{…}"#;
    assert_eq!(lex_err(r#""a\qb""#), LexError { message: format!("unknown escape `\\q`; {known}"), span: span(2, 4) });
    assert_eq!(lex_err(r#""\x41""#), LexError { message: format!("unknown escape `\\x`; {known}"), span: span(1, 3) });
    assert_eq!(lex_err("\"\\é\"").span, span(1, 4));
    // Bad unicode escapes: no braces, empty, not hex, a surrogate, above U+10FFFF, unclosed.
    for src in [r#""\u41""#, r#""\u{}""#, r#""\u{zz}""#, r#""\u{D800}""#, r#""\u{110000}""#, r#""x\u{41"#] {
        let e = lex_err(src);
        assert_eq!(e.message, r"bad unicode escape; write `\u{hex}`", "{src:?}");
        let at = src.find('\\').unwrap() as u32;
        assert_eq!(e.span, span(at, at + 2), "{src:?}");
    }
}

#[test]
fn bool_and_none_literals_and_unexpected_characters() {
    assert_eq!(
        lex("true false none").unwrap(),
        vec![(0, Tok::True, 4), (5, Tok::False, 10), (11, Tok::None, 15), (15, Tok::Semi, 15)]
    );
    assert_eq!(lex_err("x = 5 $ 3"), LexError { message: "unexpected character '$'".into(), span: span(6, 7) });
    assert_eq!(lex_err("#"), LexError { message: "unexpected character '#'".into(), span: span(0, 1) });
    // A non-ASCII character outside a string: its whole UTF-8 encoding.
    assert_eq!(lex_err("a é"), LexError { message: "unexpected character 'é'".into(), span: span(2, 4) });
    assert_eq!(lex_err("x…").span, span(1, 4));
}

// ---------------------------------------------------------------------------------------------
// Keywords, contextual tokens, punctuation.

#[test]
fn keywords_are_whole_words_and_key_is_not_one() {
    let words = "class fn table route let var if else while for in break continue return true false none as inout db";
    assert_eq!(
        kinds(words),
        vec![
            Tok::Class,
            Tok::Fn,
            Tok::Table,
            Tok::Route,
            Tok::Let,
            Tok::Var,
            Tok::If,
            Tok::Else,
            Tok::While,
            Tok::For,
            Tok::In,
            Tok::Break,
            Tok::Continue,
            Tok::Return,
            Tok::True,
            Tok::False,
            Tok::None,
            Tok::As,
            Tok::Inout,
            Tok::Db,
        ]
    );
    // `key` (of `table … key id`), route methods, `body` and builtin names are plain names;
    // prefixes, suffixes and other cases of keywords are names too.
    for word in ["key", "GET", "body", "print", "i32", "String", "iff", "classy", "_if", "If", "DB", "none2"] {
        assert_eq!(kinds(word), vec![id(word), Tok::Semi], "{word:?}");
    }
}

#[test]
fn type_argument_angle_brackets_only_follow_db_dot_name() {
    assert_eq!(
        lex("db.query<User>(q) > 2").unwrap(),
        vec![
            (0, Tok::Db, 2),
            (2, Tok::Dot, 3),
            (3, id("query"), 8),
            (8, Tok::TypeArgsOpen, 9),
            (9, id("User"), 13),
            (13, Tok::TypeArgsClose, 14),
            (14, Tok::LParen, 15),
            (15, id("q"), 16),
            (16, Tok::RParen, 17),
            (18, Tok::Gt, 19),
            (20, Tok::Int(2), 21),
            (21, Tok::Semi, 21),
        ]
    );
    assert_eq!(
        kinds("db.query_one<[User]?>()"),
        vec![
            Tok::Db,
            Tok::Dot,
            id("query_one"),
            Tok::TypeArgsOpen,
            Tok::LBracket,
            id("User"),
            Tok::RBracket,
            Tok::Question,
            Tok::TypeArgsClose,
            Tok::LParen,
            Tok::RParen,
            Tok::Semi,
        ]
    );
    // Not after `db`: ordinary comparisons.
    assert_eq!(
        kinds("a.query<b>(c)"),
        vec![id("a"), Tok::Dot, id("query"), Tok::Lt, id("b"), Tok::Gt, Tok::LParen, id("c"), Tok::RParen, Tok::Semi]
    );
}

#[test]
fn every_operator_and_punctuation_token_with_maximal_munch() {
    let src = "+ - * / % & | ^ << >> ! && || == != < <= > >= = += -= *= /= %= -> ? : , ; . .. ( ) [ ] { }";
    assert_eq!(
        kinds(src),
        vec![
            Tok::Plus,
            Tok::Minus,
            Tok::Star,
            Tok::Slash,
            Tok::Percent,
            Tok::Amp,
            Tok::Pipe,
            Tok::Caret,
            Tok::Shl,
            Tok::Shr,
            Tok::Bang,
            Tok::AndAnd,
            Tok::OrOr,
            Tok::EqEq,
            Tok::NotEq,
            Tok::Lt,
            Tok::Le,
            Tok::Gt,
            Tok::Ge,
            Tok::Assign,
            Tok::PlusAssign,
            Tok::MinusAssign,
            Tok::StarAssign,
            Tok::SlashAssign,
            Tok::PercentAssign,
            Tok::Arrow,
            Tok::Question,
            Tok::Colon,
            Tok::Comma,
            Tok::Semi,
            Tok::Dot,
            Tok::DotDot,
            Tok::LParen,
            Tok::RParen,
            Tok::LBracket,
            Tok::RBracket,
            Tok::LBrace,
            Tok::RBrace,
            Tok::Semi,
        ]
    );
    // No `<<=`, `>>=`, `^=`, `...`, `===`: they split into the longest tokens that exist.
    assert_eq!(kinds("<<="), vec![Tok::Shl, Tok::Assign]);
    assert_eq!(kinds(">>="), vec![Tok::Shr, Tok::Assign]);
    assert_eq!(kinds("^="), vec![Tok::Caret, Tok::Assign]);
    assert_eq!(kinds("..."), vec![Tok::DotDot, Tok::Dot]);
    assert_eq!(kinds("==="), vec![Tok::EqEq, Tok::Assign]);
    assert_eq!(kinds("a<-b"), vec![id("a"), Tok::Lt, Tok::Minus, id("b"), Tok::Semi]);
    assert_eq!(kinds("a--b"), vec![id("a"), Tok::Minus, Tok::Minus, id("b"), Tok::Semi]);
}

#[test]
fn token_spans_are_byte_offsets() {
    let src = "let café_x = f(1)\n";
    // `café_x` is not a name (names are ASCII): it stops at the `é`.
    assert_eq!(lex_err(src), LexError { message: "unexpected character 'é'".into(), span: span(7, 9) });
    let src = "  let total = a +\tb // sum\n";
    assert_eq!(
        lex(src).unwrap(),
        vec![
            (2, Tok::Let, 5),
            (6, id("total"), 11),
            (12, Tok::Assign, 13),
            (14, id("a"), 15),
            (16, Tok::Plus, 17),
            (18, id("b"), 19),
            (26, Tok::Semi, 26),
        ]
    );
    // After a multi-byte string, offsets are still bytes.
    assert_eq!(lex("\"✓\" y").unwrap()[1], (6, id("y"), 7));
}

#[test]
fn tokens_describe_themselves_for_error_messages() {
    assert_eq!(id("x").describe(), "`x`");
    assert_eq!(Tok::Int(7).describe(), "`7`");
    assert_eq!(Tok::Float(1.0).describe(), "`1.0`");
    assert_eq!(Tok::Str("anything".into()).describe(), "a string literal");
    assert_eq!(Tok::Semi.describe(), "end of statement");
    assert_eq!(Tok::LitBrace.describe(), "`{`");
    assert_eq!(Tok::TypeArgsOpen.describe(), "`<`");
    assert_eq!(Tok::TypeArgsClose.describe(), "`>`");
    assert_eq!(Tok::Inout.describe(), "`inout`");
    assert_eq!(Tok::PercentAssign.describe(), "`%=`");
}
