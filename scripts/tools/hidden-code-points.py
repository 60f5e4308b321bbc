#!/usr/bin/env python3
"""Writes the list of code points IronClaw shows as marked tokens wherever text reaches a person
(src-tauri/crates/ironclaw-risk/src/visible.rs and ui/src/lib/invisible.ts must both match it;
their tests read it). From the Unicode database: every control (Cc) but tab and newline, every
format character (Cf: bidi embeddings, overrides, isolates, zero-width characters, tags...),
every space separator but U+0020 (Zs) and the line and paragraph separators (Zl, Zp); and the
code points that draw nothing though Unicode files them elsewhere, named below.

Usage: python3 scripts/tools/hidden-code-points.py > src-tauri/crates/ironclaw-risk/src/hidden-code-points.txt
"""
import sys
import unicodedata

# Default-ignorable or blank code points outside those categories.
DRAW_NOTHING = {
    0x034F: "COMBINING GRAPHEME JOINER",
    0x115F: "HANGUL CHOSEONG FILLER",
    0x1160: "HANGUL JUNGSEONG FILLER",
    0x17B4: "KHMER VOWEL INHERENT AQ",
    0x17B5: "KHMER VOWEL INHERENT AA",
    0x2800: "BRAILLE PATTERN BLANK",
    0x3164: "HANGUL FILLER",
    0xFFA0: "HALFWIDTH HANGUL FILLER",
}
RANGES_DRAW_NOTHING = [
    (0x180B, 0x180F, "MONGOLIAN FREE VARIATION SELECTORS (and vowel separator)"),
    (0x1D173, 0x1D17A, "MUSICAL SYMBOL BEGIN/END BEAM, TIE, SLUR, PHRASE"),
    (0xFE00, 0xFE0F, "VARIATION SELECTORS 1-16"),
    (0xE0100, 0xE01EF, "VARIATION SELECTORS 17-256"),
    (0x13430, 0x1343F, "EGYPTIAN HIEROGLYPH FORMAT CONTROLS (Unicode 15)"),
    (0x0890, 0x0891, "ARABIC POUND/PIASTRE MARK ABOVE"),
    (0x2065, 0x2065, "unassigned, between the invisible operators and the isolates"),
    (0xE0000, 0xE007F, "TAG block, assigned or not"),
]


def hidden():
    out = set()
    for cp in range(0x110000):
        if cp in (0x09, 0x0A, 0x20):
            continue
        if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Zs", "Zl", "Zp"):
            out.add(cp)
    out.update(DRAW_NOTHING)
    for lo, hi, _ in RANGES_DRAW_NOTHING:
        out.update(range(lo, hi + 1))
    return sorted(out)


def ranges(cps):
    start = prev = None
    for cp in cps:
        if prev is not None and cp == prev + 1:
            prev = cp
            continue
        if start is not None:
            yield start, prev
        start = prev = cp
    if start is not None:
        yield start, prev


if __name__ == "__main__":
    sys.stdout.write(f"# Unicode {unicodedata.unidata_version}; made by scripts/tools/hidden-code-points.py\n")
    for lo, hi in ranges(hidden()):
        sys.stdout.write(f"{lo:04X}..{hi:04X}\n")
