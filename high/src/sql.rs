//! Compile-time SQL checking: every statement a program sends to the database is prepared
//! against its declared tables in an in-memory SQLite, without a database server.
//!
//! The tables are created with the column-type mapping the runtime uses when it creates them
//! at start (`docs/http.md` will say so too): `String` → `TEXT`, `i32`/`i64`/`bool` →
//! `INTEGER`, `f64` → `REAL`; an `Option` column is nullable and every other column is
//! `NOT NULL`; the table's key is its `PRIMARY KEY`. Preparing a statement finds unknown
//! tables and columns and syntax errors; a query's result columns must match the fields of the
//! class it decodes into, by name and count. A statement SQLite accepts is then checked for
//! PostgreSQL ([`postgres`]), the other engine a service may run on.

mod postgres;

use std::collections::HashSet;

use rusqlite::Connection;

use crate::check::{SqlCheck, SqlRequest};
use nagi_low::Type;

use crate::tir::{Class, Table, Ty};

/// The Low type of a column-holding High type (scalars, `String`, options of them), for the
/// shared column-type mapping in `nagi_low::runtime`; `None` for anything else.
fn column_low_type(ty: &Ty) -> Option<Type> {
    Some(match ty {
        Ty::I32 => Type::I32,
        Ty::I64 => Type::I64,
        Ty::F64 => Type::F64,
        Ty::Bool => Type::Bool,
        Ty::String => Type::String,
        Ty::Time => Type::Time,
        Ty::Duration => Type::Duration,
        Ty::Uuid => Type::Uuid,
        Ty::Option(inner) => Type::Option(Box::new(column_low_type(inner)?)),
        _ => return None,
    })
}

/// The `CREATE TABLE` statement for `table`, as the runtime will run it.
pub fn create_table_sql(table: &Table, classes: &[Class]) -> String {
    let class = &classes[table.class];
    let typed: Vec<(&str, Type)> =
        class.fields.iter().filter_map(|f| Some((f.name.as_str(), column_low_type(&f.ty)?))).collect();
    nagi_low::runtime::create_table_sql(
        &table.name,
        typed.iter().map(|(name, ty)| (*name, ty)),
        &class.fields[table.key].name,
    )
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
    let bool_columns: HashSet<String> = tables
        .iter()
        .flat_map(|table| &classes[table.class].fields)
        .filter(|field| matches!(&field.ty, Ty::Bool) || matches!(&field.ty, Ty::Option(inner) if **inner == Ty::Bool))
        .map(|field| field.name.clone())
        .collect();
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
        drop(statement);
        postgres::check(request.sql, &bool_columns)
    })
}

/// SQLite's own message, without rusqlite's wrapping.
fn sqlite_message(error: &rusqlite::Error) -> String {
    match error {
        rusqlite::Error::SqliteFailure(_, Some(message)) => format!("SQLite rejects the statement: {message}"),
        other => format!("SQLite rejects the statement: {other}"),
    }
}
