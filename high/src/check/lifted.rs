//! Function-typed parameters (docs/language.md §6.6): `fn apply(xs: [i64], keep: fn(i64) ->
//! bool)`. A function with one is a template, like a generic function: each call passes a
//! closure (`fn(x) => x > limit`, `fn(x: i64) -> bool { … }`), a program function by name or a
//! function parameter of its own, and gets an instance in which `keep(x)` is a direct call.
//!
//! A closure becomes a function of its own, *lifted*: its parameters first, then one per local
//! of the caller it reads (its captures, found by checking the body where it is written), each
//! borrowed for the call. So a closure never outlives what it captures, nothing is boxed, and
//! Low, the emitters and the interpreter see ordinary functions and calls.

use std::rc::Rc;

use nagi_syntax::ast::{self, Ident, Span};

use super::expr::mk;
use super::generics::Slots;
use super::items::generics::ClosureArg;
use super::items::{FnBody, FnInfo, ParamInfo};
use super::{Body, H403, H417, H432, H433, a_or_an, error, plural, stmt};
use crate::tir::{self, Expr, ExprKind, LocalIdx, LocalKind, ParamMode, Place, Ty};

/// A closure's body as written.
enum ClosureBody<'e> {
    Expr(&'e ast::Expr),
    Block(&'e ast::Block),
}

impl Body<'_, '_> {
    /// A call of a function-typed parameter, `keep(x)`, if `callee` names one: in an instance,
    /// a call of the function it is bound to with its captures after the arguments; in the
    /// template's own check, the arguments checked against its type. `None` when `callee` is
    /// no such parameter.
    pub(super) fn function_param_call(
        &mut self,
        callee: &Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Option<Expr>> {
        if let Some((_, lifted, captures)) = self.fn_params.iter().find(|(n, _, _)| *n == callee.name).cloned() {
            if self.closure_depth > 0 {
                self.param_in_closure(callee);
                return Some(None);
            }
            let info = self.items.fn_info(lifted).into_owned();
            let own = &info.params[..info.params.len() - captures.len()];
            if !self.arity(&callee.name, own.len(), args, span) {
                return Some(None);
            }
            let mut out = Vec::with_capacity(info.params.len());
            for (arg, param) in args.iter().zip(own) {
                let checked = match &param.ty {
                    Some(ty) => self.check_expr(arg, ty),
                    None => self.infer(arg, None),
                };
                out.push(checked);
            }
            let mut out = out.into_iter().collect::<Option<Vec<Expr>>>();
            if let Some(out) = &mut out {
                out.extend(captures.iter().map(|&c| self.local_read(c, span)));
            }
            self.effects.calls.push((lifted, span));
            let ret = info.ret.unwrap_or(Ty::Unit);
            return Some(out.map(|args| mk(ExprKind::Call { func: lifted, args }, ret, span)));
        }
        let local = self.lookup(&callee.name)?;
        let Ty::Fn(params, ret) = self.locals[local].ty.clone() else { return None };
        if self.closure_depth > 0 {
            self.param_in_closure(callee);
            return Some(None);
        }
        if !self.arity(&callee.name, params.len(), args, span) {
            return Some(None);
        }
        let checked: Vec<Option<Expr>> = args.iter().zip(&params).map(|(arg, ty)| self.check_expr(arg, ty)).collect();
        if checked.iter().any(Option::is_none) {
            return Some(None);
        }
        // The template's body is only checked; each instance calls the function itself.
        Some(Some(self.template_value(*ret, span)))
    }

    /// Reports a function parameter of the enclosing function used in a closure passed to a
    /// function (which is lifted to a function of its own, where the parameter is not).
    fn param_in_closure(&mut self, name: &Ident) {
        self.report(
            error(
                H432,
                name.span,
                format!(
                    "a closure passed to a function cannot use `{}`, a function parameter of the function it is in",
                    name.name
                ),
                "used in a closure",
            )
            .note(format!("pass `{}` itself where a function is taken", name.name)),
        );
    }

    /// What a call passes for a function-typed parameter `fn(params) -> ret` (over the callee's
    /// type parameters, bound as far as `slots` says): the function and its captures, and the
    /// values of the captures, passed after the other arguments.
    pub(super) fn closure_for_param(
        &mut self,
        arg: &ast::Expr,
        params: &[Ty],
        ret: &Ty,
        slots: &mut Slots,
        callee: &str,
    ) -> Option<(ClosureArg, Vec<Expr>)> {
        match &arg.kind {
            ast::ExprKind::Closure { params: written, body } => {
                self.lift(arg, written, None, ClosureBody::Expr(body), (params, ret), slots, callee)
            }
            ast::ExprKind::BlockClosure { params: written, ret: written_ret, body } => {
                self.lift(arg, written, written_ret.as_ref(), ClosureBody::Block(body), (params, ret), slots, callee)
            }
            ast::ExprKind::Name(id) => self.passed_function(id, params, ret, slots, callee),
            _ => {
                self.infer(arg, None);
                self.report(
                    error(H432, arg.span, format!("`{callee}` takes a function here"), "not a function")
                        .note("pass a closure, `fn(x) => …`, or a function's name"),
                );
                None
            }
        }
    }

    /// A function passed by its name: a program function, or a function parameter passed on.
    fn passed_function(
        &mut self,
        id: &Ident,
        params: &[Ty],
        ret: &Ty,
        slots: &mut Slots,
        callee: &str,
    ) -> Option<(ClosureArg, Vec<Expr>)> {
        let is_param = self.fn_params.iter().any(|(n, _, _)| *n == id.name)
            || self.lookup(&id.name).is_some_and(|l| matches!(self.locals[l].ty, Ty::Fn(..)));
        if is_param && self.closure_depth > 0 {
            self.param_in_closure(id);
            return None;
        }
        if let Some((_, lifted, captures)) = self.fn_params.iter().find(|(n, _, _)| *n == id.name).cloned() {
            let info = self.items.fn_info(lifted).into_owned();
            let own: Vec<Ty> =
                info.params[..info.params.len() - captures.len()].iter().filter_map(|p| p.ty.clone()).collect();
            let found = Ty::Fn(own, Box::new(info.ret.clone().unwrap_or(Ty::Unit)));
            self.signature_fits(id, &found, params, ret, slots, callee)?;
            let named = captures.iter().map(|&c| (self.locals[c].name.clone(), self.locals[c].ty.clone())).collect();
            let values = captures.iter().map(|&c| self.local_read(c, id.span)).collect();
            return Some((ClosureArg { lifted, captures: named }, values));
        }
        if let Some(local) = self.lookup(&id.name) {
            let found = self.locals[local].ty.clone();
            if !matches!(found, Ty::Fn(..)) {
                let have = self.ty_name(&found);
                self.report(
                    error(
                        H432,
                        id.span,
                        format!("`{callee}` takes a function here, and `{}` is `{have}`", id.name),
                        "not a function",
                    )
                    .note("pass a closure, `fn(x) => …`, or a function's name"),
                );
                return None;
            }
            self.signature_fits(id, &found, params, ret, slots, callee)?;
            // Only in a template's own check, whose instances are never lowered.
            return Some((ClosureArg { lifted: usize::MAX, captures: Vec::new() }, Vec::new()));
        }
        let Some(&func) = self.items.fn_by_name.get(&id.name) else {
            self.report(error(H432, id.span, format!("no function or closure `{}` to pass", id.name), "not found"));
            return None;
        };
        let info = self.items.fn_info(func).into_owned();
        if info.fails || info.params.iter().any(|p| p.mode == ParamMode::Inout) {
            self.report(
                error(
                    H432,
                    id.span,
                    format!("`{}` can fail or takes an `inout` parameter", id.name),
                    "cannot be passed",
                )
                .note("a function parameter is called with values and cannot fail; wrap the call in a closure"),
            );
            return None;
        }
        let own: Vec<Ty> = info.params.iter().filter_map(|p| p.ty.clone()).collect();
        let found = Ty::Fn(own, Box::new(info.ret.clone().unwrap_or(Ty::Unit)));
        self.signature_fits(id, &found, params, ret, slots, callee)?;
        Some((ClosureArg { lifted: func, captures: Vec::new() }, Vec::new()))
    }

    /// Whether a passed function of type `found` fits the parameter `fn(params) -> ret`,
    /// binding the callee's type parameters it decides.
    fn signature_fits(
        &mut self,
        id: &Ident,
        found: &Ty,
        params: &[Ty],
        ret: &Ty,
        slots: &mut Slots,
        callee: &str,
    ) -> Option<()> {
        let pattern = Ty::Fn(params.to_vec(), Box::new(ret.clone()));
        // Exactly the function type: no `T` for a `T?` (the instance calls it as declared).
        let fits = match found {
            Ty::Fn(ps, r) => {
                ps.len() == params.len()
                    && params.iter().zip(ps).all(|(p, f)| self.items.unify(p, f, slots))
                    && self.items.unify(ret, r, slots)
                    && self.bind(&pattern, slots) == *found
            }
            _ => false,
        };
        if fits {
            return Some(());
        }
        let (want, have) = (self.ty_name(&self.bind(&pattern, slots)), self.ty_name(found));
        self.report(error(
            H432,
            id.span,
            format!("`{callee}` takes `{want}` here, and `{}` is `{have}`", id.name),
            "another function type",
        ));
        None
    }

    /// A closure passed for a function-typed parameter: its parameters' types (written, or the
    /// parameter's), its body checked where it is written to find its captures, and the
    /// function it is lifted to.
    #[allow(clippy::too_many_arguments)]
    fn lift(
        &mut self,
        arg: &ast::Expr,
        written: &[ast::ClosureParam],
        written_ret: Option<&ast::TypeExpr>,
        body: ClosureBody<'_>,
        (params, ret): (&[Ty], &Ty),
        slots: &mut Slots,
        callee: &str,
    ) -> Option<(ClosureArg, Vec<Expr>)> {
        if written.len() != params.len() {
            self.report(
                error(
                    H432,
                    arg.span,
                    format!(
                        "the closure for `{callee}` takes {}, not {}",
                        plural(params.len(), "parameter"),
                        written.len()
                    ),
                    "wrong number of parameters",
                )
                .note(format!(
                    "`{callee}` takes `{}` here",
                    self.ty_name(&Ty::Fn(params.to_vec(), Box::new(ret.clone())))
                )),
            );
            return None;
        }
        let mut tys = Vec::with_capacity(params.len());
        for (param, pattern) in written.iter().zip(params) {
            let ty = match &param.ty {
                Some(ty) => {
                    let ty = self.items.resolve_ty(ty, self.diags)?;
                    if !self.items.unify(pattern, &ty, slots) || self.bind(pattern, slots) != ty {
                        let want = self.ty_name(&self.bind(pattern, slots));
                        self.report(error(
                            H432,
                            param.name.span,
                            format!("`{}` is `{want}` here, not `{}`", param.name.name, self.ty_name(&ty)),
                            "another type",
                        ));
                        return None;
                    }
                    ty
                }
                None if self.unbound(pattern, slots) => {
                    self.report(
                        error(
                            H433,
                            param.name.span,
                            format!("the type of `{}` is not known here", param.name.name),
                            "cannot infer",
                        )
                        .note(format!("write it: `fn({}: T) => …`", param.name.name)),
                    );
                    return None;
                }
                None => self.bind(pattern, slots),
            };
            tys.push(ty);
        }
        let want_ret = match written_ret {
            Some(ty) => Some(self.items.resolve_ty(ty, self.diags)?),
            None if matches!(body, ClosureBody::Block(_)) => Some(Ty::Unit),
            None if self.unbound(ret, slots) => None,
            None => Some(self.bind(ret, slots)),
        };
        let (found_ret, captured) = self.closure_captures(written, &tys, want_ret.as_ref(), &body)?;
        if !self.items.unify(ret, &found_ret, slots) || self.bind(ret, slots) != found_ret {
            let (want, have) = (self.ty_name(&self.bind(ret, slots)), self.ty_name(&found_ret));
            self.report(error(
                H432,
                arg.span,
                format!("the closure for `{callee}` gives `{have}`, and `{callee}` takes one that gives `{want}`"),
                "another result",
            ));
            return None;
        }
        let mut captures = Vec::with_capacity(captured.len());
        let mut values = Vec::with_capacity(captured.len());
        for local in captured {
            let (name, ty) = (self.locals[local].name.clone(), self.locals[local].ty.clone());
            if matches!(ty, Ty::Task(_) | Ty::Fn(..)) {
                let what = if matches!(ty, Ty::Task(_)) { "a task's handle" } else { "a function parameter" };
                self.report(
                    error(
                        H417,
                        arg.span,
                        format!("a closure passed to a function cannot capture `{name}`, {what}"),
                        "captured",
                    )
                    .note("a task is joined in its own scope; a function parameter is passed on by its name"),
                );
                return None;
            }
            values.push(self.local_read(local, arg.span));
            captures.push((name, ty));
        }
        if self.closure_depth > 0 {
            // Inside another closure's body checked for its captures: only the values matter;
            // the closure is lifted when that body is checked as its own function.
            return Some((ClosureArg { lifted: usize::MAX, captures }, values));
        }
        let enclosing = self.items.fn_info(self.fn_idx).name.clone();
        let mut fn_params: Vec<ParamInfo> = written
            .iter()
            .zip(&tys)
            .map(|(p, ty)| ParamInfo { name: p.name.clone(), ty: Some(ty.clone()), mode: ParamMode::Borrowed })
            .collect();
        fn_params.extend(captures.iter().map(|(name, ty)| ParamInfo {
            name: Ident { name: name.clone(), span: arg.span },
            ty: Some(ty.clone()),
            mode: ParamMode::Borrowed,
        }));
        let info = FnInfo {
            name: self.items.closure_name(&enclosing),
            params: fn_params,
            ret: Some(found_ret),
            defaults: Vec::new(),
            body: FnBody::Closure(Rc::new(arg.clone()), captures.len()),
            span: arg.span,
            route: None,
            fails: false,
            test: None,
            queue: None,
        };
        let lifted = self.items.lift_closure(info);
        Some((ClosureArg { lifted, captures }, values))
    }

    /// Checks a closure's body where it is written, its parameters declared in a scope of
    /// their own, to find its result type and the caller's locals it reads or changes (its
    /// captures, in the order first met). What this check declares is then forgotten: the
    /// lifted function checks the body again as its own. `None` when the body has errors
    /// (reported here, once).
    fn closure_captures(
        &mut self,
        written: &[ast::ClosureParam],
        tys: &[Ty],
        want_ret: Option<&Ty>,
        body: &ClosureBody<'_>,
    ) -> Option<(Ty, Vec<LocalIdx>)> {
        let (locals_before, diags_before) = (self.locals.len(), self.diags.len());
        self.open_scope();
        for (param, ty) in written.iter().zip(tys) {
            self.declare(&param.name, Some(ty.clone()), false, LocalKind::Binding);
        }
        // The body is checked as the lifted function will check it: none of the caller's
        // loops, transaction, scopes, `try` or name around it, and its effects its own. What it
        // makes (instances, lifted closures) is abstract: this check is only for captures.
        let saved_ret = std::mem::replace(&mut self.ret, want_ret.cloned());
        let saved_loops = std::mem::replace(&mut self.loop_depth, 0);
        let saved_transaction = self.transaction_loop_depth.take();
        let saved_scopes = std::mem::replace(&mut self.scope_depth, 0);
        let saved_try = std::mem::replace(&mut self.try_depth, 0);
        let saved_catching = (self.catching.take(), self.caught, self.failing_calls);
        let saved_name = std::mem::replace(&mut self.display_name, "a closure passed to a function".to_string());
        let saved_effects = std::mem::take(&mut self.effects);
        let saved_template = self.items.checking_template.replace(true);
        self.closure_depth += 1;
        let mut roots = Vec::new();
        let found = match body {
            ClosureBody::Expr(e) => {
                let value = match want_ret {
                    Some(Ty::Unit) => self.infer(e, None),
                    Some(ty) => self.check_expr(e, ty),
                    None => self.infer_value(e, None),
                };
                value.map(|v| {
                    roots = v.roots();
                    v.ty
                })
            }
            ClosureBody::Block(block) => {
                let checked = self.stmts(block);
                block_roots(&checked, &mut roots);
                want_ret.cloned()
            }
        };
        self.closure_depth -= 1;
        self.items.checking_template.set(saved_template);
        self.effects = saved_effects;
        self.display_name = saved_name;
        (self.catching, self.caught, self.failing_calls) = saved_catching;
        self.try_depth = saved_try;
        self.scope_depth = saved_scopes;
        self.transaction_loop_depth = saved_transaction;
        self.loop_depth = saved_loops;
        self.ret = saved_ret;
        // A type the check made abstract (`Page<i64>` of a literal in the body) as the program's.
        let found = if saved_template { found } else { found.map(|ty| self.items.subst(&ty, &[])) };
        self.close_scope();
        self.locals.truncate(locals_before);
        self.poisoned.truncate(locals_before);
        let mut captured: Vec<LocalIdx> = Vec::new();
        for root in roots {
            if root < locals_before && !captured.contains(&root) {
                captured.push(root);
            }
        }
        if self.diags.len() > diags_before {
            return None;
        }
        Some((found?, captured))
    }

    /// Whether local `local` is a capture of the closure whose lifted function is being
    /// checked (its parameters after the closure's own).
    pub(super) fn is_capture(&self, local: LocalIdx) -> bool {
        let info = self.items.fn_info(self.fn_idx);
        match info.body {
            FnBody::Closure(_, captures) => (info.params.len() - captures..info.params.len()).contains(&local),
            FnBody::Block(_) => false,
        }
    }

    /// A read of local `local`, as an argument.
    fn local_read(&self, local: LocalIdx, span: Span) -> Expr {
        mk(ExprKind::Place(Place::Local(local)), self.locals[local].ty.clone(), span)
    }

    /// The body of a closure lifted to a function: its expression returned (or evaluated, for
    /// a closure without a result), or its block, which must return on every path.
    pub(super) fn closure_body(&mut self, closure: &ast::Expr, ret: &Ty) -> tir::Block {
        let span = closure.span;
        let stmts = match &closure.kind {
            ast::ExprKind::Closure { body, .. } if *ret == Ty::Unit => {
                self.infer(body, None).map(|v| tir::StmtKind::Expr(v)).into_iter().collect()
            }
            ast::ExprKind::Closure { body, .. } => {
                self.check_expr(body, ret).map(|v| tir::StmtKind::Return(Some(v))).into_iter().collect()
            }
            ast::ExprKind::BlockClosure { body, .. } => {
                let block = self.stmts(body);
                if *ret != Ty::Unit && !stmt::block_returns(body) {
                    let end = body.span.end;
                    let ty = self.ty_name(ret);
                    self.report(
                        error(
                            H403,
                            Span { start: end.saturating_sub(1), end },
                            format!("the closure can reach its end without returning {} `{ty}`", a_or_an(&ty)),
                            "the closure can end here",
                        )
                        .note(format!("add `return` with {} `{ty}` value on every path", a_or_an(&ty))),
                    );
                }
                return block;
            }
            _ => Vec::new(),
        };
        tir::Block { stmts: stmts.into_iter().map(|kind| tir::Stmt { kind, span }).collect() }
    }
}

/// The locals the statements of `block` read or change, at any depth.
fn block_roots(block: &tir::Block, roots: &mut Vec<LocalIdx>) {
    block.walk_statements(&mut |kind, exprs| {
        for e in exprs {
            roots.extend(e.roots());
        }
        if let Some(tir::StmtKind::Assign { place, .. }) = kind {
            roots.push(place.root());
            if let Place::Index(..) | Place::Field(..) = place {
                let mut indices = Vec::new();
                collect_index_roots(place, &mut indices);
                roots.extend(indices);
            }
        }
    });
}

/// The locals the index expressions of `place` read.
fn collect_index_roots(place: &Place, roots: &mut Vec<LocalIdx>) {
    match place {
        Place::Local(_) => {}
        Place::Field(base, _) => collect_index_roots(base, roots),
        Place::Index(base, index) => {
            roots.extend(index.roots());
            collect_index_roots(base, roots);
        }
    }
}
