//! The forward dataflow walk over a function's structured body: the one walk that the
//! verifier's flow checks and every pass that needs dataflow run on, so that they all see the
//! same control flow.
//!
//! A client ([`Analysis`]) says what it knows at a program point (its [`Analysis::State`]) and
//! how each operation changes that; [`solve`] walks the body in text order and does the control
//! flow. `if` joins its two arms (or the arm and the fall-through); `block` exits with the join
//! of its end and its `break`s; `loop` exits with the join of its `break`s only, and `for` with
//! the join of its head (it may run zero times) and its `break`s. After `break`, `continue`,
//! `return` and `trap` nothing is reachable: the rest of the block is skipped, and no
//! unreachable operation is shown to the client.
//!
//! Loop heads are solved by chaotic iteration over whole walks. The head of every `loop` and
//! `for` is the join of everything that has reached it so far (entry, end of body,
//! `continue`s), starting from nothing, and walks repeat until a walk changes no head. Joining
//! only moves up the client's lattice, so heads only go up and a lattice of finite height
//! bounds the number of walks. The walk after the one that changed nothing starts from the
//! same heads and so sees the same states; it is the last, and the client is told so
//! ([`Analysis::begin_walk`]) so that it reports or records only there. A function without a
//! loop is walked once, and that walk is the last. In practice a function with loops takes
//! three or four walks.
//!
//! Everything runs on explicit stacks, so a body nested 5,000 levels deep costs heap, not
//! thread stack. The body must be a tree, as the verifier's structure checks (V210, V211)
//! guarantee before its flow checks run and as every pass may assume of a verified module:
//! ids out of range are skipped, but a block owned twice would be walked twice.

use crate::entities::{ArenaGet, BlockId, LabelId, OpId, index};
use crate::module::FunctionData;
use crate::ops::{OpKind, ScopeKind};

/// A state of an analysis: an element of a join-semilattice.
///
/// Up in the lattice means "claims less about the program", so that a state higher up is true
/// of more executions. For the verifier's flow checks a state is what each local may be
/// (unassigned, live, moved) on some path: up is more possibilities, and join is their union,
/// a may-analysis. For the passes' facts (`%x` holds 4, `%a` is a copy of `%b`), a state is
/// what holds on every path: up is fewer facts, and join keeps the facts both sides share, a
/// must-analysis (whose join is often called "meet", with the lattice drawn the other way up).
/// The walk itself adds a bottom below every state, for points that nothing reaches.
pub trait Join: Clone + PartialEq {
    /// Moves `self` up to the least state that is at or above both `self` and `other`: the
    /// state where two paths meet. It must be idempotent, commutative and associative, as a
    /// lattice join is; the walk relies on that to see the same states in its last walk as in
    /// the walk that found the fixpoint.
    fn join(&mut self, other: &Self);
}

/// The state of a client that only asks which operations are reachable.
impl Join for () {
    fn join(&mut self, _: &()) {}
}

/// One forward analysis: its state, and what each operation does to it.
///
/// For each walk, [`solve`] calls [`Analysis::begin_walk`] first; then, in text order, for each
/// reachable operation: [`Analysis::op`]; for a `loop` or `for`, [`Analysis::loop_head`] once
/// the state at the head is known; and for a `loop`, `for` or `block`, after its body,
/// [`Analysis::scope_end`].
pub trait Analysis {
    /// What the analysis knows at one reachable program point.
    type State: Join;

    /// A walk starts; `last` says whether it is the last one, the one whose states are the
    /// fixpoint. A client that reports or records something does it only in the last walk, so
    /// nothing found in an earlier walk, on heads that had not settled yet, survives.
    fn begin_walk(&mut self, last: bool) {
        let _ = last;
    }

    /// Applies operation `op` (whose kind is `kind`) to `state`, the state just before it.
    /// Called for every reachable operation, control flow included, before the walk applies
    /// the operation's control flow; for `if` this is where its condition is read, for `for`
    /// its bounds or its array on entry (before the loop head), and for `return` its value.
    /// After `break`, `continue`, `return` and `trap`, the walk drops the state whatever this
    /// left in it.
    fn op(&mut self, state: &mut Self::State, op: OpId, kind: &OpKind);

