//! Lowering of job queues (docs/low.md §8.5): each queue becomes a `queue` declaration whose
//! handler is the lowered `run`, with its parameters named as Low binds a queue's handler
//! (`%body`, the job, and `%attempt`, the attempt's number); `q.push(job, delay)` becomes
//! `queue.push`, which borrows the job.

use nagi_low::{Constant, FuncId, Module, OpKind, Operand, QueueDecl};

use super::FnCx;
use crate::tir::{Expr, Program};

/// The Low name of parameter `index` of a queue's handler: the job is `%body`, the attempt's
/// number `%attempt` (docs/low.md §8.5), whatever the High names are.
pub(super) const PARAM_NAMES: [&str; 2] = ["body", "attempt"];

/// Declares the program's queues in `module`.
pub(super) fn declare_queues(module: &mut Module, program: &Program, functions: &[FuncId]) {
    module.queues = program
        .queues
        .iter()
        .map(|q| QueueDecl {
            name: q.name.clone(),
            handler: functions[q.handler],
            workers: q.workers,
            max_attempts: q.max_attempts,
            backoff_ms: q.backoff_ms,
        })
        .collect();
}

impl FnCx<'_> {
    /// Whether the function being lowered is a queue's handler.
    pub(super) fn is_queue_handler(&self) -> bool {
        let program = self.shared.program;
        program.queues.iter().any(|q| std::ptr::eq(&program.functions[q.handler], self.tir))
    }

    /// `q.push(job[, delay])` into `dest` (the job's id).
    pub(super) fn queue_push(&mut self, queue: usize, job: &Expr, delay: Option<&Expr>, dest: Option<nagi_low::LocalId>) {
        let mut parts = vec![job];
        parts.extend(delay);
        self.pin_clobbered(&parts);
        let job = self.borrow_arg(job);
        let delay = match delay {
            Some(d) => self.operand(d),
            None => Operand::Const(Constant::I64(0)),
        };
        self.emit(OpKind::QueuePush { dest, queue, job, delay });
    }
}
