#!/usr/bin/env bash
# Installs the MCP servers the test suite runs (in sandbox containers, never on the host): real
# servers this project does not write, from the Python package registry, each into its own
# folder that a test mounts read-only into the server's container. Idempotent: a folder that
# holds its server's version is kept.
# Debian's Python installs the Python ones, the same 3.11 the sandbox image (Debian bookworm) runs them with.
set -euo pipefail
DIR="${IRONCLAW_CACHE_DIR:-$HOME/.cache/ironclaw}/mcp-test-servers"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
# name=requirement; bump the version to move to a newer server.
SERVERS=("time=mcp-server-time==2026.10.19" "fetch=mcp-server-fetch==2026.10.24")
for entry in "${SERVERS[@]}"; do
  name="${entry%%=*}"
  want="${entry#*=}"
  target="$DIR/$name"
  if [ "$(cat "$target/.installed" 2>/dev/null)" = "$want" ]; then
    continue
  fi
  rm -rf "$target.partial"
  # --target leaves the system's packages alone (and so needs no --break-system-packages).
  "$PY" -m pip install --quiet --disable-pip-version-check --no-warn-script-location --root-user-action=ignore \
    --target "$target.partial" "$want"
  echo "$want" >"$target.partial/.installed"
  rm -rf "$target"
  mv "$target.partial" "$target"
done
# The reference "everything" server from the npm registry, run on loopback by the suite as a
# remote (streamable HTTP) server.
NPM_SERVERS=("everything=@modelcontextprotocol/server-everything@2026.8.31")
for entry in "${NPM_SERVERS[@]}"; do
  name="${entry%%=*}"
  want="${entry#*=}"
  target="$DIR/$name"
  if [ "$(cat "$target/.installed" 2>/dev/null)" = "$want" ]; then
    continue
  fi
  rm -rf "$target.partial"
  npm install --silent --no-audit --no-fund --prefix "$target.partial" "$want"
  echo "$want" >"$target.partial/.installed"
  rm -rf "$target"
  mv "$target.partial" "$target"
done
