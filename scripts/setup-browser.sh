#!/usr/bin/env bash
# Installs what the status-page test (crates/daemon/tests/http.rs) needs: Chromium from the
# Debian packages (the system browser; nothing is downloaded from a browser vendor) and
# playwright-core from npm (tests/interop/browser, pinned in its package-lock.json) to drive it.
#
# Idempotent: does nothing when both are present. Installing Chromium needs root and apt-get
# (CI runs as root); elsewhere install it yourself or set CHROMIUM to a Chromium binary.
#   bash scripts/setup-browser.sh && NAMEWAY_REQUIRE_INTEROP=1 cargo test -p namewayd --test http
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$repo/tests/interop/browser"
chromium="${CHROMIUM:-/usr/bin/chromium}"

if [ ! -x "$chromium" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup-browser: installing chromium from the Debian packages"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends chromium >/dev/null
    else
        echo "setup-browser: $chromium is missing; install Debian's chromium package (as root) or set CHROMIUM" >&2
        exit 1
    fi
fi

cd "$dir"
lock="$dir/package-lock.json"
stamp="$dir/node_modules/.nameway-lock"
if [ -f "$stamp" ] && cmp -s "$lock" "$stamp" && [ -f node_modules/playwright-core/package.json ]; then
    echo "setup-browser: $("$chromium" --version 2>/dev/null | head -1); $dir/node_modules is up to date"
    exit 0
fi
npm ci --no-audit --no-fund --prefer-offline
cp "$lock" "$stamp"
echo "setup-browser: $("$chromium" --version 2>/dev/null | head -1); playwright-core installed into $dir/node_modules"
