//! Flow-sensitive checks: definite assignment, use after move, overwrites and leaks of owned
//! values, references outliving what they borrow, exclusive `&mut` at call sites, and that
//! every path returns.
//!
//! The analysis is a client of the forward dataflow walk that the passes share
//! ([`crate::dataflow`]), which does the control flow: how `if`, `block`, `loop` and `for` join
//! their paths, that nothing after `break`, `continue`, `return` and `trap` is reachable (so
//! unreachable operations raise no flow errors), and the fixpoint of loop heads. This file
//! gives the state and the transfer function. At each point, each local has a set of possible
//! states (unassigned, live, moved); joining two paths unions the sets, so a local that is
//! live on one path and moved on the other is "maybe moved". Heads only grow and each local has
//! three bits, so the number of walks is bounded; only the last walk, which sees the fixpoint,
//! reports.
//!
//! A moved local also carries, in the state, the operation that moved it (the first in text
//! order where several paths meet), so a use-after-move error names a move that really
//! reaches the use, even one later in a loop body.
//!
//! Which locals a reference may borrow from is computed once, flow-insensitively, from every
//! `borrow`, `field.ref`, `array.ref`, `for` and `copy` that writes a reference: a reference's
//! origins are the owned locals it may point into, and the reference parameters it may derive
//! from (a parameter's referent belongs to the caller, so it is never invalidated, but two
//! arguments derived from one `&mut` parameter still alias).

use std::collections::BTreeMap;

use crate::dataflow::{self, Analysis, Join};
use crate::diagnostic::Diagnostic;
use crate::entities::{ArenaGet, LocalId, OpId, id_at, index};
use crate::facts::Use;
use crate::ops::{OpKind, Operand, ScopeKind};
use crate::types::Type;

use super::structure::Tree;
use super::{FnCx, code, op_label};

/// The local may hold no value yet on some path.
const UNASSIGNED: u8 = 1;
/// The local may hold a value on some path.
const LIVE: u8 = 2;
/// The local may have been moved or dropped (or, for a reference, lost its referent) on some
/// path.
const MOVED: u8 = 4;

/// Why a local may have lost its value: the operation that took it (for a reference, that
/// took the value of the local it borrows from). Ordered by the operation's text position, so
/// where several reasons meet, the first in the text is named.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Reason {
    position: u32,
    how: How,
    /// For a reference: the arena index of the local it borrowed from.
    source: Option<usize>,
    op: OpId,
}

/// The state at one reachable program point.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Point {
    /// For each local (by arena index), which of UNASSIGNED, LIVE and MOVED it may be.
    bits: Vec<u8>,
    /// For each local that may be MOVED (and only those), why. Kept sparse, since few locals
    /// are moved at any point and states are copied at every branch and loop.
    why: BTreeMap<usize, Reason>,
}

impl Join for Point {
    /// Widens `self` to also cover `other`: a local may be whatever it may be on either path,
    /// and where both paths say why it may have lost its value, the first reason in the text
    /// is kept.
    fn join(&mut self, other: &Point) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= *b;
        }
        for (&local, &reason) in &other.why {
            self.why.entry(local).and_modify(|r| *r = (*r).min(reason)).or_insert(reason);
        }
    }
}

/// Runs the alias check and the dataflow on a structurally sound body.
pub(super) fn check(cx: &mut FnCx<'_>, tree: &Tree) {
    let origins = Origins::compute(cx.func, tree.preorder.iter().copied());
    check_aliasing(cx, tree, &origins);
    let (diagnostics, _) = Flow::new(cx, &origins).run(tree);
    cx.diagnostics.extend(diagnostics);
}

