//! The SQL text rules both sides of the database share: the compiler checks a statement's
//! PostgreSQL form with the same rewrite the runtime applies before it prepares it, so the text
//! checked is the text run.

/// A program's statement as PostgreSQL takes it: each SQLite placeholder becomes PostgreSQL's
/// numbered one, by SQLite's own numbering (`?` is one more than the largest number given so far,
/// `?N` is `N`), so `a = ? AND b = ?1` is `a = $1 AND b = $1`. Nothing inside a string literal,
/// a quoted identifier or a comment changes. Every other word is left as written: the shared
/// subset of SQL both engines accept is documented in docs/http.md ("PostgreSQL").
pub fn to_postgres(sql: &str) -> String {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut largest = 0u64;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &sql[i..];
        let skipped = match bytes[i] {
            b'\'' => quoted(rest, b'\''),
            b'"' => quoted(rest, b'"'),
            b'-' if rest.starts_with("--") => rest.find('\n').unwrap_or(rest.len()),
            b'/' if rest.starts_with("/*") => rest[2..].find("*/").map_or(rest.len(), |end| end + 4),
            b'?' => {
                let digits = rest[1..].bytes().take_while(u8::is_ascii_digit).count();
                let number = match rest[1..=digits].parse::<u64>() {
                    Ok(number) => number,
                    Err(_) => largest + 1,
                };
                largest = largest.max(number);
                out.push('$');
                out.push_str(&number.to_string());
                i += 1 + digits;
                continue;
            }
            _ => rest.chars().next().map_or(1, char::len_utf8),
        };
        out.push_str(&rest[..skipped]);
        i += skipped;
    }
    out
}

/// The length of the quoted text at the start of `text` (quote `quote`, doubled inside), or the
/// whole text when the quote is never closed.
fn quoted(text: &str, quote: u8) -> usize {
    let bytes = text.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::to_postgres;

    #[test]
    fn placeholders_are_numbered_as_sqlite_numbers_them() {
        assert_eq!(to_postgres("SELECT a FROM t WHERE a = ? AND b = ?"), "SELECT a FROM t WHERE a = $1 AND b = $2");
        assert_eq!(to_postgres("UPDATE t SET a = ?2 WHERE id = ?1"), "UPDATE t SET a = $2 WHERE id = $1");
        assert_eq!(to_postgres("SELECT ?3, ?, ?1, ?"), "SELECT $3, $4, $1, $5");
    }

    #[test]
    fn quoted_text_and_comments_are_left_alone() {
        assert_eq!(
            to_postgres("/*nagi a.nagi:3*/ SELECT 'it''s ?', \"odd?\" FROM t -- why?\nWHERE x = ?"),
            "/*nagi a.nagi:3*/ SELECT 'it''s ?', \"odd?\" FROM t -- why?\nWHERE x = $1"
        );
        assert_eq!(to_postgres("SELECT 'ü?' || ?"), "SELECT 'ü?' || $1");
        assert_eq!(to_postgres("SELECT 'open ?"), "SELECT 'open ?");
    }
}
