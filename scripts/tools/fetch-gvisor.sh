#!/usr/bin/env bash
# Puts a runsc that runs Debian 12's programs at $1 (default /usr/local/lib/ironclaw/gvisor/runsc).
#
# Debian 12's own runsc (0.0~20221219) is too old for the programs of the image it would run: its
# statx() refuses AT_NO_AUTOMOUNT, so `ls` and `stat` fail with "Invalid argument", and its
# `--oci-seccomp` refuses select(). The next Debian release's build is a static binary that does
# not have these faults; it is taken from the same Debian archive this machine's apt already uses
# (its URI is read from apt's own configuration, never written here), through apt itself, so the
# archive's signature and the package's hash are checked as for any package. Nothing in the
# system's apt configuration or package database changes.
set -euo pipefail
DEST="${1:-/usr/local/lib/ironclaw/gvisor/runsc}"
SUITE="${IRONCLAW_GVISOR_SUITE:-trixie}"

uri="$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 2>/dev/null \
  | grep -v -- '-security' | head -n 1)"
[ -n "$uri" ] || { echo "fetch-gvisor: apt has no Debian archive configured" >&2; exit 1; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || { echo "fetch-gvisor: $keyring is missing (apt-get install debian-archive-keyring)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/parts" "$tmp/prefs"
echo "deb [signed-by=$keyring] ${uri%/} $SUITE main" >"$tmp/sources.list"
apt_opts=(
  -o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/parts"
  -o "Dir::Etc::PreferencesParts=$tmp/prefs" -o "Dir::State::Lists=$tmp/lists"
  -o "Dir::Cache=$tmp/cache" -o "Dir::State::status=/dev/null" -o "APT::Architecture=$(dpkg --print-architecture)"
  -o "APT::Sandbox::User=root"
)
apt-get "${apt_opts[@]}" -qq update
(cd "$tmp" && apt-get "${apt_opts[@]}" -qq download runsc)
deb="$(ls "$tmp"/runsc_*.deb)"
dpkg-deb -x "$deb" "$tmp/x"
install -d -m 0755 "$(dirname "$DEST")"
install -m 0755 "$tmp/x/usr/bin/runsc" "$DEST.new"
"$DEST.new" --version >/dev/null
mv -f "$DEST.new" "$DEST"
