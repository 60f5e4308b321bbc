#!/usr/bin/env bash
# Startup time and idle memory of the desktop app (release build), printed as a markdown table
# for the README. Runs on a private virtual display and session bus, so it measures the same
# on a desktop and in CI.
# Usage: scripts/bench-app.sh [RUNS]   (default 10)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build-app.sh" --release
exec xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" dbus-run-session -- \
  node "$ROOT/scripts/bench-app.mjs" "$ROOT/target/release/ironclaw-app" "${1:-10}"
