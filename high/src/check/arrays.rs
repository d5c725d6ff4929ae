//! The array library's methods: `sort`, `sort_by(field)` and `reverse`, which reorder a mutable
//! array place, and `contains` and `slice`, which read any array. Each is one row of the
//! runtime interface (`array.*`, docs/low.md).
//!
//! The rules: `sort` and `contains` take arrays of `i32`, `i64`, `f64` or `String` (the types
//! the library orders), `sort_by` an array of a class and the name of one of its fields of such
//! a type (H211 and H204 otherwise); the reordering methods need a place they may modify (H401,
//! H402, H406 as `push` does).

use nagi_low::RuntimeFn;
use nagi_syntax::ast::{self, Ident, Span};

use super::expr::mk;
use super::stmt::Mutation;
use super::{Body, H204, H211, error};
use crate::tir::{Expr, ExprKind, Ty};

/// Whether the array library orders and compares values of `ty`.
pub(super) fn is_ordered(ty: &Ty) -> bool {
    matches!(ty, Ty::I32 | Ty::I64 | Ty::F64 | Ty::String)
}

impl Body<'_, '_> {
    /// `xs.sort()`, `xs.sort_by(field)` or `xs.reverse()` on a mutable array place.
    pub(super) fn reorder(
        &mut self,
        receiver: &ast::Expr,
        method: &Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let name = method.name.as_str();
        let target = self.mutable_receiver(receiver, name);
        let arity = if name == "sort_by" { 1 } else { 0 };
        if !self.arity(name, arity, args, span) {
            return None;
        }
        let (place, ty) = target?;
        let elem = match &ty {
            Ty::Array(elem) => (**elem).clone(),
            _ => return self.no_such_method(&ty, method, "arrays"),
        };
        let (row, key) = match name {
            "sort" if is_ordered(&elem) => (RuntimeFn::ArraySort, None),
            "sort" => return self.no_such_method(&ty, method, "arrays of i32, i64, f64 or String"),
            "sort_by" => (RuntimeFn::ArraySortBy, Some(self.sort_key(&elem, &ty, method, &args[0])?)),
            _ => (RuntimeFn::ArrayReverse, None),
        };
        let mutable = self.check_mutation(&place, receiver.span, Mutation::Reorder(row));
        mutable.then(|| mk(ExprKind::Reorder { row, array: place, key }, Ty::Unit, span))
    }

    /// The field `sort_by(field)` names: a field of the element class whose type the library
    /// orders.
    fn sort_key(&mut self, elem: &Ty, ty: &Ty, method: &Ident, arg: &ast::Expr) -> Option<usize> {
        let Ty::Class(class) = elem else {
            return self.no_such_method(ty, method, "arrays of a class");
        };
        let ast::ExprKind::Name(field) = &arg.kind else {
            self.report(
                error(H204, arg.span, "`sort_by` takes the name of a field", "not a field name").note(format!(
                    "for example `{}`; {}",
                    "posts.sort_by(created)",
                    self.items.field_list(*class)
                )),
            );
            return None;
        };
        let Some(idx) = self.items.field_index(*class, &field.name) else {
            let class_name = self.ty_name(elem);
            let list = self.items.field_list(*class);
            self.report(
                error(H204, field.span, format!("class `{class_name}` has no field `{}`", field.name), "unknown field")
                    .note(list),
            );
            return None;
        };
        let field_ty = self.items.class_at(*class)?.fields[idx].ty.clone()?;
        if !is_ordered(&field_ty) {
            let found = self.ty_name(&field_ty);
            self.report(
                error(H211, field.span, format!("cannot sort by `{}`, which is `{found}`", field.name), "not ordered")
                    .note("`sort_by` orders by a field of type i32, i64, f64 or String"),
            );
            return None;
        }
        Some(idx)
    }

    /// `xs.contains(x)` or `xs.slice(start, end)` on an array value, which is borrowed.
    pub(super) fn array_library_call(
        &mut self,
        array: Expr,
        elem: Ty,
        method: &Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        let (row, params, ret) = if method.name == "contains" {
            if !is_ordered(&elem) {
                for arg in args {
                    self.infer(arg, None);
                }
                return self.no_such_method(&array.ty, method, "arrays of i32, i64, f64 or String");
            }
            (RuntimeFn::ArrayContains, vec![elem.clone()], Ty::Bool)
        } else {
            (RuntimeFn::ArraySlice, vec![Ty::I64, Ty::I64], array.ty.clone())
        };
        if !self.arity(&method.name, params.len(), args, span) {
            return None;
        }
        let checked = self.check_args(args, &params);
        self.row_call(row, array, checked, ret, span)
    }

    /// Reports a method of a library on a receiver it does not work on (H211).
    pub(super) fn no_such_method<T>(&mut self, ty: &Ty, method: &Ident, works_on: &str) -> Option<T> {
        let name = self.ty_name(ty);
        self.report(
            error(
                H211,
                method.span,
                format!("`{name}` has no method `{}`", method.name),
                format!("receiver is `{name}`"),
            )
            .note(format!("`{}` works on {works_on}", method.name)),
        );
        None
    }
}
