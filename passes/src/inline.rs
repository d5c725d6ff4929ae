//! `inline`: inlines calls of small, non-recursive, non-async functions, bottom-up.
//!
//! The call graph's strongly connected components ([`petgraph::algo::tarjan_scc`]) come out
//! callees first, so each function is inlined into its callers after its own calls were
//! inlined, and its size is measured as it will be copied. A callee is inlined when it has at
//! most [`MAX_OPS`] operations, is not in a cycle of calls (recursion, direct or mutual), is
//! not `async` (its calls are awaited), and its parameters can be bound as described below.
//!
//! A call `%d = call $f(a, b)` becomes `f`'s body, with fresh locals (named `%f_x` after the
//! callee's `%x`) and fresh labels, wrapped in `block @inl_f { … }`:
//!
//! - a parameter the callee never assigns is replaced by the argument local itself, whatever
//!   its type: the callee reads, borrows or consumes it exactly as the call did (a `&mut`
//!   argument stays one reference, which is also what the emitted Rust needs: copying a
//!   `&mut` would move it). A constant argument, or a parameter the callee assigns, gets a
//!   fresh local bound first, with `const`, `copy` (copy types) or `move` (owned values);
//!   a callee that assigns a `&mut` parameter, or copies one, is not inlined;
//! - `return v` becomes `%d = move v` (`copy` for copy types, `const` for a constant) and
//!   `break @inl_f`.
//!
//! When the only `return` is the callee body's last operation, the wrapping block and its
//! `break` are left out and the body is spliced straight in. The callee's verified
//! ownership carries over: at its `return`s it owns nothing but the returned value, which
//! moves into `%d`, so no owned value is left behind or overwritten in the caller.

use std::collections::HashSet;

use la_arena::ArenaMap;
use nagi_low::entities::index;
use nagi_low::{
    ArenaGet, BlockData, BlockId, FuncId, FunctionData, LabelData, LabelId, LocalData, LocalId, Module, OpData, OpId,
    OpKind, Operand, Slot, Type,
};
use petgraph::algo::tarjan_scc;

use crate::Pass;
use crate::body::preorder;
use crate::callgraph::CallGraph;

/// The largest callee, in operations (nested ones included), that is inlined.
pub const MAX_OPS: usize = 12;

/// The `inline` pass.
pub struct Inline;

impl Pass for Inline {
    fn name(&self) -> &'static str {
        "inline"
    }

    fn description(&self) -> &'static str {
        "inlines calls of small non-recursive, non-async functions, callees first"
    }

    fn run(&self, module: &mut Module) {
        let calls = CallGraph::build(module);
        let sccs = tarjan_scc(&calls.graph);
        let mut recursive: ArenaMap<FuncId, ()> = ArenaMap::default();
        for scc in &sccs {
            let cyclic = scc.len() > 1 || calls.graph.contains_edge(scc[0], scc[0]);
            if cyclic {
                for &n in scc {
                    recursive.insert(calls.graph[n], ());
                }
            }
        }
        // `tarjan_scc` lists components in reverse topological order: callees first. Whether
        // a callee may be inlined is decided once, when its first caller is processed, which
        // is after all of its own inlining.
        let mut verdicts: ArenaMap<FuncId, bool> = ArenaMap::default();
        for scc in &sccs {
            for &n in scc {
                inline_into(module, calls.graph[n], &recursive, &mut verdicts);
            }
        }
    }
}

/// Whether `callee` may be inlined at all, whatever the call site.
fn inlinable(module: &Module, callee: FuncId, recursive: &ArenaMap<FuncId, ()>) -> bool {
    let Some(func) = module.functions.get(callee) else { return false };
    // The arenas are canonical between passes, so the arena length is the operation count;
    // checking it first keeps a large callee with many call sites cheap.
    if func.is_async || recursive.contains_idx(callee) || func.ops.len() > MAX_OPS {
        return false;
    }
    let ops = preorder(func);
    if ops.len() > MAX_OPS {
        return false;
    }
    // A `&mut` parameter must be substituted by the argument, so the callee may neither
    // assign it nor copy it (a Rust assignment of a `&mut` moves it).
    for &p in &func.params {
        let Some(local) = func.locals.get(p) else { return false };
        if matches!(local.ty, Type::Ref { mutable: true, .. }) {
            let mut bad = false;
            for &(op, _) in &ops {
                if let Some(data) = func.ops.get(op) {
                    if matches!(data.kind, OpKind::Copy { src, .. } if src == p) {
                        bad = true;
                    }
                    data.kind.for_each_local(|l, slot| bad |= l == p && slot == Slot::Write);
                }
            }
            if bad {
                return false;
            }
        }
    }
    true
}

