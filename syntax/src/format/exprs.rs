//! The layout of expressions, types and patterns: operators spaced, calls and literals
//! bracketed ([`super::items::bracketed`]), parentheses where the text had them or precedence
//! needs them, literals as written.

use super::INDENT;
use super::Printer;
use super::doc::{Doc, concat, group, nest, text};
use super::items::{bracketed, delimited};
use crate::ast::*;

/// How tightly an expression binds, loosest first (the grammar's tiers).
fn precedence(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Closure { .. } | ExprKind::BlockClosure { .. } => 0,
        ExprKind::Binary { op, .. } => binary_precedence(*op),
        ExprKind::Cast { .. } => 10,
        ExprKind::Unary { .. }
        | ExprKind::Try(_)
        | ExprKind::TryOption(_)
        | ExprKind::Catch(_)
        | ExprKind::Send(_)
        | ExprKind::Spawn(_)
        | ExprKind::SpawnBlocking(_) => 11,
        ExprKind::MethodCall { .. } | ExprKind::Field { .. } | ExprKind::Index { .. } => 12,
        ExprKind::ClassLit { class, .. } if class.name.contains('.') => 12,
        _ => 13,
    }
}

fn binary_precedence(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::Or => 1,
        BinaryOp::And => 2,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 3,
        BinaryOp::BitOr => 4,
        BinaryOp::BitXor => 5,
        BinaryOp::BitAnd => 6,
        BinaryOp::Shl | BinaryOp::Shr => 7,
        BinaryOp::Add | BinaryOp::Sub => 8,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 9,
    }
}

const UNARY: u8 = 11;
const POSTFIX: u8 = 12;

