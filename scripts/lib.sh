# Shared helpers for IronClaw's scripts. Quiet on success; on failure, say what broke and how to fix it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_DIR="${IRONCLAW_SETUP_LOG_DIR:-$ROOT/target/setup-logs}"
mkdir -p "$LOG_DIR"

die() { echo "ironclaw setup: $*" >&2; exit 1; }
note() { [ -n "${IRONCLAW_VERBOSE:-}" ] && echo "ironclaw setup: $*" >&2 || true; }

# Runs a command with its output in a log file; shows the log only if it fails. Each step's
# duration goes to $LOG_DIR/timings.tsv, so CI time can be attributed without extra output.
quietly() {
  local name="$1"; shift
  local log="$LOG_DIR/$name.log"
  local start=$SECONDS
  if ! "$@" >"$log" 2>&1; then
    echo "ironclaw setup: '$*' failed; its output ($log):" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  printf '%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$name" "$((SECONDS - start))" >>"$LOG_DIR/timings.tsv"
}

is_root() { [ "$(id -u)" -eq 0 ]; }

docker_answers() { docker info >/dev/null 2>&1; }

# Runs a command with its output on the terminal and in the file $1 too; its exit status is
# the command's.
tee_to() {
  local log="$1"; shift
  "$@" 2>&1 | tee "$log"
}

# Fails when suite $1 ran fewer than the tests its floor in .config/test-floors says ($2 ran).
ran_at_least() {
  local suite="$1" ran="${2:-0}" floor
  floor="$(awk -v s="$suite" '$1 == s { print $2 }' "$ROOT/.config/test-floors")"
  [ -n "$floor" ] || die "no floor for the $suite suite in .config/test-floors"
  [ "$ran" -ge "$floor" ] || die "the $suite suite ran $ran tests, fewer than its floor of $floor (.config/test-floors): tests were lost, or the runner stopped early"
}

# Like `quietly`, but the command's output stays on the terminal (test runners' reports).
timed() {
  local name="$1"; shift
  local start=$SECONDS
  "$@"
  printf '%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$name" "$((SECONDS - start))" >>"$LOG_DIR/timings.tsv"
}

# The `ironclaw` front, linked statically (static-pie, so still at a random address) where the
# toolchain targets glibc: no dynamic loader, no shared libraries to map and bind, no relocated
# pointers to copy in at each start, about 9 % of a warm `ironclaw exec`
# (docs/benchmarks.md#the-whole-ironclaw-exec-process). `crt-static` goes to this crate alone
# (`cargo rustc`): the link is where it takes effect, so every dependency is the one `cargo build`
# made. Usage: build_static_front [--release]
build_static_front() {
  if rustc -vV | grep -q '^host: x86_64-unknown-linux-gnu$\|^host: aarch64-unknown-linux-gnu$'; then
    cargo rustc --locked "$@" -p ironclaw-cli --bin ironclaw -- -C target-feature=+crt-static
  else
    cargo build --locked "$@" -p ironclaw-cli --bin ironclaw
  fi
}
