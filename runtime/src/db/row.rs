//! Decoding SQLite rows straight into generated classes, with strict type and range checks.
//!
//! SQLite stores each value with its own type (NULL, INTEGER, REAL, TEXT, BLOB) whatever the column
//! was declared as, so every accessor checks what it finds: an INTEGER too large for an `i32`, a
//! NULL for a non-option, a TEXT or REAL where an integer belongs, or a TEXT where a float belongs
//! is a [`RowError`] naming the column, never a silent 0 or a wrapped value.

use std::fmt;

use rusqlite::types::ValueRef;

#[cfg(test)]
use crate::shaped_json::Value;
use crate::shaped_json::{Kind, Shape};

/// Implemented by generated code for each class that rows decode into.
///
/// `COLUMNS` are the class's fields in declaration order, which are also the result-column names
/// the query must produce. The runtime resolves them to the statement's column indices once per
/// prepared statement and passes them as `columns` (so `columns[i]` is the index of `COLUMNS[i]`);
/// `from_row` then reads each field with the matching [`Row`] accessor:
///
/// ```
/// use nagi_runtime::db::{FromRow, Row, RowError};
///
/// struct Person {
///     id: i64,
///     name: String,
///     age: i32,
/// }
///
/// impl FromRow for Person {
///     const COLUMNS: &'static [&'static str] = &["id", "name", "age"];
///
///     fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError> {
///         Ok(Person {
///             id: row.i64(columns[0], "id")?,
///             name: row.string(columns[1], "name")?,
///             age: row.i32(columns[2], "age")?,
///         })
///     }
/// }
/// ```
pub trait FromRow: Sized + Send + 'static {
    /// The result-column names, one per field, in declaration order.
    const COLUMNS: &'static [&'static str];

    /// Decodes one row; `columns[i]` is the column index of `COLUMNS[i]`.
    fn from_row(row: &Row<'_>, columns: &[usize]) -> Result<Self, RowError>;
}

/// A row being decoded: a thin wrapper over `rusqlite::Row` whose accessors check types and ranges.
///
/// Every accessor takes the column index (from the resolved `columns`) and the column's name (for
/// the error message).
pub struct Row<'a> {
    inner: &'a rusqlite::Row<'a>,
}

/// A row that could not be decoded into a class: which column, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    /// The column (field) name.
    pub column: String,
    /// What was wrong, e.g. `INTEGER 3000000000 is out of range for i32`.
    pub message: String,
}

impl RowError {
    /// Builds an error for `column`.
    pub fn new(column: &str, message: impl Into<String>) -> RowError {
        RowError { column: column.to_owned(), message: message.into() }
    }
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column `{}`: {}", self.column, self.message)
    }
}

impl std::error::Error for RowError {}

