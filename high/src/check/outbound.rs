//! Checking of outbound calls (docs/language.md §9.10): `http.get(url)`, `http.post<T>(url,
//! body)` and their siblings, each a call of another HTTP service.
//!
//! A call is an await (its function is async) and can fail, like a call of a function declared
//! `fails`: it needs `try` or `try?` (H411). Its arguments are the URL (a `String`), for `post`,
//! `put` and `patch` the body (a class, sent as JSON, or a `String`, sent as it is), then
//! optionally the header lines (`[String]`, each `Name: value`) and a timeout (a `Duration`), in
//! that order. `http.get<T>` decodes the answer into the class `T`; without `<T>` the answer is
//! its body's text.

use nagi_syntax::ast::{self, Ident, Span};

use super::expr::mk;
use super::{Body, H429, error};
use crate::tir::{Expr, ExprKind, Fetch, Ty};

impl Body<'_, '_> {
    /// `http.method<class>(args)`.
    pub(super) fn http_call(
        &mut self,
        method: &Ident,
        class: Option<&ast::TypeExpr>,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let shown = format!("http.{}", method.name);
        self.failing_call(&shown, span);
        // The call waits without the database.
        self.effects.suspends.get_or_insert(span);
        self.effects.calls_out.get_or_insert(span);
        let answer = match class {
            None => None,
            Some(class) => match self.items.resolve_ty(class, self.diags)? {
                Ty::String => None,
                Ty::Class(idx) => Some(idx),
                other => {
                    let found = self.ty_name(&other);
                    self.report(
                        error(
                            H429,
                            class.span,
                            format!("`{shown}` decodes its answer into a class, not `{found}`"),
                            "not a class",
                        )
                        .note(format!("write `{shown}<Class>(…)`, or `{shown}(…)` for the answer's text")),
                    );
                    return None;
                }
            },
        };
        let sends_body = matches!(method.name.as_str(), "post" | "put" | "patch");
        let usage = if sends_body {
            format!("`{shown}(url, body)`, then optionally header lines (`[String]`) and a timeout (`Duration`)")
        } else {
            format!("`{shown}(url)`, then optionally header lines (`[String]`) and a timeout (`Duration`)")
        };
        let required = if sends_body { 2 } else { 1 };
        if args.len() < required || args.len() > required + 2 {
            self.report(error(H429, span, format!("`{shown}` takes {usage}"), "wrong arguments"));
            return None;
        }
        let url = self.check_expr(&args[0], &Ty::String);
        let body = if sends_body { self.body_arg(&shown, &args[1]) } else { Some(None) };
        let (headers, timeout) = self.call_options(&shown, &args[required..])?;
        let fetch = Fetch {
            method: method.name.to_uppercase(),
            url: Box::new(url?),
            body: body?.map(Box::new),
            headers: headers.map(Box::new),
            timeout: timeout.map(|t| Box::new(super::time::micros(t))),
            class: answer,
        };
        let ty = answer.map_or(Ty::String, Ty::Class);
        Some(mk(ExprKind::Fetch(fetch), ty, span))
    }

    /// The body of `post`, `put` or `patch`: a class (sent as JSON) or a `String`.
    fn body_arg(&mut self, shown: &str, arg: &ast::Expr) -> Option<Option<Expr>> {
        let body = self.infer_value(arg, None)?;
        if matches!(body.ty, Ty::Class(_) | Ty::String) {
            return Some(Some(body));
        }
        let found = self.ty_name(&body.ty);
        self.report(
            error(
                H429,
                arg.span,
                format!("`{shown}` sends a class as JSON, or a `String`, not `{found}`"),
                "not a body",
            )
            .note("wrap the value in a class, as a request body is"),
        );
        None
    }

    /// The optional header lines and timeout after a call's required arguments, in that order.
    fn call_options(&mut self, shown: &str, args: &[ast::Expr]) -> Option<(Option<Expr>, Option<Expr>)> {
        let lines = Ty::Array(Box::new(Ty::String));
        let (mut headers, mut timeout) = (None, None);
        for arg in args {
            let value = self.infer_value(arg, Some(&lines))?;
            match value.ty {
                Ty::Array(ref item) if **item == Ty::String && headers.is_none() && timeout.is_none() => {
                    headers = Some(value);
                }
                Ty::Duration if timeout.is_none() => timeout = Some(value),
                _ => {
                    let found = self.ty_name(&value.ty);
                    self.report(
                        error(
                            H429,
                            arg.span,
                            format!("`{shown}` takes header lines, then a timeout, not `{found}` here"),
                            "unexpected argument",
                        )
                        .note("header lines are a `[String]` of `Name: value`; a timeout is a `Duration`, like `2s`"),
                    );
                    return None;
                }
            }
        }
        Some((headers, timeout))
    }
}