/// Inlines every eligible call in `caller`.
fn inline_into(
    module: &mut Module,
    caller: FuncId,
    recursive: &ArenaMap<FuncId, ()>,
    verdicts: &mut ArenaMap<FuncId, bool>,
) {
    let Some(func) = module.functions.get(caller) else { return };
    let mut sites: Vec<(OpId, BlockId, FuncId)> = Vec::new();
    for (op, block) in preorder(func) {
        if let Some(OpKind::Call { callee, awaited: false, .. }) = func.ops.get(op).map(|d| &d.kind)
            && *callee != caller
            && *verdicts.entry(*callee).or_insert_with(|| inlinable(module, *callee, recursive))
        {
            sites.push((op, block, *callee));
        }
    }
    if sites.is_empty() {
        return;
    }
    let mut cx = Names::of(func);
    // Callees are cloned (they are small) so that the caller can be edited in place.
    let callees: Vec<FunctionData> = sites.iter().map(|(_, _, c)| module.functions[*c].clone()).collect();
    let func = &mut module.functions[caller];
    for ((op, block, _), callee) in sites.into_iter().zip(&callees) {
        let Some(replacement) = expand(func, op, callee, &mut cx) else { continue };
        let ops = &mut func.blocks[block].ops;
        if let Some(at) = ops.iter().position(|o| *o == op) {
            ops.splice(at..at + 1, replacement);
        }
    }
    // Its callers measure it by its arena length, so drop what the splicing left unlisted.
    crate::body::canonicalize(func);
}

/// The names in use in the caller, so fresh ones can be made.
struct Names {
    locals: HashSet<String>,
    labels: HashSet<String>,
}

impl Names {
    fn of(func: &FunctionData) -> Names {
        Names {
            locals: func.locals.values().map(|l| l.name.clone()).collect(),
            labels: func.labels.values().map(|l| l.name.clone()).collect(),
        }
    }
}

/// `base` if it is free in `taken`, else `base_2`, `base_3`, …; the name is then taken.
fn fresh(base: &str, taken: &mut HashSet<String>) -> String {
    if taken.insert(base.to_string()) {
        return base.to_string();
    }
    let mut n = 2u32;
    loop {
        let candidate = format!("{base}_{n}");
        if taken.insert(candidate.clone()) {
            return candidate;
        }
        n += 1;
    }
}

