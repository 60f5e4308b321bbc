#!/usr/bin/env bash
# Sets everything up, then runs every check and test: the documentation's links, formatting, lints,
# the front end's type check and unit tests, the TypeScript bindings' drift check, the Rust unit and
# end-to-end tests against the real Docker engine, the desktop app's end-to-end suite (the real
# built app under Xvfb through WebDriver), and a debug .deb/.rpm bundle check.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# A fresh clone gains nothing from incremental caches, which are a large share of target/.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
IRONCLAW_BUILD=debug "$ROOT/scripts/setup.sh"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"

# One feature set for every cargo invocation below, so Tauri is compiled once: the app embeds
# ui/dist (custom-protocol), which therefore has to exist before clippy or the build look at it.
APP_FEATURES=(--features ironclaw-app/custom-protocol)

# Every relative link and anchor in the Markdown, and every docs/….md#anchor a source comment
# cites, leads somewhere; the self-test shows the checker still fails on a broken one.
quietly links-selftest bash scripts/tools/check-links-selftest.sh
quietly links python3 scripts/tools/check-links.py
quietly fmt cargo fmt --all --check
quietly typecheck npm run typecheck
quietly vitest npm test
ran_at_least vitest "$(sed 's/\x1b\[[0-9;]*m//g' "$LOG_DIR/vitest.log" | awk '$1 == "Tests" { n = $2 } END { print n + 0 }')"
quietly ui-build npm run build
# The bundle the app embeds carries none of the in-browser fake backend (ui/src/api/fake*.ts).
quietly ui-no-fake npm run check:dist
quietly clippy cargo clippy --locked --workspace --all-targets "${APP_FEATURES[@]}" -- -D warnings
# Every binary the tests start, in one build with the workspace's features: the scripted model
# server (`ironclaw-llm/testing` is on for the workspace) and the CLI, which the suite is told
# about so that no test process runs a cargo build of its own (one with the CLI's narrower
# features, which would rebuild half the workspace while other tests wait on cargo's lock).
quietly build cargo build --locked --workspace --bins "${APP_FEATURES[@]}"
# The front as setup.sh makes it (statically linked), not as the workspace build above left it:
# the suite runs what people run. Only a relink: its dependencies are setup.sh's. The suite gets
# hard links of its own, which no later cargo build can swap for a dynamically linked front.
quietly cli-front build_static_front
mkdir -p "$ROOT/target/debug/suite-cli"
ln -f "$ROOT/target/debug/ironclaw" "$ROOT/target/debug/ironclaw-full" "$ROOT/target/debug/suite-cli/"
export IRONCLAW_BIN="$ROOT/target/debug/suite-cli/ironclaw"
python3 -m py_compile src-tauri/crates/ironclaw-sandbox/image/*.py
quietly bindings bash scripts/check-bindings.sh
# Real MCP servers from the package registry, for the suite to run in sandbox containers.
quietly mcp-servers bash scripts/mcp-test-servers.sh
export IRONCLAW_TEST_MCP_DIR="${IRONCLAW_CACHE_DIR:-$HOME/.cache/ironclaw}/mcp-test-servers"

# Tests remove their own containers (by label) even when they fail; a container a killed run
# leaves behind stops itself after the policy's idle timeout.
if cargo nextest --version >/dev/null 2>&1; then
  timed rust-tests tee_to "$LOG_DIR/rust-tests.log" cargo nextest run --locked --workspace --no-fail-fast
  ran_at_least rust "$(grep -ao '[0-9]* tests run' "$LOG_DIR/rust-tests.log" | tail -n 1 | cut -d' ' -f1)"
else
  timed rust-tests cargo test --locked --workspace --no-fail-fast
fi

# The suites that pass under gVisor, again under gVisor (set-up registered it): the same attacks
# meet the second kernel. Left out: the test of the gap gVisor has (SECURITY.md, Runtimes), two
# agent tests whose set-up cannot be made there (a FIFO made in the sandbox never appears on the
# host under gVisor, so the host has none to refuse), and the suites not yet made to pass there
# (issue 53's note lists them and why).
# IRONCLAW_GVISOR=0 (set-up did not register it) skips the pass.
GVISOR_SUITES='^suite::(agent|escape|bad_input|host_user|limits|processes|quota|recovery|run_integrity|sessions|state|undo)::'
GVISOR_GAPS='escape::the_cgroup_paths_reveal_no_container_id$|agent::(images::the_model_sees_a_chart_its_code_drew_and_nothing_through_a_link_a_fifo_or_a_path_out|instructions::a_linked_or_fifo_instruction_file_is_refused_and_the_turn_goes_on)$'
if [ "${IRONCLAW_GVISOR:-1}" != 0 ]; then
  docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' | grep -qw runsc \
    || die "gVisor is not registered with the engine (set-up should have done it; see $LOG_DIR/gvisor-fetch.log), or set IRONCLAW_GVISOR=0"
  timed rust-tests-gvisor tee_to "$LOG_DIR/rust-tests-gvisor.log" env IRONCLAW_RUNTIME=runsc \
    cargo nextest run --locked -p ironclaw-tests --no-fail-fast -E "test(/$GVISOR_SUITES/) - test(/$GVISOR_GAPS/)"
  ran_at_least gvisor "$(grep -ao '[0-9]* tests run' "$LOG_DIR/rust-tests-gvisor.log" | tail -n 1 | cut -d' ' -f1)"
fi

# The real app (the debug build from above) under Xvfb through WebDriver: compositing, then as
# it runs on a machine without a GPU (no compositing, WebKit's web process on the app's LLVM
# stand-in: docs/benchmarks.md#app-idle-memory).
timed app-e2e tee_to "$LOG_DIR/app-e2e.log" "$ROOT/scripts/e2e.sh" --no-build
ran_at_least e2e "$(awk '$1 == "#" && $2 == "pass" { n = $3 } END { print n + 0 }' "$LOG_DIR/app-e2e.log")"
timed app-e2e-no-gpu tee_to "$LOG_DIR/app-e2e-no-gpu.log" env IRONCLAW_GPU=off "$ROOT/scripts/e2e.sh" --no-build
ran_at_least e2e "$(awk '$1 == "#" && $2 == "pass" { n = $3 } END { print n + 0 }' "$LOG_DIR/app-e2e-no-gpu.log")"

# The installers build offline and carry the binary and its desktop entry. `--debug` reuses the
# debug build above instead of compiling a release one.
quietly tauri-bundle npx --no tauri build --debug --bundles deb,rpm
quietly bundle-check "$ROOT/scripts/check-bundle.sh" debug

# Every fuzz target briefly, from the committed seed corpora; fails on a crash, leak or hang.
# The sanitizer build lives outside the clone so CI on the same machine builds it once.
quietly fuzz-tools "$ROOT/scripts/fuzz-tools.sh"
timed fuzz env FUZZ_TARGET_DIR="${IRONCLAW_CACHE_DIR:-$HOME/.cache/ironclaw}/fuzz-target" \
  bash "$ROOT/fuzz/run.sh" "${IRONCLAW_FUZZ_SECONDS:-15}"
