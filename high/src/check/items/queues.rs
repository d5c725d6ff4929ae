//! Queues as items: each queue's rules (workers, attempts, backoff, with their defaults) and
//! its handler `run`, checked as a route handler is (it owns its parameters and may fail) with
//! the job, a class, as its first parameter and the attempt's number, an `i64`, as an optional
//! second one.

use super::*;
use crate::check::H426;

/// The workers of a queue that does not say: one, so that jobs run one at a time, in order.
const DEFAULT_WORKERS: u32 = 1;
/// The most workers a queue may have (Low's V254 bound).
const MAX_WORKERS: u64 = 1024;
/// The attempts a job gets when its queue does not say: more than one, so that retries and
/// their backoff happen unless a queue asks otherwise.
const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// The backoff of a queue that does not say, in milliseconds: 1 s after the first failure,
/// doubling up to 5 minutes.
const DEFAULT_BACKOFF_MS: (u64, u64) = (1_000, 300_000);

/// The class of a queue's dead letters, declared by the first queue.
const DEAD_LETTER: &str = "DeadLetter";

impl<'f> Items<'f> {
    /// Declares the class `DeadLetter` that `q.dead_letters()` gives rows of: the job's `id`,
    /// its `attempts`, its `last_error`, and the `job` itself as its JSON text.
    pub(super) fn declare_dead_letter(&mut self, decl: &ast::QueueDecl, diags: &mut Vec<Diagnostic>) {
        let ident = Ident { name: DEAD_LETTER.into(), span: decl.name.span };
        let class = self.declare_class(&ident, decl.span, diags);
        let field = |name: &str, ty: Ty| FieldInfo { name: name.into(), ty: Some(ty) };
        self.classes[class].fields = vec![
            field("id", Ty::I64),
            field("attempts", Ty::I64),
            field("last_error", Ty::String),
            field("job", Ty::String),
        ];
        self.dead_letter = Some(class);
    }

    /// Collects the queue `decl`: its rules and its handler function (Low name `queue.NAME`).
    pub(super) fn collect_queue(&mut self, decl: &'f ast::QueueDecl, diags: &mut Vec<Diagnostic>) {
        let name = &decl.name.name;
        if self.queues.iter().any(|q| q.name == *name) {
            diags.push(error(H207, decl.name.span, format!("queue `{name}` is declared twice"), "declared again here"));
        }
        let mut workers = DEFAULT_WORKERS;
        if let Some((n, span)) = decl.workers {
            match u32::try_from(n) {
                Ok(n) if (1..=MAX_WORKERS).contains(&u64::from(n)) => workers = n,
                _ => diags.push(
                    error(H426, span, format!("a queue has 1 to {MAX_WORKERS} workers, not {n}"), "out of range")
                        .note("workers bound how many of the queue's jobs run at once"),
                ),
            }
        }
        let mut max_attempts = DEFAULT_MAX_ATTEMPTS;
        if let Some((n, span)) = decl.max_attempts {
            match u32::try_from(n) {
                Ok(n) if n >= 1 => max_attempts = n,
                _ => diags.push(
                    error(
                        H426,
                        span,
                        format!("a job gets at least 1 and at most {} attempts, not {n}", u32::MAX),
                        "out of range",
                    )
                    .note("`max_attempts 3` runs a job at most three times before it is dead-lettered"),
                ),
            }
        }
        let mut backoff_ms = DEFAULT_BACKOFF_MS;
        if let Some((min, max, span)) = decl.backoff {
            if min > max {
                diags.push(error(
                    H426,
                    span,
                    format!("the backoff's first delay {min}ms is longer than its longest {max}ms"),
                    "backoff min..max",
                ));
            } else {
                backoff_ms = (min, max);
            }
        }
        let handler = &decl.handler;
        let params = self.collect_params(&handler.params, diags, |_, _| ParamMode::Owned);
        self.check_queue_handler(decl, &params, diags);
        if let Some(ret) = &handler.ret {
            diags.push(
                error(H426, ret.span, "a queue's handler returns no value", "unexpected result type")
                    .note("a job succeeds when `run` returns, and fails when it fails or traps"),
            );
        }
        let idx = self.fns.len();
        self.queues.push(tir::Queue {
            name: name.clone(),
            handler: idx,
            workers,
            max_attempts,
            backoff_ms,
            span: decl.span,
        });
        self.fns.push(FnInfo {
            name: format!("queue.{name}"),
            params,
            ret: Some(Ty::Unit),
            defaults: Vec::new(),
            body: FnBody::Block(&handler.body),
            span: handler.span,
            route: None,
            // Like a route handler, a queue's handler may always fail: its attempt then fails.
            fails: true,
            test: None,
            queue: Some(name.clone()),
        });
    }

    /// The handler's parameters: the job (a class), then optionally the attempt (`i64`), both
    /// owned, neither `inout`, with no default or request source.
    fn check_queue_handler(&self, decl: &ast::QueueDecl, params: &[ParamInfo], diags: &mut Vec<Diagnostic>) {
        let handler = &decl.handler;
        let shape =
            "a queue's handler is `fn run(job: Job)` or `fn run(job: Job, attempt: i64)`, where `Job` is a class";
        if params.is_empty() || params.len() > 2 {
            let at = handler.params.get(2).map_or(handler.name.span, |p| p.span);
            diags.push(
                error(H426, at, format!("`run` takes {} parameters", params.len()), "the job, and the attempt")
                    .note(shape),
            );
        }
        for (i, (param, info)) in handler.params.iter().zip(params).enumerate() {
            if param.inout || param.default.is_some() || param.source.is_some() {
                diags.push(
                    error(H426, param.span, "a queue's handler takes plain parameters", "not allowed here")
                        .note("the runtime gives the handler the job and the attempt's number, nothing else"),
                );
            }
            let fits = match (i, &info.ty) {
                (0, Some(ty)) => matches!(ty, Ty::Class(_)),
                (1, Some(ty)) => *ty == Ty::I64,
                _ => true,
            };
            if !fits && let Some(ty) = &info.ty {
                let what = if i == 0 { "the job, a class" } else { "the attempt's number, an i64" };
                diags.push(
                    error(
                        H426,
                        param.ty.span,
                        format!("parameter `{}` has type `{}`; it is {what}", param.name.name, self.ty_name(ty)),
                        "wrong type",
                    )
                    .note(shape),
                );
            }
        }
    }

    /// The queue called `name`, by index.
    pub fn queue_by_name(&self, name: &str) -> Option<usize> {
        self.queues.iter().position(|q| q.name == name)
    }
}
