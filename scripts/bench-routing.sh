#!/usr/bin/env bash
# Secure routing's benchmarks (docs/routing.md, "Figures"), through release namewayd processes
# on loopback. Every figure is a median over RUNS rounds; where there is a baseline it is
# measured in the same round and the ratio reported is the median of the same-round ratios.
#
#   R1  relay CPU per exchange (`nameway bench`, 1766-B payloads): three relays, routing off,
#       routing secure, and routing off again (the A/A control), each in front of two producer
#       forwarders, one over a plain UDP face and one over a link-wide secure face (AEAD,
#       xforro14-poly1305). They take turns in a rotating order each round.
#   R2  a known flow's exchange rate through a router with secure routing (hold mode) while
#       another application sends Interests for self-certifying names nobody announced (each a
#       fresh miss: a RIB look-up, held or Nacked), at the miss fractions of FRACTIONS.
#   R4  the time to fetch a one-segment object by a self-certifying name not resolved yet at the
#       consumer's router (`nameway get`), hold mode against nack mode (get waits out RetryAfter);
#       the baseline is the same fetch again, the route known.
#   R5  a producer moves: its put stops on one router and starts on another; the time from the
#       new put's start (and from its announcement being ready) until a consumer's Interest
#       through a third router is answered again.
#
#   bash scripts/bench-routing.sh                 # RUNS=5 BENCHES="r1 r2 r4 r5"
#   RUNS=3 BENCHES=r1 R1_INTERESTS=100000 bash scripts/bench-routing.sh
set -euo pipefail

RUNS="${RUNS:-5}"
BENCHES="${BENCHES:-r1 r2 r4 r5}"
INTERESTS="${INTERESTS:-30000}"
# R1's exchanges per bench: enough for about a CPU second, as /proc counts CPU in 10-ms ticks.
R1_INTERESTS="${R1_INTERESTS:-200000}"
FRACTIONS="${FRACTIONS:-0 0.25 0.5 0.75 0.9}"

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init
bin="$repo/target/release"
RIB=/example/32=RIB

