//! `clone-elim`: a `clone` whose source is dropped before anything else uses it becomes a
//! `move`, and the `drop` goes.
//!
//! The pass looks for `%d = clone %s`, with `%s` an owned local (not a reference: cloning
//! through a reference copies what someone else owns), followed later in the same block by
//! `drop %s`, where the operations in between (and everything nested in them):
//!
//! - do not mention `%s`, nor any reference that may borrow from it (computed as the verifier
//!   does, flow-insensitively through `borrow`, `field.ref`, `array.ref`, `for` and `copy`);
//! - contain no `return`, and no `break` or `continue` that leaves them (a path that leaves
//!   the block early would skip the `drop` and find `%s` moved wherever it goes).
//!
//! Then on every path from the `clone` the next thing that happens to `%s` is the `drop`, so
//! handing the value to `%d` instead of copying it is unobservable, and the verifier's states
//! after the `drop` are unchanged (`%s` is moved either way). This is deliberately local: a
//! source dropped in a later block, or on several paths, is left alone.

use std::collections::HashSet;

use nagi_low::entities::index;
use nagi_low::{ArenaGet, BlockId, FunctionData, LabelId, OpId, OpKind};

use crate::Pass;
use crate::body::{ArenaGetMut, preorder};

/// The `clone-elim` pass.
pub struct CloneElim;

impl Pass for CloneElim {
    fn name(&self) -> &'static str {
        "clone-elim"
    }

    fn description(&self) -> &'static str {
        "turns a `clone` whose owned source is only dropped afterwards into a `move`, and removes the `drop`"
    }

    fn run_function(&self, func: &mut FunctionData) {
        let listed = preorder(func);
        let has_clone =
            listed.iter().any(|(op, _)| matches!(func.ops.get(*op).map(|d| &d.kind), Some(OpKind::Clone { .. })));
        if !has_clone {
            return;
        }
        // The verifier's own borrow origins, so this pass and V241 agree on what a clone's source
        // may be lent to.
        let dependents = nagi_low::borrows::BorrowOrigins::compute(func, listed.iter().map(|(op, _)| *op)).dependents;
        let mut blocks: Vec<BlockId> = listed.iter().map(|(_, b)| *b).collect();
        blocks.push(func.body);
        blocks.sort_by_key(|b| index(*b));
        blocks.dedup();
        for block in blocks {
            let mut i = 0;
            while let Some(&op) = func.blocks.get(block).and_then(|b| b.ops.get(i)) {
                i += 1;
                let Some(OpKind::Clone { dest, src }) = func.ops.get(op).map(|d| d.kind.clone()) else { continue };
                if func.locals.get(src).is_none_or(|l| l.ty.is_ref()) || dest == src {
                    continue;
                }
                let mut watched: HashSet<usize> =
                    dependents.get(index(src)).cloned().unwrap_or_default().into_iter().collect();
                watched.insert(index(src));
                let Some(drop_at) = find_drop(func, block, i, src, &watched) else { continue };
                func.blocks[block].ops.remove(drop_at);
                if let Some(data) = func.ops.get_mut_checked(op) {
                    data.kind = OpKind::Move { dest, src };
                }
            }
        }
    }
}

/// The position in `block`, from `from` on, of the `drop %src` that ends `src`'s life, when
/// nothing before it uses `src` or a reference into it (`watched`) and no path leaves early.
fn find_drop(
    func: &FunctionData,
    block: BlockId,
    from: usize,
    src: nagi_low::LocalId,
    watched: &HashSet<usize>,
) -> Option<usize> {
    let ops = &func.blocks.get(block)?.ops;
    for (at, &op) in ops.iter().enumerate().skip(from) {
        let kind = &func.ops.get(op)?.kind;
        if matches!(kind, OpKind::Drop { local } if *local == src) {
            return Some(at);
        }
        if kind.is_terminator() || !quiet(func, op, watched) {
            return None;
        }
    }
    None
}

/// Whether operation `op` and everything nested in it leave the watched locals alone and
/// cannot leave `op` other than by falling through (a `trap` is fine: nothing follows it).
fn quiet(func: &FunctionData, op: OpId, watched: &HashSet<usize>) -> bool {
    let mut declared: HashSet<LabelId> = HashSet::new();
    let mut jumps: Vec<LabelId> = Vec::new();
    let mut stack = vec![op];
    while let Some(op) = stack.pop() {
        let Some(data) = func.ops.get(op) else { return false };
        let mut touches = false;
        data.kind.for_each_local(|l, _| touches |= watched.contains(&index(l)));
        if touches {
            return false;
        }
        match &data.kind {
            OpKind::Return { .. } => return false,
            OpKind::Break { label } | OpKind::Continue { label } => jumps.push(*label),
            other => declared.extend(other.declared_label()),
        }
        for b in data.kind.blocks() {
            if let Some(block) = func.blocks.get(b) {
                stack.extend(block.ops.iter().copied());
            }
        }
    }
    jumps.iter().all(|l| declared.contains(l))
}
