//! The schema check at start: every table the program declares is compared with the table of
//! the same name in the database file, column by column, before the service serves anything.
//!
//! The declaration is whatever the program's `CREATE TABLE` statements make in a fresh
//! in-memory database, so both sides are read the same way, with `PRAGMA table_xinfo`: column
//! names and positions, declared types, `NOT NULL` and primary-key membership. A table the file
//! lacks is created. A file table that differs in any of these stops the service (the caller
//! exits with status 2), with one line per differing column saying what the file has and what
//! the program declares, because a silent mismatch would fail requests later or store values
//! the program never meant.
//!
//! One difference is repaired instead: columns the program declares at the end of the class,
//! nullable and outside the key, that the file lacks (a field added to the class as `T?`). They
//! are added with `ALTER TABLE … ADD COLUMN`, which puts them at the same positions, and every
//! existing row reads them as `none`.

use rusqlite::Connection;

use super::{DbError, DbErrorKind};

/// One column as `PRAGMA table_xinfo` (or PostgreSQL's catalog, `db/postgres.rs`) describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Column {
    pub(super) name: String,
    /// The declared type as written, e.g. `INTEGER`.
    pub(super) ty: String,
    pub(super) not_null: bool,
    /// Position in the primary key, 0 when not part of it.
    pub(super) pk: i64,
}

impl Column {
    /// `INTEGER NOT NULL`, `TEXT`, `INTEGER NOT NULL PRIMARY KEY`.
    fn describe(&self) -> String {
        let mut text = self.ty.clone();
        if self.not_null {
            text.push_str(" NOT NULL");
        }
        if self.pk > 0 {
            text.push_str(" PRIMARY KEY");
        }
        text
    }

    fn same_declaration(&self, other: &Column) -> bool {
        self.ty.eq_ignore_ascii_case(&other.ty) && self.not_null == other.not_null && self.pk == other.pk
    }
}

fn failed(error: rusqlite::Error) -> DbError {
    DbError::new(DbErrorKind::Failed, error.to_string())
}

fn columns(conn: &Connection, table: &str) -> Result<Vec<Column>, DbError> {
    let mut statement =
        conn.prepare("SELECT name, type, \"notnull\", pk FROM pragma_table_xinfo(?1)").map_err(failed)?;
    let rows = statement
        .query_map([table], |row| {
            Ok(Column { name: row.get(0)?, ty: row.get(1)?, not_null: row.get::<_, i64>(2)? != 0, pk: row.get(3)? })
        })
        .map_err(failed)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(failed)
}

fn tables(conn: &Connection) -> Result<Vec<String>, DbError> {
    let mut statement = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
        .map_err(failed)?;
    let rows = statement.query_map([], |row| row.get(0)).map_err(failed)?;
    rows.collect::<Result<Vec<String>, _>>().map_err(failed)
}

