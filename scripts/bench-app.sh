#!/usr/bin/env bash
# Startup time, idle memory and a person's waits (Send → approval dialog, Approve → first
# output) in the desktop app (release build), printed as a markdown table for docs/benchmarks.md.
# Runs on a private virtual display and session bus, so it measures the same on a desktop and in CI.
# Usage: scripts/bench-app.sh [RUNS] [ROUNDS]   (default 10 launches, 20 turns)
#        scripts/bench-app.sh ab [--before APP] [ROUNDS] [REPS] [VARIANTS]   (page-script A/B of
#        the waits, scripts/bench-app-ab.mjs; with --before, also against APP, a copy of the
#        release app kept from before a change)
#        scripts/bench-app.sh builds APP [RUNS]   (start time and idle memory of APP, a copy of
#        the release app kept from before a change, and of this build, launched in turns:
#        scripts/bench-app-builds.mjs)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build-app.sh" --release
# The waits are measured against the e2e suite's scripted model.
quietly mock-llm cargo build --locked -p ironclaw-llm --features testing --bin ironclaw-mock-llm
display=(xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" dbus-run-session --)
if [[ "${1:-}" == builds ]]; then
  [[ -x "${2:-}" ]] || die "builds needs the path of an app binary kept from before the change"
  exec "${display[@]}" node "$ROOT/scripts/bench-app-builds.mjs" "$2,$ROOT/target/release/ironclaw-app" "${3:-8}"
fi
if [[ "${1:-}" == ab ]]; then
  shift
  apps="$ROOT/target/release/ironclaw-app"
  if [[ "${1:-}" == --before ]]; then
    [[ -x "${2:-}" ]] || die "--before needs the path of an app binary kept from before the change"
    apps="$2,$apps"
    shift 2
  fi
  exec "${display[@]}" node "$ROOT/scripts/bench-app-ab.mjs" "$apps" "$@"
fi
exec "${display[@]}" node "$ROOT/scripts/bench-app.mjs" "$ROOT/target/release/ironclaw-app" "${1:-10}" "${2:-20}"
