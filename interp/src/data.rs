//! The operations that are not control flow, calls or runtime calls: scalars (through
//! [`crate::scalar`]), objects, arrays, strings, options, and ownership (`move`, `clone`,
//! `drop`, `borrow`, `load`, `store`), in groups as `docs/low.md` §6 lists them.
//!
//! Operands in consuming positions go through `Stack::consume` (a non-copy local is moved out);
//! other reads go through `Stack::read`, which follows a reference to its place, so an operation
//! written for `C`, `&C` and `&mut C` alike is one case here.

use nagi_low::{Family, LocalId, OpKind, Operand, StrPart};

use crate::machine::Machine;
use crate::stack::{as_array, as_i64, as_str, fault, project};
use crate::value::{Proj, Value};
use crate::{Stop, UNWRAP_OF_NONE, scalar};

impl Machine<'_, '_> {
    /// Runs an operation of one of the groups below.
    pub(crate) fn data_op(&mut self, kind: &OpKind) -> Result<(), Stop> {
        match kind.family() {
            Family::Scalar => self.scalar_op(kind),
            Family::Object => self.object_op(kind),
            Family::Array => self.array_op(kind),
            Family::Map => self.map_op(kind),
            Family::String => self.string_op(kind),
            Family::Option => self.option_op(kind),
            Family::Enum => self.enum_op(kind),
            // The others reach `ownership_op`'s fault: `check` refuses the async operations,
            // and the machine runs calls and control flow itself.
            Family::Ownership | Family::Call | Family::Async | Family::Control => self.ownership_op(kind),
        }
    }

    /// `const`, unary and binary arithmetic, `cast`.
    fn scalar_op(&mut self, kind: &OpKind) -> Result<(), Stop> {
        match kind {
            OpKind::Const { dest, value } => self.stack.set(*dest, Value::constant(value)),
            OpKind::Unary { dest, op, ty, arg } => {
                let value = scalar::unary(*op, *ty, self.stack.operand(arg)?)?;
                self.stack.set(*dest, value)
            }
            OpKind::Binary { dest, op, ty, lhs, rhs } => {
                let (lhs, rhs) = (self.stack.operand(lhs)?, self.stack.operand(rhs)?);
                let value = scalar::binary(&*self.host, *op, *ty, lhs, rhs)?;
                self.stack.set(*dest, value)
            }
            OpKind::Cast { dest, to, arg } => {
                let value = scalar::cast(*to, self.stack.operand(arg)?)?;
                self.stack.set(*dest, value)
            }
            other => self.ownership_op(other),
        }
    }

    /// `new`, `field.get`, `field.ref[_mut]`, `field.set`.
    fn object_op(&mut self, kind: &OpKind) -> Result<(), Stop> {
        match kind {
            OpKind::New { dest, class: _, fields } => {
                let mut values = Vec::with_capacity(fields.len());
                for field in fields {
                    values.push(self.stack.consume(field)?);
                }
                self.stack.set(*dest, Value::Object(values))
            }
            OpKind::FieldGet { dest, object, field } => {
                let value = field_of(self.stack.read(*object)?, *field)?.clone();
                self.stack.set(*dest, value)
            }
            OpKind::FieldRef { dest, object, field, mutable: _ } => {
                let place = self.stack.place_of(*object)?;
                self.stack.set(*dest, project(&place, Proj::Field(*field as usize)))
            }
            OpKind::FieldSet { object, field, value } => {
                let value = self.stack.consume(value)?;
                match self.stack.read_mut(*object)? {
                    Value::Object(fields) => match fields.get_mut(*field as usize) {
                        Some(slot) => {
                            *slot = value;
                            Ok(())
                        }
                        None => Err(fault("`field.set` of a field the object does not have")),
                    },
                    other => Err(fault(format!("`field.set` on {}", other.kind()))),
                }
            }
            _ => Err(fault("not an object operation")),
        }
    }

