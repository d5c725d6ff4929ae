//! A forward "must" dataflow over a structured function body, shared by the passes that
//! propagate facts (constants, copies).
//!
//! The walk mirrors the verifier's flow check: `if` meets its two arms (or the arm and the
//! fall-through), `block` exits with the meet of its end and its `break`s, `loop` with the meet
//! of its `break`s, and `for` with the meet of its head (it may run zero times) and its
//! `break`s; after `break`, `continue`, `return` and `trap` nothing is reachable. A fact holds
//! at a point only when it holds on every path that reaches it, so meeting keeps the facts
//! two states share.
//!
//! Loop heads are solved by repeating whole walks: every head is the meet of everything that
//! reached it so far (entry, end of body, `continue`s), starting from the entry alone, and
//! walks repeat until no head shrinks. Heads only shrink and facts are finite, so this ends;
//! the analysis records what it wants to rewrite afresh in each walk, and the last walk (the
//! one that saw the fixpoint) is the one whose records stand. Everything runs on explicit
//! stacks, so deeply nested bodies cannot overflow the thread's stack.

use nagi_low::entities::index;
use nagi_low::{ArenaGet, BlockId, FunctionData, LabelId, OpId, OpKind};

/// Facts that hold at a program point.
pub trait Facts: Clone + PartialEq {
    /// Keeps only the facts that also hold in `other`.
    fn meet(&mut self, other: &Self);
}

/// What one analysis does at each operation.
pub trait Analysis {
    /// What the analysis knows at a point.
    type Facts: Facts;

    /// A walk of the body starts: forget what the previous walk recorded.
    fn begin_walk(&mut self);

    /// Applies operation `op` to `facts`. Called for every reachable operation; for `if` (its
    /// condition), `for` (its bounds or sequence, before the loop head) and `return` (its
    /// value) it sees only the reads, since the walk handles their control flow. The analysis
    /// may record a rewrite of `op` here.
    fn op(&mut self, facts: &mut Self::Facts, op: OpId, kind: &OpKind);

    /// The loop variable `var` of a `for` is written at the head of each iteration.
    fn loop_var(&mut self, facts: &mut Self::Facts, var: nagi_low::LocalId);
}

/// The facts at one point; `None` where the point is unreachable.
type State<F> = Option<F>;

