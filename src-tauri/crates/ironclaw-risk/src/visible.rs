//! Characters a person cannot see, or that change the order text is displayed in, made visible.
//!
//! The approval gate hashes the exact code; the person approves what they *see*. Every code
//! point below renders as nothing, as a blank, or reorders its neighbours ("Trojan Source"), so
//! code containing one can run something other than what it looks like. Every front end (the
//! CLI prompt and history, the desktop notification, and `ui/src/lib/invisible.ts` for the
//! dialog, which mirrors this table) shows each as a token such as `⟨U+202E⟩`, and
//! [`crate::assess`] never calls such code read-only.
//!
//! One definition, as a table of ranges (Rust's std has no Unicode general-category lookup):
//! - C0 controls except `\n` and `\t`, DEL, and C1 controls;
//! - every format (Cf) character of Unicode 15.1: soft hyphen, the Arabic/Syriac number marks,
//!   zero-width space/joiners, LRM/RLM/ALM, the bidi embeddings, overrides and isolates, word
//!   joiner and invisible operators, BOM, interlinear annotation marks, tag characters
//!   U+E0000..U+E007F and the rest;
//! - other code points that draw nothing: combining grapheme joiner U+034F, Hangul fillers,
//!   Mongolian free variation selectors, the Khmer inherent vowels U+17B4/U+17B5;
//! - spaces other than U+0020 (no-break, en/em, ideographic, braille blank U+2800...) and the
//!   line/paragraph separators U+2028/U+2029: they look like a space or a line break, but to bash
//!   and Python they are part of a word;
//! - variation selectors U+FE00..U+FE0F and U+E0100..U+E01EF. Decision: one U+FE0E/U+FE0F right
//!   after an emoji-like symbol (`⚠️`), and a zero-width joiner between two such symbols (`👨‍👩‍👧`),
//!   are how emoji are written and are left as they are; every other selector or joiner is
//!   marked. Smuggling data in selectors needs runs of them, and each one after the first
//!   follows a selector rather than an emoji, so it is always marked.

/// The token a hidden code point is shown as, e.g. `⟨U+202E⟩`.
pub fn token(c: char) -> String {
    format!("⟨U+{:04X}⟩", u32::from(c))
}

/// True for a code point that is invisible, a control, or reorders text, regardless of context.
/// [`hidden_chars`] applies the emoji exceptions on top.
pub fn is_hidden(c: char) -> bool {
    let u = u32::from(c);
    if c == '\n' || c == '\t' {
        return false;
    }
    matches!(
        u,
        0x00..=0x1F
            | 0x7F..=0x9F
            | 0xA0
            | 0xAD
            | 0x034F
            | 0x061C
            | 0x0600..=0x0605
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x115F..=0x1160
            | 0x1680
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x2000..=0x200F
            | 0x2028..=0x202F
            | 0x205F..=0x206F
            | 0x2800
            | 0x3000
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE007F
            | 0xE0100..=0xE01EF
    )
}

/// Symbols that are drawn as emoji and may carry a presentation selector or be joined by a ZWJ.
fn is_emoji_like(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00A9 | 0x00AE | 0x203C | 0x2049 | 0x2122 | 0x2139 | 0x2194..=0x21AA
            | 0x231A..=0x23FF | 0x24C2 | 0x25AA..=0x27BF | 0x2934..=0x2935
            | 0x2B05..=0x2B55 | 0x3030 | 0x303D | 0x3297 | 0x3299 | 0x1F000..=0x1FAFF
    )
}

/// The hidden code points of `text` in order, with their byte offsets, after the emoji
/// exceptions described in the module documentation.
pub fn hidden_chars(text: &str) -> Vec<(usize, char)> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    for (i, &(at, c)) in chars.iter().enumerate() {
        if !is_hidden(c) {
            continue;
        }
        let before = i.checked_sub(1).map(|j| chars[j].1);
        let allowed = match c {
            '\u{FE0E}' | '\u{FE0F}' => before.is_some_and(is_emoji_like),
            '\u{200D}' => {
                // Skip one presentation selector before the joiner: `❤️‍🔥`.
                let left = match before {
                    Some('\u{FE0F}') => i.checked_sub(2).map(|j| chars[j].1),
                    other => other,
                };
                let right = chars.get(i + 1).map(|&(_, c)| c);
                left.is_some_and(is_emoji_like) && right.is_some_and(is_emoji_like)
            }
            _ => false,
        };
        if !allowed {
            out.push((at, c));
        }
    }
    out
}

/// `text` with every hidden code point replaced by its [`token`]; newlines and tabs are kept.
pub fn render_visible(text: &str) -> String {
    let hidden = hidden_chars(text);
    if hidden.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + hidden.len() * 10);
    let mut pos = 0;
    for (at, c) in hidden {
        out.push_str(&text[pos..at]);
        out.push_str(&token(c));
        pos = at + c.len_utf8();
    }
    out.push_str(&text[pos..]);
    out
}

