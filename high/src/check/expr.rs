//! Expressions: bidirectional type checking (an expected type flows into literals, `none`,
//! `[]` and operands), places, operators, casts, array and class literals.

use nagi_low::{BinaryOp as LowBinary, ScalarType, UnaryOp as LowUnary};
use nagi_syntax::ast::{self, BinaryOp, Span, UnaryOp};

use super::{
    Body, H201, H203, H204, H214, H215, H301, H302, H303, H304, H305, H306, H308, H312, H313, H418, H432, a_or_an,
    error,
};
use crate::tir::{Bounds, ClassIdx, Expr, ExprKind, Place, Ty};

/// Why an expression did not yield a place.
pub(super) enum NotPlace {
    /// It is not a name, field or element at all (a call, a literal, …).
    Value,
    /// It is, but checking it failed and was reported.
    Reported,
}

impl Body<'_, '_> {
    /// Checks `e` against `expected`, turning a `T` into a `T?` where one is expected.
    pub(super) fn check_expr(&mut self, e: &ast::Expr, expected: &Ty) -> Option<Expr> {
        let value = self.infer(e, Some(expected))?;
        self.coerce(value, expected)
    }

    /// Accepts `value` where `expected` is wanted: equal types, or `T` for `T?`.
    pub(super) fn coerce(&mut self, value: Expr, expected: &Ty) -> Option<Expr> {
        if value.ty == *expected {
            return Some(value);
        }
        if let Ty::Option(inner) = expected
            && **inner == value.ty
        {
            let span = value.span;
            return Some(Expr { kind: ExprKind::OptionSome(Box::new(value)), ty: expected.clone(), span });
        }
        self.mismatch(expected, &value);
        None
    }

    /// Reports that `value` is not of type `expected`, with a hint where one helps.
    pub(super) fn mismatch(&mut self, expected: &Ty, value: &Expr) {
        let (want, found) = (self.ty_name(expected), self.ty_name(&value.ty));
        let mut d = error(
            H301,
            value.span,
            format!("mismatched types: expected `{want}`, found `{found}`"),
            format!("this is `{found}`"),
        );
        let want_base = match expected {
            Ty::Option(inner) => inner.as_ref(),
            other => other,
        };
        if matches!(value.kind, ExprKind::Int(_)) && *want_base == Ty::F64 {
            d = d.note("write a float literal, such as `1.0`");
        } else if is_number(want_base) && is_number(&value.ty) {
            d = d.note(format!("numbers are not converted implicitly; convert with `as {}`", self.ty_name(want_base)));
        } else if let Ty::Option(inner) = &value.ty
            && **inner == *expected
        {
            d = d.note("this is an option; unwrap it with `if let`");
        } else if value.ty == Ty::Secret {
            d = d.note("a secret configuration value gives its text only through `.reveal()`");
        }
        self.report(d);
    }

