//! `json.encode<C>` and `json.decode<C>` for the interpreter: the runtime's shared encoder and
//! decoder (`nagi_runtime::shaped_json`, the LLVM path's too) walking the module's Low types as
//! a [`Shape`], with the interpreter's values converted to and from the runtime's value tree.

use nagi_interp::Value;
use nagi_interp::value::MapKey;
use nagi_low::{ArenaGet, ClassId, Module, Type};
use nagi_runtime::shaped_json::{self, Kind, Shape};

/// A Low type of a module, as the runtime's JSON walks it.
#[derive(Clone, Copy)]
struct LowShape<'a> {
    module: &'a Module,
    ty: &'a Type,
}

impl<'a> LowShape<'a> {
    fn at(&self, ty: &'a Type) -> LowShape<'a> {
        LowShape { module: self.module, ty }
    }

    /// The fields of a class type (none for anything else, or a class the module lacks).
    fn fields(&self) -> &'a [nagi_low::FieldData] {
        match self.ty {
            Type::Class(c) => self.module.classes.get(*c).map_or(&[], |class| class.fields.as_slice()),
            _ => &[],
        }
    }

    /// The variants of an enum type (none for anything else, or an enum the module lacks).
    fn variants(&self) -> &'a [nagi_low::VariantData] {
        match self.ty {
            Type::Enum(e) => self.module.enums.get(*e).map_or(&[], |data| data.variants.as_slice()),
            _ => &[],
        }
    }
}

/// The payload type of a variant without a payload, as the shared JSON walks it.
static UNIT: Type = Type::Unit;

impl Shape for LowShape<'_> {
    fn kind(&self) -> Kind {
        match self.ty {
            Type::I32 => Kind::I32,
            Type::I64 => Kind::I64,
            Type::F64 => Kind::F64,
            Type::Bool => Kind::Bool,
            // No class field holds a reference (V202); `unit` is what nothing else can be.
            // References, scopes, tasks and actors never reach JSON (the verifier keeps them out of
            // classes).
            Type::Unit | Type::Ref { .. } | Type::Scope | Type::Task(_) | Type::Actor(_) | Type::Defer => Kind::Unit,
            Type::String => Kind::String,
            Type::Time => Kind::Time,
            Type::Duration => Kind::Duration,
            Type::Uuid => Kind::Uuid,
            Type::Array(_) => Kind::Array,
            Type::Map(k, _) if **k == Type::String => Kind::MapString,
            Type::Map(..) => Kind::MapI64,
            Type::Option(_) => Kind::Option,
            Type::Class(_) => Kind::Class,
            Type::Enum(_) => Kind::Enum,
        }
    }

    fn inner(&self) -> Self {
        match self.ty {
            Type::Array(t) | Type::Option(t) | Type::Map(_, t) => self.at(t),
            _ => *self,
        }
    }

    fn field_count(&self) -> usize {
        match self.ty {
            Type::Enum(_) => self.variants().len(),
            _ => self.fields().len(),
        }
    }

    fn field_name(&self, i: usize) -> &str {
        match self.ty {
            Type::Enum(_) => self.variants().get(i).map_or("", |v| v.name.as_str()),
            _ => self.fields().get(i).map_or("", |f| f.name.as_str()),
        }
    }

    fn field(&self, i: usize) -> Self {
        if let Type::Enum(_) = self.ty {
            return match self.variants().get(i) {
                Some(v) => self.at(v.payload.as_ref().unwrap_or(&UNIT)),
                None => *self,
            };
        }
        match self.fields().get(i) {
            Some(f) => self.at(&f.ty),
            None => *self,
        }
    }
}

/// `value`, an object of `class`, as JSON text; the error is the trap's message.
pub(super) fn encode(module: &Module, class: ClassId, value: &Value) -> Result<String, String> {
    let ty = Type::Class(class);
    shaped_json::encode(&to_runtime(value)?, LowShape { module, ty: &ty })
}

/// `text` as an object of `class`, or `None` when it is not exactly one.
pub(super) fn decode(module: &Module, class: ClassId, text: &str) -> Option<Value> {
    let ty = Type::Class(class);
    shaped_json::decode(text, LowShape { module, ty: &ty }).map(from_runtime)
}

/// The answer of an outbound call as the interpreter's option: its body's text, or its JSON as an
/// object of `class`; `none` after the runtime recorded the failure.
pub(super) fn fetched(
    module: &Module,
    class: Option<ClassId>,
    call: &nagi_runtime::outbound::Call,
    result: Result<Vec<u8>, nagi_runtime::failure::Failure>,
) -> Value {
    let ty = class.map_or(Type::String, Type::Class);
    let value = nagi_runtime::outbound::finish(call, result, LowShape { module, ty: &ty });
    Value::Option(value.map(|v| Box::new(from_runtime(v))))
}

/// The runtime's tree for an interpreter value; values that hold no JSON (a reference, a moved
/// value) are an error, which no verified program gives.
fn to_runtime(value: &Value) -> Result<shaped_json::Value, String> {
    use shaped_json::Value as J;
    let all = |items: &[Value]| items.iter().map(to_runtime).collect::<Result<Vec<_>, _>>();
    Ok(match value {
        Value::I32(v) => J::I32(*v),
        Value::I64(v) => J::I64(*v),
        Value::F64(v) => J::F64(*v),
        Value::Bool(v) => J::Bool(*v),
        Value::Unit => J::Unit,
        Value::Str(s) => J::Str(s.clone()),
        Value::Array(items) => J::Array(all(items)?),
        Value::Option(o) => J::Option(o.as_deref().map(to_runtime).transpose()?.map(Box::new)),
        Value::Object(fields) => J::Class(all(fields)?),
        Value::Enum(variant, payload) => J::Enum(*variant as usize, Box::new(to_runtime(payload)?)),
        Value::Map(entries) => J::Map(
            entries.values().map(|(k, v)| Ok((to_runtime(k)?, to_runtime(v)?))).collect::<Result<Vec<_>, String>>()?,
        ),
        Value::Unset | Value::Ref(_) => return Err("cannot encode JSON: a value that is not data".to_string()),
    })
}

/// The interpreter value for a decoded tree.
fn from_runtime(value: shaped_json::Value) -> Value {
    use shaped_json::Value as J;
    match value {
        J::I32(v) => Value::I32(v),
        J::I64(v) => Value::I64(v),
        J::F64(v) => Value::F64(v),
        J::Bool(v) => Value::Bool(v),
        J::Unit => Value::Unit,
        J::Str(s) => Value::Str(s),
        J::Array(items) => Value::Array(items.into_iter().map(from_runtime).collect()),
        J::Option(o) => Value::Option(o.map(|v| Box::new(from_runtime(*v)))),
        J::Class(fields) => Value::Object(fields.into_iter().map(from_runtime).collect()),
        J::Enum(variant, payload) => Value::Enum(variant as u32, Box::new(from_runtime(*payload))),
        J::Map(entries) => Value::Map(
            entries
                .into_iter()
                .filter_map(|(k, v)| {
                    let key = from_runtime(k);
                    Some((MapKey::of(&key)?, (key, from_runtime(v))))
                })
                .collect(),
        ),
    }
}
