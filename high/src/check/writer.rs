//! An outbound call may not come after a write of the same request (H431, docs/language.md
//! §9.10): a request's writes are one transaction that holds SQLite's single writer from its
//! first write until the request ends, so a call made after it would make every other request's
//! statements wait for the other service. The runtime traps such a call; this check rejects the
//! programs where it can see one coming.
//!
//! It is a may-analysis over the typed bodies. A function *may write* when it runs a statement
//! that writes (`db.exec` of anything but a `SELECT`, a query that inserts, updates or deletes,
//! `db.transaction`, a queue push or retry) or calls one that may; it *may call out* when it
//! makes an outbound call, calls a function that may, or spawns one (its scope waits for the
//! task). Then each body is walked in evaluation order, with whether some path so far may have
//! written: an outbound call, or a call of a function that may call out, after that is H431,
//! and so is a write while a task spawned in the enclosing scope may be calling out. Operations
//! happen in the order their expressions end (arguments before the call that takes them); an
//! `if` or `match` joins its arms; a loop's body is walked twice, so a write in one iteration
//! meets a call in the next; a path that ends (`return`, `break`, `continue`, `fail`) carries
//! nothing on. Tests' own bodies run outside requests and are not checked.

use nagi_low::Diagnostic;
use nagi_syntax::ast::Span;

use super::{H431, error};
use crate::tir::{Block, Builtin, DbOp, Expr, ExprKind, FnIdx, Function, StmtKind};

/// What one function does directly, and whom it calls or spawns.
#[derive(Default)]
struct Facts {
    writes: bool,
    calls_out: bool,
    callees: Vec<FnIdx>,
}

/// Whether `sql` writes: anything but a `SELECT` or `WITH … SELECT` for `db.exec`; an `INSERT`,
/// `UPDATE`, `DELETE` or `REPLACE` (with `RETURNING`) for a query.
fn sql_writes(op: DbOp, sql: &str) -> bool {
    let first = sql.trim_start().split_whitespace().next().unwrap_or("").to_ascii_uppercase();
    match op {
        DbOp::Exec => !matches!(first.as_str(), "SELECT" | "WITH"),
        DbOp::Query | DbOp::QueryOne => matches!(first.as_str(), "INSERT" | "UPDATE" | "DELETE" | "REPLACE"),
    }
}

/// Whether evaluating `e` alone writes.
fn writes(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Db { op, sql, .. } => sql_writes(*op, sql),
        ExprKind::QueuePush { .. } | ExprKind::QueueRetry { .. } => true,
        _ => false,
    }
}

fn facts(function: &Function) -> Facts {
    let mut facts = Facts::default();
    function.body.walk_statements(&mut |stmt_kind, exprs| {
        if matches!(stmt_kind, Some(StmtKind::Transaction(_))) {
            facts.writes = true;
        }
        for e in exprs {
            e.walk(&mut |e| match &e.kind {
                ExprKind::Fetch(_) => facts.calls_out = true,
                ExprKind::Call { func, .. } | ExprKind::Spawn { func, .. } => facts.callees.push(*func),
                _ => facts.writes |= writes(e),
            });
        }
    });
    facts
}

