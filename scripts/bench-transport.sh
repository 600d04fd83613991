#!/usr/bin/env bash
# Goodput of `nameway put` -> `nameway get` through namewayd: 16 MiB at 1400-B and 8000-B
# segments, unsigned / per-packet Ed25519 / Ed25519 manifests of 32 and 256 digests, under each
# congestion controller; medians of RUNS interleaved rounds, with same-round ratios (signed / unsigned).
# Neither forwarder caches (CS serve and admit off), so every fetch reaches the producer.
#
# When NFD and ndn-tools are built (scripts/build-nfd.sh installs them in $NAMEWAY_NFD,
# default ~/nameway-nfd), the same run also measures ndnget/ndnserve through NFD (the baseline
# docs/design.md §10 quotes), ndnget/ndnserve through namewayd, and nameway get/put through NFD,
# all with a fixed window of 64.
#
#   bash scripts/bench-transport.sh            # RUNS=5 SIZE_MIB=16
set -euo pipefail

RUNS="${RUNS:-5}"
SIZE_MIB="${SIZE_MIB:-16}"
NFD_DIR="${NAMEWAY_NFD:-$HOME/nameway-nfd}"

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init
bin="$repo/target/release"

head -c $((SIZE_MIB << 20)) /dev/urandom > "$dir/obj"
sock="$dir/nfd.sock"
start_namewayd "[faces]
unix = \"$sock\"
tcp = []
udp = []
[cs]
serve = false
admit = false"
nw() { "$bin/nameway" --transport "unix://$sock" "$@"; }
nw key generate ed25519 "$dir/ed.key" >/dev/null


# serve TRANSPORT FILE PREFIX ARGS...: starts `nameway put`; sets $name (versioned) and $put_pid.
serve() {
    local transport="$1" file="$2" prefix="$3"
    shift 3
    rm -f "$dir/put.out"
    "$bin/nameway" --transport "$transport" put "$file" "$prefix" --json "$@" > "$dir/put.out" 2>"$dir/put.err" &
    put_pid=$!
    bench_pids="${bench_pids:-} $put_pid"
    for _ in $(seq 600); do [ -s "$dir/put.out" ] && break; sleep 0.1; done
    name="$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['name'])" "$dir/put.out")"
}

# fetch_once TRANSPORT NAME ARGS...: one fetch, checked against the object; prints Mbit/s.
fetch_once() {
    local transport="$1" name="$2"
    shift 2
    "$bin/nameway" --transport "$transport" get "$name" -o "$dir/got" --json "$@" \
        | python3 -c "import json,sys; print(json.load(sys.stdin)['goodput_mbps'])"
    cmp -s "$dir/obj" "$dir/got" || { echo "bench-transport: fetched object differs" >&2; exit 1; }
}

# fetch TRANSPORT NAME ARGS...: RUNS fetches, prints the median goodput in Mbit/s.
fetch() {
    local rates=()
    for _ in $(seq "$RUNS"); do rates+=("$(fetch_once "$@")"); done
    median "${rates[@]}"
}

# The signature table. All four producers of a payload size serve at once, and each round
# fetches once with every signature kind in turn, so a ratio compares fetches made seconds
# apart (a shared machine drifts over minutes): "vs-unsigned" is the median of the rounds'
# ratios, "Mbit/s" the median goodput.
sigs=(unsigned ed25519 manifest32 manifest256)
printf '\n%-8s %-12s %-7s %12s %10s\n' payload signature cc "Mbit/s" "vs-unsigned"
for payload in 1400 8000; do
    declare -A names=() puts=()
    for sig in "${sigs[@]}"; do
        case "$sig" in
            unsigned) put_args=() ;;
            ed25519) put_args=(--sign ed25519 --key "$dir/ed.key") ;;
            manifest*) put_args=(--sign ed25519 --key "$dir/ed.key" --manifest "${sig#manifest}") ;;
        esac
        serve "unix://$sock" "$dir/obj" "/bench/$payload/$sig" --payload "$payload" "${put_args[@]}"
        names[$sig]="$name"
        puts[$sig]="$put_pid"
    done
    for cc in fixed aimd cubic delay; do
        w=(); [ "$cc" = fixed ] && w=(-w 64)
        declare -A rates=() ratios=()
        for _ in $(seq "$RUNS"); do
            base=""
            for sig in "${sigs[@]}"; do
                get_args=(); [ "$sig" = unsigned ] || get_args=(--key "$dir/ed.key.pub")
                m="$(fetch_once "unix://$sock" "${names[$sig]}" --cc "$cc" "${w[@]}" "${get_args[@]}")"
                [ "$sig" = unsigned ] && base="$m"
                rates[$sig]="${rates[$sig]:-} $m"
                ratios[$sig]="${ratios[$sig]:-} $(python3 -c "print($m / $base)")"
            done
        done
        for sig in "${sigs[@]}"; do
            # shellcheck disable=SC2086
            printf '%-8s %-12s %-7s %12.0f %10.2f\n' "$payload" "$sig" "$cc" \
                "$(median ${rates[$sig]})" "$(median ${ratios[$sig]})"
        done
        unset rates ratios
    done
    for sig in "${sigs[@]}"; do kill "${puts[$sig]}" 2>/dev/null || true; done
    unset names puts
