//! Waiting in generated programs ([`Config::waits`], off unless asked for): recursive async
//! functions and tasks that spawn tasks of their own function. The prelude gains helpers that
//! `sleep` (0 or 1 ms) and recurse with a bounded depth, whatever their argument: `wait_down`
//! calls itself with a local live across its sleep, `wait_even`/`wait_odd` (a `bool`) and
//! `wait_ping`/`wait_pong` (a `String` built on the way) call each other, `split_sum` spawns two
//! tasks of itself in a `scope` and joins them, and `split_text` spawns two of itself with
//! `String` arguments moved into the tasks and a third task (of `wait_down`) whose handle it
//! drops, and joins the two in the reverse order. None of them prints, so tasks running at once
//! cannot print in an order that depends on the scheduler. Bodies call them with small or random
//! arguments, in expressions (the wait happens in the middle of evaluating one, with the
//! values computed before it held across) and as statements, and open a `scope` that spawns
//! some of them, runs random statements meanwhile (which may leave it early) and joins them in
//! a random order. A call stays out of nested loops (out of every loop in a function, which a
//! loop may call), so that the waits stay few.
//!
//! Such a program's `main` is async, which the JIT refuses (M109), and a program with tasks
//! the interpreter refuses (I103): the compiled backends run them.

use arbitrary::Result;

use super::*;

/// The helpers that wait, after the prelude's own items (and like them `pub` in a module
/// `lib`). Each recursion is bounded by clamping its argument (`min(n, 6)`), so a call with
/// any `i64` ends after a few levels, and `split_sum(n)` starts at most 67 tasks.
pub(super) const PRELUDE: &str = "fn wait_down(n: i64) -> i64 {
    if n <= 0 {
        return 0
    }
    let before = to_string(n)
    sleep(n % 2)
    return before.len() + wait_down(min(n, 6) - 1) * 3
}

fn wait_even(n: i64) -> bool {
    if n <= 0 {
        return true
    }
    sleep(1)
    return wait_odd(min(n, 7) - 1)
}

fn wait_odd(n: i64) -> bool {
    if n <= 0 {
        return false
    }
    return wait_even(n - 1)
}

