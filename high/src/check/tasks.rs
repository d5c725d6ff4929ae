//! Checking of structured concurrency: `scope { … }`, `spawn f(args)`, `h.join()` and
//! `sleep(ms)`.
//!
//! The rules (docs/language.md, "Tasks and scopes"): `spawn` appears only inside a `scope` of
//! the same function; it starts a call of a program function that cannot fail and takes no
//! `inout` parameter, whose arguments are consumed like a class literal's fields; its value,
//! the task's handle, is bound with `let`, joined, or dropped (an expression statement), and
//! never stored, copied or passed on. A function with a `scope`, a `join` or a `sleep` is async.

use nagi_syntax::ast::{self, Span};

use super::expr::mk;
use super::{Body, H416, H417, H425, error};
use crate::tir::{Block, Expr, ExprKind, ParamMode, StmtKind, Ty};

impl Body<'_, '_> {
    /// `scope { body }`.
    pub(super) fn scope_stmt(&mut self, body: &ast::Block, span: Span) -> Option<StmtKind> {
        self.effects.suspends.get_or_insert(span);
        if self.transaction_loop_depth.is_some() {
            self.report(
                error(H416, span, "a `scope` cannot run inside a `db.transaction` block", "inside the transaction")
                    .note("a transaction holds the database while it is open; run the tasks before or after it"),
            );
        }
        self.scope_depth += 1;
        let body: Block = self.block(body);
        self.scope_depth -= 1;
        Some(StmtKind::Scope(body))
    }

    /// `spawn call`, or `spawn_blocking call` (`blocking`).
    pub(super) fn spawn(&mut self, call: &ast::Expr, blocking: bool, span: Span) -> Option<Expr> {
        if self.scope_depth == 0 {
            self.report(
                error(H416, span, "`spawn` outside a `scope`", "not inside a scope").note(
                    "a task belongs to the `scope { … }` around it, which waits for it; put the spawn inside one",
                ),
            );
            return None;
        }
        if let ast::ExprKind::Call { callee, .. } = &call.kind
            && self.items.declared_fails(&callee.name)
        {
            self.report(
                error(H417, call.span, format!("`{}` can fail, so it cannot run as a task", callee.name), "can fail")
                    .note("a task has nobody to pass a failure on to; spawn a function that handles it"),
            );
            return None;
        }
        let value = self.infer(call, None)?;
        let ExprKind::Call { func, args } = value.kind else {
            self.report(
                error(H417, call.span, "`spawn` starts a call of a function of the program", "not such a call")
                    .note("write `spawn f(…)`, where `f` is a function of this program or an imported module"),
            );
            return None;
        };
        let info = self.items.fn_info(func);
        if info.params.iter().any(|p| p.mode == ParamMode::Inout) {
            let name = info.name.clone();
            self.report(
                error(
                    H417,
                    call.span,
                    format!("`{name}` has an `inout` parameter, so it cannot run as a task"),
                    "inout",
                )
                .note("a task owns what it is given and cannot write to its parent's values"),
            );
            return None;
        }
        self.effects.spawns.push((func, span, blocking));
        Some(mk(ExprKind::Spawn { func, args, blocking }, Ty::Task(Box::new(value.ty)), span))
    }

    /// `defer call`: `call` is a call of a program function that cannot fail and takes no
    /// `inout` parameter; its arguments are evaluated and consumed here, as a `spawn`'s are.
    /// Whether the function waits is checked once every function's effects are known.
    pub(super) fn defer_stmt(&mut self, call: &ast::Expr, span: Span) -> Option<StmtKind> {
        let not_a_call = |body: &mut Self, span: Span| {
            body.report(
                error(H425, span, "`defer` takes a call of a function of the program", "not such a call").note(
                    "write `defer f(…)`, where `f` is a function of this program or an imported module; to defer \
                     a builtin such as `print`, call it from such a function",
                ),
            );
        };
        let ast::ExprKind::Call { callee, .. } = &call.kind else {
            not_a_call(self, call.span);
            return None;
        };
        if self.items.declared_fails(&callee.name) {
            self.report(
                error(H425, call.span, format!("`{}` can fail, so it cannot be deferred", callee.name), "can fail")
                    .note("a deferred call has nobody to pass a failure on to; defer a function that handles it"),
            );
            return None;
        }
        let value = self.infer(call, None)?;
        let ExprKind::Call { func, args } = value.kind else {
            not_a_call(self, call.span);
            return None;
        };
        let info = self.items.fn_info(func);
        if info.params.iter().any(|p| p.mode == ParamMode::Inout) {
            let name = info.name.clone();
            self.report(
                error(H425, call.span, format!("`{name}` has an `inout` parameter, so it cannot be deferred"), "inout")
                    .note("a deferred call owns what it is given and cannot write to the caller's values"),
            );
            return None;
        }
        self.effects.defers.push((func, span));
        Some(StmtKind::Defer { func, args })
    }

    /// Whether `receiver` is a task handle: a `spawn`, or a variable holding what one gave.
    pub(super) fn is_task(&self, receiver: &ast::Expr) -> bool {
        match &receiver.kind {
            ast::ExprKind::Spawn(_) | ast::ExprKind::SpawnBlocking(_) => true,
            ast::ExprKind::Name(name) => {
                self.lookup(&name.name).is_some_and(|l| matches!(self.locals[l].ty, Ty::Task(_)))
            }
            _ => false,
        }
    }

    /// `handle.join()`, where `handle` is a task.
    pub(super) fn join(&mut self, handle: Expr, args: &[ast::Expr], span: Span) -> Option<Expr> {
        if !self.arity("join", 0, args, span) {
            return None;
        }
        let Ty::Task(result) = handle.ty.clone() else { return None };
        self.effects.suspends.get_or_insert(span);
        Some(mk(ExprKind::Join(Box::new(handle)), *result, span))
    }

    /// Reports a task handle where only a `let`, a `join` or a drop may take one (`what` says
    /// where it went); true when `ty` is not a task.
    pub(super) fn not_a_task(&mut self, ty: &Ty, span: Span, what: &str) -> bool {
        if !matches!(ty, Ty::Task(_)) {
            return true;
        }
        self.report(
            error(H417, span, format!("a task handle cannot be {what}"), "a task handle")
                .note("bind it with `let`, then `join()` it once, or leave it and the scope waits for the task"),
        );
        false
    }
}