/// The flow check of [`check`], also recording each reachable `await` and the owned locals live
/// there ([`super::Suspension`]).
pub(super) fn suspensions(cx: &mut FnCx<'_>, tree: &Tree) -> Vec<super::Suspension> {
    let origins = Origins::compute(cx.func, tree.preorder.iter().copied());
    let mut flow = Flow::new(cx, &origins);
    flow.suspensions = Some(Vec::new());
    let (diagnostics, found) = flow.run(tree);
    cx.diagnostics.extend(diagnostics);
    let mut found = found.unwrap_or_default();
    found.sort_by_key(|s| cx.order.get(index(s.op)).copied().unwrap_or(0));
    found
}

/// The verifier reads the shared borrow origins, over the operations of the body tree.
type Origins = crate::borrows::BorrowOrigins;

/// V244: within one call, a `&mut` argument is the only way to its value.
fn check_aliasing(cx: &mut FnCx<'_>, tree: &Tree, origins: &Origins) {
    for &op in &tree.preorder {
        let Some(data) = cx.func.ops.get(op) else { continue };
        // Runtime functions never consume their arguments; calls move non-copy ones.
        let (args, moves) = match &data.kind {
            OpKind::Call { args, .. } => (args, true),
            OpKind::RuntimeCall { args, .. } => (args, false),
            _ => continue,
        };
        let locals: Vec<LocalId> = args.iter().filter_map(Operand::as_local).filter(|l| cx.ty(*l).is_some()).collect();
        for (i, &a) in locals.iter().enumerate() {
            for &b in &locals[i + 1..] {
                if let Some(message) = alias(cx, origins, a, b, moves) {
                    cx.op_error(code::MUT_ALIAS, op, message);
                }
            }
        }
    }
}

/// Why passing `a` and `b` to one call breaks exclusivity, if it does.
fn alias(cx: &FnCx<'_>, origins: &Origins, a: LocalId, b: LocalId, moves: bool) -> Option<String> {
    let (ta, tb) = (cx.ty(a)?, cx.ty(b)?);
    let exclusive = |t: &Type| matches!(t, Type::Ref { mutable: true, .. });
    if ta.is_ref() && tb.is_ref() {
        if !exclusive(ta) && !exclusive(tb) {
            return None;
        }
        if a == b {
            return Some(format!(
                "passes {} twice; a `&mut` argument must be the only way the callee can reach its value",
                cx.name(a)
            ));
        }
        let common = origins.common(index(a), index(b))?;
        let (m, other) = if exclusive(ta) { (a, b) } else { (b, a) };
        return Some(format!(
            "passes {} (a `&mut`) and {}, which may both reach {}; a `&mut` argument must be the only way \
             the callee can reach its value",
            cx.name(m),
            cx.name(other),
            cx.name(id_at(common))
        ));
    }
    if !moves {
        return None;
    }
    let (reference, owned) = if ta.is_ref() && !tb.is_copy() {
        (a, b)
    } else if tb.is_ref() && !ta.is_copy() {
        (b, a)
    } else {
        return None;
    };
    let borrows = origins.of.get(index(reference)).is_some_and(|o| o.binary_search(&index(owned)).is_ok());
    borrows.then(|| {
        format!(
            "moves {} into the callee while also passing {}, which may borrow from it",
            cx.name(owned),
            cx.name(reference)
        )
    })
}

/// How a local lost its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum How {
    Moved,
    Dropped,
    Reassigned,
    /// Changed in place (`array.push`, `array.set`, `field.set`, `store`, or lent out with
    /// `borrow_mut`, `field.ref_mut`, `array.ref_mut`).
    Mutated,
}

impl How {
    fn word(self) -> &'static str {
        match self {
            How::Moved => "moved",
            How::Dropped => "dropped",
            How::Reassigned => "reassigned",
            How::Mutated => "mutated",
        }
    }
}