/// Copies `callee`'s body into `func` for the call `call`, and answers the operations that
/// replace the call in its block; `None` when the call cannot be inlined as written.
fn expand(func: &mut FunctionData, call: OpId, callee: &FunctionData, names: &mut Names) -> Option<Vec<OpId>> {
    let OpKind::Call { dest, args, .. } = func.ops.get(call).map(|d| d.kind.clone())? else { return None };
    if args.len() != callee.params.len() {
        return None;
    }
    let callee_ops = preorder(callee);
    let mut assigned = vec![false; callee.locals.len()];
    for &(op, _) in &callee_ops {
        if let Some(data) = callee.ops.get(op) {
            data.kind.for_each_local(|l, slot| {
                if slot == Slot::Write
                    && let Some(a) = assigned.get_mut(index(l))
                {
                    *a = true;
                }
            });
        }
    }

    // A `&mut` parameter cannot be bound to a fresh local (see the module doc); check before
    // anything is allocated, so that a refusal leaves the caller untouched.
    for (&param, arg) in callee.params.iter().zip(&args) {
        let substituted = matches!(arg, Operand::Local(_)) && !assigned.get(index(param)).copied().unwrap_or(true);
        if !substituted && matches!(callee.locals.get(param)?.ty, Type::Ref { mutable: true, .. }) {
            return None;
        }
    }

    // Locals: parameters substituted or bound, the others fresh.
    let mut local_map: ArenaMap<LocalId, LocalId> = ArenaMap::default();
    let mut bindings: Vec<OpKind> = Vec::new();
    for (&param, arg) in callee.params.iter().zip(&args) {
        let ty = &callee.locals.get(param)?.ty;
        match arg {
            Operand::Local(a) if !assigned.get(index(param)).copied().unwrap_or(true) => {
                local_map.insert(param, *a);
            }
            _ => {
                let name = fresh(&format!("{}_{}", plain(&callee.name), callee.locals[param].name), &mut names.locals);
                let fresh_local = func.locals.alloc(LocalData { name, ty: ty.clone() });
                local_map.insert(param, fresh_local);
                bindings.push(match arg {
                    Operand::Const(value) => OpKind::Const { dest: fresh_local, value: *value },
                    Operand::Local(a) if ty.is_copy() => OpKind::Copy { dest: fresh_local, src: *a },
                    Operand::Local(a) => OpKind::Move { dest: fresh_local, src: *a },
                });
            }
        }
    }
    for (id, local) in callee.locals.iter() {
        if !local_map.contains_idx(id) {
            let name = fresh(&format!("{}_{}", plain(&callee.name), local.name), &mut names.locals);
            local_map.insert(id, func.locals.alloc(LocalData { name, ty: local.ty.clone() }));
        }
    }
    let mut label_map: ArenaMap<LabelId, LabelId> = ArenaMap::default();
    for (id, label) in callee.labels.iter() {
        let name = fresh(&label.name, &mut names.labels);
        label_map.insert(id, func.labels.alloc(LabelData { name }));
    }
    let exit_name = fresh(&format!("inl_{}", plain(&callee.name)), &mut names.labels);
    let exit = func.labels.alloc(LabelData { name: exit_name });

    // Blocks: the callee's body maps to the wrapper's body, every other block to a new one.
    let wrapper_body = func.blocks.alloc(BlockData::default());
    let mut block_map: ArenaMap<BlockId, BlockId> = ArenaMap::default();
    block_map.insert(callee.body, wrapper_body);
    for &(op, _) in &callee_ops {
        for b in callee.ops.get(op).into_iter().flat_map(|d| d.kind.blocks()) {
            block_map.insert(b, func.blocks.alloc(BlockData::default()));
        }
    }
    for kind in bindings {
        let id = func.ops.alloc(OpData { kind });
        func.blocks[wrapper_body].ops.push(id);
    }

    // Operations, in text order, so each block's list comes out in order.
    let last_top_level = callee.blocks.get(callee.body).and_then(|b| b.ops.last().copied());
    let mut returns = 0usize;
    for &(op, parent) in &callee_ops {
        let mut kind = callee.ops.get(op)?.kind.clone();
        kind.for_each_local_mut(|l, _| {
            if let Some(&m) = local_map.get(*l) {
                *l = m;
            }
        });
        remap_structure(&mut kind, &label_map, &block_map)?;
        let target = *block_map.get(parent)?;
        let new_ops: Vec<OpKind> = match kind {
            OpKind::Return { value } => {
                returns += 1;
                let mut v = Vec::new();
                if let Some(d) = dest {
                    let d_copy = func.locals.get(d).is_some_and(|l| l.ty.is_copy());
                    match value {
                        None => v.push(OpKind::Const { dest: d, value: nagi_low::Constant::Unit }),
                        Some(Operand::Const(c)) => v.push(OpKind::Const { dest: d, value: c }),
                        Some(Operand::Local(l)) if l == d => {}
                        Some(Operand::Local(l)) if d_copy => v.push(OpKind::Copy { dest: d, src: l }),
                        Some(Operand::Local(l)) => v.push(OpKind::Move { dest: d, src: l }),
                    }
                }
                v.push(OpKind::Break { label: exit });
                v
            }
            other => vec![other],
        };
        for kind in new_ops {
            let id = func.ops.alloc(OpData { kind });
            func.blocks[target].ops.push(id);
        }
    }

    // The `break` that ends the body is a fall-through; when it is the only one, the block
    // goes too and the body is spliced in place of the call.
    let ends_in_return =
        last_top_level.and_then(|op| callee.ops.get(op)).is_some_and(|d| matches!(d.kind, OpKind::Return { .. }));
    if ends_in_return {
        let body = &mut func.blocks[wrapper_body].ops;
        if body.last().is_some_and(|&op| matches!(func.ops[op].kind, OpKind::Break { label } if label == exit)) {
            body.pop();
        }
        if returns == 1 {
            return Some(std::mem::take(&mut func.blocks[wrapper_body].ops));
        }
    }
    let block = func.ops.alloc(OpData { kind: OpKind::Block { label: exit, body: wrapper_body } });
    Some(vec![block])
}

/// Renames the labels and blocks an operation declares, owns or jumps to.
fn remap_structure(
    kind: &mut OpKind,
    labels: &ArenaMap<LabelId, LabelId>,
    blocks: &ArenaMap<BlockId, BlockId>,
) -> Option<()> {
    if let Some(label) = kind.label_mut() {
        *label = *labels.get(*label)?;
    }
    for block in kind.blocks_mut() {
        *block = *blocks.get(*block)?;
    }
    Some(())
}

/// A function's name as part of a local or label name, which are plain names: the `.` of a
/// qualified name (`accounts.find`, a module's function) becomes `_`.
fn plain(name: &str) -> String {
    name.replace('.', "_")
}
