//! Calls: program functions (arity, argument types, `inout` arguments and their aliasing),
//! builtin functions and methods, and the database operations with their compile-time SQL
//! checks.

use std::borrow::Cow;

use nagi_low::RuntimeFn;
use nagi_syntax::ast::{self, Ident, Span};

use super::expr::{NotPlace, is_number, mk};
use super::items::is_sql_value;
use super::stmt::{Mutation, overlaps};
use super::{
    Body, H202, H211, H301, H302, H307, H315, H402, H410, H427, H501, H502, H503, H504, H505, SqlRequest, a_or_an,
    error, plural,
};
use crate::tir::{Bounds, Builtin, ClassIdx, DbOp, Expr, ExprKind, LoopMethod, ParamMode, Place, Ty};

/// A method of the string library: the runtime row it is, the receiver's type, the other
/// parameters' types and the result's.
struct LibraryMethod {
    row: RuntimeFn,
    receiver: Ty,
    params: Vec<Ty>,
    ret: Ty,
}

/// The string library's method `name`, if there is one (docs/language.md, "Methods").
fn library_method(name: &str) -> Option<LibraryMethod> {
    use RuntimeFn::*;
    let string = || Ty::String;
    let strings = || Ty::Array(Box::new(Ty::String));
    let option = |ty: Ty| Ty::Option(Box::new(ty));
    let (row, receiver, params, ret) = match name {
        "contains" => (StrContains, string(), vec![string()], Ty::Bool),
        "starts_with" => (StrStartsWith, string(), vec![string()], Ty::Bool),
        "ends_with" => (StrEndsWith, string(), vec![string()], Ty::Bool),
        "find" => (StrFind, string(), vec![string()], option(Ty::I64)),
        "split" => (StrSplit, string(), vec![string()], strings()),
        "trim" => (StrTrim, string(), vec![], string()),
        "to_lower" => (StrToLower, string(), vec![], string()),
        "to_upper" => (StrToUpper, string(), vec![], string()),
        "replace" => (StrReplace, string(), vec![string(), string()], string()),
        "join" => (StrJoin, strings(), vec![string()], string()),
        "slice" => (StrSlice, string(), vec![Ty::I64, Ty::I64], string()),
        "parse_i64" => (StrParseI64, string(), vec![], option(Ty::I64)),
        "parse_f64" => (StrParseF64, string(), vec![], option(Ty::F64)),
        _ => return None,
    };
    Some(LibraryMethod { row, receiver, params, ret })
}

/// The builtin functions that are one runtime row each (docs/language.md, "Builtin functions"):
/// their parameters and result are the row's, as High types, and a call of an async row waits.
pub(super) const LIBRARY_FNS: [(&str, RuntimeFn); 13] = [
    ("uuid_v7", RuntimeFn::UuidV7),
    ("uuid_v4", RuntimeFn::UuidV4),
    ("parse_uuid", RuntimeFn::UuidParse),
    ("set_clock", RuntimeFn::TimeSetClock),
    ("sleep", RuntimeFn::TimeSleep),
    ("now", RuntimeFn::TimeNow),
    ("monotonic", RuntimeFn::TimeMonotonic),
    ("parse_time", RuntimeFn::TimeParse),
    ("random_int", RuntimeFn::RandInt),
    ("token", RuntimeFn::RandToken),
    ("secure_eq", RuntimeFn::SecretEq),
    ("hash_password", RuntimeFn::PasswordHash),
    ("verify_password", RuntimeFn::PasswordVerify),
];

/// The High type of a runtime row's parameter or result, for the rows [`LIBRARY_FNS`] names
/// (scalars and strings; a `&str` parameter takes a `String`, borrowed for the call).
fn row_ty(ty: nagi_low::RtType) -> Ty {
    use nagi_low::RtType;
    match ty {
        RtType::I32 => Ty::I32,
        RtType::I64 => Ty::I64,
        RtType::F64 => Ty::F64,
        RtType::Bool => Ty::Bool,
        RtType::Str | RtType::String => Ty::String,
        RtType::Time => Ty::Time,
        RtType::Duration => Ty::Duration,
        RtType::OptTime => Ty::Option(Box::new(Ty::Time)),
        RtType::Uuid => Ty::Uuid,
        RtType::OptUuid => Ty::Option(Box::new(Ty::Uuid)),
        _ => Ty::Unit,
    }
}

