//! Untrusted text on the terminal. The model's text, code and the code's output, and anything
//! the history stored from them, may carry escape sequences (repaint the approval prompt, hide
//! lines, set the clipboard with OSC 52), Unicode direction overrides ("Trojan Source": code
//! that displays in an order other than the one it runs in), or characters that draw nothing
//! (zero-width spaces, tag characters). All are shown, not obeyed.

/// `text` with every character a person cannot see or that reorders text (controls other than
/// newline and tab, bidi controls, zero-width and tag characters, unusual spaces: the one
/// definition in [`ironclaw_risk::visible`]) replaced by a visible `⟨U+202E⟩` token.
pub fn inert(text: &str) -> String {
    ironclaw_risk::visible::render_visible(text)
}

#[cfg(test)]
mod tests {
    use super::inert;

    #[test]
    fn escapes_are_shown_and_newlines_and_tabs_kept() {
        assert_eq!(
            inert("a\x1b[2J\x1b]52;c;ZXZpbA==\x07b\n\tc\r"),
            "a⟨U+001B⟩[2J⟨U+001B⟩]52;c;ZXZpbA==⟨U+0007⟩b\n\tc⟨U+000D⟩"
        );
    }

    #[test]
    fn direction_overrides_are_shown_not_applied() {
        // "Trojan Source": displays as an `if` on one side, runs as the other.
        let code = "access = 'user\u{202e} \u{2066}# admin\u{2069} \u{2066}'";
        let shown = inert(code);
        assert!(!shown.contains('\u{202e}') && !shown.contains('\u{2066}'));
        assert!(shown.contains("⟨U+202E⟩") && shown.contains("⟨U+2069⟩"));
        assert_eq!(inert("plain café ✓"), "plain café ✓");
    }

    #[test]
    fn invisible_characters_are_shown() {
        assert_eq!(inert("r\u{200b}m \u{e0041}"), "r⟨U+200B⟩m ⟨U+E0041⟩");
    }
}
