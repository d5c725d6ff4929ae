//! Typed JSON for values whose type is known only at run time, described by a [`Shape`]: the
//! layout descriptors of the LLVM path (`cabi::json`) and the Low types the interpreter's host
//! walks. One encoder and one decoder serve both, so they produce and accept exactly what the
//! Rust path's serde derives do (docs/design.md §2.8), and cannot drift apart.
//!
//! Encoding writes what serde_json writes for the derives, a class's fields as an object in
//! declaration order; non-finite floats become `null`. The one encoder, [`write()`] (`write.rs`),
//! reads values through a [`View`]: a [`Value`] tree with its shape here, emitted memory with its
//! layout descriptor in `cabi::json`. Decoding
//! mirrors `#[derive(Deserialize)] #[serde(deny_unknown_fields)]`: an object with each field
//! once and no others (a missing `Option` field is `None`), or an array of the fields in order,
//! and the scalar rules of serde's own impls (`i32` range-checked, no float for an integer, …).
//! An enum is serde's externally tagged form, as the derive writes and reads it: a variant
//! without a payload is its name as a string (`"Admin"`), one with a payload an object of one
//! key (`{"Member": 5}`).
//! Decoding builds a [`Value`]. [`decode`] reports only whether the whole text decoded; [`Seed`]
//! gives serde's own error, which is the derive's to the byte (message, position, and the path
//! `serde_path_to_error` finds), so the HTTP binding of the LLVM path answers exactly as the Rust
//! path does.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use serde::de::{self, DeserializeSeed, Deserializer, Expected, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::ser::{Serialize, Serializer};

use crate::map::Key;

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
    /// `Time`, held as `i64` microseconds ([`Value::I64`]); RFC 3339 text in JSON.
    Time,
    /// `Duration`, held as `i64` microseconds; its literal's text in JSON (`"250ms"`).
    Duration,
    /// `Uuid`, held as its canonical text ([`Value::Str`]); that text in JSON.
    Uuid,
    /// `[T]`; [`Shape::inner`] is `T`.
    Array,
    /// `Option<T>`; [`Shape::inner`] is `T`.
    Option,
    /// `Map<i64, V>`; [`Shape::inner`] is `V`.
    MapI64,
    /// `Map<String, V>`; [`Shape::inner`] is `V`.
    MapString,
    /// A class; [`Shape::field_count`], [`Shape::field_name`] and [`Shape::field`] describe
    /// its fields in declaration order.
    Class,
    /// An enum; [`Shape::field_count`], [`Shape::field_name`] and [`Shape::field`] describe its
    /// variants in declaration order, a variant's "field" being its payload's type, or `unit`
    /// for a variant without one.
    Enum,
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
    /// The class's or enum's name (only asked of those), which decoding errors spell as the
    /// derive does (`expected struct Person`, `expected enum Role`). The default, an empty name, suits shapes whose decoding errors
    /// nobody reads.
    fn class_name(&self) -> &str {
        ""
    }
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
    /// A map's entries in position order: each key (an `I64` or a `Str`) and its value.
    Map(Vec<(Value, Value)>),
    /// A class's fields, in declaration order.
    Class(Vec<Value>),
    /// An enum's variant (its index) and payload (`Unit` for a variant without one).
    Enum(usize, Box<Value>),
}