fn wait_ping(n: i64, s: String) -> String {
    if n <= 0 {
        return s + \".\"
    }
    sleep(1)
    return wait_pong(min(n, 6) - 1, s + \"i\")
}

fn wait_pong(n: i64, s: String) -> String {
    if n <= 0 {
        return s + \"!\"
    }
    let k = s.len()
    sleep(0)
    return wait_ping(n - 1, s + \"o\") + to_string(k)
}

fn split_sum(n: i64) -> i64 {
    if n < 2 {
        sleep(n)
        return n
    }
    let k = min(n, 8)
    var total: i64 = 0
    scope {
        let a = spawn split_sum(k - 1)
        let b = spawn split_sum(k - 2)
        total = a.join() * 2 + b.join()
    }
    return total
}

fn split_text(n: i64, s: String) -> String {
    if n < 1 {
        sleep(1)
        return s + \"_\"
    }
    let k = min(n, 4)
    var out = \"\"
    scope {
        let a = spawn split_text(k - 1, s + \"l\")
        let b = spawn split_text(k - 2, s.clone())
        spawn wait_down(k)
        out = b.join() + \"|\" + a.join()
    }
    return out
}

";

/// A helper that waits: its name, what it returns, and whether it takes a `String` after its
/// `i64`.
struct Helper {
    name: &'static str,
    ret: Ty,
    text: bool,
}

const HELPERS: [Helper; 7] = [
    Helper { name: "wait_down", ret: Ty::I64, text: false },
    Helper { name: "wait_even", ret: Ty::Bool, text: false },
    Helper { name: "wait_odd", ret: Ty::Bool, text: false },
    Helper { name: "wait_ping", ret: Ty::Str, text: true },
    Helper { name: "wait_pong", ret: Ty::Str, text: true },
    Helper { name: "split_sum", ret: Ty::I64, text: false },
    Helper { name: "split_text", ret: Ty::Str, text: true },
];

impl Gen<'_, '_> {
    /// Whether the statement or expression being written may call a helper that waits: only
    /// with [`Config::waits`], and outside nested loops (in a function, outside every loop).
    pub(super) fn may_wait(&self) -> bool {
        self.config.waits && self.loops <= if self.body.ret.is_some() { 0 } else { 1 }
    }

    /// A call of a helper that returns `ty`, as the body being written names it.
    pub(super) fn wait_call(&mut self, ty: Ty, d: u32) -> Result<String> {
        let helpers: Vec<&Helper> = HELPERS.iter().filter(|h| h.ret == ty).collect();
        let helper = *self.u.choose(&helpers)?;
        let name = self.q(helper.name)?;
        let args = self.wait_args(helper, d)?;
        Ok(format!("{name}({args})"))
    }

    /// The arguments of `helper`: a small count most of the time, or any `i64` (the helper
    /// clamps it), and a `String`.
    fn wait_args(&mut self, helper: &Helper, d: u32) -> Result<String> {
        let n = if self.u.ratio(2, 3)? {
            (*self.u.choose(&["0", "1", "2", "3", "4", "5", "6", "7", "8", "-1"])?).to_string()
        } else {
            self.expr(Ty::I64, d.min(1))?
        };
        if !helper.text {
            return Ok(n);
        }
        let s = if self.u.ratio(1, 2)? {
            (*self.u.choose(&["\"\"", "\"a\"", "\"nagi\""])?).to_string()
        } else {
            self.expr(Ty::Str, d.min(1))?
        };
        Ok(format!("{n}, {s}"))
    }

    /// A statement that waits: `print` of a helper's call, or a `scope` that spawns helpers.
    pub(super) fn wait_stmt(&mut self, depth: u32) -> Result<()> {
        if depth < 3 && self.u.ratio(1, 3)? {
            return self.scope_stmt(depth);
        }
        let ty = *self.u.choose(&[Ty::I64, Ty::I64, Ty::Bool, Ty::Str])?;
        let call = self.wait_call(ty, 2)?;
        self.line(&format!("print({call})"));
        Ok(())
    }

    /// `scope { let tN = spawn helper(…) … statements … print(tN.join()) … }`: one to three
    /// tasks bound to handles (maybe one more whose handle is dropped), random statements
    /// while they run (which may leave the scope early, or wait themselves), then the handles
    /// joined in a random order, maybe one of them inside an expression, maybe one never.
    fn scope_stmt(&mut self, depth: u32) -> Result<()> {
        self.line("scope {");
        let result = self.block(|g| {
            let mut handles = Vec::new();
            for _ in 0..g.u.int_in_range(1..=3)? {
                let helper = g.u.choose(&HELPERS)?;
                let name = g.q(helper.name)?;
                let args = g.wait_args(helper, 1)?;
                let handle = g.fresh("t");
                g.line(&format!("let {handle} = spawn {name}({args})"));
                handles.push((handle, helper.ret));
            }
            if g.u.ratio(1, 4)? {
                let helper = g.u.choose(&HELPERS)?;
                let (name, args) = (g.q(helper.name)?, g.wait_args(helper, 1)?);
                g.line(&format!("spawn {name}({args})"));
            }
            for _ in 0..g.u.int_in_range(0..=2)? {
                g.stmt(depth + 1)?;
            }
            g.shuffle(&mut handles)?;
            let joined = if g.u.ratio(1, 4)? { handles.len() - 1 } else { handles.len() };
            for (handle, ty) in handles.into_iter().take(joined) {
                let read = match ty {
                    Ty::I64 if g.u.arbitrary()? => format!("({} + {handle}.join())", g.expr(Ty::I64, 1)?),
                    Ty::Str if g.u.arbitrary()? => format!("{handle}.join().len()"),
                    _ => format!("{handle}.join()"),
                };
                g.line(&format!("print({read})"));
            }
            Ok(())
        });
        self.line("}");
        result
    }
}
