#!/usr/bin/env bash
# Builds the release .deb and .rpm offline (`tauri build`) and prints their paths.
# Usage: scripts/package.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
IRONCLAW_BUILD=none "$ROOT/scripts/setup.sh"
cd "$ROOT"

quietly tauri-bundle npx --no tauri build --bundles deb,rpm
"$ROOT/scripts/check-bundle.sh" release
ls -t "$ROOT"/target/release/bundle/deb/*.deb | head -n1
ls -t "$ROOT"/target/release/bundle/rpm/*.rpm | head -n1
