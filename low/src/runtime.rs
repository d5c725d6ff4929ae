//! The runtime interface: every runtime function Low may call, in one table.
//!
//! The verifier checks `rtcall` operations against this table, and both emitters read it to
//! know what to call. Adding a runtime capability means adding a row to
//! [`RUNTIME_FUNCTIONS`] (and its implementation in `nagi-runtime`); nothing else lists them.
//!
//! Runtime functions never consume their arguments: a string or class argument is passed as a
//! reference, scalars by value.

use crate::types::Type;

/// A parameter or result type in a runtime signature. Generic rows take one class argument,
/// written `name<Class>` in Low, which `ClassRef`, `Class`, `ClassArray` and `ClassOption`
/// refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtType {
    I32,
    I64,
    F64,
    Bool,
    Unit,
    /// `&str`.
    Str,
    /// An owned `String`.
    String,
    /// `&C` for the class argument `C`.
    ClassRef,
    /// `C`, owned.
    Class,
    /// `[C]`, owned.
    ClassArray,
    /// `Option<C>`, owned.
    ClassOption,
    /// A value bound to a SQL `?` placeholder: `i32`, `i64`, `f64`, `bool`, `&str`, an
    /// `Option` of a scalar, or `&Option<String>`. `None` binds SQL `NULL`.
    SqlValue,
}

impl RtType {
    /// The concrete Low type, given the call's class argument; `None` for [`RtType::SqlValue`],
    /// which is a set of types (see [`RtType::accepts`]).
    pub fn to_type(self, class: Option<&Type>) -> Option<Type> {
        let class = || class.cloned();
        Some(match self {
            RtType::I32 => Type::I32,
            RtType::I64 => Type::I64,
            RtType::F64 => Type::F64,
            RtType::Bool => Type::Bool,
            RtType::Unit => Type::Unit,
            RtType::Str => Type::reference(false, Type::String),
            RtType::String => Type::String,
            RtType::ClassRef => Type::reference(false, class()?),
            RtType::Class => class()?,
            RtType::ClassArray => Type::Array(Box::new(class()?)),
            RtType::ClassOption => Type::Option(Box::new(class()?)),
            RtType::SqlValue => return None,
        })
    }

    /// Whether an argument of type `ty` may be passed for this parameter.
    pub fn accepts(self, ty: &Type, class: Option<&Type>) -> bool {
        match self {
            RtType::SqlValue => is_sql_value(ty),
            other => other.to_type(class).as_ref() == Some(ty),
        }
    }
}

fn is_sql_value(ty: &Type) -> bool {
    match ty {
        Type::I32 | Type::I64 | Type::F64 | Type::Bool => true,
        Type::Option(inner) => matches!(**inner, Type::I32 | Type::I64 | Type::F64 | Type::Bool),
        Type::Ref { mutable: false, pointee } => match &**pointee {
            Type::String => true,
            Type::Option(inner) => **inner == Type::String,
            _ => false,
        },
        _ => false,
    }
}

/// One row of the runtime interface.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeFnData {
    /// The Low spelling, e.g. `db.query_one`.
    pub name: &'static str,
    /// Whether the row takes a class argument (`name<Class>`).
    pub generic: bool,
    /// Fixed parameters.
    pub params: &'static [RtType],
    /// The type of any further arguments, for variadic rows.
    pub variadic: Option<RtType>,
    /// The result.
    pub ret: RtType,
    /// Whether calls must be awaited (and so appear only in async functions).
    pub is_async: bool,
    /// What the function does, for `docs/low.md` and emitter authors.
    pub doc: &'static str,
}

/// A runtime function: an index into [`RUNTIME_FUNCTIONS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuntimeFn(u16);

impl RuntimeFn {
    /// The function spelled `name`, if the table has it.
    pub fn from_name(name: &str) -> Option<RuntimeFn> {
        RUNTIME_FUNCTIONS.iter().position(|r| r.name == name).map(|i| RuntimeFn(i as u16))
    }

    /// Its row of the table.
    pub fn data(self) -> &'static RuntimeFnData {
        &RUNTIME_FUNCTIONS[self.0 as usize]
    }

    /// Its Low spelling.
    pub fn name(self) -> &'static str {
        self.data().name
    }

    /// Every runtime function, in table order.
    pub fn all() -> impl Iterator<Item = RuntimeFn> {
        (0..RUNTIME_FUNCTIONS.len()).map(|i| RuntimeFn(i as u16))
    }
}

