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

use nagi_low::RuntimeFn;
use nagi_syntax::ast::{self, Ident, Span};

use super::arrays::is_ordered;
use super::expr::mk;
use super::stmt::Mutation;
use super::{Body, H211, H432, a_or_an, error, plural};
use crate::tir::{ArrayLoop, Expr, ExprKind, LocalIdx, LocalKind, LoopMethod, Stage, Ty};

impl Body<'_, '_> {
    /// `receiver.method(…, fn(…) => body)` for a closure method of arrays; `hint` is the type
    /// the context expects of the result, which types `map`'s body (`let ys: [i32] =
    /// xs.map(fn(x) => 0)`) and `fold`'s initial value as it types a literal.
    pub(super) fn closure_method(
        &mut self,
        receiver: &ast::Expr,
        method: &Ident,
        kind: LoopMethod,
        args: &[ast::Expr],
        hint: Option<&Ty>,
        span: Span,
    ) -> Option<Expr> {
        let wanted = if kind == LoopMethod::Fold { 2 } else { 1 };
        let array = self.infer_value(receiver, None);
        if !self.arity(&method.name, wanted, args, span) {
            return None;
        }
        // The array is read before the rest is evaluated (`fold`'s initial value, the closure),
        // so none of it may change the array (H406), as in a `for` loop over it.
        let source = array.as_ref().map(|a| match &a.kind {
            ExprKind::ArrayLoop(inner) if matches!(inner.method, LoopMethod::Map | LoopMethod::Filter) => &inner.array,
            _ => a,
        });
        let guarded = self.guard_iterated(source);
        let checked = self.closure_method_guarded(array, method, kind, args, hint, span);
        if guarded {
            self.iterating.pop();
        }
        checked
    }

    /// [`Body::closure_method`] once the array is checked and guarded.
    fn closure_method_guarded(
        &mut self,
        array: Option<Expr>,
        method: &Ident,
        kind: LoopMethod,
        args: &[ast::Expr],
        hint: Option<&Ty>,
        span: Span,
    ) -> Option<Expr> {
        let name = method.name.as_str();
        let wanted = if kind == LoopMethod::Fold { 2 } else { 1 };
        let init = if kind == LoopMethod::Fold { self.infer_value(&args[0], hint) } else { None };
        if let Some(init) = &init
            && !self.not_a_task(&init.ty, init.span, "the accumulator of `fold`")
        {
            return None;
        }
        let example =
            if kind == LoopMethod::Fold { "fold(0, fn(acc, x) => acc + x)" } else { "filter(fn(x) => x > 0)" };
        let (params, body) = self.closure_arg(&args[wanted - 1], name, example)?;
        let array = array?;
        if let Ty::Map(key, value) = array.ty.clone() {
            let closure = (params, body, args[wanted - 1].span);
            return self.map_closure_method(array, method, kind, closure, init, hint, span, (*key, *value));
        }
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
        let names = if kind == LoopMethod::Fold {
            "`fn(acc, x)`: the accumulator, then the element"
        } else {
            "`fn(x)`, the element"
        };
        self.closure_params(params, &expected, name, names, args[wanted - 1].span)?;
        // The closure's body: a scope of its own, inside a loop over the array's elements.
        self.open_scope();
        let fold = self.fold_accumulator(kind, init, params);
        let param = &params[wanted - 1].name;
        let element = match (same_element, stages.last()) {
            // The filter's element again, under this closure's name: a local of its own (for
            // the IDE's renames), which lowering binds to the filter's.
            (Some(local), _) => {
                let kind = self.locals[local].kind;
                self.declare(param, Some(elem.clone()), false, kind)
            }
            // A `map`'s new value, owned by the element it becomes.
            (None, Some(_)) => self.declare(param, Some(elem.clone()), false, LocalKind::Binding),
            (None, None) => self.declare(param, Some(elem.clone()), false, LocalKind::LoopVar),
        };
        let elem_hint = match hint {
            Some(Ty::Array(elem)) => Some(&**elem),
            _ => None,
        };
        let body = self.closure_loop_body(kind, body, elem_hint, acc_ty.as_ref(), "put in an array")?;
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
        let each = ArrayLoop { method: kind, array, held, stages, element, key: None, fold, body, result };
        Some(mk(ExprKind::ArrayLoop(Box::new(each)), ty, span))
    }

