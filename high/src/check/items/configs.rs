//! Configuration as items: each `config Name { … }` value's type (`String`, `i64`, `f64`,
//! `bool` or `Duration`; `secret` only a `String`), its environment variable (its name in upper
//! case) and its default, a literal of its type written as the runtime reads it
//! (docs/language.md §6.16).

use super::*;
use crate::check::H428;

/// One configuration value as the checker knows it: its position among all of the program's
/// values (what `config.*` reads), and the type a read of it has (`Secret` for a secret).
#[derive(Clone, Debug)]
pub(crate) struct ConfigField {
    pub name: String,
    pub index: usize,
    pub ty: Ty,
}

impl<'f> Items<'f> {
    /// Collects `decl`: its values, in order after those of earlier declarations.
    pub(super) fn collect_config(&mut self, decl: &ast::ConfigDecl, diags: &mut Vec<Diagnostic>) {
        if self.config_by_name.contains_key(&decl.name.name) || self.class_by_name.contains_key(&decl.name.name) {
            diags.push(error(
                H428,
                decl.name.span,
                format!("`{}` is declared twice", decl.name.name),
                "declared again",
            ));
            return;
        }
        let mut fields: Vec<ConfigField> = Vec::new();
        for field in &decl.fields {
            let Some(ty) = self.resolve_ty(&field.ty, diags) else { continue };
            if !matches!(ty, Ty::String | Ty::I64 | Ty::F64 | Ty::Bool | Ty::Duration) {
                let found = self.ty_name(&ty);
                diags.push(
                    error(
                        H428,
                        field.ty.span,
                        format!("a configuration value cannot be `{found}`"),
                        "not a value's type",
                    )
                    .note("a configuration value is a String, i64, f64, bool or Duration"),
                );
                continue;
            }
            if field.secret && ty != Ty::String {
                diags.push(error(H428, field.span, "only a String can be secret", "secret, and not a String"));
                continue;
            }
            let env = field.name.name.to_uppercase();
            if self.configs.iter().any(|c| c.env == env) || fields.iter().any(|f| f.name == field.name.name) {
                diags.push(error(
                    H428,
                    field.name.span,
                    format!("configuration value `{}` (variable {env}) is declared twice", field.name.name),
                    "declared again",
                ));
                continue;
            }
            let default = match &field.default {
                None => None,
                Some(value) => match default_text(value, &ty) {
                    Some(text) => Some(text),
                    None => {
                        let expected = self.ty_name(&ty);
                        diags.push(
                            error(
                                H428,
                                value.span,
                                format!(
                                    "the default must be {} `{expected}` literal",
                                    crate::check::a_or_an(&expected)
                                ),
                                "not a literal of its type",
                            )
                            .note("a default is written as a literal: `100`, `0.5`, `true`, `\"text\"`, `5s`"),
                        );
                        continue;
                    }
                },
            };
            let index = self.configs.len();
            let read = if field.secret { Ty::Secret } else { ty.clone() };
            fields.push(ConfigField { name: field.name.name.clone(), index, ty: read });
            self.configs.push(tir::ConfigValue {
                name: field.name.name.clone(),
                env,
                ty,
                secret: field.secret,
                default,
            });
        }
        self.config_by_name.insert(decl.name.name.clone(), fields);
    }
}

/// The text the runtime reads a default from, when `value` is a literal of `ty`.
fn default_text(value: &ast::Expr, ty: &Ty) -> Option<String> {
    let (negative, literal) = match &value.kind {
        ast::ExprKind::Unary { op: ast::UnaryOp::Neg, operand } => (true, &**operand),
        _ => (false, value),
    };
    let sign = if negative { "-" } else { "" };
    match (&literal.kind, ty) {
        (ast::ExprKind::Int(v), Ty::I64) => {
            let v = if negative { -i128::from(*v) } else { i128::from(*v) };
            i64::try_from(v).ok().map(|v| v.to_string())
        }
        (ast::ExprKind::Int(v), Ty::F64) => Some(format!("{sign}{v}")),
        (ast::ExprKind::Float(v), Ty::F64) => Some(format!("{sign}{v:?}")),
        (ast::ExprKind::Duration(us), Ty::Duration) => Some(format!("{sign}{us}us")),
        (ast::ExprKind::Bool(b), Ty::Bool) if !negative => Some(b.to_string()),
        (ast::ExprKind::Str(s), Ty::String) if !negative => Some(s.clone()),
        _ => None,
    }
}
