//! The High Nagi lexer: source text → tokens for the lalrpop grammar.
//!
//! Statements end at a line break, as in Go and Swift: the lexer inserts a `;` token at a line
//! break when the last token can end a statement (a name, a literal, `)`, `]`, `}`, `?`,
//! `return`, `break`, `continue`) and the break is not inside `(…)`, `[…]` or a class
//! literal's braces. Explicit `;` is also accepted. Two contextual decisions are made here so
//! the grammar stays LR(1): a `{` that opens a class literal (`Name {` followed by `}` or by
//! `field:`, with `Name` capitalised) is its own token, and the `<`…`>` of `db.query<T>` are
//! their own tokens.

use crate::ast::Span;

/// A High Nagi token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(u64),
    Float(f64),
    /// A duration written `1500us`, `250ms`, `5s`, `2m`, `1h` or `1d`, in microseconds.
    Duration(u64),
    Str(String),
    /// The text before the first hole of an interpolated string (`"post {` of
    /// `"post {id} of {n}"`).
    StrStart(String),
    /// The text between two holes (`} of {`).
    StrMid(String),
    /// The text after the last hole, with the closing quote (`}"`).
    StrEnd(String),
    // Keywords.
    Class,
    Enum,
    Match,
    Try,
    Catch,
    Scope,
    Spawn,
    SpawnBlocking,
    Actor,
    Send,
    Supervisor,
    Defer,
    Import,
    Pub,
    Fn,
    Table,
    Route,
    Let,
    Var,
    If,
    Else,
    While,
    For,
    In,
    Break,
    Continue,
    Return,
    True,
    False,
    None,
    As,
    Inout,
    Db,
    Http,
    // Punctuation.
    LBrace,
    /// The `{` of a class literal.
    LitBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Colon,
    Semi,
    Dot,
    DotDot,
    Arrow,
    /// `=>`, between a `match` arm's patterns and its block.
    FatArrow,
    Question,
    Assign,
    PlusAssign,
    MinusAssign,
    StarAssign,
    SlashAssign,
    PercentAssign,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    Pipe,
    Caret,
    Shl,
    Shr,
    AndAnd,
    OrOr,
    Bang,
    /// The `<` of `db.query<T>` and `Map<K, V>`.
    TypeArgsOpen,
    /// The `>` of `db.query<T>` and `Map<K, V>`.
    TypeArgsClose,
}

impl Tok {
    /// How the token reads in "found …" messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Float(v) => format!("`{v:?}`"),
            Tok::Duration(_) => "a duration literal".into(),
            Tok::Str(_) => "a string literal".into(),
            Tok::StrStart(_) | Tok::StrMid(_) | Tok::StrEnd(_) => "an interpolated string".into(),
            Tok::Semi => "end of statement".into(),
            other => format!("`{}`", other.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
        match self {
            Tok::Class => "class",
            Tok::Enum => "enum",
            Tok::Match => "match",
            Tok::Try => "try",
            Tok::Catch => "catch",
            Tok::Scope => "scope",
            Tok::Spawn => "spawn",
            Tok::SpawnBlocking => "spawn_blocking",
            Tok::Actor => "actor",
            Tok::Send => "send",
            Tok::Defer => "defer",
            Tok::Supervisor => "supervisor",
            Tok::Import => "import",
            Tok::Pub => "pub",
            Tok::Fn => "fn",
            Tok::Table => "table",
            Tok::Route => "route",
            Tok::Let => "let",
            Tok::Var => "var",
            Tok::If => "if",
            Tok::Else => "else",
            Tok::While => "while",
            Tok::For => "for",
            Tok::In => "in",
            Tok::Break => "break",
            Tok::Continue => "continue",
            Tok::Return => "return",
            Tok::True => "true",
            Tok::False => "false",
            Tok::None => "none",
            Tok::As => "as",
            Tok::Inout => "inout",
            Tok::Db => "db",
            Tok::Http => "http",
            Tok::LBrace | Tok::LitBrace => "{",
            Tok::RBrace => "}",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Semi => ";",
            Tok::Dot => ".",
            Tok::DotDot => "..",
            Tok::Arrow => "->",
            Tok::FatArrow => "=>",
            Tok::Question => "?",
            Tok::Assign => "=",
            Tok::PlusAssign => "+=",
            Tok::MinusAssign => "-=",
            Tok::StarAssign => "*=",
            Tok::SlashAssign => "/=",
            Tok::PercentAssign => "%=",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt | Tok::TypeArgsOpen => "<",
            Tok::Le => "<=",
            Tok::Gt | Tok::TypeArgsClose => ">",
            Tok::Ge => ">=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Amp => "&",
            Tok::Pipe => "|",
            Tok::Caret => "^",
            Tok::Shl => "<<",
            Tok::Shr => ">>",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Bang => "!",
            Tok::Ident(_)
            | Tok::Int(_)
            | Tok::Float(_)
            | Tok::Duration(_)
            | Tok::Str(_)
            | Tok::StrStart(_)
            | Tok::StrMid(_)
            | Tok::StrEnd(_) => "",
        }
    }

