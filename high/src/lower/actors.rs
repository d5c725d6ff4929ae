//! Lowering of actors: `Name.start()` becomes `actor.start $Name.init`, a handler call
//! `a.h(args)` becomes `await actor.call` followed by the test that passes a failure on (or,
//! under `try?`, keeps the option and forgets the failure), and `send a.h(args)` becomes
//! `await actor.send`. The handle is lent to the operation; the arguments are consumed.
//!
//! A message cannot borrow from its sender, so a handler that borrows a parameter (after its
//! state) gets a message function `Name.h__message` in Low that takes it owned, lends it to the
//! handler and drops it after (as a task function does, `lower/tasks.rs`).

use nagi_low::{
    ChildDecl, ChildKind, FuncId, FunctionData, LocalId, Module, OpKind, Operand, RuntimeFn, SupervisorDecl,
    SupervisorId, Type,
};

use super::tasks::owning_wrapper;
use super::{FnCx, Own};
use crate::tir::{Expr, ExprKind, ParamMode, Program, SupervisedChild, Ty};

impl FnCx<'_> {
    /// `Name.start()` of actor `actor` into `dest`.
    pub(super) fn actor_start(&mut self, actor: usize, dest: LocalId) {
        let info = &self.shared.program.actors[actor];
        let init = self.shared.functions[info.init];
        self.emit(OpKind::ActorStart { dest, init, capacity: info.capacity });
    }

    /// The handle (lent), the Low handler and the arguments (consumed) of a message.
    fn message(&mut self, actor: &Expr, handler: usize, args: &[Expr]) -> (LocalId, FuncId, Vec<Operand>) {
        let mut all: Vec<&Expr> = vec![actor];
        all.extend(args);
        self.pin_clobbered(&all);
        let handle = self.borrow_arg(actor);
        let held = self.in_flight.len();
        let operands: Vec<Operand> = args.iter().map(|a| self.held_operand(a)).collect();
        self.in_flight.truncate(held);
        let callee = self.shared.messages[handler].unwrap_or(self.shared.functions[handler]);
        (handle, callee, operands)
    }

    /// `a.h(args)`: its option of the reply, which `none` (the actor has stopped) is.
    fn actor_reply(&mut self, actor: &Expr, handler: usize, args: &[Expr]) -> LocalId {
        let ret = self.low_ty(&self.shared.program.functions[handler].ret);
        let (handle, callee, operands) = self.message(actor, handler, args);
        let result = self.temp(Type::Option(Box::new(ret)));
        self.emit(OpKind::ActorCall { dest: Some(result), actor: handle, handler: callee, args: operands });
        result
    }

    /// `a.h(args)` into `dest` (none for a handler without a result): a failure is passed on.
    pub(super) fn actor_call(&mut self, actor: &Expr, handler: usize, args: &[Expr], dest: Option<LocalId>) {
        let result = self.actor_reply(actor, handler, args);
        self.pass_failure_on(result, dest);
    }

    /// `Tree.child.…` into `dest`: another handle of the supervised actor.
    pub(super) fn supervisor_child(&mut self, tree: usize, path: &[u32], dest: LocalId) {
        let tree = self.shared.supervisors[tree];
        self.emit(OpKind::SupervisorChild { dest, tree, path: path.to_vec() });
    }

    /// The option a failing call of `try?` or `catch` gives: `none` when it failed, having
    /// recorded the failure.
    pub(super) fn handled_call(&mut self, call: &Expr) -> Option<LocalId> {
        Some(match &call.kind {
            ExprKind::ActorCall { actor, handler, args } => self.actor_reply(actor, *handler, args),
            ExprKind::Call { func, args } => self.failing_call_result(*func, args),
            ExprKind::Fetch(fetch) => self.fetch_result(fetch),
            _ => return None,
        })
    }

    /// `send a.h(args)`.
    pub(super) fn send(&mut self, call: &Expr) {
        let ExprKind::ActorCall { actor, handler, args } = &call.kind else { return };
        let (handle, callee, operands) = self.message(actor, *handler, args);
        self.emit(OpKind::ActorSend { actor: handle, handler: callee, args: operands });
    }

    /// `try? call` into `dest`: the call's option, or whether it succeeded for a call without a
    /// result; the failure it recorded is forgotten.
    pub(super) fn try_option(&mut self, call: &Expr, dest: LocalId) {
        let Some(result) = self.handled_call(call) else { return };
        self.runtime_call(RuntimeFn::HttpClearFailure, None, Vec::new(), None);
        if call.ty == Ty::Unit {
            self.emit(OpKind::OptionIsSome { dest, option: result });
        } else if self.f.locals[result].ty.is_copy() {
            self.emit(OpKind::Copy { dest, src: result });
        } else {
            self.emit(OpKind::Move { dest, src: result });
            self.state.insert(result, Own::Moved);
        }
    }
}

