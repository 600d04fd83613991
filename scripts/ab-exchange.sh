#!/usr/bin/env bash
# Time per exchange of the forwarding core at BASE and at the working tree, measured in the
# same run: crates/fw/examples/exchange_loop.rs is built against both (the example and the
# bench fixture it includes are copied into a worktree of BASE, so BASE need not have them),
# then the two binaries alternate and the median and minimum of each are printed with the
# ratio of the medians. On a shared machine this says more than two criterion runs made
# minutes apart.
#
#   bash scripts/ab-exchange.sh BASE [COMPONENTS=4] [MODE=rx|pool] [ROUNDS=9] [EXCHANGES=1000000]
#
# With INSTR=1, also counts instructions per exchange in steady state with callgrind (the
# difference of a 200,000- and a 400,000-exchange run; valgrind must be installed).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${1:?usage: ab-exchange.sh BASE [COMPONENTS] [MODE] [ROUNDS] [EXCHANGES]}"
components="${2:-4}"
mode="${3:-rx}"
rounds="${4:-9}"
exchanges="${5:-1000000}"
work="$(mktemp -d)"
trap 'git -C "$repo" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

build() { # build SRC_DIR OUT
    (cd "$1" && CARGO_TARGET_DIR="$1/target" cargo build --release -q -p nameway-fw --example exchange_loop)
    cp "$1/target/release/examples/exchange_loop" "$2"
}
git -C "$repo" worktree add -q --detach "$work/base" "$base"
mkdir -p "$work/base/crates/fw/examples" "$work/base/crates/fw/benches/fixture"
cp "$repo/crates/fw/examples/exchange_loop.rs" "$work/base/crates/fw/examples/"
cp "$repo/crates/fw/benches/fixture/mod.rs" "$work/base/crates/fw/benches/fixture/"
build "$work/base" "$work/a"
(cd "$repo" && cargo build --release -q -p nameway-fw --example exchange_loop)
cp "$repo/target/release/examples/exchange_loop" "$work/b"

declare -a ta tb
for _ in $(seq "$rounds"); do
    ta+=("$("$work/a" "$components" "$exchanges" "$mode" | awk '{print $2}')")
    tb+=("$("$work/b" "$components" "$exchanges" "$mode" | awk '{print $2}')")
done
stats() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {printf "median %.1f ns, min %.1f ns", v[int((NR+1)/2)], v[1]}'; }
med() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "$components components, $mode, $rounds alternated runs of $exchanges exchanges"
echo "  $base: $(stats "${ta[@]}")"
echo "  working tree: $(stats "${tb[@]}")"
echo "  ratio of medians: $(awk -v a="$(med "${ta[@]}")" -v b="$(med "${tb[@]}")" 'BEGIN {printf "%.2f", b / a}')"

if [ "${INSTR:-0}" = 1 ]; then
    count() { # count BINARY EXCHANGES
        valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
            --toggle-collect='nameway_fw::forwarder::Forwarder::handle_*' \
            --toggle-collect='nameway_fw::forwarder::Forwarder::poll_*' \
            "$1" "$components" "$2" "$mode" 2>&1 | awk '/I +refs/ {gsub(",", "", $4); print $4}'
    }
    for side in a b; do
        lo=$(count "$work/$side" 200000); hi=$(count "$work/$side" 400000)
        echo "  instructions per exchange ($([ $side = a ] && echo "$base" || echo "working tree")): $(( (hi - lo) / 200000 ))"
    done
fi
