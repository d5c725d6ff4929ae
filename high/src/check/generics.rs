//! Calls of generic functions and literals of generic classes (docs/language.md §3.7): the
//! type arguments are inferred — from the expected type first, then from the arguments in
//! order — their capabilities checked against the parameters' bounds, and the instance used.

use nagi_syntax::ast::{self, Ident, Span};

use super::expr::{NotPlace, mk};
use super::items::generics::{ClosureArg, bounds_list, bounds_written};
use super::items::{actor_stored, holds_actor};
use super::{Body, H301, H417, H433, error};
use crate::tir::{Expr, ExprKind, FnIdx, ParamMode, Ty};

/// The type parameters of a generic callee and what the call has bound them to so far.
pub(super) type Slots = Vec<(String, Option<Ty>)>;

impl Body<'_, '_> {
    /// The type parameters of generic function `template` (none for a plain function), bound
    /// from the expected type where the result decides them (`let p: Page<User> = empty()`).
    pub(super) fn type_arg_slots(&self, template: Option<usize>, ret: Option<&Ty>, hint: Option<&Ty>) -> Slots {
        let Some(k) = template else { return Vec::new() };
        let slots: Slots = self.items.generic_fns[k].params.iter().map(|p| (p.name.clone(), None)).collect();
        if let (Some(ret), Some(hint)) = (ret, hint) {
            // A `T` result where a `U?` is expected is a `U` made an option (as anywhere).
            let hint = match (ret, hint) {
                (Ty::Option(_), _) => hint,
                (_, Ty::Option(inner)) => inner,
                _ => hint,
            };
            let mut trial = slots.clone();
            if self.items.unify(ret, hint, &mut trial) {
                return trial;
            }
        }
        slots
    }

    /// Whether `ty` (a callee's parameter type) names a type parameter not bound yet.
    pub(super) fn unbound(&self, ty: &Ty, slots: &Slots) -> bool {
        let items = self.items;
        match ty {
            Ty::Param(name, _) => slots.iter().any(|(n, t)| n == name && t.is_none()),
            Ty::Array(inner) | Ty::Option(inner) | Ty::Task(inner) => self.unbound(inner, slots),
            Ty::Map(k, v) => self.unbound(k, slots) || self.unbound(v, slots),
            Ty::Fn(params, ret) => params.iter().any(|p| self.unbound(p, slots)) || self.unbound(ret, slots),
            Ty::Class(c) => {
                items.class_generic(*c).is_some_and(|(_, args)| args.iter().any(|a| self.unbound(a, slots)))
            }
            Ty::Enum(e) => {
                items.result_of(*e).is_some_and(|ok| self.unbound(&ok, slots))
                    || items.enum_generic(*e).is_some_and(|(_, args)| args.iter().any(|a| self.unbound(a, slots)))
            }
            _ => false,
        }
    }

    /// `ty` with the bound type parameters of `slots` replaced.
    pub(super) fn bind(&self, ty: &Ty, slots: &Slots) -> Ty {
        if slots.is_empty() {
            return ty.clone();
        }
        let env: Vec<(String, Ty)> = slots.iter().filter_map(|(n, t)| Some((n.clone(), t.clone()?))).collect();
        self.items.subst(ty, &env)
    }

    /// An argument whose parameter type names a type parameter not bound yet: its own type
    /// binds it.
    pub(super) fn inferred_arg(
        &mut self,
        arg: &ast::Expr,
        mode: ParamMode,
        pattern: &Ty,
        slots: &mut Slots,
        callee: &str,
    ) -> Option<Expr> {
        let value = match mode {
            ParamMode::Inout => {
                // The place's type binds the parameters; the argument must then be exactly the
                // parameter's type (no `T` for a `T?`), which `inout_arg` checks and reports.
                let (place, found) = match self.place_expr(arg) {
                    Ok(p) => p,
                    Err(NotPlace::Reported) => return None,
                    Err(NotPlace::Value) => return self.inout_arg(arg, None, callee),
                };
                if !self.items.unify(pattern, &found, slots) {
                    return self.arg_mismatch(pattern, &found, slots, arg.span, callee);
                }
                let want = self.bind(pattern, slots);
                return self.inout_place(place, found, Some(&want), arg.span);
            }
            ParamMode::Borrowed | ParamMode::Owned => self.infer_value(arg, None)?,
        };
        if !self.items.unify(pattern, &value.ty, slots) {
            return self.arg_mismatch(pattern, &value.ty, slots, arg.span, callee);
        }
        let want = self.bind(pattern, slots);
        self.coerce(value, &want)
    }

