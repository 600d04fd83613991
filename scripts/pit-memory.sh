#!/usr/bin/env bash
# Resident memory of a release namewayd per pending Interest, from real clients: a python-ndn
# producer registers /flood and never answers, then another python-ndn application writes
# COUNT distinct Interests under /flood/app/x (4 components, python-ndn's own encoder, a Nonce,
# InterestLifetime 600 s) over the Unix socket and keeps its face open. Once every Interest is
# pending (the flooding face holds COUNT PIT entries), the daemon's RSS growth since before the
# flood (from /proc/PID/status) is divided by the entries pending.
#
#   bash scripts/pit-memory.sh [COUNT=1000000]
#   NAMEWAYD=path/to/namewayd bash scripts/pit-memory.sh   # another build of the daemon
#
# The PIT is made large enough for one face to hold COUNT entries (fair admission lets a face
# hold half the table). crates/fw/examples/pit_memory.rs measures the same in process.
set -euo pipefail

COUNT="${1:-1000000}"

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_init
bash scripts/setup-python.sh >/dev/null
py="$repo/.venv/bin/python"
app="$repo/tests/interop/pyndn_app.py"
daemon="${NAMEWAYD:-$repo/target/release/namewayd}"

sock="$dir/nfd.sock"
rm -f "$sock"
printf '[log]\nlevel = "warn"\n[faces]\nunix = "%s"\ntcp = []\nudp = []\n[forwarder]\npit_capacity = %s\n[cs]\nserve = false\nadmit = false\n' \
    "$sock" "$((2 * COUNT + 1000))" > "$dir/d.toml"
"$daemon" -c "$dir/d.toml" 2>"$dir/log" &
pid=$!
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || { echo "namewayd did not start:" >&2; cat "$dir/log" >&2; exit 1; }
export NDN_CLIENT_TRANSPORT="unix://$sock"
nw() { "$repo/target/release/nameway" --transport "unix://$sock" "$@"; }

"$py" "$app" silent --prefix /flood > "$dir/producer.out" &
bench_pids="${bench_pids:-} $!"
for _ in $(seq 600); do grep -q ready "$dir/producer.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$dir/producer.out" || { echo "the producer did not register" >&2; exit 1; }

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
pending() {
    nw face list --json | "$py" -c "import json,sys; print(max(f.get('pit_entries') or 0 for f in json.load(sys.stdin)))"
}
sleep 1
before=$(rss_kib)

"$py" "$app" flood --prefix /flood/app/x --count "$COUNT" --lifetime 600000 --hold 3600 \
    > "$dir/flood.out" &
bench_pids="${bench_pids:-} $!"
# The client encodes everything first, then writes; wait until the PIT stops growing.
last=-1
held=0
for _ in $(seq 3000); do
    sleep 1
    [ -s "$dir/flood.out" ] || continue
    held=$(pending)
    if [ "$held" = "$last" ] || [ "$held" -ge "$COUNT" ]; then
        break
    fi
    last=$held
done
sleep 1
after=$(rss_kib)
held=$(pending)
drops=$(nw face list --json | "$py" -c "
import json,sys
print(sum(sum((f.get('drops') or {}).values()) for f in json.load(sys.stdin)))")

printf 'namewayd %s\n' "$daemon"
printf '%s Interests sent, %s pending (%s dropped on faces)\n' "$COUNT" "$held" "$drops"
"$py" -c "
b, a, n = $before, $after, max($held, 1)
print(f'RSS {b / 1024:.1f} MiB -> {a / 1024:.1f} MiB: {(a - b) * 1024 / n:.0f} B per pending Interest')"
