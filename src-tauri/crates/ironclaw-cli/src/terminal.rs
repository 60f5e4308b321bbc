//! Untrusted text on the terminal. The model's text, code and the code's output, and anything
//! the history stored from them, may carry escape sequences (repaint the approval prompt, hide
//! lines, set the clipboard with OSC 52) or Unicode direction overrides ("Trojan Source": code
//! that displays in an order other than the one it runs in). Both are shown, not obeyed.

/// `text` with control characters other than newline and tab, and bidirectional formatting
/// characters, replaced by visible `\u{..}` escapes.
pub fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if c.is_control() || is_bidi_control(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// The characters that reorder how text is displayed (Unicode's Bidi_Control property).
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::inert;

    #[test]
    fn escapes_are_shown_and_newlines_and_tabs_kept() {
        assert_eq!(
            inert("a\x1b[2J\x1b]52;c;ZXZpbA==\x07b\n\tc\r"),
            "a\\u{1b}[2J\\u{1b}]52;c;ZXZpbA==\\u{7}b\n\tc\\u{d}"
        );
    }

    #[test]
    fn direction_overrides_are_shown_not_applied() {
        // "Trojan Source": displays as an `if` on one side, runs as the other.
        let code = "access = 'user\u{202e} \u{2066}# admin\u{2069} \u{2066}'";
        let shown = inert(code);
        assert!(!shown.contains('\u{202e}') && !shown.contains('\u{2066}'));
        assert!(shown.contains("\\u{202e}") && shown.contains("\\u{2069}"));
        assert_eq!(inert("plain café ✓"), "plain café ✓");
    }
}
