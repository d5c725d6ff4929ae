//! Values across the PostgreSQL wire: a statement's parameters written in the type PostgreSQL
//! inferred for each placeholder, and a row's columns read into the [`Cell`]s every accessor
//! checks (`db/row.rs`), both in the binary format.
//!
//! A program's parameters are SQLite's storage classes ([`SqlValue`]); PostgreSQL types its
//! placeholders from where they stand, so each value is written as that type when it is one
//! of its kind (an INTEGER as `smallint`, `integer`, `bigint`, a `boolean` 0 or 1, or a float;
//! a TEXT as `text`, `timestamp with time zone` or `uuid` from the text the runtime stores on
//! SQLite), and refused with a message naming both types otherwise.

use std::error::Error;

use bytes::{BufMut, BytesMut};
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

use crate::db::SqlValue;
use crate::db::row::Cell;

/// Microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch for timestamps.
const POSTGRES_EPOCH_MICROS: i64 = 946_684_800_000_000;

type Refusal = Box<dyn Error + Sync + Send>;

/// A parameter as PostgreSQL takes it: `SqlValue` written as the placeholder's type.
#[derive(Debug)]
pub(super) struct Param<'a>(pub(super) &'a SqlValue);

fn refuse(value: &SqlValue, ty: &Type) -> Refusal {
    let what = match value {
        SqlValue::Null => "NULL",
        SqlValue::Integer(_) => "an integer",
        SqlValue::Real(_) => "a float",
        SqlValue::Text(_) => "a text",
    };
    format!("{what} cannot be bound where PostgreSQL expects {ty}").into()
}

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Refusal> {
        let value = self.0;
        match (value, ty) {
            (SqlValue::Null, _) => return Ok(IsNull::Yes),
            (SqlValue::Integer(v), &Type::INT8) => out.put_i64(*v),
            (SqlValue::Integer(v), &Type::INT4) => {
                out.put_i32(i32::try_from(*v).map_err(|_| format!("{v} is out of range for integer"))?)
            }
            (SqlValue::Integer(v), &Type::INT2) => {
                out.put_i16(i16::try_from(*v).map_err(|_| format!("{v} is out of range for smallint"))?)
            }
            (SqlValue::Integer(v @ (0 | 1)), &Type::BOOL) => out.put_u8(*v as u8),
            (SqlValue::Integer(v), &Type::FLOAT8) => out.put_f64(*v as f64),
            (SqlValue::Real(v), &Type::FLOAT8) => out.put_f64(*v),
            (SqlValue::Real(v), &Type::FLOAT4) => out.put_f32(*v as f32),
            (SqlValue::Integer(v), &Type::TEXT | &Type::VARCHAR | &Type::UNKNOWN) => {
                out.put_slice(v.to_string().as_bytes())
            }
            (SqlValue::Text(text), &Type::TEXT | &Type::VARCHAR | &Type::BPCHAR | &Type::NAME | &Type::UNKNOWN) => {
                out.put_slice(text.as_bytes())
            }
            (SqlValue::Text(text), &Type::TIMESTAMPTZ | &Type::TIMESTAMP) => {
                let micros =
                    crate::time::parse_time(text).ok_or_else(|| format!("{text:?} is not an RFC 3339 time"))?;
                out.put_i64(micros - POSTGRES_EPOCH_MICROS)
            }
            (SqlValue::Text(text), &Type::UUID) => {
                out.put_slice(&crate::ids::parse(text).ok_or_else(|| format!("{text:?} is not a UUID"))?)
            }
            _ => return Err(refuse(value, ty)),
        }
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column's value read into a [`Cell`].
pub(super) struct Read<'a>(pub(super) Cell<'a>);

