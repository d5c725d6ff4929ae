//! `unreachable`: removes operations that control can never reach, those after an operation
//! that never falls through in the same block.
//!
//! An operation never falls through when it is `return`, `break`, `continue` or `trap`; an
//! `if` whose two arms never fall through; a `loop` that no `break` leaves (it runs forever
//! or returns from inside); or a `block` whose body never falls through and that no `break`
//! leaves. A `for` always may fall through (it may run zero times). This is the verifier's
//! own notion of reachability, so a verified function stays verified: the verifier ignores
//! unreachable operations, and removing them only removes paths.
//!
//! Removing operations can remove the last `break` out of a loop, which makes that loop run
//! forever and what follows it unreachable, so the pass repeats until nothing changes.

use std::collections::HashSet;

use nagi_low::entities::index;
use nagi_low::{ArenaGet, BlockId, FunctionData, LabelId, Module, OpId, OpKind};

use crate::Pass;
use crate::body::preorder;

/// The `unreachable` pass.
pub struct Unreachable;

impl Pass for Unreachable {
    fn name(&self) -> &'static str {
        "unreachable"
    }

    fn description(&self) -> &'static str {
        "removes operations after `return`, `break`, `continue`, `trap` and other operations that never fall through"
    }

    fn run(&self, module: &mut Module) {
        for (_, func) in module.functions.iter_mut() {
            while run_once(func) {}
        }
    }
}

/// One sweep; answers whether it removed anything.
fn run_once(func: &mut FunctionData) -> bool {
    let listed = preorder(func);
    let targeted: HashSet<LabelId> = listed
        .iter()
        .filter_map(|(op, _)| match func.ops.get(*op).map(|d| &d.kind) {
            Some(OpKind::Break { label }) => Some(*label),
            _ => None,
        })
        .collect();
    // Whether each operation never falls through, computed children first: reversed
    // pre-order reaches every operation after everything nested in it.
    let mut diverges = vec![false; func.ops.len()];
    let block_diverges = |b: BlockId, diverges: &[bool]| {
        func.blocks.get(b).is_some_and(|b| b.ops.iter().any(|op| diverges.get(index(*op)).copied().unwrap_or(false)))
    };
    for &(op, _) in listed.iter().rev() {
        let Some(data) = func.ops.get(op) else { continue };
        let d = match &data.kind {
            OpKind::Return { .. } | OpKind::Break { .. } | OpKind::Continue { .. } | OpKind::Trap { .. } => true,
            OpKind::If { then_block, else_block: Some(else_block), .. } => {
                block_diverges(*then_block, &diverges) && block_diverges(*else_block, &diverges)
            }
            OpKind::Loop { label, .. } => !targeted.contains(label),
            OpKind::Block { label, body } => !targeted.contains(label) && block_diverges(*body, &diverges),
            _ => false,
        };
        diverges[index(op)] = d;
    }
    let mut blocks: Vec<BlockId> = listed.iter().map(|(_, b)| *b).collect();
    blocks.push(func.body);
    blocks.sort_by_key(|b| index(*b));
    blocks.dedup();
    let mut changed = false;
    for block in blocks {
        let Some(data) = func.blocks.get(block) else { continue };
        let cut = data.ops.iter().position(|op: &OpId| diverges.get(index(*op)).copied().unwrap_or(false));
        if let Some(at) = cut
            && at + 1 < data.ops.len()
        {
            func.blocks[block].ops.truncate(at + 1);
            changed = true;
        }
    }
    changed
}
