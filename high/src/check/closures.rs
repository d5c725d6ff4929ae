//! Closures: `fn(x) => body` as the argument of the array library's closure methods, `map`,
//! `filter`, `any`, `all`, `find`, `count` and `fold` (docs/language.md §6.6). A closure is not
//! a value: its body is checked here, in a scope of its own where its parameters are declared,
//! and runs inline, once per element (`lower/closures.rs`), so it never outlives what it uses.
//!
//! The rules (H432): a closure only as such an argument, the method's number of parameters,
//! a written parameter type equal to the one the method gives, a body of the type the method
//! needs (`bool` for the tests, the accumulator's for `fold`, any value for `map`). The element
//! parameter is a `for` loop's variable (read-only, lent a non-copy element), and the array
//! must not change while the closure runs (H406, as in a `for` loop). A method called on the
//! result of `map` or `filter` takes over its loop as a stage ([`crate::tir::Stage`]), so a
//! chain runs element by element with no array between its methods.

use nagi_syntax::ast::{self, Ident, Span};

use super::expr::mk;
use super::{Body, H432, a_or_an, error, plural};
use crate::tir::{ArrayLoop, Expr, ExprKind, LocalKind, LoopMethod, Stage, Ty};

impl Body<'_, '_> {
    /// `receiver.method(…, fn(…) => body)` for a closure method of arrays.
    pub(super) fn closure_method(
        &mut self,
        receiver: &ast::Expr,
        method: &Ident,
        kind: LoopMethod,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let name = method.name.as_str();
        let wanted = if kind == LoopMethod::Fold { 2 } else { 1 };
        let array = self.infer_value(receiver, None);
        if !self.arity(name, wanted, args, span) {
            return None;
        }
        let init = if kind == LoopMethod::Fold { self.infer_value(&args[0], None) } else { None };
        let ast::ExprKind::Closure { params, body } = &args[wanted - 1].kind else {
            let example =
                if kind == LoopMethod::Fold { "fold(0, fn(acc, x) => acc + x)" } else { "filter(fn(x) => x > 0)" };
            self.report(
                error(H432, args[wanted - 1].span, format!("`{name}` takes a closure"), "not a closure")
                    .note(format!("write a closure, `xs.{example}`")),
            );
            return None;
        };
        let array = array?;
        let Ty::Array(elem) = array.ty.clone() else {
            return self.no_such_method(&array.ty, method, "arrays");
        };
        let elem = *elem;
        // A `map` or `filter` right before this method runs in its loop (§6.6: a chain runs
        // element by element): its stages move into this one, and after a `filter` this
        // closure's element is the same local as the filter's.
        let (array, held, stages, same_element) = match array.kind {
            ExprKind::ArrayLoop(inner) if matches!(inner.method, LoopMethod::Map | LoopMethod::Filter) => {
                let inner = *inner;
                let mut stages = inner.stages;
                stages.push(Stage { method: inner.method, element: inner.element, body: inner.body });
                let same = (inner.method == LoopMethod::Filter).then_some(inner.element);
                (inner.array, inner.held, stages, same)
            }
            kind => (Expr { kind, ..array }, None, Vec::new(), None),
        };
        let acc_ty = init.as_ref().map(|i| i.ty.clone());
        if kind == LoopMethod::Fold && acc_ty.is_none() {
            return None;
        }
        let expected: Vec<Ty> = acc_ty.iter().cloned().chain(std::iter::once(elem.clone())).collect();
        if params.len() != expected.len() {
            let names = if kind == LoopMethod::Fold {
                "`fn(acc, x)`: the accumulator, then the element"
            } else {
                "`fn(x)`, the element"
            };
            self.report(
                error(
                    H432,
                    args[wanted - 1].span,
                    format!(
                        "the closure of `{name}` takes {}, not {}",
                        plural(expected.len(), "parameter"),
                        params.len()
                    ),
                    "wrong number of parameters",
                )
                .note(format!("write {names}")),
            );
            return None;
        }
        for (param, ty) in params.iter().zip(&expected) {
            let Some(written) = &param.ty else { continue };
            let resolved = self.items.resolve_ty(written, self.diags)?;
            if resolved != *ty {
                let (found, given) = (self.ty_name(&resolved), self.ty_name(ty));
                self.report(
                    error(
                        H432,
                        written.span,
                        format!("this parameter is `{given}`, not `{found}`"),
                        format!("`{name}` gives {} `{given}`", a_or_an(&given)),
                    )
                    .note("leave the type out: the method gives it"),
                );
                return None;
            }
        }
        // The closure's body: a scope of its own, inside a loop over the array's elements.
        let guarded = self.guard_iterated(Some(&array));
        self.open_scope();
        let fold = match (kind, init) {
            (LoopMethod::Fold, Some(init)) => {
                let acc = self.declare(&params[0].name, Some(init.ty.clone()), true, LocalKind::Binding);
                Some((acc, init))
            }
            _ => None,
        };
        let param = &params[wanted - 1].name;
        let element = match (same_element, stages.last()) {
            (Some(local), _) => {
                self.scopes.last_mut().expect("the closure's scope").push((param.name.clone(), local));
                local
            }
            // A `map`'s new value, owned by the element it becomes.
            (None, Some(_)) => self.declare(param, Some(elem.clone()), false, LocalKind::Binding),
            (None, None) => self.declare(param, Some(elem.clone()), false, LocalKind::LoopVar),
        };
        self.loop_depth += 1;
        let checked = match kind {
            LoopMethod::Map => self.infer_value(body, None),
            LoopMethod::Fold => self.check_expr(body, acc_ty.as_ref().expect("fold has an accumulator")),
            _ => self.check_expr(body, &Ty::Bool),
        };
        self.loop_depth -= 1;
        self.close_scope();
        if guarded {
            self.iterating.pop();
        }
        let body = checked?;
        let ty = match kind {
            LoopMethod::Map => Ty::Array(Box::new(body.ty.clone())),
            LoopMethod::Filter => Ty::Array(Box::new(elem.clone())),
            LoopMethod::Any | LoopMethod::All => Ty::Bool,
            LoopMethod::Find => Ty::Option(Box::new(elem)),
            LoopMethod::Count => Ty::I64,
            LoopMethod::Fold => acc_ty.expect("fold has an accumulator"),
        };
        let held = match array.kind {
            ExprKind::Place(_) => None,
            _ => held.or_else(|| Some(self.hidden_local("array", array.ty.clone(), array.span))),
        };
        let result = match &fold {
            Some((acc, _)) => *acc,
            None => self.hidden_local("result", ty.clone(), span),
        };
        let each = ArrayLoop { method: kind, array, held, stages, element, fold, body, result };
        Some(mk(ExprKind::ArrayLoop(Box::new(each)), ty, span))
    }

    /// A closure anywhere but as the argument of a closure method.
    pub(super) fn stray_closure(&mut self, span: Span) -> Option<Expr> {
        self.report(
            error(H432, span, "a closure is only an argument of an array method", "not an argument of one").note(
                "closures are given to `map`, `filter`, `any`, `all`, `find`, `count` and `fold`; for anything else, \
                 write a function",
            ),
        );
        None
    }
}
