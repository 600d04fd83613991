#!/usr/bin/env bash
# The controller's C3 and C4 figures (docs/controller.md) in one run:
# - criterion: registry bulk load (10^5 names, one commit), longest-prefix look-ups in 10^5,
#   route computation for 1000 routers of degree 4 (full, and one link change);
# - the registry_figures example: bulk load, restart and look-ups with NAMES names (10^6 by
#   default), durable single registrations from 16 callers at group-commit windows of 10, 2
#   and 0 ms, against one synchronous=FULL commit per registration.
#
#   bash scripts/bench-controller.sh          # NAMES=1000000 CHUNK=100000
#
# Built without fat LTO (the release profile's) to keep the build short on a shared machine;
# SQLite is C and gains nothing from Rust LTO.
set -euo pipefail

NAMES="${NAMES:-1000000}"
CHUNK="${CHUNK:-100000}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_BENCH_DEBUG=1

nice -n 10 cargo bench -p nameway-ctl --bench ctl 2>&1 | grep -E '^(registry|routes)/|time:|thrpt:'
nice -n 10 cargo build --release -p nameway-ctl --examples
nice -n 10 ./target/release/examples/registry_figures "$NAMES" "$CHUNK"
