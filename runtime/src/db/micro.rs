//! The row loop of a query on a connection the caller holds, without the database thread: the
//! entry of `bench/micro`'s rows experiment (bench/README.md, "The micro-benchmarks"), which
//! measures the runtime's own row decoding on both paths with the column indices resolved once
//! per query, as every query does, against resolving them by name on every row, the reference
//! the Nagi 0.1 prototype measured.

use super::thread::{RowSink, db_error, resolve_columns};
use super::{Collect, DbError, FromRow, Row};

/// Decodes every row of `sql` (no parameters) on `conn` into `sink`: the database thread's loop,
/// with the column indices resolved once, or, when `per_row`, by name again for each row (into
/// the same buffer, so the difference is the lookups alone). Returns the number of rows.
pub(crate) fn decode_rows(
    conn: &rusqlite::Connection,
    sql: &str,
    sink: &mut dyn RowSink,
    per_row: bool,
) -> Result<usize, DbError> {
    let mut statement = conn.prepare_cached(sql).map_err(db_error)?;
    let mut columns = resolve_columns(sink, |name| statement.column_index(name).ok())?;
    let mut rows = statement.query([]).map_err(db_error)?;
    let mut count = 0;
    while let Some(row) = rows.next().map_err(db_error)? {
        if per_row {
            for (i, column) in columns.iter_mut().enumerate() {
                *column = row.as_ref().column_index(sink.column(i)).map_err(db_error)?;
            }
        }
        sink.accept(&Row::new(row), &columns).map_err(|e| DbError::new(super::DbErrorKind::Row, e.to_string()))?;
        count += 1;
    }
    Ok(count)
}

/// The rows of `sql` on `conn` as the Rust path's `[T]`, decoded by `T`'s generated
/// [`FromRow`] (see [`decode_rows`] for `per_row`).
pub fn rows_of<T: FromRow>(conn: &rusqlite::Connection, sql: &str, per_row: bool) -> Result<Vec<T>, DbError> {
    let mut sink = Collect::<T>::new(false);
    decode_rows(conn, sql, &mut sink, per_row)?;
    Ok(sink.rows)
}