    /// Infers `e`'s type; `hint` is the type the context expects, if known, and decides the
    /// type of integer literals, `none` and `[]`.
    pub(super) fn infer(&mut self, e: &ast::Expr, hint: Option<&Ty>) -> Option<Expr> {
        let span = e.span;
        let base = hint.map(strip_option);
        match &e.kind {
            ast::ExprKind::Int(v) => self.int_literal(*v, false, base, span),
            ast::ExprKind::Duration(v) => self.duration_literal(*v, base, span),
            ast::ExprKind::Float(f) => Some(mk(ExprKind::Float(*f), Ty::F64, span)),
            ast::ExprKind::Str(s) => Some(mk(ExprKind::Str(s.clone()), Ty::String, span)),
            ast::ExprKind::Interp { texts, holes } => self.interpolation(texts, holes, span),
            ast::ExprKind::Bool(b) => Some(mk(ExprKind::Bool(*b), Ty::Bool, span)),
            ast::ExprKind::None => self.none_literal(hint, span),
            ast::ExprKind::Field { object, field } if let Some(e) = self.enum_named(object) => {
                self.variant_value(e, field, None, span)
            }
            ast::ExprKind::Field { object, field } if let Some(t) = self.generic_enum_named(object) => {
                self.generic_variant(t, field, None, hint, span)
            }
            ast::ExprKind::MethodCall { receiver, method, args } if let Some(t) = self.generic_enum_named(receiver) => {
                self.generic_variant(t, method, Some(args), hint, span)
            }
            ast::ExprKind::Field { object, field } if let Some(name) = self.config_named(object) => {
                self.config_read(&name, field, span)
            }
            ast::ExprKind::MethodCall { receiver, method, args } if let Some(e) = self.enum_named(receiver) => {
                self.variant_value(e, method, Some(args), span)
            }
            ast::ExprKind::MethodCall { receiver, method, args } if let Some(q) = self.queue_named(receiver) => {
                self.queue_method(q, method, args, span)
            }
            ast::ExprKind::MethodCall { receiver, method, args } if let Some(a) = self.actor_named(receiver) => {
                self.actor_start(a, method, args, span)
            }
            ast::ExprKind::MethodCall { receiver, .. } if let Some(Err(d)) = self.supervisor_path(receiver) => {
                self.report(d);
                None
            }
            ast::ExprKind::MethodCall { receiver, method, args }
                if method.name != "clone" && self.is_actor_handle(receiver) =>
            {
                self.actor_call(receiver, method, args, false, span)
            }
            ast::ExprKind::Name(_) | ast::ExprKind::Field { .. } if let Some(found) = self.supervisor_path(e) => {
                self.supervised_actor(found, span)
            }
            ast::ExprKind::Name(_) | ast::ExprKind::Field { .. } | ast::ExprKind::Index { .. } => {
                let (place, ty) = self.place_expr(e).ok()?;
                Some(mk(ExprKind::Place(place), ty, span))
            }
            ast::ExprKind::Array(elems) => self.array_literal(elems, base, span),
            ast::ExprKind::ClassLit { class, fields } => self.class_literal(class, fields, hint, span),
            ast::ExprKind::Unary { op, operand } => self.unary(*op, operand, base, span),
            ast::ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, base, span),
            ast::ExprKind::Cast { expr, ty } => self.cast(expr, ty, span),
            ast::ExprKind::Call { callee, args } => self.call(callee, args, base, span),
            ast::ExprKind::MethodCall { receiver, method, args } => {
                self.method_call(receiver, method, args, hint, span)
            }
            ast::ExprKind::Db { op, class, args } => self.db_op(op, class.as_ref(), args, span),
            ast::ExprKind::Http { method, class, args } => self.http_call(method, class.as_ref(), args, span),
            ast::ExprKind::Try(inner) => self.try_expr(inner, hint, span),
            ast::ExprKind::Spawn(call) => self.spawn(call, false, span),
            ast::ExprKind::SpawnBlocking(call) => self.spawn(call, true, span),
            ast::ExprKind::TryOption(call) => self.try_option(call, span),
            ast::ExprKind::Catch(call) => self.catch(call, span),
            ast::ExprKind::Closure { .. } | ast::ExprKind::BlockClosure { .. } => self.stray_closure(span),
            ast::ExprKind::Send(message) => self.send(message, span),
        }
    }

    /// Infers a value that must not be of type unit (a call of a function without a result).
    pub(super) fn infer_value(&mut self, e: &ast::Expr, hint: Option<&Ty>) -> Option<Expr> {
        let value = self.infer(e, hint)?;
        if value.ty == Ty::Unit {
            self.report(error(H313, value.span, "this expression has no value", "its type is unit"));
            return None;
        }
        Some(value)
    }

    /// Resolves a name, field or element to a place. Fields and elements of temporaries are
    /// errors: TIR reads only through places, so the value must be bound first.
    pub(super) fn place_expr(&mut self, e: &ast::Expr) -> Result<(Place, Ty), NotPlace> {
        match &e.kind {
            ast::ExprKind::Name(id) => {
                let Some(local) = self.lookup(&id.name) else {
                    let mut d =
                        error(H201, id.span, format!("unknown variable `{}`", id.name), "not found in this scope");
                    if self.items.fn_by_name.contains_key(&id.name) {
                        d = d.note(format!("`{}` is a function; call it with `{}(…)`", id.name, id.name));
                    }
                    self.report(d);
                    return Err(NotPlace::Reported);
                };
                if self.poisoned[local] {
                    return Err(NotPlace::Reported);
                }
                if matches!(self.locals[local].ty, Ty::Fn(..)) {
                    self.report(
                        error(
                            H432,
                            id.span,
                            format!("`{}` is a function parameter, not a value", id.name),
                            "used as a value",
                        )
                        .note(format!(
                            "call it, `{}(…)`, or pass it on by its name to a function that takes one",
                            id.name
                        )),
                    );
                    return Err(NotPlace::Reported);
                }
                Ok((Place::Local(local), self.locals[local].ty.clone()))
            }
            ast::ExprKind::Field { object, field } => {
                let (base, ty) = self.base_place(object, "read a field of")?;
                match &ty {
                    Ty::Class(class) => {
                        let Some(idx) = self.items.field_index(*class, &field.name) else {
                            let class_name = self.ty_name(&ty);
                            let list = self.items.field_list(*class);
                            self.report(
                                error(
                                    H204,
                                    field.span,
                                    format!("class `{class_name}` has no field `{}`", field.name),
                                    "unknown field",
                                )
                                .note(list),
                            );
                            return Err(NotPlace::Reported);
                        };
                        let field_ty = self
                            .items
                            .class_at(*class)
                            .and_then(|c| c.fields[idx].ty.clone())
                            .ok_or(NotPlace::Reported)?;
                        Ok((Place::Field(Box::new(base), idx), field_ty))
                    }
                    other => {
                        let name = self.ty_name(other);
                        let mut d = error(
                            H305,
                            field.span,
                            format!("`{name}` has no field `{}`; only classes have fields", field.name),
                            format!("this is `{name}`"),
                        );
                        if matches!(other, Ty::Option(inner) if matches!(**inner, Ty::Class(_))) {
                            d = d.note("this is an option; unwrap it with `if let v = … { v.field }`");
                        }
                        self.report(d);
                        Err(NotPlace::Reported)
                    }
                }
            }
            ast::ExprKind::Index { array, index } => {
                let base = self.base_place(array, "index");
                let index = self.check_expr(index, &Ty::I64);
                let (base, ty) = base?;
                let Ty::Array(elem) = ty else {
                    let name = self.ty_name(&ty);
                    self.report(error(
                        H306,
                        array.span,
                        format!("cannot index {} `{name}`; only arrays can be indexed", a_or_an(&name)),
                        format!("this is `{name}`"),
                    ));
                    return Err(NotPlace::Reported);
                };
                let index = index.ok_or(NotPlace::Reported)?;
                Ok((Place::Index(Box::new(base), Box::new(index)), *elem))
            }
            _ => Err(NotPlace::Value),
        }
    }

    /// The place under a field access or index; a temporary there is reported.
    fn base_place(&mut self, e: &ast::Expr, action: &str) -> Result<(Place, Ty), NotPlace> {
        match self.place_expr(e) {
            Err(NotPlace::Value) => {
                // Check the temporary anyway, so mistakes inside it are reported too.
                if let Some(value) = self.infer(e, None) {
                    let name = self.ty_name(&value.ty);
                    self.report(
                        error(H312, e.span, format!("cannot {action} a temporary `{name}` value"), "a temporary value")
                            .note("bind it to a variable first: `let v = …`"),
                    );
                }
                Err(NotPlace::Reported)
            }
            other => other,
        }
    }

    /// An integer literal, `-magnitude` when `negative`, typed by the hint (`i64` by default).
    fn int_literal(&mut self, magnitude: u64, negative: bool, hint: Option<&Ty>, span: Span) -> Option<Expr> {
        let ty = if hint == Some(&Ty::I32) { Ty::I32 } else { Ty::I64 };
        let value = if negative { -i128::from(magnitude) } else { i128::from(magnitude) };
        let (min, max, name) = match ty {
            Ty::I32 => (i128::from(i32::MIN), i128::from(i32::MAX), "i32"),
            _ => (i128::from(i64::MIN), i128::from(i64::MAX), "i64"),
        };
        if value < min || value > max {
            self.report(
                error(H303, span, format!("the integer literal `{value}` does not fit in `{name}`"), "out of range")
                    .note(format!("`{name}` holds {min} to {max}")),
            );
            return None;
        }
        // The range check above makes this conversion exact.
        Some(mk(ExprKind::Int(value as i64), ty, span))
    }

    fn none_literal(&mut self, hint: Option<&Ty>, span: Span) -> Option<Expr> {
        match hint {
            Some(ty @ Ty::Option(_)) => Some(mk(ExprKind::None, ty.clone(), span)),
            Some(other) => {
                let name = self.ty_name(other);
                self.report(
                    error(
                        H301,
                        span,
                        format!("mismatched types: expected `{name}`, found `none`"),
                        "`none` is not allowed here",
                    )
                    .note(format!("only options have `none`; the type `{name}?` would allow it")),
                );
                None
            }
            None => {
                self.report(
                    error(H304, span, "the type of this `none` is unknown", "type needed")
                        .note("write the type where `none` is stored, as in `let x: i64? = none`"),
                );
                None
            }
        }
    }

    fn array_literal(&mut self, elems: &[ast::Expr], hint: Option<&Ty>, span: Span) -> Option<Expr> {
        if let Some(Ty::Array(elem)) = hint {
            let checked: Vec<Option<Expr>> = elems.iter().map(|e| self.check_expr(e, elem)).collect();
            let items = checked.into_iter().collect::<Option<Vec<_>>>()?;
            return Some(mk(ExprKind::Array(items), Ty::Array(elem.clone()), span));
        }
        if elems.is_empty() {
            self.report(
                error(H304, span, "the element type of this empty array is unknown", "type needed")
                    .note("write the type where the array is stored, as in `var xs: [i64] = []`"),
            );
            return None;
        }
        // An element that is not a bare integer literal decides the type, so `[1, x]` with an
        // `i32` `x` makes the `1` an `i32` too.
        let anchor = elems.iter().position(|e| !is_int_literalish(e)).unwrap_or(0);
        let first = self.infer_value(&elems[anchor], None);
        let elem_ty = first.as_ref().map(|f| f.ty.clone());
        let mut items = Vec::with_capacity(elems.len());
        let mut ok = first.is_some();
        let mut first = first;
        for (i, e) in elems.iter().enumerate() {
            let item = if i == anchor {
                first.take()
            } else {
                match &elem_ty {
                    Some(ty) => self.check_expr(e, ty),
                    None => self.infer(e, None),
                }
            };
            match item {
                Some(item) => items.push(item),
                None => ok = false,
            }
        }
        let elem_ty = elem_ty?;
        if !self.not_a_task(&elem_ty, span, "put in an array") {
            return None;
        }
        ok.then(|| mk(ExprKind::Array(items), Ty::Array(Box::new(elem_ty)), span))
    }

    fn class_literal(
        &mut self,
        class: &ast::Ident,
        fields: &[(ast::Ident, ast::Expr)],
        hint: Option<&Ty>,
        span: Span,
    ) -> Option<Expr> {
        let items = self.items;
        if let Some(&template) = items.generic_class_by_name.get(&class.name) {
            return self.generic_class_literal(template, class, fields, hint, span);
        }
        let Some(idx) = items.class_named(&class.name) else {
            self.report(error(H203, class.span, format!("unknown class `{}`", class.name), "no class of this name"));
            return None;
        };
        if let Some(actor) = items.class_at(idx).and_then(|c| c.actor)
            && items.actors[actor].init != self.fn_idx
        {
            self.report(
                error(H418, class.span, format!("`{}` is an actor, not a class", class.name), "an actor")
                    .note(format!("start it with `{}.start()`; its state starts from its `var` lines", class.name)),
            );
            return None;
        }
        self.class_literal_of(idx, class, fields, span)
    }

    /// A literal of the class at `idx`, each value checked against its field's type.
    pub(super) fn class_literal_of(
        &mut self,
        idx: ClassIdx,
        class: &ast::Ident,
        fields: &[(ast::Ident, ast::Expr)],
        span: Span,
    ) -> Option<Expr> {
        self.class_literal_checked(idx, class, fields, None, span)
    }

    /// A literal of the class at `idx`; `checked` holds the values already checked (those of
    /// a generic class's literal, which decided its instance), in the order written.
    pub(super) fn class_literal_checked(
        &mut self,
        idx: ClassIdx,
        class: &ast::Ident,
        fields: &[(ast::Ident, ast::Expr)],
        checked: Option<Vec<Option<Expr>>>,
        span: Span,
    ) -> Option<Expr> {
        let items = self.items;
        let info = items.class_at(idx)?.into_owned();
        let class_name = items.ty_name(&Ty::Class(idx));
        let mut checked = checked.map(|c| c.into_iter());
        // Values stay in the order written: that is the order they are evaluated in.
        let mut written: Vec<(usize, Option<Expr>)> = Vec::with_capacity(fields.len());
        let mut given = vec![false; info.fields.len()];
        let mut ok = true;
        for (name, value) in fields {
            let done = checked.as_mut().map(|c| c.next().flatten());
            let Some(fi) = items.field_index(idx, &name.name) else {
                self.report(
                    error(
                        H204,
                        name.span,
                        format!("class `{class_name}` has no field `{}`", name.name),
                        "unknown field",
                    )
                    .note(items.field_list(idx)),
                );
                ok = false;
                continue;
            };
            if std::mem::replace(&mut given[fi], true) {
                self.report(error(
                    H214,
                    name.span,
                    format!("field `{}` is given twice", name.name),
                    "given again here",
                ));
                ok = false;
                continue;
            }
            match (&info.fields[fi].ty, done) {
                (Some(ty), None) => written.push((fi, self.check_expr(value, ty))),
                (Some(_), Some(None)) => written.push((fi, None)),
                (Some(ty), Some(Some(value))) => written.push((fi, self.coerce(value, ty))),
                (None, _) => ok = false,
            }
        }
        let missing: Vec<String> =
            info.fields.iter().zip(&given).filter(|(_, g)| !**g).map(|(f, _)| format!("`{}`", f.name)).collect();
        if !missing.is_empty() {
            let (noun, list) =
                if missing.len() == 1 { ("field", missing[0].clone()) } else { ("fields", missing.join(", ")) };
            self.report(
                error(
                    H215,
                    class.span,
                    format!("missing {noun} {list} in this `{class_name}` literal"),
                    format!("{list} not given"),
                )
                .note("a class literal gives every field exactly once"),
            );
            return None;
        }
        let fields = written.into_iter().map(|(fi, value)| Some((fi, value?))).collect::<Option<Vec<_>>>()?;
        ok.then(|| mk(ExprKind::New { class: idx, fields }, Ty::Class(idx), span))
    }

    fn unary(&mut self, op: UnaryOp, operand: &ast::Expr, hint: Option<&Ty>, span: Span) -> Option<Expr> {
        if op == UnaryOp::Neg {
            // Negated literals fold, which is also how `-9223372036854775808` fits in `i64`.
            match &operand.kind {
                ast::ExprKind::Int(v) => return self.int_literal(*v, true, hint, span),
                ast::ExprKind::Float(f) => return Some(mk(ExprKind::Float(-f), Ty::F64, span)),
                _ => {}
            }
        }
        let value = self.infer(operand, hint)?;
        if op == UnaryOp::Neg && value.ty == Ty::Duration {
            return Some(self.negate_duration(value, span));
        }
        let ok = match op {
            UnaryOp::Neg => is_number(&value.ty),
            UnaryOp::Not => matches!(value.ty, Ty::Bool | Ty::I32 | Ty::I64),
        };
        if !ok {
            let (symbol, allowed) = match op {
                UnaryOp::Neg => ("-", "i32, i64 and f64"),
                UnaryOp::Not => ("!", "bool, i32 and i64"),
            };
            let name = self.ty_name(&value.ty);
            self.report(
                error(H302, span, format!("cannot apply `{symbol}` to `{name}`"), format!("this is `{name}`"))
                    .note(format!("`{symbol}` works on {allowed}")),
            );
            return None;
        }
        let low = match op {
            UnaryOp::Neg => LowUnary::Neg,
            UnaryOp::Not => LowUnary::Not,
        };
        let ty = value.ty.clone();
        Some(mk(ExprKind::Unary { op: low, operand: Box::new(value) }, ty, span))
    }

    /// Infers two operands that must have the same type. When only the left one is a bare
    /// integer literal, the right one is inferred first so the literal takes its type.
    pub(super) fn infer_pair(
        &mut self,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        hint: Option<&Ty>,
        span: Span,
        what: &str,
    ) -> Option<(Expr, Expr)> {
        if is_int_literalish(lhs) && !is_int_literalish(rhs) {
            let r = self.infer_value(rhs, hint);
            let l = self.infer_value(lhs, r.as_ref().map(|r| &r.ty).or(hint));
            return self.same_type(l?, r?, span, what);
        }
        let l = self.infer_value(lhs, hint)?;
        self.pair_after(l, rhs, hint, span, what)
    }

    /// The right operand inferred after the left one, `l`, whose type it takes by default; both
    /// must have one type.
    fn pair_after(
        &mut self,
        l: Expr,
        rhs: &ast::Expr,
        hint: Option<&Ty>,
        span: Span,
        what: &str,
    ) -> Option<(Expr, Expr)> {
        let r = self.infer_value(rhs, Some(&l.ty).or(hint))?;
        self.same_type(l, r, span, what)
    }

    /// The operands of an arithmetic operator or a comparison: a pair of one type, or, when the
    /// left one is a `Time` or a `Duration`, the whole operation already checked
    /// (`time.rs`), as `Err`.
    fn operands(
        &mut self,
        op: BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        hint: Option<&Ty>,
        span: Span,
        what: &str,
    ) -> Option<Result<(Expr, Expr), Option<Expr>>> {
        if is_int_literalish(lhs) && !is_int_literalish(rhs) {
            return self.infer_pair(lhs, rhs, hint, span, what).map(Ok);
        }
        let l = self.infer_value(lhs, hint)?;
        if matches!(l.ty, Ty::Time | Ty::Duration) {
            return Some(Err(self.time_binary(op, l, rhs, span)));
        }
        self.pair_after(l, rhs, hint, span, what).map(Ok)
    }

    /// `l` and `r`, when they have one type; H301 otherwise.
    fn same_type(&mut self, l: Expr, r: Expr, span: Span, what: &str) -> Option<(Expr, Expr)> {
        if l.ty != r.ty {
            let (a, b) = (self.ty_name(&l.ty), self.ty_name(&r.ty));
            let mut d = error(
                H301,
                span,
                format!("{what} needs two operands of the same type, found `{a}` and `{b}`"),
                format!("`{a}` and `{b}`"),
            );
            if is_number(&l.ty) && is_number(&r.ty) {
                d = d
                    .note(format!("numbers are not converted implicitly; convert one side with `as`, e.g. `… as {a}`"));
            } else if [&l.ty, &r.ty].contains(&&Ty::String) && (l.ty.scalar().is_some() || r.ty.scalar().is_some()) {
                d = d.note("`to_string(…)` turns a number or bool into a String, as in `\"n = \" + to_string(n)`");
            }
            self.report(d);
            return None;
        }
        Some((l, r))
    }

    fn binary(
        &mut self,
        op: BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        hint: Option<&Ty>,
        span: Span,
    ) -> Option<Expr> {
        let symbol = op.symbol();
        let what = format!("`{symbol}`");
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let l = self.check_expr(lhs, &Ty::Bool);
                let r = self.check_expr(rhs, &Ty::Bool);
                let (l, r) = (Box::new(l?), Box::new(r?));
                let kind = if op == BinaryOp::And { ExprKind::And(l, r) } else { ExprKind::Or(l, r) };
                Some(mk(kind, Ty::Bool, span))
            }
            BinaryOp::Shl | BinaryOp::Shr => {
                // `1 << k` with nothing else to go by takes the count's type, not i64.
                let (l, r) = if hint.is_none() && is_int_literalish(lhs) && !is_int_literalish(rhs) {
                    let r = self.infer_value(rhs, None);
                    let l = self.infer_value(lhs, r.as_ref().map(|r| &r.ty).filter(|t| matches!(t, Ty::I32 | Ty::I64)));
                    (l, r)
                } else {
                    let l = self.infer_value(lhs, hint);
                    let r = self.infer_value(rhs, l.as_ref().map(|l| &l.ty));
                    (l, r)
                };
                let (l, r) = (l?, r?);
                if !matches!(l.ty, Ty::I32 | Ty::I64) {
                    return self.not_applicable(symbol, &l.ty, span, "i32 and i64");
                }
                let r = self.coerce(r, &l.ty)?;
                self.scalar_binary(op, l, r, span)
            }
            BinaryOp::Eq | BinaryOp::Ne => {
                let (l, r) = match self.operands(op, lhs, rhs, None, span, &what)? {
                    Ok(pair) => pair,
                    Err(checked) => return checked,
                };
                match &l.ty {
                    Ty::String => {
                        let negated = op == BinaryOp::Ne;
                        Some(mk(ExprKind::StrEq { negated, lhs: Box::new(l), rhs: Box::new(r) }, Ty::Bool, span))
                    }
                    Ty::Uuid => {
                        let builtin = crate::tir::Builtin::Runtime(nagi_low::RuntimeFn::UuidEq);
                        let eq = mk(ExprKind::Builtin { builtin, args: vec![l, r] }, Ty::Bool, span);
                        Some(if op == BinaryOp::Ne {
                            mk(ExprKind::Unary { op: LowUnary::Not, operand: Box::new(eq) }, Ty::Bool, span)
                        } else {
                            eq
                        })
                    }
                    ty if ty.scalar().is_some() => self.scalar_binary(op, l, r, span),
                    Ty::Param(_, bounds) if bounds.has(Bounds::EQ) => Some(self.template_value(Ty::Bool, span)),
                    ty => {
                        let allowed = "i32, i64, f64, bool, String, Time, Duration and Uuid";
                        let mut d = self.not_applicable_diag(symbol, ty, span, allowed);
                        if matches!(ty, Ty::Option(_)) {
                            d = d.note("test an option with `if let v = … { } else { }`");
                        }
                        self.report(d);
                        None
                    }
                }
            }
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                let (l, r) = match self.operands(op, lhs, rhs, None, span, &what)? {
                    Ok(pair) => pair,
                    Err(checked) => return checked,
                };
                if let Ty::Param(_, bounds) = &l.ty
                    && bounds.has(Bounds::ORD)
                {
                    return Some(self.template_value(Ty::Bool, span));
                }
                if !is_number(&l.ty) {
                    return self.not_applicable(symbol, &l.ty, span, "i32, i64, f64, Time and Duration");
                }
                self.scalar_binary(op, l, r, span)
            }
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => {
                let (l, r) = match self.operands(op, lhs, rhs, hint, span, &what)? {
                    Ok(pair) => pair,
                    Err(checked) => return checked,
                };
                if op == BinaryOp::Add && l.ty == Ty::String {
                    return Some(mk(ExprKind::Concat(Box::new(l), Box::new(r)), Ty::String, span));
                }
                if !is_number(&l.ty) {
                    let allowed = if op == BinaryOp::Add { "i32, i64, f64 and String" } else { "i32, i64 and f64" };
                    return self.not_applicable(symbol, &l.ty, span, allowed);
                }
                self.scalar_binary(op, l, r, span)
            }
            BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
                let (l, r) = self.infer_pair(lhs, rhs, hint, span, &what)?;
                if !matches!(l.ty, Ty::I32 | Ty::I64 | Ty::Bool) {
                    return self.not_applicable(symbol, &l.ty, span, "i32, i64 and bool");
                }
                self.scalar_binary(op, l, r, span)
            }
        }
    }

    /// A `Binary` node on two operands of the same scalar type.
    pub(super) fn scalar_binary(&mut self, op: BinaryOp, l: Expr, r: Expr, span: Span) -> Option<Expr> {
        let operand_ty = l.ty.scalar()?;
        let ty = if is_comparison(op) { Ty::Bool } else { l.ty.clone() };
        let op = low_binary(op)?;
        Some(mk(ExprKind::Binary { op, operand_ty, lhs: Box::new(l), rhs: Box::new(r) }, ty, span))
    }

    fn not_applicable_diag(&self, symbol: &str, ty: &Ty, span: Span, allowed: &str) -> nagi_low::Diagnostic {
        let name = self.ty_name(ty);
        let d = error(H302, span, format!("cannot apply `{symbol}` to `{name}`"), format!("`{name}` operands"))
            .note(format!("`{symbol}` works on {allowed}"));
        match ty {
            Ty::Param(..) => d.note(format!(
                "`{name}` is a type parameter: a capability on it (`{name}: eq`, `{name}: ord`) allows the comparisons"
            )),
            _ => d,
        }
    }

    /// Reports an operator applied to a type it does not support.
    pub(super) fn not_applicable(&mut self, symbol: &str, ty: &Ty, span: Span, allowed: &str) -> Option<Expr> {
        let d = self.not_applicable_diag(symbol, ty, span, allowed);
        self.report(d);
        None
    }

    fn cast(&mut self, operand: &ast::Expr, ty: &ast::TypeExpr, span: Span) -> Option<Expr> {
        let target = self.items.resolve_ty(ty, self.diags);
        let value = self.infer_value(operand, None);
        let target = target?;
        let Some(to @ (ScalarType::I32 | ScalarType::I64 | ScalarType::F64)) = target.scalar() else {
            let name = self.ty_name(&target);
            self.report(
                error(H308, ty.span, format!("cannot cast to `{name}`"), "not a numeric type")
                    .note("`as` converts between i32, i64 and f64"),
            );
            return None;
        };
        let value = value?;
        if !is_number(&value.ty) {
            let name = self.ty_name(&value.ty);
            let mut d = error(
                H308,
                operand.span,
                format!("cannot cast {} `{name}` with `as`", a_or_an(&name)),
                format!("this is `{name}`"),
            )
            .note("`as` converts between i32, i64 and f64");
            if target == Ty::String || value.ty == Ty::String {
                d = d.note("`to_string(x)` turns a number into a String");
            }
            self.report(d);
            return None;
        }
        Some(mk(ExprKind::Cast { expr: Box::new(value), to }, target, span))
    }
}

