#!/usr/bin/env bash
# E1 (issue 32 §2): in-process scaling of the sharded forwarder, run RUNS times, with the
# per-workload medians of what the bench reports: busy CPU per exchange (unsharded, 1 shard,
# 2 shards), the capacity of 2 shards against 1 (the busiest thread at 100 %), the machine's
# own ceiling (2 independent forwarders against 1) and 2 shards against that ceiling. The
# `lscpu` summary and the load average go with the figures: this machine is shared.
#
#   bash scripts/bench-shards.sh [RUNS=3] [MEASUREMENT_SECONDS=3]
set -euo pipefail

RUNS="${1:-3}"
SECS="${2:-3}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|L2 cache|L3 cache|Hypervisor vendor):' || true
cd "$repo"
cargo bench -p nameway-fw --bench shards --no-run >/dev/null 2>&1
for r in $(seq 1 "$RUNS"); do
    echo "run $r/$RUNS: $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    cargo bench -p nameway-fw --bench shards -- --warm-up-time 1 --measurement-time "$SECS" \
        'shards/' >"$out/run$r.txt" 2>&1
    grep '^E1 ' "$out/run$r.txt" >&2
done

# Lines: "E1 <workload>: CPU ns per exchange all/busy/busiest thread: unsharded a/b/c,
# 1shard ..., 2shards ..., ceiling ...; capacity 2shards/1shard = X x, ceiling/... = Y x,
# 2shards/ceiling = Z"
cat "$out"/run*.txt | grep '^E1 ' | python3 -c '
import re, statistics, sys
rows = {}
for line in sys.stdin:
    w = line.split()[1].rstrip(":")
    busy = {k: int(v) for k, v in re.findall(r"(unsharded|1shard|2shards|ceiling) \d+/(\d+)/\d+", line)}
    cap, ceil, eff = (float(x) for x in re.findall(r"= ([0-9.]+)", line))
    rows.setdefault(w, []).append((busy, cap, ceil, eff))
med = statistics.median
print("workload | busy ns/exchange unsharded / 1 shard / 2 shards | 2 shards / 1 shard | ceiling / 1 thread | 2 shards / ceiling")
for w, rs in rows.items():
    u, one, two = (med(r[0][k] for r in rs) for k in ("unsharded", "1shard", "2shards"))
    caps = ", ".join(f"{r[1]:.2f}" for r in rs)
    print(f"{w} | {u:.0f} / {one:.0f} / {two:.0f} | "
          f"{med(r[1] for r in rs):.2f}x [{caps}] | {med(r[2] for r in rs):.2f}x | {med(r[3] for r in rs):.2f}")
'
