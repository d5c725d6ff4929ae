//! `nagic fmt`: the one canonical layout of High Nagi, printed from the syntax tree and the
//! comments of the source (docs/language.md §2.8 describes the layout).
//!
//! The printer builds a document ([`doc`], Wadler/Lindig style) and lays it out within
//! [`WIDTH`] columns: a call's arguments, a class literal's fields, an array's items and a
//! parameter list stay on one line when they fit and go one per line (with a trailing comma)
//! when they do not; a long binary expression breaks after an operator. It only breaks where the
//! lexer continues a statement (docs/language.md §2.6): inside brackets and after an operator.
//!
//! What it keeps from the text: comments (each comment line before the item, statement, field,
//! variant or arm it precedes; a trailing comment after its line), one blank line where the
//! text had one or more, parentheses the text wrote (and those precedence needs), and every
//! literal as written (`1_000`, `250ms`, a string's escapes). The output parses to the same
//! tree, spans aside, so the program's Low is unchanged; formatting it again changes nothing.

mod comments;
pub mod doc;
mod exprs;
mod items;

use crate::SyntaxError;
use crate::ast::Span;
use comments::Comment;
use doc::{Doc, concat, text};

/// The line width the layout keeps within, where it can.
pub const WIDTH: usize = 100;

/// How many columns one level of nesting indents.
const INDENT: usize = 4;

/// `text` in the canonical layout. Errors: the text does not parse (it is then not touched).
pub fn format(source: &str) -> Result<String, SyntaxError> {
    let file = crate::parse(source)?;
    let mut printer = Printer { source, comments: comments::scan(source), next: 0 };
    let doc = printer.file(&file);
    let mut out = doc::render(&doc, WIDTH);
    if out.trim().is_empty() {
        out.clear();
    }
    Ok(out)
}

/// The printer's state: the text (for literals as written, parentheses and blank lines) and
/// the comments not printed yet.
struct Printer<'t> {
    source: &'t str,
    comments: Vec<Comment>,
    next: usize,
}

impl Printer<'_> {
    /// The text of `span`.
    fn slice(&self, span: Span) -> &str {
        self.source.get(span.start as usize..span.end as usize).unwrap_or("")
    }

    /// Whether the text between `from` and `to` holds a blank line (a line with nothing on it
    /// between two others).
    fn blank(&self, from: usize, to: usize) -> bool {
        let lines: Vec<&str> = self.source.get(from..to).unwrap_or("").split('\n').collect();
        lines.len() > 2 && lines[1..lines.len() - 1].iter().any(|l| l.trim().is_empty())
    }

    /// The comment lines before `limit` not printed yet, each after a line break (a blank line
    /// kept, or forced before the first when `force` is set), added to `parts`; `prev_end` is
    /// where the last thing printed ended. Returns whether it printed any.
    fn comment_lines(&mut self, limit: usize, parts: &mut Vec<Doc>, prev_end: &mut Option<usize>, force: bool) -> bool {
        let mut printed = false;
        while let Some(comment) = self.comments.get(self.next).filter(|c| c.start < limit) {
            let comment = comment.clone();
            self.next += 1;
            if let Some(end) = *prev_end {
                let blank = force && !printed;
                parts.push(if blank { blank_line() } else { self.separator(end, comment.start) });
            }
            parts.push(text(comment.text.clone()));
            *prev_end = Some(comment.start + comment.text.len());
            printed = true;
        }
        printed
    }

    /// A line break, or a blank line and a line break where the text had a blank line between
    /// `from` and `to`.
    fn separator(&self, from: usize, to: usize) -> Doc {
        if self.blank(from, to) { blank_line() } else { Doc::HardLine }
    }

    /// The comment after code on the line where `end` is, if it is next: ` // …`.
    fn trailing(&mut self, end: usize) -> Doc {
        match self.comments.get(self.next) {
            Some(c) if c.trailing && c.start >= end && !self.source[end..c.start].contains('\n') => {
                self.next += 1;
                text(format!(" {}", c.text))
            }
            _ => Doc::Nil,
        }
    }

    /// The lines of a body: each element (by its span) after the comments before it, one per
    /// line, blank lines kept, then the comments before `end`. `blank_between(i)` forces a blank
    /// line before element `i`. `None` for an empty body without comments.
    fn lines(
        &mut self,
        spans: &[Span],
        end: usize,
        blank_between: &dyn Fn(usize) -> bool,
        element: &mut dyn FnMut(&mut Self, usize) -> Doc,
    ) -> Option<Doc> {
        let mut parts = Vec::new();
        let mut prev_end: Option<usize> = None;
        for (i, span) in spans.iter().enumerate() {
            let start = span.start as usize;
            // A forced blank line goes before the comments above the element, which stay with it.
            let force = prev_end.is_some() && blank_between(i);
            let commented = self.comment_lines(start, &mut parts, &mut prev_end, force);
            if let Some(end) = prev_end {
                let blank = force && !commented;
                parts.push(if blank { blank_line() } else { self.separator(end, start) });
            }
            parts.push(element(self, i));
            let end = span.end as usize;
            parts.push(self.trailing(end));
            prev_end = Some(end);
        }
        self.comment_lines(end, &mut parts, &mut prev_end, false);
        (!parts.is_empty()).then(|| concat(parts))
    }

    /// `{`, the body's lines indented, `}`; `{}` when empty.
    fn braced(&mut self, spans: &[Span], end: usize, element: &mut dyn FnMut(&mut Self, usize) -> Doc) -> Doc {
        self.braced_with(spans, end, &|_| false, element)
    }

    /// [`Printer::braced`] with forced blank lines.
    fn braced_with(
        &mut self,
        spans: &[Span],
        end: usize,
        blank_between: &dyn Fn(usize) -> bool,
        element: &mut dyn FnMut(&mut Self, usize) -> Doc,
    ) -> Doc {
        match self.lines(spans, end, blank_between, element) {
            Some(body) => {
                concat(vec![text("{"), doc::nest(INDENT, concat(vec![Doc::HardLine, body])), Doc::HardLine, text("}")])
            }
            None => text("{}"),
        }
    }
}

/// A blank line, then a line break.
fn blank_line() -> Doc {
    concat(vec![Doc::BlankLine, Doc::HardLine])
}