/// SQLite's name for a value's storage class, for error messages.
fn type_name(value: &ValueRef<'_>) -> &'static str {
    match value {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "INTEGER",
        ValueRef::Real(_) => "REAL",
        ValueRef::Text(_) => "TEXT",
        ValueRef::Blob(_) => "BLOB",
    }
}

fn mismatch(column: &str, value: &ValueRef<'_>, expected: &str) -> RowError {
    match value {
        ValueRef::Null => {
            RowError::new(column, format!("NULL where {expected} was expected (the field is not optional)"))
        }
        _ => RowError::new(column, format!("{} where {expected} was expected", type_name(value))),
    }
}

// The accessors are `#[inline]` so that the generated row decoders (another crate) can inline
// them: a call per field was about a third of decoding a row of three fields (callgrind, `GET
// /users?limit=100`, bench/README.md).
impl<'a> Row<'a> {
    #[inline]
    pub(crate) fn new(inner: &'a rusqlite::Row<'a>) -> Row<'a> {
        Row { inner }
    }

    #[inline]
    fn value(&self, index: usize, column: &str) -> Result<ValueRef<'_>, RowError> {
        self.inner.get_ref(index).map_err(|error| RowError::new(column, error.to_string()))
    }

    /// Whether the column holds NULL (for the `opt_*` accessors).
    #[inline]
    fn is_null(&self, index: usize, column: &str) -> Result<bool, RowError> {
        Ok(matches!(self.value(index, column)?, ValueRef::Null))
    }

    /// Reads an INTEGER that fits an `i32`.
    #[inline]
    pub fn i32(&self, index: usize, column: &str) -> Result<i32, RowError> {
        let wide = self.i64(index, column)?;
        i32::try_from(wide).map_err(|_| RowError::new(column, format!("INTEGER {wide} is out of range for i32")))
    }

    /// Reads an INTEGER.
    #[inline]
    pub fn i64(&self, index: usize, column: &str) -> Result<i64, RowError> {
        match self.value(index, column)? {
            ValueRef::Integer(v) => Ok(v),
            other => Err(mismatch(column, &other, "an INTEGER")),
        }
    }

    /// Reads a REAL, or an INTEGER converted to the nearest `f64` (SQLite itself stores whole
    /// REAL values in REAL columns as integers on disk, so this direction must be accepted).
    #[inline]
    pub fn f64(&self, index: usize, column: &str) -> Result<f64, RowError> {
        match self.value(index, column)? {
            ValueRef::Real(v) => Ok(v),
            ValueRef::Integer(v) => Ok(v as f64),
            other => Err(mismatch(column, &other, "a REAL")),
        }
    }

    /// Reads a bool stored as INTEGER 0 or 1; any other integer is an error.
    #[inline]
    pub fn bool(&self, index: usize, column: &str) -> Result<bool, RowError> {
        match self.i64(index, column)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(RowError::new(column, format!("INTEGER {other} is not a bool (0 or 1)"))),
        }
    }

    /// Reads a TEXT as an owned `String`; invalid UTF-8 is an error.
    #[inline]
    pub fn string(&self, index: usize, column: &str) -> Result<String, RowError> {
        match self.value(index, column)? {
            ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => Ok(text.to_owned()),
                Err(_) => Err(RowError::new(column, "TEXT that is not valid UTF-8")),
            },
            other => Err(mismatch(column, &other, "a TEXT")),
        }
    }

    /// Reads a nullable INTEGER that fits an `i32`.
    #[inline]
    pub fn opt_i32(&self, index: usize, column: &str) -> Result<Option<i32>, RowError> {
        if self.is_null(index, column)? { Ok(None) } else { self.i32(index, column).map(Some) }
    }

    /// Reads a nullable INTEGER.
    #[inline]
    pub fn opt_i64(&self, index: usize, column: &str) -> Result<Option<i64>, RowError> {
        if self.is_null(index, column)? { Ok(None) } else { self.i64(index, column).map(Some) }
    }

    /// Reads a nullable REAL (or INTEGER, see [`Row::f64`]).
    #[inline]
    pub fn opt_f64(&self, index: usize, column: &str) -> Result<Option<f64>, RowError> {
        if self.is_null(index, column)? { Ok(None) } else { self.f64(index, column).map(Some) }
    }

    /// Reads a nullable bool (INTEGER 0 or 1).
    #[inline]
    pub fn opt_bool(&self, index: usize, column: &str) -> Result<Option<bool>, RowError> {
        if self.is_null(index, column)? { Ok(None) } else { self.bool(index, column).map(Some) }
    }

    /// Reads a nullable TEXT.
    #[inline]
    pub fn opt_string(&self, index: usize, column: &str) -> Result<Option<String>, RowError> {
        if self.is_null(index, column)? { Ok(None) } else { self.string(index, column).map(Some) }
    }
}

/// Where [`decode_fields`] puts each field of a row it reads.
pub(crate) trait FieldOut {
    /// Field `i` holds `value`.
    fn i32(&mut self, i: usize, value: Option<i32>);
    fn i64(&mut self, i: usize, value: Option<i64>);
    fn f64(&mut self, i: usize, value: Option<f64>);
    fn bool(&mut self, i: usize, value: Option<bool>);
    fn string(&mut self, i: usize, value: Option<String>);
}

