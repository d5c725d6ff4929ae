//! Decoding rows straight into generated classes, with strict type and range checks, from
//! either engine.
//!
//! SQLite stores each value with its own type (NULL, INTEGER, REAL, TEXT, BLOB) whatever the column
//! was declared as, so every accessor checks what it finds: an INTEGER too large for an `i32`, a
//! NULL for a non-option, a TEXT or REAL where an integer belongs, or a TEXT where a float belongs
//! is a [`RowError`] naming the column, never a silent 0 or a wrapped value. A PostgreSQL row is
//! first read into the same [`Cell`]s (`db/postgres/values.rs`), so one set of checks serves both
//! engines.

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
    source: Source<'a>,
    /// The bytes of the texts read so far, which the memory budget counts (`db/thread.rs`):
    /// counted here, where the text is read anyway, because reading each value a second time
    /// to size it cost about a tenth of `GET /users?limit=100` (bench/README.md).
    text_bytes: std::cell::Cell<usize>,
}

/// Where a [`Row`]'s values come from.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// A SQLite row, read in place.
    Sqlite(&'a rusqlite::Row<'a>),
    /// A row already read into cells (PostgreSQL's), by column index.
    Cells(&'a [Cell<'a>]),
}

/// One value of a row as the accessors see it: SQLite's storage classes, and the two typed
/// values PostgreSQL has that SQLite keeps as TEXT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Cell<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'a [u8]),
    Blob,
    /// A `timestamp with time zone`, in microseconds since 1970.
    Time(i64),
    /// A `uuid`'s bytes.
    Uuid([u8; 16]),
    /// A column of a type no field reads (its PostgreSQL name).
    Other(&'static str),
}

