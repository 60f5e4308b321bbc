//! Cutting text at byte offsets without splitting a character.

/// The nearest character boundary at or before `i` (which must be at most `text.len()`).
pub(crate) fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The nearest character boundary at or after `i` (which must be at most `text.len()`).
pub(crate) fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}
