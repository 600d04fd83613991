#!/usr/bin/env bash
# The breakdown behind E2 (issue 32 §2; docs/performance.md, "E2"): namewayd with
# [forwarder] threads = 1, then threads = 2, under the load of scripts/bench-threads.sh
# (`nameway bench` over Unix, CONSUMERS consumers, window 16, 100-B payloads), with
# `perf stat --per-thread` on the daemon for the whole load. Prints, per daemon thread, per
# exchange: CPU (task-clock), context switches, CPU migrations, wake-ups it issued
# (sched:sched_wakeup: the shard or writer it woke, and the client processes), epoll_wait
# calls, socket reads and writes, futex calls, and (from `/metrics`) the packets each shard
# forwarded itself, handed to the other and received from it, per exchange. With NAMEWAY_PERF_RECORD=1 it also records call
# graphs (`perf record -g`) and prints the top of `perf report --no-children` per run. The
# third run, `2p`, is threads = 2 with `placement = "traffic"`.
#
# PRODUCERS producer connections register the bench prefix (default 2, as bench-threads.sh).
#
#   bash scripts/profile-threads.sh [EXCHANGES=100000] [CONSUMERS=4] [PRODUCERS=2]
#   NAMEWAY_NO_BUILD=1 use target/release as it is
set -euo pipefail
exchanges="${1:-100000}"
consumers="${2:-4}"
producers="${3:-2}"
warm=1000
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init
total=$((exchanges + warm * consumers))
events="task-clock,context-switches,cpu-migrations,sched:sched_wakeup"
for s in epoll_wait read recvfrom recvmsg write writev sendmsg futex; do
    events="$events,syscalls:sys_enter_$s"
done

for t in 1 2 2p; do
    placement=
    [ "$t" != 2p ] || placement='placement = "traffic"'
    http="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    start_namewayd "[faces]
unix = \"$dir/nfd.sock\"
tcp = []
udp = []
[forwarder]
threads = ${t%p}
$placement
[http]
listen = \"127.0.0.1:$http\""
    perf stat --per-thread -x, -e "$events" -p "$pid" -o "$dir/stat$t" &
    perf_pid=$!
    record_pid=
    if [ -n "${NAMEWAY_PERF_RECORD:-}" ]; then
        perf record -q -g -p "$pid" -o "$dir/rec$t" 2>/dev/null &
        record_pid=$!
    fi
    bench_pids="$perf_pid $record_pid"
    sleep 0.3
    target/release/nameway --transport "unix://$dir/nfd.sock" bench --consumers "$consumers" \
        --producers "$producers" \
        --interests "$exchanges" --warm-up "$warm" --window 16 --components 4 --payload 100 \
        --runs 1 --json > "$dir/bench$t"
    kill -INT "$perf_pid" $record_pid
    wait "$perf_pid" $record_pid || true
    python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
        "http://127.0.0.1:$http/metrics" > "$dir/metrics$t" || : > "$dir/metrics$t"
    stop_namewayd
    rate="$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["results"][0]["median_exchanges_per_s"]))' "$dir/bench$t")"
    printf '\nthreads = %s: %d exchanges (%d measured at %s exchanges/s), per exchange:\n' \
        "$t" "$total" "$exchanges" "$rate"
    python3 - "$dir/stat$t" "$total" <<'EOF'
import collections, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) < 4 or line.startswith("#"):
        continue
    thread, value, event = f[0], f[1], f[3]
    try:
        rows[thread][event.split(":")[-1].replace("sys_enter_", "")] = float(value)
    except ValueError:
        pass
n = float(sys.argv[2])
cols = ["task-clock", "context-switches", "cpu-migrations", "sched_wakeup", "epoll_wait",
        "read", "recvfrom", "recvmsg", "write", "writev", "sendmsg", "futex"]
names = ["CPU µs", "ctx sw", "migr", "wake-ups", "epoll", "read", "recvfrom", "recvmsg",
         "write", "writev", "sendmsg", "futex"]
print("%-24s" % "thread" + "".join("%10s" % c for c in names))
tot = collections.Counter()
for thread, ev in sorted(rows.items()):
    if ev.get("task-clock", 0) < 1:
        continue
    vals = [ev.get(c, 0) for c in cols]
    vals[0] = vals[0] * 1000  # task-clock is in ms
    tot.update(dict(zip(cols, vals)))
    print("%-24s" % thread + "".join("%10.3f" % (v / n) for v in vals))
print("%-24s" % "all threads" + "".join("%10.3f" % (tot[c] / n) for c in cols))
EOF
    # What crossed between the shards (`nameway_shard_packets`, the dispatch counters).
    python3 - "$dir/metrics$t" "$total" <<'EOF'
import re, sys
n = float(sys.argv[2])
per = {}
for line in open(sys.argv[1]):
    m = re.match(r'nameway_shard_packets_total\{(.*)\} (\d+)', line)
    if m:
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        per.setdefault(labels.get("shard", "?"), {})[labels.get("kind", "?")] = int(m.group(2))
for shard, kinds in sorted(per.items()):
    print("shard %s: packets per exchange: %s" % (shard, ", ".join(
        "%s %.3f" % (k, v / n) for k, v in sorted(kinds.items()))))
EOF
    if [ -n "${NAMEWAY_PERF_RECORD:-}" ]; then
        perf report -i "$dir/rec$t" --no-children --sort sym --stdio 2>/dev/null \
            | grep -E '^ +[0-9.]+%' | head -25 || true
    fi
done