impl<'a> From<ValueRef<'a>> for Cell<'a> {
    #[inline(always)]
    fn from(value: ValueRef<'a>) -> Cell<'a> {
        match value {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(v) => Cell::Integer(v),
            ValueRef::Real(v) => Cell::Real(v),
            ValueRef::Text(bytes) => Cell::Text(bytes),
            ValueRef::Blob(_) => Cell::Blob,
        }
    }
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

/// The name of a value's type for error messages: SQLite's storage class (a PostgreSQL value is
/// named by the class it is read as, or by its own type).
fn type_name(value: &Cell<'_>) -> &'static str {
    match value {
        Cell::Null => "NULL",
        Cell::Integer(_) => "INTEGER",
        Cell::Real(_) => "REAL",
        Cell::Text(_) => "TEXT",
        Cell::Blob => "BLOB",
        Cell::Time(_) => "timestamp with time zone",
        Cell::Uuid(_) => "uuid",
        Cell::Other(name) => name,
    }
}

#[cold]
#[inline(never)]
fn mismatch(column: &str, value: &Cell<'_>, expected: &str) -> RowError {
    match value {
        Cell::Null => RowError::new(column, format!("NULL where {expected} was expected (the field is not optional)")),
        _ => RowError::new(column, format!("{} where {expected} was expected", type_name(value))),
    }
}

// The errors are built out of line, so that what the accessors inline is only the checks.
#[cold]
#[inline(never)]
fn unreadable_column(column: &str, error: rusqlite::Error) -> RowError {
    RowError::new(column, error.to_string())
}

#[cold]
#[inline(never)]
fn no_column(column: &str, index: usize) -> RowError {
    RowError::new(column, format!("the row has no column {index}"))
}

#[cold]
#[inline(never)]
fn out_of_range(column: &str, wide: i64) -> RowError {
    RowError::new(column, format!("INTEGER {wide} is out of range for i32"))
}

#[cold]
#[inline(never)]
fn not_a_bool(column: &str, other: i64) -> RowError {
    RowError::new(column, format!("INTEGER {other} is not a bool (0 or 1)"))
}

#[cold]
#[inline(never)]
fn not_a_time(column: &str, text: &str) -> RowError {
    RowError::new(column, format!("TEXT {text:?} is not an RFC 3339 time"))
}

#[cold]
#[inline(never)]
fn not_utf8(column: &str) -> RowError {
    RowError::new(column, "TEXT that is not valid UTF-8")
}

// The accessors are `#[inline]` so that the generated row decoders (another crate) can inline
// them: a call per field was about a third of decoding a row of three fields (callgrind, `GET
// /users?limit=100`, bench/README.md).
impl<'a> Row<'a> {
    #[inline(always)]
    pub(crate) fn new(inner: &'a rusqlite::Row<'a>) -> Row<'a> {
        Row { source: Source::Sqlite(inner), text_bytes: std::cell::Cell::new(0) }
    }

    /// A row of `cells`, by column index.
    pub(crate) fn of_cells(cells: &'a [Cell<'a>]) -> Row<'a> {
        Row { source: Source::Cells(cells), text_bytes: std::cell::Cell::new(0) }
    }

    /// The bytes of the texts this row's accessors have read.
    pub(crate) fn text_bytes(&self) -> usize {
        self.text_bytes.get()
    }

    #[inline(always)]
    fn value(&self, index: usize, column: &str) -> Result<Cell<'_>, RowError> {
        match self.source {
            Source::Sqlite(row) => row.get_ref(index).map(Cell::from).map_err(|error| unreadable_column(column, error)),
            Source::Cells(cells) => cells.get(index).copied().ok_or_else(|| no_column(column, index)),
        }
    }

    /// Whether the column holds NULL (for the `opt_*` accessors).
    #[inline(always)]
    fn is_null(&self, index: usize, column: &str) -> Result<bool, RowError> {
        Ok(matches!(self.value(index, column)?, Cell::Null))
    }

    /// Reads an INTEGER that fits an `i32`.
    #[inline(always)]
    pub fn i32(&self, index: usize, column: &str) -> Result<i32, RowError> {
        let wide = self.i64(index, column)?;
        i32::try_from(wide).map_err(|_| out_of_range(column, wide))
    }

    /// Reads an INTEGER.
    #[inline(always)]
    pub fn i64(&self, index: usize, column: &str) -> Result<i64, RowError> {
        match self.value(index, column)? {
            Cell::Integer(v) => Ok(v),
            other => Err(mismatch(column, &other, "an INTEGER")),
        }
    }

    /// Reads a REAL, or an INTEGER converted to the nearest `f64` (SQLite itself stores whole
    /// REAL values in REAL columns as integers on disk, so this direction must be accepted).
    #[inline(always)]
    pub fn f64(&self, index: usize, column: &str) -> Result<f64, RowError> {
        match self.value(index, column)? {
            Cell::Real(v) => Ok(v),
            Cell::Integer(v) => Ok(v as f64),
            other => Err(mismatch(column, &other, "a REAL")),
        }
    }

    /// Reads a bool stored as INTEGER 0 or 1; any other integer is an error.
    #[inline(always)]
    pub fn bool(&self, index: usize, column: &str) -> Result<bool, RowError> {
        match self.i64(index, column)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(not_a_bool(column, other)),
        }
    }

    /// Reads a TEXT as an owned `String`; invalid UTF-8 is an error.
    #[inline(always)]
    pub fn string(&self, index: usize, column: &str) -> Result<String, RowError> {
        match self.value(index, column)? {
            Cell::Text(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => {
                    self.text_bytes.set(self.text_bytes.get() + bytes.len());
                    Ok(text.to_owned())
                }
                Err(_) => Err(not_utf8(column)),
            },
            other => Err(mismatch(column, &other, "a TEXT")),
        }
    }

    /// What `read` reads at `index`, or `None` for a NULL: every `opt_*` accessor.
    #[inline(always)]
    fn nullable<T>(
        &self,
        index: usize,
        column: &str,
        read: impl Fn(&Self, usize, &str) -> Result<T, RowError>,
    ) -> Result<Option<T>, RowError> {
        if self.is_null(index, column)? { Ok(None) } else { read(self, index, column).map(Some) }
    }

    /// Reads a `Time` from its RFC 3339 TEXT (any text `time.rs` reads).
    #[inline]
    pub fn time(&self, index: usize, column: &str) -> Result<crate::time::Time, RowError> {
        self.time_micros(index, column).map(crate::time::Time::in_range)
    }

    /// Reads a `Time` as microseconds, for the LLVM path's layout.
    #[inline]
    pub(crate) fn time_micros(&self, index: usize, column: &str) -> Result<i64, RowError> {
        match self.value(index, column)? {
            Cell::Text(bytes) => {
                let text = std::str::from_utf8(bytes).map_err(|_| not_utf8(column))?;
                crate::time::parse_time(text).ok_or_else(|| not_a_time(column, text))
            }
            Cell::Time(micros) => Ok(micros),
            other => Err(mismatch(column, &other, "a TEXT")),
        }
    }

    /// Reads a `Uuid` from its TEXT (any form `ids.rs` reads).
    #[inline]
    pub fn uuid(&self, index: usize, column: &str) -> Result<crate::ids::Uuid, RowError> {
        self.uuid_bytes(index, column).map(crate::ids::Uuid)
    }

    /// Reads a `Uuid` as its bytes, for the LLVM path's layout.
    #[inline]
    pub(crate) fn uuid_bytes(&self, index: usize, column: &str) -> Result<[u8; 16], RowError> {
        match self.value(index, column)? {
            Cell::Text(bytes) => {
                let text = std::str::from_utf8(bytes).map_err(|_| not_utf8(column))?;
                crate::ids::parse(text).ok_or_else(|| RowError::new(column, format!("TEXT {text:?} is not a UUID")))
            }
            Cell::Uuid(bytes) => Ok(bytes),
            other => Err(mismatch(column, &other, "a TEXT")),
        }
    }

    /// Reads a nullable `Uuid`.
    #[inline]
    pub fn opt_uuid(&self, index: usize, column: &str) -> Result<Option<crate::ids::Uuid>, RowError> {
        self.nullable(index, column, Row::uuid)
    }

    /// Reads a `Duration` from an INTEGER of microseconds.
    #[inline]
    pub fn duration(&self, index: usize, column: &str) -> Result<crate::time::Duration, RowError> {
        self.i64(index, column).map(crate::time::Duration::from_micros)
    }

    /// Reads a nullable `Time`.
    #[inline]
    pub fn opt_time(&self, index: usize, column: &str) -> Result<Option<crate::time::Time>, RowError> {
        self.nullable(index, column, Row::time)
    }

    /// Reads a nullable `Duration`.
    #[inline]
    pub fn opt_duration(&self, index: usize, column: &str) -> Result<Option<crate::time::Duration>, RowError> {
        self.nullable(index, column, Row::duration)
    }

    /// Reads a nullable INTEGER that fits an `i32`.
    #[inline(always)]
    pub fn opt_i32(&self, index: usize, column: &str) -> Result<Option<i32>, RowError> {
        self.nullable(index, column, Row::i32)
    }

    /// Reads a nullable INTEGER.
    #[inline(always)]
    pub fn opt_i64(&self, index: usize, column: &str) -> Result<Option<i64>, RowError> {
        self.nullable(index, column, Row::i64)
    }

    /// Reads a nullable REAL (or INTEGER, see [`Row::f64`]).
    #[inline(always)]
    pub fn opt_f64(&self, index: usize, column: &str) -> Result<Option<f64>, RowError> {
        self.nullable(index, column, Row::f64)
    }

    /// Reads a nullable bool (INTEGER 0 or 1).
    #[inline(always)]
    pub fn opt_bool(&self, index: usize, column: &str) -> Result<Option<bool>, RowError> {
        self.nullable(index, column, Row::bool)
    }

    /// Reads a nullable TEXT.
    #[inline(always)]
    pub fn opt_string(&self, index: usize, column: &str) -> Result<Option<String>, RowError> {
        self.nullable(index, column, Row::string)
    }
}

