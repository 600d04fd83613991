#!/usr/bin/env bash
# Congestion control over an emulated bottleneck: `nameway get` under each controller against
# ndnget's AIMD and CUBIC pipelines, on the same path in the same run.
#
#   consumer --unix-- namewayd A ==udp== namewayd B --unix-- producer
#
# B's egress toward A (the Data direction) is a RATE_MBPS link with a drop-tail buffer of
# QUEUE_KIB and DELAY_MS one-way delay; A's egress toward B (Interests) has DELAY_MS too, so the
# base RTT is 2 x DELAY_MS. Both emulated by the faces' fault injector ([faces.fault]; this
# kernel has no netem). Prints per controller the median goodput, link utilization (goodput /
# rate), retransmissions and average RTT (queueing shows as RTT above the base) over RUNS
# fetches of a SIZE_MIB object with PAYLOAD-byte segments, and the buffer drops counted by B.
#
#   bash scripts/bench-wan.sh          # RATE_MBPS=100 DELAY_MS=10 QUEUE_KIB=256 SIZE_MIB=16 RUNS=3
#   LOSS=0.01 bash scripts/bench-wan.sh   # plus 1 % random loss on the bottleneck
#   CCS=cubic NDNGET= PAIRS= VERBOSE=1 bash scripts/bench-wan.sh   # one controller, every summary
#   MANIFEST=256 NDNGET= PAIRS= bash scripts/bench-wan.sh   # + Ed25519 manifests, ratio to unsigned
#
# Then PAIRS: two fetches of different objects started together; while both run, each flow's
# rate (Data bytes its producer hands to B, sampled every 50 ms: the tools' own goodputs cover
# different spans), their sum against the link, and Jain's fairness index (1 = equal shares,
# 0.5 = one takes all); medians of RUNS (scripts/bench-wan-pair.py).
#
# ndnget/ndnserve come from ndn-tools ($NAMEWAY_NFD, default ~/nameway-nfd, installed by
# scripts/build-nfd.sh); without them only nameway's controllers are measured.
set -euo pipefail

RATE_MBPS="${RATE_MBPS:-100}"
DELAY_MS="${DELAY_MS:-10}"
QUEUE_KIB="${QUEUE_KIB:-256}"
LOSS="${LOSS:-0}"
SIZE_MIB="${SIZE_MIB:-16}"
PAYLOAD="${PAYLOAD:-8000}"
RUNS="${RUNS:-3}"
CCS="${CCS-aimd cubic delay}"          # nameway's controllers to run
NDNGET="${NDNGET-aimd cubic}"          # ndnget's pipelines to run (empty: none)
VERBOSE="${VERBOSE:-0}"                 # 1: every fetch's summary on stderr
MANIFEST="${MANIFEST-}"                 # N: also Ed25519 manifests of N, verified, each round
# Two fetches at once sharing the bottleneck: "X+Y" with X, Y a nameway controller or
# ndnget:PIPELINE (empty: none).
PAIRS="${PAIRS-cubic+cubic delay+cubic aimd+ndnget:aimd cubic+ndnget:cubic}"
NFD_DIR="${NAMEWAY_NFD:-$HOME/nameway-nfd}"

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init
bin="$repo/target/release"
head -c $((SIZE_MIB << 20)) /dev/urandom > "$dir/obj"

port="$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# B: the producer's forwarder; its link toward A is the bottleneck.
printf '[log]\nlevel = "warn"\n[faces]\nunix = "%s"\ntcp = []\nudp = ["127.0.0.1:%s"]\n[faces.fault]\nrate_mbps = %s\nqueue_kib = %s\ndelay_ms = %s\nloss = %s\nseed = 7\n[cs]\nserve = false\nadmit = false\n' \
    "$dir/b.sock" "$port" "$RATE_MBPS" "$QUEUE_KIB" "$DELAY_MS" "$LOSS" > "$dir/b.toml"