impl Body<'_, '_> {
    /// Reports a wrong argument count; true when the count is right.
    pub(super) fn arity(&mut self, name: &str, expected: usize, args: &[ast::Expr], span: Span) -> bool {
        if args.len() == expected {
            return true;
        }
        self.report(error(
            H307,
            span,
            format!("`{name}` takes {} but {} given", plural(expected, "argument"), was_were(args.len())),
            format!("called with {}", plural(args.len(), "argument")),
        ));
        false
    }

    /// `f(args)`: a builtin or a program function.
    pub(super) fn call(&mut self, callee: &Ident, args: &[ast::Expr], hint: Option<&Ty>, span: Span) -> Option<Expr> {
        let name = callee.name.as_str();
        match name {
            "print" | "to_string" => {
                if !self.arity(name, 1, args, span) {
                    return None;
                }
                let value = self.infer_value(&args[0], None)?;
                if name == "to_string" && matches!(value.ty, Ty::Time | Ty::Duration | Ty::Uuid) {
                    return Some(self.as_text(value));
                }
                let value = self.textual(value, &format!("`{name}`"))?;
                let (builtin, ty) =
                    if name == "print" { (Builtin::Print, Ty::Unit) } else { (Builtin::ToString, Ty::String) };
                Some(mk(ExprKind::Builtin { builtin, args: vec![value] }, ty, span))
            }
            "min" | "max" => {
                if !self.arity(name, 2, args, span) {
                    return None;
                }
                let (a, b) = self.infer_pair(&args[0], &args[1], hint, span, &format!("`{name}`"))?;
                if !is_number(&a.ty) {
                    return self.not_applicable(name, &a.ty, span, "i32, i64 and f64");
                }
                let builtin = if name == "min" { Builtin::Min } else { Builtin::Max };
                let ty = a.ty.clone();
                Some(mk(ExprKind::Builtin { builtin, args: vec![a, b] }, ty, span))
            }
            "abs" => {
                if !self.arity(name, 1, args, span) {
                    return None;
                }
                let value = self.infer_value(&args[0], hint)?;
                if !is_number(&value.ty) {
                    return self.not_applicable(name, &value.ty, span, "i32, i64 and f64");
                }
                let ty = value.ty.clone();
                Some(mk(ExprKind::Builtin { builtin: Builtin::Abs, args: vec![value] }, ty, span))
            }
            "fail" => self.fail_call(args, span),
            "set_header" => self.set_header_call(args, span),
            "assert" => {
                if !self.arity(name, 1, args, span) {
                    return None;
                }
                let cond = self.check_expr(&args[0], &Ty::Bool)?;
                let at = mk(ExprKind::Str((self.locate)(span)), Ty::String, span);
                Some(mk(ExprKind::Builtin { builtin: Builtin::Assert, args: vec![cond, at] }, Ty::Unit, span))
            }
            "assert_eq" => {
                if !self.arity(name, 2, args, span) {
                    return None;
                }
                let (a, b) = self.infer_pair(&args[0], &args[1], hint, span, "`assert_eq`")?;
                if a.ty.scalar().is_none() && a.ty != Ty::String {
                    return self.not_applicable(name, &a.ty, span, "i32, i64, f64, bool and String");
                }
                let at = mk(ExprKind::Str((self.locate)(span)), Ty::String, span);
                Some(mk(ExprKind::Builtin { builtin: Builtin::AssertEq, args: vec![a, b, at] }, Ty::Unit, span))
            }
            _ => match LIBRARY_FNS.iter().find(|(n, _)| *n == name) {
                Some(&(_, row)) => self.function_row_call(name, row, args, span),
                None => self.program_call(callee, args, hint, span),
            },
        }
    }

