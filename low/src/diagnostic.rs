//! Diagnostics shared by the Low parser and verifier, and their rendering.
//!
//! A diagnostic renders as one `file:line:col: error[CODE]: message` line (so editors and
//! `grep` find it) followed by a source snippet with a caret, drawn by `codespan-reporting`.
//! Diagnostics without a span (a module built in memory) render as `file: error[CODE]: …`.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config, DisplayStyle};

use crate::source::{Span, line_col};

/// One error found in Low.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// A stable code: `L1xx` for text-format errors, `V2xx` for verifier errors.
    pub code: &'static str,
    /// What is wrong, in one line.
    pub message: String,
    /// Where, when the module came from text.
    pub span: Option<Span>,
    /// The text under the caret: what was found, or which function and operation.
    pub label: Option<String>,
    /// Further explanation, one line each.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic with a code and message and nothing else.
    pub fn new(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic { code, message: message.into(), span: None, label: None, notes: Vec::new() }
    }

    /// Adds a span.
    pub fn at(mut self, span: Option<Span>) -> Diagnostic {
        self.span = span;
        self
    }

    /// Adds the caret label.
    pub fn label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    /// Adds a note line.
    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Renders the diagnostic against the text it refers to, without colour.
    pub fn render(&self, file_name: &str, source: &str) -> String {
        let Some(span) = self.span else {
            let mut out = format!("{file_name}: error[{}]: {}\n", self.code, self.message);
            for note in &self.notes {
                out.push_str(&format!("  = {note}\n"));
            }
            return out;
        };
        let (line, col) = line_col(source, span.start);
        let mut out = format!("{file_name}:{line}:{col}: error[{}]: {}\n", self.code, self.message);
        let file = SimpleFile::new(file_name, source);
        let start = (span.start as usize).min(source.len());
        let end = (span.end as usize).clamp(start, source.len());
        let mut label = Label::primary((), start..end);
        if let Some(text) = &self.label {
            label = label.with_message(text);
        }
        let diagnostic = CsDiagnostic::error()
            .with_code(self.code)
            .with_message(&self.message)
            .with_labels(vec![label])
            .with_notes(self.notes.clone());
        let config = Config { display_style: DisplayStyle::Rich, ..Config::default() };
        match term::emit_into_string(&config, &file, &diagnostic) {
            // The rich rendering starts with its own `error[CODE]: message` header, which the
            // first line above already says with the position; keep only the snippet.
            Ok(rich) => out.extend(rich.lines().skip(1).map(|l| format!("{}\n", l.trim_end()))),
            Err(_) => out.extend(self.notes.iter().map(|n| format!("  = {n}\n"))),
        }
        out
    }
}

/// Renders every diagnostic, in order, separated by blank lines as the snippets already end.
pub fn render_all(diagnostics: &[Diagnostic], file_name: &str, source: &str) -> String {
    diagnostics.iter().map(|d| d.render(file_name, source)).collect()
}