    /// Whether a line break after this token ends the statement.
    fn ends_statement(&self) -> bool {
        matches!(
            self,
            Tok::Ident(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::Duration(_)
                | Tok::Str(_)
                | Tok::StrEnd(_)
                | Tok::True
                | Tok::False
                | Tok::None
                | Tok::RParen
                | Tok::RBracket
                | Tok::RBrace
                | Tok::Question
                | Tok::TypeArgsClose
                | Tok::Return
                | Tok::Break
                | Tok::Continue
        )
    }
}

/// A lexical error: what is wrong and where.
#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    pub message: String,
    pub span: Span,
}

/// A token with its byte offsets, as lalrpop's external-lexer interface wants.
pub type Spanned = (usize, Tok, usize);

#[derive(Clone, Copy, PartialEq)]
enum Bracket {
    Paren,
    Square,
    Brace,
    ClassLit,
    /// The `{…}` of `import m.{a, b}`, a list, where line breaks end nothing.
    List,
}

fn keyword(word: &str) -> Option<Tok> {
    Some(match word {
        "class" => Tok::Class,
        "enum" => Tok::Enum,
        "match" => Tok::Match,
        "try" => Tok::Try,
        "catch" => Tok::Catch,
        "scope" => Tok::Scope,
        "spawn" => Tok::Spawn,
        "spawn_blocking" => Tok::SpawnBlocking,
        "actor" => Tok::Actor,
        "send" => Tok::Send,
        "defer" => Tok::Defer,
        "supervisor" => Tok::Supervisor,
        "import" => Tok::Import,
        "pub" => Tok::Pub,
        "fn" => Tok::Fn,
        "table" => Tok::Table,
        "route" => Tok::Route,
        "let" => Tok::Let,
        "var" => Tok::Var,
        "if" => Tok::If,
        "else" => Tok::Else,
        "while" => Tok::While,
        "for" => Tok::For,
        "in" => Tok::In,
        "break" => Tok::Break,
        "continue" => Tok::Continue,
        "return" => Tok::Return,
        "true" => Tok::True,
        "false" => Tok::False,
        "none" => Tok::None,
        "as" => Tok::As,
        "inout" => Tok::Inout,
        "db" => Tok::Db,
        "http" => Tok::Http,
        _ => return None,
    })
}

/// What stops a scan of a string or a hole: where, and why.
pub(crate) struct ScanError {
    /// The byte offset the error points at.
    pub(crate) at: usize,
    /// What is wrong, as the compiler says it.
    pub(crate) message: &'static str,
}