impl Printer<'_> {
    /// `e`, in parentheses when it binds looser than `min` or the text wrote them.
    pub(super) fn expr(&mut self, e: &Expr, min: u8) -> Doc {
        if precedence(e) < min || self.parenthesized(e.span) {
            concat(vec![text("("), self.bare(e), text(")")])
        } else {
            self.bare(e)
        }
    }

    /// Whether the text of `span` is one parenthesized expression: its `(` first and the `)` that
    /// closes it last.
    fn parenthesized(&self, span: Span) -> bool {
        let s = self.slice(span).as_bytes();
        if s.first() != Some(&b'(') || s.last() != Some(&b')') {
            return false;
        }
        let mut depth = 0i32;
        let mut i = 0;
        while i < s.len() {
            match s[i] {
                b'"' => {
                    i += 1;
                    while i < s.len() && s[i] != b'"' {
                        i += if s[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return i == s.len() - 1;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        false
    }

    /// A literal as the text wrote it, without the parentheses around it.
    fn literal(&self, span: Span) -> String {
        let mut s = self.slice(span).trim();
        while s.starts_with('(') && s.ends_with(')') {
            s = s[1..s.len() - 1].trim();
        }
        s.to_string()
    }

    /// `e` without parentheses around it.
    fn bare(&mut self, e: &Expr) -> Doc {
        match &e.kind {
            // An interpolated string too: its holes are printed as written, on their line.
            ExprKind::Int(_)
            | ExprKind::Duration(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Interp { .. } => text(self.literal(e.span)),
            ExprKind::Bool(b) => text(b.to_string()),
            ExprKind::None => text("none"),
            ExprKind::Closure { params, body } => {
                let mut parts = self.closure_params(params);
                parts.push(text(" => "));
                parts.push(self.expr(body, 0));
                concat(parts)
            }
            ExprKind::BlockClosure { params, ret, body } => {
                let mut parts = self.closure_params(params);
                if let Some(ret) = ret {
                    parts.push(text(" -> "));
                    parts.push(self.ty(ret));
                }
                parts.push(text(" "));
                parts.push(self.block(body));
                concat(parts)
            }
            ExprKind::Name(name) => text(name.name.clone()),
            ExprKind::Array(items) => {
                let docs = items.iter().map(|item| self.expr(item, 0)).collect();
                bracketed("[", docs, "]")
            }
            ExprKind::ClassLit { class, fields } => {
                if fields.is_empty() {
                    return text(format!("{} {{}}", class.name));
                }
                let docs: Vec<Doc> = fields
                    .iter()
                    .map(|(name, value)| concat(vec![text(format!("{}: ", name.name)), self.expr(value, 0)]))
                    .collect();
                // Spaces inside the braces when on one line: `User { id: 1 }`.
                delimited(&format!("{} {{", class.name), docs, "}", Doc::Line)
            }
            ExprKind::Unary { op, operand } => {
                let sign = if *op == UnaryOp::Neg { "-" } else { "!" };
                concat(vec![text(sign), self.expr(operand, UNARY)])
            }
            ExprKind::Binary { op, .. } => {
                let level = binary_precedence(*op);
                // A chain of one tier (`a + b - c`, left-associative) is one group: when it does
                // not fit, every operator of the chain ends a line.
                let mut operands = Vec::new();
                let mut first = e;
                while let ExprKind::Binary { op, lhs, rhs } = &first.kind {
                    if binary_precedence(*op) != level || (first.span != e.span && self.parenthesized(first.span)) {
                        break;
                    }
                    operands.push((*op, &**rhs));
                    first = lhs;
                    // Comparisons do not chain: their left side is one operand.
                    if level == 3 {
                        break;
                    }
                }
                // Comparisons do not chain, so both sides bind tighter; other tiers associate left.
                let mut parts = vec![self.expr(first, if level == 3 { 4 } else { level })];
                let mut rest = Vec::new();
                for (op, rhs) in operands.into_iter().rev() {
                    rest.extend([text(format!(" {}", op.symbol())), Doc::Line, self.expr(rhs, level + 1)]);
                }
                parts.push(nest(INDENT, concat(rest)));
                group(concat(parts))
            }
            ExprKind::Cast { expr, ty } => concat(vec![self.expr(expr, 10), text(" as "), self.ty(ty)]),
            ExprKind::Call { callee, args } => {
                let docs = args.iter().map(|a| self.expr(a, 0)).collect();
                concat(vec![text(callee.name.clone()), bracketed("(", docs, ")")])
            }
            ExprKind::MethodCall { receiver, method, args } => {
                let receiver = self.expr(receiver, POSTFIX);
                let docs = args.iter().map(|a| self.expr(a, 0)).collect();
                concat(vec![receiver, text(format!(".{}", method.name)), bracketed("(", docs, ")")])
            }
            ExprKind::Field { object, field } => {
                concat(vec![self.expr(object, POSTFIX), text(format!(".{}", field.name))])
            }
            ExprKind::Index { array, index } => {
                concat(vec![self.expr(array, POSTFIX), text("["), self.expr(index, 0), text("]")])
            }
            ExprKind::Try(inner) => concat(vec![text("try "), self.expr(inner, UNARY)]),
            ExprKind::TryOption(inner) => concat(vec![text("try? "), self.expr(inner, UNARY)]),
            ExprKind::Catch(inner) => concat(vec![text("catch "), self.expr(inner, UNARY)]),
            ExprKind::Send(inner) => concat(vec![text("send "), self.expr(inner, POSTFIX)]),
            ExprKind::Spawn(inner) => concat(vec![text("spawn "), self.expr(inner, POSTFIX)]),
            ExprKind::SpawnBlocking(inner) => concat(vec![text("spawn_blocking "), self.expr(inner, POSTFIX)]),
            ExprKind::Db { op, class, args } => self.qualified_call("db", op, class, args),
            ExprKind::Http { method, class, args } => self.qualified_call("http", method, class, args),
        }
    }

    /// `db.op<T>(args)` or `http.method<T>(args)`.
    fn qualified_call(&mut self, on: &str, name: &Ident, class: &Option<TypeExpr>, args: &[Expr]) -> Doc {
        let mut parts = vec![text(format!("{on}.{}", name.name))];
        if let Some(ty) = class {
            parts.extend([text("<"), self.ty(ty), text(">")]);
        }
        let docs = args.iter().map(|a| self.expr(a, 0)).collect();
        parts.push(bracketed("(", docs, ")"));
        concat(parts)
    }

    /// A type as written, spaced canonically.
    pub(super) fn ty(&mut self, ty: &TypeExpr) -> Doc {
        text(type_text(ty))
    }

    /// A `match` pattern.
    pub(super) fn pattern(&self, p: &Pattern) -> String {
        match &p.kind {
            PatternKind::Wildcard => "_".into(),
            PatternKind::Variant { enum_name, variant, binding } => {
                let mut out = enum_name.as_ref().map_or(String::new(), |e| format!("{}.", e.name));
                out.push_str(&variant.name);
                if let Some(binding) = binding {
                    out.push_str(&format!("({})", binding.name));
                }
                out
            }
            PatternKind::Int { negative, .. } => {
                let digits = self.slice(p.span).trim_start_matches('-').trim();
                format!("{}{digits}", if *negative { "-" } else { "" })
            }
            PatternKind::Str(_) => self.slice(p.span).to_string(),
            PatternKind::Bool(b) => b.to_string(),
        }
    }
}

impl Printer<'_> {
    /// `fn(a, b: T)`: a closure's parameters.
    fn closure_params(&mut self, params: &[ClosureParam]) -> Vec<Doc> {
        let mut parts = vec![text("fn(")];
        for (i, param) in params.iter().enumerate() {
            if i > 0 {
                parts.push(text(", "));
            }
            parts.push(text(param.name.name.clone()));
            if let Some(ty) = &param.ty {
                parts.push(text(": "));
                parts.push(self.ty(ty));
            }
        }
        parts.push(text(")"));
        parts
    }
}

fn type_text(ty: &TypeExpr) -> String {
    match &ty.kind {
        TypeExprKind::Named(name) => name.clone(),
        TypeExprKind::Array(inner) => format!("[{}]", type_text(inner)),
        TypeExprKind::Option(inner) => format!("{}?", type_text(inner)),
        TypeExprKind::Map(k, v) => format!("Map<{}, {}>", type_text(k), type_text(v)),
        TypeExprKind::Result(ok) => format!("Result<{}>", type_text(ok)),
        TypeExprKind::Fn(params, ret) => {
            let params: Vec<String> = params.iter().map(type_text).collect();
            let ret = ret.as_ref().map_or(String::new(), |r| format!(" -> {}", type_text(r)));
            format!("fn({}){ret}", params.join(", "))
        }
        TypeExprKind::Generic(name, args) => {
            format!("{name}<{}>", args.iter().map(type_text).collect::<Vec<_>>().join(", "))
        }
    }
}
