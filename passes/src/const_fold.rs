//! `const-fold`: constant folding and constant propagation, and folding of `if` on a known
//! condition.
//!
//! A forward dataflow ([`nagi_low::dataflow`], the walk the verifier's flow checks use) tracks, at each point, which scalar locals hold a
//! known constant on every path that reaches it: `const` sets the fact, `copy` of a known
//! local copies it, a folded operation sets it, and every other write (including a `for`
//! variable at each iteration) clears it; loops are iterated to a fixpoint, so a local changed
//! anywhere in a loop body is not constant at the loop head. Then:
//!
//! - a read of a known local in an operand slot becomes the constant (`add.i64 %x, 1_i64` with
//!   `%x` known to be 4 reads `add.i64 4_i64, 1_i64`), and `copy` of a known local becomes
//!   `const`;
//! - arithmetic, comparisons and casts on constants are folded with docs/design.md §2's semantics
//!   ([`crate::fold`]); `checked_*` folds to `option.some` or `option.none`. Integer `div` and
//!   `rem` by zero are never folded: the operation stays, and still traps at run time;
//! - `if` on a constant condition is replaced by the arm that runs (or by nothing).
//!
//! Locals that are ever borrowed mutably are never tracked, since a `store` through the
//! reference changes them without naming them. The pass leaves the now-unused `const`
//! operations to `dce`.

use std::collections::BTreeMap;

use nagi_low::dataflow::{self, Analysis, Join};
use nagi_low::entities::index;
use nagi_low::{ArenaGet, Constant, FunctionData, LocalId, OpId, OpKind, Operand, Slot};

use crate::Pass;
use crate::body::{mutably_borrowed, preorder};
use crate::fold::{self, Folded};

/// The `const-fold` pass.
pub struct ConstFold;

impl Pass for ConstFold {
    fn name(&self) -> &'static str {
        "const-fold"
    }

    fn description(&self) -> &'static str {
        "folds constant arithmetic, propagates locals known to hold a constant, and folds `if` on a constant"
    }

    fn run_function(&self, func: &mut FunctionData) {
        let borrowed = mutably_borrowed(func);
        let tracked = func
            .locals
            .iter()
            .map(|(id, l)| l.ty.as_scalar().is_some() && !borrowed.get(index(id)).copied().unwrap_or(true))
            .collect();
        let mut analysis = ConstProp { tracked, last: false, rewrites: Vec::new() };
        // Each walk but the last drops a fact from some loop head, and there are few facts; the
        // bound only guards against a transfer function that is not monotone.
        let max_walks = 64 + func.locals.len();
        dataflow::solve(func, Known::default(), &mut analysis, max_walks);
        for (op, kind) in analysis.rewrites {
            if let Some(data) = crate::body::ArenaGetMut::get_mut_checked(&mut func.ops, op) {
                data.kind = kind;
            }
        }
        fold_branches(func);
    }
}

/// Which scalar locals (by arena index) hold which constant.
#[derive(Clone, PartialEq, Default)]
struct Known(BTreeMap<usize, Constant>);

impl Join for Known {
    /// Where two paths meet, a local is known only if both know the same constant for it.
    fn join(&mut self, other: &Self) {
        self.0.retain(|local, value| other.0.get(local) == Some(value));
    }
}

struct ConstProp {
    /// Whether each local is tracked: a scalar type, and never borrowed mutably.
    tracked: Vec<bool>,
    /// Whether the current walk is the last, whose states are the fixpoint.
    last: bool,
    /// The rewrites found by the last walk.
    rewrites: Vec<(OpId, OpKind)>,
}

impl ConstProp {
    fn known(&self, facts: &Known, o: &Operand) -> Option<Constant> {
        match o {
            Operand::Const(c) => Some(*c),
            Operand::Local(l) => facts.0.get(&index(*l)).copied(),
        }
    }

    fn set(&self, facts: &mut Known, local: LocalId, value: Option<Constant>) {
        let i = index(local);
        match value {
            Some(c) if self.tracked.get(i).copied().unwrap_or(false) => {
                facts.0.insert(i, c);
            }
            _ => {
                facts.0.remove(&i);
            }
        }
    }
}

impl Analysis for ConstProp {
    type State = Known;

    fn begin_walk(&mut self, last: bool) {
        self.last = last;
    }

