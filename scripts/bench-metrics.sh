#!/usr/bin/env bash
# Does reading the metrics slow forwarding? Exchange rate of a release namewayd (`nameway bench`,
# one consumer over Unix, 4 components, 1 KiB payload, window 16) with /metrics scraped every
# 100 ms against no scraping, alternated in one run; prints each run and both medians.
#
#   bash scripts/bench-metrics.sh [INTERESTS=100000] [ROUNDS=5]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
interests="${1:-100000}"
rounds="${2:-5}"
bench_init
port=$((20000 + RANDOM % 20000))
http=$((port + 1))
start_namewayd "[faces]
unix = \"$dir/nfd.sock\"
tcp = []
udp = []
[http]
listen = \"127.0.0.1:$http\""

rate() {
    target/release/nameway --transport "unix://$dir/nfd.sock" bench --consumers 1 \
        --interests "$interests" --window 16 --components 4 --payload 1024 --runs 1 \
        --daemon-pid "$pid" --json | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["results"][0]["median_exchanges_per_s"]))'
}

plain=()
scraped=()
for r in $(seq "$rounds"); do
    p=$(rate)
    ( while :; do curl -s -o /dev/null "http://127.0.0.1:$http/metrics"; sleep 0.1; done ) &
    scraper=$!
    bench_pids=$scraper
    s=$(rate)
    kill "$scraper"; wait "$scraper" 2>/dev/null || true
    plain+=("$p"); scraped+=("$s")
    echo "round $r: no scraping $p/s, scraped every 100 ms $s/s"
done
mp=$(median "${plain[@]}"); ms=$(median "${scraped[@]}")
echo "median: no scraping ${mp}/s, scraped ${ms}/s, ratio $(python3 -c "print(round($ms/$mp, 3))")"
