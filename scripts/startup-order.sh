#!/usr/bin/env bash
# Rewrites src-tauri/startup-order.txt: the functions the release app runs from launch to an
# idle window, then in a turn, recorded under valgrind (scripts/startup-order.mjs). The release
# link lays them out together at the start of the code (src-tauri/build.rs), which keeps 13 MiB
# less of the binary mapped in an idle app. Run it after a change of dependencies or of what
# the app does at start, then rebuild (scripts/build-app.sh --release) and compare idle memory
# (scripts/bench-app.sh builds). Takes about five minutes on top of the release build.
# Usage: scripts/startup-order.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
"$ROOT/scripts/setup.sh"
if ! command -v valgrind >/dev/null || ! command -v callgrind_control >/dev/null; then
  is_root || die "valgrind is missing. Install it: sudo apt-get install valgrind"
  quietly apt-install-valgrind env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends valgrind
fi
"$ROOT/scripts/build-app.sh" --release
quietly mock-llm cargo build --locked -p ironclaw-llm --features testing --bin ironclaw-mock-llm
xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" dbus-run-session -- \
  node "$ROOT/scripts/startup-order.mjs" "$ROOT/target/release/ironclaw-app" "$ROOT/src-tauri/startup-order.txt"
