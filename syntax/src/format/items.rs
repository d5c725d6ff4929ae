//! The layout of declarations and statements: one per line, bodies in braces indented by four.

use super::doc::{Doc, concat, group, if_break, nest, text};
use super::{INDENT, Printer};
use crate::ast::*;

/// Whether an item is one line (an import, a table, a schedule): such neighbours need no blank
/// line between them.
fn one_line(item: &Item) -> bool {
    matches!(item, Item::Import(_) | Item::Table(_) | Item::Schedule(_))
}

/// Where an item starts and ends (a `pub` before it included).
fn item_span(item: &Item) -> Span {
    match item {
        Item::Class(d) => d.span,
        Item::Enum(d) => d.span,
        Item::Import(d) => d.span,
        Item::Test(d) => d.span,
        Item::Table(d) => d.span,
        Item::Route(d) => d.span,
        Item::Function(d) => d.span,
        Item::Actor(d) => d.span,
        Item::Supervisor(d) => d.span,
        Item::Queue(d) => d.span,
        Item::Config(d) => d.span,
        Item::Schedule(d) => d.span,
    }
}

impl Printer<'_> {
    /// The whole file: items separated by a blank line (neighbouring one-line items keep the
    /// text's choice).
    pub(super) fn file(&mut self, file: &SourceFile) -> Doc {
        let spans: Vec<Span> = file.items.iter().map(|item| self.with_pub(item_span(item))).collect();
        let items = &file.items;
        let blank = |i: usize| !(one_line(&items[i - 1]) && one_line(&items[i]));
        self.lines(&spans, self.source.len(), &blank, &mut |p, i| p.item(&items[i])).unwrap_or(Doc::Nil)
    }

    /// `span` widened to a `pub` written before it (the parser's spans start after it).
    fn with_pub(&self, span: Span) -> Span {
        let before = self.source[..span.start as usize].trim_end();
        match before.strip_suffix("pub") {
            Some(rest) if !rest.ends_with(|c: char| c.is_alphanumeric() || c == '_') => {
                Span { start: rest.len() as u32, end: span.end }
            }
            _ => span,
        }
    }

    fn item(&mut self, item: &Item) -> Doc {
        match item {
            Item::Class(d) => {
                let head = text(format!("{}class {}{} ", public(d.public), d.name.name, type_params(&d.type_params)));
                let spans: Vec<Span> = d.fields.iter().map(field_span).collect();
                let body = self.braced(&spans, d.span.end as usize - 1, &mut |p, i| p.field(&d.fields[i]));
                concat(vec![head, body])
            }
            Item::Enum(d) => {
                let head = text(format!("{}enum {}{} ", public(d.public), d.name.name, type_params(&d.type_params)));
                let spans: Vec<Span> = d.variants.iter().map(variant_span).collect();
                let body = self.braced(&spans, d.span.end as usize - 1, &mut |p, i| {
                    let v = &d.variants[i];
                    match &v.payload {
                        Some(ty) => concat(vec![text(format!("{}(", v.name.name)), p.ty(ty), text(")")]),
                        None => text(v.name.name.clone()),
                    }
                });
                concat(vec![head, body])
            }
            Item::Import(d) => {
                let path: Vec<&str> = d.path.iter().map(|s| s.name.as_str()).collect();
                let names = d.names.as_ref().map_or(String::new(), |names| {
                    format!(".{{{}}}", names.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(", "))
                });
                text(format!("import {}{names}", path.join("/")))
            }
            Item::Test(d) => {
                let head = text(format!("test {} ", self.slice(d.name.span)));
                concat(vec![head, self.block(&d.body)])
            }
            Item::Table(d) => text(format!("table {}: {} key {}", d.name.name, d.class.name, d.key.name)),
            Item::Route(d) => {
                let head = text(format!("route {} {} ", d.method.name, self.slice(d.path.span)));
                concat(vec![head, self.params(&d.params), self.ret(&d.ret), text(" "), self.block(&d.body)])
            }
            Item::Function(d) => self.function(d),
            Item::Actor(d) => self.actor(d),
            Item::Supervisor(d) => self.supervisor(d),
            Item::Queue(d) => self.queue(d),
            Item::Config(d) => {
                let spans: Vec<Span> = d.fields.iter().map(|f| f.span).collect();
                let body = self.braced(&spans, d.span.end as usize - 1, &mut |p, i| {
                    let f = &d.fields[i];
                    let secret = if f.secret { "secret " } else { "" };
                    let mut parts = vec![text(format!("{}: {secret}", f.name.name)), p.ty(&f.ty)];
                    if let Some(default) = &f.default {
                        parts.extend([text(" = "), p.expr(default, 0)]);
                    }
                    concat(parts)
                });
                concat(vec![text(format!("config {} ", d.name.name)), body])
            }
            Item::Schedule(d) => {
                // The literal as written: a cron string's spaces are its own.
                let (word, literal) = match &d.when {
                    ScheduleWhen::Every(_, span) => ("every", *span),
                    ScheduleWhen::At(_, span) => ("at", *span),
                };
                text(format!("schedule {} {word} {}", d.func.name, self.slice(literal)))
            }
        }
    }

    /// `[pub] fn name(params) [fails] [-> T] { body }`.
    fn function(&mut self, d: &FnDecl) -> Doc {
        let head = text(format!("{}fn {}{}", public(d.public), d.name.name, type_params(&d.type_params)));
        let fails = if d.fails { text(" fails") } else { Doc::Nil };
        concat(vec![head, self.params(&d.params), fails, self.ret(&d.ret), text(" "), self.block(&d.body)])
    }

    /// `(a: T, b: U = 1)`, one per line when they do not fit.
    fn params(&mut self, params: &[Param]) -> Doc {
        let docs: Vec<Doc> = params
            .iter()
            .map(|p| {
                let mut parts = vec![text(format!("{}{}: ", if p.inout { "inout " } else { "" }, p.name.name))];
                if let Some(source) = &p.source {
                    parts.push(text(format!("{} ", source.name)));
                }
                parts.push(self.ty(&p.ty));
                if let Some(default) = &p.default {
                    parts.extend([text(" = "), self.expr(default, 0)]);
                }
                concat(parts)
            })
            .collect();
        bracketed("(", docs, ")")
    }

    fn ret(&mut self, ret: &Option<TypeExpr>) -> Doc {
        match ret {
            Some(ty) => concat(vec![text(" -> "), self.ty(ty)]),
            None => Doc::Nil,
        }
    }

    fn field(&mut self, field: &FieldDecl) -> Doc {
        concat(vec![text(format!("{}: ", field.name.name)), self.ty(&field.ty)])
    }

    /// An actor's members in the order written: its state, `mailbox N`, its handlers.
    fn actor(&mut self, d: &ActorDecl) -> Doc {
        let values: Vec<&Expr> = match d.init.stmts.first().map(|s| &s.kind) {
            Some(StmtKind::Return(Some(Expr { kind: ExprKind::ClassLit { fields, .. }, .. }))) => {
                fields.iter().map(|(_, v)| v).collect()
            }
            _ => Vec::new(),
        };
        enum Member<'a> {
            State(&'a FieldDecl, Option<&'a Expr>),
            Mailbox(Span),
            Handler(&'a FnDecl),
        }
        let mut members: Vec<(Span, Member)> = Vec::new();
        for (i, f) in d.fields.iter().enumerate() {
            let end = values.get(i).map_or(field_span(f).end, |v| v.span.end.max(field_span(f).end));
            members.push((Span { start: self.var_start(f.name.span), end }, Member::State(f, values.get(i).copied())));
        }
        if let Some((_, span)) = d.mailbox {
            members.push((span, Member::Mailbox(span)));
        }
        for h in &d.handlers {
            members.push((h.span, Member::Handler(h)));
        }
        members.sort_by_key(|(span, _)| span.start);
        let spans: Vec<Span> = members.iter().map(|(s, _)| *s).collect();
        let blank =
            |i: usize| matches!(members[i].1, Member::Handler(_)) || matches!(members[i - 1].1, Member::Handler(_));
        let body = self.braced_with(&spans, d.span.end as usize - 1, &blank, &mut |p, i| match &members[i].1 {
            Member::State(f, value) => {
                let mut parts = vec![text("var "), p.field(f)];
                if let Some(value) = value {
                    parts.extend([text(" = "), p.expr(value, 0)]);
                }
                concat(parts)
            }
            Member::Mailbox(span) => text(words(p.slice(*span))),
            Member::Handler(h) => p.function(h),
        });
        concat(vec![text(format!("actor {} ", d.name.name)), body])
    }

    /// Where the `var` before a state field's name starts.
    fn var_start(&self, name: Span) -> u32 {
        let before = self.source[..name.start as usize].trim_end();
        before.strip_suffix("var").map_or(name.start, |rest| rest.len() as u32)
    }

    /// A supervisor's members in the order written.
    fn supervisor(&mut self, d: &SupervisorDecl) -> Doc {
        let mut members: Vec<(Span, Doc)> = Vec::new();
        for (name, ty) in &d.children {
            let start = self.source[..name.span.start as usize]
                .trim_end()
                .strip_suffix("child")
                .map_or(name.span.start, |r| r.len() as u32);
            members.push((Span { start, end: ty.span.end }, text(format!("child {}: {}", name.name, ty.name))));
        }
        if let Some(strategy) = &d.strategy {
            let start = self.source[..strategy.span.start as usize]
                .trim_end()
                .strip_suffix("strategy")
                .map_or(strategy.span.start, |r| r.len() as u32);
            members.push((Span { start, end: strategy.span.end }, text(format!("strategy {}", strategy.name))));
        }
        for span in [d.intensity.map(|(_, _, s)| s), d.backoff.map(|(_, _, s)| s)].into_iter().flatten() {
            members.push((span, text(words(self.slice(span)))));
        }
        members.sort_by_key(|(span, _)| span.start);
        let spans: Vec<Span> = members.iter().map(|(s, _)| *s).collect();
        let body = self.braced(&spans, d.span.end as usize - 1, &mut |_, i| members[i].1.clone());
        concat(vec![text(format!("supervisor {} ", d.name.name)), body])
    }

    /// A queue's rules in the order written, then its handler after a blank line.
    fn queue(&mut self, d: &QueueDecl) -> Doc {
        let mut members: Vec<(Span, Option<Doc>)> = Vec::new();
        for span in [d.workers.map(|(_, s)| s), d.max_attempts.map(|(_, s)| s), d.backoff.map(|(_, _, s)| s)]
            .into_iter()
            .flatten()
        {
            members.push((span, Some(text(words(self.slice(span))))));
        }
        members.push((d.handler.span, None));
        members.sort_by_key(|(span, _)| span.start);
        let spans: Vec<Span> = members.iter().map(|(s, _)| *s).collect();
        let blank = |i: usize| members[i].1.is_none() || members[i - 1].1.is_none();
        let body = self.braced_with(&spans, d.span.end as usize - 1, &blank, &mut |p, i| match &members[i].1 {
            Some(doc) => doc.clone(),
            None => p.function(&d.handler),
        });
        concat(vec![text(format!("queue {} ", d.name.name)), body])
    }

    /// `{ statements }`.
    pub(super) fn block(&mut self, block: &Block) -> Doc {
        let spans: Vec<Span> = block.stmts.iter().map(|s| s.span).collect();
        let stmts = &block.stmts;
        self.braced(&spans, block.span.end as usize - 1, &mut |p, i| p.stmt(&stmts[i]))
    }

    /// A `match` arm's block: on the arm's line when it is one statement without comments that
    /// fits (`Admin => { return 1 }`), else as any block.
    fn arm_block(&mut self, block: &Block) -> Doc {
        let commented = self.comments.get(self.next).is_some_and(|c| c.start < block.span.end as usize);
        match block.stmts.as_slice() {
            [only] if !commented => {
                let stmt = self.stmt(only);
                group(concat(vec![text("{"), nest(INDENT, concat(vec![Doc::Line, stmt])), Doc::Line, text("}")]))
            }
            _ => self.block(block),
        }
    }

    fn stmt(&mut self, stmt: &Stmt) -> Doc {
        match &stmt.kind {
            StmtKind::Let { mutable, name, ty, value } => {
                let mut parts = vec![text(format!("{} {}", if *mutable { "var" } else { "let" }, name.name))];
                if let Some(ty) = ty {
                    parts.extend([text(": "), self.ty(ty)]);
                }
                parts.extend([text(" = "), self.expr(value, 0)]);
                concat(parts)
            }
            StmtKind::Assign { target, op, value } => {
                let op = op.map_or("=".to_string(), |op| format!("{}=", op.symbol()));
                concat(vec![self.expr(target, 0), text(format!(" {op} ")), self.expr(value, 0)])
            }
            StmtKind::If { .. } | StmtKind::IfLet { .. } => self.if_chain(stmt),
            StmtKind::While { cond, body } => {
                concat(vec![text("while "), self.expr(cond, 0), text(" "), self.block(body)])
            }
            StmtKind::For { var, iter, body } => {
                let head = match iter {
                    ForIter::Range(start, end) => concat(vec![
                        text(format!("for {} in ", var.name)),
                        self.expr(start, 0),
                        text(".."),
                        self.expr(end, 0),
                    ]),
                    ForIter::Each(each) => concat(vec![text(format!("for {} in ", var.name)), self.expr(each, 0)]),
                    ForIter::Entries(value, map) => {
                        concat(vec![text(format!("for {}, {} in ", var.name, value.name)), self.expr(map, 0)])
                    }
                };
                concat(vec![head, text(" "), self.block(body)])
            }
            StmtKind::Break => text("break"),
            StmtKind::Continue => text("continue"),
            StmtKind::Return(None) => text("return"),
            StmtKind::Return(Some(value)) => concat(vec![text("return "), self.expr(value, 0)]),
            StmtKind::Transaction(body) => concat(vec![text("db.transaction "), self.block(body)]),
            StmtKind::Scope(body) => concat(vec![text("scope "), self.block(body)]),
            StmtKind::Defer(call) => concat(vec![text("defer "), self.expr(call, 0)]),
            StmtKind::Match { scrutinee, arms } => {
                let head = concat(vec![text("match "), self.expr(scrutinee, 0), text(" ")]);
                let spans: Vec<Span> = arms.iter().map(|a| a.span).collect();
                let body = self.braced(&spans, stmt.span.end as usize - 1, &mut |p, i| {
                    let arm = &arms[i];
                    let patterns: Vec<String> = arm.patterns.iter().map(|pat| p.pattern(pat)).collect();
                    concat(vec![text(format!("{} => ", patterns.join(" | "))), p.arm_block(&arm.body)])
                });
                concat(vec![head, body])
            }
            StmtKind::Expr(e) => self.expr(e, 0),
        }
    }

    /// `if …` or `if let …`, with its `else if` chain and `else`.
    fn if_chain(&mut self, stmt: &Stmt) -> Doc {
        let (head, then_block, else_block) = match &stmt.kind {
            StmtKind::If { cond, then_block, else_block } => {
                (concat(vec![text("if "), self.expr(cond, 0)]), then_block, else_block)
            }
            StmtKind::IfLet { name, value, then_block, else_block } => {
                (concat(vec![text(format!("if let {} = ", name.name)), self.expr(value, 0)]), then_block, else_block)
            }
            _ => return Doc::Nil,
        };
        let mut parts = vec![head, text(" "), self.block(then_block)];
        if let Some(other) = else_block {
            parts.push(text(" else "));
            // `else if`: the parser makes it an else-block holding the one `if`, spanning it.
            let chained = match other.stmts.as_slice() {
                [only]
                    if only.span == other.span && matches!(only.kind, StmtKind::If { .. } | StmtKind::IfLet { .. }) =>
                {
                    Some(only)
                }
                _ => None,
            };
            parts.push(match chained {
                Some(only) => self.if_chain(only),
                None => self.block(other),
            });
        }
        concat(parts)
    }
}

