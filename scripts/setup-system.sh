#!/usr/bin/env bash
# Installs the system tools the operator-facing tests need, from the Debian packages: Chromium
# for the status-page test (crates/daemon/tests/http.rs; the system browser, nothing is
# downloaded from a browser vendor) driven by playwright-core from npm (tests/interop/browser,
# pinned in its package-lock.json), systemd for `systemd-analyze verify` of the service unit
# (crates/daemon/tests/daemon.rs), and tcpdump to read the pcap files of `nameway capture`
# (crates/cli/tests/daemon_cli.rs), and the PostgreSQL server that
# scripts/postgres-test-server.sh starts for the controller's PostgreSQL store
# (crates/ctl/tests/registry_postgres.rs).
#
# Idempotent: does nothing when everything is present. Installing packages needs root and
# apt-get (CI runs as root); elsewhere install them yourself or set CHROMIUM to a Chromium binary.
#   bash scripts/setup-system.sh && NAMEWAY_REQUIRE_INTEROP=1 cargo test -p namewayd --test http
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$repo/tests/interop/browser"
chromium="${CHROMIUM:-/usr/bin/chromium}"

missing=()
[ -x "$chromium" ] || missing+=(chromium)
command -v systemd-analyze >/dev/null || missing+=(systemd)
command -v tcpdump >/dev/null || missing+=(tcpdump)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup-system: installing ${missing[*]} from the Debian packages"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "setup-system: ${missing[*]} missing; install the Debian packages (as root) or set CHROMIUM" >&2
        exit 1
    fi
fi

cd "$dir"
lock="$dir/package-lock.json"
stamp="$dir/node_modules/.nameway-lock"
if [ -f "$stamp" ] && cmp -s "$lock" "$stamp" && [ -f node_modules/playwright-core/package.json ]; then
    echo "setup-system: $("$chromium" --version 2>/dev/null | head -1); $dir/node_modules is up to date"
    exit 0
fi
npm ci --no-audit --no-fund --prefer-offline
cp "$lock" "$stamp"
echo "setup-system: $("$chromium" --version 2>/dev/null | head -1); playwright-core installed into $dir/node_modules"