fn meet<F: Facts>(into: &mut State<F>, other: &State<F>) {
    let Some(other) = other else { return };
    match into {
        Some(into) => into.meet(other),
        None => *into = Some(other.clone()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ScopeKind {
    Block,
    Loop,
    For,
}

struct Scope<F> {
    label: LabelId,
    kind: ScopeKind,
    breaks: State<F>,
    continues: State<F>,
}

enum Frame<F> {
    Ops { block: BlockId, next: usize },
    IfThen { entry: State<F>, else_block: Option<BlockId> },
    IfElse { then_end: State<F> },
    ScopeEnd { op: OpId },
}

/// Runs `analysis` over `func` from `entry` until the loop heads are stable; what the
/// analysis recorded in its last walk is the result.
pub fn solve<A: Analysis>(func: &FunctionData, entry: A::Facts, analysis: &mut A) {
    let mut heads: Vec<State<A::Facts>> = vec![None; func.ops.len()];
    // Each walk but the last shrinks some head; the cap only guards against a transfer
    // function that is not monotone, and the last walk's records are sound regardless of
    // whether the cap was hit, because every head then covers what reached it.
    let cap = 64 + func.locals.len();
    for _ in 0..cap {
        analysis.begin_walk();
        if !walk(func, &entry, analysis, &mut heads) {
            return;
        }
    }
    analysis.begin_walk();
    walk(func, &entry, analysis, &mut heads);
}

/// One walk; answers whether a loop head changed.
fn walk<A: Analysis>(func: &FunctionData, entry: &A::Facts, a: &mut A, heads: &mut [State<A::Facts>]) -> bool {
    let mut changed = false;
    let mut scopes: Vec<Scope<A::Facts>> = Vec::new();
    let mut cur: State<A::Facts> = Some(entry.clone());
    let mut frames: Vec<Frame<A::Facts>> = vec![Frame::Ops { block: func.body, next: 0 }];
    while let Some(frame) = frames.pop() {
        match frame {
            Frame::Ops { block, next } => {
                if cur.is_none() {
                    continue;
                }
                let Some(&op) = func.blocks.get(block).and_then(|b| b.ops.get(next)) else { continue };
                frames.push(Frame::Ops { block, next: next + 1 });
                let Some(data) = func.ops.get(op) else { continue };
                let kind = &data.kind;
                let Some(facts) = cur.as_mut() else { continue };
                match kind {
                    OpKind::If { then_block, else_block, .. } => {
                        a.op(facts, op, kind);
                        frames.push(Frame::IfThen { entry: cur.clone(), else_block: *else_block });
                        frames.push(Frame::Ops { block: *then_block, next: 0 });
                    }
                    OpKind::Block { label, body } => {
                        scopes.push(Scope { label: *label, kind: ScopeKind::Block, breaks: None, continues: None });
                        frames.push(Frame::ScopeEnd { op });
                        frames.push(Frame::Ops { block: *body, next: 0 });
                    }
                    OpKind::Loop { label, body } => {
                        enter_head(heads, op, &mut cur);
                        scopes.push(Scope { label: *label, kind: ScopeKind::Loop, breaks: None, continues: None });
                        frames.push(Frame::ScopeEnd { op });
                        frames.push(Frame::Ops { block: *body, next: 0 });
                    }
                    OpKind::ForRange { var, label, body, .. } | OpKind::ForEach { var, label, body, .. } => {
                        a.op(facts, op, kind);
                        enter_head(heads, op, &mut cur);
                        if let Some(facts) = cur.as_mut() {
                            a.loop_var(facts, *var);
                        }
                        scopes.push(Scope { label: *label, kind: ScopeKind::For, breaks: None, continues: None });
                        frames.push(Frame::ScopeEnd { op });
                        frames.push(Frame::Ops { block: *body, next: 0 });
                    }
                    OpKind::Break { label } => {
                        if let Some(scope) = scopes.iter_mut().rev().find(|s| s.label == *label) {
                            meet(&mut scope.breaks, &cur);
                        }
                        cur = None;
                    }
                    OpKind::Continue { label } => {
                        if let Some(scope) = scopes.iter_mut().rev().find(|s| s.label == *label)
                            && scope.kind != ScopeKind::Block
                        {
                            meet(&mut scope.continues, &cur);
                        }
                        cur = None;
                    }
                    OpKind::Return { .. } => {
                        a.op(facts, op, kind);
                        cur = None;
                    }
                    OpKind::Trap { .. } => cur = None,
                    _ => a.op(facts, op, kind),
                }
            }
            Frame::IfThen { entry, else_block } => match else_block {
                Some(else_block) => {
                    frames.push(Frame::IfElse { then_end: cur.take() });
                    cur = entry;
                    frames.push(Frame::Ops { block: else_block, next: 0 });
                }
                None => meet(&mut cur, &entry),
            },
            Frame::IfElse { then_end } => meet(&mut cur, &then_end),
            Frame::ScopeEnd { op } => {
                let Some(scope) = scopes.pop() else { continue };
                if scope.kind == ScopeKind::Block {
                    meet(&mut cur, &scope.breaks);
                    continue;
                }
                let Some(head) = heads.get_mut(index(op)) else { continue };
                let mut shrunk = head.clone();
                meet(&mut shrunk, &cur);
                meet(&mut shrunk, &scope.continues);
                if shrunk != *head {
                    changed = true;
                    *head = shrunk;
                }
                cur = scope.breaks;
                if scope.kind == ScopeKind::For {
                    meet(&mut cur, head);
                }
            }
        }
    }
    changed
}

/// Meets what reaches the head of loop `op` into its recorded head, and continues from the
/// head.
fn enter_head<F: Facts>(heads: &mut [State<F>], op: OpId, cur: &mut State<F>) {
    let Some(head) = heads.get_mut(index(op)) else { return };
    meet(head, cur);
    *cur = head.clone();
}
