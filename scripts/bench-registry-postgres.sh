#!/usr/bin/env bash
# The controller registry's figures on PostgreSQL against SQLite in the same run
# (crates/ctl/examples/registry_postgres_figures.rs), under a throw-away server from
# scripts/postgres-test-server.sh. Prints medians and PostgreSQL/SQLite ratios.
#
#   bash scripts/bench-registry-postgres.sh [NAMES [RUNS [PER_COMMIT]]]   (defaults 100000 3 100000)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -p nameway-ctl --example registry_postgres_figures
exec bash scripts/postgres-test-server.sh -- \
    target/release/examples/registry_postgres_figures "${1:-100000}" "${2:-3}" "${3:-100000}"
