//! Where a route handler may commit its request's transaction together with a statement: the
//! rule behind `db.exec_commit`, in one place for the verifier (V248) and the `fuse-commit` pass.
//!
//! A request's writes form one transaction, which the runtime commits when the handler has
//! answered 2xx and rolls back otherwise (docs/http.md). Committing it instead together with a
//! statement, in the same job of the database thread, saves the request a round trip through
//! its worker, and keeps the rule exactly when nothing after that statement can change the
//! answer: no trap, no call, no further statement, no `none` answered 404, and no loop that
//! could run the statement again. [`final_statements`] finds such statements.

use std::collections::HashSet;

use crate::entities::{ArenaGet, BlockId, FuncId, OpId};
use crate::facts::Control;
use crate::module::{FunctionData, Module};
use crate::ops::{OpKind, ScopeKind};
use crate::runtime::RuntimeFn;
use crate::types::Type;

/// The route handlers whose end is the end of their request, answered 2xx whenever they return:
/// no function calls them (a caller would go on after the commit), and their result is not an
/// option (whose `none` answers 404, rolling back). In route order, each once; one walk over
/// the module's calls, however many routes it has.
pub fn committing_handlers(module: &Module) -> Vec<FuncId> {
    let called: HashSet<FuncId> = module
        .functions
        .iter()
        .flat_map(|(_, f)| f.ops.iter())
        .filter_map(|(_, op)| match op.kind {
            OpKind::Call { callee, .. } => Some(callee),
            _ => None,
        })
        .collect();
    let mut handlers: Vec<FuncId> = Vec::new();
    for route in &module.routes {
        let func = route.handler;
        let returns_option = module.functions.get(func).is_none_or(|data| matches!(data.ret, Type::Option(_)));
        if !returns_option && !called.contains(&func) && !handlers.contains(&func) {
            handlers.push(func);
        }
    }
    handlers
}

/// The awaited `db.exec` and `db.exec_commit` operations of `data` after which nothing can fail
/// before the function returns: every operation that may run after one of them (the rest of its
/// block, then the rest of each enclosing block) is one that cannot trap, call, await, branch
/// away or loop ([`cannot_fail`]), and none of its enclosing operations is a loop. In text order.
///
/// This says nothing about the function itself; [`committing_handlers`] does. A function that
/// makes a `Defer` has none: dropping one calls a function, which a `drop` after the statement
/// would then run after the commit.
pub fn final_statements(data: &FunctionData) -> Vec<OpId> {
    if data.ops.iter().any(|(_, op)| matches!(op.kind, OpKind::DeferNew { .. })) {
        return Vec::new();
    }
    let safe = safe_blocks(data);
    let mut found = Vec::new();
    // Each block once: in a verified body each block has one owner, and a corrupt one (the
    // verifier runs this before it has checked the structure) must not make the walk endless.
    let mut seen = vec![false; data.blocks.len()];
    // (block, whether everything after the block's end, up to the return, cannot fail)
    let mut stack = vec![(data.body, true)];
    while let Some((block, after_ok)) = stack.pop() {
        if !first_visit(&mut seen, block) {
            continue;
        }
        let Some(ops) = data.blocks.get(block).map(|b| &b.ops) else { continue };
        let mut suffix_ok = after_ok;
        for &op in ops.iter().rev() {
            let Some(kind) = data.ops.get(op).map(|o| &o.kind) else { continue };
            if suffix_ok && is_statement(kind) {
                found.push(op);
            }
            // A loop's body may run again, statement included.
            let repeats = matches!(kind.scope_kind(), Some(ScopeKind::Loop | ScopeKind::For));
            stack.extend(kind.blocks().map(|child| (child, suffix_ok && !repeats)));
            suffix_ok = suffix_ok && op_ok(kind, &safe);
        }
    }
    found.sort_by_key(|op| crate::entities::index(*op));
    found
}

/// Marks `block` seen; whether it was not seen before (out-of-range blocks count as seen).
fn first_visit(seen: &mut [bool], block: BlockId) -> bool {
    match seen.get_mut(crate::entities::index(block)) {
        Some(slot) if !*slot => {
            *slot = true;
            true
        }
        _ => false,
    }
}

/// An awaited `db.exec` or `db.exec_commit`.
fn is_statement(kind: &OpKind) -> bool {
    matches!(kind, OpKind::RuntimeCall { func: RuntimeFn::DbExec | RuntimeFn::DbExecCommit, awaited: true, .. })
}

/// Whether the operation, with everything nested in it, cannot fail (`safe` says it of blocks).
/// A `break` in a `block`'s body is refused by [`cannot_fail`], so the body runs to its end.
fn op_ok(kind: &OpKind, safe: &[bool]) -> bool {
    cannot_fail(kind) && kind.blocks().all(|b| safe.get(crate::entities::index(b)).copied().unwrap_or(false))
}

/// For every block, by index: whether all its operations, nested ones included, cannot fail.
/// Blocks are computed innermost first with an explicit stack, so that bodies nested thousands
/// deep cannot overflow the compiler's own stack.
fn safe_blocks(data: &FunctionData) -> Vec<bool> {
    let mut safe = vec![false; data.blocks.len()];
    let mut seen = vec![false; data.blocks.len()];
    // (block, whether its nested blocks are done)
    let mut stack = vec![(data.body, false)];
    while let Some((block, children_done)) = stack.pop() {
        if !children_done && !first_visit(&mut seen, block) {
            continue;
        }
        let Some(ops) = data.blocks.get(block).map(|b| &b.ops) else { continue };
        let kinds = || ops.iter().filter_map(|op| ArenaGet::get(&data.ops, *op).map(|o| &o.kind));
        if !children_done {
            stack.push((block, true));
            stack.extend(kinds().flat_map(OpKind::blocks).map(|child| (child, false)));
            continue;
        }
        let ok = kinds().all(|kind| op_ok(kind, &safe));
        if let Some(slot) = safe.get_mut(crate::entities::index(block)) {
            *slot = ok;
        }
    }
    safe
}

/// Whether one operation (not looking into nested blocks) can neither trap, call, await, leave
/// its block other than by returning, nor run something twice. The answer comes from the
/// operation's [`crate::facts::Effects`]; a division counts as trapping whatever its divisor
/// ([`crate::facts::Effects::traps`], not [`OpKind::can_trap`]), as V248 has always read it.
/// Nested blocks are judged by the caller, so `if` and `block` themselves only branch.
pub fn cannot_fail(kind: &OpKind) -> bool {
    let effects = kind.effects();
    !effects.traps && !effects.calls && !effects.awaits && !matches!(effects.control, Control::Repeat | Control::Jump)
}
