//! The comments of a source text, which the parser does not keep: where each is and whether
//! code comes before it on its line (a trailing comment) or not (a comment line).

/// One `//` comment.
#[derive(Clone, Debug)]
pub struct Comment {
    /// Byte offset of its `//`.
    pub start: usize,
    /// Its text, `//` included, without the line break or trailing spaces.
    pub text: String,
    /// Whether code comes before it on its line.
    pub trailing: bool,
}

/// Every comment of `text`, in order. Strings are skipped (a `//` inside quotes is text, also in
/// a string inside an interpolation's hole).
pub fn scan(text: &str) -> Vec<Comment> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_has_code = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                line_has_code = false;
                i += 1;
            }
            b'"' => {
                // The whole string, its holes' code and strings included; a string the lexer
                // refuses ends, here, with its line.
                line_has_code = true;
                i = crate::lexer::string_end(bytes, i)
                    .unwrap_or_else(|_| text[i..].find('\n').map_or(text.len(), |n| i + n));
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
                out.push(Comment { start: i, text: text[i..end].trim_end().to_string(), trailing: line_has_code });
                i = end;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            _ => {
                line_has_code = true;
                i += 1;
            }
        }
    }
    out
}
