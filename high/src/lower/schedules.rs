//! Lowering of scheduled jobs: each becomes a queue whose jobs the runtime pushes itself, one
//! per tick (`queue NAME $NAME__tick … every Pms` or `… cron "…"`, docs/low.md §8.6). Its
//! handler `$NAME__tick(%body: schedule__Tick)` reads the tick's `at` and calls the scheduled
//! function with it (or without, for a function that takes nothing), passing its result (its
//! failure) on; the class `schedule__Tick { at: Time }` is the job. Both names hold `__`, which
//! no High name may, so neither can collide with the program's own.

use nagi_low::{
    ClassData, FieldData, FuncId, FunctionData, LocalData, Module, OpData, OpKind, Operand, QueueDecl, Type,
};

use crate::tir::Program;

/// The Low name of the tick class.
const TICK: &str = "schedule__Tick";

/// The rules of a scheduled job's queue: one attempt at a time, three attempts, and the queues'
/// default backoff (1 s doubling up to 5 minutes).
const WORKERS: u32 = 1;
const MAX_ATTEMPTS: u32 = 3;
const BACKOFF_MS: (u64, u64) = (1_000, 300_000);

/// Declares the tick class, each scheduled job's queue and its handler (defined later by
/// [`define_schedule_handlers`]); the result is each schedule's handler.
pub(super) fn declare_schedules(module: &mut Module, program: &Program, functions: &[FuncId]) -> Vec<FuncId> {
    if program.schedules.is_empty() {
        return Vec::new();
    }
    let tick = module
        .classes
        .alloc(ClassData { name: TICK.to_owned(), fields: vec![FieldData { name: "at".to_owned(), ty: Type::Time }] });
    program
        .schedules
        .iter()
        .map(|schedule| {
            let name = format!("{}__tick", module.functions[functions[schedule.func]].name);
            let mut handler = FunctionData::new(name, Type::Unit);
            // The parameter now, so that the queue's declaration verifies before the body exists.
            let body = handler.locals.alloc(LocalData { name: "body".into(), ty: Type::Class(tick) });
            handler.params.push(body);
            let handler = module.functions.alloc(handler);
            module.queues.alloc(QueueDecl {
                name: schedule.name.clone(),
                handler,
                workers: WORKERS,
                max_attempts: MAX_ATTEMPTS,
                backoff_ms: BACKOFF_MS,
                schedule: Some(schedule.when.clone()),
            });
            handler
        })
        .collect()
}

/// Writes each schedule's handler: `fn $f__tick(%body: schedule__Tick) -> R { %at = field.get
/// %body, 0; %result = [await] call $f([%at]); drop %body; return %result }`, `R` being `$f`'s
/// own result (`Option<unit>` when it may fail).
pub(super) fn define_schedule_handlers(
    module: &mut Module,
    program: &Program,
    functions: &[FuncId],
    handlers: &[FuncId],
) {
    for (schedule, &handler) in program.schedules.iter().zip(handlers) {
        let callee_id = functions[schedule.func];
        let callee = &module.functions[callee_id];
        let (ret, awaited) = (callee.ret.clone(), callee.is_async);
        let out = &mut module.functions[handler];
        out.ret = ret.clone();
        out.is_async = awaited;
        let body = out.params[0];
        let mut ops = Vec::new();
        let mut args = Vec::new();
        if schedule.takes_tick {
            let at = out.locals.alloc(LocalData { name: "at".into(), ty: Type::Time });
            ops.push(OpKind::FieldGet { dest: at, object: body, field: 0 });
            args.push(Operand::Local(at));
        }
        let result = (ret != Type::Unit).then(|| out.locals.alloc(LocalData { name: "result".into(), ty: ret }));
        ops.push(OpKind::Call { dest: result, callee: callee_id, args, awaited });
        ops.push(OpKind::Drop { local: body });
        ops.push(OpKind::Return { value: result.map(Operand::Local) });
        for kind in ops {
            let op = out.ops.alloc(OpData { kind });
            out.blocks[out.body].ops.push(op);
        }
    }
}
