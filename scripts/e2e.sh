#!/usr/bin/env bash
# The desktop app's end-to-end suite: the real app (debug build with the front end embedded)
# on a private virtual display and session bus, driven through tauri-driver; each test starts
# its own driver, scripted LLM and data folders. Extra arguments go to `node --test`
# (e.g. --test-name-pattern=deny). Expects scripts/setup.sh to have run; builds what is missing.
# Screenshots of the main screens go to target/e2e-screenshots, or with --update-screenshots to
# docs/screenshots (the manual's).
# Usage: scripts/e2e.sh [--update-screenshots] [--no-build] [NODE_TEST_ARGS...]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"

if [ "${1:-}" = "--update-screenshots" ]; then
  shift
  export IRONCLAW_SCREENSHOT_DIR="$ROOT/docs/screenshots"
fi
if [ "${1:-}" = "--no-build" ]; then
  shift
else
  "$ROOT/scripts/build-app.sh"
  quietly mock-llm cargo build --locked -p ironclaw-llm --features testing --bin ironclaw-mock-llm
fi

export IRONCLAW_APP_BIN="${IRONCLAW_APP_BIN:-$ROOT/target/debug/ironclaw-app}"
# Without a GPU the app draws without compositing (src-tauri/src/rendering.rs), and then
# WebKitWebDriver's screenshot command never answers once a modal dialog has been shown. So the
# suite composites (through software OpenGL) unless told IRONCLAW_GPU=off, as scripts/test.sh
# does for its second pass: the tests then take their screenshots from the X server instead
# (tests/e2e/lib/webdriver.mjs), into target/e2e-screenshots-software.
export IRONCLAW_GPU="${IRONCLAW_GPU:-on}"
if [ "$IRONCLAW_GPU" = "off" ] && [ -z "${IRONCLAW_SCREENSHOT_DIR:-}" ]; then
  export IRONCLAW_SCREENSHOT_DIR="$ROOT/target/e2e-screenshots-software"
fi
export IRONCLAW_MOCK_LLM_BIN="${IRONCLAW_MOCK_LLM_BIN:-$ROOT/target/debug/ironclaw-mock-llm}"
# The system's on-demand session services, minus any notification daemon (see the config).
bus="$ROOT/target/e2e-bus"
rm -rf "$bus" && mkdir -p "$bus/services"
for service in /usr/share/dbus-1/services/*.service /usr/local/share/dbus-1/services/*.service; do
  [ -f "$service" ] || continue
  grep -q '^Name=org\.freedesktop\.Notifications$' "$service" || cp "$service" "$bus/services/"
done
sed "s|@SERVICES@|$bus/services|" tests/e2e/lib/session-bus.conf > "$bus/session.conf"
exec xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" \
  dbus-run-session --config-file="$bus/session.conf" -- \
  node --test --test-concurrency=1 "$@" tests/e2e/*.test.mjs
