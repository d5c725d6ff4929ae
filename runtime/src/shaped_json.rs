//! Typed JSON for values whose type is known only at run time, described by a [`Shape`]: the
//! layout descriptors of the LLVM path (`cabi::json`) and the Low types the interpreter's host
//! walks. One encoder and one decoder serve both, so they produce and accept exactly what the
//! Rust path's serde derives do (docs/design.md §2.8), and cannot drift apart.
//!
//! Encoding goes through `serde_json` with a class's fields as a map in declaration order
//! (serde_json writes a struct and a map alike); non-finite floats become `null`. Decoding
//! mirrors `#[derive(Deserialize)] #[serde(deny_unknown_fields)]`: an object with each field
//! once and no others (a missing `Option` field is `None`), or an array of the fields in order,
//! and the scalar rules of serde's own impls (`i32` range-checked, no float for an integer, …).
//! Decoding builds a [`Value`] and reports only whether the whole text decoded.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// What kind of value a [`Shape`] describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `f64`.
    F64,
    /// `bool`.
    Bool,
    /// `unit`.
    Unit,
    /// `String`.
    String,
    /// `[T]`; [`Shape::inner`] is `T`.
    Array,
    /// `Option<T>`; [`Shape::inner`] is `T`.
    Option,
    /// A class; [`Shape::field_count`], [`Shape::field_name`] and [`Shape::field`] describe
    /// its fields in declaration order.
    Class,
}

/// A description of a Nagi type, walked by the encoder and the decoder. Shapes are cheap handles
/// (a reference to a descriptor, or a module and a type), copied as they are walked.
pub trait Shape: Copy {
    /// What kind of value this is.
    fn kind(&self) -> Kind;
    /// The element type of an array, the payload type of an option (only asked of those).
    fn inner(&self) -> Self;
    /// How many fields a class has (only asked of classes).
    fn field_count(&self) -> usize;
    /// The name (JSON key) of field `i` of a class.
    fn field_name(&self, i: usize) -> &str;
    /// The type of field `i` of a class.
    fn field(&self, i: usize) -> Self;
}

/// A value of some [`Shape`]: what [`decode`] gives and [`encode`] takes.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// An `f64`.
    F64(f64),
    /// A `bool`.
    Bool(bool),
    /// `unit`.
    Unit,
    /// A `String`.
    Str(String),
    /// An array's elements.
    Array(Vec<Value>),
    /// An option.
    Option(Option<Box<Value>>),
    /// A class's fields, in declaration order.
    Class(Vec<Value>),
}

/// Encodes `value`, of type `shape`, as compact JSON text (what `rt::json_encode` gives for the
/// derived class on the Rust path). The error is the trap's message, `cannot encode JSON: …`,
/// which a value that does not fit its shape gives.
pub fn encode<S: Shape>(value: &Value, shape: S) -> Result<String, String> {
    serde_json::to_string(&Shaped { value, shape }).map_err(|error| format!("cannot encode JSON: {error}"))
}

/// Decodes `text` as one value of type `shape` (what `rt::json_decode` gives on the Rust path):
/// `None` when the text is not exactly one such value, whitespace around it aside.
pub fn decode<S: Shape>(text: &str, shape: S) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Seed(shape).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// A value together with its shape, as something serde can serialize.
struct Shaped<'a, S> {
    value: &'a Value,
    shape: S,
}