    /// `array.new`, `array.len`, `array.get`, `array.ref[_mut]`, `array.set`, `array.push`.
    /// Every index is checked by the host, which words the trap as the runtime does.
    fn array_op(&mut self, kind: &OpKind) -> Result<(), Stop> {
        match kind {
            OpKind::ArrayNew { dest } => self.stack.set(*dest, Value::Array(Vec::new())),
            OpKind::ArrayLen { dest, array } => {
                let len = as_array(self.stack.read(*array)?)?.len();
                self.stack.set(*dest, Value::I64(len as i64))
            }
            OpKind::ArrayGet { dest, array, index } => {
                let at = self.checked_index(*array, index)?;
                let value = as_array(self.stack.read(*array)?)?.get(at).cloned().ok_or_else(|| fault("index"))?;
                self.stack.set(*dest, value)
            }
            OpKind::ArrayRef { dest, array, index, mutable: _ } => {
                let at = self.checked_index(*array, index)?;
                let place = self.stack.place_of(*array)?;
                self.stack.set(*dest, project(&place, Proj::Index(at)))
            }
            OpKind::ArraySet { array, index, value } => {
                // The index is checked before the value is taken, as on the Rust path.
                let at = self.checked_index(*array, index)?;
                let value = self.stack.consume(value)?;
                match self.stack.read_mut(*array)? {
                    Value::Array(items) if at < items.len() => {
                        items[at] = value;
                        Ok(())
                    }
                    other => Err(fault(format!("`array.set` on {}", other.kind()))),
                }
            }
            OpKind::ArrayPush { array, value } => {
                let value = self.stack.consume(value)?;
                match self.stack.read_mut(*array)? {
                    Value::Array(items) => {
                        items.push(value);
                        Ok(())
                    }
                    other => Err(fault(format!("`array.push` on {}", other.kind()))),
                }
            }
            _ => Err(fault("not an array operation")),
        }
    }

    /// The position `index` names in the array `array` (a value or a reference to one), or the
    /// index trap.
    fn checked_index(&self, array: LocalId, index: &Operand) -> Result<usize, Stop> {
        let index = as_i64(&self.stack.operand(index)?)?;
        let len = as_array(self.stack.read(array)?)?.len();
        self.host.index(index, len).map_err(Stop::Trap)
    }

    /// `string`, `str.len`, `str.concat`, `str.eq`.
    fn string_op(&mut self, kind: &OpKind) -> Result<(), Stop> {
        match kind {
            OpKind::StringLit { dest, value } => self.stack.set(*dest, Value::Str(value.clone())),
            OpKind::StrLen { dest, string } => {
                let len = as_str(self.stack.read(*string)?)?.len();
                self.stack.set(*dest, Value::I64(len as i64))
            }
            OpKind::StrConcat { dest, parts } => {
                let mut out = String::new();
                for part in parts {
                    match part {
                        StrPart::Local(local) => out.push_str(as_str(self.stack.read(*local)?)?),
                        StrPart::Text(text) => out.push_str(text),
                    }
                }
                self.stack.set(*dest, Value::Str(out))
            }
            OpKind::StrEq { dest, lhs, rhs } => {
                let same = as_str(self.stack.read(*lhs)?)? == as_str(self.stack.read(*rhs)?)?;
                self.stack.set(*dest, Value::Bool(same))
            }
            _ => Err(fault("not a string operation")),
        }
    }

    /// `option.some`, `option.none`, `option.is_some`, `option.unwrap`.
    fn option_op(&mut self, kind: &OpKind) -> Result<(), Stop> {
        match kind {
            OpKind::OptionSome { dest, value } => {
                let value = self.stack.consume(value)?;
                self.stack.set(*dest, Value::Option(Some(Box::new(value))))
            }
            OpKind::OptionNone { dest } => self.stack.set(*dest, Value::Option(None)),
            OpKind::OptionIsSome { dest, option } => {
                let some = match self.stack.read(*option)? {
                    Value::Option(o) => o.is_some(),
                    other => return Err(fault(format!("`option.is_some` of {}", other.kind()))),
                };
                self.stack.set(*dest, Value::Bool(some))
            }
            OpKind::OptionUnwrap { dest, option } => match self.stack.consume_local(*option)? {
                Value::Option(Some(value)) => self.stack.set(*dest, *value),
                Value::Option(None) => Err(Stop::Trap(UNWRAP_OF_NONE.to_string())),
                other => Err(fault(format!("`option.unwrap` of {}", other.kind()))),
            },
            _ => Err(fault("not an option operation")),
        }
    }

