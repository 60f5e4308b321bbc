#!/usr/bin/env bash
# Shows that check-links.py passes a tree whose links all hold and fails on each kind of broken
# one, naming it: a checker that passes everything would let the manual rot unseen.
# Quiet on success; exits 1 with what went wrong otherwise.
# check-links: skip this file (its examples are broken on purpose).
set -euo pipefail
checker="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/check-links.py"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-links self-test: $*" >&2; exit 1; }

good="$tmp/good"
mkdir -p "$good/docs"
cat >"$good/README.md" <<'EOF'
# Top

See [the page](docs/page.md), [a heading](docs/page.md#a-heading-with-code),
[the second Twice](docs/page.md#twice-1), [an explicit anchor](docs/page.md#kept-name),
[here](#top), [a web page](https://example.invalid/nowhere.md#nothing) and ![a picture](docs/pic.png).
A [reference][ref] too, and [a link whose text
wraps](docs/page.md#twice).

`[not a link](missing.md)` is code, and so is this block:

```md
[not a link](missing.md#either)
```

[ref]: docs/page.md#a-heading-with-code
EOF
cat >"$good/docs/page.md" <<'EOF'
# Page

## A heading, with `code`!

## Twice

## Twice

<a id="kept-name"></a>
Back to [the top](../README.md#top).
EOF
: >"$good/docs/pic.png"
printf '// Why: docs/page.md#twice and docs/page.md#kept-name.\n' >"$good/docs/lib.rs"

out="$(python3 "$checker" "$good" 2>&1)" || fail "a tree whose links all hold failed:
$out"
[ -z "$out" ] || fail "a passing run printed something:
$out"

# Each broken link alone, with the words the checker must print for it.
expect_broken() {
  local name="$1" file="$2" text="$3" expected="$4"
  local dir="$tmp/$name"
  cp -r "$good" "$dir"
  printf '%s\n' "$text" >>"$dir/$file"
  local status=0
  out="$(python3 "$checker" "$dir" 2>&1)" || status=$?
  [ "$status" -eq 1 ] || fail "$name: exit $status, expected 1; output:
$out"
  grep -qF -- "$expected" <<<"$out" || fail "$name: expected '$expected' in:
$out"
}
expect_broken missing-file README.md '[gone](docs/gone.md)' 'README.md:16: docs/gone.md — no such file'
expect_broken missing-anchor README.md '[gone](docs/page.md#no-such-heading)' "no heading or <a id> 'no-such-heading'"
expect_broken missing-local-anchor docs/page.md '[gone](#nowhere)' 'docs/page.md:11: #nowhere'
expect_broken third-duplicate README.md '[gone](docs/page.md#twice-2)' "'twice-2'"
expect_broken reference-style README.md '[gone]: docs/page.md#nope' 'docs/page.md#nope — no heading'
expect_broken source-comment docs/lib.rs '// See docs/page.md#moved-away.' 'docs/lib.rs:2: docs/page.md#moved-away'
expect_broken wrapped-link README.md $'[a link whose text\nwraps](docs/page.md#wrapped-away)' 'README.md:17: docs/page.md#wrapped-away'
