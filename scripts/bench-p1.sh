#!/usr/bin/env bash
# P1: forwarder CPU per exchange, namewayd against NFD in the same run (issue 32).
#
# The load is ndn-tools' own: ndnserve publishing SEGMENTS 100-byte segments (DigestSha256), and
# ndnget fetching them with a fixed window of 16, both over the forwarder's Unix socket. Every run
# publishes under a new name, so each exchange goes to the producer (the content store admits the
# Data, as a deployed forwarder's would). The forwarders take turns, RUNS times each; each run
# reports the forwarder's CPU time (perf's task-clock on its PID, all threads) divided by the
# segments, the system calls and context switches per exchange (perf stat), and the medians
# close the report with the ratio NFD / namewayd. Then the same comparison with `nameway bench`
# as the load, over Unix and over UDP.
#
#   bash scripts/bench-p1.sh [SEGMENTS=100000] [RUNS=3]
#   NAMEWAY_NFD=/path  where scripts/build-nfd.sh installed NFD and ndn-tools (default ~/nameway-nfd)
#   NAMEWAY_NO_BUILD=1 use target/release as it is
#   PROFILE=1          also `perf record -g` namewayd in its last run; the report goes to
#                      $PROFILE_OUT (default ./p1-profile.txt)
#   NAMEWAY_BIN_B=path A/B: a second namewayd binary ("namewayd-b") runs beside the first
#                      ($NAMEWAY_BIN, default target/release/namewayd), the three forwarders
#                      taking turns in every round; the report gives both against NFD and B / A
#   NAMEWAY_B_CONFIG=toml  more configuration for namewayd-b, appended to its file (the binary
#                      may then be the same as A's), e.g. $'[forwarder]\ncoalesce = "auto"'
#                      (not [log], [faces] or [http]: the script sets them); B's coalescing
#                      counters (/metrics) are printed after each load
set -euo pipefail
segments="${1:-100000}"
runs="${2:-3}"
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
nfd_home="${NAMEWAY_NFD:-$HOME/nameway-nfd}"
if [ ! -x "$nfd_home/nfd-start" ]; then
    echo "bench-p1: NFD not built ($nfd_home/nfd-start missing): run bash scripts/build-nfd.sh" >&2
    exit 1
fi
command -v perf >/dev/null || { echo "bench-p1: perf not found (apt install linux-perf)" >&2; exit 1; }
bench_init
# shellcheck disable=SC1091
source "$nfd_home/env.sh"

head -c $((segments * 100)) /dev/urandom > "$dir/obj"

