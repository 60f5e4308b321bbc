//! Turns bash word nodes into the strings the shell would pass to a program: quotes removed,
//! escapes decoded, variables substituted when this snippet assigned them a literal. Everything
//! else is marked dynamic, so callers can refuse to treat it as proven.

use tree_sitter::Node;

use super::State;
use crate::parse::{children, named_children, text};

/// Brace expansion can multiply words; beyond this the word is treated as dynamic.
const MAX_BRACE_WORDS: usize = 64;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Word {
    /// The value as far as it is known; unknown parts keep their source text (`$x`, `$(..)`).
    pub text: String,
    /// Some part is only known at run time.
    pub dynamic: bool,
    /// Some part came from a variable assigned in this snippet. Such values are reported as
    /// dynamic code in command position, because an assignment on a branch that did not run
    /// would leave the session's older value in place.
    pub from_var: bool,
    /// Contains an unquoted `*`, `?` or `[`, which the shell expands against the file system.
    pub glob: bool,
    /// Contains an unquoted `{`, which may be a brace expansion.
    pub brace: bool,
    /// For a bare `$var` with several literal assignments: every candidate value.
    pub alternatives: Vec<String>,
}

impl Word {
    pub(crate) fn literal(text: &str) -> Self {
        Word {
            text: text.to_owned(),
            ..Word::default()
        }
    }

    /// Known exactly, from literals alone.
    pub(crate) fn is_literal(&self) -> bool {
        !self.dynamic && !self.from_var
    }
}

/// The words one argument node expands to (unquoted variables split on whitespace; simple brace
/// expansions expanded).
pub(crate) fn words(node: Node<'_>, src: &str, state: &State) -> Vec<Word> {
    if node.kind() == "command_name" && node.named_child_count() == 1 {
        if let Some(inner) = node.named_child(0) {
            return words(inner, src, state);
        }
    }
    if matches!(node.kind(), "simple_expansion" | "expansion") {
        let mut word = resolve(node, src, state);
        // Word splitting follows IFS, which `IFS=,; c="rm,-rf,x"; $c` relies on.
        let separators: Option<Vec<char>> = match state.vars.get("IFS") {
            None => Some(vec![' ', '\t', '\n']),
            Some(Some(values)) if values.len() == 1 => {
                Some(values[0].chars().chain([' ', '\t', '\n']).collect())
            }
            Some(_) => None,
        };
        match separators {
            Some(separators) if !word.dynamic => {
                return word
                    .text
                    .split(|c| separators.contains(&c))
                    .filter(|part| !part.is_empty())
                    .map(|part| Word {
                        from_var: true,
                        ..Word::literal(part)
                    })
                    .collect();
            }
            None => word.dynamic = true,
            Some(_) => {}
        }
        return vec![word];
    }
    let word = resolve(node, src, state);
    if word.brace && !word.dynamic {
        if let Some(expanded) = brace_expand(&word.text) {
            return expanded
                .into_iter()
                .map(|text| Word {
                    text,
                    ..word.clone()
                })
                .collect();
        }
    }
    vec![word]
}

/// Resolves one node to a single word (no splitting).
pub(crate) fn resolve(node: Node<'_>, src: &str, state: &State) -> Word {
    let mut word = Word::default();
    append(node, src, state, &mut word);
    word
}

fn append(node: Node<'_>, src: &str, state: &State, word: &mut Word) {
    let raw = text(node, src);
    match node.kind() {
        "word" | "number" if node.named_child_count() == 0 => unquoted(raw, word),
        "command_name" | "concatenation" | "number" => {
            gaps_and_children(node, src, state, word, false)
        }
        "raw_string" => {
            word.text.push_str(strip(raw, "'", "'"));
        }
        "string" => gaps_and_children(node, src, state, word, true),
        "string_content" => word.text.push_str(&unescape_double_quoted(raw)),
        "translated_string" => {
            for child in named_children(node) {
                append(child, src, state, word);
            }
        }
        "ansi_c_string" => word.text.push_str(&ansi_c(strip(raw, "$'", "'"))),
        "simple_expansion" | "expansion" => variable(node, src, state, word),
        _ => {
            word.dynamic = true;
            word.text.push_str(raw);
        }
    }
}

