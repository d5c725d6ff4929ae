//! Evaluation order: which operands must be read when they are evaluated, because a later
//! operand of the same operation changes them.
//!
//! High evaluates operands, call arguments, array elements and class-literal fields left to
//! right, as written (docs/language.md §7). Lowering reads most operands the moment it
//! evaluates them, but two kinds of operand are *places* that the consuming operation reads
//! later: a copy-type local used directly as an operand (`v` in `v + m(v)`), and a value that
//! is read through the place itself (`s` in `s + f(s)`, borrowed by the concatenation). When a
//! later operand may change that place — it passes the place's root local to an `inout`
//! parameter, or pushes to it — the operand is marked *pinned*, and lowering copies (or clones)
//! its value into a temporary at its turn instead.
//!
//! Only operands that are places are ever pinned, so programs without such a write lower as
//! they always did.

use std::collections::HashSet;

use nagi_low::LocalId;

use super::FnCx;
use crate::tir::{Expr, ExprKind, LocalIdx, LocalKind, ParamMode};

/// The TIR expressions (by address) that must be evaluated into a temporary when their turn
/// comes. Addresses are stable: lowering only borrows the TIR.
#[derive(Default)]
pub(super) struct Pinned(HashSet<*const Expr>);

impl Pinned {
    pub(super) fn contains(&self, expr: &Expr) -> bool {
        self.0.contains(&(expr as *const Expr))
    }

    /// The marks made so far, to be put back with [`Pinned::restore`] once expressions that
    /// lowering built itself (and frees after) are lowered: their addresses may be reused.
    pub(super) fn snapshot(&self) -> HashSet<*const Expr> {
        self.0.clone()
    }

    pub(super) fn restore(&mut self, marks: HashSet<*const Expr>) {
        self.0 = marks;
    }
}

impl FnCx<'_> {
    /// Marks every operand of `operands` (in evaluation order) that names a place some later
    /// operand may write.
    pub(super) fn pin_clobbered(&mut self, operands: &[&Expr]) {
        for (i, operand) in operands.iter().enumerate() {
            let ExprKind::Place(place) = &operand.kind else { continue };
            let root = place.root();
            if operands[i + 1..].iter().any(|later| self.may_write(later, root)) {
                self.pinned.0.insert(*operand as *const Expr);
            }
        }
    }

    /// Whether evaluating `expr` may change High local `local` (see [`Expr::may_write`]).
    pub(super) fn may_write(&self, expr: &Expr, local: LocalIdx) -> bool {
        let program = self.shared.program;
        expr.may_write(local, &|func, arg| {
            let callee = &program.functions[func];
            callee.params.get(arg).is_some_and(|p| matches!(callee.locals[*p].kind, LocalKind::Param(ParamMode::Inout)))
        })
    }

    /// Whether `expr` reads or writes the Low local `low` through one of its places.
    pub(super) fn mentions(&self, expr: &Expr, low: LocalId) -> bool {
        expr.roots().into_iter().any(|root| self.bindings[root].low == low)
    }
}
