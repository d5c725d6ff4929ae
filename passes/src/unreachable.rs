//! `unreachable`: removes operations that control can never reach, those after an operation
//! that never falls through in the same block.
//!
//! An operation never falls through when it is `return`, `break`, `continue` or `trap`; an
//! `if` whose two arms never fall through; a `loop` that no reachable `break` leaves (it runs
//! forever or returns from inside); or a `block` whose body never falls through and that no
//! reachable `break` leaves. A `for` always may fall through (it may run zero times).
//! Reachability is that of the dataflow walk the verifier's flow checks run on
//! ([`nagi_low::dataflow`]), asked with a state that says nothing but "reached", so the two
//! cannot disagree and a verified function stays verified: the verifier ignores unreachable
//! operations, and removing them only removes paths. A `break` after a `return` leaves nothing,
//! so a loop whose only `break`s are unreachable is found endless in the same walk, and what
//! follows it goes too.

use nagi_low::dataflow::{self, Analysis};
use nagi_low::entities::index;
use nagi_low::{ArenaGet, BlockId, FunctionData, OpId, OpKind};

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

    fn run_function(&self, func: &mut FunctionData) {
        let mut reached = Reached { last: false, ops: vec![false; func.ops.len()] };
        // A loop's head is reached exactly when the loop is, so the heads are settled as soon as
        // they are entered and the first walk can be the last.
        dataflow::solve(func, (), &mut reached, 0);
        let mut blocks: Vec<BlockId> = preorder(func).into_iter().map(|(_, b)| b).collect();
        blocks.push(func.body);
        blocks.sort_by_key(|b| index(*b));
        blocks.dedup();
        for block in blocks {
            let Some(data) = func.blocks.get(block) else { continue };
            // In a block that control enters, what it reaches is a prefix; a block it does not
            // enter belongs to an operation that goes as a whole.
            let cut = data.ops.iter().position(|op| !reached.ops.get(index(*op)).copied().unwrap_or(false));
            if let Some(at) = cut
                && at > 0
            {
                func.blocks[block].ops.truncate(at);
            }
        }
    }
}

/// Marks the operations that the last walk reaches.
struct Reached {
    last: bool,
    /// For each operation (by arena index), whether control reaches it.
    ops: Vec<bool>,
}

impl Analysis for Reached {
    type State = ();

    fn begin_walk(&mut self, last: bool) {
        self.last = last;
    }

    fn op(&mut self, _: &mut (), op: OpId, _: &OpKind) {
        if self.last
            && let Some(reached) = self.ops.get_mut(index(op))
        {
            *reached = true;
        }
    }
}
