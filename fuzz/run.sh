#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 20) each and fails on the first crash, leak,
# timeout or out-of-memory. The committed seeds in corpus/<target> are read, never written:
# what the run discovers goes to corpus-new/<target> (gitignored), crashes to
# artifacts/<target>/ (reproduce with `cargo +nightly fuzz run TARGET FILE`).
#
# Needs a nightly toolchain and cargo-fuzz:
#   rustup toolchain install nightly && cargo install cargo-fuzz --locked
set -euo pipefail

SECONDS_EACH=${1:-20}
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"

# Per-input time budget: the risk classifier must answer before an approval dialog would
# visibly wait; a parser stuck longer than this on one input is a bug.
TIMEOUT=${FUZZ_TIMEOUT:-5}
# Every target there is: a new one cannot be left out of the run by forgetting a list.
TARGETS=()
for source in fuzz_targets/*.rs; do
    TARGETS+=("$(basename "$source" .rs)")
done
# CI keeps the (slow, sanitizer-instrumented) build outside its fresh clone.
TARGET_DIR=${FUZZ_TARGET_DIR:-$HERE/target}

cargo +nightly fuzz build -O --target-dir "$TARGET_DIR"

failed=()
for target in "${TARGETS[@]}"; do
    mkdir -p "corpus-new/$target" "artifacts/$target"
    echo "== $target: ${SECONDS_EACH}s"
    log="artifacts/$target/last-run.log"
    if cargo +nightly fuzz run -O --target-dir "$TARGET_DIR" "$target" "corpus-new/$target" "corpus/$target" -- \
        -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 >"$log" 2>&1; then
        grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed "s/^/   /" || true
    else
        echo "   CRASH in $target; see fuzz/$log and fuzz/artifacts/$target/"
        tail -n 30 "$log" | sed "s/^/   /"
        failed+=("$target")
    fi
done

if ((${#failed[@]})); then
    echo "fuzzing found problems in: ${failed[*]}" >&2
    exit 1
fi
echo "all ${#TARGETS[@]} targets ran ${SECONDS_EACH}s each without a crash"