impl<'a> FromSql<'a> for Read<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Read<'a>, Refusal> {
        let cell = match *ty {
            Type::INT8 => Cell::Integer(i64::from_sql(ty, raw)?),
            Type::INT4 => Cell::Integer(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT2 => Cell::Integer(i64::from(i16::from_sql(ty, raw)?)),
            Type::BOOL => Cell::Integer(i64::from(bool::from_sql(ty, raw)?)),
            Type::FLOAT8 => Cell::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Cell::Real(f64::from(f32::from_sql(ty, raw)?)),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => Cell::Text(raw),
            Type::TIMESTAMPTZ | Type::TIMESTAMP => Cell::Time(i64::from_sql(&Type::INT8, raw)? + POSTGRES_EPOCH_MICROS),
            Type::UUID => Cell::Uuid(raw.try_into().map_err(|_| "a uuid of other than 16 bytes")?),
            Type::NUMERIC => numeric(raw)?,
            _ => Cell::Other(type_name(ty)),
        };
        Ok(Read(cell))
    }

    fn from_sql_null(_: &Type) -> Result<Read<'a>, Refusal> {
        Ok(Read(Cell::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A type's name with a `'static` lifetime, for the error of a column no field reads.
fn type_name(ty: &Type) -> &'static str {
    match *ty {
        Type::BYTEA => "bytea",
        Type::JSON => "json",
        Type::JSONB => "jsonb",
        Type::DATE => "date",
        Type::INTERVAL => "interval",
        _ => "a PostgreSQL type no field reads",
    }
}

/// A `numeric` (what PostgreSQL's `sum` and `avg` of integers give): an INTEGER when it is whole
/// and fits an `i64`, else a REAL. The binary form is a count of base-10000 digits, the weight
/// of the first, a sign and a display scale, then the digits.
fn numeric(raw: &[u8]) -> Result<Cell<'static>, Refusal> {
    let word = |at: usize| -> Result<i16, Refusal> {
        raw.get(at..at + 2).map(|b| i16::from_be_bytes([b[0], b[1]])).ok_or_else(|| "a truncated numeric".into())
    };
    let (count, weight, sign) = (word(0)?, word(2)?, word(4)? as u16);
    if sign == 0xC000 {
        return Ok(Cell::Real(f64::NAN));
    }
    let digits = (0..count.max(0) as usize).map(|i| word(8 + 2 * i)).collect::<Result<Vec<i16>, Refusal>>()?;
    let negative = sign == 0x4000;
    // Whole when no digit lies after the point (the digit at index i has weight `weight - i`).
    let whole = digits.iter().enumerate().all(|(i, &d)| d == 0 || i64::from(weight) - i as i64 >= 0);
    if whole {
        let mut value: Option<i128> = Some(0);
        for (i, &d) in digits.iter().enumerate() {
            let power = u32::try_from(i64::from(weight) - i as i64).unwrap_or(0);
            value = value.and_then(|v| 10_000i128.checked_pow(power).map(|p| v + i128::from(d) * p));
        }
        if let Some(v) = value.map(|v| if negative { -v } else { v }).and_then(|v| i64::try_from(v).ok()) {
            return Ok(Cell::Integer(v));
        }
    }
    let magnitude: f64 =
        digits.iter().enumerate().map(|(i, &d)| f64::from(d) * 10_000f64.powi(i32::from(weight) - i as i32)).sum();
    Ok(Cell::Real(if negative { -magnitude } else { magnitude }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(value: SqlValue, ty: &Type) -> Result<Vec<u8>, String> {
        let mut out = BytesMut::new();
        Param(&value).to_sql(ty, &mut out).map(|_| out.to_vec()).map_err(|e| e.to_string())
    }

    #[test]
    fn parameters_are_written_as_the_placeholders_type() {
        assert_eq!(written(SqlValue::Integer(7), &Type::INT4), Ok(7i32.to_be_bytes().to_vec()));
        assert_eq!(written(SqlValue::Integer(1), &Type::BOOL), Ok(vec![1]));
        assert_eq!(written(SqlValue::Text("ab".into()), &Type::TEXT), Ok(b"ab".to_vec()));
        assert_eq!(
            written(SqlValue::Text("2000-01-01T00:00:01Z".into()), &Type::TIMESTAMPTZ),
            Ok(1_000_000i64.to_be_bytes().to_vec())
        );
        let error = written(SqlValue::Integer(3_000_000_000), &Type::INT4).unwrap_err();
        assert!(error.contains("out of range for integer"), "{error}");
        let error = written(SqlValue::Integer(2), &Type::BOOL).unwrap_err();
        assert!(error.contains("expects bool"), "{error}");
    }

    fn numeric_of(count: i16, weight: i16, sign: u16, scale: i16, digits: &[i16]) -> Vec<u8> {
        let mut raw = Vec::new();
        for word in [count, weight, sign as i16, scale].iter().chain(digits) {
            raw.extend_from_slice(&word.to_be_bytes());
        }
        raw
    }

    #[test]
    fn numerics_are_integers_when_whole_and_reals_otherwise() {
        // 12345678 = 1234·10000 + 5678.
        assert_eq!(numeric(&numeric_of(2, 1, 0, 0, &[1234, 5678])).unwrap(), Cell::Integer(12_345_678));
        assert_eq!(numeric(&numeric_of(1, 0, 0x4000, 0, &[42])).unwrap(), Cell::Integer(-42));
        // 20000 = 2·10000 (a trailing zero digit is left out).
        assert_eq!(numeric(&numeric_of(1, 1, 0, 0, &[2])).unwrap(), Cell::Integer(20_000));
        // 2.5 = 2 + 5000·10000⁻¹.
        assert_eq!(numeric(&numeric_of(2, 0, 0, 1, &[2, 5000])).unwrap(), Cell::Real(2.5));
        assert_eq!(numeric(&numeric_of(0, 0, 0, 0, &[])).unwrap(), Cell::Integer(0));
    }
}
