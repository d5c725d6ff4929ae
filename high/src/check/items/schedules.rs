//! Scheduled jobs as items (docs/language.md §9.11): `schedule f every 1h` and `schedule f at
//! "0 3 * * *"` run the plain function `f` as a job at each tick. `f` takes nothing, or the tick
//! (a `Time`), and returns nothing; it may use the database and fail, as a queue's handler may.
//! Each function is scheduled at most once, and its name (the scheduled job's) is no queue's.

use super::*;
use crate::check::H430;

impl Items<'_> {
    /// Collects the schedule `decl`, once every function is known.
    pub(super) fn collect_schedule(&mut self, decl: &ast::ScheduleDecl, diags: &mut Vec<Diagnostic>) {
        let name = &decl.func.name;
        let Some(&func) = self.fn_by_name.get(name) else {
            diags.push(
                error(H430, decl.func.span, format!("no function `{name}` to schedule"), "not a function")
                    .note("write `schedule f every 1h`, where `fn f()` or `fn f(tick: Time)` is declared"),
            );
            return;
        };
        if self.schedules.iter().any(|s| s.func == func) || self.queues.iter().any(|q| q.name == *name) {
            diags.push(
                error(
                    H430,
                    decl.func.span,
                    format!("`{name}` already names a scheduled job or a queue"),
                    "named twice",
                )
                .note("a scheduled job is named after its function; schedule another function"),
            );
            return;
        }
        let info = &self.fns[func];
        let takes_tick = match info.params.as_slice() {
            [] => false,
            [param] if param.ty == Some(Ty::Time) => true,
            _ => {
                diags.push(
                    error(
                        H430,
                        decl.func.span,
                        format!("`{name}` takes parameters a scheduled job cannot give"),
                        "wrong parameters",
                    )
                    .note(format!("a scheduled function is `fn {name}()` or `fn {name}(tick: Time)`, the tick's time")),
                );
                return;
            }
        };
        if !matches!(info.ret, Some(Ty::Unit) | None) {
            diags.push(
                error(
                    H430,
                    decl.func.span,
                    format!("`{name}` returns a value, which nobody would read"),
                    "has a result",
                )
                .note("a scheduled job succeeds when its function returns, and fails when it fails or traps"),
            );
            return;
        }
        let when = match &decl.when {
            ast::ScheduleWhen::Every(micros, span) => {
                if *micros < 1000 || micros % 1000 != 0 {
                    diags.push(
                        error(
                            H430,
                            *span,
                            "a schedule's period is a whole number of milliseconds, at least 1ms",
                            "not one",
                        )
                        .note("for example `every 30s`, `every 1h`, `every 1d`"),
                    );
                    return;
                }
                nagi_low::Schedule::Every { ms: micros / 1000 }
            }
            ast::ScheduleWhen::At(text, span) => {
                let schedule = nagi_low::Schedule::Cron(text.clone());
                if let Some(problem) = schedule.problem() {
                    diags.push(
                        error(H430, *span, problem, "not a cron expression")
                            .note("five fields in UTC: minute hour day-of-month month day-of-week, as `0 3 * * *`"),
                    );
                    return;
                }
                schedule
            }
        };
        self.schedules.push(tir::Schedule { name: name.clone(), func, takes_tick, when, span: decl.span });
    }
}
