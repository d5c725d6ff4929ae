//! Low's types, its scalar operation types, and its constants.
//!
//! Text spellings (the printer and the parser both go through [`TypeDisplay`] and
//! `parser::parse_type`): `i32 i64 f64 bool unit String`, `[T]` (owned array), `Option<T>`,
//! class names, and references `&T` / `&mut T`. A reference to a `String` is spelled `&str` /
//! `&mut str`, and a reference to an array `&[T]` / `&mut [T]`, as in Rust. `Map<K, V>` is a
//! map with `i64` or `String` keys; `Scope` and `Task<T>` are the handles of structured
//! concurrency (docs/low.md §8.1), `Actor<C>` an actor's (§8.2) and `Defer` a deferred call's
//! (§8.4). `&mut [T]` is a
//! mutable borrow of the whole owned array, so it may also grow (`array.push`); Rust code sees
//! it as `&mut Vec<T>`.

use std::fmt;

use crate::entities::{ArenaGet, ClassId, EnumId};
use crate::module::Module;

/// A Low type. Types are trees; class types name a class of the enclosing module by id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// 32-bit two's-complement integer.
    I32,
    /// 64-bit two's-complement integer.
    I64,
    /// IEEE 754 binary64.
    F64,
    /// `true` or `false`.
    Bool,
    /// The type of functions and operations that produce nothing.
    Unit,
    /// Owned UTF-8 text.
    String,
    /// `Time`: an instant in UTC, microseconds since 1970-01-01T00:00:00Z within years
    /// 0000–9999 (docs/low.md, "Time"). A copy type laid out as an `i64`.
    Time,
    /// `Duration`: a signed number of microseconds. A copy type laid out as an `i64`.
    Duration,
    /// `Uuid`: 128 bits, a copy type laid out as 16 bytes in the UUID's byte order (docs/low.md,
    /// "Ids"), 8-aligned.
    Uuid,
    /// Owned, growable array `[T]`.
    Array(Box<Type>),
    /// `Option<T>`: a `T` or nothing.
    Option(Box<Type>),
    /// `Map<K, V>`: an owned map from keys `K` (`i64` or `String`) to values `V`, in insertion
    /// order (docs/low.md, "Maps").
    Map(Box<Type>, Box<Type>),
    /// `Scope`: the owner of the tasks spawned in it (docs/low.md §8.1). Only a local of an
    /// async function has this type; dropping it cancels its tasks.
    Scope,
    /// `Task<T>`: the handle of a task spawned in a scope, which gives its `T` once
    /// (`task.join`). Only a local of an async function has this type; dropping it detaches
    /// the task, which its scope still waits for.
    Task(Box<Type>),
    /// `Actor<C>`: a handle of an actor whose state is the class `C` (docs/low.md §8.2), which
    /// `actor.call` and `actor.send` send messages to. Cloning it gives another handle of the
    /// same actor; the actor stops once every handle is dropped and its mailbox is empty.
    Actor(ClassId),
    /// `Defer`: a deferred call (docs/low.md §8.4), made by `defer.new`, which calls its function
    /// when it is dropped. Only ever the whole type of a local: nothing holds one, no function
    /// takes or returns one, and it is never cloned.
    Defer,
    /// A class of the module, owned by value.
    Class(ClassId),
    /// An enum of the module, owned by value. Enums move like classes, whatever their payloads.
    Enum(EnumId),
    /// A borrow of an owned value: `&T` (shared) or `&mut T` (exclusive). References are
    /// second-class (docs/design.md §4): no class field, array element, option payload or
    /// return value holds one.
    Ref { mutable: bool, pointee: Box<Type> },
}

impl Type {
    /// A shared or exclusive reference to `pointee`.
    pub fn reference(mutable: bool, pointee: Type) -> Type {
        Type::Ref { mutable, pointee: Box::new(pointee) }
    }

    /// Whether values of this type are copied rather than moved when used: scalars, `unit`,
    /// references (a reference is reborrowed at each use; exclusivity is checked at call
    /// sites), and options of copy types. Enums are never copy types, even without payloads,
    /// so that whether a type is copy needs no module.
    pub fn is_copy(&self) -> bool {
        match self {
            Type::I32
            | Type::I64
            | Type::F64
            | Type::Bool
            | Type::Unit
            | Type::Time
            | Type::Duration
            | Type::Uuid
            | Type::Ref { .. } => true,
            Type::Option(inner) => inner.is_copy(),
            Type::String
            | Type::Array(_)
            | Type::Map(..)
            | Type::Scope
            | Type::Task(_)
            | Type::Actor(_)
            | Type::Defer
            | Type::Class(_)
            | Type::Enum(_) => false,
        }
    }