udp_port=$((20000 + RANDOM % 20000))
start_namewayd "[faces]
unix = \"$dir/nfd.sock\"
tcp = []
udp = [\"127.0.0.1:$udp_port\"]"
nw_pid=$pid
nfd_dir="$dir/nfd"
nfd_pid="$("$nfd_home/nfd-start" "$nfd_dir")"
bench_pids="$nfd_pid"
forwarders="nfd namewayd"
if [ -n "${NAMEWAY_BIN_B:-}" ]; then
    # The second daemon, on a socket and UDP port of its own, started as start_namewayd does.
    b_dir="$dir/b"
    mkdir -p "$b_dir"
    b_udp_port=$((udp_port + 1))
    b_http_port=$((udp_port + 2))
    printf '[log]\nlevel = "warn"\n[faces]\nunix = "%s"\ntcp = []\nudp = ["127.0.0.1:%d"]\n[http]\nlisten = "127.0.0.1:%d"\n' \
        "$b_dir/nfd.sock" "$b_udp_port" "$b_http_port" > "$b_dir/d.toml"
    [ -z "${NAMEWAY_B_CONFIG:-}" ] || printf '%s\n' "$NAMEWAY_B_CONFIG" >> "$b_dir/d.toml"
    "$NAMEWAY_BIN_B" -c "$b_dir/d.toml" 2>"$b_dir/log" &
    nwb_pid=$!
    bench_pids="$bench_pids $nwb_pid"
    for _ in $(seq 200); do [ -S "$b_dir/nfd.sock" ] && break; sleep 0.05; done
    [ -S "$b_dir/nfd.sock" ] || { echo "bench-p1: namewayd-b did not start:" >&2; cat "$b_dir/log" >&2; exit 1; }
    forwarders="$forwarders namewayd-b"
fi

# The system calls a forwarder makes on its packet path (epoll or poll based, either daemon).
events="task-clock,context-switches,raw_syscalls:sys_enter"
for s in epoll_wait epoll_pwait recvfrom recvmsg read readv sendmsg sendto write writev futex; do
    events="$events,syscalls:sys_enter_$s"
done

# run FORWARDER PID SOCKET TAG: one ndnserve/ndnget transfer; appends a line to $dir/res.FORWARDER.
run() {
    local fw="$1" fpid="$2" sock="$3" tag="$4" name="/p1/$4"
    NDN_CLIENT_TRANSPORT="unix://$sock" ndnserve -q -s 100 -S id:/localhost/identity/digest-sha256 \
        "$name" < "$dir/obj" &
    local server=$!
    bench_pids="$bench_pids $server"
    # Wait until the prefix is registered: a one-segment peek answers.
    for _ in $(seq 100); do
        NDN_CLIENT_TRANSPORT="unix://$sock" timeout 2 ndnpeek -p -w 500 "$name" >/dev/null 2>&1 && break
        sleep 0.1
    done
    perf stat -x, -e "$events" -p "$fpid" -o "$dir/perf.$tag" &
    local perf_pid=$!
    local recorder=""
    if [ -n "${PROFILE:-}" ] && [ "$fw" = namewayd ] && [ "$tag" = "namewayd-$runs" ]; then
        perf record -g -o "$dir/perf.data" -p "$fpid" 2>/dev/null &
        recorder=$!
    fi
    sleep 0.2
    local t0 t1
    t0="$(date +%s.%N)"
    NDN_CLIENT_TRANSPORT="unix://$sock" ndnget -p fixed -s 16 "$name" > "$dir/got" 2>"$dir/ndnget.err"
    t1="$(date +%s.%N)"
    kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true
    if [ -n "$recorder" ]; then kill -INT "$recorder"; wait "$recorder" 2>/dev/null || true; fi
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    cmp -s "$dir/obj" "$dir/got" || { echo "bench-p1: $fw: ndnget's object differs" >&2; exit 1; }
    # perf -x, lines: value,unit,event,...
    python3 - "$dir/perf.$tag" "$segments" "$fw" "$t0" "$t1" >> "$dir/res.$fw" <<'PY'
import sys
path, n, fw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rate = n / (float(sys.argv[5]) - float(sys.argv[4]))
v = {}
for line in open(path):
    f = line.strip().split(",")
    if len(f) > 2 and f[0] and f[0][0].isdigit():
        v[f[2]] = float(f[0])
sc = lambda s: sum(v.get(f"syscalls:sys_enter_{x}", 0) for x in s) / n
print(f"{v['task-clock'] * 1000 / n:.3f} {v['context-switches'] / n:.3f} "
      f"{v['raw_syscalls:sys_enter'] / n:.3f} {sc(['epoll_wait', 'epoll_pwait']):.3f} "
      f"{sc(['recvfrom', 'recvmsg', 'read', 'readv']):.3f} "
      f"{sc(['sendmsg', 'sendto', 'write', 'writev']):.3f} {sc(['futex']):.3f} {rate:.0f}")
PY
}

for i in $(seq "$runs"); do
    run nfd "$nfd_pid" "$nfd_dir/nfd.sock" "nfd-$i"
    run namewayd "$nw_pid" "$dir/nfd.sock" "namewayd-$i"
    if [ -n "${NAMEWAY_BIN_B:-}" ]; then
        run namewayd-b "$nwb_pid" "$b_dir/nfd.sock" "namewayd-b-$i"
    fi
done

printf '\nP1: %d segments of 100 B, ndnget -p fixed -s 16, %d runs each, per exchange:\n' "$segments" "$runs"
printf '%-9s %11s %9s %9s %11s %9s %9s %9s %9s\n' forwarder "CPU µs" "ctx sw" syscalls epoll_wait reads writes futex "exch/s"
for fw in $forwarders; do
    sed "s/^/$fw /" "$dir/res.$fw" | awk '{printf "%-9s %11.2f %9.3f %9.3f %11.3f %9.3f %9.3f %9.3f %9d\n", $1,$2,$3,$4,$5,$6,$7,$8,$9}'
done
nfd_cpu="$(median $(cut -d' ' -f1 "$dir/res.nfd"))"
nw_cpu="$(median $(cut -d' ' -f1 "$dir/res.namewayd"))"
printf 'medians: NFD %.2f µs, namewayd %.2f µs of CPU per exchange: NFD / namewayd = %.1fx\n' \
    "$nfd_cpu" "$nw_cpu" "$(python3 -c "print($nfd_cpu / $nw_cpu)")"
if [ -n "${NAMEWAY_BIN_B:-}" ]; then
    b_cpu="$(median $(cut -d' ' -f1 "$dir/res.namewayd-b"))"
    printf 'medians: namewayd-b %.2f µs: NFD / namewayd-b = %.1fx, namewayd-b / namewayd = %.3f\n' \
        "$b_cpu" "$(python3 -c "print($nfd_cpu / $b_cpu)")" "$(python3 -c "print($b_cpu / $nw_cpu)")"
fi
printf 'medians of ndnget'"'"'s exchanges/s:'
for fw in $forwarders; do
    printf ' %s %.0f' "$fw" "$(median $(cut -d' ' -f8 "$dir/res.$fw"))"
done
printf '\n'
# b_coalescing: namewayd-b's coalescing counters so far (none when it does not coalesce).
b_coalescing() {
    [ -n "${NAMEWAY_BIN_B:-}" ] || return 0
    python3 - "$b_http_port" <<'PY'
import sys, urllib.request
try:
    text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
except OSError as e:
    print(f"namewayd-b: no /metrics ({e})")
    sys.exit(0)
lines = [l for l in text.splitlines() if l.startswith("nameway_coalesce")]
print("namewayd-b coalescing: " + ("; ".join(lines) if lines else "off"))
PY
}
b_coalescing

# nameway bench: consumers and producer in one process (window 16, 100-B payloads, 4
# components), over Unix, and with the consumers over UDP (the producer stays on Unix). NFD runs
# in a network namespace of its own (scripts/build-nfd.sh's nfd-start), so the UDP consumers
# join it there.
bench() { # FORWARDER PID CONSUMER-TRANSPORT PRODUCER-TRANSPORT [nsenter...]
    local fw="$1" fpid="$2" ct="$3" pt="$4"
    shift 4
    "$@" target/release/nameway --transport "$ct" bench --producer-transport "$pt" --consumers 1 \
        --interests "$segments" --window 16 --components 4 --payload 100 --runs "$runs" \
        --daemon-pid "$fpid" --json 2>/dev/null \
        | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["daemon_cpu_us_per_exchange"])'
}
printf '\nnameway bench, 1 consumer, window 16, 100-B payloads, %d x %d exchanges, daemon CPU per exchange:\n' "$runs" "$segments"
nfd_netns=(nsenter --net="/proc/$nfd_pid/ns/net")
for transport in unix udp; do
    if [ "$transport" = unix ]; then
        n="$(bench nfd "$nfd_pid" "unix://$nfd_dir/nfd.sock" "unix://$nfd_dir/nfd.sock")"
        w="$(bench namewayd "$nw_pid" "unix://$dir/nfd.sock" "unix://$dir/nfd.sock")"
        [ -z "${NAMEWAY_BIN_B:-}" ] ||
            wb="$(bench namewayd-b "$nwb_pid" "unix://$b_dir/nfd.sock" "unix://$b_dir/nfd.sock")"
    else
        n="$(bench nfd "$nfd_pid" "udp://127.0.0.1:6363" "unix://$nfd_dir/nfd.sock" "${nfd_netns[@]}")"
        w="$(bench namewayd "$nw_pid" "udp://127.0.0.1:$udp_port" "unix://$dir/nfd.sock")"
        [ -z "${NAMEWAY_BIN_B:-}" ] ||
            wb="$(bench namewayd-b "$nwb_pid" "udp://127.0.0.1:$b_udp_port" "unix://$b_dir/nfd.sock")"
    fi
    printf '%-5s NFD %.2f µs, namewayd %.2f µs: NFD / namewayd = %.1fx\n' "$transport" "$n" "$w" \
        "$(python3 -c "print($n / $w)")"
    [ -z "${NAMEWAY_BIN_B:-}" ] ||
        printf '%-5s namewayd-b %.2f µs: NFD / namewayd-b = %.1fx, namewayd-b / namewayd = %.3f\n' \
            "$transport" "$wb" "$(python3 -c "print($n / $wb)")" "$(python3 -c "print($wb / $w)")"
done
b_coalescing

if [ -n "${PROFILE:-}" ] && [ -f "$dir/perf.data" ]; then
    out="${PROFILE_OUT:-$PWD/p1-profile.txt}"
    {
        echo "== by object (user space: namewayd and libc; kernel: [kernel.kallsyms])"
        perf report -i "$dir/perf.data" --no-children --sort dso -g none --stdio 2>/dev/null | grep '%'
        echo "== by symbol"
        perf report -i "$dir/perf.data" --no-children --sort dso,sym -g none --stdio 2>/dev/null | grep '%' | head -60
        echo "== where the kernel's context switches come from"
        perf report -i "$dir/perf.data" --no-children --sort sym -G --stdio 2>/dev/null \
            | grep -A25 'finish_task_switch' | head -40
    } > "$out"
    echo "profile of namewayd's last run: $out"
fi
