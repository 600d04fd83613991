#!/usr/bin/env bash
# End-to-end throughput of a release namewayd, measured by `nameway bench` over a Unix socket
# (and UDP consumers), for one or more daemon configurations in the same run so their ratio is
# fair on a shared machine.
#
#   bash scripts/bench-daemon.sh [INTERESTS=100000] [CONSUMERS=1,2,4] [IO_THREADS_LIST="2 0"]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
interests="${1:-100000}"
consumers="${2:-1,2,4}"
modes="${3:-2 0}"
cargo build --release -q -p namewayd -p nameway
dir="$(mktemp -d)"
trap 'kill "${pid:-0}" 2>/dev/null || true; rm -rf "$dir"' EXIT
for io in $modes; do
    port=$((20000 + RANDOM % 20000))
    cat > "$dir/d.toml" <<TOML
[log]
level = "warn"
[faces]
unix = "$dir/nfd.sock"
tcp = ["127.0.0.1:$port"]
udp = ["127.0.0.1:$port"]
[forwarder]
io_threads = $io
TOML
    target/release/namewayd -c "$dir/d.toml" 2>"$dir/log" &
    pid=$!
    for _ in $(seq 100); do [ -S "$dir/nfd.sock" ] && break; sleep 0.05; done
    echo "== namewayd io_threads=$io, consumers over unix"
    target/release/nameway --transport "unix://$dir/nfd.sock" bench --consumers "$consumers" \
        --interests "$interests" --window 16 --components 4 --payload 1024 --runs 3 --daemon-pid "$pid"
    echo "== namewayd io_threads=$io, consumers over udp"
    target/release/nameway --transport "udp://127.0.0.1:$port" bench --producer-transport "unix://$dir/nfd.sock" \
        --consumers "$consumers" --interests "$interests" --window 16 --components 4 --payload 1024 --runs 3 --daemon-pid "$pid"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    rm -f "$dir/nfd.sock"
done