done

if [ ! -f "$NFD_DIR/env.sh" ]; then
    echo
    echo "NFD baseline skipped: $NFD_DIR/env.sh not found (run scripts/build-nfd.sh)"
    exit 0
fi

# shellcheck disable=SC1091
source "$NFD_DIR/env.sh"
nfdpid="$("$NFD_DIR/nfd-start")"
bench_pids="${bench_pids:-} $nfdpid"
nfd_sock=/tmp/nfd/nfd.sock
for _ in $(seq 100); do [ -S "$nfd_sock" ] && break; sleep 0.1; done
NDN_CLIENT_TRANSPORT="unix://$nfd_sock" nfdc cs config admit off serve off >/dev/null

# ndnserve/ndnget: digest signatures (ndnget verifies nothing, like the unsigned row above).
ndn_serve() {
    local transport="$1" payload="$2"
    NDN_CLIENT_TRANSPORT="$transport" ndnserve -q -s "$payload" -S id:/localhost/identity/digest-sha256 \
        "/ndnbench/$payload" < "$dir/obj" &
    server=$!
    bench_pids="${bench_pids:-} $server"
    sleep 3
}
ndn_fetch() {
    local transport="$1" payload="$2"
    local rates=()
    for _ in $(seq "$RUNS"); do
        NDN_CLIENT_TRANSPORT="$transport" ndnget -p fixed -s 64 "/ndnbench/$payload" 2>"$dir/ndnget.err" > "$dir/got"
        cmp -s "$dir/obj" "$dir/got" || { echo "bench-transport: ndnget object differs" >&2; exit 1; }
        # ndnget prints "Goodput: 180.2 Mbit/s" or "Goodput: 1.183 Gbit/s" (and kbit/s).
        rates+=("$(awk '/^Goodput:/ { v = $2; u = $3; if (u ~ /^G/) v *= 1000; else if (u ~ /^k/) v /= 1000; print v }' "$dir/ndnget.err")")
    done
    median "${rates[@]}"
}

printf '\n%-8s %-40s %12s\n' payload "fixed window 64" "Mbit/s"
for payload in 1400 8000; do
    ndn_serve "unix://$nfd_sock" "$payload"
    base="$(ndn_fetch "unix://$nfd_sock" "$payload")"
    kill "$server" 2>/dev/null || true
    printf '%-8s %-40s %12.0f\n' "$payload" "ndnget/ndnserve through NFD" "$base"
    ndn_serve "unix://$sock" "$payload"
    m="$(ndn_fetch "unix://$sock" "$payload")"
    kill "$server" 2>/dev/null || true
    printf '%-8s %-40s %12.0f  %.2fx\n' "$payload" "ndnget/ndnserve through namewayd" "$m" "$(python3 -c "print($m/$base)")"
    serve "unix://$nfd_sock" "$dir/obj" "/nfdbench/$payload" --payload "$payload"
    m="$(fetch "unix://$nfd_sock" "$name" --cc fixed -w 64)"
    printf '%-8s %-40s %12.0f  %.2fx\n' "$payload" "nameway get/put through NFD" "$m" "$(python3 -c "print($m/$base)")"
    kill "$put_pid" 2>/dev/null || true
    serve "unix://$sock" "$dir/obj" "/nwbench/$payload" --payload "$payload"
    m="$(fetch "unix://$sock" "$name" --cc fixed -w 64)"
    printf '%-8s %-40s %12.0f  %.2fx\n' "$payload" "nameway get/put through namewayd" "$m" "$(python3 -c "print($m/$base)")"
    m="$(fetch "unix://$sock" "$name" --cc cubic)"
    printf '%-8s %-40s %12.0f  %.2fx\n' "$payload" "nameway get (cubic)/put through namewayd" "$m" "$(python3 -c "print($m/$base)")"
    kill "$put_pid" 2>/dev/null || true
done
