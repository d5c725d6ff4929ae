//! Maps: `Map.new()`, `get` and `contains` (a `map.find`, then the value at that position
//! copied or cloned into an option), `insert`, `remove`, and `for k, v in m` (a counted loop over
//! the positions, the loop variables bound to the key and the value there: copied for `i64` and
//! copy-type values, borrowed otherwise).

use nagi_low::{BinaryOp, BlockData, Constant, LocalId, OpKind, Operand, ScalarType, Type};

use super::{FnCx, ScopeKind};
use crate::tir::{Block, Expr, ExprKind, Ty};

impl FnCx<'_> {
    /// Evaluates a map expression (`Map.new()`, `get`, `contains`, `insert`, `remove`) into `dest`.
    pub(super) fn map_expr(&mut self, expr: &Expr, dest: LocalId) {
        match &expr.kind {
            ExprKind::MapNew => self.emit(OpKind::MapNew { dest }),
            ExprKind::MapLookup { map, key, contains } => {
                self.pin_clobbered(&[map, key]);
                let map = self.borrow_arg(map);
                let key = self.key_operand(key);
                let at = self.temp(Type::I64);
                self.emit(OpKind::MapFind { dest: at, map, key });
                let found = if *contains { dest } else { self.temp(Type::Bool) };
                self.emit(OpKind::Binary {
                    dest: found,
                    op: BinaryOp::Ge,
                    ty: ScalarType::I64,
                    lhs: Operand::Local(at),
                    rhs: Operand::Const(Constant::I64(0)),
                });
                if !*contains {
                    self.value_at(map, at, found, dest);
                }
            }
            ExprKind::MapInsert { map, key, value } => {
                // The key and the value are in flight until the insert takes them: a failure
                // while the value or the map's place is computed drops them.
                let held = self.in_flight.len();
                let key = self.held_operand(key);
                let value = self.held_operand(value);
                let map = self.borrow_mut_arg(map, expr.span);
                self.emit(OpKind::MapInsert { map, key, value });
                self.in_flight.truncate(held);
                self.emit(OpKind::Const { dest, value: Constant::Unit });
            }
            ExprKind::MapRemove { map, key } => {
                let key = self.key_operand(key);
                let map = self.borrow_mut_arg(map, expr.span);
                self.emit(OpKind::MapRemove { dest, map, key });
            }
            _ => {}
        }
    }

    /// `dest = found ? some(copy or clone of the value at position at) : none`.
    fn value_at(&mut self, map: LocalId, at: LocalId, found: LocalId, dest: LocalId) {
        let value_ty = match self.f.locals[map].ty.through_ref().0 {
            Type::Map(_, v) => (**v).clone(),
            other => other.clone(),
        };
        let (then_block, else_block) = self.emit_if(Operand::Local(found), true);
        self.in_block(then_block, |cx| {
            let r = cx.temp(Type::reference(false, value_ty.clone()));
            cx.emit(OpKind::MapRef { dest: r, map, index: Operand::Local(at), value: true });
            let value = cx.temp(value_ty.clone());
            if value_ty.is_copy() {
                cx.emit(OpKind::Load { dest: value, reference: r });
            } else {
                cx.emit(OpKind::Clone { dest: value, src: r });
                // `option.some` takes the clone, so the statement must not drop it.
                cx.state.insert(value, super::Own::Moved);
            }
            cx.emit(OpKind::OptionSome { dest, value: Operand::Local(value) });
        });
        if let Some(else_block) = else_block {
            self.in_block(else_block, |cx| cx.emit(OpKind::OptionNone { dest }));
        }
    }

    /// A key that is only read: an `i64` operand, or a `&String`.
    fn key_operand(&mut self, key: &Expr) -> Operand {
        if key.ty == Ty::String { Operand::Local(self.borrow_arg(key)) } else { self.operand(key) }
    }

    /// `for key, value in map { body }`.
    pub(super) fn for_entries(&mut self, key: usize, value: usize, map: &Expr, body: &Block) {
        let map = self.borrow_arg(map);
        let len = self.temp(Type::I64);
        self.emit(OpKind::MapLen { dest: len, map });
        let position = self.temp(Type::I64);
        let label = self.new_label();
        let block = self.f.blocks.alloc(BlockData::default());
        let (start, end) = (Operand::Const(Constant::I64(0)), Operand::Local(len));
        self.emit(OpKind::ForRange { var: position, start, end, label, body: block });
        self.arm(block, ScopeKind::Loop(label), body, |cx| {
            for (local, is_value) in [(key, false), (value, true)] {
                let binding = cx.bindings[local];
                let index = Operand::Local(position);
                if binding.is_ref {
                    cx.emit(OpKind::MapRef { dest: binding.low, map, index, value: is_value });
                } else {
                    let ty = cx.f.locals[binding.low].ty.clone();
                    let r = cx.temp(Type::reference(false, ty));
                    cx.emit(OpKind::MapRef { dest: r, map, index, value: is_value });
                    cx.emit(OpKind::Load { dest: binding.low, reference: r });
                }
            }
        });
    }
}