    /// Whether a value of this type owns heap memory, which dropping it frees and cloning it
    /// copies: a `String`, an array, or an option, class or enum that holds one by value. References
    /// own nothing. Classes are looked up in `module` (an id out of range owns nothing); the
    /// walk uses a stack and visits each class and enum once, so recursive types (through
    /// arrays) and deep types end without recursion.
    pub fn owns_heap(&self, module: &Module) -> bool {
        let mut seen: Vec<ClassId> = Vec::new();
        let mut seen_enums: Vec<EnumId> = Vec::new();
        let mut stack = vec![self];
        while let Some(t) = stack.pop() {
            match t {
                Type::String
                | Type::Array(_)
                | Type::Map(..)
                | Type::Scope
                | Type::Task(_)
                | Type::Actor(_)
                | Type::Defer => {
                    return true;
                }
                Type::Option(inner) => stack.push(inner),
                Type::Class(c) => {
                    if !seen.contains(c)
                        && let Some(class) = module.classes.get(*c)
                    {
                        seen.push(*c);
                        stack.extend(class.fields.iter().map(|f| &f.ty));
                    }
                }
                Type::Enum(e) => {
                    if !seen_enums.contains(e)
                        && let Some(data) = module.enums.get(*e)
                    {
                        seen_enums.push(*e);
                        stack.extend(data.variants.iter().filter_map(|v| v.payload.as_ref()));
                    }
                }
                Type::I32
                | Type::I64
                | Type::F64
                | Type::Bool
                | Type::Unit
                | Type::Time
                | Type::Duration
                | Type::Uuid
                | Type::Ref { .. } => {}
            }
        }
        false
    }

    /// Whether this type is a task's: a [`Type::Scope`] or a [`Type::Task`], which only locals
    /// of async functions may have (nothing holds one, and no function takes or returns one).
    pub fn is_task_handle(&self) -> bool {
        matches!(self, Type::Scope | Type::Task(_))
    }

    /// Whether this type is a reference.
    pub fn is_ref(&self) -> bool {
        matches!(self, Type::Ref { .. })
    }

    /// Whether a reference occurs anywhere inside this type, including at its root.
    pub fn contains_ref(&self) -> bool {
        match self {
            Type::Ref { .. } => true,
            Type::Array(t) | Type::Option(t) | Type::Task(t) => t.contains_ref(),
            Type::Map(k, v) => k.contains_ref() || v.contains_ref(),
            _ => false,
        }
    }

    /// The type a value of this type has after looking through one reference, and whether
    /// that look went through a `&mut`. Owned values answer themselves and `true` (their
    /// owner may mutate them).
    pub fn through_ref(&self) -> (&Type, bool) {
        match self {
            Type::Ref { mutable, pointee } => (pointee, *mutable),
            other => (other, true),
        }
    }

    /// The scalar type this type is, if it is one.
    pub fn as_scalar(&self) -> Option<ScalarType> {
        match self {
            Type::I32 => Some(ScalarType::I32),
            Type::I64 => Some(ScalarType::I64),
            Type::F64 => Some(ScalarType::F64),
            Type::Bool => Some(ScalarType::Bool),
            _ => None,
        }
    }

    /// Displays the type with class names resolved against `module`.
    pub fn display<'a>(&'a self, module: &'a Module) -> TypeDisplay<'a> {
        TypeDisplay { ty: self, module }
    }
}

/// A [`Type`] together with the module that names its classes; implements `Display` with the
/// canonical text spelling.
pub struct TypeDisplay<'a> {
    ty: &'a Type,
    module: &'a Module,
}