/// The verifier's side of the shared dataflow walk ([`crate::dataflow`]): the transfer
/// function of every operation, and the findings of the last walk.
struct Flow<'c, 'a> {
    cx: &'c FnCx<'a>,
    origins: &'c Origins,
    /// Whether each local's type is a copy type (copy locals are never moved).
    copy: Vec<bool>,
    /// The owned arrays that enclosing `for` loops iterate over, innermost last.
    iterating: Vec<usize>,
    /// Whether the current walk is the last, the one whose states are the fixpoint; only it
    /// reports, since earlier walks see loop heads that have not settled yet.
    reporting: bool,
    /// For each local, which bad reads (UNASSIGNED, MOVED) were already reported since it was
    /// last assigned, so one mistake gives one error rather than one per later read.
    reported: Vec<u8>,
    out: Vec<(u32, Diagnostic)>,
    /// When asked for: every `await` of the last walk and what is live there.
    suspensions: Option<Vec<super::Suspension>>,
}

impl<'c, 'a> Flow<'c, 'a> {
    fn new(cx: &'c FnCx<'a>, origins: &'c Origins) -> Flow<'c, 'a> {
        let copy: Vec<bool> = cx.func.locals.values().map(|l| l.ty.is_copy()).collect();
        let n = copy.len();
        Flow {
            cx,
            origins,
            copy,
            iterating: Vec::new(),
            reporting: false,
            reported: vec![0; n],
            out: Vec::new(),
            suspensions: None,
        }
    }

    fn run(mut self, tree: &Tree) -> (Vec<(u32, Diagnostic)>, Option<Vec<super::Suspension>>) {
        let func = self.cx.func;
        // On entry the parameters are live and everything else is unassigned.
        let mut bits = vec![UNASSIGNED; self.copy.len()];
        for &p in &func.params {
            if let Some(state) = bits.get_mut(index(p)) {
                *state = LIVE;
            }
        }
        // Every walk but the last grows at least one loop head (a state bit, or a reason moving
        // to an earlier operation), which bounds the walks; the bound only guards against a
        // bug in a transfer function.
        let loops = tree
            .preorder
            .iter()
            .filter(|&&op| {
                func.ops.get(op).is_some_and(|d| matches!(d.kind.scope_kind(), Some(k) if k != ScopeKind::Block))
            })
            .count();
        let height = func.ops.len().saturating_add(3);
        let limit = loops.saturating_mul(self.copy.len()).saturating_mul(height).saturating_add(2);
        let entry = Point { bits, why: BTreeMap::new() };
        if dataflow::solve(func, entry, &mut self, limit).is_some() {
            let d = self
                .cx
                .end_diagnostic(code::MISSING_RETURN, "control reaches the end of the function without `return`");
            self.out.push(d);
        }
        (self.out, self.suspensions)
    }

    /// Records a finding of the last walk.
    fn report(&mut self, diagnostic: (u32, Diagnostic)) {
        if self.reporting {
            self.out.push(diagnostic);
        }
    }
}

impl Analysis for Flow<'_, '_> {
    type State = Point;

    fn begin_walk(&mut self, last: bool) {
        self.reporting = last;
        self.reported.iter_mut().for_each(|r| *r = 0);
    }

    /// Applies operation `op` to the reachable state `s`. The walk does the control flow; of
    /// `if`, `for` and `return` this sees only what they read on the way in. What each slot
    /// does is the operation's [`Use`] ([`OpKind::for_each_use`]): the uses in operand order,
    /// then the change in place, once every operand has been read, then the suspension of an
    /// `await` (what an `await` takes is taken before the function suspends, so a cancelled
    /// frame drops the pending call, not its arguments), then the write.
    fn op(&mut self, s: &mut Point, op: OpId, kind: &OpKind) {
        // No operation changes more than one local in place.
        let mut mutated = None;
        kind.for_each_use(|local, role| match role {
            Use::Read => self.read(s, op, local),
            Use::Consume => self.consume(s, op, local, How::Moved),
            Use::Drop => self.consume(s, op, local, How::Dropped),
            Use::Mutate => {
                self.read(s, op, local);
                mutated = Some(local);
            }
            // Read at the head of each iteration, by `loop_head`.
            Use::Iterate => {}
        });
        if let Some(local) = mutated {
            self.mutate(s, op, local);
        }
        if kind.is_await() {
            self.suspend(s, op);
        }
        // A `for` writes its variable at the head of each iteration, by `loop_head`.
        if kind.scope_kind().is_none()
            && let Some(dest) = kind.dest()
        {
            self.write(s, op, dest, true);
        }
        if let OpKind::Return { .. } = kind {
            self.check_leaks(s, op);
        }
    }