/// The offset just after the closing quote of the string literal whose `"` is at `open`,
/// following its holes, whose code may hold strings of their own to any depth. Errors: a line
/// break or the end of the text before the closing quote, or a hole's error ([`hole_end`]).
/// Bytes are enough: every character this looks for is ASCII.
pub(crate) fn string_end(bytes: &[u8], open: usize) -> Result<usize, ScanError> {
    let mut at = open + 1;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'"' => return Ok(at + 1),
            b'\n' => break,
            // An escape is two bytes; a backslash at the end of the line escapes nothing.
            b'\\' => at += if bytes.get(at + 1) == Some(&b'\n') { 1 } else { 2 },
            b'{' | b'}' if bytes.get(at + 1) == Some(&b) => at += 2,
            b'{' => at = hole_end(bytes, at)? + 1,
            _ => at += 1,
        }
    }
    Err(ScanError { at: open, message: UNTERMINATED })
}

/// The message of a string without its closing quote on its line.
const UNTERMINATED: &str = "unterminated string literal";

/// The offset of the `}` that closes the hole whose `{` is at `open`: braces nest, and a
/// string inside the hole is skipped whole ([`string_end`]). Errors: a line break or the end of
/// the text first, or a `//` in the hole's code (a comment would end at the line's end).
pub(crate) fn hole_end(bytes: &[u8], open: usize) -> Result<usize, ScanError> {
    let mut depth = 0_usize;
    let mut at = open + 1;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'\n' => break,
            // A string that does not end on the line more likely opened in a hole whose `}` is
            // missing (`"a {b"`) than inside a complete one: the hole is reported.
            b'"' => match string_end(bytes, at) {
                Ok(end) => {
                    at = end;
                    continue;
                }
                Err(e) if e.message == UNTERMINATED => break,
                Err(e) => return Err(e),
            },
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                return Err(ScanError { at, message: "a comment inside a string's `{…}`" });
            }
            b'{' => depth += 1,
            b'}' if depth == 0 => return Ok(at),
            b'}' => depth -= 1,
            _ => {}
        }
        at += 1;
    }
    Err(ScanError { at: open, message: "unclosed `{` in a string; write `{{` for a brace" })
}

/// Splits `text` into tokens, inserting statement-ending `;` tokens at line breaks.
///
/// Errors: an unterminated string, an unknown escape, an integer too large for 64 bits, or a
/// character that starts no token.
pub fn lex(text: &str) -> Result<Vec<Spanned>, LexError> {
    let mut lx = Lexer { text, bytes: text.as_bytes(), pos: 0, out: Vec::new(), brackets: Vec::new(), type_args: 0 };
    lx.run()?;
    Ok(lx.out)
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    out: Vec<Spanned>,
    brackets: Vec<Bracket>,
    /// How many type argument lists (`db.op<…>`, `Map<…>`) are open: while any is, a `>` closes
    /// the innermost.
    type_args: u32,
}

