//! A small document algebra in the style of Wadler's "prettier printer" and Lindig's strict
//! variant: text, line breaks that are a space (or nothing) when their group fits on the line,
//! nesting, and groups; the printer lays a document out within a line width, breaking the
//! outermost groups first.

/// A document: what to print and where it may break.
#[derive(Clone, Debug)]
pub enum Doc {
    /// Nothing.
    Nil,
    /// Text without a line break.
    Text(String),
    /// A space, or a line break when the enclosing group does not fit.
    Line,
    /// Nothing, or a line break when the enclosing group does not fit.
    SoftLine,
    /// Always a line break; a group holding one never fits on one line.
    HardLine,
    /// A line break without the indentation (a blank line's), always.
    BlankLine,
    /// The document with its line breaks indented by that many more columns.
    Nest(usize, Box<Doc>),
    /// A unit that is laid out flat when it fits, else with its own line breaks broken.
    Group(Box<Doc>),
    /// The documents one after another.
    Concat(Vec<Doc>),
    /// The first document when the enclosing group is broken, else the second (a trailing comma).
    IfBreak(Box<Doc>, Box<Doc>),
}

/// Text.
pub fn text(s: impl Into<String>) -> Doc {
    Doc::Text(s.into())
}

/// The documents one after another.
pub fn concat(docs: Vec<Doc>) -> Doc {
    Doc::Concat(docs)
}

/// A group.
pub fn group(doc: Doc) -> Doc {
    Doc::Group(Box::new(doc))
}

/// `doc` indented by `by` more columns after each of its line breaks.
pub fn nest(by: usize, doc: Doc) -> Doc {
    Doc::Nest(by, Box::new(doc))
}

/// `broken` when the enclosing group breaks, else `flat`.
pub fn if_break(broken: Doc, flat: Doc) -> Doc {
    Doc::IfBreak(Box::new(broken), Box::new(flat))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Flat,
    Break,
}

/// Lays `doc` out within `width` columns.
pub fn render(doc: &Doc, width: usize) -> String {
    let mut out = String::new();
    let mut column = 0usize;
    let mut stack: Vec<(usize, Mode, &Doc)> = vec![(0, Mode::Break, doc)];
    while let Some((indent, mode, doc)) = stack.pop() {
        match doc {
            Doc::Nil => {}
            Doc::Text(s) => {
                out.push_str(s);
                column += s.chars().count();
            }
            Doc::Line | Doc::SoftLine if mode == Mode::Flat => {
                if matches!(doc, Doc::Line) {
                    out.push(' ');
                    column += 1;
                }
            }
            Doc::Line | Doc::SoftLine | Doc::HardLine => {
                newline(&mut out, indent);
                column = indent;
            }
            Doc::BlankLine => {
                trim_end(&mut out);
                out.push('\n');
            }
            Doc::Nest(by, inner) => stack.push((indent + by, mode, inner)),
            Doc::Group(inner) => {
                let flat = mode == Mode::Flat || fits(width.saturating_sub(column), inner, &stack);
                stack.push((indent, if flat { Mode::Flat } else { Mode::Break }, inner));
            }
            Doc::Concat(docs) => stack.extend(docs.iter().rev().map(|d| (indent, mode, d))),
            Doc::IfBreak(broken, flat) => stack.push((indent, mode, if mode == Mode::Break { broken } else { flat })),
        }
    }
    trim_end(&mut out);
    out.push('\n');
    out
}

fn newline(out: &mut String, indent: usize) {
    trim_end(out);
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', indent));
}

fn trim_end(out: &mut String) {
    while out.ends_with(' ') {
        out.pop();
    }
}

/// Whether `doc` laid flat, then what follows it up to the next line break, fits in `room`.
fn fits(room: usize, doc: &Doc, rest: &[(usize, Mode, &Doc)]) -> bool {
    let mut room = room as isize;
    let mut stack: Vec<(Mode, &Doc)> = vec![(Mode::Flat, doc)];
    let mut rest = rest.iter().rev();
    loop {
        let (mode, doc) = match stack.pop() {
            Some(next) => next,
            None => match rest.next() {
                Some((_, mode, doc)) => (*mode, *doc),
                None => return true,
            },
        };
        match doc {
            Doc::Nil => {}
            Doc::Text(s) => {
                room -= s.chars().count() as isize;
                if room < 0 {
                    return false;
                }
            }
            Doc::Line | Doc::SoftLine if mode == Mode::Flat => {
                if matches!(doc, Doc::Line) {
                    room -= 1;
                    if room < 0 {
                        return false;
                    }
                }
            }
            Doc::Line | Doc::SoftLine => return true,
            Doc::HardLine | Doc::BlankLine => return mode == Mode::Break,
            Doc::Nest(_, inner) => stack.push((mode, inner)),
            Doc::Group(inner) => stack.push((mode, inner)),
            Doc::Concat(docs) => stack.extend(docs.iter().rev().map(|d| (mode, d))),
            Doc::IfBreak(broken, flat) => stack.push((mode, if mode == Mode::Break { broken } else { flat })),
        }
    }
}
