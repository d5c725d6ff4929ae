//! Compile-time SQL checking: every statement a program sends to the database is prepared
//! against its declared tables in an in-memory SQLite, without a database server.
//!
//! The tables are created with the column-type mapping the runtime uses when it creates them
//! at start (`docs/http.md` will say so too): `String` → `TEXT`, `i32`/`i64`/`bool` →
//! `INTEGER`, `f64` → `REAL`; an `Option` column is nullable and every other column is
//! `NOT NULL`; the table's key is its `PRIMARY KEY`. Preparing a statement finds unknown
//! tables and columns and syntax errors; a query's result columns must match the fields of the
//! class it decodes into, by name and count.

use rusqlite::Connection;

use crate::check::{SqlCheck, SqlRequest};
use crate::tir::{Class, Table, Ty};

/// The SQLite column declaration for a field of type `ty`, e.g. `INTEGER NOT NULL`; `None` for
/// types a column cannot hold (arrays and classes).
pub fn column_type(ty: &Ty) -> Option<String> {
    let (base, nullable) = match ty {
        Ty::Option(inner) => (&**inner, true),
        other => (other, false),
    };
    let sql = match base {
        Ty::String => "TEXT",
        Ty::I32 | Ty::I64 | Ty::Bool => "INTEGER",
        Ty::F64 => "REAL",
        _ => return None,
    };
    Some(if nullable { sql.to_string() } else { format!("{sql} NOT NULL") })
}

/// The `CREATE TABLE` statement for `table`, quoting every name.
pub fn create_table_sql(table: &Table, classes: &[Class]) -> String {
    let class = &classes[table.class];
    let mut columns: Vec<String> =
        class.fields.iter().filter_map(|f| column_type(&f.ty).map(|t| format!("\"{}\" {t}", f.name))).collect();
    columns.push(format!("PRIMARY KEY (\"{}\")", class.fields[table.key].name));
    format!("CREATE TABLE \"{}\" ({})", table.name, columns.join(", "))
}

/// A checker for `check::check` that prepares statements on an in-memory SQLite holding the
/// program's tables. If the schema itself cannot be created, every statement is reported with
/// that reason.
pub fn sqlite_checker(classes: &[Class], tables: &[Table]) -> SqlCheck {
    let setup = Connection::open_in_memory().map_err(|e| e.to_string()).and_then(|conn| {
        for table in tables {
            conn.execute_batch(&create_table_sql(table, classes))
                .map_err(|e| format!("table `{}` cannot be created: {e}", table.name))?;
        }
        Ok(conn)
    });
    Box::new(move |request: &SqlRequest| {
        let conn = setup.as_ref().map_err(Clone::clone)?;
        let statement = conn.prepare(request.sql).map_err(|e| sqlite_message(&e))?;
        if statement.parameter_count() != request.args {
            return Err(format!(
                "the SQL takes {} parameters but {} arguments are given",
                statement.parameter_count(),
                request.args
            ));
        }
        if let Some(fields) = &request.result_fields {
            let columns: Vec<&str> = statement.column_names();
            let wanted: Vec<&str> = fields.iter().map(|(name, _)| name.as_str()).collect();
            let missing: Vec<&str> = wanted.iter().copied().filter(|f| !columns.contains(f)).collect();
            let extra: Vec<&str> = columns.iter().copied().filter(|c| !wanted.contains(c)).collect();
            if !missing.is_empty() || !extra.is_empty() || columns.len() != wanted.len() {
                let mut message = format!(
                    "the query's result columns ({}) do not match the class's fields ({})",
                    columns.join(", "),
                    wanted.join(", ")
                );
                if !missing.is_empty() {
                    message.push_str(&format!("; missing: {}", missing.join(", ")));
                }
                if !extra.is_empty() {
                    message.push_str(&format!("; not a field: {}", extra.join(", ")));
                }
                return Err(message);
            }
        }
        Ok(())
    })
}

/// SQLite's own message, without rusqlite's wrapping.
fn sqlite_message(error: &rusqlite::Error) -> String {
    match error {
        rusqlite::Error::SqliteFailure(_, Some(message)) => format!("SQLite rejects the statement: {message}"),
        other => format!("SQLite rejects the statement: {other}"),
    }
}