const fn row(
    name: &'static str,
    generic: bool,
    params: &'static [RtType],
    variadic: Option<RtType>,
    ret: RtType,
    is_async: bool,
    doc: &'static str,
) -> RuntimeFnData {
    RuntimeFnData { name, generic, params, variadic, ret, is_async, doc }
}

use RtType::*;

/// The runtime interface. Keep rows grouped by capability; the order is the `RuntimeFn`
/// numbering, which only the in-memory model sees (Low text names functions).
pub static RUNTIME_FUNCTIONS: &[RuntimeFnData] = &[
    // Printing to standard output, one value and a newline per call. `f64` is written as
    // Rust's `{:?}` writes it (`1.0`, `-0.0`, `NaN`, `inf`, `1e21`).
    row("print.i32", false, &[I32], None, Unit, false, "Prints an i32 and a newline."),
    row("print.i64", false, &[I64], None, Unit, false, "Prints an i64 and a newline."),
    row("print.f64", false, &[F64], None, Unit, false, "Prints an f64 as Rust's `{:?}` does, and a newline."),
    row("print.bool", false, &[Bool], None, Unit, false, "Prints `true` or `false` and a newline."),
    row("print.str", false, &[Str], None, Unit, false, "Prints a string and a newline."),
    // Formatting values as new strings, with the same spellings as printing.
    row("fmt.i32", false, &[I32], None, String, false, "Formats an i32 in decimal."),
    row("fmt.i64", false, &[I64], None, String, false, "Formats an i64 in decimal."),
    row("fmt.f64", false, &[F64], None, String, false, "Formats an f64 as Rust's `{:?}` does."),
    row("fmt.bool", false, &[Bool], None, String, false, "Formats `true` or `false`."),
    // Typed JSON, straight between text and a class (serde, no intermediate tree).
    row("json.encode", true, &[ClassRef], None, String, false, "Encodes a class value as a JSON object."),
    row(
        "json.decode",
        true,
        &[Str],
        None,
        ClassOption,
        false,
        "Decodes a JSON object into a class value; none when the text is not exactly one valid object of the class.",
    ),
    // SQLite through the runtime's database thread. Statements take `?` placeholders whose
    // values are the variadic arguments, always bound, never spliced into the SQL text.
    row(
        "db.exec",
        false,
        &[Str],
        Some(SqlValue),
        I64,
        true,
        "Runs a statement; the result is the number of rows changed.",
    ),
    row("db.query", true, &[Str], Some(SqlValue), ClassArray, true, "Runs a query; every row decodes into the class."),
    row(
        "db.query_one",
        true,
        &[Str],
        Some(SqlValue),
        ClassOption,
        true,
        "Runs a query; its first row, if any, decodes into the class.",
    ),
    row("db.begin", false, &[], None, Unit, true, "Begins an IMMEDIATE transaction."),
    row("db.commit", false, &[], None, Unit, true, "Commits the open transaction."),
    row("db.rollback", false, &[], None, Unit, true, "Rolls the open transaction back."),
];

/// The SQLite column declaration for a field of type `ty`, following the runtime's
/// column-type mapping: `String` → `TEXT`, `i32`/`i64`/`bool` → `INTEGER`, `f64` → `REAL`; an
/// `Option` is nullable and everything else is `NOT NULL`. `None` for types no column holds
/// (arrays, classes, references).
pub fn sql_column_type(ty: &Type) -> Option<std::string::String> {
    let (base, nullable) = match ty {
        Type::Option(inner) => (&**inner, true),
        other => (other, false),
    };
    let sql = match base {
        Type::String => "TEXT",
        Type::I32 | Type::I64 | Type::Bool => "INTEGER",
        Type::F64 => "REAL",
        _ => return None,
    };
    Some(if nullable { sql.to_string() } else { format!("{sql} NOT NULL") })
}

/// The `CREATE TABLE IF NOT EXISTS` statement for a table of `fields` keyed by `key`, names
/// quoted. The runtime runs it at start; the High checker runs it on an in-memory database to
/// prepare the program's SQL against the same schema.
pub fn create_table_sql<'a>(
    table: &str,
    fields: impl IntoIterator<Item = (&'a str, &'a Type)>,
    key: &str,
) -> std::string::String {
    let mut columns: Vec<std::string::String> =
        fields.into_iter().filter_map(|(name, ty)| sql_column_type(ty).map(|t| format!("\"{name}\" {t}"))).collect();
    columns.push(format!("PRIMARY KEY (\"{key}\")"));
    format!("CREATE TABLE IF NOT EXISTS \"{table}\" ({})", columns.join(", "))
}