    fn loop_head(&mut self, s: &mut Point, op: OpId, kind: &OpKind) {
        // The array of a `for` is borrowed for the whole loop, so it must still be live at
        // the head of every iteration, not only on entry.
        let mut iterated = None;
        kind.for_each_use(|local, role| {
            if role == Use::Iterate {
                self.read(s, op, local);
                iterated = Some(local);
            }
        });
        if let Some(var) = kind.dest() {
            self.write(s, op, var, false);
        }
        if let Some(seq) = iterated {
            self.iterating.push(index(seq));
        }
    }

    fn scope_end(&mut self, _: OpId, kind: &OpKind) {
        if matches!(kind, OpKind::ForEach { .. }) {
            self.iterating.pop();
        }
    }
}

impl Flow<'_, '_> {
    /// A read that needs `local` to hold a value but does not take it.
    fn read(&mut self, s: &Point, op: OpId, local: LocalId) {
        let i = index(local);
        let Some(&state) = s.bits.get(i) else { return };
        if state == LIVE {
            return;
        }
        let some_path = if state & LIVE != 0 { " (on some path)" } else { "" };
        if state & MOVED != 0 {
            if self.reported[i] & MOVED == 0 {
                self.reported[i] |= MOVED;
                let message = self.moved_message(i, state, s.why.get(&i));
                self.report(self.cx.op_diagnostic(code::USE_AFTER_MOVE, op, message));
            }
        } else if state & UNASSIGNED != 0 && self.reported[i] & UNASSIGNED == 0 {
            self.reported[i] |= UNASSIGNED;
            let message = format!("{} is read before it is assigned{some_path}", self.cx.name(local));
            self.report(self.cx.op_diagnostic(code::UNASSIGNED_READ, op, message));
        }
    }

    /// A read that takes the value of `local` when its type is not a copy type.
    fn consume(&mut self, s: &mut Point, op: OpId, local: LocalId, how: How) {
        self.read(s, op, local);
        let i = index(local);
        if i >= s.bits.len() || self.copy[i] {
            return;
        }
        s.bits[i] = MOVED;
        s.why.insert(i, self.reason(op, how, None));
        self.invalidate(s, op, i, how);
    }

    fn reason(&self, op: OpId, how: How, source: Option<usize>) -> Reason {
        let position = self.cx.order.get(index(op)).copied().unwrap_or(0);
        Reason { position, how, source, op }
    }

    /// An assignment of `local`; `check` says whether overwriting a live owned value is an
    /// error (it is for every destination, but a `for` variable is written by the loop).
    fn write(&mut self, s: &mut Point, op: OpId, local: LocalId, check: bool) {
        let i = index(local);
        let Some(&state) = s.bits.get(i) else { return };
        if check && !self.copy[i] && state & LIVE != 0 {
            let some_path = if state != LIVE { " (on some path)" } else { "" };
            let message = format!(
                "assigns {} while it still owns a value{some_path}; drop or move it first",
                self.cx.name(local)
            );
            self.report(self.cx.op_diagnostic(code::OVERWRITE, op, message));
        }
        s.bits[i] = LIVE;
        s.why.remove(&i);
        // A new value starts a new life: a later bad read of it is a new mistake.
        self.reported[i] = 0;
        self.invalidate(s, op, i, How::Reassigned);
    }