impl<S: Shape> Serialize for Shaped<'_, S> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        use serde::ser::Error;
        let shape = self.shape;
        match (shape.kind(), self.value) {
            (Kind::I32, Value::I32(v)) => s.serialize_i32(*v),
            (Kind::I64, Value::I64(v)) => s.serialize_i64(*v),
            (Kind::F64, Value::F64(v)) => s.serialize_f64(*v),
            (Kind::Bool, Value::Bool(v)) => s.serialize_bool(*v),
            (Kind::Unit, Value::Unit) => s.serialize_unit(),
            (Kind::String, Value::Str(v)) => s.serialize_str(v),
            (Kind::Array, Value::Array(items)) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Shaped { value: item, shape: shape.inner() })?;
                }
                seq.end()
            }
            (Kind::Option, Value::Option(None)) => s.serialize_none(),
            (Kind::Option, Value::Option(Some(v))) => s.serialize_some(&Shaped { value: v, shape: shape.inner() }),
            (Kind::Class, Value::Class(fields)) if fields.len() == shape.field_count() => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (i, v) in fields.iter().enumerate() {
                    map.serialize_entry(shape.field_name(i), &Shaped { value: v, shape: shape.field(i) })?;
                }
                map.end()
            }
            (kind, _) => Err(Z::Error::custom(format_args!("a value that is not a {kind:?}"))),
        }
    }
}

/// Decodes a value of the described type.
#[derive(Clone, Copy)]
struct Seed<S>(S);

impl<'de, S: Shape> DeserializeSeed<'de> for Seed<S> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        use serde::Deserialize;
        let shape = self.0;
        Ok(match shape.kind() {
            Kind::I32 => Value::I32(i32::deserialize(d)?),
            Kind::I64 => Value::I64(i64::deserialize(d)?),
            Kind::F64 => Value::F64(f64::deserialize(d)?),
            Kind::Bool => Value::Bool(bool::deserialize(d)?),
            Kind::Unit => {
                <()>::deserialize(d)?;
                Value::Unit
            }
            Kind::String => Value::Str(String::deserialize(d)?),
            Kind::Array => d.deserialize_seq(ArrayVisitor(shape.inner()))?,
            Kind::Option => d.deserialize_option(OptionVisitor(shape.inner()))?,
            // serde_json ignores the name and the field list of `deserialize_struct` (the list
            // only words error messages, which decoding does not report).
            Kind::Class => d.deserialize_struct("", &[], ClassVisitor(shape))?,
        })
    }
}

struct ArrayVisitor<S>(S);

impl<'de, S: Shape> Visitor<'de> for ArrayVisitor<S> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Seed(self.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
}

struct OptionVisitor<S>(S);

impl<'de, S: Shape> Visitor<'de> for OptionVisitor<S> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an option")
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Option(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Option(None))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Ok(Value::Option(Some(Box::new(Seed(self.0).deserialize(d)?))))
    }
}

struct ClassVisitor<S>(S);

impl<'de, S: Shape> Visitor<'de> for ClassVisitor<S> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    /// The derive's sequence form: every field, in order.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let shape = self.0;
        let mut values = Vec::new();
        for i in 0..shape.field_count() {
            match seq.next_element_seed(Seed(shape.field(i)))? {
                Some(v) => values.push(v),
                None => return Err(de::Error::invalid_length(i, &self)),
            }
        }
        Ok(Value::Class(values))
    }

    /// The object form: each known field at most once, no unknown ones; a missing `Option`
    /// field is `None`, any other missing field an error.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let shape = self.0;
        let count = shape.field_count();
        let mut values: Vec<Option<Value>> = (0..count).map(|_| None).collect();
        while let Some(key) = map.next_key::<String>()? {
            let Some(i) = (0..count).find(|&i| shape.field_name(i) == key) else {
                return Err(de::Error::custom(format_args!("unknown field `{key}`")));
            };
            if values[i].is_some() {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            values[i] = Some(map.next_value_seed(Seed(shape.field(i)))?);
        }
        let mut out = Vec::with_capacity(count);
        for (i, value) in values.into_iter().enumerate() {
            match (value, shape.field(i).kind()) {
                (Some(v), _) => out.push(v),
                (None, Kind::Option) => out.push(Value::Option(None)),
                (None, _) => return Err(de::Error::custom(format_args!("missing field `{}`", shape.field_name(i)))),
            }
        }
        Ok(Value::Class(out))
    }
}