impl fmt::Display for TypeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.module;
        match self.ty {
            Type::I32 => f.write_str("i32"),
            Type::I64 => f.write_str("i64"),
            Type::F64 => f.write_str("f64"),
            Type::Bool => f.write_str("bool"),
            Type::Unit => f.write_str("unit"),
            Type::String => f.write_str("String"),
            Type::Array(t) => write!(f, "[{}]", t.display(m)),
            Type::Option(t) => write!(f, "Option<{}>", t.display(m)),
            Type::Map(k, v) => write!(f, "Map<{}, {}>", k.display(m), v.display(m)),
            Type::Scope => f.write_str("Scope"),
            Type::Defer => f.write_str("Defer"),
            Type::Time => f.write_str("Time"),
            Type::Duration => f.write_str("Duration"),
            Type::Uuid => f.write_str("Uuid"),
            Type::Task(t) => write!(f, "Task<{}>", t.display(m)),
            Type::Actor(c) => match m.classes.get(*c) {
                Some(class) => write!(f, "Actor<{}>", class.name),
                None => write!(f, "Actor<<class #{}>>", c.into_raw()),
            },
            Type::Class(c) => match m.classes.get(*c) {
                Some(class) => f.write_str(&class.name),
                None => write!(f, "<class #{}>", c.into_raw()),
            },
            Type::Enum(e) => match m.enums.get(*e) {
                Some(data) => f.write_str(&data.name),
                None => write!(f, "<enum #{}>", e.into_raw()),
            },
            Type::Ref { mutable, pointee } => {
                f.write_str(if *mutable { "&mut " } else { "&" })?;
                match &**pointee {
                    Type::String => f.write_str("str"),
                    Type::Array(t) => write!(f, "[{}]", t.display(m)),
                    other => write!(f, "{}", other.display(m)),
                }
            }
        }
    }
}

/// The type an arithmetic, bitwise, comparison or cast operation works at; printed as the
/// operation's suffix (`add.i64`, `lt.f64`, `cast.i32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    I32,
    I64,
    F64,
    Bool,
}

impl ScalarType {
    /// All scalar types, in suffix-table order.
    pub const ALL: [ScalarType; 4] = [ScalarType::I32, ScalarType::I64, ScalarType::F64, ScalarType::Bool];

    /// The suffix spelling: `i32`, `i64`, `f64` or `bool`.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::F64 => "f64",
            ScalarType::Bool => "bool",
        }
    }

    /// The scalar type spelled `name`, if any.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The full [`Type`] of this scalar.
    pub fn to_type(self) -> Type {
        match self {
            ScalarType::I32 => Type::I32,
            ScalarType::I64 => Type::I64,
            ScalarType::F64 => Type::F64,
            ScalarType::Bool => Type::Bool,
        }
    }

    /// Whether this is `i32` or `i64`.
    pub fn is_int(self) -> bool {
        matches!(self, ScalarType::I32 | ScalarType::I64)
    }
}

/// A constant operand. Every constant carries its type in the text (`5_i64`, `-1_i32`,
/// `0.5_f64`, `NaN_f64`, `true`, `unit`), so nothing is inferred when Low is parsed.
#[derive(Clone, Copy, Debug)]
pub enum Constant {
    I32(i32),
    I64(i64),
    /// A binary64 value. Equality compares bit patterns, so `NaN == NaN` structurally and
    /// `0.0 != -0.0`; the text keeps the value exactly (shortest round-trip digits).
    F64(f64),
    Bool(bool),
    Unit,
}

impl PartialEq for Constant {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Constant::I32(a), Constant::I32(b)) => a == b,
            (Constant::I64(a), Constant::I64(b)) => a == b,
            (Constant::F64(a), Constant::F64(b)) => a.to_bits() == b.to_bits(),
            (Constant::Bool(a), Constant::Bool(b)) => a == b,
            (Constant::Unit, Constant::Unit) => true,
            _ => false,
        }
    }
}

impl Eq for Constant {}

impl Constant {
    /// The type of this constant.
    pub fn ty(&self) -> Type {
        match self {
            Constant::I32(_) => Type::I32,
            Constant::I64(_) => Type::I64,
            Constant::F64(_) => Type::F64,
            Constant::Bool(_) => Type::Bool,
            Constant::Unit => Type::Unit,
        }
    }
}

impl fmt::Display for Constant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constant::I32(v) => write!(f, "{v}_i32"),
            Constant::I64(v) => write!(f, "{v}_i64"),
            // `{:?}` is Rust's shortest round-trip form (`1.0`, `1e21`, `NaN`, `-inf`), which
            // `str::parse::<f64>` reads back to the same bits (NaN payloads excepted).
            Constant::F64(v) => write!(f, "{v:?}_f64"),
            Constant::Bool(v) => write!(f, "{v}"),
            Constant::Unit => f.write_str("unit"),
        }
    }
}
