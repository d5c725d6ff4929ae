//! The PostgreSQL half of the compile-time SQL check: a statement SQLite has already accepted
//! is rewritten as the runtime will send it to PostgreSQL (`nagi_abi::sql::to_postgres`), parsed
//! with `sqlparser`'s PostgreSQL dialect, and searched for what PostgreSQL refuses although the
//! parser (lenient by design) and SQLite let it through: `INSERT OR …`, `PRAGMA`, `==`,
//! SQLite's own functions, the two-argument `min`/`max`, and a boolean column compared with or
//! set to a number. The shared subset is documented in docs/http.md ("PostgreSQL").

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{AssignmentTarget, BinaryOperator, Expr, FunctionArguments, Statement, Value, Visit, Visitor};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

/// Functions SQLite has and PostgreSQL lacks, with what to write instead where both engines
/// share one.
const SQLITE_ONLY: &[(&str, &str)] = &[
    ("ifnull", "coalesce"),
    ("iif", "CASE WHEN … THEN … ELSE … END"),
    ("instr", "a LIKE pattern"),
    ("printf", "||"),
    ("strftime", "a Time parameter"),
    ("datetime", "a Time parameter"),
    ("julianday", "a Time parameter"),
    ("unixepoch", "a Time parameter"),
    ("total", "coalesce(sum(x), 0)"),
    ("group_concat", "separate rows"),
    ("last_insert_rowid", "INSERT … RETURNING"),
    ("changes", "the count db.exec returns"),
    ("total_changes", "the count db.exec returns"),
    ("typeof", "a typed column"),
    ("zeroblob", "text"),
    ("randomblob", "secrets.token()"),
    ("hex", "text"),
    ("quote", "a bound parameter"),
    ("glob", "LIKE"),
    ("likelihood", "the condition alone"),
    ("likely", "the condition alone"),
    ("unlikely", "the condition alone"),
    ("sqlite_version", "nothing: it names the engine"),
    ("json_extract", "the class's fields"),
];

/// The PostgreSQL check of `sql` (SQLite's spelling, already accepted by SQLite); `bool_columns`
/// are the names of the declared tables' `bool` columns. Errors: what PostgreSQL rejects, in a
/// sentence that names it.
pub fn check(sql: &str, bool_columns: &HashSet<String>) -> Result<(), String> {
    let text = nagi_abi::sql::to_postgres(sql);
    let rejects = |why: String| Err(format!("PostgreSQL rejects the statement: {why}"));
    let dialect = PostgreSqlDialect {};
    // `==` is SQLite's spelling of `=`; the parser reads both as one operator, so it is found
    // among the tokens.
    if let Ok(tokens) = Tokenizer::new(&dialect, &text).tokenize()
        && tokens.iter().any(|token| matches!(token, Token::DoubleEq))
    {
        return rejects("`==` is SQLite's; write `=`, which both engines accept".to_owned());
    }
    let statements = match Parser::parse_sql(&dialect, &text) {
        Ok(statements) => statements,
        Err(error) => {
            let message = error.to_string();
            return rejects(message.strip_prefix("sql parser error: ").unwrap_or(&message).to_owned());
        }
    };
    let mut finder = Unshared { bool_columns, found: None };
    let _ = statements.visit(&mut finder);
    match finder.found {
        Some(why) => rejects(why),
        None => Ok(()),
    }
}

/// Finds the first construct PostgreSQL refuses.
struct Unshared<'a> {
    bool_columns: &'a HashSet<String>,
    found: Option<String>,
}

impl Unshared<'_> {
    fn is_bool_column(&self, expr: &Expr) -> bool {
        let name = match expr {
            Expr::Identifier(ident) => &ident.value,
            Expr::CompoundIdentifier(parts) => match parts.last() {
                Some(ident) => &ident.value,
                None => return false,
            },
            _ => return false,
        };
        self.bool_columns.contains(name)
    }

    fn stop(&mut self, why: String) -> ControlFlow<()> {
        self.found = Some(why);
        ControlFlow::Break(())
    }
}

fn is_number(expr: &Expr) -> bool {
    match expr {
        Expr::Value(value) => matches!(value.value, Value::Number(..)),
        Expr::UnaryOp { expr, .. } => is_number(expr),
        _ => false,
    }
}

