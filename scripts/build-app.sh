#!/usr/bin/env bash
# Builds the desktop app: the front end into ui/dist, then the `ironclaw-app` binary with the
# front end embedded (feature `custom-protocol`). Debug by default (what the tests drive);
# `--release` for the one people run. Prints nothing on success.
# Usage: scripts/build-app.sh [--release]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

PROFILE=()
[ "${1:-}" = "--release" ] && PROFILE=(--release)

quietly ui-build npm run build
# The same feature set scripts/test.sh builds the workspace with, so one never rebuilds Tauri
# for the other.
quietly app-build cargo build --locked -p ironclaw-app --features custom-protocol "${PROFILE[@]}"
