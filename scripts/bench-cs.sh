#!/usr/bin/env bash
# Retrieval through a release namewayd, by where the Data comes from (the published scheme's
# table of latency from the producer and from the cache): `nameway bench`, one consumer over
# Unix, window 16, 4 components, 8000-byte payload. Each row is a fresh daemon; the cache rows
# fetch a pool of names once (filling the store), then again (`--cache-hit`).
#
#   bash scripts/bench-cs.sh [INTERESTS=20000]
#
# Rows: producer (no cache involved); in-process store hit (today's default); decoupled store,
# memory-tier hit; decoupled store, disk-tier hit (memory tier of 64 KiB, so nearly every hit
# is read from disk).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
interests="${1:-20000}"
bench_init

run() {
    local label="$1" cs="$2" mode="$3"
    rm -rf "$dir/cache"
    start_namewayd "[faces]
unix = \"$dir/nfd.sock\"
tcp = []
udp = []
[cs]
capacity = 100000
$cs"
    local out
    out=$(target/release/nameway --transport "unix://$dir/nfd.sock" bench --consumers 1 \
        --interests "$interests" --window 16 --components 4 --payload 8000 --runs 3 \
        --daemon-pid "$pid" $mode --json)
    python3 - "$label" "$out" <<'PY'
import json, sys
label, out = sys.argv[1], json.loads(sys.argv[2])
r = out["results"][0]
rate = r["median_exchanges_per_s"]
print(f"{label:44} {rate:>9.0f} exch/s {rate * 8000 / 1e6:>7.1f} MB/s   "
      f"latency p50 {r['latency_us']['p50']:>5} us  p99 {r['latency_us']['p99']:>6} us")
PY
    stop_namewayd
}

echo "$interests Interests per run, median of 3 runs, 8000-byte payload"
run "from the producer (in-process store)" "" ""
run "in-process store hit" "" "--cache-hit"
run "decoupled store, memory-tier hit" "decoupled = true
memory_capacity = \"1GiB\"" "--cache-hit"
run "decoupled store, disk-tier hit" "disk_path = \"$dir/cache/cs.redb\"
memory_capacity = \"64KiB\"
disk_capacity = \"4GiB\"" "--cache-hit"
run "from the producer (decoupled store + disk)" "disk_path = \"$dir/cache/cs.redb\"" ""
