//! The types of `queue.push`: the job is a value or a reference of the queue's job class, the
//! delay an `i64` of milliseconds, the result the job's `i64` id; it belongs in an async
//! function (V225), since it is a database statement.

use super::OpCheck;
use crate::entities::{ArenaGet, ClassId, LocalId, QueueId, index};
use crate::ops::Operand;
use crate::types::Type;
use crate::verifier::code;
use crate::verifier::queues::job_class;

impl<'a> OpCheck<'_, 'a> {
    /// `[%d =] await queue.push NAME, %job, delay`.
    pub(super) fn queue_push(&mut self, dest: Option<LocalId>, queue: QueueId, job: LocalId, delay: &Operand) {
        self.require_async();
        if let Some(found) = self.operand(delay) {
            self.expect("the delay", &found, &Type::I64);
        }
        let found = self.local(job);
        if let Some(d) = dest {
            self.expect_dest(d, &Type::I64);
        }
        let Some(queue_decl) = self.cx.module.queues.get(queue) else {
            let count = self.cx.module.queues.len();
            let message = format!("queue #{} does not exist; the module has {count} queues", index(queue));
            self.error(code::INVALID_ID, message);
            return;
        };
        let Some(class) = job_class(self.cx.module, queue) else { return };
        let is_job = |t: &Type, c: ClassId| matches!(t, Type::Class(x) if *x == c);
        match found {
            Some(Type::Ref { pointee, .. }) if is_job(pointee, class) => {}
            Some(t) if is_job(t, class) => {}
            Some(t) => {
                let message = format!(
                    "the job {} has type {}; queue {} takes {}",
                    self.cx.name(job),
                    self.show(t),
                    queue_decl.name,
                    self.show(&Type::Class(class))
                );
                self.error(code::QUEUE, message);
            }
            None => {}
        }
    }
}
