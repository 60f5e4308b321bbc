#!/usr/bin/env bash
# Tauri's beforeBundleCommand: copies the stand-in libraries build.rs put next to the binary
# (target/<profile>/stand-ins, docs/benchmarks.md#app-idle-memory) to src-tauri/gen/stand-ins, which
# the .deb and .rpm install under /usr/lib/ironclaw-app/stand-ins (tauri.conf.json), where the
# installed binary's DT_RPATH looks. Links become copies: the packages hold files. A build without
# stand-ins stages an empty folder, and the packages carry none. Quiet on success.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
profile=release
[ "${TAURI_ENV_DEBUG:-false}" = "true" ] && profile=debug
target="${CARGO_TARGET_DIR:-$ROOT/target}"
from="$target/$profile/stand-ins"
if [ -n "${TAURI_ENV_TARGET_TRIPLE:-}" ] && [ -d "$target/$TAURI_ENV_TARGET_TRIPLE/$profile/stand-ins" ]; then
  from="$target/$TAURI_ENV_TARGET_TRIPLE/$profile/stand-ins"
fi
to="$ROOT/src-tauri/gen/stand-ins"
rm -rf "$to"
mkdir -p "$to"
if [ -d "$from" ]; then
  cp -RL "$from/." "$to/"
fi