/// Handles nodes whose text is made of literal gaps (unquoted or inside double quotes) between
/// named children.
fn gaps_and_children(node: Node<'_>, src: &str, state: &State, word: &mut Word, quoted: bool) {
    let range = node.byte_range();
    let (mut pos, end) = if quoted {
        // `"` … `"`, or `$"` … `"` for translated strings.
        let open = text(node, src).find('"').map_or(1, |i| i + 1);
        (range.start + open, range.end.saturating_sub(1))
    } else {
        (range.start, range.end)
    };
    for child in children(node) {
        if !child.is_named() {
            continue;
        }
        let r = child.byte_range();
        if r.start > pos {
            gap(src.get(pos..r.start).unwrap_or_default(), quoted, word);
        }
        append(child, src, state, word);
        pos = pos.max(r.end);
    }
    if end > pos {
        gap(src.get(pos..end).unwrap_or_default(), quoted, word);
    }
}

fn gap(raw: &str, quoted: bool, word: &mut Word) {
    if quoted {
        word.text.push_str(&unescape_double_quoted(raw));
    } else {
        unquoted(raw, word);
    }
}

fn variable(node: Node<'_>, src: &str, state: &State, word: &mut Word) {
    let raw = text(node, src);
    let name = raw
        .trim_start_matches('$')
        .trim_start_matches('{')
        .trim_end_matches('}');
    let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match state.value_of(name).filter(|_| plain) {
        Some([single]) => {
            word.text.push_str(single);
            word.from_var = true;
        }
        Some(several) => {
            word.alternatives = several.to_vec();
            word.dynamic = true;
            word.text.push_str(raw);
        }
        None => {
            word.dynamic = true;
            word.text.push_str(raw);
        }
    }
}

/// Quote removal for unquoted text: `\x` is `x` (and not a glob), `\<newline>` vanishes.
fn unquoted(raw: &str, word: &mut Word) {
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => word.text.push(escaped),
            },
            '*' | '?' | '[' => {
                word.glob = true;
                word.text.push(c);
            }
            '{' => {
                word.brace = true;
                word.text.push(c);
            }
            _ => word.text.push(c),
        }
    }
}

fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some(&e @ ('$' | '`' | '"' | '\\')) => {
                    chars.next();
                    out.push(e);
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes bash's `$'...'` strings, the usual way to spell `rm` as `$'\x72\x6d'`.
pub(crate) fn ansi_c(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
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
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, max) = match e {
            '0'..='7' => {
                i -= 1;
                (8, 3)
            }
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            'c' => {
                if let Some(&ctl) = chars.get(i) {
                    i += 1;
                    out.push(char::from((ctl as u8) & 0x1f));
                }
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
            .take(max)
            .take_while(|d| d.is_digit(radix))
            .collect();
        i += digits.chars().count();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(decoded) => out.push(decoded),
            None => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

fn strip<'a>(raw: &'a str, open: &str, close: &str) -> &'a str {
    let inner = raw.strip_prefix(open).unwrap_or(raw);
    inner.strip_suffix(close).unwrap_or(inner)
}

/// Expands `pre{a,b}post` (recursively, left to right); `None` when there is no comma list or the
/// result would be too large.
pub(crate) fn brace_expand(text: &str) -> Option<Vec<String>> {
    let open = text.find('{')?;
    let mut depth = 0usize;
    let mut commas = Vec::new();
    let mut close = None;
    for (i, c) in text.char_indices().skip_while(|(i, _)| *i < open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    let close = close?;
    if commas.is_empty() {
        return None;
    }
    let (pre, post) = (&text[..open], &text[close + 1..]);
    let mut bounds = vec![open];
    bounds.extend(commas);
    bounds.push(close);
    let mut out = Vec::new();
    for pair in bounds.windows(2) {
        let alt = &text[pair[0] + 1..pair[1]];
        let joined = format!("{pre}{alt}{post}");
        match brace_expand(&joined) {
            Some(more) => out.extend(more),
            None => out.push(joined),
        }
        if out.len() > MAX_BRACE_WORDS {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_strings_decode_hex_octal_and_unicode_escapes() {
        assert_eq!(ansi_c(r"\x72\155\u0020-rf"), "rm -rf");
    }

    #[test]
    fn brace_expansion_produces_every_word() {
        assert_eq!(
            brace_expand("{rm,-rf,/}"),
            Some(vec!["rm".into(), "-rf".into(), "/".into()])
        );
        assert_eq!(
            brace_expand("a{b,c}d"),
            Some(vec!["abd".into(), "acd".into()])
        );
        assert_eq!(brace_expand("{a}"), None);
    }

    #[test]
    fn double_quoted_escapes_only_cover_the_special_characters() {
        assert_eq!(unescape_double_quoted(r#"a\$b\n\"c"#), r#"a$b\n"c"#);
    }
}
