#!/usr/bin/env bash
# The exchange rate of a legitimate consumer (`nameway bench`: its own producer, 1 consumer,
# window 16, 4-component names) through namewayd with and without an Interest flood from
# another application (python-ndn's encoder, FLOOD distinct Interests with a 60 s lifetime
# under /flood, routed to the null face, so each holds a PIT entry until it expires), in one
# run: RUNS measured benches without the flood, then RUNS with it. Also the time `nameway
# status` takes during the flood. Medians, and the ratio flood / no flood.
#
#   bash scripts/bench-flood.sh          # FLOOD=150000 PIT=100000 RUNS=5
set -euo pipefail

RUNS="${RUNS:-5}"
FLOOD="${FLOOD:-150000}"
PIT="${PIT:-100000}"

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init
bash scripts/setup-python.sh >/dev/null
bin="$repo/target/release"

sock="$dir/nfd.sock"
start_namewayd "[faces]
unix = \"$sock\"
tcp = []
udp = []
[forwarder]
pit_capacity = $PIT
[cs]
serve = false
admit = false"
nw() { "$bin/nameway" --transport "unix://$sock" "$@"; }
nw route add /flood null:// >/dev/null

rate() {
    nw bench --interests 50000 --runs 1 --json \
        | python3 -c "import json,sys; print(json.load(sys.stdin)['results'][0]['median_exchanges_per_s'])"
}
status_ms() {
    local s e
    s=$(date +%s%N); nw status >/dev/null; e=$(date +%s%N)
    echo $(((e - s) / 1000000))
}

quiet="$(median $(for _ in $(seq "$RUNS"); do rate; done))"
quiet_status="$(median $(for _ in $(seq "$RUNS"); do status_ms; done))"

NDN_CLIENT_TRANSPORT="unix://$sock" "$repo/.venv/bin/python" tests/interop/pyndn_app.py flood \
    --prefix /flood --count "$FLOOD" --lifetime 60000 --hold 600 > "$dir/flood.out" &
bench_pids="${bench_pids:-} $!"
for _ in $(seq 600); do [ -s "$dir/flood.out" ] && break; sleep 0.1; done
sleep 1
held="$(nw face list --json | python3 -c "import json,sys; print(max(f.get('pit_entries') or 0 for f in json.load(sys.stdin)))")"
flooded="$(median $(for _ in $(seq "$RUNS"); do rate; done))"
flooded_status="$(median $(for _ in $(seq "$RUNS"); do status_ms; done))"
refused="$(nw face list --json | python3 -c "
import json,sys
print(sum(sum((f.get('drops') or {}).values()) for f in json.load(sys.stdin)))")"

printf '\nPIT capacity %s, flood of %s Interests (%s held by the flooder, %s refused)\n' \
    "$PIT" "$FLOOD" "$held" "$refused"
printf '%-24s %14s %14s %8s\n' "" "no flood" "during flood" ratio
printf '%-24s %14.0f %14.0f %8.2f\n' "exchanges/s (median)" "$quiet" "$flooded" \
    "$(python3 -c "print($flooded / $quiet)")"
printf '%-24s %14s %14s\n' "nameway status (ms)" "$quiet_status" "$flooded_status"
