#!/usr/bin/env bash
# Goodput of a 16 MiB `nameway get` across two namewayd joined by a secure UDP face, at 1400-B
# and 8000-B segments with a fixed window of 64: plain (level none) against every level of the
# security policy, RUNS rounds of one fetch per level, medians, and the median of the same-round
# ratios to plain (the first level of LEVELS). The producer runs on
# B, the consumer on A; B seals every Data, A opens it. Neither forwarder caches.
#
#   bash scripts/bench-secure.sh            # RUNS=5 SIZE_MIB=16
set -euo pipefail

RUNS="${RUNS:-5}"
SIZE_MIB="${SIZE_MIB:-16}"
LEVELS="${LEVELS:-none cpa chacha20 forro14 chacha20-poly1305 xforro14-poly1305 aes-256-gcm}"
# The daemons' [forwarder] io_threads (0: faces, ciphers and forwarder on one thread).
IO_THREADS="${IO_THREADS:-0}"

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init
bin="$repo/target/release"

head -c $((SIZE_MIB << 20)) /dev/urandom > "$dir/obj"
port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pa="$(port)"; pb="$(port)"

# daemon NAME UDP-PORT: starts namewayd with [security]; its socket is $dir/NAME.sock.
daemon() {
    printf '[log]\nlevel = "warn"\n[faces]\nunix = "%s"\ntcp = []\nudp = ["127.0.0.1:%s"]\n[cs]\nserve = false\nadmit = false\n[security]\nidentity = "%s"\n[forwarder]\nio_threads = %s\n' \
        "$dir/$1.sock" "$2" "$dir/$1.key" "$IO_THREADS" > "$dir/$1.toml"
    "$bin/namewayd" -c "$dir/$1.toml" 2>"$dir/$1.log" &
    bench_pids="${bench_pids:-} $!"
    for _ in $(seq 200); do [ -S "$dir/$1.sock" ] && return 0; sleep 0.05; done
    echo "namewayd $1 did not start:" >&2; cat "$dir/$1.log" >&2; return 1
}
daemon a "$pa"
daemon b "$pb"
na() { "$bin/nameway" --transport "unix://$dir/a.sock" "$@"; }
nb() { "$bin/nameway" --transport "unix://$dir/b.sock" "$@"; }
na neighbour trust "$(nb identity show)" >/dev/null
nb neighbour trust "$(na identity show)" >/dev/null
face="$(na face create "udp4://127.0.0.1:$pb" --secure --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["face_id"])')"
na route add /bench "$face" >/dev/null
for _ in $(seq 100); do
    na neighbour list --json | grep -q established && break
    sleep 0.1
done

# serve FILE PREFIX ARGS...: starts `nameway put` on B; sets $name (versioned) and $put_pid.
serve() {
    local file="$1" prefix="$2"
    shift 2
    rm -f "$dir/put.out"
    nb put "$file" "$prefix" --json "$@" > "$dir/put.out" 2>"$dir/put.err" &
    put_pid=$!
    bench_pids="${bench_pids:-} $put_pid"
    for _ in $(seq 600); do [ -s "$dir/put.out" ] && break; sleep 0.1; done
    name="$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['name'])" "$dir/put.out")"
}

# fetch_once NAME: one fetch through A, prints its goodput in Mbit/s.
fetch_once() {
    na get "$1" -o "$dir/got" --json --cc fixed -w 64 \
        | python3 -c "import json,sys; print(json.load(sys.stdin)['goodput_mbps'])"
    cmp -s "$dir/obj" "$dir/got" || { echo "bench-secure: fetched object differs" >&2; exit 1; }
}

# set_level LEVEL: the policy of /bench on both forwarders.
set_level() {
    if [ "$1" = none ]; then
        na security unset /bench >/dev/null; nb security unset /bench >/dev/null
    else
        na security set /bench "$1" >/dev/null 2>&1; nb security set /bench "$1" >/dev/null 2>&1
    fi
}

# The levels are interleaved round by round (one fetch of each per round), so a change of load
# on the shared machine hits them alike; "vs-plain" is the median of the same-round ratios.
printf '\n%-8s %-20s %10s %9s\n' payload level "Mbit/s" "vs-plain"
for payload in 1400 8000; do
    serve "$dir/obj" "/bench/$payload" --payload "$payload"
    : > "$dir/rounds"
    for round in $(seq "$RUNS"); do
        for level in $LEVELS; do
            set_level "$level"
            echo "$round $level $(fetch_once "$name")" >> "$dir/rounds"
        done
    done
    python3 - "$dir/rounds" "$payload" $LEVELS <<'PY'
import statistics, sys
path, payload, levels = sys.argv[1], sys.argv[2], sys.argv[3:]
rate = {}
for line in open(path):
    r, level, m = line.split()
    rate[(r, level)] = float(m)
rounds = sorted({r for r, _ in rate}, key=int)
for level in levels:
    ms = [rate[(r, level)] for r in rounds]
    ratios = [rate[(r, level)] / rate[(r, levels[0])] for r in rounds]
    print(f"{payload:<8} {level:<20} {statistics.median(ms):10.0f} {statistics.median(ratios):9.2f}")
PY
    kill "$put_pid" 2>/dev/null || true
done
echo
na neighbour list
