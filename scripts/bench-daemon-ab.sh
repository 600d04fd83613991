#!/usr/bin/env bash
# Two namewayd binaries under the same `nameway bench` load, alternated: each round starts A,
# runs one load against it, stops it, then the same for B; each run reports the daemon's CPU
# time per exchange (utime+stime of every thread, /proc) and the exchanges per second. The
# report gives each binary's median and the median of the per-round ratios B / A (the pairs
# run seconds apart, so the ratio of a pair says more than two medians on a machine whose
# speed drifts). One consumer, window 16, 100-B payloads, 4 components; the producer is on
# Unix, the consumer on TRANSPORT (unix or udp).
#
#   bash scripts/bench-daemon-ab.sh A B [ROUNDS=7] [EXCHANGES=100000] [TRANSPORT=unix]
#   e.g. bash scripts/bench-daemon-ab.sh /tmp/namewayd-before target/release/namewayd 7 100000 udp
#   NAMEWAY_CLI=path  the `nameway` that runs the load (default target/release/nameway)
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
a="$(realpath "$1")"
b="$(realpath "$2")"
rounds="${3:-7}"
exchanges="${4:-100000}"
transport="${5:-unix}"
case "$transport" in unix | udp) ;; *) echo "TRANSPORT is unix or udp, not $transport" >&2; exit 2 ;; esac
cli="$(realpath "${NAMEWAY_CLI:-target/release/nameway}")"
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
NAMEWAY_NO_BUILD=1 bench_init
udp_port=$((20000 + RANDOM % 20000))

one() { # BINARY: prints "cpu_us rate"
    NAMEWAY_BIN="$1" start_namewayd "[faces]
unix = \"$dir/nfd.sock\"
tcp = []
udp = [\"127.0.0.1:$udp_port\"]"
    local ct="unix://$dir/nfd.sock"
    [ "$transport" = unix ] || ct="udp://127.0.0.1:$udp_port"
    "$cli" --transport "$ct" bench --producer-transport "unix://$dir/nfd.sock" --consumers 1 \
        --interests "$exchanges" --window 16 --components 4 --payload 100 --runs 1 \
        --daemon-pid "$pid" --json 2>/dev/null \
        | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["daemon_cpu_us_per_exchange"], r["median_exchanges_per_s"])'
    stop_namewayd
}

printf 'nameway bench, consumer over %s, window 16, 100-B payloads, %d exchanges per run\n' "$transport" "$exchanges"
printf '%-5s %14s %14s %14s %14s %8s\n' round "A µs/exch" "A exch/s" "B µs/exch" "B exch/s" "B/A"
: > "$dir/ab"
for r in $(seq "$rounds"); do
    read -r ca xa <<< "$(one "$a")"
    read -r cb xb <<< "$(one "$b")"
    echo "$ca $xa $cb $xb" >> "$dir/ab"
    printf '%-5s %14.2f %14.0f %14.2f %14.0f %8.3f\n' "$r" "$ca" "$xa" "$cb" "$xb" "$(python3 -c "print($cb / $ca)")"
done
python3 - "$dir/ab" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
ca, xa, cb, xb = (statistics.median(r[i] for r in rows) for i in range(4))
ratio = statistics.median(r[2] / r[0] for r in rows)
print(f"medians: A {ca:.2f} µs ({xa:.0f} exchanges/s), B {cb:.2f} µs ({xb:.0f} exchanges/s)")
print(f"median of the per-round ratios B / A: {ratio:.3f} (rate B / A {xb / xa:.3f})")
PY