/// Reads every field of the class `shape` describes from one row, each with the accessor the
/// Rust emitter's `FromRow` uses for its type (`i32`, `i64`, `f64`, `bool`, `string`, and
/// `opt_*` for an option of one of those), so the checks and messages are the same; `columns[i]`
/// is the column index of field `i`. A plain field gives `Some`; an option field gives what
/// its column holds. The LLVM path's `FromRow`, writing straight into the emitted layout
/// (`cabi::db::rows`).
pub(crate) fn decode_fields<S: Shape>(
    row: &Row<'_>,
    columns: &[usize],
    shape: S,
    out: &mut impl FieldOut,
) -> Result<(), RowError> {
    for (i, &index) in columns.iter().enumerate().take(shape.field_count()) {
        let name = shape.field_name(i);
        let field = shape.field(i);
        match field.kind() {
            Kind::I32 => out.i32(i, Some(row.i32(index, name)?)),
            Kind::I64 => out.i64(i, Some(row.i64(index, name)?)),
            Kind::F64 => out.f64(i, Some(row.f64(index, name)?)),
            Kind::Bool => out.bool(i, Some(row.bool(index, name)?)),
            Kind::String => out.string(i, Some(row.string(index, name)?)),
            Kind::Option => match field.inner().kind() {
                Kind::I32 => out.i32(i, row.opt_i32(index, name)?),
                Kind::I64 => out.i64(i, row.opt_i64(index, name)?),
                Kind::F64 => out.f64(i, row.opt_f64(index, name)?),
                Kind::Bool => out.bool(i, row.opt_bool(index, name)?),
                Kind::String => out.string(i, row.opt_string(index, name)?),
                kind => return Err(unreadable(name, kind)),
            },
            kind => return Err(unreadable(name, kind)),
        }
    }
    Ok(())
}

/// Decodes one row into a value of the class `shape` describes (see [`decode_fields`]); for the
/// tests that compare the rule with the Rust path's `FromRow`.
#[cfg(test)]
pub(crate) fn decode_shaped<S: Shape>(row: &Row<'_>, columns: &[usize], shape: S) -> Result<Value, RowError> {
    /// A field's value: plain for a plain field, an option for an option field.
    struct Values<S> {
        shape: S,
        values: Vec<Value>,
    }
    impl<S: Shape> Values<S> {
        fn put(&mut self, i: usize, value: Option<Value>) {
            let value = if self.shape.field(i).kind() == Kind::Option {
                Value::Option(value.map(Box::new))
            } else {
                value.unwrap_or(Value::Unit)
            };
            self.values.push(value);
        }
    }
    impl<S: Shape> FieldOut for Values<S> {
        fn i32(&mut self, i: usize, value: Option<i32>) {
            self.put(i, value.map(Value::I32));
        }
        fn i64(&mut self, i: usize, value: Option<i64>) {
            self.put(i, value.map(Value::I64));
        }
        fn f64(&mut self, i: usize, value: Option<f64>) {
            self.put(i, value.map(Value::F64));
        }
        fn bool(&mut self, i: usize, value: Option<bool>) {
            self.put(i, value.map(Value::Bool));
        }
        fn string(&mut self, i: usize, value: Option<String>) {
            self.put(i, value.map(Value::Str));
        }
    }
    let mut out = Values { shape, values: Vec::with_capacity(shape.field_count()) };
    decode_fields(row, columns, shape, &mut out)?;
    Ok(Value::Class(out.values))
}

/// A field whose type no column holds (the compiler lets no such class be queried).
fn unreadable(column: &str, kind: Kind) -> RowError {
    RowError::new(column, format!("a field of kind {kind:?} cannot be read from a column"))
}
