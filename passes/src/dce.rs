//! `dce`: dead code elimination.
//!
//! Removes, until nothing more can go:
//!
//! - operations without effects whose destination nothing reads: `const`, `copy`, arithmetic
//!   and comparisons (integer `div`/`rem` only by a nonzero constant, since by anything else
//!   they may trap), `cast`, `field.get`, `field.ref`, `array.len`, `str.*`, `string`,
//!   `array.new`, `clone`, `borrow`, `load`, `option.none`, `option.is_some`, and `new` /
//!   `option.some` of copy values. Never calls, runtime calls, traps, drops, stores, pushes,
//!   sets, moves, `array.get`/`array.ref` (an index out of range traps) or `option.unwrap`
//!   (an empty option traps);
//! - owned values that are made and then only dropped: a non-parameter local whose every
//!   write is such an operation and whose only reads are `drop`s loses the writes and the
//!   drops together (`%s = string "x"` … `drop %s`);
//! - control flow that does nothing: an `if` with two empty arms, a `block` with an empty
//!   body, and a `for` with an empty body whose variable nothing reads (a `loop` with an empty
//!   body runs forever, so it stays);
//! - locals that no operation mentions any more (parameters stay).
//!
//! Uses are counted over the whole function, not per path, which is enough: a removed
//! operation's destination is read nowhere, so no path can notice.

use nagi_low::entities::index;
use nagi_low::{ArenaGet, BlockId, FunctionData, LocalId, OpId, OpKind, Slot};

use crate::Pass;
use crate::body::{UseCounts, consumes_only_copies, has_effect, preorder, remove_unused_locals};

/// The `dce` pass.
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn description(&self) -> &'static str {
        "removes operations without effects whose results are never read, owned values that are only dropped, empty control flow and unused locals"
    }

    fn run_function(&self, func: &mut FunctionData) {
        // Removing empty control flow can make its condition's writer dead, and the reverse, so
        // the two steps repeat until neither removes anything; each round removes at least one
        // operation, and in practice one or two rounds suffice.
        while remove_dead_values(func) | remove_empty_control(func) {}
        remove_unused_locals(func);
    }
}

/// Removes dead operations and dead owned values; answers whether anything was removed.
fn remove_dead_values(func: &mut FunctionData) -> bool {
    let listed = preorder(func);
    let mut counts = UseCounts::of(func);
    let mut dead = vec![false; func.ops.len()];
    let mut is_param = vec![false; func.locals.len()];
    for p in &func.params {
        if let Some(b) = is_param.get_mut(index(*p)) {
            *b = true;
        }
    }
    let mut drops: Vec<Vec<OpId>> = vec![Vec::new(); func.locals.len()];
    for &(op, _) in &listed {
        if let Some(OpKind::Drop { local }) = func.ops.get(op).map(|d| &d.kind)
            && let Some(list) = drops.get_mut(index(*local))
        {
            list.push(op);
        }
    }
    // Removing an operation lowers the read counts of its operands, which may make their
    // writers dead too; the worklist holds locals whose counts dropped.
    let mut removed = false;
    let mut work: Vec<LocalId> = func.locals.iter().map(|(id, _)| id).collect();
    while let Some(local) = work.pop() {
        let i = index(local);
        if counts.reads[i] != counts.drops[i] || is_param[i] {
            continue;
        }
        let live_defs: Vec<OpId> = counts.defs[i].iter().copied().filter(|op| !dead[index(*op)]).collect();
        let all_removable = live_defs.iter().all(|&op| removable_def(func, op));
        // A value that is dropped needs every write gone with the drops; one that is never
        // read at all loses whichever writes have no effect.
        let live_defs: Vec<OpId> = match (counts.drops[i], all_removable) {
            (0, _) => live_defs.into_iter().filter(|&op| removable_def(func, op)).collect(),
            (_, true) => live_defs,
            (_, false) => continue,
        };
        if live_defs.is_empty() {
            continue;
        }
        // A value that is only dropped: its drops go with its writes.
        for &op in &drops[i] {
            dead[index(op)] = true;
        }
        counts.reads[i] = 0;
        counts.drops[i] = 0;
        for op in live_defs {
            dead[index(op)] = true;
            removed = true;
            if let Some(data) = func.ops.get(op) {
                data.kind.for_each_local(|l, slot| {
                    let j = index(l);
                    if slot == Slot::Read && j < counts.reads.len() {
                        counts.reads[j] = counts.reads[j].saturating_sub(1);
                        work.push(l);
                    }
                });
            }
        }
    }
    if removed {
        let mut blocks: Vec<BlockId> = listed.iter().map(|(_, b)| *b).collect();
        blocks.sort_by_key(|b| index(*b));
        blocks.dedup();
        for block in blocks {
            func.blocks[block].ops.retain(|op| !dead[index(*op)]);
        }
    }
    removed
}

/// Whether `op`, a write of a local nothing reads but drops, may be removed.
fn removable_def(func: &FunctionData, op: OpId) -> bool {
    let Some(data) = func.ops.get(op) else { return false };
    let kind = &data.kind;
    // A `for` writes its variable too, but is control flow; it is handled with empty blocks.
    !has_effect(kind) && consumes_only_copies(func, kind)
}

/// Removes `if`s with two empty arms, `block`s with an empty body, and `for`s with an empty
/// body whose variable is not read, innermost first, so that emptiness propagates outwards.
/// Answers whether anything was removed.
fn remove_empty_control(func: &mut FunctionData) -> bool {
    let listed = preorder(func);
    let counts = UseCounts::of(func);
    let mut removed = false;
    // Reversed pre-order visits children before their parents, so an emptied inner block
    // empties its parent in the same sweep.
    for &(op, block) in listed.iter().rev() {
        let Some(data) = func.ops.get(op) else { continue };
        let empty = |b: BlockId| func.blocks.get(b).is_none_or(|b| b.ops.is_empty());
        let gone = match &data.kind {
            OpKind::If { then_block, else_block, .. } => empty(*then_block) && else_block.is_none_or(empty),
            OpKind::Block { body, .. } => empty(*body),
            OpKind::ForRange { var, body, .. } | OpKind::ForEach { var, body, .. } => {
                empty(*body) && counts.reads.get(index(*var)).copied().unwrap_or(1) == 0
            }
            _ => false,
        };
        if gone && func.blocks.get(block).is_some() {
            func.blocks[block].ops.retain(|o| *o != op);
            removed = true;
        }
    }
    removed
}