/// Allocates the message function of each handler that borrows a parameter after its state,
/// to be written by [`define_message_functions`]; the result maps a High function index to it.
pub(super) fn declare_message_functions(module: &mut Module, program: &Program) -> Vec<Option<FuncId>> {
    let mut messages = vec![None; program.functions.len()];
    for actor in &program.actors {
        for &h in &actor.handlers {
            let function = &program.functions[h];
            let lends = function.params[1..].iter().any(|p| {
                let local = &function.locals[*p];
                matches!(local.kind, crate::tir::LocalKind::Param(ParamMode::Borrowed)) && !local.ty.is_copy()
            });
            if lends {
                let name = format!("{}__message", function.name);
                messages[h] = Some(module.functions.alloc(FunctionData::new(name, Type::Unit)));
            }
        }
    }
    messages
}

/// Writes the message function of each handler that has one: `fn $Name.h__message(&mut
/// state, owned params) -> R { borrow, call $Name.h, drop, return }`.
pub(super) fn define_message_functions(module: &mut Module, functions: &[FuncId], messages: &[Option<FuncId>]) {
    for (h, message) in messages.iter().enumerate() {
        if let Some(message) = *message {
            module.functions[message] =
                owning_wrapper(module, functions[h], &module.functions[message].name, false, true);
        }
    }
}

/// Declares the program's supervisors in Low, each nested one before its parent (Low's order);
/// the result maps a High supervisor index to its Low id.
pub(super) fn declare_supervisors(module: &mut Module, program: &Program, functions: &[FuncId]) -> Vec<SupervisorId> {
    let count = program.supervisors.len();
    let mut low: Vec<Option<SupervisorId>> = vec![None; count];
    for root in 0..count {
        // Children first: an explicit stack of (supervisor, whether its children are placed).
        let mut stack = vec![(root, false)];
        while let Some((index, ready)) = stack.pop() {
            if low[index].is_some() {
                continue;
            }
            let supervisor = &program.supervisors[index];
            if !ready {
                stack.push((index, true));
                for (_, child) in supervisor.children.iter().rev() {
                    if let SupervisedChild::Supervisor(nested) = child {
                        stack.push((*nested, false));
                    }
                }
                continue;
            }
            let children = supervisor
                .children
                .iter()
                .map(|(name, child)| ChildDecl {
                    name: name.clone(),
                    kind: match *child {
                        SupervisedChild::Actor(actor) => {
                            let actor = &program.actors[actor];
                            ChildKind::Actor { init: functions[actor.init], capacity: actor.capacity }
                        }
                        // The checker rejects a cycle, so the children above were placed first.
                        SupervisedChild::Supervisor(nested) => {
                            ChildKind::Supervisor(low[nested].expect("a nested supervisor is placed before its parent"))
                        }
                    },
                })
                .collect();
            low[index] = Some(module.supervisors.alloc(SupervisorDecl {
                name: supervisor.name.clone(),
                strategy: supervisor.strategy,
                intensity: supervisor.intensity,
                period_ms: supervisor.period_ms,
                backoff_ms: supervisor.backoff_ms,
                children,
            }));
        }
    }
    // Every supervisor is a root of the loop above, so every one is placed.
    low.into_iter().map(|id| id.expect("every supervisor is placed")).collect()
}
