//! Checking of the queue operations: `q.push(job)`, `q.push(job, delay)`, `q.dead_letters()`
//! and `q.retry(id)`, where `q` names a queue that no variable hides. Each is a database
//! statement, so a function that uses one is async and, in a request, a push is part of the
//! request's transaction.

use nagi_syntax::ast::{self, Ident, Span};

use super::expr::mk;
use super::{Body, H211, H426, error};
use crate::tir::{Expr, ExprKind, Ty};

impl Body<'_, '_> {
    /// The queue `e` names (a name no variable hides), by index.
    pub(super) fn queue_named(&self, e: &ast::Expr) -> Option<usize> {
        let ast::ExprKind::Name(id) = &e.kind else { return None };
        if self.lookup(&id.name).is_some() {
            return None;
        }
        self.items.queue_by_name(&id.name)
    }

    /// `q.method(args)` on the queue `queue`. Each is a database statement.
    pub(super) fn queue_method(
        &mut self,
        queue: usize,
        method: &Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let info = &self.items.queues[queue];
        let name = info.name.clone();
        if !matches!(method.name.as_str(), "push" | "dead_letters" | "retry") {
            self.report(
                error(H211, method.span, format!("queue `{name}` has no method `{}`", method.name), "unknown method")
                    .note("a queue has `push(job)`, `push(job, delay)`, `dead_letters()` and `retry(id)`"),
            );
            return None;
        }
        self.effects.db_use.get_or_insert(span);
        if method.name == "dead_letters" {
            let class = self.items.dead_letter?;
            let ty = Ty::Array(Box::new(Ty::Class(class)));
            return self
                .arity("dead_letters", 0, args, span)
                .then(|| mk(ExprKind::QueueDeadLetters { queue, class }, ty, span));
        }
        if method.name == "retry" {
            if !self.arity("retry", 1, args, span) {
                return None;
            }
            let id = self.check_expr(&args[0], &Ty::I64)?;
            return Some(mk(ExprKind::QueueRetry { queue, id: Box::new(id) }, Ty::I64, span));
        }
        let job_ty = self.items.fns[self.items.queues[queue].handler].params.first().and_then(|p| p.ty.clone());
        if args.is_empty() || args.len() > 2 {
            self.report(
                error(H426, span, format!("`{name}.push` takes the job and an optional delay"), "wrong arguments")
                    .note(format!(
                        "write `{name}.push(job)`, or `{name}.push(job, 5s)` to run it no sooner than 5 s from now"
                    )),
            );
            return None;
        }
        let job = match &job_ty {
            Some(ty) => self.check_expr(&args[0], ty),
            None => self.infer(&args[0], None),
        };
        let delay = args.get(1).map(|d| self.check_expr(d, &Ty::I64));
        let delay = match delay {
            Some(d) => Some(Box::new(d?)),
            None => None,
        };
        job_ty.as_ref()?;
        Some(mk(ExprKind::QueuePush { queue, job: Box::new(job?), delay }, Ty::I64, span))
    }
}