    /// The body of `loop` or `for` operation `op` is entered, and `state` is the state at its
    /// head: the join of the entry and of every way back from the end of the body seen so far.
    /// This runs at the start of every iteration, which is where a `for` writes its variable.
    fn loop_head(&mut self, state: &mut Self::State, op: OpId, kind: &OpKind) {
        let _ = (state, op, kind);
    }

    /// The walk leaves the body of `loop`, `for` or `block` operation `op`, reachable or not
    /// (called once for every `loop_head` and once for every reachable `block`).
    fn scope_end(&mut self, op: OpId, kind: &OpKind) {
        let _ = (op, kind);
    }
}

/// The state at one program point of a walk; `None` where nothing reaches it.
type Point<S> = Option<S>;

/// Joins `other` into `into`, where unreachable is below every state.
fn join<S: Join>(into: &mut Point<S>, other: &Point<S>) {
    let Some(other) = other else { return };
    match into {
        Some(into) => into.join(other),
        None => *into = Some(other.clone()),
    }
}

/// A label being walked, with what reached its `break`s and `continue`s.
struct Scope<S> {
    label: LabelId,
    kind: ScopeKind,
    breaks: Point<S>,
    continues: Point<S>,
}

/// What remains to be done in one walk.
enum Frame<S> {
    /// Walk the operations of `block` from `next` on.
    Ops { block: BlockId, next: usize },
    /// The `then` arm has been walked; walk `else_block` from `entry`, or join with `entry`.
    IfThen { entry: Point<S>, else_block: Option<BlockId> },
    /// The `else` arm has been walked; join with the `then` arm's end.
    IfElse { then_end: Point<S> },
    /// The body of the `loop`, `for` or `block` operation `op` has been walked.
    ScopeEnd { op: OpId },
}

/// Runs `analysis` over the body of `func` from the state `entry` until the loop heads are
/// stable, then once more as the last walk, and answers the state at the end of the body in
/// that walk (`None` when control cannot reach the end). `max_walks` bounds the walks before
/// the last one: heads only go up, so a lattice of finite height needs no bound, and it only
/// guards against a transfer function that is not monotone; when it is reached, the last walk
/// runs on the heads as they are.
pub fn solve<A: Analysis>(func: &FunctionData, entry: A::State, analysis: &mut A, max_walks: usize) -> Point<A::State> {
    let mut heads: Vec<Point<A::State>> = vec![None; func.ops.len()];
    // Without a loop there is no head to settle, so the first walk already sees the fixpoint.
    let has_loop = func.ops.values().any(|d| matches!(d.kind.scope_kind(), Some(ScopeKind::Loop | ScopeKind::For)));
    if has_loop {
        for _ in 0..max_walks {
            analysis.begin_walk(false);
            if !walk(func, &entry, analysis, &mut heads).1 {
                break;
            }
        }
    }
    analysis.begin_walk(true);
    walk(func, &entry, analysis, &mut heads).0
}