/// Makes the tables of `create_sql` exist in `conn` (the database file at `path`) as declared:
/// creates missing tables, adds missing trailing nullable columns, and refuses every other
/// difference.
///
/// Errors: `DbErrorKind::Schema` naming each table and column that differs; `Failed` when SQLite
/// itself fails.
pub(crate) fn ensure(conn: &Connection, path: &str, create_sql: &[String]) -> Result<(), DbError> {
    let declared = Connection::open_in_memory().map_err(failed)?;
    for sql in create_sql {
        declared.execute_batch(sql).map_err(|e| DbError::new(DbErrorKind::Failed, format!("{sql}: {e}")))?;
    }
    let existing = tables(conn)?;
    let mut problems = Vec::new();
    for table in tables(&declared)? {
        let want = columns(&declared, &table)?;
        if !existing.contains(&table) {
            let sql: String = declared
                .query_row("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1", [&table], |row| {
                    row.get(0)
                })
                .map_err(failed)?;
            conn.execute_batch(&sql).map_err(|e| DbError::new(DbErrorKind::Failed, format!("{sql}: {e}")))?;
            continue;
        }
        let have = columns(conn, &table)?;
        match compare(&have, &want, "the file") {
            Ok(added) => {
                for column in added {
                    let sql = format!("ALTER TABLE \"{table}\" ADD COLUMN \"{}\" {}", column.name, column.ty);
                    conn.execute_batch(&sql).map_err(|e| DbError::new(DbErrorKind::Failed, format!("{sql}: {e}")))?;
                    tracing::warn!(target: "nagi::db", "{path}: added column `{}` to table `{table}`", column.name);
                }
            }
            Err(lines) => {
                problems.push(format!("table `{table}`:"));
                problems.extend(lines.into_iter().map(|line| format!("  {line}")));
            }
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(mismatch(path, &problems)) }
}

/// The error of a database whose tables differ from the program's: `problems` are the lines
/// [`compare`] gave, under the name of each table.
pub(super) fn mismatch(path: &str, problems: &[String]) -> DbError {
    DbError::new(
        DbErrorKind::Schema,
        format!(
            "the database {path} does not match the program's tables\n{}\nmigrate the database to the declared \
             tables, or start with another --db (a new nullable field at the end of a class is added \
             automatically)",
            problems.join("\n")
        ),
    )
}

/// The columns to add when `have` is `want` without some trailing nullable non-key columns;
/// otherwise one line per difference. `have` is what `side` has (`the file`, `the database`).
pub(super) fn compare<'w>(have: &[Column], want: &'w [Column], side: &str) -> Result<Vec<&'w Column>, Vec<String>> {
    let mut lines = Vec::new();
    for (position, column) in want.iter().enumerate() {
        match have.iter().position(|c| c.name == column.name) {
            Some(at) => {
                let found = &have[at];
                if !found.same_declaration(column) {
                    lines.push(format!(
                        "column `{}`: {side} has {}, the program declares {}",
                        column.name,
                        found.describe(),
                        column.describe()
                    ));
                } else if at != position {
                    lines.push(format!(
                        "column `{}`: it is column {} in {side}, column {} in the program",
                        column.name,
                        at + 1,
                        position + 1
                    ));
                }
            }
            None if position >= have.len() && !column.not_null && column.pk == 0 => {}
            None => lines.push(format!(
                "column `{}`: the program declares {}, {side} has no such column",
                column.name,
                column.describe()
            )),
        }
    }
    for found in have.iter().filter(|c| !want.iter().any(|w| w.name == c.name)) {
        lines.push(format!(
            "column `{}`: {side} has {}, the program declares no such column",
            found.name,
            found.describe()
        ));
    }
    if lines.is_empty() { Ok(want.iter().skip(have.len()).collect()) } else { Err(lines) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(sql: &str) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(sql).unwrap();
        conn
    }

    const USERS: &str = "CREATE TABLE IF NOT EXISTS \"users\" (\"id\" INTEGER NOT NULL, \"name\" TEXT NOT NULL, \
                         \"age\" INTEGER NOT NULL, PRIMARY KEY (\"id\"))";

    #[test]
    fn a_missing_table_is_created_and_a_matching_one_accepted() {
        let conn = file("");
        ensure(&conn, "t.db", &[USERS.to_string()]).unwrap();
        assert_eq!(tables(&conn).unwrap(), vec!["users".to_string()]);
        ensure(&conn, "t.db", &[USERS.to_string()]).unwrap();
    }

    #[test]
    fn another_column_type_is_refused_naming_table_and_column() {
        let conn =
            file("CREATE TABLE users (id INTEGER NOT NULL, name TEXT NOT NULL, age TEXT NOT NULL, PRIMARY KEY (id))");
        let error = ensure(&conn, "t.db", &[USERS.to_string()]).unwrap_err();
        assert_eq!(error.kind, DbErrorKind::Schema);
        assert!(error.message.contains("table `users`:"), "{}", error.message);
        assert!(
            error.message.contains("column `age`: the file has TEXT NOT NULL, the program declares INTEGER NOT NULL"),
            "{}",
            error.message
        );
    }

    #[test]
    fn missing_extra_reordered_and_nullability_differences_are_each_named() {
        let conn = file("CREATE TABLE users (id INTEGER NOT NULL, age INTEGER, note TEXT, PRIMARY KEY (id))");
        let message = ensure(&conn, "t.db", &[USERS.to_string()]).unwrap_err().message;
        assert!(message.contains("column `name`: the program declares TEXT NOT NULL, the file has no such column"));
        assert!(message.contains("column `age`: the file has INTEGER, the program declares INTEGER NOT NULL"));
        assert!(message.contains("column `note`: the file has TEXT, the program declares no such column"));
        let conn = file(
            "CREATE TABLE users (id INTEGER NOT NULL, age INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY (id))",
        );
        let message = ensure(&conn, "t.db", &[USERS.to_string()]).unwrap_err().message;
        assert!(message.contains("column `name`: it is column 3 in the file, column 2 in the program"), "{message}");
    }

    #[test]
    fn a_trailing_nullable_column_is_added() {
        let conn = file("CREATE TABLE users (id INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY (id))");
        conn.execute_batch("INSERT INTO users VALUES (1, 'Ada')").unwrap();
        let declared = "CREATE TABLE IF NOT EXISTS \"users\" (\"id\" INTEGER NOT NULL, \"name\" TEXT NOT NULL, \
                        \"email\" TEXT, PRIMARY KEY (\"id\"))";
        ensure(&conn, "t.db", &[declared.to_string()]).unwrap();
        let email: Option<String> = conn.query_row("SELECT email FROM users WHERE id = 1", [], |r| r.get(0)).unwrap();
        assert_eq!(email, None);
        // A missing NOT NULL column cannot be added that way.
        let conn = file("CREATE TABLE users (id INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY (id))");
        let error = ensure(&conn, "t.db", &[USERS.to_string()]).unwrap_err();
        assert!(error.message.contains("column `age`: the program declares INTEGER NOT NULL"), "{}", error.message);
    }
}