    /// `value` as text: a scalar or a `String` as it is, a `Time`, `Duration` or `Uuid` formatted,
    /// a secret as `***`; any other type is reported (H302) as something `what` cannot take.
    fn textual(&mut self, value: Expr, what: &str) -> Option<Expr> {
        let value = self.as_text(value);
        if let Ty::Param(_, bounds) = &value.ty
            && bounds.has(Bounds::TEXT)
        {
            return Some(self.template_value(Ty::String, value.span));
        }
        if value.ty.scalar().is_none() && value.ty != Ty::String {
            let found = self.ty_name(&value.ty);
            self.report(
                error(
                    H302,
                    value.span,
                    format!("{what} cannot take {} `{found}`", a_or_an(&found)),
                    format!("this is `{found}`"),
                )
                .note(format!("{what} takes an i32, i64, f64, bool, String, Time, Duration or Uuid")),
            );
            return None;
        }
        Some(value)
    }

    /// `"text {hole} text"`: one `String` of its parts, each hole as `to_string` writes it
    /// (empty texts left out).
    pub(super) fn interpolation(&mut self, texts: &[String], holes: &[ast::Expr], span: Span) -> Option<Expr> {
        let mut parts = Vec::new();
        let mut ok = true;
        for (i, text) in texts.iter().enumerate() {
            if !text.is_empty() {
                parts.push(mk(ExprKind::Str(text.clone()), Ty::String, span));
            }
            let Some(hole) = holes.get(i) else { break };
            let value = self.infer_value(hole, None);
            match value.and_then(|value| self.textual(value, "a string's `{…}`")) {
                Some(value) if value.ty == Ty::String => parts.push(value),
                Some(value) => {
                    let hole_span = value.span;
                    let text = ExprKind::Builtin { builtin: Builtin::ToString, args: vec![value] };
                    parts.push(mk(text, Ty::String, hole_span));
                }
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        // `"{n}"` is `to_string(n)`'s new string itself; only a `String` place is copied.
        if let [part] = parts.as_slice()
            && !matches!(part.kind, ExprKind::Place(_))
        {
            return parts.pop();
        }
        Some(mk(ExprKind::Interp(parts), Ty::String, span))
    }

    /// What `print(x)` and `to_string(x)` write for `value`: the text of a `Time`, `Duration` or
    /// `Uuid` (their `format` rows), `***` for a secret (never shown), `value` itself otherwise.
    fn as_text(&self, value: Expr) -> Expr {
        let span = value.span;
        let format = match value.ty {
            Ty::Time => RuntimeFn::TimeFormat,
            Ty::Duration => RuntimeFn::DurationFormat,
            Ty::Uuid => RuntimeFn::UuidFormat,
            Ty::Secret => return mk(ExprKind::Str("***".into()), Ty::String, span),
            _ => return value,
        };
        mk(ExprKind::Builtin { builtin: Builtin::Runtime(format), args: vec![value] }, Ty::String, span)
    }

    /// A call of a builtin function that is the runtime row `row` ([`LIBRARY_FNS`]).
    fn function_row_call(&mut self, name: &str, row: RuntimeFn, args: &[ast::Expr], span: Span) -> Option<Expr> {
        let data = row.data();
        if !self.arity(name, data.params.len(), args, span) {
            return None;
        }
        if row == RuntimeFn::TimeSetClock && self.items.fn_info(self.fn_idx).test.is_none() {
            self.report(
                error(H427, span, "`set_clock` is only for tests", "outside a test")
                    .note("a test fixes the clock so that what depends on `now()` is the same on every run"),
            );
            return None;
        }
        let params: Vec<Ty> = data.params.iter().map(|p| row_ty(*p)).collect();
        let checked = if row == RuntimeFn::TimeSleep {
            // `sleep` takes a `Duration` or, as before `Duration` existed, milliseconds.
            vec![self.infer_value(&args[0], Some(&Ty::I64)).and_then(|ms| self.as_millis(ms))]
        } else {
            self.check_args(args, &params)
        };
        if data.is_async {
            self.effects.suspends.get_or_insert(span);
        }
        let args = checked.into_iter().collect::<Option<Vec<Expr>>>()?;
        Some(mk(ExprKind::Builtin { builtin: Builtin::Runtime(row), args }, row_ty(data.ret), span))
    }

    /// A call of a program function, or of a generic one (`generics.rs` infers its type
    /// arguments from the arguments, in order, and the expected type, and calls the instance).
    fn program_call(&mut self, callee: &Ident, args: &[ast::Expr], hint: Option<&Ty>, span: Span) -> Option<Expr> {
        if let Some(call) = self.function_param_call(callee, args, span) {
            return call;
        }
        let items = self.items;
        let (plain, info) = match items.fn_by_name.get(&callee.name) {
            Some(&func) => (Some(func), items.fn_info(func)),
            None => match items.generic_fn_by_name.get(&callee.name) {
                Some(&k) => (None, Cow::Borrowed(&items.generic_fns[k].info)),
                None => {
                    let mut d = error(H202, callee.span, format!("unknown function `{}`", callee.name), "not found");
                    if self.lookup(&callee.name).is_some() {
                        d = d.note(format!("`{}` is a variable, not a function", callee.name));
                    }
                    self.report(d);
                    return None;
                }
            },
        };
        if !self.arity(&callee.name, info.params.len(), args, span) {
            return None;
        }
        if info.fails {
            self.failing_call(&callee.name, span);
        }
        let template = plain.is_none().then(|| items.generic_fn_by_name[&callee.name]);
        let mut env = self.type_arg_slots(template, info.ret.as_ref(), hint);
        let mut out = Vec::with_capacity(args.len());
        let mut ok = true;
        // What function-typed parameters are given, and the values of their captures, which
        // the instance takes after the other arguments.
        let mut closures = Vec::new();
        let mut captured = Vec::new();
        // Places passed by reference, to check that an `inout` argument overlaps no other.
        let mut borrowed: Vec<(Place, bool, Span)> = Vec::new();
        for (arg, param) in args.iter().zip(&info.params) {
            if let Some(Ty::Fn(params, ret)) = &param.ty {
                match self.closure_for_param(arg, params, ret, &mut env, &callee.name) {
                    Some((closure, values)) => {
                        closures.push(closure);
                        captured.extend(values);
                    }
                    None => ok = false,
                }
                continue;
            }
            let value = match &param.ty {
                Some(ty) if self.unbound(ty, &env) => self.inferred_arg(arg, param.mode, ty, &mut env, &callee.name),
                Some(ty) => {
                    let ty = self.bind(ty, &env);
                    match param.mode {
                        ParamMode::Inout => self.inout_arg(arg, Some(&ty), &callee.name),
                        ParamMode::Borrowed | ParamMode::Owned => self.check_expr(arg, &ty),
                    }
                }
                None => {
                    self.infer(arg, None);
                    None
                }
            };
            let Some(value) = value else {
                ok = false;
                continue;
            };
            // Copy values are copied before the call, so only non-copy borrows can alias.
            if let ExprKind::Place(place) = &value.kind
                && (param.mode == ParamMode::Inout || !value.ty.is_copy())
            {
                borrowed.push((place.clone(), param.mode == ParamMode::Inout, arg.span));
            }
            out.push(value);
        }
        // A capture, even a copy, must not be what an `inout` argument of the call changes:
        // the closure would read it while the callee writes it.
        for value in captured {
            if let ExprKind::Place(place) = &value.kind {
                borrowed.push((place.clone(), false, value.span));
            }
            out.push(value);
        }
        for (j, (later, later_inout, later_span)) in borrowed.iter().enumerate() {
            let clash = borrowed[..j]
                .iter()
                .any(|(earlier, earlier_inout, _)| (*earlier_inout || *later_inout) && overlaps(earlier, later));
            if clash {
                self.report(
                    error(
                        H410,
                        *later_span,
                        format!("the same value is passed twice to `{}`, and one parameter is `inout`", callee.name),
                        "overlaps an earlier argument",
                    )
                    .note("an `inout` argument must not overlap any other argument of the same call"),
                );
                ok = false;
            }
        }
        let ret = self.bind(info.ret.as_ref()?, &env);
        if !ok {
            return None;
        }
        let func = match (plain, template) {
            (Some(func), _) => func,
            (None, Some(k)) => self.instance_for_call(k, &env, closures, callee, span)?,
            (None, None) => return None,
        };
        self.effects.calls.push((func, span));
        Some(mk(ExprKind::Call { func, args: out }, ret, span))
    }

    /// An argument for an `inout` parameter: a mutable place of exactly the parameter's type.
    pub(super) fn inout_arg(&mut self, arg: &ast::Expr, ty: Option<&Ty>, callee: &str) -> Option<Expr> {
        let (place, found) = match self.place_expr(arg) {
            Ok(p) => p,
            Err(NotPlace::Reported) => return None,
            Err(NotPlace::Value) => {
                self.infer(arg, ty);
                self.report(
                    error(
                        H410,
                        arg.span,
                        format!("an `inout` argument of `{callee}` must be a variable, field or element"),
                        "not a place",
                    )
                    .note("`inout` lets the callee change the caller's value, so it needs somewhere to write"),
                );
                return None;
            }
        };
        self.inout_place(place, found, ty, arg.span)
    }

    /// The `inout` argument at `place` (of type `found`, written at `span`): mutable, and of
    /// exactly the parameter's type `ty`.
    pub(super) fn inout_place(&mut self, place: Place, found: Ty, ty: Option<&Ty>, span: Span) -> Option<Expr> {
        let arg_span = span;
        let mutable = self.check_mutation(&place, arg_span, Mutation::Inout);
        let ty = ty?;
        if found != *ty {
            let (want, have) = (self.ty_name(ty), self.ty_name(&found));
            self.report(error(
                H301,
                arg_span,
                format!("mismatched types: the `inout` parameter is `{want}`, found `{have}`"),
                format!("this is `{have}`"),
            ));
            return None;
        }
        mutable.then(|| mk(ExprKind::Place(place), found, arg_span))
    }

    /// `receiver.method(args)`: `len`, `push` or `clone`.
    pub(super) fn method_call(
        &mut self,
        receiver: &ast::Expr,
        method: &Ident,
        args: &[ast::Expr],
        hint: Option<&Ty>,
        span: Span,
    ) -> Option<Expr> {
        match method.name.as_str() {
            // `parts.join(sep)` of the string library is the other `join`.
            "join" if self.is_task(receiver) => {
                let handle = self.infer_value(receiver, None)?;
                self.join(handle, args, span)
            }
            "len" => {
                let value = self.infer_value(receiver, None);
                if !self.arity("len", 0, args, span) {
                    return None;
                }
                let value = value?;
                if !matches!(value.ty, Ty::Array(_) | Ty::String | Ty::Map(..)) {
                    let name = self.ty_name(&value.ty);
                    self.report(
                        error(
                            H211,
                            method.span,
                            format!("`{name}` has no method `len`"),
                            format!("receiver is `{name}`"),
                        )
                        .note("`len` works on arrays, maps and Strings"),
                    );
                    return None;
                }
                Some(mk(ExprKind::Builtin { builtin: Builtin::Len, args: vec![value] }, Ty::I64, span))
            }
            "clone" => {
                let value = self.infer_value(receiver, hint);
                if !self.arity("clone", 0, args, span) {
                    return None;
                }
                let value = value?;
                if !self.not_a_task(&value.ty, span, "cloned") {
                    return None;
                }
                let ty = value.ty.clone();
                Some(mk(ExprKind::Builtin { builtin: Builtin::Clone, args: vec![value] }, ty, span))
            }
            "push" => self.push(receiver, method, args, span),
            // `s.find(sub)` is the string library's; an array's `find` takes a closure.
            "map" | "filter" | "any" | "all" | "count" | "fold" | "find"
                if method.name != "find"
                    || args.first().is_some_and(|a| matches!(a.kind, ast::ExprKind::Closure { .. })) =>
            {
                let kind = LoopMethod::from_name(&method.name).expect("a closure method");
                self.closure_method(receiver, method, kind, args, hint, span)
            }
            "sort" | "sort_by" | "reverse" => self.reorder(receiver, method, args, span),
            "sort_by_key" => self.sort_by_key(receiver, method, args, span),
            "new" if matches!(&receiver.kind, ast::ExprKind::Name(n) if n.name == "Map") => {
                self.map_new(args, hint, span)
            }
            "insert" | "remove" => self.map_write(receiver, method, args, span),
            "get" => {
                let value = self.infer_value(receiver, None)?;
                self.map_lookup(value, method, args, span)
            }
            other => {
                if let Some(signature) = library_method(other) {
                    let value = self.infer_value(receiver, Some(&signature.receiver));
                    if let Some(Ty::Map(..)) = value.as_ref().map(|v| &v.ty)
                        && other == "contains"
                    {
                        return self.map_lookup(value?, method, args, span);
                    }
                    if let Some(Ty::Array(elem)) = value.as_ref().map(|v| &v.ty)
                        && matches!(other, "contains" | "slice")
                    {
                        let elem = (**elem).clone();
                        return self.array_library_call(value?, elem, method, args, span);
                    }
                    return self.library_call(value, method, signature, args, span);
                }
                let value = self.infer(receiver, None)?;
                if matches!(value.ty, Ty::Time | Ty::Duration) {
                    return self.time_method(value, method, args, span);
                }
                if value.ty == Ty::Secret {
                    return self.secret_method(value, method, args, span);
                }
                let name = self.ty_name(&value.ty);
                self.report(
                    error(H211, method.span, format!("`{name}` has no method `{other}`"), "unknown method").note(
                        "the methods are `len`, `clone`, `push` (arrays), `get`, `insert`, `remove` and \
                         `contains` (maps), and those of the string and array libraries (docs/language.md, \"Methods\")",
                    ),
                );
                None
            }
        }
    }

    /// A method of the string library: the receiver (`value`, checked already) must be of the
    /// method's receiver type (it is borrowed, as the arguments are), each argument of its
    /// parameter's type.
    fn library_call(
        &mut self,
        value: Option<Expr>,
        method: &Ident,
        signature: LibraryMethod,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let LibraryMethod { row, receiver: receiver_ty, params, ret } = signature;
        if !self.arity(&method.name, params.len(), args, span) {
            return None;
        }
        let checked = self.check_args(args, &params);
        let value = value?;
        if value.ty != receiver_ty {
            let wanted = format!("`{}`", self.ty_name(&receiver_ty));
            return self.no_such_method(&value.ty, method, &wanted);
        }
        self.row_call(row, value, checked, ret, span)
    }

    /// The place a method that changes its receiver (`push`, `sort`, …) acts on; a temporary
    /// is H402 (`verb` says what the method does).
    pub(super) fn mutable_receiver(&mut self, receiver: &ast::Expr, verb: &str) -> Option<(Place, Ty)> {
        match self.place_expr(receiver) {
            Ok(p) => Some(p),
            Err(NotPlace::Reported) => None,
            Err(NotPlace::Value) => {
                self.infer(receiver, None);
                self.report(
                    error(
                        H402,
                        receiver.span,
                        format!("can only {verb} an array variable, field or element"),
                        "a temporary value",
                    )
                    .note("bind the array with `var xs = …` first"),
                );
                None
            }
        }
    }

    /// Each of `args` checked against its parameter type in `params`.
    pub(super) fn check_args(&mut self, args: &[ast::Expr], params: &[Ty]) -> Vec<Option<Expr>> {
        args.iter().zip(params).map(|(arg, ty)| self.check_expr(arg, ty)).collect()
    }

    /// A call of the runtime row `row` on `receiver` and the checked arguments (none if one
    /// failed its check).
    pub(super) fn row_call(
        &self,
        row: RuntimeFn,
        receiver: Expr,
        checked: Vec<Option<Expr>>,
        ret: Ty,
        span: Span,
    ) -> Option<Expr> {
        let mut operands = vec![receiver];
        for arg in checked {
            operands.push(arg?);
        }
        Some(mk(ExprKind::Builtin { builtin: Builtin::Runtime(row), args: operands }, ret, span))
    }

    fn push(&mut self, receiver: &ast::Expr, method: &Ident, args: &[ast::Expr], span: Span) -> Option<Expr> {
        let target = self.mutable_receiver(receiver, "push to");
        if !self.arity("push", 1, args, span) {
            return None;
        }
        let Some((place, ty)) = target else {
            self.infer(&args[0], None);
            return None;
        };
        let Ty::Array(elem) = &ty else {
            let name = self.ty_name(&ty);
            self.report(
                error(H211, method.span, format!("`{name}` has no method `push`"), format!("receiver is `{name}`"))
                    .note("`push` works on arrays"),
            );
            return None;
        };
        let mutable = self.check_mutation(&place, receiver.span, Mutation::Push);
        let value = self.check_expr(&args[0], elem)?;
        mutable.then(|| mk(ExprKind::Push { array: place, value: Box::new(value) }, Ty::Unit, span))
    }

    /// `db.exec(sql, …)`, `db.query<T>(sql, …)`, `db.query_one<T>(sql, …)`.
    pub(super) fn db_op(
        &mut self,
        op: &Ident,
        class: Option<&ast::TypeExpr>,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        self.effects.db_use.get_or_insert(span);
        let db_op = match op.name.as_str() {
            "exec" => DbOp::Exec,
            "query" => DbOp::Query,
            _ => DbOp::QueryOne,
        };
        let class = self.db_class(db_op, op, class, span);
        let Some((sql_arg, rest)) = args.split_first() else {
            self.report(
                error(H502, span, format!("`db.{}` needs the SQL text as its first argument", op.name), "no SQL given")
                    .note("for example `db.exec(\"DELETE FROM users WHERE id = ?\", id)`"),
            );
            return None;
        };
        let sql = match &sql_arg.kind {
            ast::ExprKind::Str(s) => Some(s.as_str()),
            _ => {
                self.infer(sql_arg, None);
                // An interpolated string would write values into the statement's text (SQL
                // injection); they go to the database as arguments instead.
                let label = match sql_arg.kind {
                    ast::ExprKind::Interp { .. } => "an interpolated string, not a literal",
                    _ => "not a string literal",
                };
                self.report(
                    error(
                        H502,
                        sql_arg.span,
                        "SQL must be a string literal so it can be checked at compile time",
                        label,
                    )
                    .note("pass values as `?` placeholders followed by arguments"),
                );
                None
            }
        };
        let mut values = Vec::with_capacity(rest.len());
        let mut ok = sql.is_some();
        for arg in rest {
            let Some(value) = self.infer_value(arg, None) else {
                ok = false;
                continue;
            };
            if !is_sql_value(&value.ty) {
                let name = self.ty_name(&value.ty);
                self.report(
                    error(
                        H504,
                        arg.span,
                        format!("{} `{name}` cannot be passed to SQL", if a_or_an(&name) == "an" { "An" } else { "A" }),
                        format!("this is `{name}`"),
                    )
                    .note("SQL arguments are i32, i64, f64, bool, String or options of those"),
                );
                ok = false;
                continue;
            }
            values.push(value);
        }
        let sql = sql?;
        let placeholders = crate::sql_text::count_placeholders(sql);
        if placeholders != rest.len() {
            self.report(
                error(
                    H503,
                    sql_arg.span,
                    format!(
                        "the SQL has {} but {} given",
                        plural(placeholders, "`?` placeholder"),
                        was_were_arg(rest.len())
                    ),
                    format!("{} here", plural(placeholders, "placeholder")),
                )
                .note("every `?` takes the next argument after the SQL, in order"),
            );
            return None;
        }
        let class = class?;
        let sql = self.expand_star(sql, db_op, class, sql_arg.span)?;
        let sql = sql.as_str();
        if self.sql_enabled {
            let result_fields = class.map(|c| {
                self.items
                    .class_at(c)
                    .expect("a class")
                    .fields
                    .iter()
                    .map(|f| (f.name.clone(), f.ty.clone().unwrap_or(Ty::Unit)))
                    .collect()
            });
            let request = SqlRequest { sql, args: rest.len(), result_fields };
            if let Err(message) = (self.sql)(&request) {
                self.report(error(H501, sql_arg.span, message, "checked against the declared tables"));
                return None;
            }
        }
        let ty = match (db_op, class) {
            (DbOp::Exec, _) => Ty::I64,
            (DbOp::Query, Some(c)) => Ty::Array(Box::new(Ty::Class(c))),
            (DbOp::QueryOne, Some(c)) => Ty::Option(Box::new(Ty::Class(c))),
            _ => return None,
        };
        // `file:line:col` without its column: what names the statement in the metrics.
        let located = (self.locate)(span);
        let position = located.rsplit_once(':').map_or(located.as_str(), |(at, _)| at).replace("*/", "* /");
        ok.then(|| mk(ExprKind::Db { op: db_op, class, sql: sql.to_string(), position, args: values }, ty, span))
    }

    /// `sql` with a lone `*` result column of a query expanded into the row class's fields, in
    /// field order (`SELECT * FROM users` → `SELECT "id", "name", "age" FROM users`): a `*` is
    /// resolved by position when the statement runs, so a table rebuilt with another column
    /// order would fill the wrong fields. Any other `*` result column (among other columns, a
    /// table's `u.*`, or in `db.exec`) is H505, with the columns to write.
    fn expand_star(&mut self, sql: &str, op: DbOp, class: Option<ClassIdx>, span: Span) -> Option<String> {
        let stars = crate::sql_text::result_stars(sql);
        let Some(first) = stars.first() else { return Some(sql.to_string()) };
        let fields: Option<Vec<String>> = class
            .and_then(|c| Some(self.items.class_at(c)?.fields.iter().map(|f| format!("\"{}\"", f.name)).collect()));
        match (&fields, stars.as_slice()) {
            (Some(fields), [star]) if star.alone && op != DbOp::Exec => {
                let offset = star.offset;
                Some(format!("{}{}{}", &sql[..offset], fields.join(", "), &sql[offset + 1..]))
            }
            _ => {
                let note = match &fields {
                    Some(fields) => {
                        format!("name the columns instead, in the class's field order: {}", fields.join(", "))
                    }
                    None => "name the columns instead".to_string(),
                };
                // The offset is into the literal's value; past an escape it is only close, so it
                // stays inside the literal.
                let start = (span.start + 1 + first.offset as u32).min(span.end.saturating_sub(1));
                self.report(
                    error(
                        H505,
                        Span { start, end: start + 1 },
                        "`*` here is resolved by column position when the statement runs",
                        "write the column names",
                    )
                    .note(note)
                    .note("`SELECT * FROM t` alone is expanded into the row class's fields; other uses of `*` are not"),
                );
                None
            }
        }
    }

    /// The row class of a query: `Some(None)` for `exec`, `Some(Some(class))` for a valid
    /// query, `None` after an error.
    fn db_class(
        &mut self,
        op: DbOp,
        name: &Ident,
        class: Option<&ast::TypeExpr>,
        span: Span,
    ) -> Option<Option<ClassIdx>> {
        let Some(class) = class else {
            if op == DbOp::Exec {
                return Some(None);
            }
            self.report(
                error(H315, name.span, format!("`db.{}` needs the row class", name.name), "class missing")
                    .note(format!("write `db.{}<Class>(…)`", name.name)),
            );
            return None;
        };
        if op == DbOp::Exec {
            self.report(
                error(H315, class.span, "`db.exec` takes no type argument", "unexpected type")
                    .note("to read rows, use `db.query<T>` or `db.query_one<T>`"),
            );
            return None;
        }
        let ty = self.items.resolve_ty(class, self.diags)?;
        let Ty::Class(idx) = ty else {
            let found = self.ty_name(&ty);
            self.report(
                error(H315, class.span, format!("`db.{}` needs a class, found `{found}`", name.name), "not a class")
                    .note("rows are decoded into a class whose fields match the result columns"),
            );
            return None;
        };
        let items = self.items;
        let mut ok = true;
        let Some(info) = items.class_at(idx) else { return None };
        for field in &info.fields {
            match &field.ty {
                Some(ty) if !is_sql_value(ty) => {
                    self.report(error(
                        H315,
                        span,
                        format!(
                            "rows cannot be decoded into `{}`: field `{}` has type `{}`, which no SQL column holds",
                            items.ty_name(&Ty::Class(idx)),
                            field.name,
                            self.ty_name(ty)
                        ),
                        "rows decoded here",
                    ));
                    ok = false;
                }
                Some(_) => {}
                None => ok = false,
            }
        }
        ok.then_some(Some(idx))
    }
}

/// "1 was", "2 were".
fn was_were(n: usize) -> String {
    if n == 1 { "1 was".to_string() } else { format!("{n} were") }
}

/// "1 argument is", "2 arguments are".
fn was_were_arg(n: usize) -> String {
    if n == 1 { "1 argument is".to_string() } else { format!("{n} arguments are") }
}