impl From<i32> for Value {
    fn from(v: i32) -> Value {
        Value::I32(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::I64(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::F64(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Str(v)
    }
}

/// Decodes `text` as one value of type `shape` (what `rt::json_decode` gives on the Rust path):
/// `None` when the text is not exactly one such value, whitespace around it aside.
pub fn decode<S: Shape>(text: &str, shape: S) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Seed(shape).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// Encodes `value`, of type `shape`, as compact JSON text (what `rt::json_encode` gives for the
/// derived class on the Rust path). The error is the trap's message, `cannot encode JSON: …`,
/// which a value that does not fit its shape gives.
pub fn encode<S: Shape>(value: &Value, shape: S) -> Result<String, String> {
    encode_view(ValueView { value, shape })
}

/// Encodes what `view` sees as compact JSON text; errors as [`encode`]'s.
pub fn encode_view<V: View>(view: V) -> Result<String, String> {
    let mut out = Vec::with_capacity(128);
    write(&view, &mut out)?;
    // SAFETY: `write` appends only whole UTF-8 texts: ASCII punctuation, identifiers, and what
    // serde_json writes for each scalar.
    Ok(unsafe { String::from_utf8_unchecked(out) })
}

/// A scalar as the encoder writes it.
#[derive(Clone, Copy, Debug)]
pub enum Scalar<'a> {
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// An `f64` (non-finite ones are written as `null`, as serde_json does).
    F64(f64),
    /// A `bool`.
    Bool(bool),
    /// `unit`, written as `null`.
    Unit,
    /// A string.
    Str(&'a str),
    /// A `Time`, in microseconds (written as its RFC 3339 text).
    Time(i64),
    /// A `Duration`, in microseconds (written as its text, `"250ms"`).
    Duration(i64),
    /// A `Uuid`'s bytes (written as its canonical text).
    Uuid([u8; 16]),
}

impl Serialize for Scalar<'_> {
    #[inline(always)]
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        match *self {
            Scalar::I32(v) => s.serialize_i32(v),
            Scalar::I64(v) => s.serialize_i64(v),
            Scalar::F64(v) => s.serialize_f64(v),
            Scalar::Bool(v) => s.serialize_bool(v),
            Scalar::Unit => s.serialize_unit(),
            Scalar::Str(v) => s.serialize_str(v),
            Scalar::Time(v) => crate::time::Time::in_range(v).serialize(s),
            Scalar::Duration(v) => crate::time::Duration::from_micros(v).serialize(s),
            Scalar::Uuid(v) => crate::ids::Uuid(v).serialize(s),
        }
    }
}

/// A map's key as the encoder writes it (serde_json writes an integer key as a string).
#[derive(Clone, Copy, Debug)]
pub enum MapKey<'a> {
    /// A `Map<i64, V>`'s key.
    I64(i64),
    /// A `Map<String, V>`'s key.
    Str(&'a str),
}

/// What a [`View`] sees at a value that is not a scalar, by its shape's kind.
pub enum Node<V> {
    /// An array of this many elements ([`View::items`]).
    Array(usize),
    /// A map of this many entries ([`View::entries`]).
    Map(usize),
    /// An option, and its payload when it has one.
    Option(Option<V>),
    /// A class of this many fields ([`View::fields`]), in declaration order.
    Class(usize),
    /// An enum's variant (its index) and its payload (a `unit` for a variant without one).
    Variant(usize, V),
}

/// A value to encode, seen through its shape. The encoder reads values from two places — a
/// [`Value`] tree with its [`Shape`] (the interpreter's host) and emitted memory with its layout
/// descriptor (`cabi::json`, the LLVM path) — and each is one of these, so how each kind of value
/// is written (a class as an object in declaration order, an enum in serde's externally tagged
/// form, an option as its payload or `null`, …) is decided once, in [`write()`].
///
/// The parts of a composite value come as iterators, so that a view finds its array's buffer
/// or its class's field table once per value rather than once per part (the LLVM path encodes
/// every response body through here).
pub trait View: Sized {
    /// The kind of shape the value has.
    type Shape: Shape;
    /// The value's shape.
    fn shape(&self) -> Self::Shape;
    /// The value, when its shape is a scalar's (`i32`, `i64`, `f64`, `bool`, `unit`, `String`)
    /// and it fits it; the encoder asks this first, as it is the common case.
    fn scalar(&self) -> Option<Scalar<'_>>;
    /// What the value is, when [`View::scalar`] gave nothing. Errors: why the value cannot be
    /// encoded (it does not fit its shape), which the encoder reports as `cannot encode JSON: ...`.
    fn node(&self) -> Result<Node<Self>, String>;
    /// The elements of an array (only asked after [`View::node`] said [`Node::Array`]).
    fn items(&self) -> impl Iterator<Item = Self>;
    /// The entries of a map, key and value (only asked after [`Node::Map`]).
    fn entries(&self) -> impl Iterator<Item = (MapKey<'_>, Self)>;
    /// The fields of a class, name and value, in declaration order (only asked after
    /// [`Node::Class`]).
    fn fields(&self) -> impl Iterator<Item = (&str, Self)>;
}

/// A [`Value`] seen through its [`Shape`].
#[derive(Clone, Copy)]
struct ValueView<'a, S> {
    value: &'a Value,
    shape: S,
}

impl<'a, S: Shape> ValueView<'a, S> {
    fn at(&self, value: &'a Value, shape: S) -> ValueView<'a, S> {
        ValueView { value, shape }
    }
}

impl<S: Shape> View for ValueView<'_, S> {
    type Shape = S;

