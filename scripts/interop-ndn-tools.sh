#!/usr/bin/env bash
# Interoperability of `nameway put`/`nameway get` with ndn-tools' ndnget/ndnserve (ndn-cxx),
# both ways, through a release namewayd over its Unix socket:
#   - ndnget fetches what `nameway put` serves: DigestSha256, Ed25519 per packet, ECDSA per
#     packet and Ed25519 manifests (ndnget's validator accepts any signature; what it checks is
#     the naming: RDR version discovery, segment numbers, FinalBlockId);
#   - `nameway get` fetches what ndnserve serves: DigestSha256, and signed with an ndnsec
#     identity, verified by `nameway get --anchor` against that identity's certificate as
#     `ndnsec cert-dump` writes it.
# Every fetched object is compared byte for byte with the original. Exits non-zero at the
# first difference or failure, naming it.
#
# Needs ndnget, ndnserve and ndnsec on PATH (ndn-cxx and ndn-tools built from source by
# scripts/build-nfd.sh). If NAMEWAY_NFD (default ~/nameway-nfd) holds an env.sh, it is sourced
# first: it puts the tools on PATH and points NDN_CLIENT_PIB/NDN_CLIENT_TPM at a keychain of its own.
#
#   bash scripts/interop-ndn-tools.sh            # SIZE_KIB=3000
set -euo pipefail

SIZE_KIB="${SIZE_KIB:-3000}"
NFD_DIR="${NAMEWAY_NFD:-$HOME/nameway-nfd}"
if [ -f "$NFD_DIR/env.sh" ]; then
    # shellcheck disable=SC1091
    source "$NFD_DIR/env.sh"
fi
for tool in ndnget ndnserve ndnsec; do
    command -v "$tool" >/dev/null || {
        echo "interop-ndn-tools: $tool is not on PATH (run scripts/build-nfd.sh, or set NAMEWAY_NFD)" >&2
        exit 2
    }
done

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init
bin="$repo/target/release"
sock="$dir/nfd.sock"
start_namewayd "[faces]
unix = \"$sock\"
tcp = []
udp = []"
export NDN_CLIENT_TRANSPORT="unix://$sock"
nw() { "$bin/nameway" --transport "unix://$sock" "$@"; }
head -c $((SIZE_KIB << 10)) /dev/urandom > "$dir/obj"
nw key generate ed25519 "$dir/ed.key" >/dev/null
nw key generate ecdsa "$dir/ec.key" >/dev/null

pass=0
check() {
    local what="$1" got="$2"
    if cmp -s "$dir/obj" "$got"; then
        printf 'ok    %s\n' "$what"
        pass=$((pass + 1))
    else
        printf 'FAIL  %s: the fetched object differs from the original\n' "$what" >&2
        exit 1
    fi
}

# serve_put PREFIX ARGS...: `nameway put` in the background until its name is printed.
serve_put() {
    local prefix="$1"
    shift
    rm -f "$dir/put.out"
    nw put "$dir/obj" "$prefix" --json "$@" > "$dir/put.out" 2>"$dir/put.err" &
    put_pid=$!
    bench_pids="${bench_pids:-} $put_pid"
    for _ in $(seq 300); do [ -s "$dir/put.out" ] && return 0; sleep 0.1; done
    echo "interop-ndn-tools: nameway put $prefix did not start:" >&2
    cat "$dir/put.err" >&2
    exit 1
}

echo "ndnget <- nameway put"
for payload in 1400 8000; do
    for sig in digest ed25519 ecdsa manifest32; do
        case "$sig" in
            digest) args=() ;;
            ed25519) args=(--sign ed25519 --key "$dir/ed.key") ;;
            ecdsa) args=(--sign ecdsa --key "$dir/ec.key") ;;
            manifest32) args=(--sign ed25519 --key "$dir/ed.key" --manifest 32) ;;
        esac
        serve_put "/interop/put/$payload/$sig" --payload "$payload" "${args[@]}"
        # By version discovery (RDR metadata), as a user would run it.
        ndnget -q "/interop/put/$payload/$sig" > "$dir/got"
        check "ndnget, $payload-byte segments, $sig" "$dir/got"
        kill "$put_pid" 2>/dev/null || true
    done
done

echo "nameway get <- ndnserve"
id=/interop/ndnsec-identity
ndnsec key-gen -t e "$id" | ndnsec cert-install - >/dev/null 2>&1
ndnsec cert-dump -i "$id" > "$dir/anchor.ndncert"
for payload in 1400 8000; do
    ndnserve -q -s "$payload" -S id:/localhost/identity/digest-sha256 "/interop/serve/$payload/digest" \
        < "$dir/obj" 2>>"$dir/ndnserve.err" &
    bench_pids="${bench_pids:-} $!"
    # Under the identity's own name: the hierarchical trust rule lets a key sign nothing else.
    ndnserve -q -s "$payload" -S "id:$id" "$id/serve/$payload" < "$dir/obj" 2>>"$dir/ndnserve.err" &
    bench_pids="${bench_pids:-} $!"
done
sleep 2
for payload in 1400 8000; do
    nw get "/interop/serve/$payload/digest" -o "$dir/got" --json > /dev/null
    check "nameway get, $payload-byte segments, DigestSha256" "$dir/got"
    nw get "$id/serve/$payload" -o "$dir/got" --anchor "$dir/anchor.ndncert" --json \
        > "$dir/get.json"
    check "nameway get --anchor, $payload-byte segments, ECDSA from ndnsec" "$dir/got"
    grep -q '"verification": *"packet ecdsa' "$dir/get.json" || {
        echo "FAIL  nameway get --anchor did not verify per packet: $(cat "$dir/get.json")" >&2
        exit 1
    }
done
# A wrong anchor must refuse the object and leave no output.
nw key cert --key "$dir/ec.key" --kind ecdsa --identity "$id" -o "$dir/other.ndncert" >/dev/null
if [ -s "$dir/other.ndncert" ]; then
    rm -f "$dir/refused"
    if nw get "$id/serve/1400" -o "$dir/refused" --anchor "$dir/other.ndncert" \
        2>"$dir/refused.err"; then
        echo "FAIL  nameway get accepted ndnserve's object under another anchor" >&2
        exit 1
    fi
    [ ! -e "$dir/refused" ] || { echo "FAIL  a refused object left $dir/refused" >&2; exit 1; }
    printf 'ok    nameway get --anchor refuses another key for the same identity: %s\n' \
        "$(head -1 "$dir/refused.err")"
    pass=$((pass + 1))
fi
ndnsec delete "$id" >/dev/null 2>&1 || true
echo "$pass checks passed"
