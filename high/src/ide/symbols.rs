//! A file's outline (the editor's document symbols): its declarations, with classes' fields,
//! enums' variants and actors' handlers below them. From the file alone, so it works in a file
//! whose program does not check.

use nagi_syntax::ast::{Item, Span};

/// What a declaration is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Class,
    Enum,
    Function,
    Route,
    Table,
    Test,
    Actor,
    Queue,
    Supervisor,
    Config,
    Schedule,
    Field,
    Variant,
}

/// One entry of the outline. Spans are byte offsets into the file.
#[derive(Clone, Debug)]
pub struct Outline {
    pub name: String,
    pub kind: Kind,
    /// The whole declaration.
    pub span: Span,
    /// Its name (or the route's method and path).
    pub name_span: Span,
    pub children: Vec<Outline>,
}

fn leaf(name: &str, kind: Kind, span: Span, name_span: Span) -> Outline {
    Outline { name: name.to_string(), kind, span, name_span, children: Vec::new() }
}

/// The outline of `text`; empty when it does not parse.
pub fn outline(text: &str) -> Vec<Outline> {
    let Ok(file) = nagi_syntax::parse(text) else { return Vec::new() };
    file.items.iter().filter_map(item).collect()
}

fn item(item: &Item) -> Option<Outline> {
    Some(match item {
        Item::Class(d) => {
            let mut o = leaf(&d.name.name, Kind::Class, d.span, d.name.span);
            o.children = d.fields.iter().map(|f| leaf(&f.name.name, Kind::Field, f.name.span, f.name.span)).collect();
            o
        }
        Item::Enum(d) => {
            let mut o = leaf(&d.name.name, Kind::Enum, d.span, d.name.span);
            o.children =
                d.variants.iter().map(|v| leaf(&v.name.name, Kind::Variant, v.name.span, v.name.span)).collect();
            o
        }
        Item::Function(d) => leaf(&d.name.name, Kind::Function, d.span, d.name.span),
        Item::Route(d) => {
            let name = format!("{} {}", d.method.name, d.path.value);
            leaf(&name, Kind::Route, d.span, Span { start: d.method.span.start, end: d.path.span.end })
        }
        Item::Table(d) => leaf(&d.name.name, Kind::Table, d.span, d.name.span),
        Item::Test(d) => leaf(&d.name.value, Kind::Test, d.span, d.name.span),
        Item::Actor(d) => {
            let mut o = leaf(&d.name.name, Kind::Actor, d.span, d.name.span);
            o.children = d.fields.iter().map(|f| leaf(&f.name.name, Kind::Field, f.name.span, f.name.span)).collect();
            o.children.extend(d.handlers.iter().map(|h| leaf(&h.name.name, Kind::Function, h.span, h.name.span)));
            o
        }
        Item::Queue(d) => {
            let mut o = leaf(&d.name.name, Kind::Queue, d.span, d.name.span);
            o.children.push(leaf(&d.handler.name.name, Kind::Function, d.handler.span, d.handler.name.span));
            o
        }
        Item::Supervisor(d) => leaf(&d.name.name, Kind::Supervisor, d.span, d.name.span),
        Item::Config(d) => {
            let mut o = leaf(&d.name.name, Kind::Config, d.span, d.name.span);
            o.children = d.fields.iter().map(|f| leaf(&f.name.name, Kind::Field, f.span, f.name.span)).collect();
            o
        }
        Item::Schedule(d) => leaf(&d.func.name, Kind::Schedule, d.span, d.func.span),
        Item::Import(_) => return None,
    })
}
