#!/usr/bin/env bash
# Startup time, idle memory and a person's waits (Send → approval dialog, Approve → first
# output) in the desktop app (release build), printed as a markdown table for the README. Runs
# on a private virtual display and session bus, so it measures the same on a desktop and in CI.
# Usage: scripts/bench-app.sh [RUNS] [ROUNDS]   (default 10 launches, 20 turns)
#        scripts/bench-app.sh ab [ROUNDS] [REPS] [VARIANTS]   (page-script A/B of the waits:
#        scripts/bench-app-ab.mjs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build-app.sh" --release
# The waits are measured against the e2e suite's scripted model.
quietly mock-llm cargo build --locked -p ironclaw-llm --features testing --bin ironclaw-mock-llm
display=(xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" dbus-run-session --)
if [[ "${1:-}" == ab ]]; then
  shift
  exec "${display[@]}" node "$ROOT/scripts/bench-app-ab.mjs" "$ROOT/target/release/ironclaw-app" "$@"
fi
exec "${display[@]}" node "$ROOT/scripts/bench-app.mjs" "$ROOT/target/release/ironclaw-app" "${1:-10}" "${2:-20}"
