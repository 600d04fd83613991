#!/usr/bin/env bash
# E2 (issue 32 §2): namewayd with [forwarder] threads = 1 against threads = 2 under the same
# load: `nameway bench` over Unix, CONSUMERS consumers (each on its own prefix, so with the
# default dispatch K = 2 their names land on the shards by prefix), window 16, 100-B payloads.
# The daemons take turns, RUNS times each; each run reports the daemon's CPU time (utime+stime
# of every thread, from /proc) per exchange and the exchanges per second; the medians close the
# report with the ratio threads=2 / threads=1 (target: CPU per exchange at most 1.10).
# `2p` is threads = 2 with `placement = "traffic"` (each consumer's face on the shard its names
# belong to), in the same rounds.
# PRODUCERS producer connections register the bench prefix (default 2: a producer with one
# connection per forwarding thread; with threads = 2 each shard then prefers the one homed on
# it). Every daemon, threads = 1 included, gets the SAME load (the same PRODUCERS).
#
#   bash scripts/bench-threads.sh [EXCHANGES=200000] [RUNS=3] [CONSUMERS=4] [PRODUCERS=2]
#   NAMEWAY_NO_BUILD=1 use target/release as it is
#   NAMEWAY_WINDOW=N   the consumers' window (default 16)
#   NAMEWAY_BASELINE=/path/to/namewayd also run that binary (threads 1 and 2) in each round,
#     right after this tree's, and report its medians and ratio too (a change against its
#     parent under the same load); NAMEWAY_BASELINE_2P=1 runs it with placement by traffic too
set -euo pipefail
exchanges="${1:-200000}"
runs="${2:-3}"
consumers="${3:-4}"
producers="${4:-2}"
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init

# one THREADS (1, 2, or 2p: two with placement by traffic): one measured run against a fresh
# daemon; prints "cpu_us rate".
one() {
    local placement=
    [ "$1" != 2p ] || placement='placement = "traffic"'
    start_namewayd "[faces]
unix = \"$dir/nfd.sock\"
tcp = []
udp = []
[forwarder]
threads = ${1%p}
$placement"
    target/release/nameway --transport "unix://$dir/nfd.sock" bench --consumers "$consumers" \
        --producers "$producers" \
        --interests "$exchanges" --window "${NAMEWAY_WINDOW:-16}" --components 4 --payload 100 --runs 1 \
        --daemon-pid "$pid" --json 2>/dev/null \
        | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["daemon_cpu_us_per_exchange"], r["median_exchanges_per_s"])'
    stop_namewayd
}

printf 'nameway bench over Unix, %d consumers, %d producer connections, window %d, 100-B payloads, %d exchanges per run\n' \
    "$consumers" "$producers" "${NAMEWAY_WINDOW:-16}" "$exchanges"
printf '%-8s %-8s %-4s %14s %14s\n' binary threads run "CPU µs/exch" "exchanges/s"
bins="this"
[ -z "${NAMEWAY_BASELINE:-}" ] || bins="this baseline"
for b in $bins; do
    : > "$dir/$b-t1"
    : > "$dir/$b-t2"
    : > "$dir/$b-t2p"
done
for r in $(seq "$runs"); do
    for b in $bins; do
        if [ "$b" = baseline ]; then export NAMEWAY_BIN="$NAMEWAY_BASELINE"; else unset NAMEWAY_BIN; fi
        ts="1 2 2p"
        # The baseline may predate `placement` (NAMEWAY_BASELINE_2P=1: it does not).
        [ "$b" = this ] || [ -n "${NAMEWAY_BASELINE_2P:-}" ] || ts="1 2"
        for t in $ts; do
            line="$(one "$t")"
            echo "$line" >> "$dir/$b-t$t"
            printf '%-8s %-8s %-4s %14.2f %14.0f\n' "$b" "$t" "$r" $line
        done
    done
done
for b in $bins; do
    c1="$(median $(cut -d' ' -f1 "$dir/$b-t1"))"
    c2="$(median $(cut -d' ' -f1 "$dir/$b-t2"))"
    x1="$(median $(cut -d' ' -f2 "$dir/$b-t1"))"
    x2="$(median $(cut -d' ' -f2 "$dir/$b-t2"))"
    printf '%s: medians: threads=1 %.2f µs (%.0f exchanges/s), threads=2 %.2f µs (%.0f exchanges/s)\n' \
        "$b" "$c1" "$x1" "$c2" "$x2"
    printf '%s: CPU per exchange threads=2 / threads=1 = %.3f (target <= 1.10); rate ratio %.3f\n' \
        "$b" "$(python3 -c "print($c2 / $c1)")" "$(python3 -c "print($x2 / $x1)")"
    if [ -s "$dir/$b-t2p" ]; then
        c2p="$(median $(cut -d' ' -f1 "$dir/$b-t2p"))"
        x2p="$(median $(cut -d' ' -f2 "$dir/$b-t2p"))"
        printf '%s: threads=2 placement=traffic %.2f µs (%.0f exchanges/s): / threads=1 = %.3f; rate ratio %.3f\n' \
            "$b" "$c2p" "$x2p" "$(python3 -c "print($c2p / $c1)")" "$(python3 -c "print($x2p / $x1)")"
    fi
done
printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