    fn arg_mismatch(&mut self, pattern: &Ty, found: &Ty, slots: &Slots, span: Span, callee: &str) -> Option<Expr> {
        let (want, have) = (self.ty_name(&self.bind(pattern, slots)), self.ty_name(found));
        self.report(error(
            H301,
            span,
            format!("mismatched types: `{callee}` expects `{want}` here, found `{have}`"),
            format!("this is `{have}`"),
        ));
        None
    }

    /// The instance of generic function `template` the call's bindings choose, once every type
    /// parameter is bound and has the capabilities its bounds require.
    pub(super) fn instance_for_call(
        &mut self,
        template: usize,
        slots: &Slots,
        closures: Vec<ClosureArg>,
        callee: &Ident,
        span: Span,
    ) -> Option<FnIdx> {
        let items = self.items;
        let generic = &items.generic_fns[template];
        let mut args = Vec::with_capacity(slots.len());
        let mut ok = true;
        for ((name, bound), param) in slots.iter().zip(&generic.params) {
            let Some(ty) = bound else {
                self.report(
                    error(
                        H433,
                        span,
                        format!("the call does not say what `{name}` of `{}` is", callee.name),
                        "cannot infer",
                    )
                    .note(format!("give the result a type (`let x: … = {}(…)`)", callee.name)),
                );
                ok = false;
                continue;
            };
            let missing = items.missing_bounds(ty, param.bounds);
            if missing.0 != 0 {
                let found = self.ty_name(ty);
                self.report(
                    error(
                        H433,
                        span,
                        format!(
                            "`{found}` is not {}, which `{name}` of `{}` requires",
                            bounds_list(missing),
                            callee.name
                        ),
                        format!("`{name}` is `{found}` here"),
                    )
                    .note(format!(
                        "`{}` declares `{name}: {}`",
                        callee.name,
                        bounds_written(param.bounds)
                    )),
                );
                ok = false;
            }
            args.push(ty.clone());
        }
        if !ok || !self.type_args_allowed(&args, false, span) {
            return None;
        }
        let instance = items.fn_instance(template, args, closures);
        if instance.is_none() {
            self.report(
                error(H433, span, format!("the instances of `{}` nest too deeply", callee.name), "instantiated here")
                    .note("a generic function that calls itself with a larger type argument would never end"),
            );
        }
        instance
    }

    /// `Page { … }` of a generic class: the instance the expected type names, or the one the
    /// field values decide (each value checked once, against its field's type where that
    /// type is known).
    pub(super) fn generic_class_literal(
        &mut self,
        template: usize,
        class: &Ident,
        fields: &[(Ident, ast::Expr)],
        hint: Option<&Ty>,
        span: Span,
    ) -> Option<Expr> {
        let items = self.items;
        let generic = &items.generic_classes[template];
        let hint = match hint {
            Some(Ty::Option(inner)) => Some(&**inner),
            other => other,
        };
        if let Some(Ty::Class(c)) = hint
            && items.class_generic(*c).is_some_and(|(t, _)| t == template)
        {
            return self.class_literal_of(*c, class, fields, span);
        }
        let mut slots: Slots = generic.params.iter().map(|p| (p.name.clone(), None)).collect();
        let mut values = Vec::with_capacity(fields.len());
        for (name, value) in fields {
            let pattern = generic.info.fields.iter().find(|f| f.name == name.name).and_then(|f| f.ty.clone());
            let checked = match &pattern {
                Some(ty) if !self.unbound(ty, &slots) => self.check_expr(value, &self.bind(ty, &slots)),
                Some(ty) => {
                    let v = self.infer_value(value, None);
                    match v {
                        Some(v) if self.items.unify(ty, &v.ty, &mut slots) => Some(v),
                        Some(v) => {
                            let want = self.bind(ty, &slots);
                            self.mismatch(&want, &v);
                            None
                        }
                        None => None,
                    }
                }
                None => self.infer(value, None),
            };
            values.push(checked);
        }
        let mut args = Vec::with_capacity(slots.len());
        for (name, bound) in &slots {
            match bound {
                Some(ty) => args.push(ty.clone()),
                None => {
                    self.report(
                        error(
                            H433,
                            span,
                            format!("the literal does not say what `{name}` of `{}` is", class.name),
                            "cannot infer",
                        )
                        .note(format!("give it a type: `let x: {}<…> = {} {{ … }}`", class.name, class.name)),
                    );
                    return None;
                }
            }
        }
        if !self.type_args_allowed(&args, true, span) {
            return None;
        }
        let idx = items.class_instance(template, args);
        self.class_literal_checked(idx, class, fields, Some(values), span)
    }