    /// A closure method of a map, `m.count(fn(k, v) => …)`: `any`, `all`, `count`, `filter`
    /// (a new map of the entries kept), `map` (a new map of the same keys and the closure's
    /// values) and `fold(init, fn(acc, k, v) => …)`, each a loop over the entries in insertion
    /// order, as `for k, v in m` runs.
    #[allow(clippy::too_many_arguments)]
    fn map_closure_method(
        &mut self,
        map: Expr,
        method: &Ident,
        kind: LoopMethod,
        (params, body, closure_span): (&[ast::ClosureParam], &ast::Expr, Span),
        init: Option<Expr>,
        hint: Option<&Ty>,
        span: Span,
        (key_ty, value_ty): (Ty, Ty),
    ) -> Option<Expr> {
        let name = method.name.as_str();
        if kind == LoopMethod::Find {
            self.report(error(H211, method.span, "a map has no `find`", "not a map method").note(
                "look a key up with `m.get(k)`, or keep the entries a test passes with `m.filter(fn(k, v) => …)`",
            ));
            return None;
        }
        let acc_ty = init.as_ref().map(|i| i.ty.clone());
        if kind == LoopMethod::Fold && acc_ty.is_none() {
            return None;
        }
        let expected: Vec<Ty> = acc_ty.iter().cloned().chain([key_ty.clone(), value_ty.clone()]).collect();
        let names = if kind == LoopMethod::Fold {
            "`fn(acc, k, v)`: the accumulator, then the key and the value"
        } else {
            "`fn(k, v)`: the key and the value"
        };
        self.closure_params(params, &expected, name, names, closure_span)?;
        self.open_scope();
        let fold = self.fold_accumulator(kind, init, params);
        let first = usize::from(fold.is_some());
        let key = self.declare(&params[first].name, Some(key_ty.clone()), false, LocalKind::LoopVar);
        let element = self.declare(&params[first + 1].name, Some(value_ty.clone()), false, LocalKind::LoopVar);
        let value_hint = match hint {
            Some(Ty::Map(_, value)) => Some(&**value),
            _ => None,
        };
        let body = self.closure_loop_body(kind, body, value_hint, acc_ty.as_ref(), "put in a map")?;
        let ty = match kind {
            LoopMethod::Map => Ty::Map(Box::new(key_ty), Box::new(body.ty.clone())),
            LoopMethod::Filter => Ty::Map(Box::new(key_ty), Box::new(value_ty)),
            LoopMethod::Any | LoopMethod::All => Ty::Bool,
            LoopMethod::Count => Ty::I64,
            LoopMethod::Fold | LoopMethod::Find => acc_ty.unwrap_or(Ty::I64),
        };
        let held = match map.kind {
            ExprKind::Place(_) => None,
            _ => Some(self.hidden_local("map", map.ty.clone(), map.span)),
        };
        let result = match &fold {
            Some((acc, _)) => *acc,
            None => self.hidden_local("result", ty.clone(), span),
        };
        let each = ArrayLoop {
            method: kind,
            array: map,
            held,
            stages: Vec::new(),
            element,
            key: Some(key),
            fold,
            body,
            result,
        };
        Some(mk(ExprKind::ArrayLoop(Box::new(each)), ty, span))
    }

    /// `fold`'s accumulator, the closure's first parameter (a mutable binding), with its
    /// initial value; `None` for the other methods.
    fn fold_accumulator(
        &mut self,
        kind: LoopMethod,
        init: Option<Expr>,
        params: &[ast::ClosureParam],
    ) -> Option<(LocalIdx, Expr)> {
        let init = init.filter(|_| kind == LoopMethod::Fold)?;
        let acc = self.declare(&params[0].name, Some(init.ty.clone()), true, LocalKind::Binding);
        Some((acc, init))
    }

    /// A closure method's body, checked one loop deep in the closure's scope (which it closes):
    /// a new element or value (`map`, typed by `hint`, never a task handle: `stored` words
    /// where it goes), the next accumulator (`fold`), or a test.
    fn closure_loop_body(
        &mut self,
        kind: LoopMethod,
        body: &ast::Expr,
        hint: Option<&Ty>,
        acc_ty: Option<&Ty>,
        stored: &str,
    ) -> Option<Expr> {
        self.loop_depth += 1;
        let checked = match (kind, acc_ty) {
            (LoopMethod::Map, _) => self.infer_value(body, hint),
            (LoopMethod::Fold, Some(acc)) => self.check_expr(body, acc),
            _ => self.check_expr(body, &Ty::Bool),
        };
        self.loop_depth -= 1;
        self.close_scope();
        let body = checked?;
        if kind == LoopMethod::Map && !self.not_a_task(&body.ty, body.span, stored) {
            return None;
        }
        Some(body)
    }