    /// `enum.new`, `enum.is`, `enum.get`, `enum.ref`.
    fn enum_op(&mut self, kind: &OpKind) -> Result<(), Stop> {
        match kind {
            OpKind::EnumNew { dest, variant, payload, .. } => {
                let payload = match payload {
                    Some(p) => self.stack.consume(p)?,
                    None => Value::Unit,
                };
                self.stack.set(*dest, Value::Enum(*variant, Box::new(payload)))
            }
            OpKind::EnumIs { dest, value, variant } => {
                let held = self.variant_of(*value)?;
                self.stack.set(*dest, Value::Bool(held == *variant))
            }
            OpKind::EnumGet { dest, value, variant } | OpKind::EnumRef { dest, value, variant } => {
                if self.variant_of(*value)? != *variant {
                    let ty = self.stack.local_type(*value)?.through_ref().0;
                    return Err(Stop::Trap(nagi_low::enum_mismatch_message(self.module, ty, *variant)));
                }
                let result = if matches!(kind, OpKind::EnumGet { .. }) {
                    match self.stack.read(*value)? {
                        Value::Enum(_, payload) => (**payload).clone(),
                        other => return Err(fault(format!("`enum.get` of {}", other.kind()))),
                    }
                } else {
                    project(&*self.stack.place_of(*value)?, Proj::Payload)
                };
                self.stack.set(*dest, result)
            }
            _ => Err(fault("not an enum operation")),
        }
    }

    /// The variant the enum value or reference `value` holds.
    fn variant_of(&self, value: LocalId) -> Result<u32, Stop> {
        match self.stack.read(value)? {
            Value::Enum(variant, _) => Ok(*variant),
            other => Err(fault(format!("an enum operation on {}", other.kind()))),
        }
    }

    /// `copy`, `move`, `clone`, `drop`, `borrow[_mut]`, `load`, `store`.
    fn ownership_op(&mut self, kind: &OpKind) -> Result<(), Stop> {
        match kind {
            OpKind::Copy { dest, src } => {
                let value = self.stack.local(*src)?.clone();
                self.stack.set(*dest, value)
            }
            OpKind::Move { dest, src } => {
                let value = self.stack.take(*src)?;
                self.stack.set(*dest, value)
            }
            // A deep copy of the value or of what the reference points to.
            OpKind::Clone { dest, src } => {
                let value = self.stack.read(*src)?.clone();
                self.stack.set(*dest, value)
            }
            OpKind::Drop { local } => self.stack.take(*local).map(drop),
            // A borrow of a reference (a shared reborrow of a `&mut`) names the same place.
            OpKind::Borrow { dest, src, mutable: _ } => {
                let place = self.stack.place_of(*src)?;
                self.stack.set(*dest, Value::Ref(place))
            }
            OpKind::Load { dest, reference } => {
                let value = self.stack.read(*reference)?.clone();
                self.stack.set(*dest, value)
            }
            OpKind::Store { reference, value } => {
                let value = self.stack.consume(value)?;
                *self.stack.read_mut(*reference)? = value;
                Ok(())
            }
            other => Err(fault(format!("the interpreter has no case for `{:?}`", other.opcode()))),
        }
    }
}

/// Field `field` of an object value.
fn field_of(object: &Value, field: u32) -> Result<&Value, Stop> {
    match object {
        Value::Object(fields) => fields.get(field as usize).ok_or_else(|| fault("a field the object does not have")),
        other => Err(fault(format!("a field of {}", other.kind()))),
    }
}