impl Lexer<'_> {
    fn err(&self, message: impl Into<String>, start: usize, end: usize) -> LexError {
        LexError { message: message.into(), span: Span::new(start, end) }
    }

    fn push(&mut self, tok: Tok, start: usize, end: usize) {
        self.out.push((start, tok, end));
        self.pos = end;
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn insert_semi(&mut self, at: usize) {
        let inside =
            matches!(self.brackets.last(), Some(Bracket::Paren | Bracket::Square | Bracket::ClassLit | Bracket::List));
        if !inside && self.out.last().is_some_and(|(_, t, _)| t.ends_statement()) {
            self.out.push((at, Tok::Semi, at));
        }
    }

    fn run(&mut self) -> Result<(), LexError> {
        while self.pos < self.bytes.len() {
            let start = self.pos;
            let c = self.text[start..].chars().next().unwrap_or('\0');
            match c {
                '\n' => {
                    // `}` on one line and `else` on the next still belong together.
                    let rest = skip_blank_and_comment_lines(&self.text[start..]);
                    let else_follows = rest
                        .strip_prefix("else")
                        .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'));
                    if !else_follows {
                        self.insert_semi(start);
                    }
                    self.pos += 1;
                }
                ' ' | '\t' | '\r' => self.pos += 1,
                '/' if self.peek_byte(1) == Some(b'/') => {
                    self.pos = self.text[start..].find('\n').map_or(self.bytes.len(), |n| start + n);
                }
                '"' => self.string(start)?,
                '0'..='9' => self.number(start)?,
                c if c.is_ascii_alphabetic() || c == '_' => self.word(start),
                _ => self.punct(start, c)?,
            }
        }
        self.insert_semi(self.bytes.len());
        Ok(())
    }

    fn word(&mut self, start: usize) {
        let mut end = start;
        while end < self.bytes.len() && (self.bytes[end].is_ascii_alphanumeric() || self.bytes[end] == b'_') {
            end += 1;
        }
        let word = &self.text[start..end];
        let tok = keyword(word).unwrap_or_else(|| Tok::Ident(word.to_string()));
        self.push(tok, start, end);
    }

    fn number(&mut self, start: usize) -> Result<(), LexError> {
        let digits_end = |mut i: usize, bytes: &[u8]| {
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
                i += 1;
            }
            i
        };
        let mut end = digits_end(start, self.bytes);
        let mut is_float = false;
        if self.bytes.get(end) == Some(&b'.') && self.bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
            is_float = true;
            end = digits_end(end + 1, self.bytes);
        }
        if matches!(self.bytes.get(end), Some(b'e' | b'E')) {
            let mut e = end + 1;
            if matches!(self.bytes.get(e), Some(b'+' | b'-')) {
                e += 1;
            }
            if self.bytes.get(e).is_some_and(u8::is_ascii_digit) {
                is_float = true;
                end = digits_end(e, self.bytes);
            }
        }
        // `1500us`, `250ms`, `5s`, `2m`, `1h` and `1d` are durations, in microseconds (`ms` is
        // tried before `m`).
        if !is_float {
            let units = [
                ("us", 1_u64),
                ("ms", 1_000),
                ("s", 1_000_000),
                ("m", 60_000_000),
                ("h", 3_600_000_000),
                ("d", 86_400_000_000),
            ];
            let unit = units.into_iter().find(|(unit, _)| {
                self.text[end..].starts_with(unit)
                    && !self.bytes.get(end + unit.len()).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
            });
            if let Some((unit, scale)) = unit {
                let clean: String = self.text[start..end].chars().filter(|c| *c != '_').collect();
                // At most an `i64` of microseconds, what a `Duration` holds.
                let value =
                    clean.parse::<u64>().ok().and_then(|v| v.checked_mul(scale)).filter(|v| i64::try_from(*v).is_ok());
                let value = value.ok_or_else(|| self.err("duration is too large", start, end + unit.len()))?;
                self.push(Tok::Duration(value), start, end + unit.len());
                return Ok(());
            }
        }
        if self.bytes.get(end).is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_') {
            let mut bad = end;
            while bad < self.bytes.len() && self.bytes[bad].is_ascii_alphanumeric() {
                bad += 1;
            }
            return Err(self.err("a number is directly followed by letters", start, bad));
        }
        let clean: String = self.text[start..end].chars().filter(|c| *c != '_').collect();
        let tok = if is_float {
            Tok::Float(clean.parse().map_err(|_| self.err("malformed float literal", start, end))?)
        } else {
            Tok::Int(clean.parse().map_err(|_| self.err("integer literal is too large for 64 bits", start, end))?)
        };
        self.push(tok, start, end);
        Ok(())
    }

    /// A string literal from its opening `"` at `start`. `{expr}` is a hole: the string becomes
    /// `StrStart`, the hole's tokens, then `StrMid` before each further hole and `StrEnd` after
    /// the last (`{{` and `}}` are braces). A route's path (the string after `route METHOD`) and
    /// a test's name (after `test`) are literal: the path's `{id}` names a path parameter.
    fn string(&mut self, start: usize) -> Result<(), LexError> {
        // A route's path names its parameters in braces, and a test's name is a name.
        let literal = match self.out.as_slice() {
            [.., (_, Tok::Route, _), (_, Tok::Ident(_), _)] => true,
            [.., (_, Tok::Ident(word), _)] => word == "test",
            _ => false,
        };
        let mut value = String::new();
        // Where the current segment's token starts (the opening quote, then each hole's `}`).
        let mut segment = start;
        let mut holes = 0;
        let mut at = start + 1;
        while let Some(c) = self.text[at..].chars().next() {
            let next = self.bytes.get(at + 1).copied();
            match c {
                '"' => {
                    let tok = if holes == 0 { Tok::Str(value) } else { Tok::StrEnd(value) };
                    self.push(tok, segment, at + 1);
                    return Ok(());
                }
                '\n' => break,
                '\\' => at = self.escape(at, &mut value)?,
                '{' | '}' if !literal && next == Some(c as u8) => {
                    value.push(c);
                    at += 2;
                }
                '}' if !literal => {
                    return Err(self.err("a lone `}` in a string; write `}}` for a brace", at, at + 1));
                }
                '{' if !literal => {
                    let close = self.hole_end(at)?;
                    let tok = if holes == 0 {
                        Tok::StrStart(std::mem::take(&mut value))
                    } else {
                        Tok::StrMid(std::mem::take(&mut value))
                    };
                    self.out.push((segment, tok, at + 1));
                    self.hole(at + 1, close)?;
                    holes += 1;
                    segment = close;
                    at = close + 1;
                }
                c => {
                    value.push(c);
                    at += c.len_utf8();
                }
            }
        }
        let end = self.text[start..].find('\n').map_or(self.bytes.len(), |n| start + n);
        Err(self.err("unterminated string literal", start, end))
    }

    /// The escape whose backslash is at `at`, appended to `value`; returns the offset after it.
    fn escape(&self, at: usize, value: &mut String) -> Result<usize, LexError> {
        let eat = at + 1;
        let Some(e) = self.text[eat..].chars().next().filter(|&e| e != '\n') else {
            return Ok(eat);
        };
        let simple = match e {
            '\\' => Some('\\'),
            '"' => Some('"'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            '0' => Some('\0'),
            _ => None,
        };
        if let Some(ch) = simple {
            value.push(ch);
            return Ok(eat + 1);
        }
        if e == 'u' {
            let rest = &self.text[eat + 1..];
            let close = rest.find('}').filter(|_| rest.starts_with('{'));
            // One to six hex digits and nothing else: `from_str_radix` alone would also take a
            // sign (`\u{+41}`) and any number of leading zeros.
            let digits = |c: usize| {
                let digits = &rest[1..c];
                (1..=6).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_hexdigit())
            };
            let ch = close
                .filter(|&c| digits(c))
                .and_then(|c| u32::from_str_radix(&rest[1..c], 16).ok())
                .and_then(char::from_u32);
            let (Some(close), Some(ch)) = (close, ch) else {
                return Err(self.err("bad unicode escape; write `\\u{hex}`", at, eat + 1));
            };
            value.push(ch);
            return Ok(eat + 1 + close + 1);
        }
        Err(self.err(
            format!("unknown escape `\\{e}`; known escapes are \\\\ \\\" \\n \\r \\t \\0 \\u{{…}}"),
            at,
            eat + e.len_utf8(),
        ))
    }

    /// The offset of the `}` that closes the hole opened by the `{` at `open` ([`hole_end`]).
    fn hole_end(&self, open: usize) -> Result<usize, LexError> {
        hole_end(self.bytes, open).map_err(|e| self.err(e.message, e.at, e.at + 1))
    }

    /// The tokens of the hole `text[from..to]`, an expression on one line.
    fn hole(&mut self, from: usize, to: usize) -> Result<(), LexError> {
        if self.text[from..to].trim().is_empty() {
            return Err(self.err("an empty `{}` in a string; write `{{}}` for braces", from - 1, to + 1));
        }
        // Inside parentheses, as far as line breaks go: the hole ends no statement.
        let mut inner = Lexer {
            text: &self.text[..to],
            bytes: &self.bytes[..to],
            pos: from,
            out: Vec::new(),
            brackets: vec![Bracket::Paren],
            type_args: 0,
        };
        inner.run()?;
        self.out.append(&mut inner.out);
        Ok(())
    }

    /// Whether the `{` at `at` opens a class literal: the previous token is a capitalised
    /// name and the brace is followed by `}` or by `name:`.
    fn opens_class_literal(&self, at: usize) -> bool {
        let n = self.out.len();
        let Some((_, Tok::Ident(name), _)) = self.out.last() else { return false };
        // `class Name {`, `enum Name {` and `-> Name {` open a class body, an enum body and a
        // function body.
        if n >= 2 && matches!(self.out[n - 2].1, Tok::Class | Tok::Enum | Tok::Arrow) {
            return false;
        }
        // `config Name {` opens a configuration's body (two names in a row are no expression).
        if n >= 2 && matches!(&self.out[n - 2].1, Tok::Ident(word) if word == "config") {
            return false;
        }
        // `-> module.Name {` opens a function body too.
        if n >= 4 && self.out[n - 2].1 == Tok::Dot && self.out[n - 4].1 == Tok::Arrow {
            return false;
        }
        if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
            return false;
        }
        // Comment lines may come before the first field, as before an `else`.
        let rest = skip_blank_and_comment_lines(&self.text[at + 1..]);
        if rest.starts_with('}') {
            return true;
        }
        let name_len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        name_len > 0 && rest[name_len..].trim_start().starts_with(':')
    }

    fn punct(&mut self, start: usize, c: char) -> Result<(), LexError> {
        let next = self.peek_byte(1);
        let two = |t: Tok| (t, 2);
        let one = |t: Tok| (t, 1);
        let (tok, len) = match (c, next) {
            ('{', _) => {
                if self.opens_class_literal(start) {
                    self.brackets.push(Bracket::ClassLit);
                    one(Tok::LitBrace)
                } else if matches!(self.out.last(), Some((_, Tok::Dot, _))) {
                    self.brackets.push(Bracket::List);
                    one(Tok::LBrace)
                } else {
                    self.brackets.push(Bracket::Brace);
                    one(Tok::LBrace)
                }
            }
            ('}', _) => {
                // A line break before `}` ends the last statement of the block.
                if self.brackets.last() == Some(&Bracket::Brace) {
                    self.insert_semi(start);
                }
                self.brackets.pop();
                one(Tok::RBrace)
            }
            ('(', _) => {
                self.brackets.push(Bracket::Paren);
                one(Tok::LParen)
            }
            (')', _) => {
                self.brackets.pop();
                one(Tok::RParen)
            }
            ('[', _) => {
                self.brackets.push(Bracket::Square);
                one(Tok::LBracket)
            }
            (']', _) => {
                self.brackets.pop();
                one(Tok::RBracket)
            }
            (',', _) => one(Tok::Comma),
            (':', _) => one(Tok::Colon),
            (';', _) => one(Tok::Semi),
            ('.', Some(b'.')) => two(Tok::DotDot),
            ('.', _) => one(Tok::Dot),
            ('?', _) => one(Tok::Question),
            ('-', Some(b'>')) => two(Tok::Arrow),
            ('=', Some(b'=')) => two(Tok::EqEq),
            ('=', Some(b'>')) => two(Tok::FatArrow),
            ('=', _) => one(Tok::Assign),
            ('+', Some(b'=')) => two(Tok::PlusAssign),
            ('-', Some(b'=')) => two(Tok::MinusAssign),
            ('*', Some(b'=')) => two(Tok::StarAssign),
            ('/', Some(b'=')) => two(Tok::SlashAssign),
            ('%', Some(b'=')) => two(Tok::PercentAssign),
            ('!', Some(b'=')) => two(Tok::NotEq),
            ('<', _) if self.after_db_op() || self.opens_type_args(start) => {
                self.type_args += 1;
                one(Tok::TypeArgsOpen)
            }
            ('>', _) if self.type_args > 0 => {
                self.type_args -= 1;
                one(Tok::TypeArgsClose)
            }
            ('<', Some(b'<')) => two(Tok::Shl),
            ('<', Some(b'=')) => two(Tok::Le),
            ('<', _) => one(Tok::Lt),
            ('>', Some(b'>')) => two(Tok::Shr),
            ('>', Some(b'=')) => two(Tok::Ge),
            ('>', _) => one(Tok::Gt),
            ('&', Some(b'&')) => two(Tok::AndAnd),
            ('&', _) => one(Tok::Amp),
            ('|', Some(b'|')) => two(Tok::OrOr),
            ('|', _) => one(Tok::Pipe),
            ('^', _) => one(Tok::Caret),
            ('+', _) => one(Tok::Plus),
            ('-', _) => one(Tok::Minus),
            ('*', _) => one(Tok::Star),
            ('/', _) => one(Tok::Slash),
            ('%', _) => one(Tok::Percent),
            ('!', _) => one(Tok::Bang),
            (other, _) => {
                return Err(self.err(format!("unexpected character {other:?}"), start, start + other.len_utf8()));
            }
        };
        self.push(tok, start, start + len);
        Ok(())
    }

    /// Whether the `<` at `at` opens type parameters or arguments rather than comparing: after
    /// the name of a declared function or class (`fn first<T>`, `class Page<T>`), after `Map`
    /// and `Result`, and after any other capitalised name when what follows reads as a list of
    /// types closed by its `>` (`Page<User>`, `Page<[Post]>`). A value compared with `<` is a
    /// lower-case name or an expression, so `a < b` is never read as types.
    fn opens_type_args(&self, at: usize) -> bool {
        let n = self.out.len();
        let Some((_, Tok::Ident(name), _)) = self.out.last() else { return false };
        if n >= 2 && matches!(self.out[n - 2].1, Tok::Fn | Tok::Class | Tok::Enum) {
            return true;
        }
        if name == "Map" || name == "Result" {
            return true;
        }
        name.starts_with(|c: char| c.is_ascii_uppercase()) && type_list_follows(&self.bytes[at + 1..])
    }

    /// Whether the last tokens are `db . name` or `http . name`, so a `<` opens type arguments.
    fn after_db_op(&self) -> bool {
        let n = self.out.len();
        n >= 3
            && matches!(self.out[n - 3].1, Tok::Db | Tok::Http)
            && matches!(self.out[n - 2].1, Tok::Dot)
            && matches!(self.out[n - 1].1, Tok::Ident(_))
    }
}

/// Whether `rest` (what follows a `<`) is a list of types closed by a matching `>`: names,
/// dots, commas, brackets, `?`, nested `<…>` and spaces only, on one line.
fn type_list_follows(rest: &[u8]) -> bool {
    let mut depth = 1;
    for &b in rest {
        match b {
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return true;
                }
            }
            b'_' | b'.' | b',' | b'[' | b']' | b'?' | b' ' => {}
            b if b.is_ascii_alphanumeric() => {}
            _ => return false,
        }
    }
    false
}

/// `text` after any whitespace and whole `//` comment lines at its start, so that an `else`
/// after comment lines still continues the `if` above them.
fn skip_blank_and_comment_lines(mut text: &str) -> &str {
    loop {
        text = text.trim_start();
        if text.starts_with("//") {
            text = text.find('\n').map_or("", |n| &text[n..]);
        } else {
            return text;
        }
    }
}
