//! The types of `rtcall`: each argument against its runtime row's parameter (the class argument
//! of a generic row, the element type of the array library's rows, a SQL value), the constant
//! key of `array.sort_by`, the constant position of a `config.*` read (V255), the result, and
//! whether the call must be awaited.

use super::OpCheck;
use crate::entities::{ArenaGet, ClassId, LocalId, index};
use crate::ops::Operand;
use crate::runtime::RtType;
use crate::types::Type;
use crate::verifier::code;

impl<'a> OpCheck<'_, 'a> {
    pub(super) fn runtime_call(
        &mut self,
        dest: Option<LocalId>,
        func: crate::runtime::RuntimeFn,
        class: Option<ClassId>,
        args: &[Operand],
        awaited: bool,
    ) {
        let row = func.data();
        let types: Vec<_> = args.iter().map(|a| self.operand(a)).collect();
        if let Some(dest) = dest {
            self.local(dest);
        }
        let class_ty = match (row.generic, class) {
            (true, None) => {
                let message = format!("`{}` needs a class argument (`rtcall {}<Class>(…)`)", self.name, row.name);
                self.error(code::CLASS_ARGUMENT, message);
                None
            }
            (false, Some(_)) => {
                let message = format!("`{}` takes no class argument; remove the `<…>`", self.name);
                self.error(code::CLASS_ARGUMENT, message);
                None
            }
            (true, Some(c)) if self.cx.module.classes.get(c).is_none() => {
                let message = format!(
                    "`{}` names class #{}, which does not exist; the module has {} classes",
                    self.name,
                    index(c),
                    self.cx.module.classes.len()
                );
                self.error(code::UNKNOWN_CLASS, message);
                None
            }
            (_, c) => c.map(Type::Class),
        };
        let arity_ok = match row.variadic {
            None => args.len() == row.params.len(),
            Some(_) => args.len() >= row.params.len(),
        };
        if !arity_ok {
            let at_least = if row.variadic.is_some() { "at least " } else { "" };
            let message =
                format!("`{}` passes {} arguments, but it takes {at_least}{}", self.name, args.len(), row.params.len());
            self.error(code::OPERAND_COUNT, message);
        }
        // The array library's rows take their element type from the first argument.
        let elem = types.first().and_then(|t| t.as_deref()).and_then(crate::runtime::element_type).cloned();
        for (i, (arg, found)) in args.iter().zip(&types).enumerate() {
            let Some(param) = row.params.get(i).copied().or(row.variadic) else { continue };
            let Some(found) = found else { continue };
            let expected = match param {
                RtType::SqlValue => {
                    "a SQL value (i32, i64, f64, bool, an Option of one of those, &str or &Option<String>)".to_string()
                }
                RtType::ComparableArrayRef | RtType::ComparableArrayMut => {
                    let r = if param == RtType::ComparableArrayMut { "&mut" } else { "&" };
                    format!("{r} [i32], {r} [i64], {r} [f64] or {r} [String]")
                }
                // A class-dependent type without a usable class argument was reported above.
                other => match other.to_type(class_ty.as_ref(), elem.as_ref()) {
                    Some(t) => self.show(&t),
                    None => continue,
                },
            };
            if !param.accepts(found, class_ty.as_ref(), elem.as_ref()) {
                let what = format!("argument {} ({})", i + 1, self.describe(arg));
                self.mismatch(&what, found, &expected);
            } else if param == RtType::FieldKey {
                self.field_key(arg, class);
            } else if row.func.group() == crate::RowGroup::Config {
                self.config_position(arg, row.func);
            }
        }
        if let Some(ret) = row.ret.to_type(class_ty.as_ref(), elem.as_ref()) {
            let callee = format!("`{}`", row.name);
            self.call_result(dest, &ret, &callee);
        }
        let callee = format!("`{}`", row.name);
        self.check_await(awaited, row.is_async, &callee);
    }

    /// The position a `config.*` row reads: an `i64` constant naming a `config` value of the
    /// row's type.
    fn config_position(&mut self, arg: &Operand, func: crate::RuntimeFn) {
        let configs = &self.cx.module.configs;
        let found = match arg {
            Operand::Const(crate::types::Constant::I64(i)) => usize::try_from(*i).ok().and_then(|i| configs.get(i)),
            _ => None,
        };
        match found {
            Some(config) if crate::verifier::config_row(&config.ty) == Some(func) => {}
            Some(config) => {
                let message = format!("`{}` reads `{}`, which is not of its type", func.name(), config.name);
                self.error(code::CONFIG, message);
            }
            None => {
                let message = format!(
                    "`{}` reads no configuration value: its argument must be an i64 constant below {}",
                    func.name(),
                    configs.len()
                );
                self.error(code::CONFIG, message);
            }
        }
    }

    /// The key of `array.sort_by<C>`: an `i64` constant naming a field of `C` that the array
    /// library compares.
    fn field_key(&mut self, arg: &Operand, class: Option<ClassId>) {
        let Some(data) = class.and_then(|c| self.cx.module.classes.get(c)) else { return };
        let Operand::Const(crate::types::Constant::I64(index)) = arg else {
            let message = format!("`{}`: the sort key must be an i64 constant naming a field", self.name);
            self.error(code::FIELD_INDEX, message);
            return;
        };
        match usize::try_from(*index).ok().and_then(|i| data.fields.get(i)) {
            Some(field) if crate::runtime::is_comparable(&field.ty) => {}
            Some(field) => {
                let message = format!(
                    "`{}`: field `{}` of `{}` is {}, which the array library does not order (i32, i64, f64, String)",
                    self.name,
                    field.name,
                    data.name,
                    self.show(&field.ty)
                );
                self.error(code::FIELD_INDEX, message);
            }
            None => {
                let message = format!(
                    "`{}`: `{}` has {} fields, so there is no field {index}",
                    self.name,
                    data.name,
                    data.fields.len()
                );
                self.error(code::FIELD_INDEX, message);
            }
        }
    }
}