/// Which functions may write and which may call out, through calls and spawns.
fn propagate(all: &[Facts]) -> (Vec<bool>, Vec<bool>) {
    let mut may_write: Vec<bool> = all.iter().map(|f| f.writes).collect();
    let mut may_call_out: Vec<bool> = all.iter().map(|f| f.calls_out).collect();
    loop {
        let mut changed = false;
        for (i, facts) in all.iter().enumerate() {
            for &callee in &facts.callees {
                if may_write.get(callee) == Some(&true) && !may_write[i] {
                    may_write[i] = true;
                    changed = true;
                }
                if may_call_out.get(callee) == Some(&true) && !may_call_out[i] {
                    may_call_out[i] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            return (may_write, may_call_out);
        }
    }
}

/// Where, on some path so far, the request may first have written, and a task of the enclosing
/// scope may be calling out.
#[derive(Clone, Copy, Default)]
struct State {
    written: Option<Span>,
    task_out: Option<Span>,
}

impl State {
    fn join(self, other: State) -> State {
        State { written: self.written.or(other.written), task_out: self.task_out.or(other.task_out) }
    }
}

struct Walk<'a> {
    functions: &'a [Function],
    may_write: &'a [bool],
    may_call_out: &'a [bool],
    locate: &'a dyn Fn(Span) -> String,
    diags: &'a mut Vec<Diagnostic>,
}

/// One event of an expression, at the end of its span.
enum Event {
    Write,
    CallOut(String),
    Spawn(bool, bool),
}

impl Walk<'_> {
    /// `block` from `state`; `None` when no path reaches its end.
    fn block(&mut self, block: &Block, mut state: State) -> Option<State> {
        for stmt in &block.stmts {
            for e in stmt.kind.own_exprs() {
                state = self.expr(e, state);
            }
            state = match &stmt.kind {
                StmtKind::If { then_block, else_block, .. } | StmtKind::IfLet { then_block, else_block, .. } => {
                    let then = self.block(then_block, state);
                    let other = match else_block {
                        Some(b) => self.block(b, state),
                        None => Some(state),
                    };
                    match (then, other) {
                        (Some(a), Some(b)) => a.join(b),
                        (Some(a), None) | (None, Some(a)) => a,
                        (None, None) => return None,
                    }
                }
                StmtKind::Match { arms, .. } => {
                    let ends: Vec<State> = arms.iter().filter_map(|arm| self.block(&arm.body, state)).collect();
                    match ends.into_iter().reduce(State::join) {
                        Some(joined) => joined,
                        None => return None,
                    }
                }
                StmtKind::While { body, cond } => {
                    // Twice: what one iteration leaves meets the next one's condition and body.
                    let once = self.block(body, state).map_or(state, |s| s.join(state));
                    let again = self.expr(cond, once);
                    self.quietly(|walk| walk.block(body, again)).map_or(again, |s| s.join(again))
                }
                StmtKind::ForRange { body, .. }
                | StmtKind::ForEach { body, .. }
                | StmtKind::ForEntries { body, .. } => {
                    let once = self.block(body, state).map_or(state, |s| s.join(state));
                    self.quietly(|walk| walk.block(body, once)).map_or(once, |s| s.join(once))
                }
                StmtKind::Transaction(body) => {
                    let begun = self.write(stmt.span, state);
                    self.block(body, begun)?
                }
                StmtKind::Scope(body) => {
                    let inner = self.block(body, State { task_out: None, ..state })?;
                    State { written: inner.written, task_out: state.task_out }
                }
                StmtKind::Return(_) | StmtKind::Break | StmtKind::Continue => return None,
                StmtKind::Expr(Expr { kind: ExprKind::Builtin { builtin: Builtin::Fail, .. }, .. }) => return None,
                _ => state,
            };
        }
        Some(state)
    }

    /// A second walk whose diagnostics repeat the first's are dropped: only new ones stay.
    fn quietly<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let before = self.diags.len();
        let result = f(self);
        let mut seen = self.diags[..before].to_vec();
        let mut kept = Vec::new();
        for d in self.diags.drain(before..) {
            if !seen.iter().any(|s| s.span == d.span && s.message == d.message) {
                seen.push(d.clone());
                kept.push(d);
            }
        }
        self.diags.extend(kept);
        result
    }

    /// `e`'s events in evaluation order (by the end of their spans) from `state`.
    fn expr(&mut self, e: &Expr, mut state: State) -> State {
        let mut events: Vec<(Span, Event)> = Vec::new();
        e.walk(&mut |e| match &e.kind {
            ExprKind::Fetch(fetch) => {
                events.push((e.span, Event::CallOut(format!("`http.{}`", fetch.method.to_lowercase()))))
            }
            ExprKind::Call { func, .. } => {
                if self.may_call_out[*func] {
                    events.push((
                        e.span,
                        Event::CallOut(format!("`{}`, which calls another service,", self.functions[*func].name)),
                    ));
                }
                if self.may_write[*func] {
                    events.push((e.span, Event::Write));
                }
            }
            ExprKind::Spawn { func, .. } => {
                events.push((e.span, Event::Spawn(self.may_call_out[*func], self.may_write[*func])))
            }
            _ if writes(e) => events.push((e.span, Event::Write)),
            _ => {}
        });
        // A call's own events (its call-out, then its write) stay in that order.
        events.sort_by_key(|(span, _)| span.end);
        for (span, event) in events {
            state = match event {
                Event::Write => self.write(span, state),
                Event::CallOut(what) => {
                    self.call_out(span, &what, state);
                    state
                }
                Event::Spawn(out, write) => {
                    if out {
                        self.call_out(span, "a task that calls another service", state);
                    }
                    let state = if write { self.write(span, state) } else { state };
                    State { task_out: state.task_out.or(out.then_some(span)), ..state }
                }
            };
        }
        state
    }

    fn write(&mut self, span: Span, state: State) -> State {
        if let Some(task) = state.task_out {
            let at = (self.locate)(task);
            self.diags.push(
                error(H431, span, "a write while a task of this scope may be calling another service", "writes here")
                    .note(format!("the task spawned at {at} makes an outbound call, and the scope waits for it holding the database's writer"))
                    .note("write after the scope, or make the call before the first write"),
            );
        }
        State { written: state.written.or(Some(span)), ..state }
    }

    fn call_out(&mut self, span: Span, what: &str, state: State) {
        if let Some(first) = state.written {
            let at = (self.locate)(first);
            self.diags.push(
                error(H431, span, format!("{what} after a write of the same request"), "calls out here")
                    .note(format!(
                        "the request may have written at {at}; from its first write it holds the database's one writer, so every other request would wait for this call"
                    ))
                    .note("make the call before the first write, or push a job that makes it"),
            );
        }
    }
}

/// Reports every outbound call that may come after a write of its request (module doc).
/// Which functions may write to the database, directly or through the functions they call or
/// spawn (the may-analysis above), by function index.
pub(crate) fn may_write(functions: &[Function]) -> Vec<bool> {
    propagate(&functions.iter().map(facts).collect::<Vec<_>>()).0
}

pub(super) fn check(
    functions: &[Function],
    tests: &[FnIdx],
    locate: &dyn Fn(Span) -> String,
    diags: &mut Vec<Diagnostic>,
) {
    let all: Vec<Facts> = functions.iter().map(facts).collect();
    if !all.iter().any(|f| f.calls_out) {
        return;
    }
    let (may_write, may_call_out) = propagate(&all);
    let mut walk = Walk { functions, may_write: &may_write, may_call_out: &may_call_out, locate, diags };
    for (index, function) in functions.iter().enumerate() {
        if tests.contains(&index) {
            continue;
        }
        walk.block(&function.body, State::default());
    }
}
