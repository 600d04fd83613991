#!/usr/bin/env bash
# The controller's end-to-end figures C1 (link failure -> every FIB updated; C1s: a silent
# failure found by the hellos) and C2
# (registration at one edge -> routed at the far edge), docs/controller.md "Phase 2 figures":
#
#   bash scripts/bench-ctl-e2e.sh                 # LINE=10 ROUNDS=30 PROFILE=debug [ONLY=c1s]
#   ONLY=grid GRID=4x5 ROUNDS=10 PROFILE=release bash scripts/bench-ctl-e2e.sh   # C1 on 20 routers
#
# namewayctl serve, LINE namewayd and the nameway CLI on loopback; see bench-ctl-e2e.py.
set -euo pipefail

LINE="${LINE:-10}"
ROUNDS="${ROUNDS:-30}"
PROFILE="${PROFILE:-debug}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
bench_build_ctl
python3 scripts/bench-ctl-e2e.py --bin "target/$PROFILE" --line "$LINE" --rounds "$ROUNDS" ${ONLY:+--only "$ONLY"} ${GRID:+--grid "$GRID"}
