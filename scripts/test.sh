#!/usr/bin/env bash
# Sets everything up, then runs every check and test: formatting, lints, unit tests and the
# end-to-end suite against the real Docker engine.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
IRONCLAW_BUILD=debug "$ROOT/scripts/setup.sh"
cd "$ROOT"

quietly fmt cargo fmt --all --check
quietly clippy cargo clippy --locked --workspace --all-targets -- -D warnings
quietly build cargo build --locked --workspace --bins
python3 -m py_compile src-tauri/crates/ironclaw-sandbox/image/supervisor.py src-tauri/crates/ironclaw-sandbox/image/pyworker.py

# Tests remove their own containers (by label) even when they fail; a container a killed run
# leaves behind stops itself after the policy's idle timeout.
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --locked --workspace --no-fail-fast
else
  cargo test --locked --workspace --no-fail-fast
fi