/// An expression node.
pub(super) fn mk(kind: ExprKind, ty: Ty, span: Span) -> Expr {
    Expr { kind, ty, span }
}

/// `T?` → `T`; other types unchanged. Literals take the payload type of an expected option.
fn strip_option(ty: &Ty) -> &Ty {
    match ty {
        Ty::Option(inner) => inner,
        other => other,
    }
}

/// `i32`, `i64` or `f64`.
pub(super) fn is_number(ty: &Ty) -> bool {
    matches!(ty, Ty::I32 | Ty::I64 | Ty::F64)
}

fn is_comparison(op: BinaryOp) -> bool {
    matches!(op, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
}

/// An expression made only of integer literals, whose type the other operand decides.
fn is_int_literalish(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Int(_) => true,
        ast::ExprKind::Unary { operand, .. } => is_int_literalish(operand),
        // A shift of a literal by a non-literal count is not: it takes the count's type when
        // nothing else gives one (see `binary`), so it is a source of type like a variable.
        ast::ExprKind::Binary { op, lhs, rhs } => {
            !is_comparison(*op)
                && !matches!(op, BinaryOp::And | BinaryOp::Or)
                && is_int_literalish(lhs)
                && is_int_literalish(rhs)
        }
        // `abs(14)`, `min(2, 3)`: the builtins that keep their arguments' type.
        ast::ExprKind::Call { callee, args } => {
            matches!(callee.name.as_str(), "abs" | "min" | "max")
                && !args.is_empty()
                && args.iter().all(is_int_literalish)
        }
        _ => false,
    }
}

/// The Low operation for a High operator; `&&` and `||` have none (they short-circuit).
pub(super) fn low_binary(op: BinaryOp) -> Option<LowBinary> {
    Some(match op {
        BinaryOp::Add => LowBinary::Add,
        BinaryOp::Sub => LowBinary::Sub,
        BinaryOp::Mul => LowBinary::Mul,
        BinaryOp::Div => LowBinary::Div,
        BinaryOp::Rem => LowBinary::Rem,
        BinaryOp::BitAnd => LowBinary::And,
        BinaryOp::BitOr => LowBinary::Or,
        BinaryOp::BitXor => LowBinary::Xor,
        BinaryOp::Shl => LowBinary::Shl,
        BinaryOp::Shr => LowBinary::Shr,
        BinaryOp::Eq => LowBinary::Eq,
        BinaryOp::Ne => LowBinary::Ne,
        BinaryOp::Lt => LowBinary::Lt,
        BinaryOp::Le => LowBinary::Le,
        BinaryOp::Gt => LowBinary::Gt,
        BinaryOp::Ge => LowBinary::Ge,
        BinaryOp::And | BinaryOp::Or => return None,
    })
}
