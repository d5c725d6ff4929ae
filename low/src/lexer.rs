//! The Low lexer: text → tokens with byte spans.
//!
//! Low is line-oriented (one operation per line, as in Cranelift's CLIF), so line ends are
//! tokens. Sigils make every name's kind visible: `%local`, `$function`, `@label`. Constants
//! carry a type suffix (`5_i64`, `0.5_f64`, `NaN_f64`). `//` starts a comment that runs to the
//! end of the line; comments are tokens too, so the parser can keep them.

use crate::diagnostic::Diagnostic;
use crate::source::Span;

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// A bare word: keyword, mnemonic (`add.i64`, `field.get`), runtime function name
    /// (`db.query_one`), type or class name, field name, `true`/`false`/`unit`, `NaN_f64`.
    Ident(String),
    /// `%name`.
    Local(String),
    /// `$name`.
    Function(String),
    /// `@name`.
    Label(String),
    /// A number with its suffix, as written (`-5_i64`, `1e21_f64`); the parser splits it.
    Number(String),
    /// A string literal, unescaped.
    Str(String),
    /// `// text`: the text after `//`.
    Comment(String),
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Lt,
    Gt,
    Comma,
    Colon,
    Equals,
    Amp,
    /// `..`
    DotDot,
    /// `->`
    Arrow,
    Newline,
    Eof,
}

impl TokenKind {
    /// How the token reads in "found …" messages.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Ident(s) => format!("`{s}`"),
            TokenKind::Local(s) => format!("`%{s}`"),
            TokenKind::Function(s) => format!("`${s}`"),
            TokenKind::Label(s) => format!("`@{s}`"),
            TokenKind::Number(s) => format!("`{s}`"),
            TokenKind::Str(_) => "a string literal".into(),
            TokenKind::Comment(_) => "a comment".into(),
            TokenKind::LBrace => "`{`".into(),
            TokenKind::RBrace => "`}`".into(),
            TokenKind::LParen => "`(`".into(),
            TokenKind::RParen => "`)`".into(),
            TokenKind::LBracket => "`[`".into(),
            TokenKind::RBracket => "`]`".into(),
            TokenKind::Lt => "`<`".into(),
            TokenKind::Gt => "`>`".into(),
            TokenKind::Comma => "`,`".into(),
            TokenKind::Colon => "`:`".into(),
            TokenKind::Equals => "`=`".into(),
            TokenKind::Amp => "`&`".into(),
            TokenKind::DotDot => "`..`".into(),
            TokenKind::Arrow => "`->`".into(),
            TokenKind::Newline => "end of line".into(),
            TokenKind::Eof => "end of file".into(),
        }
    }
}

/// A token and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Splits `text[start..]` into tokens. The version line is checked by the parser before this
/// runs, so `start` is the offset just after it.
///
/// Errors: an unterminated string, an unknown escape, or a character that starts no token
/// (each with code `L101`–`L103` and its span).
pub fn lex(text: &str, start: usize) -> Result<Vec<Token>, Diagnostic> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = start;
    while i < text.len() {
        let c = text[i..].chars().next().unwrap_or('\0');
        let begin = i;
        let single = |kind: TokenKind| Token { kind, span: Span::new(begin, begin + 1) };
        match c {
            '\n' => {
                tokens.push(single(TokenKind::Newline));
                i += 1;
            }
            ' ' | '\t' | '\r' => i += 1,
            '/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
                let body = text[i + 2..end].trim_end_matches('\r').to_string();
                tokens.push(Token { kind: TokenKind::Comment(body), span: Span::new(i, end) });
                i = end;
            }
            '{' => push_one(&mut tokens, &mut i, TokenKind::LBrace),
            '}' => push_one(&mut tokens, &mut i, TokenKind::RBrace),
            '(' => push_one(&mut tokens, &mut i, TokenKind::LParen),
            ')' => push_one(&mut tokens, &mut i, TokenKind::RParen),
            '[' => push_one(&mut tokens, &mut i, TokenKind::LBracket),
            ']' => push_one(&mut tokens, &mut i, TokenKind::RBracket),
            '<' => push_one(&mut tokens, &mut i, TokenKind::Lt),
            '>' => push_one(&mut tokens, &mut i, TokenKind::Gt),
            ',' => push_one(&mut tokens, &mut i, TokenKind::Comma),
            ':' => push_one(&mut tokens, &mut i, TokenKind::Colon),
            '=' => push_one(&mut tokens, &mut i, TokenKind::Equals),
            '&' => push_one(&mut tokens, &mut i, TokenKind::Amp),
            '.' if bytes.get(i + 1) == Some(&b'.') => {
                tokens.push(Token { kind: TokenKind::DotDot, span: Span::new(i, i + 2) });
                i += 2;
            }
            '-' if bytes.get(i + 1) == Some(&b'>') => {
                tokens.push(Token { kind: TokenKind::Arrow, span: Span::new(i, i + 2) });
                i += 2;
            }
            '-' if bytes.get(i + 1).is_some_and(|b| b.is_ascii_alphanumeric()) => {
                let end = number_end(text, i + 1);
                tokens.push(Token { kind: TokenKind::Number(text[i..end].to_string()), span: Span::new(i, end) });
                i = end;
            }
            '0'..='9' => {
                let end = number_end(text, i);
                tokens.push(Token { kind: TokenKind::Number(text[i..end].to_string()), span: Span::new(i, end) });
                i = end;
            }
            '%' | '$' | '@' => {
                // Function names may be qualified (`$billing.invoices.total`, a module's item).
                let end = name_end(text, i + 1, c == '$');
                if end == i + 1 {
                    return Err(Diagnostic::new("L103", format!("expected a name after `{c}`"))
                        .at(Some(Span::new(i, i + 1)))
                        .label("a sigil must be followed by a name"));
                }
                let name = text[i + 1..end].to_string();
                let kind = match c {
                    '%' => TokenKind::Local(name),
                    '$' => TokenKind::Function(name),
                    _ => TokenKind::Label(name),
                };
                tokens.push(Token { kind, span: Span::new(i, end) });
                i = end;
            }
            '"' => {
                let (value, end) = lex_string(text, i)?;
                tokens.push(Token { kind: TokenKind::Str(value), span: Span::new(i, end) });
                i = end;
            }
            c if is_name_start(c) => {
                let end = name_end(text, i, true);
                tokens.push(Token { kind: TokenKind::Ident(text[i..end].to_string()), span: Span::new(i, end) });
                i = end;
            }
            other => {
                return Err(Diagnostic::new("L103", format!("unexpected character {other:?}"))
                    .at(Some(Span::new(i, i + other.len_utf8())))
                    .label("no Low token starts with this character"));
            }
        }
    }
    tokens.push(Token { kind: TokenKind::Eof, span: Span::new(text.len(), text.len()) });
    Ok(tokens)
}

