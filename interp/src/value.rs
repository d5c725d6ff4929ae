//! The interpreter's values, and references as places.
//!
//! Values follow Nagi's mutable value semantics directly: a string, an array or an object owns
//! its contents, so `clone` is Rust's `Clone` and `move` takes the value out of its local. A
//! reference is not a pointer but a [`Place`]: a local of some frame and the path of field and
//! element projections from it. References are second-class in Low (docs/design.md §4): they
//! live only in locals and parameters, never inside another value, and never outlive the frame
//! they point into, so a place is enough to model `borrow`, `field.ref`, `array.ref`, `load` and
//! `store` soundly, with no aliasing of Rust memory.

use std::rc::Rc;

use indexmap::IndexMap;

use nagi_low::Constant;

/// A Nagi value as the interpreter holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// No value: a local not assigned yet, or moved out, or dropped. Verified Low never reads
    /// one.
    Unset,
    /// `unit`.
    Unit,
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// An `f64`.
    F64(f64),
    /// A `bool`.
    Bool(bool),
    /// An owned `String`.
    Str(String),
    /// An owned array.
    Array(Vec<Value>),
    /// An `Option`.
    Option(Option<Box<Value>>),
    /// An object of a class: its fields in declaration order (the class is known from the
    /// types, so it is not stored).
    Object(Vec<Value>),
    /// A value of an enum: the variant's index and its payload (`Unit` for a variant without
    /// one; the enum is known from the types).
    Enum(u32, Box<Value>),
    /// A map: per key, the key as a value (so that `map.key_ref` can lend it) and the value, in
    /// insertion order, with `indexmap`'s rules as the runtime's `Map` has them.
    Map(IndexMap<MapKey, (Value, Value)>),
    /// A reference (`&T` or `&mut T`) to a place.
    Ref(Rc<Place>),
}

/// A map key as the interpreter hashes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MapKey {
    /// An `i64` key.
    I64(i64),
    /// A `String` key.
    Str(String),
}

impl MapKey {
    /// The key a value is, if it is an `i64` or a string.
    pub fn of(value: &Value) -> Option<MapKey> {
        match value {
            Value::I64(v) => Some(MapKey::I64(*v)),
            Value::Str(s) => Some(MapKey::Str(s.clone())),
            _ => None,
        }
    }
}

/// Where a reference points: a local of a frame, then fields and elements inside it. The root
/// local never holds a reference itself (a reborrow takes the place of the reference it reads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The frame's position on the call stack, 0 for `$main`.
    pub(crate) frame: usize,
    /// The local's index in that frame.
    pub(crate) local: usize,
    /// Projections from the local, outermost first.
    pub(crate) path: Vec<Proj>,
}

/// One step from a value into a part of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Proj {
    /// A field of an object, by declaration position.
    Field(usize),
    /// An element of an array, already checked against the length when the reference was made.
    Index(usize),
    /// The payload of an enum value, whose variant was checked when the reference was made.
    Payload,
    /// The key (`false`) or the value (`true`) of a map's entry at a position, checked against
    /// the length when the reference was made.
    Entry(usize, bool),
}

impl Place {
    /// This place, one projection further.
    pub(crate) fn then(&self, proj: Proj) -> Place {
        let mut path = Vec::with_capacity(self.path.len() + 1);
        path.extend_from_slice(&self.path);
        path.push(proj);
        Place { frame: self.frame, local: self.local, path }
    }
}

impl Value {
    /// The value of a constant operand.
    pub fn constant(c: &Constant) -> Value {
        match *c {
            Constant::I32(v) => Value::I32(v),
            Constant::I64(v) => Value::I64(v),
            Constant::F64(v) => Value::F64(v),
            Constant::Bool(v) => Value::Bool(v),
            Constant::Unit => Value::Unit,
        }
    }

    /// The part of this value that `proj` names, if it has one.
    pub(crate) fn project(&self, proj: Proj) -> Option<&Value> {
        match (self, proj) {
            (Value::Object(fields), Proj::Field(i)) => fields.get(i),
            (Value::Array(items), Proj::Index(i)) => items.get(i),
            (Value::Enum(_, payload), Proj::Payload) => Some(payload),
            (Value::Map(entries), Proj::Entry(i, value)) => {
                entries.get_index(i).map(|(_, (k, v))| if value { v } else { k })
            }
            _ => None,
        }
    }

    /// The part of this value that `proj` names, for writing.
    pub(crate) fn project_mut(&mut self, proj: Proj) -> Option<&mut Value> {
        match (self, proj) {
            (Value::Object(fields), Proj::Field(i)) => fields.get_mut(i),
            (Value::Array(items), Proj::Index(i)) => items.get_mut(i),
            (Value::Enum(_, payload), Proj::Payload) => Some(payload),
            (Value::Map(entries), Proj::Entry(i, true)) => entries.get_index_mut(i).map(|(_, (_, v))| v),
            _ => None,
        }
    }

    /// A short name of what this value is, for fault messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Unset => "no value",
            Value::Unit => "unit",
            Value::I32(_) => "an i32",
            Value::I64(_) => "an i64",
            Value::F64(_) => "an f64",
            Value::Bool(_) => "a bool",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
            Value::Option(_) => "an option",
            Value::Object(_) => "an object",
            Value::Enum(..) => "an enum value",
            Value::Map(_) => "a map",
            Value::Ref(_) => "a reference",
        }
    }
}
