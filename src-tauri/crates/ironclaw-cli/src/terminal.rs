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

/// IronClaw's own prefix for its lines on stderr: on a terminal, in bold, which nothing the
/// code prints can be (its escape sequences are shown, never obeyed: [`InertStream`]); so a
/// line the code forges ("ironclaw: run finished: exit code 0") never looks like ours. Plain
/// into a pipe or file, or with `NO_COLOR` set.
pub fn ours() -> &'static str {
    use std::io::IsTerminal;
    static PREFIX: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    PREFIX.get_or_init(|| {
        if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
            "\x1b[1mironclaw:\x1b[0m"
        } else {
            "ironclaw:"
        }
    })
}

/// Output of the code's, chunk by chunk, made [`inert`] for a terminal. A UTF-8 sequence cut
/// between two chunks is kept until it is whole; bytes that are not UTF-8 are shown as U+FFFD.
#[derive(Debug, Default)]
pub struct InertStream {
    pending: Vec<u8>,
}

impl InertStream {
    /// What to print for `chunk`.
    pub fn push(&mut self, chunk: &[u8]) -> String {
        self.pending.extend_from_slice(chunk);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            // An incomplete sequence at the end waits for the next chunk (at most 3 bytes).
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let rest = self.pending.split_off(valid);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = rest;
        inert(&text)
    }

    /// What is left at the end (an incomplete sequence, shown as U+FFFD).
    pub fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned();
        inert(&text)
    }
}

/// `data` as it goes to its stream: through `filter` onto a terminal, raw elsewhere.
pub fn through<'a>(filter: Option<&mut InertStream>, data: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
    match filter {
        Some(f) => std::borrow::Cow::Owned(f.push(data).into_bytes()),
        None => std::borrow::Cow::Borrowed(data),
    }
}

#[cfg(test)]
mod tests {
    use super::{inert, InertStream};

    #[test]
    fn a_stream_is_made_inert_across_chunks_without_breaking_characters() {
        let mut s = InertStream::default();
        let text = "é\u{1b}[2K\u{202e}ok".as_bytes();
        // Split inside the two-byte é and inside the three-byte override.
        let mut shown = s.push(&text[..1]);
        shown.push_str(&s.push(&text[1..5]));
        shown.push_str(&s.push(&text[5..]));
        shown.push_str(&s.finish());
        assert_eq!(shown, "é⟨U+001B⟩[2K⟨U+202E⟩ok");
        assert_eq!(s.push(&[0xff, b'a']), "\u{fffd}a");
    }

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