/// Which [`Row`] accessor reads a field: the one the Rust emitter's `FromRow` uses for the
/// field's type (`i32`, `i64`, `f64`, `bool`, `string`, and `opt_*` for an option of one of
/// those). Chosen once per class ([`Accessor::of`], when the LLVM path first queries it), so
/// that decoding a row is one loop over the fields with no look-up of their types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Accessor {
    I32,
    I64,
    F64,
    Bool,
    String,
    /// A `Time`, read from its TEXT into microseconds.
    Time,
    OptTime,
    /// A `Uuid`, read from its TEXT into its bytes.
    Uuid,
    OptUuid,
    OptI32,
    OptI64,
    OptF64,
    OptBool,
    OptString,
}

/// How one field of a class is read: its accessor, its name (the column's, for errors), and
/// what the sink needs to place it (`T`: an offset in the emitted layout, or nothing).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldRead<'a, T> {
    pub(crate) accessor: Accessor,
    pub(crate) name: &'a str,
    pub(crate) place: T,
}

impl Accessor {
    /// The accessor for a field of type `field`, named `name`. A type no column holds is an
    /// error naming the field (the compiler lets no such class be queried).
    pub(crate) fn of<S: Shape>(field: S, name: &str) -> Result<Accessor, RowError> {
        Ok(match field.kind() {
            Kind::I32 => Accessor::I32,
            // A `Duration` is an INTEGER of microseconds, laid out as an `i64`.
            Kind::I64 | Kind::Duration => Accessor::I64,
            Kind::F64 => Accessor::F64,
            Kind::Bool => Accessor::Bool,
            Kind::String => Accessor::String,
            Kind::Time => Accessor::Time,
            Kind::Uuid => Accessor::Uuid,
            Kind::Option => match field.inner().kind() {
                Kind::I32 => Accessor::OptI32,
                Kind::I64 | Kind::Duration => Accessor::OptI64,
                Kind::Time => Accessor::OptTime,
                Kind::Uuid => Accessor::OptUuid,
                Kind::F64 => Accessor::OptF64,
                Kind::Bool => Accessor::OptBool,
                Kind::String => Accessor::OptString,
                kind => return Err(unreadable(name, kind)),
            },
            kind => return Err(unreadable(name, kind)),
        })
    }
}

