//! Lowering of statements and blocks: scopes, control flow, and the drops at their edges.

use nagi_low::{BlockData, Constant, LabelId, OpKind, Operand, RuntimeFn, ScalarType, Type, UnaryOp};

use super::{FnCx, Own, Scope, ScopeKind};
use crate::tir::{Block, ExprKind, Place, Stmt, StmtKind};

impl FnCx<'_> {
    /// Lowers the statements of `block` into the current Low block, in a scope of their own.
    pub(super) fn block_stmts(&mut self, block: &Block) {
        self.scoped(ScopeKind::Block, |cx| {
            for stmt in &block.stmts {
                if !cx.reachable {
                    // Statements after `return`, `break` or `continue` never run.
                    break;
                }
                cx.stmt(stmt);
            }
        });
    }

    /// Runs `body` in a new scope; at its end (if reachable) the scope's live locals are
    /// dropped in reverse declaration order.
    pub(super) fn scoped(&mut self, kind: ScopeKind, body: impl FnOnce(&mut Self)) {
        self.scopes.push(Scope { kind, owned: Vec::new() });
        body(self);
        let scope = self.scopes.pop().expect("pushed above");
        if self.reachable {
            for &local in scope.owned.iter().rev() {
                self.drop_if_live(local);
            }
        }
        for local in scope.owned {
            self.state.remove(&local);
        }
    }

    /// Lowers `block` as the body of the Low block `target` (an arm or a loop body), in a new
    /// scope of `kind`, after `prologue` (which runs inside that scope). Returns whether its
    /// end is reachable; the current block and reachability are restored.
    pub(super) fn arm(
        &mut self,
        target: nagi_low::BlockId,
        kind: ScopeKind,
        block: &Block,
        prologue: impl FnOnce(&mut Self),
    ) -> bool {
        let (saved, reachable) = (self.cur, self.reachable);
        self.cur = target;
        self.reachable = true;
        self.scoped(kind, |cx| {
            prologue(cx);
            for stmt in &block.stmts {
                if !cx.reachable {
                    break;
                }
                cx.stmt(stmt);
            }
        });
        let end = self.reachable;
        self.cur = saved;
        self.reachable = reachable;
        end
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Let { local, value } => {
                let binding = self.bindings[*local];
                let ty = &self.tir.locals[*local].ty;
                if !ty.is_copy() {
                    let depth = self.loop_depth();
                    self.loop_depth_of.insert(binding.low, depth);
                    self.scopes.last_mut().expect("inside a scope").owned.push(binding.low);
                    // A binding re-entered on a later loop iteration was dropped at the end of
                    // the previous one, so it holds nothing here.
                    self.state.insert(binding.low, Own::Moved);
                }
                self.statement(|cx| cx.eval_into(value, binding.low));
            }
            StmtKind::Assign { place, value } => self.statement(|cx| cx.assign(place, value)),
            StmtKind::Expr(expr) => self.statement(|cx| cx.eval_effect(expr)),
            StmtKind::Defer { func, args } => self.defer(*func, args),
            StmtKind::If { cond, then_block, else_block } => {
                let mut cond_op = Operand::Const(Constant::Bool(true));
                self.statement(|cx| cond_op = cx.operand(cond));
                self.if_else(cond_op, then_block, else_block.as_ref(), false, |_| {}, |_| {});
            }
            StmtKind::IfLet { local, value, then_block, else_block } => {
                self.if_let(*local, value, then_block, else_block.as_ref())
            }
            StmtKind::Match { scrutinee, arms } => self.match_stmt(scrutinee, arms),
            StmtKind::While { cond, body } => {
                let label = self.new_label();
                let loop_body = self.f.blocks.alloc(BlockData::default());
                self.emit(OpKind::Loop { label, body: loop_body });
                let always = matches!(cond.kind, ExprKind::Bool(true));
                let (saved, reachable) = (self.cur, self.reachable);
                self.cur = loop_body;
                self.scoped(ScopeKind::Loop(label), |cx| {
                    if !always {
                        let mut cond_op = Operand::Const(Constant::Bool(true));
                        cx.statement(|cx| cond_op = cx.operand(cond));
                        let done = cx.temp(Type::Bool);
                        cx.emit(OpKind::Unary { dest: done, op: UnaryOp::Not, ty: ScalarType::Bool, arg: cond_op });
                        let (exit, _) = cx.emit_if(Operand::Local(done), false);
                        cx.in_block(exit, |cx| cx.emit(OpKind::Break { label }));
                        cx.broken.insert(label);
                    }
                    for stmt in &body.stmts {
                        if !cx.reachable {
                            break;
                        }
                        cx.stmt(stmt);
                    }
                });
                self.cur = saved;
                self.reachable = reachable && self.broken.contains(&label);
            }
            StmtKind::ForRange { local, start, end, body } => {
                self.statement(|cx| {
                    cx.pin_clobbered(&[start, end]);
                    let start = cx.operand(start);
                    let end = cx.operand(end);
                    let var = cx.bindings[*local].low;
                    let label = cx.new_label();
                    let block = cx.f.blocks.alloc(BlockData::default());
                    cx.emit(OpKind::ForRange { var, start, end, label, body: block });
                    cx.loop_body(block, label, body);
                });
            }
            StmtKind::ForEntries { key, value, map, body } => {
                self.statement(|cx| cx.for_entries(*key, *value, map, body));
            }
            StmtKind::ForEach { local, array, body } => {
                self.statement(|cx| {
                    let seq = cx.read(array);
                    let var = cx.bindings[*local].low;
                    let label = cx.new_label();
                    let block = cx.f.blocks.alloc(BlockData::default());
                    cx.emit(OpKind::ForEach { var, seq, label, body: block });
                    cx.loop_body(block, label, body);
                });
            }
            StmtKind::Break | StmtKind::Continue => {
                let Some(index) = self.scopes.iter().rposition(|s| matches!(s.kind, ScopeKind::Loop(_))) else {
                    return;
                };
                let ScopeKind::Loop(label) = self.scopes[index].kind else { return };
                self.unwind_to(index);
                if matches!(stmt.kind, StmtKind::Break) {
                    self.broken.insert(label);
                    self.emit(OpKind::Break { label });
                } else {
                    self.emit(OpKind::Continue { label });
                }
            }
            StmtKind::Return(value) => {
                self.temps.push(Vec::new());
                let value = value.as_ref().map(|v| self.operand(v));
                self.unwind_all();
                self.temps.pop();
                let value = self.returned(value);
                self.emit(OpKind::Return { value });
            }
            StmtKind::Scope(block) => self.scope_block(block),
            StmtKind::Transaction(block) => {
                self.runtime_call(RuntimeFn::DbBegin, None, Vec::new(), None);
                // The block's bindings are dropped at the end of its scope, then the commit
                // runs; a `return`, `break` or `continue` inside commits as it leaves.
                self.scoped(ScopeKind::Transaction, |cx| {
                    for stmt in &block.stmts {
                        if !cx.reachable {
                            break;
                        }
                        cx.stmt(stmt);
                    }
                });
                self.runtime_call(RuntimeFn::DbCommit, None, Vec::new(), None);
            }
        }
    }

    /// The body of a `for`: a loop scope in `block`. Code after the loop runs (the loop may
    /// run zero times).
    fn loop_body(&mut self, block: nagi_low::BlockId, label: LabelId, body: &Block) {
        self.arm(block, ScopeKind::Loop(label), body, |_| {});
    }

    /// `if cond { then } [else { els }]`, with `before_then` / `before_else` run at the top of
    /// each arm's scope (used by `if let`), and the arms' ownership states reconciled. An else
    /// arm is emitted when there is an else block or `force_else` asks for one.
    pub(super) fn if_else(
        &mut self,
        cond: Operand,
        then_block: &Block,
        else_block: Option<&Block>,
        force_else: bool,
        before_then: impl FnOnce(&mut Self),
        before_else: impl FnOnce(&mut Self),
    ) {
        let parent = self.cur;
        let empty = Block::default();
        let else_block = else_block.or(force_else.then_some(&empty));
        let (then_id, else_id) = self.emit_if(cond, else_block.is_some());
        let entry = self.state.clone();
        let then_reach = self.arm(then_id, ScopeKind::Block, then_block, before_then);
        let then_state = std::mem::replace(&mut self.state, entry);
        let else_reach = match (else_id, else_block) {
            (Some(id), Some(block)) => self.arm(id, ScopeKind::Block, block, before_else),
            _ => true,
        };
        let else_state = self.state.clone();
        self.merge_arms((then_id, then_reach, then_state), (else_id, else_reach, else_state), parent);
    }

    /// `if let x = value { then } else { els }`: the option is moved into a local of its own;
    /// the then-arm unwraps it into `x`, the else-arm drops it (an empty option owns nothing,
    /// but Low wants every owned local accounted for on every path).
    fn if_let(&mut self, local: usize, value: &crate::tir::Expr, then_block: &Block, else_block: Option<&Block>) {
        let option_ty = self.shared.types.low(&value.ty);
        let copy = option_ty.is_copy();
        let name = self.unique_name("option");
        let option = self.f.locals.alloc(nagi_low::LocalData { name, ty: option_ty });
        if !copy {
            let depth = self.loop_depth();
            self.loop_depth_of.insert(option, depth);
        }
        self.statement(|cx| cx.eval_into(value, option));
        let present = self.temp(Type::Bool);
        self.emit(OpKind::OptionIsSome { dest: present, option });
        let binding = self.bindings[local];
        let bound_copy = self.tir.locals[local].ty.is_copy();
        self.if_else(
            Operand::Local(present),
            then_block,
            else_block,
            !copy,
            |cx| {
                cx.emit(OpKind::OptionUnwrap { dest: binding.low, option });
                if !copy {
                    cx.state.insert(option, Own::Moved);
                }
                if !bound_copy {
                    let depth = cx.loop_depth();
                    cx.loop_depth_of.insert(binding.low, depth);
                    cx.scopes.last_mut().expect("the arm's scope").owned.push(binding.low);
                }
            },
            |cx| {
                if !copy {
                    cx.drop_if_live(option);
                }
            },
        );
        self.state.remove(&option);
    }

    /// `place = value`: the old value (if any) is dropped after the new one is computed, since
    /// the new value may read the old one (`s = s + "x"`).
    fn assign(&mut self, place: &Place, value: &crate::tir::Expr) {
        let copy = value.ty.is_copy();
        let value_span = value.span;
        match place {
            Place::Local(local) => {
                let binding = self.bindings[*local];
                if binding.is_ref {
                    let value = self.operand(value);
                    self.emit(OpKind::Store { reference: binding.low, value });
                } else if copy {
                    self.eval_into(value, binding.low);
                } else {
                    let src = self.operand_local(value);
                    self.drop_if_live(binding.low);
                    self.emit(OpKind::Move { dest: binding.low, src });
                    self.state.insert(src, Own::Moved);
                }
            }
            Place::Field(base, field) => {
                let held = self.in_flight.len();
                let value = self.held_operand(value);
                let object = self.place_base(base, true, value_span);
                self.emit(OpKind::FieldSet { object, field: *field as u32, value });
                self.in_flight.truncate(held);
            }
            Place::Index(base, index) => {
                let held = self.in_flight.len();
                let value = self.held_operand(value);
                let array = self.place_base(base, true, value_span);
                let index = self.operand(index);
                self.emit(OpKind::ArraySet { array, index, value });
                self.in_flight.truncate(held);
            }
        }
    }
}