    /// The generic enum a name refers to, when it is written as a value (`Tree` in
    /// `Tree.Leaf(1)`) and no local of that name hides it.
    pub(super) fn generic_enum_named(&self, e: &ast::Expr) -> Option<usize> {
        let ast::ExprKind::Name(id) = &e.kind else { return None };
        if self.lookup(&id.name).is_some() {
            return None;
        }
        self.items.generic_enum_by_name.get(&id.name).copied()
    }

    /// `Tree.Leaf(1)` of a generic enum: the instance the expected type names, or the one the
    /// payload decides (a variant without one needs the expected type).
    pub(super) fn generic_variant(
        &mut self,
        template: usize,
        variant: &Ident,
        args: Option<&[ast::Expr]>,
        hint: Option<&Ty>,
        span: Span,
    ) -> Option<Expr> {
        let items = self.items;
        let generic = &items.generic_enums[template];
        let hint = match hint {
            Some(Ty::Option(inner)) => Some(&**inner),
            other => other,
        };
        if let Some(Ty::Enum(e)) = hint
            && items.enum_generic(*e).is_some_and(|(t, _)| t == template)
        {
            return self.variant_value(*e, variant, args, span);
        }
        let mut slots: Slots = generic.params.iter().map(|p| (p.name.clone(), None)).collect();
        let payload = generic.info.variants.iter().find(|v| v.name == variant.name).map(|v| v.payload.clone());
        let (pattern, arg) = match (payload, args) {
            (Some(Some(Some(pattern))), Some([arg])) => (pattern, arg),
            (Some(None), None) => {
                let name = &generic.info.name;
                self.report(
                    error(
                        H433,
                        span,
                        format!("`{name}.{}` does not say what its enum holds", variant.name),
                        "cannot infer",
                    )
                    .note(format!("give it a type: `let x: {name}<…> = …`")),
                );
                return None;
            }
            _ => {
                // The enum's own message for an unknown variant or a wrong number of values.
                let own: Vec<Ty> = generic.params.iter().map(|p| p.ty()).collect();
                let probe = items.enum_instance(template, own);
                return self.variant_value(probe, variant, args, span);
            }
        };
        let value = self.infer_value(arg, None)?;
        if !items.unify(&pattern, &value.ty, &mut slots) {
            let want = self.bind(&pattern, &slots);
            self.mismatch(&want, &value);
            return None;
        }
        let mut bound = Vec::with_capacity(slots.len());
        for (name, ty) in &slots {
            match ty {
                Some(ty) => bound.push(ty.clone()),
                None => {
                    self.report(
                        error(
                            H433,
                            span,
                            format!("`{}.{}` does not say what `{name}` is", generic.info.name, variant.name),
                            "cannot infer",
                        )
                        .note(format!("give it a type: `let x: {}<…> = …`", generic.info.name)),
                    );
                    return None;
                }
            }
        }
        if !self.type_args_allowed(&bound, true, span) {
            return None;
        }
        let idx = items.enum_instance(template, bound);
        let index = items.variant_index(idx, &variant.name)?;
        let ty = items.enum_at(idx)?.variants[index as usize].payload.clone()??;
        let payload = self.coerce(value, &ty)?;
        Some(mk(
            ExprKind::Variant { enum_idx: idx, variant: index, payload: Some(Box::new(payload)) },
            Ty::Enum(idx),
            span,
        ))
    }

    /// Whether `args` may be the type arguments of a class or enum (`holder`) or of a function:
    /// no task handle anywhere (a task is only a `let` in its `scope`), and no actor handle in
    /// a class or enum (which no field or payload holds).
    fn type_args_allowed(&mut self, args: &[Ty], holder: bool, span: Span) -> bool {
        fn has_task(ty: &Ty) -> bool {
            match ty {
                Ty::Task(_) => true,
                Ty::Array(t) | Ty::Option(t) => has_task(t),
                Ty::Map(k, v) => has_task(k) || has_task(v),
                _ => false,
            }
        }
        for arg in args {
            if has_task(arg) {
                let name = self.ty_name(arg);
                self.report(
                    error(H417, span, format!("a type argument cannot be `{name}`"), "a task handle")
                        .note("a task's handle stays in the `let` of its `scope` until it is joined"),
                );
                return false;
            }
            if holder && holds_actor(arg) {
                self.report(actor_stored(span, "a generic class or enum"));
                return false;
            }
        }
        true
    }

    /// A value standing for an operation on a type parameter's values (`a == b` of `T: eq`),
    /// in a template's body: that body's TIR is only checked, never lowered (each instance's
    /// is, with the operation its type has).
    pub(super) fn template_value(&self, ty: Ty, span: Span) -> Expr {
        let kind = match &ty {
            Ty::Bool => ExprKind::Bool(false),
            _ => ExprKind::Str(String::new()),
        };
        mk(kind, ty, span)
    }
}