    /// A change in place through `local`. Through an owned local, every reference into it
    /// becomes unusable (it may point at storage the change frees or moves, as a `push` may);
    /// and no `for` may be iterating over the array being changed, through any path.
    fn mutate(&mut self, s: &mut Point, op: OpId, local: LocalId) {
        let i = index(local);
        let is_ref = self.cx.func.locals.get(local).is_some_and(|l| l.ty.is_ref());
        if !is_ref {
            self.invalidate(s, op, i, How::Mutated);
        }
        let roots: Vec<usize> = if is_ref { self.origins.of.get(i).cloned().unwrap_or_default() } else { vec![i] };
        if let Some(&root) = roots.iter().find(|r| self.iterating.contains(r)) {
            let message = format!(
                "changes {} while a `for` iterates over it; iterate over a copy or collect the changes first",
                self.cx.name(id_at(root))
            );
            self.report(self.cx.op_diagnostic(code::MUTATED_WHILE_ITERATED, op, message));
        }
    }

    /// Marks every reference that may point into `local` as unusable, since `local` lost the
    /// value it held.
    fn invalidate(&self, s: &mut Point, op: OpId, local: usize, how: How) {
        let Some(dependents) = self.origins.dependents.get(local) else { return };
        let reason = self.reason(op, how, Some(local));
        for &r in dependents {
            if let Some(state) = s.bits.get_mut(r)
                && *state & LIVE != 0
            {
                *state = (*state & !LIVE) | MOVED;
                s.why.entry(r).and_modify(|w| *w = (*w).min(reason)).or_insert(reason);
            }
        }
    }

    /// V247, and the record of [`suspensions`]: at an `await`, each owned local owns a value on
    /// every path or on none.
    fn suspend(&mut self, s: &Point, op: OpId) {
        let mut live = Vec::new();
        for (i, &state) in s.bits.iter().enumerate() {
            let local = id_at(i);
            let owned = !self.copy[i] && self.cx.ty(local).is_some_and(|t| !t.is_ref());
            if !owned || state & LIVE == 0 {
                continue;
            }
            if state == LIVE {
                live.push(local);
            } else {
                let message = format!(
                    "{} owns a value at this `await` on some paths only; drop or move it on every path first, \
                     so that a cancelled call knows what to drop",
                    self.cx.name(local)
                );
                self.report(self.cx.op_diagnostic(code::MAYBE_LIVE_AT_AWAIT, op, message));
            }
        }
        if self.reporting
            && let Some(found) = &mut self.suspensions
        {
            found.push(super::Suspension { op, live });
        }
    }

    /// V243: at a `return`, no owned value is left behind.
    fn check_leaks(&mut self, s: &Point, op: OpId) {
        for (i, &state) in s.bits.iter().enumerate() {
            if self.copy[i] || state & LIVE == 0 {
                continue;
            }
            let some_path = if state != LIVE { " (on some path)" } else { "" };
            let message =
                format!("{} still owns a value at `return`{some_path}; drop or move it first", self.cx.name(id_at(i)));
            self.report(self.cx.op_diagnostic(code::LEAK_AT_RETURN, op, message));
        }
    }

    fn moved_message(&self, i: usize, state: u8, why: Option<&Reason>) -> String {
        let name = self.cx.name(id_at(i));
        // "Maybe" when another state is possible too.
        let maybe = state & (LIVE | UNASSIGNED) != 0;
        let Some(kill) = why else {
            return if maybe {
                format!("{name} is used, but on some path it was moved before")
            } else {
                format!("{name} is used after it was moved")
            };
        };
        let by = op_label(self.cx.module, self.cx.func, kill.op).unwrap_or_default();
        let how = kill.how.word();
        match (kill.source, maybe) {
            (None, false) => format!("{name} is used after it was {how} by `{by}`"),
            (None, true) => format!("{name} is used, but on some path it was {how} by `{by}`"),
            (Some(source), false) => format!(
                "{name} is used after its source {} was {how} by `{by}`; a reference is valid only while \
                 what it borrows from keeps its value",
                self.cx.name(id_at(source))
            ),
            (Some(source), true) => format!(
                "{name} is used, but on some path its source {} was {how} by `{by}`; a reference is valid \
                 only while what it borrows from keeps its value",
                self.cx.name(id_at(source))
            ),
        }
    }
}
