#!/usr/bin/env bash
# Resident memory per idle face: COUNT Unix connections, each sending one Interest for a name
# nobody serves and then staying open and silent (scripts/idle-faces.py), held against a
# release namewayd and, when scripts/build-nfd.sh has built it, against NFD in the same run.
# The daemon's RSS growth (/proc/PID/status) divided by COUNT, and how long `nameway status`
# and `nameway face list` take with the faces open (the median of TIMINGS runs of each, in
# milliseconds of wall-clock time, the CLI process's start included).
#
#   bash scripts/bench-idle-faces.sh [COUNT=8000] [TIMINGS=7]
#   NAMEWAY_NFD=/path/to/nfd-install bash scripts/bench-idle-faces.sh   # default ~/nameway-nfd
set -euo pipefail

COUNT="${1:-8000}"
TIMINGS="${2:-7}"
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init
ulimit -n $((COUNT + 4096)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"
holder="$repo/scripts/idle-faces.py"
nfd_home="${NAMEWAY_NFD:-$HOME/nameway-nfd}"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# hold PID SOCKET: sets $per_face (bytes per idle face) after COUNT idle connections to
# SOCKET, and $holder_pid (the process holding them; not in a subshell, so the exit trap
# kills it).
hold() {
    local target=$1 sock=$2 before after
    sleep 1
    before=$(rss_kib "$target")
    python3 "$holder" "$sock" "$COUNT" > "$dir/holder.out" 2>&1 &
    holder_pid=$!
    bench_pids="${bench_pids:-} $holder_pid"
    for _ in $(seq 1200); do grep -q ready "$dir/holder.out" 2>/dev/null && break; sleep 0.1; done
    grep -q ready "$dir/holder.out" || { echo "the holder did not get its connections" >&2; exit 1; }
    sleep 2
    after=$(rss_kib "$target")
    per_face=$(( (after - before) * 1024 / COUNT ))
}

ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
# median_ms COMMAND...: the median of TIMINGS runs of ms COMMAND (and every run, for the log).
median_ms() {
    local runs=() _
    for _ in $(seq "$TIMINGS"); do runs+=("$(ms "$@")"); done
    echo "$(median "${runs[@]}") (runs: ${runs[*]})"
}

start_namewayd "[faces]
unix = \"$dir/nfd.sock\"
tcp = []
udp = []"
hold "$pid" "$dir/nfd.sock"
nw_face=$per_face
# The daemon's own CPU while every face is idle (utime + stime from /proc, over 10 s): an idle
# face must cost no CPU (no timer, no polling).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
idle_t0=$(cpu_ticks "$pid")
sleep 10
idle_ms=$(( ($(cpu_ticks "$pid") - idle_t0) * 1000 / $(getconf CLK_TCK) ))
nw() { target/release/nameway --transport "unix://$dir/nfd.sock" "$@"; }
status_ms=$(median_ms nw status)
list_ms=$(median_ms nw face list --json)
faces=$(nw status --json | python3 -c "import json,sys; d=json.load(sys.stdin); print(d.get('faces') or d.get('n_faces') or '?')")
kill "$holder_pid" 2>/dev/null || true
stop_namewayd

printf 'idle faces: %s Unix connections, one Interest each, then silent\n' "$COUNT"
printf 'namewayd   %6s B per idle face, with %s faces open:\n' "$nw_face" "$faces"
printf '  CPU while idle            %s ms over 10 s\n' "$idle_ms"
printf '  nameway status            median %s ms\n' "$status_ms"
printf '  nameway face list --json  median %s ms\n' "$list_ms"

if [ -x "$nfd_home/nfd-start" ]; then
    nfd_dir="$dir/nfd"
    mkdir -p "$nfd_dir"
    nfd_pid=$("$nfd_home/nfd-start" "$nfd_dir")
    bench_pids="${bench_pids:-} $nfd_pid"
    # nfd-start runs NFD in a namespace of its own; its Unix socket is reachable from here.
    hold "$nfd_pid" "$nfd_dir/nfd.sock"
    nfd_face=$per_face
    kill "$holder_pid" "$nfd_pid" 2>/dev/null || true
    printf 'NFD        %6s B per idle face\n' "$nfd_face"
    python3 -c "print(f'namewayd / NFD: {$nw_face / $nfd_face:.2f}')"
else
    echo "NFD: not built ($nfd_home/nfd-start missing; bash scripts/build-nfd.sh builds it)"
fi
