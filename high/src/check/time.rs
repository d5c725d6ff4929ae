//! `Time` and `Duration` (docs/language.md §6.15): duration literals, the operators on them and
//! their methods. Both are `i64` microseconds underneath, and every rule here is written as TIR
//! the lowering already knows: a value's microseconds (`time.micros`, `duration.micros`), `i64`
//! arithmetic or comparison on them, and the result made a `Time` or `Duration` again
//! (`time.from_micros`, which traps outside years 0000–9999). So no pass, emitter or interpreter
//! learns anything new for them.

use nagi_low::RuntimeFn;
use nagi_syntax::ast::{self, BinaryOp, Ident, Span};

use super::expr::mk;
use super::{Body, H211, H302, error};
use crate::tir::{Builtin, Expr, ExprKind, Ty};

/// A call of the runtime row `row` on `args`, of type `ty`.
fn row(row: RuntimeFn, args: Vec<Expr>, ty: Ty, span: Span) -> Expr {
    mk(ExprKind::Builtin { builtin: Builtin::Runtime(row), args }, ty, span)
}

/// The `i64` microseconds of a `Time` or `Duration` value.
pub(super) fn micros(value: Expr) -> Expr {
    let span = value.span;
    let func = if value.ty == Ty::Time { RuntimeFn::TimeMicros } else { RuntimeFn::DurationMicros };
    row(func, vec![value], Ty::I64, span)
}

/// `micros`, an `i64`, as a value of `ty` (`Time` or `Duration`).
fn from_micros(micros: Expr, ty: Ty, span: Span) -> Expr {
    let func = if ty == Ty::Time { RuntimeFn::TimeFromMicros } else { RuntimeFn::DurationFromMicros };
    row(func, vec![micros], ty, span)
}

/// An `i64` constant.
fn int(value: i64, span: Span) -> Expr {
    mk(ExprKind::Int(value), Ty::I64, span)
}

impl Body<'_, '_> {
    /// A duration literal of `micros` microseconds: a `Duration`, or, where an integer is
    /// expected, its whole milliseconds (how `sleep(250ms)` was written before `Duration`).
    pub(super) fn duration_literal(&mut self, micros: u64, hint: Option<&Ty>, span: Span) -> Option<Expr> {
        if matches!(hint, Some(Ty::I64 | Ty::I32)) {
            let ms = mk(ExprKind::Int((micros / 1000) as i64), Ty::I64, span);
            return self.coerce(ms, hint?);
        }
        // The lexer keeps a literal within an `i64`.
        Some(from_micros(int(micros as i64, span), Ty::Duration, span))
    }

    /// `-d` for a `Duration`.
    pub(super) fn negate_duration(&mut self, value: Expr, span: Span) -> Expr {
        let zero = int(0, span);
        let negated = self.scalar_binary(BinaryOp::Sub, zero, micros(value), span);
        match negated {
            Some(negated) => from_micros(negated, Ty::Duration, span),
            None => unreachable!("i64 subtraction is a scalar operation"),
        }
    }

    /// `l op rhs` where `l`, already checked, is a `Time` or a `Duration`:
    /// `Time ± Duration → Time`, `Time - Time → Duration`, `Duration ± Duration → Duration`,
    /// `Duration * i64` and `Duration / i64 → Duration`, and `== != < <= > >=` between two of
    /// one type.
    pub(super) fn time_binary(&mut self, op: BinaryOp, l: Expr, rhs: &ast::Expr, span: Span) -> Option<Expr> {
        use BinaryOp as Op;
        let is_time = l.ty == Ty::Time;
        let comparison = matches!(op, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge);
        let (r, result) = match op {
            _ if comparison => (self.check_expr(rhs, &l.ty.clone())?, Ty::Bool),
            Op::Add if is_time => (self.check_expr(rhs, &Ty::Duration)?, Ty::Time),
            Op::Sub if is_time => {
                let r = self.infer_value(rhs, Some(&Ty::Duration))?;
                match r.ty {
                    Ty::Time => (r, Ty::Duration),
                    Ty::Duration => (r, Ty::Time),
                    _ => {
                        let found = self.ty_name(&r.ty);
                        self.report(
                            error(
                                H302,
                                r.span,
                                format!("cannot subtract `{found}` from a `Time`"),
                                "not a Time or Duration",
                            )
                            .note("`t - d` is the time `d` before `t`; `t2 - t1` is the `Duration` between them"),
                        );
                        return None;
                    }
                }
            }
            Op::Add | Op::Sub if !is_time => (self.check_expr(rhs, &Ty::Duration)?, Ty::Duration),
            Op::Mul | Op::Div if !is_time => (self.check_expr(rhs, &Ty::I64)?, Ty::Duration),
            _ => {
                let allowed = if is_time {
                    "a `Time` takes `+` and `-` of a `Duration`, `-` of a `Time`, and comparisons"
                } else {
                    "a `Duration` takes `+` and `-` of a `Duration`, `*` and `/` by an `i64`, and comparisons"
                };
                return self.not_applicable(op.symbol(), &l.ty.clone(), span, allowed);
            }
        };
        let r = if r.ty == Ty::I64 { r } else { micros(r) };
        let value = self.scalar_binary(op, micros(l), r, span)?;
        Some(if comparison { value } else { from_micros(value, result, span) })
    }

    /// `value` as an `i64` of milliseconds: a `Duration`'s whole milliseconds (`d.ms()`), an
    /// `i64` itself; anything else is a mismatch (reported).
    pub(super) fn as_millis(&mut self, value: Expr) -> Option<Expr> {
        if value.ty != Ty::Duration {
            return self.coerce(value, &Ty::I64);
        }
        let span = value.span;
        self.scalar_binary(BinaryOp::Div, micros(value), int(1000, span), span)
    }

    /// A method of a `Time` (`unix_ms`) or a `Duration` (`ms`, `micros`) on the checked
    /// `value`.
    pub(super) fn time_method(&mut self, value: Expr, method: &Ident, args: &[ast::Expr], span: Span) -> Option<Expr> {
        let name = method.name.as_str();
        let known = match value.ty {
            Ty::Time => name == "unix_ms",
            _ => matches!(name, "ms" | "micros"),
        };
        if !known {
            let ty = self.ty_name(&value.ty);
            let methods = if value.ty == Ty::Time { "`unix_ms()`" } else { "`ms()` and `micros()`" };
            self.report(
                error(H211, method.span, format!("`{ty}` has no method `{name}`"), format!("receiver is `{ty}`"))
                    .note(format!("a `{ty}` has {methods}")),
            );
            return None;
        }
        if !self.arity(name, 0, args, span) {
            return None;
        }
        let micros = micros(value);
        if name == "micros" {
            return Some(micros);
        }
        // Milliseconds, rounded toward zero as `/` rounds.
        self.scalar_binary(BinaryOp::Div, micros, int(1000, span), span)
    }
}