    /// The parameters and body of the closure `arg`, the argument of `name` (H432 when it is not
    /// one; `example` shows how it is written).
    fn closure_arg<'a>(
        &mut self,
        arg: &'a ast::Expr,
        name: &str,
        example: &str,
    ) -> Option<(&'a [ast::ClosureParam], &'a ast::Expr)> {
        if let ast::ExprKind::Closure { params, body } = &arg.kind {
            return Some((params, body));
        }
        if let ast::ExprKind::BlockClosure { .. } = &arg.kind {
            self.report(
                error(H432, arg.span, format!("`{name}` takes a closure of one expression"), "a block closure")
                    .note(format!("write `xs.{example}`; a closure with a block is for a function's parameter")),
            );
            return None;
        }
        self.report(
            error(H432, arg.span, format!("`{name}` takes a closure"), "not a closure")
                .note(format!("write a closure, `xs.{example}`")),
        );
        None
    }

    /// Checks a closure's parameters against the types its method gives (`names` words them):
    /// their number, and each written type (H432).
    fn closure_params(
        &mut self,
        params: &[ast::ClosureParam],
        expected: &[Ty],
        name: &str,
        names: &str,
        span: Span,
    ) -> Option<()> {
        if params.len() != expected.len() {
            self.report(
                error(
                    H432,
                    span,
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
        for (param, ty) in params.iter().zip(expected) {
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
        Some(())
    }

    /// `xs.sort_by_key(fn(x) => key)` on a mutable array place: the keys computed first (the
    /// closure's `map` over `xs`, of a type the library orders), then `xs` sorted stably by them.
    pub(super) fn sort_by_key(
        &mut self,
        receiver: &ast::Expr,
        method: &Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let target = self.mutable_receiver(receiver, "sort_by_key");
        if !self.arity("sort_by_key", 1, args, span) {
            return None;
        }
        let (params, body) = self.closure_arg(&args[0], "sort_by_key", "sort_by_key(fn(p) => p.views)")?;
        let (place, ty) = target?;
        let Ty::Array(elem) = ty.clone() else {
            return self.no_such_method(&ty, method, "arrays");
        };
        self.closure_params(params, &[(*elem).clone()], "sort_by_key", "`fn(x)`, the element", args[0].span)?;
        let array = mk(ExprKind::Place(place.clone()), ty, receiver.span);
        let guarded = self.guard_iterated(Some(&array));
        self.open_scope();
        let element = self.declare(&params[0].name, Some(*elem), false, LocalKind::LoopVar);
        self.loop_depth += 1;
        let key = self.infer_value(body, None);
        self.loop_depth -= 1;
        self.close_scope();
        if guarded {
            self.iterating.pop();
        }
        let key = key?;
        if !is_ordered(&key.ty) {
            let found = self.ty_name(&key.ty);
            self.report(
                error(H211, key.span, format!("cannot sort by `{found}`"), "not ordered")
                    .note("`sort_by_key` orders by a key of type i32, i64, f64 or String"),
            );
            return None;
        }
        let keys_ty = Ty::Array(Box::new(key.ty.clone()));
        let result = self.hidden_local("keys", keys_ty.clone(), span);
        let keys = ArrayLoop {
            method: LoopMethod::Map,
            array,
            held: None,
            stages: Vec::new(),
            element,
            key: None,
            fold: None,
            body: key,
            result,
        };
        let keys = mk(ExprKind::ArrayLoop(Box::new(keys)), keys_ty, span);
        let mutable = self.check_mutation(&place, receiver.span, Mutation::Reorder(RuntimeFn::ArraySortByKeys));
        mutable.then(|| mk(ExprKind::SortByKeys { array: place, keys: Box::new(keys) }, Ty::Unit, span))
    }

    /// A closure anywhere but as the argument of a closure method.
    pub(super) fn stray_closure(&mut self, span: Span) -> Option<Expr> {
        self.report(
            error(
                H432,
                span,
                "a closure is only an argument of an array method or a function-typed parameter",
                "not an argument of one",
            )
            .note(
                "closures are given to `map`, `filter`, `any`, `all`, `find`, `count`, `fold` and `sort_by_key`, and \
                 to a function's parameter of a type `fn(T) -> R`; for anything else, write a function",
            ),
        );
        None
    }
}
