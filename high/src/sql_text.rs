//! Lexical scanning of SQL text: `?` placeholders and `*` result columns, found outside string
//! literals, quoted identifiers and comments.
//!
//! This is not a SQL parser: SQLite itself prepares every statement at compile time
//! (`crate::sql`). The scanner only answers the two questions SQLite's API cannot: how many `?`
//! the text has (before preparing), and where a `*` in a result-column list is, so that the
//! checker can expand `SELECT *` into the class's columns (a `*` is resolved by column position
//! when the statement runs, so another column order in the database file would fill the
//! wrong fields).

/// A significant token of SQL text, with its byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Token<'a> {
    text: &'a str,
    start: usize,
}

/// The significant tokens of `sql`: words (keywords, names, numbers), quoted runs as one token
/// each, and every other character as a token of its own. Comments and whitespace are dropped.
fn tokens(sql: &str) -> Vec<Token<'_>> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        match bytes[i] {
            b if b.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            // A doubled quote inside a quoted run is an escaped quote; scanning to the next
            // quote and going on handles it, as the run simply restarts.
            quote @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += 1;
                }
                i += 1;
            }
            b'[' => {
                while i < bytes.len() && bytes[i] != b']' {
                    i += 1;
                }
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
                continue;
            }
            b if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$') {
                    i += 1;
                }
            }
            _ => {
                // One character, which may be more than one byte.
                i += sql[i..].chars().next().map_or(1, char::len_utf8);
            }
        }
        let end = i.min(bytes.len());
        out.push(Token { text: &sql[start..end], start });
    }
    out
}

/// The number of `?` placeholders in `sql`.
pub fn count_placeholders(sql: &str) -> usize {
    tokens(sql).iter().filter(|t| t.text == "?").count()
}

/// A `*` in the result-column list of the outermost `SELECT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Star {
    /// Byte offset of the `*` in the text.
    pub offset: usize,
    /// Whether the star is the whole result-column list (`SELECT * FROM`, `SELECT DISTINCT *
    /// FROM`), not one item among others or a table's star (`u.*`).
    pub alone: bool,
}

/// The stars in the result columns of the outermost `SELECT`s of `sql` (parenthesised
/// subqueries are not looked into: their columns never reach a decoded row). `count(*)` and
/// multiplication are not result-column stars.
pub fn result_stars(sql: &str) -> Vec<Star> {
    let tokens = tokens(sql);
    let is = |i: usize, word: &str| tokens.get(i).is_some_and(|t| t.text.eq_ignore_ascii_case(word));
    let mut stars = Vec::new();
    let mut depth = 0usize;
    // Inside the result-column list of a depth-0 SELECT: from its SELECT to the next FROM (or
    // the end of the statement) at depth 0.
    let mut in_columns = false;
    for (i, token) in tokens.iter().enumerate() {
        match token.text {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            _ if is(i, "select") => in_columns = true,
            _ if is(i, "from") || token.text == ";" => in_columns = false,
            "*" if in_columns => {
                let prev = i.checked_sub(1).map(|p| tokens[p].text).unwrap_or("");
                let after_list_start = ["select", "distinct", "all"].iter().any(|w| prev.eq_ignore_ascii_case(w));
                let column = after_list_start || prev == "," || prev == ".";
                if column {
                    let next_ends = is(i + 1, "from") || i + 1 == tokens.len();
                    stars.push(Star { offset: token.start, alone: after_list_start && next_ends });
                }
            }
            _ => {}
        }
    }
    stars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_outside_quotes_and_comments() {
        assert_eq!(count_placeholders("SELECT a FROM t WHERE a = ? AND b = ?"), 2);
        assert_eq!(count_placeholders("SELECT '?', \"?\", [?] FROM t -- ?\n WHERE a = ? /* ? */"), 1);
        assert_eq!(count_placeholders("SELECT 'it''s ?' FROM t WHERE a = ?"), 1);
    }

    #[test]
    fn a_lone_star_is_found_with_its_offset() {
        assert_eq!(result_stars("SELECT * FROM users WHERE id = ?"), vec![Star { offset: 7, alone: true }]);
        assert_eq!(result_stars("select distinct * from users"), vec![Star { offset: 16, alone: true }]);
        assert_eq!(result_stars("SELECT *"), vec![Star { offset: 7, alone: true }]);
    }

    #[test]
    fn stars_among_other_columns_or_qualified_are_not_alone() {
        assert_eq!(result_stars("SELECT *, 1 AS n FROM t"), vec![Star { offset: 7, alone: false }]);
        assert_eq!(result_stars("SELECT u.* FROM users u"), vec![Star { offset: 9, alone: false }]);
        assert_eq!(result_stars("SELECT id, * FROM t"), vec![Star { offset: 11, alone: false }]);
    }

    #[test]
    fn count_star_multiplication_subqueries_and_quotes_are_not_result_stars() {
        assert!(result_stars("SELECT count(*) AS n FROM t").is_empty());
        assert!(result_stars("SELECT a * b AS n FROM t").is_empty());
        assert!(result_stars("SELECT id FROM t WHERE EXISTS (SELECT * FROM u)").is_empty());
        assert!(result_stars("SELECT '*' AS s, \"*\" FROM t").is_empty());
        assert!(result_stars("SELECT id /* * */ FROM t WHERE a = 2 * 3").is_empty());
        assert!(result_stars("DELETE FROM t WHERE a * 2 = ?").is_empty());
    }
}
