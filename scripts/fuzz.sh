#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/ one at a time, each for SECONDS (default 60), seeded from
# fuzz/seeds/<target>/ (the `any` target from every seed folder), and prints a table of
# executions and crashes per target.
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   KEEP_GOING=1  keep fuzzing after a crash (libFuzzer -fork=1 -ignore_crashes=1) and count
#                 crashes instead of stopping at the first one
#   MAX_LEN=N     largest input tried (default 9000: just above the 8800-byte packet limit)
#
# Needs the nightly toolchain (cargo-fuzz builds with -Zsanitizer=address) and a C++ compiler
# (libfuzzer-sys builds libFuzzer). Installs cargo-fuzz from crates.io when it is missing.
# Crash reproducers land in fuzz/artifacts/<target>/; replay one with
#   cargo +nightly fuzz run <target> fuzz/artifacts/<target>/crash-...
# Exits 1 when any target crashed.
set -euo pipefail

secs=${1:-60}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi

extra=(-max_total_time="$secs" -max_len="${MAX_LEN:-9000}")
if [ "${KEEP_GOING:-0}" = 1 ]; then
    extra+=(-fork=1 -ignore_crashes=1)
fi

mkdir -p target/logs
if ! cargo +nightly fuzz build >target/logs/build.log 2>&1; then
    cat target/logs/build.log >&2
    exit 1
fi
rows=()
failed=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    if [ -d "seeds/$t" ]; then
        seeds=("seeds/$t")
    else
        seeds=(seeds/*/)
    fi
    before=$(find "artifacts/$t" -name 'crash-*' | wc -l)
    log="target/logs/$t.log"
    echo "fuzzing $t for ${secs}s (log: fuzz/$log)" >&2
    status=0
    cargo +nightly fuzz run "$t" "corpus/$t" "${seeds[@]}" -- "${extra[@]}" >"$log" 2>&1 || status=$?
    # Executions: "Done N runs" (clean end), else the last "#N" status line (crash or fork mode).
    execs=$(grep -oE '^Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -n 1 || true)
    if [ -z "$execs" ]; then
        execs=$(grep -oE '^#[0-9]+' "$log" | tr -d '#' | tail -n 1 || true)
    fi
    # Crashes: the fork-mode counter when there is one, else new reproducer files.
    crashes=$(grep -oE 'oom/timeout/crash: [0-9]+/[0-9]+/[0-9]+' "$log" | tail -n 1 \
        | sed -E 's#.*: [0-9]+/[0-9]+/##' || true)
    new=$(( $(find "artifacts/$t" -name 'crash-*' | wc -l) - before ))
    if [ -z "$crashes" ]; then
        crashes=$new
    fi
    if [ "$status" -ne 0 ] || [ "$crashes" -gt 0 ]; then
        failed=1
    fi
    rows+=("$t ${secs} ${execs:-?} ${crashes} ${new}")
done

printf '\n%-10s %8s %12s %8s %18s\n' target seconds executions crashes new-reproducers
for r in "${rows[@]}"; do
    # shellcheck disable=SC2086
    printf '%-10s %8s %12s %8s %18s\n' $r
done
exit "$failed"