port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# nwd NAME TOML: starts namewayd NAME (Unix socket $dir/NAME.sock, UDP and TCP on 127.0.0.1 at a
# free port, kept in ${port_NAME}, no caching) with TOML appended; its PID in ${pid_NAME}.
nwd() {
    local name="$1" p
    p="$(port)"
    rm -f "$dir/$name.sock"
    printf '[log]\nlevel = "warn"\n[faces]\nunix = "%s"\ntcp = ["127.0.0.1:%s"]\nudp = ["127.0.0.1:%s"]\n[cs]\nserve = false\nadmit = false\n%s\n' \
        "$dir/$name.sock" "$p" "$p" "$2" > "$dir/$name.toml"
    "$bin/namewayd" -c "$dir/$name.toml" 2>"$dir/$name.log" &
    bench_pids="${bench_pids:-} $!"
    printf -v "pid_$name" '%s' "$!"
    printf -v "port_$name" '%s' "$p"
    for _ in $(seq 200); do [ -S "$dir/$name.sock" ] && return 0; sleep 0.05; done
    echo "namewayd $name did not start:" >&2; cat "$dir/$name.log" >&2; return 1
}
# nw NAME ARGS...: nameway against daemon NAME.
nw() { local name="$1"; shift; "$bin/nameway" --transport "unix://$dir/$name.sock" "$@"; }
json() { python3 -c "import json,sys; v=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
security() { printf '[security]\nidentity = "%s"\n' "$dir/$1.id"; }
# routing NAME EXTRA: a [routing] section, mode secure, the RIB reached at daemon "rib" once it
# runs (unless NAME is it).
routing() {
    printf '[routing]\nmode = "secure"\nidentity = "%s"\n%s\n[[routing.rib]]\nprefix = "%s"\n' \
        "$dir/$1.rk" "$2" "$RIB"
    if [ "$1" != rib ] && [ -n "${port_rib:-}" ]; then
        printf 'uri = "udp4://127.0.0.1:%s"\n' "$port_rib"
    fi
}
rib() { nwd rib "$(routing rib "rib_service = true
database = \"$dir/rib.redb\"")"; }
registered() {
    nw rib routing list --json | python3 -c "
import json,sys; sys.exit(0 if any(r['name'] == sys.argv[1] for r in json.load(sys.stdin)['list']['registry']) else 1)" "$1"
}
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# ---------------------------------------------------------------------------------------- R1
r1() {
    echo "== R1: relay CPU per exchange, 1766-B payloads, routing off vs secure"
    nwd bp ""
    nwd bs "$(security bs)"
    nwd a0 "$(security a0)"
    nwd a1 "$(security a1)
$(routing a1 "")"
    # a2: a second relay with routing off, the A/A control (its ratio to a0 is the noise floor)
    nwd a2 "$(security a2)"
    for a in a0 a1 a2; do
        nw "$a" neighbour trust "$(nw bs identity show)" >/dev/null
        nw bs neighbour trust "$(nw "$a" identity show)" >/dev/null
        local fp fs
        fp="$(nw "$a" face create "udp4://127.0.0.1:$port_bp" --json | json 'v["face_id"]')"
        fs="$(nw "$a" face create "udp4://127.0.0.1:$port_bs" --secure --link-wide --json | json 'v["face_id"]')"
        nw "$a" route add /plain "$fp" >/dev/null
        nw "$a" route add /aead "$fs" >/dev/null
    done
    for _ in $(seq 100); do
        [ "$(nw bs neighbour list --json | grep -o established | wc -l)" -ge 3 ] && break
        sleep 0.1
    done
    : > "$dir/r1"
    for round in $(seq "$RUNS"); do
        for link in plain aead; do
            local b=bp
            [ "$link" = aead ] && b=bs
            # the relays take turns in a rotating order, so none is always first
            local order=(a0 a1 a2)
            order=("${order[@]:$((round % 3))}" "${order[@]:0:$((round % 3))}")
            for a in "${order[@]}"; do
                local pid_var="pid_$a"
                nw "$a" bench --producer-transport "unix://$dir/$b.sock" --prefix "/$link" \
                    --payload 1766 --interests "$R1_INTERESTS" --runs 1 --daemon-pid "${!pid_var}" --json \
                    | json 'v["results"][0]["daemon_cpu_us_per_exchange"], v["results"][0]["median_exchanges_per_s"], v["results"][0]["timeouts"]' \
                    | tr -d '(),' | { read -r cpu rate lost; echo "$round $link $a $cpu $rate $lost"; } >> "$dir/r1"
            done
        done
    done
    python3 - "$dir/r1" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
cpu = {(r, link, a): float(c) for r, link, a, c, _, _ in rows}
rate = {(r, link, a): float(x) for r, link, a, _, x, _ in rows}
lost = sum(int(l) for *_, l in rows)
rounds = sorted({r[0] for r in rows}, key=int)
print(f"{'link':<6} {'relay':<16} {'relay CPU us/exch':>18} {'exch/s':>9} {'vs a0':>7}")
for link in ("plain", "aead"):
    for a, mode in (("a0", "routing off"), ("a1", "routing secure"), ("a2", "off (control)")):
        c = statistics.median(cpu[(r, link, a)] for r in rounds)
        x = statistics.median(rate[(r, link, a)] for r in rounds)
        ratio = statistics.median(cpu[(r, link, a)] / cpu[(r, link, "a0")] for r in rounds)
        print(f"{link:<6} {mode:<16} {c:18.2f} {x:9.0f} {ratio:7.3f}")
print(f"timeouts in all runs: {lost}")
PY
    for d in a0 a1 a2 bp bs; do local v="pid_$d"; stop "${!v}"; done
}

# ---------------------------------------------------------------------------------------- R2
# The miss generator: Interests for names nobody serves over the router's Unix socket at RATE
# per second for SECS seconds, reading (and dropping) what comes back; prints the rate sent.
# KIND sc: /32=sc/<random 32 bytes>/x, each a fresh miss of secure routing; KIND plain:
# /nosc/<random 32 bytes>/x, a plain FIB miss (Nack NoRoute), the same load without routing.
MISSGEN='
import os, socket, struct, sys, threading, time
path, rate, secs, kind = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def tlv(t, v):
    n = len(v)
    return bytes([t]) + (bytes([n]) if n < 253 else b"\xfd" + struct.pack(">H", n)) + v
head = tlv(32, b"sc") if kind == "sc" else tlv(8, b"nosc")
tail = tlv(8, b"x")
life = tlv(12, struct.pack(">H", 2000))
def batch(n):
    r = os.urandom(36 * n)
    return b"".join(
        tlv(5, tlv(7, head + tlv(8, r[36 * i:36 * i + 32]) + tail) + tlv(10, r[36 * i + 32:36 * i + 36]) + life)
        for i in range(n))
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
def drain():
    try:
        while s.recv(1 << 16):
            pass
    except OSError:
        return
threading.Thread(target=drain, daemon=True).start()
sent, start = 0, time.monotonic()
while True:
    el = time.monotonic() - start
    if el >= secs:
        break
    due = int(el * rate) - sent
    if due <= 0:
        time.sleep(0.001)
        continue
    n = min(due, 256)
    s.sendall(batch(n))
    sent += n
print(sent / max(time.monotonic() - start, 1e-9))
'
r2() {
    echo "== R2: known-flow rate against the miss fraction (router hold mode)"
    rib
    nwd r "$(routing r "")"
    : > "$dir/r2"
    # The known flow alone first in each round: its rate K sets the miss rate K*f/(1-f). At
    # each fraction the same rate of plain no-route Interests is the same-round baseline.
    for round in $(seq "$RUNS"); do
        local k0="" f kind
        for f in $FRACTIONS; do
            for kind in sc plain; do
                local m=0 secs=0 out sent=0 gen=""
                if [ -n "$k0" ]; then
                    m="$(python3 -c "print($k0 * $f / (1 - $f))")"
                    # long enough to cover the whole bench, even at a third of its rate
                    secs="$(python3 -c "print(max(2.0, 3.0 * $INTERESTS / $k0))")"
                    python3 -c "$MISSGEN" "$dir/r.sock" "$m" "$secs" "$kind" > "$dir/missgen.out" &
                    gen=$!
                    sleep 0.3
                fi
                out="$(nw r bench --prefix /known --payload 1024 --interests "$INTERESTS" --runs 1 --warm-up 500 --json \
                    | json 'v["results"][0]["median_exchanges_per_s"]')"
                if [ -n "$gen" ]; then
                    wait "$gen" || true
                    sent="$(cat "$dir/missgen.out")"
                fi
                [ -z "$k0" ] && k0="$out"
                echo "$round $f $kind $out $sent" >> "$dir/r2"
                [ -z "$gen" ] && break
            done
        done
    done
    python3 - "$dir/r2" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
k = {(r, f, kind): float(x) for r, f, kind, x, _ in rows}
m = {(r, f, kind): float(y) for r, f, kind, _, y in rows}
rounds = sorted({r[0] for r in rows}, key=int)
fs = sorted({r[1] for r in rows}, key=float)
print(f"{'target':>6} {'sc misses/s':>12} {'reached':>8} {'known exch/s':>13} {'vs none':>8} "
      f"{'plain no-route/s':>17} {'known exch/s':>13} {'sc/plain':>9}")
for f in fs:
    if float(f) == 0:
        print(f"{0:6.2f} {0:12.0f} {0:8.2f} {statistics.median(k[(r, f, 'sc')] for r in rounds):13.0f} {1:8.3f}")
        continue
    med = lambda d, kind: statistics.median(d[(r, f, kind)] for r in rounds)
    reached = statistics.median(m[(r, f, "sc")] / (m[(r, f, "sc")] + k[(r, f, "sc")]) for r in rounds)
    vs0 = statistics.median(k[(r, f, "sc")] / k[(r, fs[0], "sc")] for r in rounds)
    ratio = statistics.median(k[(r, f, "sc")] / k[(r, f, "plain")] for r in rounds)
    print(f"{float(f):6.2f} {med(m, 'sc'):12.0f} {reached:8.2f} {med(k, 'sc'):13.0f} {vs0:8.3f} "
          f"{med(m, 'plain'):17.0f} {med(k, 'plain'):13.0f} {ratio:9.3f}")
PY
    echo "router's routing counters:"
    nw r status --json | json '{k: v for k, v in v["routing"].items() if k in ("lookups", "lookup_queries", "misses_held", "misses_nacked", "overloaded", "pending", "negative_hits")}'
    stop "$pid_r"; stop "$pid_rib"
}

# ---------------------------------------------------------------------------------------- R4/R5
# putsc ROUTER SC N: serves a one-segment object as SC/obj (SC: owner N's name) on ROUTER; its PID in $put_pid,
# the versioned name in $name.
putsc() {
    head -c 1000 /dev/urandom > "$dir/obj"
    rm -f "$dir/put.out"
    nw "$1" put "$dir/obj" "$2/obj" --sign ed25519 --key "$dir/owner$3.key" --json > "$dir/put.out" 2>"$dir/put.err" &
    put_pid=$!
    bench_pids="${bench_pids:-} $put_pid"
    for _ in $(seq 600); do [ -s "$dir/put.out" ] && break; sleep 0.01; done
    name="$(json 'v["name"]' < "$dir/put.out")"
}
get_ms() {
    local s e
    s=$(date +%s%N)
    nw "$1" get "$2" -o "$dir/got" --key "$dir/owner$3.key.pub" >/dev/null 2>"$dir/get.err" \
        || { echo "get through $1 failed:" >&2; cat "$dir/get.err" >&2; return 1; }
    e=$(date +%s%N)
    cmp -s "$dir/obj" "$dir/got" || { echo "fetched object differs" >&2; return 1; }
    python3 -c "print(($e - $s) / 1e6)"
}
r4() {
    echo "== R4: first-Interest latency, hold vs nack"
    rib
    nwd p "$(routing p "")"
    nwd ch "$(routing ch "")"
    nwd cn "$(routing cn 'miss = "nack"')"
    : > "$dir/r4"
    for round in $(seq "$RUNS"); do
        nw p key generate ed25519 "$dir/owner$round.key" >/dev/null
        local sc h1 h2 n1 n2
        sc="sc:$(owner_hex "$round")"
        putsc p "$sc" "$round"
        for _ in $(seq 200); do registered "$sc" && break; sleep 0.05; done
        # get of the unversioned name: its first Interest (version discovery) meets the miss.
        h1="$(get_ms ch "$sc/obj" "$round")"; h2="$(get_ms ch "$sc/obj" "$round")"
        n1="$(get_ms cn "$sc/obj" "$round")"; n2="$(get_ms cn "$sc/obj" "$round")"
        echo "$round $h1 $h2 $n1 $n2" >> "$dir/r4"
        stop "$put_pid"
    done
    python3 - "$dir/r4" <<'PY'
import statistics, sys
rows = [[float(x) for x in l.split()[1:]] for l in open(sys.argv[1])]
med = lambda i: statistics.median(r[i] for r in rows)
extra = lambda i: statistics.median(r[i] - r[i + 1] for r in rows)
print(f"{'mode':<6} {'first get ms':>13} {'again ms':>9} {'first - again ms':>17}")
print(f"{'hold':<6} {med(0):13.1f} {med(1):9.1f} {extra(0):17.1f}")
print(f"{'nack':<6} {med(2):13.1f} {med(3):9.1f} {extra(2):17.1f}")
print(f"nack/hold, first get (same-round ratio): {statistics.median(r[2] / r[0] for r in rows):.2f}")
PY
    for d in ch cn p rib; do local v="pid_$d"; stop "${!v}"; done
}

# owner_hex N: the key hash of owner N (SHA-256 of its SubjectPublicKeyInfo, PEM in .pub).
owner_hex() {
    python3 - "$dir/owner$1.key.pub" <<'PY'
import base64, hashlib, sys
text = open(sys.argv[1]).read()
body = "".join(l for l in text.splitlines() if l and not l.startswith("-----"))
print(hashlib.sha256(base64.b64decode(body)).hexdigest())
PY
}

r5() {
    echo "== R5: a producer moves to another router"
    rib
    nwd p1 "$(routing p1 "")"
    nwd p2 "$(routing p2 "")"
    nwd c "$(routing c "")"
    : > "$dir/r5"
    for round in $(seq "$RUNS"); do
        nw p1 key generate ed25519 "$dir/owner$round.key" >/dev/null
        local sc t0 t1 t2
        sc="sc:$(owner_hex "$round")"
        putsc p1 "$sc" "$round"
        for _ in $(seq 200); do registered "$sc" && break; sleep 0.05; done
        get_ms c "$sc/obj" "$round" >/dev/null
        stop "$put_pid"
        t0="$(now_ms)"
        putsc p2 "$sc" "$round"
        t1="$(now_ms)"
        local ok=0
        for _ in $(seq 1000); do
            if nw c peek -p "$sc/obj" -l 300 >/dev/null 2>&1; then ok=1; break; fi
        done
        t2="$(now_ms)"
        [ "$ok" = 1 ] || { echo "R5: not reachable after the move" >&2; return 1; }
        echo "$round $((t2 - t0)) $((t2 - t1))" >> "$dir/r5"
        stop "$put_pid"
    done
    python3 - "$dir/r5" <<'PY'
import statistics, sys
rows = [[float(x) for x in l.split()[1:]] for l in open(sys.argv[1])]
print(f"reachable again, from the new put's start: {statistics.median(r[0] for r in rows):.0f} ms (median of {len(rows)}; max {max(r[0] for r in rows):.0f})")
print(f"reachable again, from its announcement ready: {statistics.median(r[1] for r in rows):.0f} ms (max {max(r[1] for r in rows):.0f})")
PY
    for d in c p1 p2 rib; do local v="pid_$d"; stop "${!v}"; done
}

echo "commit $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), RUNS=$RUNS"
for b in $BENCHES; do "$b"; done