/// `pub ` or nothing.
/// `<T, U: ord + text>`, or nothing for no type parameters.
fn type_params(params: &[TypeParam]) -> String {
    if params.is_empty() {
        return String::new();
    }
    let each: Vec<String> = params
        .iter()
        .map(|p| match p.bounds.as_slice() {
            [] => p.name.name.clone(),
            bounds => {
                let names: Vec<&str> = bounds.iter().map(|b| b.name.as_str()).collect();
                format!("{}: {}", p.name.name, names.join(" + "))
            }
        })
        .collect();
    format!("<{}>", each.join(", "))
}

fn public(yes: bool) -> &'static str {
    if yes { "pub " } else { "" }
}

fn field_span(f: &FieldDecl) -> Span {
    Span { start: f.name.span.start, end: f.ty.span.end }
}

fn variant_span(v: &VariantDecl) -> Span {
    let end = v.payload.as_ref().map_or(v.name.span.end, |ty| ty.span.end + 1);
    Span { start: v.name.span.start, end }
}

/// `text` with each run of whitespace one space: a one-line member written as it was.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `open` items `close`: on one line when they fit, else one per line with a trailing comma.
pub(super) fn bracketed(open: &str, items: Vec<Doc>, close: &str) -> Doc {
    if items.is_empty() {
        return text(format!("{open}{close}"));
    }
    delimited(open, items, close, Doc::SoftLine)
}

/// `open` items `close` as [`bracketed`], with `inside` (nothing or a space, when flat) after
/// `open` and before `close`.
pub(super) fn delimited(open: &str, items: Vec<Doc>, close: &str, inside: Doc) -> Doc {
    let mut inner = vec![inside.clone()];
    let count = items.len();
    for (i, item) in items.into_iter().enumerate() {
        inner.push(item);
        if i + 1 < count {
            inner.extend([text(","), Doc::Line]);
        }
    }
    inner.push(if_break(text(","), Doc::Nil));
    group(concat(vec![text(open), nest(INDENT, concat(inner)), inside, text(close)]))
}
