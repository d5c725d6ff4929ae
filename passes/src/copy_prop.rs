//! `copy-prop`: copy propagation. After `%a = copy %b`, reads of `%a` read `%b` instead, for
//! as long as neither is assigned again on any path.
//!
//! A forward dataflow ([`nagi_low::dataflow`], the walk the verifier's flow checks use) tracks the facts "`%a` holds a copy of `%b`": a
//! `copy` creates one (after its own source was itself replaced, so chains collapse to the
//! first source), and a write of either local ends it. Facts meet at joins and loop heads, so
//! a fact holds only where it holds on every path.
//!
//! Not propagated: copies of `&mut` references (in the emitted Rust, assigning a `&mut` moves
//! it, so reading the source again afterwards would not compile), locals that are ever
//! borrowed mutably (a store through the reference changes them unseen), and the operand of
//! `borrow`, whose result would then point at the other local. The pass leaves the now-unused
//! `copy` to `dce`.

use std::collections::BTreeMap;

use nagi_low::dataflow::{self, Analysis, Join};
use nagi_low::entities::index;
use nagi_low::{FunctionData, LocalId, OpId, OpKind, Slot, Type};

use crate::Pass;
use crate::body::{ArenaGetMut, mutably_borrowed};

/// The `copy-prop` pass.
pub struct CopyProp;

impl Pass for CopyProp {
    fn name(&self) -> &'static str {
        "copy-prop"
    }

    fn description(&self) -> &'static str {
        "after `%a = copy %b`, reads of %a read %b while neither is reassigned"
    }

    fn run_function(&self, func: &mut FunctionData) {
        let borrowed = mutably_borrowed(func);
        let tracked = func
            .locals
            .iter()
            .map(|(id, l)| {
                l.ty.is_copy()
                    && !matches!(l.ty, Type::Ref { mutable: true, .. })
                    && !borrowed.get(index(id)).copied().unwrap_or(true)
            })
            .collect();
        let mut analysis = CopyAnalysis { tracked, last: false, rewrites: Vec::new() };
        // Each walk but the last drops a fact from some loop head, and there are few facts; the
        // bound only guards against a transfer function that is not monotone.
        let max_walks = 64 + func.locals.len();
        dataflow::solve(func, Copies::default(), &mut analysis, max_walks);
        for (op, kind) in analysis.rewrites {
            if let Some(data) = func.ops.get_mut_checked(op) {
                data.kind = kind;
            }
        }
    }
}

/// For each local (by arena index) known to hold a copy of another local: that local.
#[derive(Clone, PartialEq, Default)]
struct Copies(BTreeMap<usize, LocalId>);

impl Join for Copies {
    /// Where two paths meet, a copy fact holds only if it holds on both.
    fn join(&mut self, other: &Self) {
        self.0.retain(|local, source| other.0.get(local) == Some(source));
    }
}

impl Copies {
    /// `local` is assigned: facts about it, either way round, no longer hold.
    fn kill(&mut self, local: LocalId) {
        self.0.remove(&index(local));
        if self.0.values().any(|s| *s == local) {
            self.0.retain(|_, s| *s != local);
        }
    }
}

struct CopyAnalysis {
    /// Whether copies into or out of each local may be tracked.
    tracked: Vec<bool>,
    /// Whether the current walk is the last, whose states are the fixpoint.
    last: bool,
    /// The rewrites found by the last walk.
    rewrites: Vec<(OpId, OpKind)>,
}

impl Analysis for CopyAnalysis {
    type State = Copies;

    fn begin_walk(&mut self, last: bool) {
        self.last = last;
    }

    fn op(&mut self, facts: &mut Copies, op: OpId, kind: &OpKind) {
        let mut replace = false;
        if !matches!(kind, OpKind::Borrow { .. }) && !facts.0.is_empty() {
            kind.for_each_local(|l, slot| replace |= slot == Slot::Read && facts.0.contains_key(&index(l)));
        }
        let rewritten = replace.then(|| {
            let mut new = kind.clone();
            new.for_each_local_mut(|l, slot| {
                if slot == Slot::Read
                    && let Some(source) = facts.0.get(&index(*l))
                {
                    *l = *source;
                }
            });
            new
        });
        let current = rewritten.as_ref().unwrap_or(kind);
        if let Some(dest) = current.dest() {
            facts.kill(dest);
            if let OpKind::Copy { dest, src } = current
                && dest != src
                && self.tracked.get(index(*dest)).copied().unwrap_or(false)
                && self.tracked.get(index(*src)).copied().unwrap_or(false)
            {
                facts.0.insert(index(*dest), *src);
            }
        }
        if let Some(new) = rewritten
            && self.last
        {
            self.rewrites.push((op, new));
        }
    }

    /// A `for` writes its variable at the head of every iteration.
    fn loop_head(&mut self, facts: &mut Copies, _: OpId, kind: &OpKind) {
        if let OpKind::ForRange { var, .. } | OpKind::ForEach { var, .. } = kind {
            facts.kill(*var);
        }
    }
}