    fn shape(&self) -> S {
        self.shape
    }

    fn scalar(&self) -> Option<Scalar<'_>> {
        Some(match (self.shape.kind(), self.value) {
            (Kind::I32, Value::I32(v)) => Scalar::I32(*v),
            (Kind::I64, Value::I64(v)) => Scalar::I64(*v),
            (Kind::F64, Value::F64(v)) => Scalar::F64(*v),
            (Kind::Bool, Value::Bool(v)) => Scalar::Bool(*v),
            (Kind::Unit, Value::Unit) => Scalar::Unit,
            (Kind::String, Value::Str(v)) => Scalar::Str(v),
            (Kind::Time, Value::I64(v)) => Scalar::Time(*v),
            (Kind::Duration, Value::I64(v)) => Scalar::Duration(*v),
            (Kind::Uuid, Value::Str(v)) => Scalar::Str(v),
            _ => return None,
        })
    }

    fn node(&self) -> Result<Node<Self>, String> {
        let shape = self.shape;
        Ok(match (shape.kind(), self.value) {
            (Kind::Array, Value::Array(items)) => Node::Array(items.len()),
            (Kind::MapI64, Value::Map(entries)) if entries.iter().all(|(k, _)| matches!(k, Value::I64(_))) => {
                Node::Map(entries.len())
            }
            (Kind::MapString, Value::Map(entries)) if entries.iter().all(|(k, _)| matches!(k, Value::Str(_))) => {
                Node::Map(entries.len())
            }
            (Kind::MapI64 | Kind::MapString, Value::Map(_)) => {
                return Err("a map key that is not an i64 or a string".into());
            }
            (Kind::Option, Value::Option(payload)) => {
                Node::Option(payload.as_deref().map(|v| self.at(v, shape.inner())))
            }
            (Kind::Class, Value::Class(fields)) if fields.len() == shape.field_count() => Node::Class(fields.len()),
            (Kind::Enum, Value::Enum(i, payload)) if *i < shape.field_count() => {
                Node::Variant(*i, self.at(payload, shape.field(*i)))
            }
            (kind, _) => return Err(format!("a value that is not a {kind:?}")),
        })
    }

    fn items(&self) -> impl Iterator<Item = Self> {
        let items = match self.value {
            Value::Array(items) => items.as_slice(),
            _ => &[],
        };
        items.iter().map(|v| self.at(v, self.shape.inner()))
    }

    fn entries(&self) -> impl Iterator<Item = (MapKey<'_>, Self)> {
        let entries = match self.value {
            Value::Map(entries) => entries.as_slice(),
            _ => &[],
        };
        entries.iter().map(|(key, value)| {
            let key = match key {
                Value::I64(key) => MapKey::I64(*key),
                Value::Str(key) => MapKey::Str(key),
                _ => unreachable!("`node` checked every key"),
            };
            (key, self.at(value, self.shape.inner()))
        })
    }

    fn fields(&self) -> impl Iterator<Item = (&str, Self)> {
        let fields = match self.value {
            Value::Class(fields) => fields.as_slice(),
            _ => &[],
        };
        fields.iter().enumerate().map(|(i, v)| (self.shape.field_name(i), self.at(v, self.shape.field(i))))
    }
}

/// Decodes one value of the described type from any serde deserializer. It fails exactly where
/// and how serde's derive fails on the equivalent Rust types (`Vec`, `Option`, the scalars, and a
/// struct per class with `#[derive(Deserialize)] #[serde(deny_unknown_fields)]`): the same error
/// message, raised at the same point of the input, so serde_json reports the same position and
/// `serde_path_to_error` the same path.
#[derive(Clone, Copy)]
pub struct Seed<S>(pub S);

