#!/usr/bin/env bash
# Partitioned cache placement with real daemons, against caching everywhere
# (docs/controller.md, "What placement gains"): a line of three namewayd under namewayctl,
# python-ndn producer and consumer, Zipf requests; see bench-ctl-placement.py.
#
#   bash scripts/bench-ctl-placement.sh      # PROFILE=release OBJECTS=2000 REQUESTS=10000 ALPHA=0.8 CAPACITY=100
set -euo pipefail

PROFILE="${PROFILE:-release}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
bash scripts/setup-python.sh >/dev/null
bench_build_ctl
.venv/bin/python scripts/bench-ctl-placement.py --bin "target/$PROFILE" \
    --objects "${OBJECTS:-2000}" --requests "${REQUESTS:-10000}" \
    --alpha "${ALPHA:-0.8}" --capacity "${CAPACITY:-100}"