    fn op(&mut self, facts: &mut Known, op: OpId, kind: &OpKind) {
        // Substitute known constants into operand slots; clone only when something changes.
        let mut rewritten: Option<OpKind> = None;
        let mut reads_known = false;
        kind.for_each_local(|l, slot| reads_known |= slot == Slot::Read && facts.0.contains_key(&index(l)));
        if reads_known {
            let mut probe = kind.clone();
            let mut any = false;
            probe.for_each_operand_mut(|o, _| {
                if let Operand::Local(l) = o
                    && let Some(c) = facts.0.get(&index(*l))
                {
                    *o = Operand::Const(*c);
                    any = true;
                }
            });
            if any {
                rewritten = Some(probe);
            }
        }
        let current = rewritten.as_ref().unwrap_or(kind);
        let folded: Option<OpKind> = match current {
            OpKind::Copy { dest, src } => facts.0.get(&index(*src)).map(|c| OpKind::Const { dest: *dest, value: *c }),
            OpKind::Unary { dest, op, ty, arg } => self
                .known(facts, arg)
                .and_then(|a| fold::unary(*op, *ty, a))
                .map(|value| OpKind::Const { dest: *dest, value }),
            OpKind::Binary { dest, op, ty, lhs: Operand::Const(a), rhs: Operand::Const(b) } => {
                fold::binary(*op, *ty, *a, *b).map(|f| match f {
                    Folded::Value(value) => OpKind::Const { dest: *dest, value },
                    Folded::Checked(Some(v)) => OpKind::OptionSome { dest: *dest, value: Operand::Const(v) },
                    Folded::Checked(None) => OpKind::OptionNone { dest: *dest },
                })
            }
            OpKind::Cast { dest, to, arg: Operand::Const(a) } => {
                fold::cast(*to, *a).map(|value| OpKind::Const { dest: *dest, value })
            }
            _ => None,
        };
        if folded.is_some() {
            rewritten = folded;
        }
        let result = rewritten.as_ref().unwrap_or(kind);
        match result {
            OpKind::Const { dest, value } => self.set(facts, *dest, Some(*value)),
            other => {
                if let Some(dest) = other.dest() {
                    self.set(facts, dest, None);
                }
            }
        }
        if let Some(new) = rewritten
            && self.last
        {
            self.rewrites.push((op, new));
        }
    }

    /// A `for` writes its variable at the head of every iteration.
    fn loop_head(&mut self, facts: &mut Known, _: OpId, kind: &OpKind) {
        if let OpKind::ForRange { var, .. } | OpKind::ForEach { var, .. } = kind {
            facts.0.remove(&index(*var));
        }
    }
}

/// Replaces every `if` on a constant condition by the operations of the arm that runs.
fn fold_branches(func: &mut FunctionData) {
    let listed: Vec<_> = {
        let mut blocks: Vec<_> = preorder(func).into_iter().map(|(_, b)| b).collect();
        blocks.push(func.body);
        blocks.sort_by_key(|b| index(*b));
        blocks.dedup();
        blocks
    };
    for block in listed {
        let Some(data) = func.blocks.get(block) else { continue };
        let has_constant_if = data.ops.iter().any(|&op| constant_if(func, op).is_some());
        if !has_constant_if {
            continue;
        }
        let mut out = Vec::with_capacity(data.ops.len());
        let mut work: Vec<OpId> = data.ops.iter().rev().copied().collect();
        while let Some(op) = work.pop() {
            match constant_if(func, op) {
                Some(taken) => {
                    if let Some(arm) = taken.and_then(|b| func.blocks.get(b)) {
                        work.extend(arm.ops.iter().rev().copied());
                    }
                }
                None => out.push(op),
            }
        }
        func.blocks[block].ops = out;
    }
}

/// For an `if` on a constant condition: the arm that runs (`None` when it has no `else` and
/// the condition is false). `None` for every other operation.
fn constant_if(func: &FunctionData, op: OpId) -> Option<Option<nagi_low::BlockId>> {
    match func.ops.get(op).map(|d| &d.kind) {
        Some(OpKind::If { cond: Operand::Const(Constant::Bool(c)), then_block, else_block }) => {
            Some(if *c { Some(*then_block) } else { *else_block })
        }
        _ => None,
    }
}