impl<'de, S: Shape> DeserializeSeed<'de> for Seed<S> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        use serde::Deserialize;
        let shape = self.0;
        Ok(match shape.kind() {
            // Through `Objects`, whose integer reads take a whole float (`30.0`) as the Rust
            // path's do.
            Kind::I32 => Value::I32(i32::deserialize(crate::json::Objects(d))?),
            Kind::I64 => Value::I64(i64::deserialize(crate::json::Objects(d))?),
            Kind::F64 => Value::F64(f64::deserialize(d)?),
            Kind::Bool => Value::Bool(bool::deserialize(d)?),
            Kind::Unit => {
                <()>::deserialize(d)?;
                Value::Unit
            }
            Kind::String => Value::Str(String::deserialize(d)?),
            Kind::Time => Value::I64(crate::time::Time::deserialize(d)?.micros()),
            Kind::Duration => Value::I64(crate::time::Duration::deserialize(d)?.micros()),
            Kind::Uuid => Value::Str(crate::ids::Uuid::deserialize(d)?.to_string()),
            Kind::Array => d.deserialize_seq(ArrayVisitor(shape.inner()))?,
            Kind::Option => d.deserialize_option(OptionVisitor(shape.inner()))?,
            Kind::MapI64 | Kind::MapString => d.deserialize_map(MapVisitor(shape))?,
            // A class is a JSON object only: read as a map, a `[` is serde_json's "invalid type:
            // sequence, expected struct X", as the Rust path's `http::objects` makes it there.
            Kind::Class => d.deserialize_map(ClassVisitor(shape))?,
            Kind::Enum => d.deserialize_enum("", &[], EnumVisitor(shape))?,
        })
    }
}

/// The visitor the derive generates for an externally tagged enum.
struct EnumVisitor<S>(S);

impl<'de, S: Shape> Visitor<'de> for EnumVisitor<S> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "enum {}", self.0.class_name())
    }

    /// The variant's name is read as an identifier (an unknown one fails while it is read, as
    /// in the derive); then a variant without a payload takes `unit_variant` (a string, or an
    /// object whose value is `null`) and one with a payload `newtype_variant`.
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        use serde::de::VariantAccess;
        let shape = self.0;
        let (i, variant) = data.variant_seed(FieldSeed(shape, Identifier::Variant))?;
        let payload = shape.field(i);
        if payload.kind() == Kind::Unit {
            variant.unit_variant()?;
            Ok(Value::Enum(i, Box::new(Value::Unit)))
        } else {
            Ok(Value::Enum(i, Box::new(variant.newtype_variant_seed(Seed(payload))?)))
        }
    }
}

/// `Vec<T>`'s visitor, as serde's own.
struct ArrayVisitor<S>(S);

impl<'de, S: Shape> Visitor<'de> for ArrayVisitor<S> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Seed(self.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
}

/// `Map<K, V>`'s visitor, as `indexmap`'s own (the Rust path's map, runtime/src/map.rs): the
/// keys read as `i64`s or strings, a repeated key keeping its first position and its last value.
struct MapVisitor<S>(S);

impl<'de, S: Shape> Visitor<'de> for MapVisitor<S> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: indexmap::IndexMap<Key, Value> = indexmap::IndexMap::new();
        loop {
            let key = match self.0.kind() {
                Kind::MapI64 => map.next_key::<i64>()?.map(Key::I64),
                _ => map.next_key::<String>()?.map(|k| Key::Str(k.into())),
            };
            let Some(key) = key else { break };
            let value = map.next_value_seed(Seed(self.0.inner()))?;
            entries.insert(key, value);
        }
        let entries = entries
            .into_iter()
            .map(|(k, v)| match k {
                Key::I64(k) => (Value::I64(k), v),
                Key::Str(k) => (Value::Str(k.into()), v),
            })
            .collect();
        Ok(Value::Map(entries))
    }
}

/// `Option<T>`'s visitor, as serde's own.
struct OptionVisitor<S>(S);

impl<'de, S: Shape> Visitor<'de> for OptionVisitor<S> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("option")
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

/// The visitor the derive generates for a struct with `deny_unknown_fields`.
struct ClassVisitor<S>(S);

