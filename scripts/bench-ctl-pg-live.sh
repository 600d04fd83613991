#!/usr/bin/env bash
# Two controllers on one PostgreSQL database: the delay from a registration at controller A's
# forwarder to the FIB entry at controller B's forwarder (docs/controller.md, "Several
# controllers on one database, live").
#
#   bash scripts/bench-ctl-pg-live.sh [ROUNDS]      # 50 by default
#
# Runs the end-to-end test crates/daemon/tests/ctl_pg_live.rs (real namewayctl, namewayd and
# nameway, debug build) under a throw-away PostgreSQL server (scripts/postgres-test-server.sh)
# with NAMEWAY_PG_LIVE_ROUNDS set: ROUNDS times, `nameway put` of a new name at r1 (A's
# agent), then `nameway route list` at r2 (B's agent) every 5 ms until the controller's route
# is there (and at r1 itself: the baseline, A alone); the producer is stopped and the route's withdrawal awaited before the next round.
# Prints the median, p99, min and max of both, and the ratio of the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-50}"
NAMEWAY_PG_LIVE_ROUNDS="$rounds" bash scripts/postgres-test-server.sh -- \
    cargo test -p namewayd --test ctl_pg_live two_controllers_on_one_postgresql -- --nocapture 2>&1 | grep -E '^pg-live:|test result'
