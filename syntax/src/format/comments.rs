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

/// Every comment of `text`, in order. Strings are skipped (a `//` inside quotes is text).
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
                line_has_code = true;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
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
