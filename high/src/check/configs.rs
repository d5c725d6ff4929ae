//! Reads of the program's configuration (docs/language.md §6.16): `Name.value` is a call of the
//! `config.*` row of the value's type at its position, and a secret's read is a `Secret`, which
//! gives its text only through `.reveal()` (and shows as `***` in `print` and `to_string`).

use nagi_low::RuntimeFn;
use nagi_syntax::ast::{self, Ident, Span};

use super::expr::mk;
use super::{Body, H428, error};
use crate::tir::{Builtin, Expr, ExprKind, Ty};

impl Body<'_, '_> {
    /// The name of the `config` declaration `e` names (a bare name that is not a variable).
    pub(super) fn config_named(&self, e: &ast::Expr) -> Option<String> {
        let ast::ExprKind::Name(id) = &e.kind else { return None };
        if self.lookup(&id.name).is_some() || !self.items.config_by_name.contains_key(&id.name) {
            return None;
        }
        Some(id.name.clone())
    }

    /// `Config.value`: the value, read from the configuration bound at start.
    pub(super) fn config_read(&mut self, config: &str, field: &Ident, span: Span) -> Option<Expr> {
        let fields = &self.items.config_by_name[config];
        let Some(found) = fields.iter().find(|f| f.name == field.name) else {
            let names: Vec<String> = fields.iter().map(|f| format!("`{}`", f.name)).collect();
            self.report(
                error(H428, field.span, format!("`{config}` has no value `{}`", field.name), "unknown value")
                    .note(format!("the values of `{config}` are {}", names.join(", "))),
            );
            return None;
        };
        let row = match found.ty {
            Ty::I64 => RuntimeFn::ConfigI64,
            Ty::F64 => RuntimeFn::ConfigF64,
            Ty::Bool => RuntimeFn::ConfigBool,
            Ty::Duration => RuntimeFn::ConfigDuration,
            _ => RuntimeFn::ConfigStr,
        };
        let index = mk(ExprKind::Int(found.index as i64), Ty::I64, span);
        Some(mk(ExprKind::Builtin { builtin: Builtin::Runtime(row), args: vec![index] }, found.ty.clone(), span))
    }

    /// `secret.reveal()`, the one method of a `Secret`: its text, as a `String`.
    pub(super) fn secret_method(
        &mut self,
        value: Expr,
        method: &Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Expr> {
        if method.name != "reveal" {
            self.report(
                error(H428, method.span, format!("a `Secret` has no method `{}`", method.name), "unknown method")
                    .note("a secret configuration value gives its text only through `.reveal()`"),
            );
            return None;
        }
        if !self.arity("reveal", 0, args, span) {
            return None;
        }
        Some(mk(ExprKind::Builtin { builtin: Builtin::Clone, args: vec![value] }, Ty::String, span))
    }
}
