//! Lowering of job queues (docs/low.md §8.5): each queue becomes a `queue` declaration whose
//! handler is the lowered `run`, with its parameters named as Low binds a queue's handler
//! (`%body`, the job, and `%attempt`, the attempt's number); `q.push(job, delay)` becomes
//! `queue.push`, which borrows the job; `q.dead_letters()` and `q.retry(id)` become the runtime
//! rows `queue.dead_letters` and `queue.retry`.

use nagi_low::{Constant, FuncId, LocalId, Module, OpKind, Operand, QueueDecl, QueueId, RuntimeFn};

use super::FnCx;
use crate::tir::{Expr, Program};

/// The Low name of parameter `index` of a queue's handler: the job is `%body`, the attempt's
/// number `%attempt` (docs/low.md §8.5), whatever the High names are.
pub(super) const PARAM_NAMES: [&str; 2] = ["body", "attempt"];

/// Declares the program's queues in `module`, in the program's order; the result maps a High
/// queue index to its Low id.
pub(super) fn declare_queues(module: &mut Module, program: &Program, functions: &[FuncId]) -> Vec<QueueId> {
    program
        .queues
        .iter()
        .map(|q| {
            module.queues.alloc(QueueDecl {
                name: q.name.clone(),
                handler: functions[q.handler],
                workers: q.workers,
                max_attempts: q.max_attempts,
                backoff_ms: q.backoff_ms,
                schedule: None,
            })
        })
        .collect()
}

impl FnCx<'_> {
    /// Whether the function being lowered is a queue's handler.
    pub(super) fn is_queue_handler(&self) -> bool {
        let program = self.shared.program;
        program.queues.iter().any(|q| std::ptr::eq(&program.functions[q.handler], self.tir))
    }

    /// `q.push(job[, delay])` into `dest` (the job's id).
    pub(super) fn queue_push(&mut self, queue: usize, job: &Expr, delay: Option<&Expr>, dest: Option<LocalId>) {
        let mut parts = vec![job];
        parts.extend(delay);
        self.pin_clobbered(&parts);
        let job = self.borrow_arg(job);
        let delay = match delay {
            Some(d) => self.operand(d),
            None => Operand::Const(Constant::I64(0)),
        };
        let queue = self.shared.queues[queue];
        self.emit(OpKind::QueuePush { dest, queue, job, delay });
    }

    /// `q.dead_letters()` into `dest`: `rtcall queue.dead_letters<DeadLetter>` of the queue's
    /// name.
    pub(super) fn queue_dead_letters(&mut self, queue: usize, class: usize, dest: LocalId) {
        let name = self.str_temp(self.shared.program.queues[queue].name.clone());
        let class = self.shared.types.classes[class];
        self.runtime_call(RuntimeFn::QueueDeadLetters, Some(dest), vec![Operand::Local(name)], Some(class));
    }

    /// `q.retry(id)` into `dest`: `rtcall queue.retry` of the queue's name and the id.
    pub(super) fn queue_retry(&mut self, queue: usize, id: &Expr, dest: LocalId) {
        let id = self.operand(id);
        let name = self.str_temp(self.shared.program.queues[queue].name.clone());
        self.runtime_call(RuntimeFn::QueueRetry, Some(dest), vec![Operand::Local(name), id], None);
    }
}
