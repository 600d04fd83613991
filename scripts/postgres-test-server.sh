#!/usr/bin/env bash
# A throw-away PostgreSQL server for the controller's PostgreSQL tests and benchmark.
#
#   bash scripts/postgres-test-server.sh -- COMMAND [ARGS...]
#       starts a server, runs COMMAND with NAMEWAY_TEST_POSTGRES set to its conninfo, then
#       stops the server and deletes its files (also when COMMAND fails or is interrupted);
#       exits with COMMAND's status.
#   bash scripts/postgres-test-server.sh
#       starts a server, prints its conninfo, and keeps it until Ctrl-C.
#
# The cluster is made by initdb in a temporary directory (trust authentication, owned by the
# `postgres` system user when run as root: the server refuses to run as root), listens on a
# Unix socket in that directory and on 127.0.0.1 at a free port, and has one database,
# `nameway`. The conninfo is `host=DIR/sock port=PORT user=postgres dbname=nameway`.
# PG_BIN overrides where initdb, pg_ctl and psql are found.
set -euo pipefail

find_bin() {
    if [ -n "${PG_BIN:-}" ]; then
        echo "$PG_BIN"
        return
    fi
    local d
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
    if [ -n "$d" ] && [ -x "$d/initdb" ]; then
        echo "$d"
    elif command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/initdb" ]; then
        pg_config --bindir
    else
        echo "postgres-test-server: no PostgreSQL server found (install the postgresql package: bash scripts/setup-system.sh, or set PG_BIN)" >&2
        exit 1
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
        || echo $((20000 + RANDOM % 30000))
}

bin="$(find_bin)"
dir="$(mktemp -d /tmp/nameway-pg.XXXXXX)"
chmod 0755 "$dir"
mkdir -p "$dir/sock"
as_pg=()
if [ "$(id -u)" = 0 ]; then
    chown -R postgres: "$dir"
    as_pg=(runuser -u postgres --)
fi

cleanup() {
    "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
    --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }

port=""
for _ in 1 2 3 4 5; do
    port="$(free_port)"
    if "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-p $port -k $dir/sock -c listen_addresses=127.0.0.1" start >/dev/null 2>&1; then
        break
    fi
    port=""
done
if [ -z "$port" ]; then
    echo "postgres-test-server: the server did not start; its log:" >&2
    cat "$dir/server.log" >&2 || true
    exit 1
fi

"${as_pg[@]}" "$bin/psql" -X -q -h "$dir/sock" -p "$port" -U postgres -d postgres \
    -c "CREATE DATABASE nameway" >/dev/null

export NAMEWAY_TEST_POSTGRES="host=$dir/sock port=$port user=postgres dbname=nameway"
export NAMEWAY_TEST_POSTGRES_BIN="$bin"
echo "postgres-test-server: $("$bin/postgres" --version) at $NAMEWAY_TEST_POSTGRES" >&2

if [ "${1:-}" = "--" ]; then
    shift
fi
if [ $# -gt 0 ]; then
    set +e
    "$@"
    status=$?
    set -e
    exit "$status"
fi
echo "NAMEWAY_TEST_POSTGRES='$NAMEWAY_TEST_POSTGRES'"
echo "postgres-test-server: running until Ctrl-C" >&2
while true; do sleep 3600; done