fn push_one(tokens: &mut Vec<Token>, i: &mut usize, kind: TokenKind) {
    tokens.push(Token { kind, span: Span::new(*i, *i + 1) });
    *i += 1;
}

/// The end of a name starting at `i`. Bare words may contain dots between name characters
/// (`field.get`, `db.query_one`); sigil names may not.
fn name_end(text: &str, mut i: usize, dotted: bool) -> usize {
    let bytes = text.as_bytes();
    while i < bytes.len() {
        let c = bytes[i] as char;
        if is_name_char(c) || (dotted && c == '.' && bytes.get(i + 1).is_some_and(|b| is_name_char(*b as char))) {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The end of a number starting at `i` (after any sign): digits, letters and `_` (suffix,
/// exponent, `inf`, `NaN`), a `.` followed by a digit, and a sign right after an exponent `e`.
fn number_end(text: &str, mut i: usize) -> usize {
    let bytes = text.as_bytes();
    while i < bytes.len() {
        let c = bytes[i];
        let next_is_digit = bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        let after_exponent = i > 0 && matches!(bytes[i - 1], b'e' | b'E') && bytes[i - 1].is_ascii_alphabetic();
        if c.is_ascii_alphanumeric()
            || c == b'_'
            || (c == b'.' && next_is_digit)
            || (matches!(c, b'+' | b'-') && after_exponent && next_is_digit)
        {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// Reads the string literal starting at the `"` at `start`; returns its value and the offset
/// after the closing quote. Escapes: `\\ \" \n \r \t \0 \u{hex}`.
fn lex_string(text: &str, start: usize) -> Result<(String, usize), Diagnostic> {
    let mut value = String::new();
    let mut chars = text[start + 1..].char_indices().map(|(o, c)| (o + start + 1, c));
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Ok((value, at + 1)),
            '\n' => break,
            '\\' => {
                let bad = |at: usize, len: usize| {
                    Diagnostic::new("L102", "unknown escape in string literal")
                        .at(Some(Span::new(at, at + len)))
                        .label("expected one of \\\\ \\\" \\n \\r \\t \\0 \\u{…}")
                };
                let Some((eat, e)) = chars.next() else { break };
                match e {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    'r' => value.push('\r'),
                    't' => value.push('\t'),
                    '0' => value.push('\0'),
                    'u' => {
                        let rest = &text[eat + 1..];
                        let close = rest.find('}').filter(|_| rest.starts_with('{'));
                        let Some(close) = close else { return Err(bad(at, 2)) };
                        let hex = &rest[1..close];
                        let ch = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
                        let Some(ch) = ch else { return Err(bad(at, close + 3)) };
                        value.push(ch);
                        // Skip `{hex}`.
                        for _ in 0..rest[..=close].chars().count() {
                            chars.next();
                        }
                    }
                    _ => return Err(bad(at, 1 + e.len_utf8())),
                }
            }
            c => value.push(c),
        }
    }
    let line_end = text[start..].find('\n').map_or(text.len(), |n| start + n);
    Err(Diagnostic::new("L101", "unterminated string literal")
        .at(Some(Span::new(start, line_end)))
        .label("this string has no closing `\"` on its line"))
}
