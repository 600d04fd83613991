#!/usr/bin/env bash
# Exchange rate over namewayd's WebSocket face against its TCP face, in one run: a release
# namewayd, `nameway bench` with one consumer over tcp:// then ws:// (alternated, ROUNDS times),
# the producer on the Unix socket; 4 components, 1 KiB payload, window 16. Prints each run and
# the medians.
#
#   bash scripts/bench-ws.sh [INTERESTS=100000] [ROUNDS=5]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
interests="${1:-100000}"
rounds="${2:-5}"
bench_init
port=$((20000 + RANDOM % 20000))
ws=$((port + 1))
start_namewayd "[faces]
unix = \"$dir/nfd.sock\"
tcp = [\"127.0.0.1:$port\"]
udp = []
websocket = [\"127.0.0.1:$ws\"]"
rate() {
    target/release/nameway --transport "$1" bench --producer-transport "unix://$dir/nfd.sock" \
        --consumers 1 --interests "$interests" --window 16 --components 4 --payload 1024 \
        --runs 1 --daemon-pid "$pid" --json \
        | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(round(r["median_exchanges_per_s"]), r["latency_us"]["p50"], r["daemon_cpu_us_per_exchange"])'
}
tcp_rates=(); ws_rates=()
for r in $(seq "$rounds"); do
    read -r t tl tc < <(rate "tcp://127.0.0.1:$port")
    read -r w wl wc < <(rate "ws://127.0.0.1:$ws")
    tcp_rates+=("$t"); ws_rates+=("$w")
    echo "round $r: tcp $t/s (p50 ${tl} us, daemon ${tc} us/exch)   ws $w/s (p50 ${wl} us, daemon ${wc} us/exch)"
done
mt=$(median "${tcp_rates[@]}"); mw=$(median "${ws_rates[@]}")
echo "median: tcp ${mt}/s, ws ${mw}/s, ratio ws/tcp $(python3 -c "print(round($mw/$mt, 3))")"
