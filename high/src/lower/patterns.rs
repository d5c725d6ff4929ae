//! Lowering of `match`: the scrutinee read once (borrowed when it is a place, held in a local of
//! the match's own scope when it is computed), then one `if` per arm testing its patterns, each
//! nested in the previous arm's `else`; the last arm runs untested, since the checker proved the
//! arms exhaustive. A binding copies a copy-type payload (`enum.get`) and borrows any other
//! (`enum.ref`), so a `match` never moves what it inspects.

use nagi_low::{BinaryOp, Constant, LocalData, LocalId, OpKind, Operand, ScalarType, Type};

use super::{FnCx, Own, ScopeKind};
use crate::tir::{Block, Expr, ExprKind, MatchArm, Pattern};

impl FnCx<'_> {
    /// `match scrutinee { arms }`, in a scope of its own that owns a computed scrutinee.
    pub(super) fn match_stmt(&mut self, scrutinee: &Expr, arms: &[MatchArm]) {
        // The local an arm's borrowed payload comes from, which must not move inside the arm.
        let root = match &scrutinee.kind {
            ExprKind::Place(place) if !self.bindings[place.root()].is_ref => Some(self.bindings[place.root()].low),
            _ => None,
        };
        self.scoped(ScopeKind::Block, |cx| {
            let subject = cx.match_subject(scrutinee);
            cx.match_arms(subject, root, arms);
        });
    }

    /// The operand the patterns are tested against.
    fn match_subject(&mut self, scrutinee: &Expr) -> Operand {
        if scrutinee.ty.is_copy() {
            let mut operand = Operand::Const(Constant::Unit);
            self.statement(|cx| operand = Operand::Local(cx.operand_local(scrutinee)));
            return operand;
        }
        if let ExprKind::Place(_) = scrutinee.kind {
            // A place is borrowed for the whole match (the checker keeps arms that borrow its
            // payload from changing it); the borrow is a reference, which needs no drop.
            let mut local = None;
            self.statement(|cx| local = Some(cx.read(scrutinee)));
            return Operand::Local(local.expect("set by the statement"));
        }
        let ty = self.low_ty(&scrutinee.ty);
        let name = self.unique_name("matched");
        let local = self.f.locals.alloc(LocalData { name, ty });
        let depth = self.loop_depth();
        self.loop_depth_of.insert(local, depth);
        self.state.insert(local, Own::Moved);
        self.scopes.last_mut().expect("the match's scope").owned.push(local);
        self.statement(|cx| cx.eval_into(scrutinee, local));
        Operand::Local(local)
    }

    /// Arm `arms[0]`, then the rest in its `else`.
    fn match_arms(&mut self, subject: Operand, root: Option<LocalId>, arms: &[MatchArm]) {
        let Some((arm, rest)) = arms.split_first() else { return };
        if rest.is_empty() || arm.patterns.contains(&Pattern::Wildcard) {
            // The last arm (or a `_` arm, which the checker made last) matches whatever is left.
            self.scoped(ScopeKind::Block, |cx| {
                let borrowed = cx.bind_payload(subject, root, arm);
                cx.arm_body(&arm.body);
                if borrowed {
                    cx.matched.pop();
                }
            });
            return;
        }
        let cond = self.arm_condition(subject, arm);
        let empty = Block::default();
        let borrowed = std::cell::Cell::new(false);
        self.if_else(
            cond,
            &arm.body,
            Some(&empty),
            false,
            |cx| borrowed.set(cx.bind_payload(subject, root, arm)),
            |cx| {
                // The then-arm has been lowered: its borrow has ended.
                if borrowed.get() {
                    cx.matched.pop();
                }
                cx.match_arms(subject, root, rest)
            },
        );
    }

    /// The statements of an arm's block, in the current scope.
    fn arm_body(&mut self, body: &Block) {
        for stmt in &body.stmts {
            if !self.reachable {
                break;
            }
            self.stmt(stmt);
        }
    }

    /// Whether any of the arm's patterns matches `subject`, as a `bool` operand.
    fn arm_condition(&mut self, subject: Operand, arm: &MatchArm) -> Operand {
        let mut cond: Option<LocalId> = None;
        for pattern in &arm.patterns {
            let test = self.pattern_test(subject, pattern);
            cond = Some(match cond {
                None => test,
                Some(before) => {
                    let either = self.temp(Type::Bool);
                    let (lhs, rhs) = (Operand::Local(before), Operand::Local(test));
                    self.emit(OpKind::Binary { dest: either, op: BinaryOp::Or, ty: ScalarType::Bool, lhs, rhs });
                    either
                }
            });
        }
        cond.map_or(Operand::Const(Constant::Bool(true)), Operand::Local)
    }

    /// A `bool` local that holds whether `pattern` matches `subject`.
    fn pattern_test(&mut self, subject: Operand, pattern: &Pattern) -> LocalId {
        let dest = self.temp(Type::Bool);
        let Operand::Local(value) = subject else {
            self.emit(OpKind::Const { dest, value: Constant::Bool(true) });
            return dest;
        };
        match pattern {
            Pattern::Wildcard => self.emit(OpKind::Const { dest, value: Constant::Bool(true) }),
            Pattern::Variant(variant) => self.emit(OpKind::EnumIs { dest, value, variant: *variant }),
            Pattern::Int(v) => {
                let (ty, constant) = match self.f.locals[value].ty {
                    Type::I32 => (ScalarType::I32, Constant::I32(*v as i32)),
                    _ => (ScalarType::I64, Constant::I64(*v)),
                };
                let (lhs, rhs) = (Operand::Local(value), Operand::Const(constant));
                self.emit(OpKind::Binary { dest, op: BinaryOp::Eq, ty, lhs, rhs });
            }
            Pattern::Bool(b) => {
                let (lhs, rhs) = (Operand::Local(value), Operand::Const(Constant::Bool(*b)));
                self.emit(OpKind::Binary { dest, op: BinaryOp::Eq, ty: ScalarType::Bool, lhs, rhs });
            }
            Pattern::Str(text) => {
                // The literal lives for the test only; the statement drops it.
                self.statement(|cx| {
                    let literal = cx.temp(Type::String);
                    cx.emit(OpKind::StringLit { dest: literal, value: text.clone() });
                    cx.emit(OpKind::StrEq { dest, lhs: value, rhs: literal });
                });
            }
        }
        dest
    }

    /// At the top of an arm: the binding takes a copy of the payload, or a borrow of it. A
    /// borrow of `root`'s payload marks `root` as not to move (returns whether it did; the
    /// caller unmarks it after the arm).
    fn bind_payload(&mut self, subject: Operand, root: Option<LocalId>, arm: &MatchArm) -> bool {
        let (Some(local), Some(Pattern::Variant(variant)), Operand::Local(value)) =
            (arm.binding, arm.patterns.first(), subject)
        else {
            return false;
        };
        let binding = self.bindings[local];
        if binding.is_ref {
            self.emit(OpKind::EnumRef { dest: binding.low, value, variant: *variant });
            if let Some(root) = root {
                self.matched.push(root);
                return true;
            }
        } else {
            self.emit(OpKind::EnumGet { dest: binding.low, value, variant: *variant });
        }
        false
    }
}
