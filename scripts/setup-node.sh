#!/usr/bin/env bash
# Installs the NDNts packages used by the NDNts interop tests (crates/daemon/tests/ndnts.rs):
# tests/interop/ndnts/node_modules, from package.json / package-lock.json, every @ndn/* package
# pinned to exactly 0.0.20250307.
#
# Idempotent and offline-friendly: when node_modules was last installed from the current
# package-lock.json it does nothing (no network); otherwise `npm ci` (or `npm install` once, when
# there is no lock yet, which creates package-lock.json). Run from anywhere:
#   bash scripts/setup-node.sh && NAMEWAY_REQUIRE_INTEROP=1 cargo test -p namewayd --test ndnts
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$repo/tests/interop/ndnts"
node="${NODE:-node}"
npm="${NPM:-npm}"

if ! command -v "$node" >/dev/null || ! command -v "$npm" >/dev/null; then
    echo "setup-node: node and npm are required (Node >= 20)" >&2
    exit 1
fi
major="$("$node" -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
    echo "setup-node: Node $("$node" --version) is too old; NDNts needs >= 20 (22 preferred)" >&2
    exit 1
fi

cd "$dir"
lock="$dir/package-lock.json"
stamp="$dir/node_modules/.nameway-lock"
if [ -f "$lock" ] && [ -f "$stamp" ] && cmp -s "$lock" "$stamp" \
    && [ -f node_modules/@ndn/nfdmgmt/package.json ] \
    && [ -f node_modules/@ndn/node-transport/package.json ]; then
    echo "setup-node: $dir/node_modules is up to date"
    exit 0
fi

# NDNts 0.0.20250307 declares engines.node ^22.11; on Node 20 npm only warns (app.mjs carries
# the one shim it needs, see polyfill.mjs).
opts=(--no-audit --no-fund --prefer-offline)
if [ -f "$lock" ]; then
    "$npm" ci "${opts[@]}"
else
    "$npm" install "${opts[@]}" --save-exact
fi
cp "$lock" "$stamp"
echo "setup-node: installed $(cd "$dir" && "$node" -p \
    'Object.entries(require("./package.json").dependencies).map(([k, v]) => k + "@" + v).join(" ")') into $dir/node_modules"