"$bin/namewayd" -c "$dir/b.toml" 2>"$dir/b.log" &
bench_pids="${bench_pids:-} $!"
for _ in $(seq 200); do [ -S "$dir/b.sock" ] && break; sleep 0.05; done
[ -S "$dir/b.sock" ] || { cat "$dir/b.log" >&2; exit 1; }
# A: the consumer's forwarder (start_namewayd: $dir/nfd.sock, $pid).
start_namewayd "[faces]
unix = \"$dir/nfd.sock\"
tcp = []
udp = [\"127.0.0.1:0\"]
[faces.fault]
delay_ms = $DELAY_MS
[cs]
serve = false
admit = false
[[face]]
uri = \"udp4://127.0.0.1:$port\"
[[route]]
prefix = \"/wan\"
face = \"udp4://127.0.0.1:$port\""

a=(--transport "unix://$dir/nfd.sock")
b=(--transport "unix://$dir/b.sock")
# serve_b PREFIX TAG ARGS...: `nameway put` of the object behind B; sets $served to its
# versioned name (not a subshell, so the producer's pid reaches bench_pids for the exit trap).
serve_b() {
    local prefix="$1" tag="$2"
    shift 2
    "$bin/nameway" "${b[@]}" put "$dir/obj" "$prefix" --payload "$PAYLOAD" --json "$@" \
        > "$dir/put-$tag.out" 2>"$dir/put-$tag.err" &
    bench_pids="${bench_pids:-} $!"
    for _ in $(seq 600); do [ -s "$dir/put-$tag.out" ] && break; sleep 0.1; done
    served="$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['name'])" "$dir/put-$tag.out")"
}
serve_b /wan/nw 1
name="$served"
# A second object for the pairs (the same one would be fetched once: A's PIT aggregates).
serve_b /wan/nw2 2
name2="$served"
if [ -n "$MANIFEST" ]; then
    "$bin/nameway" "${b[@]}" key generate ed25519 "$dir/ed.key" > /dev/null
    serve_b /wan/m m --sign ed25519 --key "$dir/ed.key" --manifest "$MANIFEST"
    name_m="$served"
fi

queue_drops() {
    "$bin/nameway" "${b[@]}" face list --json \
        | python3 -c "import json,sys; print(sum(f.get('link_drops', {}).get('fault-queue', 0) for f in json.load(sys.stdin)))"
}

# summary LABEL FILE...: one line from "goodput retx rtt" lines.
summary() {
    local label="$1"
    shift
    python3 - "$label" "$RATE_MBPS" "$@" <<'EOF'
import statistics, sys
label, rate, files = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
rows = [tuple(map(float, open(f).read().split())) for f in files]
g, r, t, d = (statistics.median(c) for c in zip(*rows))
print(f"{label:<28} {g:9.1f} {100 * g / rate:7.0f}% {r:8.0f} {t:9.1f} {d:8.0f}")
EOF
}

base_rtt=$((2 * DELAY_MS))
printf 'bottleneck %s Mbit/s, buffer %s KiB, base RTT %s ms, loss %s; %s MiB in %s-B segments, medians of %s\n' \
    "$RATE_MBPS" "$QUEUE_KIB" "$base_rtt" "$LOSS" "$SIZE_MIB" "$PAYLOAD" "$RUNS"
printf '%-28s %9s %8s %8s %9s %8s\n' consumer "Mbit/s" "of link" retx "RTT ms" "drops"

# get_row OUT NAME CC ARGS...: one fetch, checked; "goodput retx rtt drops" into OUT.
get_row() {
    local out="$1" target="$2" cc="$3"
    shift 3
    local d0 d1
    d0="$(queue_drops)"
    "$bin/nameway" "${a[@]}" get "$target" --cc "$cc" -o "$dir/got" --json "$@" > "$dir/get.json"
    [ "$VERBOSE" = 1 ] && cat "$dir/get.json" >&2
    cmp -s "$dir/obj" "$dir/got" || { echo "bench-wan: fetched object differs" >&2; exit 1; }
    d1="$(queue_drops)"
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['goodput_mbps'], j['retransmissions'], j['rtt_avg_ms'], $d1 - $d0)" \
        "$dir/get.json" > "$out"
}

