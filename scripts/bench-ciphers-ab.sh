#!/usr/bin/env bash
# Two builds' cipher figures in the same run: `nameway bench ciphers --openssl --json` of build A
# and build B alternated ROUNDS times (OpenSSL measured in every run), then per suite and size
# the median MB/s of each build and the median of its per-run ratios to OpenSSL: bare stream
# ciphers against OpenSSL's ChaCha20 stream, AEADs against OpenSSL's TLS-record ChaCha20-Poly1305
# (docs/ciphers.md). On a shared machine whose speed drifts between runs minutes apart, the
# ratios to OpenSSL in the same run are what compare, not the MB/s.
#
#   bash scripts/bench-ciphers-ab.sh A B [ROUNDS=4] [extra `bench ciphers` arguments...]
#   e.g. bash scripts/bench-ciphers-ab.sh /tmp/nameway-before target/release/nameway 4 --link-nonces
#   SIZES (default 64,500,1500,4000,8800,65536) and SUITES (default forro14,xforro14-poly1305,
#   comma-separated) choose the rows.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
a="$1"
b="$2"
rounds="${3:-4}"
shift $(($# < 3 ? $# : 3))
sizes="${SIZES:-64,500,1500,4000,8800,65536}"
suites="${SUITES:-forro14,xforro14-poly1305}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for r in $(seq "$rounds"); do
    for build in A B; do
        bin="$a"
        [ "$build" = A ] || bin="$b"
        "$bin" bench ciphers --sizes "$sizes" --openssl --openssl-runs 1 --time-ms 150 --json "$@" \
            > "$dir/$build.$r.json" 2>/dev/null
    done
done
printf 'A = %s\nB = %s\n%d rounds, sizes %s, extra arguments: %s\n' "$a" "$b" "$rounds" "$sizes" "${*:-none}"
python3 - "$dir" "$suites" <<'PY'
import glob, json, statistics, sys

runs, wanted = sys.argv[1], sys.argv[2].split(",")
rows = {}
for path in sorted(glob.glob(f"{runs}/*.json")):
    build = path.rsplit("/", 1)[1].split(".")[0]
    for s in json.load(open(path))["suites"]:
        if s["suite"] not in wanted:
            continue
        stream = s["suite"] in ("forro14", "chacha20", "cpa")
        ratio = s.get("vs_openssl_chacha20_stream") if stream else s.get("vs_openssl_tls_record")
        rows.setdefault((s["suite"], s["size"]), {}).setdefault(build, []).append((s["mb_per_s"], ratio))
print(f"{'suite':20} {'size':>6} {'baseline':>12} {'A MB/s':>9} {'A ratio':>8} {'B MB/s':>9} {'B ratio':>8}")
for (suite, size), by in sorted(rows.items(), key=lambda kv: (wanted.index(kv[0][0]), kv[0][1])):
    out = []
    for build in ("A", "B"):
        v = by.get(build, [])
        mb = statistics.median(x[0] for x in v) if v else float("nan")
        rs = [x[1] for x in v if x[1] is not None]
        out += [f"{mb:9.1f}", f"{statistics.median(rs):8.2f}" if rs else f"{'-':>8}"]
    base = "chacha20" if suite in ("forro14", "chacha20", "cpa") else "tls-record"
    print(f"{suite:20} {size:>6} {base:>12} " + " ".join(out))
PY
