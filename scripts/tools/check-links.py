#!/usr/bin/env python3
"""Fails on a relative link or anchor that leads nowhere.

Checks every tracked Markdown file (`git ls-files '*.md'`): inline links `[x](path)`,
`[x](path#anchor)`, `[x](#anchor)`, images, and reference-style definitions `[x]: path`. The
target file must exist, and an anchor must be a heading of the target (GitHub's slugs: lower case,
punctuation other than `-` and `_` dropped, spaces to `-`, a repeated heading gets `-1`, `-2`…) or
an explicit `<a id="…">` / `<a name="…">`. Web links (http, https, mailto) are not fetched, and
code blocks and inline code are skipped.

Source comments cite the manual by anchor too (`docs/benchmarks.md#app-waits`), so every
`docs/….md#anchor` or `SECURITY.md#anchor` in a tracked `*.rs`, `*.ts`, `*.mjs`, `*.sh`, `*.py`,
`*.c` or `*.css` file is checked the same way: footnote numbers drifted, anchors are checked.
A source file that holds the words "check-links: skip this file" (this checker, its self-test,
whose examples are broken on purpose) is left out.

Usage: python3 scripts/tools/check-links.py [ROOT]
Prints `file:line: target — reason` for each broken link and exits 1; silent and 0 when all hold.
ROOT (default: the repository this script is in) must be a git work tree; a directory that is
not one is walked instead (the self-test does that).
"""

import os
import re
import subprocess
import sys
import unicodedata
from urllib.parse import unquote

SOURCE_SUFFIXES = (".rs", ".ts", ".mjs", ".sh", ".py", ".c", ".css")
SKIP_DIRS = {".git", "node_modules", "target", "dist", ".dist-staging"}

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ANCHOR = re.compile(r"""<a\s+[^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target "title"), also images; text may hold one level of brackets ([`x`][y] style).
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
SKIP_MARKER = "check-links: " + "skip this file"
SOURCE_CITE = re.compile(r"(?<![\w/.-])((?:docs/[\w./-]+|SECURITY)\.md)#([\w-]+)")


def tracked_files(root):
    """Tracked files, or every file when ROOT is not a git work tree."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "-z"],
            check=True, capture_output=True,
        ).stdout.decode()
        return [f for f in out.split("\0") if f]
    except (subprocess.CalledProcessError, FileNotFoundError):
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            for name in filenames:
                files.append(os.path.relpath(os.path.join(dirpath, name), root))
        return files


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"<[^>]+>", "", heading)                  # inline HTML
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = text.replace("`", "").lower()
    out = []
    for ch in text:
        if ch in "-_" or ch == " ":
            out.append("-" if ch == " " else ch)
        elif unicodedata.category(ch)[0] in "LNM":
            out.append(ch)
    return "".join(out)


def markdown_lines(text):
    """(line number, raw line, line with inline code blanked), outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield number, line, INLINE_CODE.sub(lambda c: " " * len(c.group(0)), line)


_anchor_cache = {}


def anchors_of(path):
    if path not in _anchor_cache:
        found = set()
        seen = {}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, raw, line in markdown_lines(text):
            for m in EXPLICIT_ANCHOR.finditer(line):
                found.add(m.group(1))
            # A heading's code spans are part of its text (and of its slug).
            h = HEADING.match(raw)
            if h:
                base = slug(h.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        _anchor_cache[path] = found
    return _anchor_cache[path]


def check_target(root, source, target):
    """None when `target`, relative to `source`'s folder, holds; else the reason."""
    path, _, anchor = target.partition("#")
    path = unquote(path)
    if path:
        full = os.path.normpath(os.path.join(root, os.path.dirname(source), path))
        if not full.startswith(os.path.normpath(root) + os.sep) and full != os.path.normpath(root):
            return "points outside the repository"
        if not os.path.exists(full):
            return "no such file"
    else:
        full = os.path.join(root, source)
    if not anchor:
        return None
    if os.path.isdir(full) or not full.endswith((".md", ".markdown")):
        return None  # GitHub's line anchors (#L10) and folders: nothing to check
    if unquote(anchor) not in anchors_of(full):
        return f"no heading or <a id> '{anchor}' in {os.path.relpath(full, root)}"
    return None


def is_external(target):
    return re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) is not None or target.startswith("//")


def check(root):
    broken = []
    files = tracked_files(root)
    for name in files:
        full = os.path.join(root, name)
        if not os.path.isfile(full):
            continue
        if name.endswith(".md"):
            with open(full, encoding="utf-8") as f:
                text = f.read()
            # Whole text, so a link whose text wraps onto the next line is still seen; code
            # blocks and code spans are blanked, line breaks kept for the line numbers.
            kept = {n: line for n, _, line in markdown_lines(text)}
            count = text.count("\n") + 1
            body = "\n".join(kept.get(n, "") for n in range(1, count + 1))
            found = [(m.start(1), m.group(1)) for m in INLINE_LINK.finditer(body)]
            offset = 0
            for n in range(1, count + 1):
                ref = REFERENCE_DEF.match(kept.get(n, ""))
                if ref:
                    found.append((offset + ref.start(1), ref.group(1)))
                offset += len(kept.get(n, "")) + 1
            for at, target in sorted(found):
                if not target or is_external(target):
                    continue
                reason = check_target(root, name, target)
                if reason:
                    number = body.count("\n", 0, at) + 1
                    broken.append(f"{name}:{number}: {target} — {reason}")
        elif name.endswith(SOURCE_SUFFIXES):
            try:
                with open(full, encoding="utf-8") as f:
                    lines = f.read().split("\n")
            except UnicodeDecodeError:
                continue
            if any(SKIP_MARKER in line for line in lines):
                continue
            for number, line in enumerate(lines, 1):
                for m in SOURCE_CITE.finditer(line):
                    # Cited from the repository's root, wherever the source file is.
                    target = f"{m.group(1)}#{m.group(2)}"
                    reason = check_target(root, "", target)
                    if reason:
                        broken.append(f"{name}:{number}: {target} — {reason}")
    return broken


def main():
    root = os.path.abspath(
        sys.argv[1] if len(sys.argv) > 1
        else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    )
    broken = check(root)
    for line in broken:
        print(line)
    if broken:
        print(f"check-links: {len(broken)} broken link(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