/// A sentence for the risk reasons, or `None` when every character of `text` is visible:
/// `contains 2 invisible or bidirectional-control characters (U+202E U+202C)`.
pub fn describe_hidden(text: &str) -> Option<String> {
    const LISTED: usize = 8;
    let hidden = hidden_chars(text);
    if hidden.is_empty() {
        return None;
    }
    let mut distinct: Vec<char> = Vec::new();
    for &(_, c) in &hidden {
        if !distinct.contains(&c) {
            distinct.push(c);
        }
    }
    let mut names: Vec<String> = distinct
        .iter()
        .take(LISTED)
        .map(|&c| format!("U+{:04X}", u32::from(c)))
        .collect();
    if distinct.len() > LISTED {
        names.push(format!("and {} more", distinct.len() - LISTED));
    }
    let noun = if hidden.len() == 1 {
        "character"
    } else {
        "characters"
    };
    Some(format!(
        "contains {} invisible or bidirectional-control {noun} ({})",
        hidden.len(),
        names.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    /// The table is the list `scripts/tools/hidden-code-points.py` makes from the Unicode
    /// database (every control, format character and blank), code point for code point, and
    /// so is `ui/src/lib/invisible.ts` (its test reads the same file).
    #[test]
    fn the_table_is_the_unicode_list_exactly() {
        let mut listed = std::collections::BTreeSet::new();
        for line in include_str!("hidden-code-points.txt").lines() {
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let (lo, hi) = line.split_once("..").unwrap_or((line, line));
            let (lo, hi) = (
                u32::from_str_radix(lo, 16).unwrap_or(u32::MAX),
                u32::from_str_radix(hi, 16).unwrap_or(0),
            );
            listed.extend(lo..=hi);
        }
        assert!(listed.len() > 300, "{} code points listed", listed.len());
        let marked: std::collections::BTreeSet<u32> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| super::is_hidden(*c))
            .map(u32::from)
            .collect();
        let surrogates_aside: std::collections::BTreeSet<u32> = listed
            .iter()
            .copied()
            .filter(|u| char::from_u32(*u).is_some())
            .collect();
        assert_eq!(marked, surrogates_aside);
    }

    use super::*;

    #[test]
    fn a_direction_override_is_shown_as_its_code_point() {
        assert_eq!(
            render_visible("echo \u{202E}txt.exe\u{202C}"),
            "echo ⟨U+202E⟩txt.exe⟨U+202C⟩"
        );
    }

    #[test]
    fn zero_width_tag_and_control_characters_are_shown() {
        assert_eq!(render_visible("r\u{200B}m"), "r⟨U+200B⟩m");
        assert_eq!(render_visible("a\u{E0072}\u{E006D}"), "a⟨U+E0072⟩⟨U+E006D⟩");
        assert_eq!(render_visible("\u{1b}[2J\r"), "⟨U+001B⟩[2J⟨U+000D⟩");
        assert_eq!(render_visible("a\u{a0}b\u{feff}"), "a⟨U+00A0⟩b⟨U+FEFF⟩");
    }

    #[test]
    fn newlines_tabs_and_ordinary_text_stay_as_they_are() {
        let plain = "for f in *.txt; do\n\tcat \"$f\" # café ✓ 日本\ndone";
        assert_eq!(render_visible(plain), plain);
        assert_eq!(describe_hidden(plain), None);
    }

    #[test]
    fn emoji_presentation_and_joiners_are_left_alone_but_selector_runs_are_marked() {
        assert_eq!(render_visible("echo ⚠\u{FE0F} done"), "echo ⚠\u{FE0F} done");
        let family = "👨\u{200D}👩\u{200D}👧";
        assert_eq!(render_visible(family), family);
        // Data smuggled in selectors after a plain letter, or after another selector.
        assert_eq!(render_visible("x\u{FE01}"), "x⟨U+FE01⟩");
        assert_eq!(render_visible("⚠\u{FE0F}\u{FE0F}"), "⚠\u{FE0F}⟨U+FE0F⟩");
        assert_eq!(render_visible("a\u{E0100}"), "a⟨U+E0100⟩");
        assert_eq!(render_visible("a\u{200D}b"), "a⟨U+200D⟩b");
    }

    #[test]
    fn the_description_counts_every_occurrence_and_lists_each_code_point_once() {
        assert_eq!(
            describe_hidden("echo \u{202E}txt.exe\u{202C} \u{202E}").as_deref(),
            Some("contains 3 invisible or bidirectional-control characters (U+202E U+202C)")
        );
        assert_eq!(
            describe_hidden("a\u{200B}").as_deref(),
            Some("contains 1 invisible or bidirectional-control character (U+200B)")
        );
    }
}