/// Where [`decode_fields`] puts each field of a row it reads: `place` is the field's, from its
/// [`FieldRead`]. A plain field gives `Some`; an option field gives what its column holds.
pub(crate) trait FieldOut<T> {
    fn i32(&mut self, place: &T, value: Option<i32>);
    fn i64(&mut self, place: &T, value: Option<i64>);
    fn f64(&mut self, place: &T, value: Option<f64>);
    fn bool(&mut self, place: &T, value: Option<bool>);
    fn string(&mut self, place: &T, value: Option<String>);
    fn uuid(&mut self, place: &T, value: Option<[u8; 16]>);
}

/// Reads every field of one row as `fields` (one [`FieldRead`] per field, in order) says, so the checks and
/// messages are the Rust path's `FromRow`'s; `columns[i]` is the column index of field `i`. The
/// LLVM path's `FromRow`, writing straight into the emitted layout (`cabi::db::rows`).
#[inline]
pub(crate) fn decode_fields<T>(
    row: &Row<'_>,
    columns: &[usize],
    fields: &[FieldRead<'_, T>],
    out: &mut impl FieldOut<T>,
) -> Result<(), RowError> {
    for (field, &index) in fields.iter().zip(columns) {
        let (name, place) = (field.name, &field.place);
        match field.accessor {
            Accessor::I32 => out.i32(place, Some(row.i32(index, name)?)),
            Accessor::I64 => out.i64(place, Some(row.i64(index, name)?)),
            Accessor::F64 => out.f64(place, Some(row.f64(index, name)?)),
            Accessor::Bool => out.bool(place, Some(row.bool(index, name)?)),
            Accessor::String => out.string(place, Some(row.string(index, name)?)),
            Accessor::Time => out.i64(place, Some(row.time_micros(index, name)?)),
            Accessor::Uuid => out.uuid(place, Some(row.uuid_bytes(index, name)?)),
            Accessor::OptUuid => {
                let bytes = row.nullable(index, name, Row::uuid_bytes)?;
                out.uuid(place, bytes)
            }
            Accessor::OptTime => {
                let micros = row.nullable(index, name, Row::time_micros)?;
                out.i64(place, micros)
            }
            Accessor::OptI32 => out.i32(place, row.opt_i32(index, name)?),
            Accessor::OptI64 => out.i64(place, row.opt_i64(index, name)?),
            Accessor::OptF64 => out.f64(place, row.opt_f64(index, name)?),
            Accessor::OptBool => out.bool(place, row.opt_bool(index, name)?),
            Accessor::OptString => out.string(place, row.opt_string(index, name)?),
        }
    }
    Ok(())
}

/// Decodes one row into a value of the class `shape` describes (see [`decode_fields`]); for the
/// tests that compare the rule with the Rust path's `FromRow`.
#[cfg(test)]
pub(crate) fn decode_shaped<S: Shape>(row: &Row<'_>, columns: &[usize], shape: S) -> Result<Value, RowError> {
    /// The fields' values in order: plain for a plain field, an option for an option field
    /// (the place is whether the field is an option).
    struct Values(Vec<Value>);
    impl Values {
        fn put(&mut self, optional: bool, value: Option<Value>) {
            self.0.push(if optional { Value::Option(value.map(Box::new)) } else { value.unwrap_or(Value::Unit) });
        }
    }
    impl FieldOut<bool> for Values {
        fn i32(&mut self, optional: &bool, value: Option<i32>) {
            self.put(*optional, value.map(Value::I32));
        }
        fn i64(&mut self, optional: &bool, value: Option<i64>) {
            self.put(*optional, value.map(Value::I64));
        }
        fn f64(&mut self, optional: &bool, value: Option<f64>) {
            self.put(*optional, value.map(Value::F64));
        }
        fn bool(&mut self, optional: &bool, value: Option<bool>) {
            self.put(*optional, value.map(Value::Bool));
        }
        fn string(&mut self, optional: &bool, value: Option<String>) {
            self.put(*optional, value.map(Value::Str));
        }
        fn uuid(&mut self, optional: &bool, value: Option<[u8; 16]>) {
            self.put(*optional, value.map(|bytes| Value::Str(crate::ids::format(bytes))));
        }
    }
    let fields = (0..shape.field_count())
        .map(|i| {
            let (name, field) = (shape.field_name(i), shape.field(i));
            Ok(FieldRead { accessor: Accessor::of(field, name)?, name, place: field.kind() == Kind::Option })
        })
        .collect::<Result<Vec<_>, RowError>>()?;
    let mut out = Values(Vec::with_capacity(fields.len()));
    decode_fields(row, columns, &fields, &mut out)?;
    Ok(Value::Class(out.0))
}

/// A field whose type no column holds (the compiler lets no such class be queried).
#[cold]
fn unreadable(column: &str, kind: Kind) -> RowError {
    RowError::new(column, format!("a field of kind {kind:?} cannot be read from a column"))
}
