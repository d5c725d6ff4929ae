//! The module-level checks of job queues (V254): names are unique, the handler exists and is
//! bound as a route's (`%body`, an owned class, is the job; an `i64` parameter `%attempt` may
//! take the attempt's number; nothing else), and the numbers make sense; a scheduled job's
//! `%body` is its tick (a class of one field `at: Time`) and its period is not zero.

use std::collections::BTreeSet;

use super::code;
use crate::diagnostic::Diagnostic;
use crate::entities::{ArenaGet, ClassId, QueueId};
use crate::module::Module;
use crate::source::SourceMap;
use crate::types::Type;

/// The job class of queue `id`: the class of its handler's `%body`, when it has one.
pub(crate) fn job_class(module: &Module, id: QueueId) -> Option<ClassId> {
    let queue = module.queues.get(id)?;
    let handler = module.functions.get(queue.handler)?;
    handler.params.iter().filter_map(|p| handler.locals.get(*p)).find_map(|p| match p.ty {
        Type::Class(c) if p.name == "body" => Some(c),
        _ => None,
    })
}

/// Every problem of the module's queues.
pub(super) fn check(module: &Module, source: Option<&SourceMap>, out: &mut Vec<Diagnostic>) {
    let span = |id: QueueId| source.and_then(|s| s.queues.get(id).copied());
    let mut names = BTreeSet::new();
    for (id, queue) in module.queues.iter() {
        let name = &queue.name;
        let mut error = |code: &'static str, message: String| {
            out.push(Diagnostic::new(code, format!("in queue {name}: {message}")).at(span(id)));
        };
        if !names.insert(name.as_str()) {
            error(code::DUPLICATE_NAME, "a second queue of this name".into());
        }
        if queue.workers == 0 || queue.workers > 1024 {
            error(code::QUEUE, format!("a queue has 1 to 1024 workers, not {}", queue.workers));
        }
        if queue.max_attempts == 0 {
            error(code::QUEUE, "a job gets at least 1 attempt".into());
        }
        if queue.backoff_ms.0 > queue.backoff_ms.1 {
            let (min, max) = queue.backoff_ms;
            error(code::QUEUE, format!("the backoff's minimum {min}ms is above its maximum {max}ms"));
        }
        let Some(handler) = module.functions.get(queue.handler) else {
            error(code::INVALID_ID, "the handler does not exist".into());
            continue;
        };
        match (job_class(module, id), &queue.schedule) {
            (None, _) => {
                let message = format!("${} takes no %body of a class type, the job it runs", handler.name);
                error(code::QUEUE, message);
            }
            (Some(class), Some(schedule)) => {
                let fields = module.classes.get(class).map(|c| c.fields.as_slice()).unwrap_or(&[]);
                if !matches!(fields, [f] if f.name == "at" && f.ty == Type::Time) {
                    let message = format!(
                        "a scheduled job's %body is a class of one field `at: Time`, the tick, not {}",
                        Type::Class(class).display(module)
                    );
                    error(code::QUEUE, message);
                }
                if let Some(problem) = schedule.problem() {
                    error(code::QUEUE, problem);
                }
            }
            (Some(_), None) => {}
        }
        for p in handler.params.iter().filter_map(|p| handler.locals.get(*p)) {
            let fits = match p.name.as_str() {
                "body" => matches!(p.ty, Type::Class(_)),
                "attempt" => p.ty == Type::I64,
                _ => false,
            };
            if !fits {
                let message = format!(
                    "parameter %{} of ${} has type {}; a queue's handler takes %body (the job, a class) and \
                     optionally %attempt: i64",
                    p.name,
                    handler.name,
                    p.ty.display(module)
                );
                error(code::QUEUE, message);
            }
        }
    }
}
