#!/usr/bin/env bash
# Sets everything up, then runs IronClaw. Until the desktop app lands this is the headless CLI:
# with no arguments it checks the machine (`doctor`) and runs a first piece of code in the
# sandbox; with arguments it runs `ironclaw ARGS...`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$ROOT/scripts/setup.sh"
BIN="$ROOT/target/release/ironclaw"
if [ "$#" -gt 0 ]; then
  exec "$BIN" "$@"
fi
"$BIN" doctor
"$BIN" exec --session welcome 'import platform, os; print(f"Hello from {platform.platform()} as uid {os.getuid()} in {os.getcwd()}")'
echo "Workspace: $("$BIN" workspace welcome)"
