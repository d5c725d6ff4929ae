//! LSP positions (a line and a UTF-16 column) and byte offsets into a text.

use lsp_types::{Position, Range};

/// The position of the byte `offset` of `text` (clamped to the text, and to a character).
pub(crate) fn position(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let character = before[line_start..].encode_utf16().count();
    Position { line: line as u32, character: character as u32 }
}

/// The range of the bytes `start..end` of `text`.
pub(crate) fn range(text: &str, start: usize, end: usize) -> Range {
    Range { start: position(text, start), end: position(text, end) }
}

/// The byte offset of `position` in `text` (the end of its line when the column is past it, the
/// end of the text when the line is).
pub(crate) fn offset(text: &str, position: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..position.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let line = &text[line_start..text[line_start..].find('\n').map_or(text.len(), |i| line_start + i)];
    let mut units = 0;
    for (i, c) in line.char_indices() {
        if units >= position.character as usize {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    line_start + line.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_positions_round_trip_through_utf16_columns() {
        let text = "let a = \"é𝄞\"\nx";
        let at = text.find('x').unwrap();
        assert_eq!(position(text, at), Position { line: 1, character: 0 });
        // `𝄞` is two UTF-16 units and four bytes.
        let quote = text.rfind('"').unwrap();
        assert_eq!(position(text, quote), Position { line: 0, character: 12 });
        assert_eq!(offset(text, Position { line: 0, character: 12 }), quote);
        assert_eq!(offset(text, Position { line: 5, character: 0 }), text.len());
    }
}
