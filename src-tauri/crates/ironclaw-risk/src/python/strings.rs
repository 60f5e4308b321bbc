//! Python string literals as Python would see them: prefixes, escapes, implicit concatenation,
//! f-string holes. A hole, or an escape we cannot decode, makes the value dynamic.

use tree_sitter::Node;

use crate::parse::{children, text};

/// What an f-string hole looks like once the string is handed to the shell: an expansion of an
/// unset variable, so the shell analysis treats that part as unknown too.
pub(crate) const HOLE: &str = "$PYTHON_VALUE";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PyStr {
    pub text: String,
    /// Part of it is only known at run time.
    pub dynamic: bool,
    /// Part of it came from a variable (flow-insensitive, so not proof).
    pub from_var: bool,
}

impl PyStr {
    pub(crate) fn is_literal(&self) -> bool {
        !self.dynamic && !self.from_var
    }

    pub(crate) fn join(mut self, other: PyStr) -> PyStr {
        self.text.push_str(&other.text);
        self.dynamic |= other.dynamic;
        self.from_var |= other.from_var;
        self
    }
}

/// Decodes a `string` node (any prefix: r, b, u, f and combinations).
pub(crate) fn string_literal(node: Node<'_>, src: &str) -> PyStr {
    let mut out = PyStr::default();
    let (mut raw, mut formatted) = (false, false);
    for child in children(node) {
        match child.kind() {
            "string_start" => {
                let prefix = text(child, src).trim_end_matches(['"', '\'']);
                raw = prefix.contains(['r', 'R']);
                formatted = prefix.contains(['f', 'F']);
            }
            "string_content" => {
                let content = text(child, src);
                if raw {
                    out.text.push_str(content);
                } else {
                    let (decoded, undecodable) = unescape(content);
                    out.text.push_str(&decoded);
                    out.dynamic |= undecodable;
                }
            }
            "interpolation" => {
                out.text.push_str(HOLE);
                out.dynamic = true;
            }
            _ => {}
        }
    }
    // f-string content keeps `{{`/`}}` escapes as written.
    if formatted {
        out.text = out.text.replace("{{", "{").replace("}}", "}");
    }
    out
}

/// Decodes backslash escapes; the flag says an escape (`\N{...}`) could not be decoded.
pub(crate) fn unescape(raw: &str) -> (String, bool) {
    let mut out = String::with_capacity(raw.len());
    let mut undecodable = false;
    let chars: Vec<char> = raw.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' || i >= chars.len() {
            out.push(c);
            continue;
        }
        let e = chars[i];
        i += 1;
        let simple = match e {
            '\n' => Some(None),
            '\\' | '\'' | '"' => Some(Some(e)),
            'a' => Some(Some('\u{7}')),
            'b' => Some(Some('\u{8}')),
            'f' => Some(Some('\u{c}')),
            'n' => Some(Some('\n')),
            'r' => Some(Some('\r')),
            't' => Some(Some('\t')),
            'v' => Some(Some('\u{b}')),
            _ => None,
        };
        if let Some(decoded) = simple {
            out.extend(decoded);
            continue;
        }
        let (radix, len) = match e {
            '0'..='7' => {
                i -= 1;
                (8, 3)
            }
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            'N' => {
                undecodable = true;
                out.push_str("\\N");
                continue;
            }
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        let digits: String = chars[i..]
            .iter()
            .take(len)
            .take_while(|d| d.is_digit(radix))
            .collect();
        i += digits.chars().count();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(decoded) => out.push(decoded),
            None => undecodable = true,
        }
    }
    (out, undecodable)
}

/// Standard or URL-safe base64, padding optional; `None` if it is not base64.
pub(crate) fn base64_decode(input: &str) -> Option<Vec<u8>> {
    let mut bits: u32 = 0;
    let mut count = 0;
    let mut out = Vec::with_capacity(input.len() * 3 / 4);
    for c in input.bytes() {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b'\n' | b'\r' | b' ' => continue,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push(((bits >> count) & 0xff) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_decode_like_python() {
        assert_eq!(
            unescape(r"\x72\155\u0020-rf\n"),
            ("rm -rf\n".to_owned(), false)
        );
        assert_eq!(unescape("a\\\nb"), ("ab".to_owned(), false));
    }

    #[test]
    fn named_unicode_escapes_are_reported_as_undecodable() {
        assert!(unescape(r"\N{LATIN SMALL LETTER R}m").1);
    }

    #[test]
    fn base64_round_trips_a_command() {
        assert_eq!(
            base64_decode("cm0gLXJmIC8=").as_deref(),
            Some(&b"rm -rf /"[..])
        );
        assert_eq!(base64_decode("not base64!"), None);
    }
}
