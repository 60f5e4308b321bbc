#!/usr/bin/env bash
# Sets everything up, checks the machine (`ironclaw doctor`), builds the desktop app (release)
# and starts it on the current display. With arguments it runs the CLI instead:
# `scripts/run.sh chat`, `scripts/run.sh history ls`, …
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$ROOT/scripts/setup.sh"
BIN="$ROOT/target/release/ironclaw"
if [ "$#" -gt 0 ]; then
  exec "$BIN" "$@"
fi
"$BIN" doctor
"$ROOT/scripts/build-app.sh" --release
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  die "no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset). Run this from a desktop session, or start a virtual one: Xvfb :99 -screen 0 1280x800x24 & DISPLAY=:99 bash scripts/run.sh"
fi
exec "$ROOT/target/release/ironclaw-app"
