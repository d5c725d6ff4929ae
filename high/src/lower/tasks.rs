//! Lowering of tasks: a `scope` block becomes `scope.new` … `await scope.end` (also on every
//! `return`, `break` and `continue` that leaves it, so no task outlives the block), `spawn f(…)`
//! becomes `scope.spawn` of `f`'s task function, and `h.join()` becomes `await task.join`.
//! `defer f(…)` becomes `defer.new` of `f`'s owning function into a hidden local that the
//! block's drops then drop: the call runs when the block is left, or when a cancelled frame is
//! dropped.
//!
//! A task cannot borrow from its parent, so each spawned function `f` gets a task function
//! `f__task` in Low (`__` cannot occur in a High name) that owns its arguments: it takes each
//! parameter `f` borrows as an owned value, lends it to `f`, and drops it after the call.

use nagi_low::{FuncId, FunctionData, LocalData, LocalId, Module, OpData, OpKind, Operand, Type};

use super::{FnCx, Own, ScopeKind};
use crate::tir::{Block, Expr};

impl FnCx<'_> {
    /// `scope { block }`.
    pub(super) fn scope_block(&mut self, block: &Block) {
        let name = self.fresh_name("scope");
        let scope = self.f.locals.alloc(LocalData { name, ty: Type::Scope });
        self.emit(OpKind::ScopeNew { dest: scope });
        self.scoped(ScopeKind::Tasks(scope), |cx| {
            for stmt in &block.stmts {
                if !cx.reachable {
                    break;
                }
                cx.stmt(stmt);
            }
        });
        // The block's own bindings (task handles among them) were dropped at its end; a path
        // that left early ended the scope as it left.
        self.end_scope(scope);
    }

    /// `await scope.end` of `scope`, if it still holds its tasks on this path.
    pub(super) fn end_scope(&mut self, scope: LocalId) {
        if self.state.get(&scope) == Some(&Own::Live) {
            self.emit(OpKind::ScopeEnd { scope });
            self.state.insert(scope, Own::Moved);
        }
    }

    /// `spawn f(args)` (or `spawn_blocking`, `blocking`) into `dest`: the arguments are consumed,
    /// as a class literal's fields are.
    pub(super) fn spawn(&mut self, func: usize, args: &[Expr], blocking: bool, dest: LocalId) {
        let Some(scope) = self.scopes.iter().rev().find_map(|s| match s.kind {
            ScopeKind::Tasks(local) => Some(local),
            _ => None,
        }) else {
            return;
        };
        self.pin_clobbered(&args.iter().collect::<Vec<_>>());
        let held = self.in_flight.len();
        let operands: Vec<Operand> = args.iter().map(|a| self.held_operand(a)).collect();
        let wrappers = if blocking { self.shared.blocking } else { self.shared.tasks };
        let callee = wrappers[func].unwrap_or(self.shared.functions[func]);
        self.emit(OpKind::ScopeSpawn { dest, scope, callee, args: operands, blocking });
        self.in_flight.truncate(held);
    }

    /// `defer func(args)`: a hidden `Defer` local of the enclosing scope, dropped (so the call
    /// made) with the scope's other bindings, in reverse declaration order, at its end and on
    /// every `return`, `break` and `continue` that leaves it; a cancelled frame drops it too.
    pub(super) fn defer(&mut self, func: usize, args: &[Expr]) {
        let name = self.fresh_name("defer");
        let dest = self.f.locals.alloc(LocalData { name, ty: Type::Defer });
        let depth = self.loop_depth();
        self.loop_depth_of.insert(dest, depth);
        self.scopes.last_mut().expect("inside a scope").owned.push(dest);
        let callee = self.shared.deferred[func].unwrap_or(self.shared.functions[func]);
        self.statement(|cx| {
            cx.pin_clobbered(&args.iter().collect::<Vec<_>>());
            let held = cx.in_flight.len();
            let operands: Vec<Operand> = args.iter().map(|a| cx.held_operand(a)).collect();
            cx.emit(OpKind::DeferNew { dest, callee, args: operands });
            cx.in_flight.truncate(held);
        });
        self.state.insert(dest, Own::Live);
    }

    /// `handle.join()` into `dest`.
    pub(super) fn join(&mut self, handle: &Expr, dest: LocalId) {
        let task = self.operand_local(handle);
        self.emit(OpKind::TaskJoin { dest: Some(dest), task });
    }
}