/// One walk over the body of `func` from `entry`, on and updating the loop heads `heads` (one
/// entry per operation). Answers the state at the end of the body, and whether a loop head
/// changed at the end of its body, so that another walk is needed.
fn walk<A: Analysis>(
    func: &FunctionData,
    entry: &A::State,
    analysis: &mut A,
    heads: &mut [Point<A::State>],
) -> (Point<A::State>, bool) {
    let mut changed = false;
    let mut scopes: Vec<Scope<A::State>> = Vec::new();
    let mut cur: Point<A::State> = Some(entry.clone());
    let mut frames: Vec<Frame<A::State>> = vec![Frame::Ops { block: func.body, next: 0 }];
    while let Some(frame) = frames.pop() {
        match frame {
            Frame::Ops { block, next } => {
                // The rest of a block after an unreachable point is unreachable too.
                let Some(state) = cur.as_mut() else { continue };
                let Some(&op) = func.blocks.get(block).and_then(|b| b.ops.get(next)) else { continue };
                frames.push(Frame::Ops { block, next: next + 1 });
                let Some(data) = func.ops.get(op) else { continue };
                let kind = &data.kind;
                analysis.op(state, op, kind);
                match kind {
                    OpKind::If { then_block, else_block, .. } => {
                        frames.push(Frame::IfThen { entry: cur.clone(), else_block: *else_block });
                        frames.push(Frame::Ops { block: *then_block, next: 0 });
                    }
                    OpKind::Loop { label, body }
                    | OpKind::Block { label, body }
                    | OpKind::ForRange { label, body, .. }
                    | OpKind::ForEach { label, body, .. } => {
                        let Some(scope) = kind.scope_kind() else { continue };
                        if scope != ScopeKind::Block {
                            enter_head(heads, op, &mut cur);
                            if let Some(state) = cur.as_mut() {
                                analysis.loop_head(state, op, kind);
                            }
                        }
                        scopes.push(Scope { label: *label, kind: scope, breaks: None, continues: None });
                        frames.push(Frame::ScopeEnd { op });
                        frames.push(Frame::Ops { block: *body, next: 0 });
                    }
                    OpKind::Break { label } => {
                        if let Some(scope) = scopes.iter_mut().rev().find(|s| s.label == *label) {
                            join(&mut scope.breaks, &cur);
                        }
                        cur = None;
                    }
                    OpKind::Continue { label } => {
                        // A `continue` to a block is the structure check's error; it goes nowhere.
                        if let Some(scope) = scopes.iter_mut().rev().find(|s| s.label == *label)
                            && scope.kind != ScopeKind::Block
                        {
                            join(&mut scope.continues, &cur);
                        }
                        cur = None;
                    }
                    OpKind::Return { .. } | OpKind::Trap { .. } => cur = None,
                    _ => {}
                }
            }
            Frame::IfThen { entry, else_block } => match else_block {
                Some(else_block) => {
                    frames.push(Frame::IfElse { then_end: cur.take() });
                    cur = entry;
                    frames.push(Frame::Ops { block: else_block, next: 0 });
                }
                None => join(&mut cur, &entry),
            },
            Frame::IfElse { then_end } => join(&mut cur, &then_end),
            Frame::ScopeEnd { op } => {
                if let Some(data) = func.ops.get(op) {
                    analysis.scope_end(op, &data.kind);
                }
                let Some(scope) = scopes.pop() else { continue };
                if scope.kind == ScopeKind::Block {
                    join(&mut cur, &scope.breaks);
                    continue;
                }
                // The end of the body and every `continue` go back to the head.
                let Some(head) = heads.get_mut(index(op)) else { continue };
                let mut grown = head.clone();
                join(&mut grown, &cur);
                join(&mut grown, &scope.continues);
                if grown != *head {
                    changed = true;
                    *head = grown;
                }
                cur = scope.breaks;
                if scope.kind == ScopeKind::For {
                    join(&mut cur, head);
                }
            }
        }
    }
    (cur, changed)
}