for cc in $CCS; do
    files=()
    mfiles=()
    for i in $(seq "$RUNS"); do
        get_row "$dir/$cc.$i" "$name" "$cc"
        files+=("$dir/$cc.$i")
        if [ -n "$MANIFEST" ]; then
            get_row "$dir/$cc.m.$i" "$name_m" "$cc" --key "$dir/ed.key.pub"
            mfiles+=("$dir/$cc.m.$i")
        fi
    done
    summary "nameway get --cc $cc" "${files[@]}"
    if [ -n "$MANIFEST" ]; then
        summary "  manifests of $MANIFEST" "${mfiles[@]}"
        python3 - "${files[@]}" "${mfiles[@]}" <<'EOF'
import statistics, sys
n = (len(sys.argv) - 1) // 2
g = [float(open(f).read().split()[0]) for f in sys.argv[1:]]
print(f"  {'ratio to unsigned (same rounds)':<26} {statistics.median(m / u for u, m in zip(g[:n], g[n:])):9.2f}")
EOF
    fi
done

have_ndn=0
if [ -n "$NDNGET" ] || [[ "$PAIRS" == *ndnget* ]]; then
    if [ -f "$NFD_DIR/env.sh" ]; then
        # shellcheck disable=SC1091
        source "$NFD_DIR/env.sh"
        NDN_CLIENT_TRANSPORT="unix://$dir/b.sock" ndnserve -q -s "$PAYLOAD" \
            -S id:/localhost/identity/digest-sha256 /wan/ndn < "$dir/obj" &
        bench_pids="${bench_pids:-} $!"
        sleep 3
        have_ndn=1
    else
        echo "ndnget skipped: $NFD_DIR/env.sh not found (run scripts/build-nfd.sh)"
    fi
fi

# ndnget_line FILE DROPS: "goodput retx rtt drops" from ndnget's summary on stderr:
# "Goodput: 93.2 Mbit/s", "Retransmitted segments: 12 (0.1%), ...", "RTT min/avg/max = 20.1/25.3/40.2 ms".
ndnget_line() {
    awk -v drops="$2" '
        /^Goodput:/ { v = $2; u = $3; if (u ~ /^G/) v *= 1000; else if (u ~ /^k/) v /= 1000; g = v }
        /^Retransmitted segments:/ { r = $3 }
        /^RTT min\/avg\/max/ { split($4, t, "/"); rtt = t[2] }
        END { print g, r, rtt, drops }' "$1"
}

if [ "$have_ndn" = 1 ]; then
    for p in $NDNGET; do
        files=()
        for i in $(seq "$RUNS"); do
            d0="$(queue_drops)"
            NDN_CLIENT_TRANSPORT="unix://$dir/nfd.sock" ndnget -p "$p" /wan/ndn 2>"$dir/ndnget.err" > "$dir/got"
            cmp -s "$dir/obj" "$dir/got" || { echo "bench-wan: ndnget object differs" >&2; exit 1; }
            [ "$VERBOSE" = 1 ] && cat "$dir/ndnget.err" >&2
            d1="$(queue_drops)"
            ndnget_line "$dir/ndnget.err" $((d1 - d0)) > "$dir/ndn-$p.$i"
            files+=("$dir/ndn-$p.$i")
        done
        summary "ndnget -p $p" "${files[@]}"
    done
fi

[ -n "$PAIRS" ] && printf '\n%-36s %9s %9s %8s %6s\n' "two fetches at once, while both run" "first" "second" "of link" "Jain"
for pair in $PAIRS; do
    x="${pair%%+*}"
    y="${pair#*+}"
    if [[ "$pair" == *ndnget* ]] && [ "$have_ndn" != 1 ]; then continue; fi
    for i in $(seq "$RUNS"); do
        python3 "$repo/scripts/bench-wan-pair.py" "$bin/nameway" "$dir/nfd.sock" "$dir/b.sock" \
            "$dir/obj" "$RATE_MBPS" "$x" "$y" "$name" "$name2" > "$dir/pair.$i"
        [ "$VERBOSE" = 1 ] && cat "$dir/pair.$i" >&2
    done
    python3 - "$x + $y" "$dir" "$RUNS" <<'EOF'
import statistics, sys
label, d, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [list(map(float, open(f"{d}/pair.{i}").read().split())) for i in range(1, runs + 1)]
x, y, link, jain, _ = (statistics.median(c) for c in zip(*rows))
print(f"{label:<36} {x:9.1f} {y:9.1f} {link:7.0f}% {jain:6.2f}")
EOF
done
