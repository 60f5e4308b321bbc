#!/usr/bin/env bash
# Installs the MCP servers the test suite runs: real servers this project does not write, from
# the package registries. The Python ones run in sandbox containers (never on the host), each
# from its own folder that a test mounts read-only into the server's container; the npm one is
# run on loopback as a remote server. Idempotent: a folder that holds its server's version is
# kept. Debian's Python installs the Python ones, the same 3.11 the sandbox image (Debian
# bookworm) runs them with.
set -euo pipefail
DIR="${IRONCLAW_CACHE_DIR:-$HOME/.cache/ironclaw}/mcp-test-servers"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# install NAME REQUIREMENT COMMAND...: runs COMMAND with the target folder appended.
install() {
  local name="$1" want="$2"; shift 2
  local target="$DIR/$name"
  [ "$(cat "$target/.installed" 2>/dev/null)" = "$want" ] && return 0
  rm -rf "$target.partial"
  "$@" "$target.partial" "$want"
  echo "$want" >"$target.partial/.installed"
  rm -rf "$target"
  mv "$target.partial" "$target"
}

# --target leaves the system's packages alone (and so needs no --break-system-packages).
pip_into() {
  "$PY" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --root-user-action=ignore --target "$1" "$2"
}
# $2 is a list of packages.
npm_into() {
  # shellcheck disable=SC2086
  npm install --silent --no-audit --no-fund --prefix "$1" $2
}

# Bump a version to move to a newer server.
install time mcp-server-time==2026.10.19 pip_into
install fetch mcp-server-fetch==2026.10.24 pip_into
# Its SDK takes @hono/node-server 1.x or 2.x; 2.x needs Node 20, and Debian bookworm has 18.
install everything "@modelcontextprotocol/server-everything@2026.8.31 @hono/node-server@1.19.19" npm_into