impl<'de, S: Shape> Visitor<'de> for ClassVisitor<S> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "struct {}", self.0.class_name())
    }

    /// The object form: each key is read as a field identifier (an unknown key fails while it is
    /// read, as in the derive, so the error's path names the key); each field at most once; a
    /// missing `Option` field is `None` (the derive's `missing_field` gives `visit_none` to an
    /// option), any other missing field an error.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let shape = self.0;
        let count = shape.field_count();
        let mut values: Vec<Option<Value>> = (0..count).map(|_| None).collect();
        while let Some(i) = map.next_key_seed(FieldSeed(shape, Identifier::Field))? {
            if values[i].is_some() {
                return Err(de::Error::duplicate_field(static_names(shape)[i]));
            }
            values[i] = Some(map.next_value_seed(Seed(shape.field(i)))?);
        }
        let mut out = Vec::with_capacity(count);
        for (i, value) in values.into_iter().enumerate() {
            match (value, shape.field(i).kind()) {
                (Some(v), _) => out.push(v),
                (None, Kind::Option) => out.push(Value::Option(None)),
                (None, _) => return Err(de::Error::missing_field(static_names(shape)[i])),
            }
        }
        Ok(Value::Class(out))
    }
}

/// What an identifier names: a class's field (a key of its object form) or an enum's variant.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identifier {
    /// A class's field (a key of its object form).
    Field,
    /// An enum's variant.
    Variant,
}

impl Identifier {
    fn word(self) -> &'static str {
        match self {
            Identifier::Field => "field",
            Identifier::Variant => "variant",
        }
    }
}

/// A class's key or an enum's variant name, decoded into its index as the derive's `__Field`
/// is.
pub(crate) struct FieldSeed<S>(pub(crate) S, pub(crate) Identifier);

impl<'de, S: Shape> DeserializeSeed<'de> for FieldSeed<S> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_identifier(FieldVisitor(self.0, self.1))
    }
}

/// The derive's `__FieldVisitor` for a struct with `deny_unknown_fields`, or for an enum's
/// variants.
struct FieldVisitor<S>(S, Identifier);

impl<S: Shape> FieldVisitor<S> {
    fn find(&self, key: &[u8]) -> Option<usize> {
        (0..self.0.field_count()).find(|&i| self.0.field_name(i).as_bytes() == key)
    }

    fn unknown<E: de::Error>(&self, name: &str) -> E {
        match self.1 {
            Identifier::Field => E::unknown_field(name, static_names(self.0)),
            Identifier::Variant => E::unknown_variant(name, static_names(self.0)),
        }
    }
}

impl<'de, S: Shape> Visitor<'de> for FieldVisitor<S> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} identifier", self.1.word())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<usize, E> {
        let count = self.0.field_count();
        match usize::try_from(v) {
            Ok(i) if i < count => Ok(i),
            _ => Err(E::invalid_value(Unexpected::Unsigned(v), &IdentifierIndex(self.1, count))),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.find(v.as_bytes()).ok_or_else(|| self.unknown(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<usize, E> {
        self.find(v).ok_or_else(|| self.unknown(&String::from_utf8_lossy(v)))
    }
}

/// What an identifier's index was expected to be: the derive's `field index 0 <= i < N` (or
/// `variant index …`).
struct IdentifierIndex(Identifier, usize);

impl Expected for IdentifierIndex {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} index 0 <= i < {}", self.0.word(), self.1)
    }
}

/// A class's field names (or an enum's variant names) as the `'static` list that serde's error
/// constructors take (`unknown_field`, `missing_field`, `duplicate_field`, `unknown_variant`),
/// so errors are built by serde itself,
/// exactly as the derive builds them from its `FIELDS` constant.
///
/// Each distinct list is leaked once and kept for the process, so the memory is bounded by the
/// classes the program decodes; only failing decodes ask for it.
pub(crate) fn static_names<S: Shape>(shape: S) -> &'static [&'static str] {
    static INTERNED: Mutex<BTreeMap<Vec<String>, &'static [&'static str]>> = Mutex::new(BTreeMap::new());
    let names: Vec<String> = (0..shape.field_count()).map(|i| shape.field_name(i).to_owned()).collect();
    let mut interned = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = interned.get(&names) {
        return found;
    }
    let leaked: Vec<&'static str> = names.iter().map(|name| &*Box::leak(name.clone().into_boxed_str())).collect();
    let leaked: &'static [&'static str] = Box::leak(leaked.into_boxed_slice());
    interned.insert(names, leaked);
    leaked
}

mod write;

pub use write::write;

#[cfg(test)]
mod tests;