/// Joins what reaches the head of loop `op` into its recorded head, and continues from the
/// head.
fn enter_head<S: Join>(heads: &mut [Point<S>], op: OpId, cur: &mut Point<S>) {
    let Some(head) = heads.get_mut(index(op)) else { return };
    join(head, cur);
    *cur = head.clone();
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::entities::LocalId;

    fn function(body: &str) -> FunctionData {
        let text = format!("nagi-low 1\nmodule m\n\nfn $f(%c: bool) -> unit {{\n  let %x: i64\n{body}}}\n");
        let (module, _) = crate::parse(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        module.functions.values().next().expect("one function").clone()
    }

    /// Which locals may have been written on some path: a may-analysis, joined by union.
    #[derive(Clone, PartialEq, Default)]
    struct Written(BTreeSet<LocalId>);

    impl Join for Written {
        fn join(&mut self, other: &Self) {
            self.0.extend(other.0.iter().copied());
        }
    }

    /// Records the walks it is told about and, in the last walk, the operations it sees with
    /// their states.
    #[derive(Default)]
    struct Record {
        walks: Vec<bool>,
        last: bool,
        seen: Vec<(OpId, usize)>,
        heads: Vec<OpId>,
        ends: Vec<OpId>,
    }

    impl Analysis for Record {
        type State = Written;

        fn begin_walk(&mut self, last: bool) {
            self.walks.push(last);
            self.last = last;
        }

        fn op(&mut self, state: &mut Written, op: OpId, kind: &OpKind) {
            if self.last {
                self.seen.push((op, state.0.len()));
            }
            state.0.extend(kind.dest());
        }

        fn loop_head(&mut self, _: &mut Written, op: OpId, _: &OpKind) {
            if self.last {
                self.heads.push(op);
            }
        }

        fn scope_end(&mut self, op: OpId, _: &OpKind) {
            if self.last {
                self.ends.push(op);
            }
        }
    }

    fn run(func: &FunctionData) -> (Record, Option<Written>) {
        let mut record = Record::default();
        let exit = solve(func, Written::default(), &mut record, 100);
        (record, exit)
    }

    /// The text of each operation the last walk saw, with how many locals were written before it.
    fn seen(func: &FunctionData, record: &Record) -> Vec<(String, usize)> {
        let m = crate::Module::new("m");
        record.seen.iter().map(|&(op, n)| (crate::printer::print_op_head(&m, func, op), n)).collect()
    }

    #[test]
    fn a_body_without_loops_is_walked_once_and_that_walk_is_the_last() {
        let func = function("  if %c {\n    %x = const 1_i64\n  }\n  return\n");
        let (record, exit) = run(&func);
        assert_eq!(record.walks, vec![true]);
        assert!(exit.is_none(), "`return` ends every path");
        assert_eq!(
            seen(&func, &record),
            vec![("if %c {".into(), 0), ("%x = const 1_i64".into(), 0), ("return".into(), 1)]
        );
    }

    #[test]
    fn loop_heads_settle_before_the_last_walk_which_is_flagged_once() {
        // The write at the end of the body reaches the head, so the second operation of the
        // body sees it only once the head has grown.
        let func = function("  loop @l {\n    if %c {\n      break @l\n    }\n    %x = const 1_i64\n  }\n  return\n");
        let (record, exit) = run(&func);
        assert_eq!(record.walks.iter().filter(|&&last| last).count(), 1);
        assert_eq!(record.walks.last(), Some(&true));
        assert!(record.walks.len() >= 3, "one walk grows the head, one finds it stable, one is the last");
        assert!(exit.is_none());
        let seen = seen(&func, &record);
        assert_eq!(seen[1], ("if %c {".into(), 1), "the head holds the write from the end of the body");
        assert_eq!(seen.last(), Some(&("return".into(), 1)), "`break` carries the head's state out");
        assert_eq!((record.heads.len(), record.ends.len()), (1, 1));
    }

    #[test]
    fn what_follows_a_jump_or_an_endless_loop_is_unreachable() {
        let func = function(
            "  block @b {\n    break @b\n    %x = const 1_i64\n  }\n  for %x in 0_i64..3_i64 @f {\n  }\n  \
             loop @l {\n  }\n  return\n",
        );
        let (record, exit) = run(&func);
        let texts: Vec<String> = seen(&func, &record).into_iter().map(|(t, _)| t).collect();
        assert_eq!(texts, vec!["block @b {", "break @b", "for %x in 0_i64..3_i64 @f {", "loop @l {"]);
        assert!(exit.is_none(), "nothing leaves the `loop`, so the `return` is unreachable");
    }

    #[test]
    fn bodies_nested_5000_deep_do_not_overflow_the_stack() {
        let depth = 5000;
        let mut body = String::new();
        for i in 0..depth {
            body.push_str(&if i % 2 == 0 { "if %c {\n".to_string() } else { format!("loop @l{i} {{\n") });
        }
        body.push_str("%x = const 1_i64\n");
        for i in (0..depth).rev() {
            body.push_str(&if i % 2 == 0 { "}\n".to_string() } else { format!("break @l{i}\n}}\n") });
        }
        body.push_str("return\n");
        let func = function(&body);
        let (record, _) = run(&func);
        assert_eq!(record.seen.len(), depth + 2 + depth / 2);
        assert_eq!((record.heads.len(), record.ends.len()), (depth / 2, depth / 2));
    }
}