/// Allocates the task function of each spawned function (`spawned`, High function indexes),
/// named `f__SUFFIX`, to be written by [`define_task_functions`]; the result maps a High
/// function index to it.
pub(super) fn declare_task_functions(
    module: &mut Module,
    program: &crate::tir::Program,
    spawned: &[usize],
    suffix: &str,
) -> Vec<Option<FuncId>> {
    let mut tasks = vec![None; program.functions.len()];
    for &f in spawned {
        let name = format!("{}__{suffix}", program.functions[f].name);
        tasks[f] = Some(module.functions.alloc(FunctionData::new(name, Type::Unit)));
    }
    tasks
}

/// Writes the task function of each spawned function, now that the functions are lowered:
/// `async fn $f__task(owned params) -> R { borrow, [await] call $f, drop, return }`, or the
/// same plain function for the blocking pool (`is_async` false, `$f__blocking`).
pub(super) fn define_task_functions(
    module: &mut Module,
    functions: &[FuncId],
    tasks: &[Option<FuncId>],
    is_async: bool,
) {
    for (f, task) in tasks.iter().enumerate() {
        if let Some(task) = *task {
            let name = module.functions[task].name.clone();
            module.functions[task] = owning_wrapper(module, functions[f], &name, is_async, false);
        }
    }
}

/// A function named `name` that calls `callee` with the same parameters, except that each one
/// `callee` borrows (after the first, when `keep_first`) it takes as an owned value, lends to
/// `callee` and drops after the call: a task's or a message's entry, which cannot borrow from
/// whoever started it. It is async when `is_async` (and awaits `callee` when that is).
pub(super) fn owning_wrapper(
    module: &Module,
    callee_id: FuncId,
    name: &str,
    is_async: bool,
    keep_first: bool,
) -> FunctionData {
    let callee = &module.functions[callee_id];
    let mut out = FunctionData::new(name.to_owned(), callee.ret.clone());
    out.is_async = is_async;
    let (ret, awaited) = (callee.ret.clone(), callee.is_async);
    // Generated locals are named by position, so no name can collide.
    let params: Vec<(String, Type)> =
        callee.param_types().enumerate().map(|(i, t)| (format!("p{i}"), t.clone())).collect();
    let lent = |i: usize, ty: &Type| ty.is_ref() && !(keep_first && i == 0);
    // The parameters are the first locals (V207), so the borrows are allocated after them all.
    for (i, (name, ty)) in params.iter().enumerate() {
        let owned = match ty {
            Type::Ref { pointee, .. } if lent(i, ty) => (**pointee).clone(),
            other => other.clone(),
        };
        let param = out.locals.alloc(LocalData { name: name.clone(), ty: owned });
        out.params.push(param);
    }
    let mut ops = Vec::new();
    let mut call_args = Vec::new();
    let mut dropped = Vec::new();
    for (i, (name, ty)) in params.iter().enumerate() {
        let param = out.params[i];
        if lent(i, ty) {
            dropped.push(param);
            let borrowed = out.locals.alloc(LocalData { name: format!("{name}r"), ty: ty.clone() });
            ops.push(OpKind::Borrow { dest: borrowed, src: param, mutable: false });
            call_args.push(Operand::Local(borrowed));
        } else {
            call_args.push(Operand::Local(param));
        }
    }
    let result = (ret != Type::Unit).then(|| out.locals.alloc(LocalData { name: "result".into(), ty: ret }));
    ops.push(OpKind::Call { dest: result, callee: callee_id, args: call_args, awaited });
    ops.extend(dropped.into_iter().rev().map(|local| OpKind::Drop { local }));
    ops.push(OpKind::Return { value: result.map(Operand::Local) });
    for kind in ops {
        let op = out.ops.alloc(OpData { kind });
        out.blocks[out.body].ops.push(op);
    }
    out
}