const BOOLEAN_HINT: &str = "a boolean column holds `true` and `false` (SQLite stores them as 1 and 0): write \
                            `true`/`false` or bind a bool parameter";

impl Visitor for Unshared<'_> {
    type Break = ();

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<()> {
        match statement {
            Statement::Insert(insert) if insert.or.is_some() => self.stop(
                "`INSERT OR …` is SQLite's; write `INSERT … ON CONFLICT DO NOTHING` (or `DO UPDATE SET …`), which \
                 both engines accept"
                    .to_owned(),
            ),
            Statement::Pragma { .. } => self.stop("`PRAGMA` is SQLite's".to_owned()),
            Statement::Update { assignments, .. } => {
                for assignment in assignments {
                    if let AssignmentTarget::ColumnName(name) = &assignment.target
                        && let Some(column) = name.0.last().and_then(|part| part.as_ident())
                        && self.bool_columns.contains(&column.value)
                        && is_number(&assignment.value)
                    {
                        return self.stop(format!("`{}` is set to a number; {BOOLEAN_HINT}", column.value));
                    }
                }
                ControlFlow::Continue(())
            }
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match expr {
            Expr::BinaryOp { left, op: BinaryOperator::Eq | BinaryOperator::NotEq, right }
                if (self.is_bool_column(left) && is_number(right))
                    || (self.is_bool_column(right) && is_number(left)) =>
            {
                self.stop(format!("`{expr}` compares a boolean column with a number; {BOOLEAN_HINT}"))
            }
            Expr::Function(function) => {
                let name = function.name.to_string().to_ascii_lowercase();
                let name = name.rsplit('.').next().unwrap_or(&name);
                if let Some((_, instead)) = SQLITE_ONLY.iter().find(|(sqlite, _)| *sqlite == name) {
                    return self.stop(format!("`{name}()` is SQLite's; use {instead}"));
                }
                let arguments = match &function.args {
                    FunctionArguments::List(list) => list.args.len(),
                    _ => 0,
                };
                if (name == "min" || name == "max") && arguments > 1 {
                    let instead = if name == "min" { "least" } else { "greatest" };
                    return self.stop(format!(
                        "`{name}()` of several values is SQLite's; PostgreSQL's is `{instead}()` (SQLite has no \
                         `{instead}`: compare with CASE to run on both)"
                    ));
                }
                ControlFlow::Continue(())
            }
            _ => ControlFlow::Continue(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(sql: &str) -> Result<(), String> {
        check(sql, &HashSet::from(["done".to_owned()]))
    }

    #[test]
    fn the_shared_subset_passes() {
        for sql in [
            "SELECT id, name FROM users WHERE id = ? LIMIT ? OFFSET ?",
            "INSERT INTO users (id, name) VALUES (?, ?) ON CONFLICT (id) DO NOTHING RETURNING id",
            "UPDATE todos SET done = ?, title = ? || '!' WHERE id = ?1",
            "SELECT count(*) AS n FROM todos WHERE done = true AND title LIKE ? ESCAPE '\\'",
            "DELETE FROM todos WHERE id IN (SELECT id FROM todos ORDER BY id DESC LIMIT 3)",
            "SELECT coalesce(max(id), 0) AS top FROM todos",
        ] {
            assert_eq!(run(sql), Ok(()), "{sql}");
        }
    }

    #[test]
    fn sqlite_only_statements_name_postgresql_and_the_alternative() {
        for (sql, says) in [
            ("INSERT OR IGNORE INTO t (a) VALUES (?)", "ON CONFLICT DO NOTHING"),
            ("REPLACE INTO t (a) VALUES (?)", "REPLACE"),
            ("SELECT a FROM t WHERE a == ?", "`==` is SQLite's"),
            ("SELECT ifnull(a, 0) AS a FROM t", "coalesce"),
            ("SELECT max(a, b) AS m FROM t", "greatest"),
            ("SELECT a FROM t LIMIT 1, 2", "Expected"),
            ("SELECT a FROM t WHERE done = 1", "compares a boolean column"),
            ("UPDATE t SET done = 0 WHERE a = ?", "`done` is set to a number"),
            ("PRAGMA user_version", "PRAGMA"),
        ] {
            let error = run(sql).expect_err(sql);
            assert!(error.starts_with("PostgreSQL rejects the statement: "), "{error}");
            assert!(error.contains(says), "{sql}: {error}");
        }
    }
}
