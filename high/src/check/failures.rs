//! The answer of a request: expected failures (`fail(status, message)`, functions declared
//! `fails`, and `try`, which marks the expressions whose failing calls pass a failure on to the
//! caller), and `set_header(name, value)`.
//!
//! The rules: only a function declared `fails` and a route handler may fail or pass a failure
//! on (H413); every call of a failing function lies inside a `try` (H411), and every `try`
//! covers at least one (H412), unless the call is a `try?`'s (`actors.rs`), which handles it; neither happens inside `db.transaction` (H408), whose end must
//! run; a literal status is 400–599 (H414).

use nagi_syntax::ast::{self, Span};

use super::expr::mk;
use super::{Body, H408, H411, H412, H413, H414, H415, error};
use crate::tir::{Builtin, Expr, ExprKind, Ty};

impl Body<'_, '_> {
    /// `try inner`: `inner` checked with its failing calls allowed.
    pub(super) fn try_expr(&mut self, inner: &ast::Expr, hint: Option<&Ty>, span: Span) -> Option<Expr> {
        let before = self.failing_calls;
        self.try_depth += 1;
        let value = self.infer(inner, hint);
        self.try_depth -= 1;
        if value.is_some() && self.failing_calls == before {
            self.report(
                error(H412, span, "nothing after this `try` can fail", "no failing call")
                    .note("`try` marks calls of functions declared `fails`; remove it"),
            );
            return None;
        }
        value
    }

    /// `catch call`: the call's outcome as a `Result<T>`, `Ok(value)` or `Failed(failure)`.
    pub(super) fn catch(&mut self, call: &ast::Expr, span: Span) -> Option<Expr> {
        let value = self.handled_call(call, "catch", span)?;
        let result = self.items.result_enum(&value.ty);
        let failure = self.items.failure_class();
        Some(mk(ExprKind::Catch { call: Box::new(value), failure }, Ty::Enum(result), span))
    }

    /// A call of the failing function `name`: it must be inside a `try`, in a body that may fail.
    pub(super) fn failing_call(&mut self, name: &str, span: Span) {
        self.failing_calls += 1;
        // The call of a `try?`: its failure is handled where it happens.
        if self.catching == Some(span) {
            self.caught = true;
            return;
        }
        if self.try_depth == 0 {
            self.report(
                error(H411, span, format!("`{name}` can fail, so its call needs `try`"), "a call that can fail").note(
                    format!(
                        "write `try {name}(…)` to pass its failure on to the caller, or `try? {name}(…)` to \
                         handle it here"
                    ),
                ),
            );
            return;
        }
        // The `try` itself was allowed or reported once; each call is checked for the body.
        self.may_fail_here(span, "pass a failure on with `try`");
    }

    /// Whether this body may fail at `span`; reports why not (`action` words what it does).
    fn may_fail_here(&mut self, span: Span, action: &str) -> bool {
        if self.transaction_loop_depth.is_some() {
            self.report(
                error(H408, span, format!("cannot {action} inside a `db.transaction` block"), "leaves the transaction")
                    .note("the transaction must finish first; fail after the block"),
            );
            return false;
        }
        let info = self.items.fn_info(self.fn_idx);
        if !info.fails {
            let name = info.name.clone();
            let note = if name == "main" {
                "`main` cannot fail; only route handlers and the functions they call answer with a failure".to_string()
            } else if matches!(info.body, super::items::FnBody::Closure(..)) {
                "a closure's body cannot fail; handle the failure in it with `catch` or `try?`".to_string()
            } else {
                format!("declare it `fn {name}(…) fails -> …` so that its callers see that it can fail")
            };
            self.report(
                error(H413, span, format!("{} cannot {action}", self.display_name), "not a failing function")
                    .note(note),
            );
            return false;
        }
        self.effects.fails_at.get_or_insert(span);
        true
    }

    /// `fail(status, message)`: the status an `i64` (400–599 when written as a literal), the
    /// message a `String`.
    pub(super) fn fail_call(&mut self, args: &[ast::Expr], span: Span) -> Option<Expr> {
        if !self.arity("fail", 2, args, span) {
            return None;
        }
        let allowed = self.may_fail_here(span, "`fail`");
        let status = self.check_expr(&args[0], &Ty::I64);
        let message = self.check_expr(&args[1], &Ty::String);
        if let Some(Expr { kind: ExprKind::Int(code), span: at, .. }) = &status
            && !(400..=599).contains(code)
        {
            self.report(
                error(H414, *at, format!("`fail` answers with an error status, and {code} is not one"), "not 400-599")
                    .note(
                        "use a 4xx status for a request the client got wrong, a 5xx one for a failure of the service",
                    ),
            );
            return None;
        }
        if !allowed {
            return None;
        }
        Some(mk(ExprKind::Builtin { builtin: Builtin::Fail, args: vec![status?, message?] }, Ty::Unit, span))
    }
}

impl Body<'_, '_> {
    /// `set_header(name, value)`: both `String`s, in a route handler's own body (H415), where
    /// the answer it adds to is known. The runtime checks the name and the value.
    pub(super) fn set_header_call(&mut self, args: &[ast::Expr], span: Span) -> Option<Expr> {
        if !self.arity("set_header", 2, args, span) {
            return None;
        }
        let name = self.check_expr(&args[0], &Ty::String);
        let value = self.check_expr(&args[1], &Ty::String);
        if self.items.fn_info(self.fn_idx).route.is_none() {
            self.report(
                error(H415, span, format!("{} cannot set a response header", self.display_name), "not a route handler")
                    .note("`set_header` belongs in the route handler; return the value to it instead"),
            );
            return None;
        }
        Some(mk(ExprKind::Builtin { builtin: Builtin::SetHeader, args: vec![name?, value?] }, Ty::Unit, span))
    }
}
