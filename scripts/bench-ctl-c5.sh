#!/usr/bin/env bash
# C5: route changes pushed to a forwarder while it forwards at full rate, drops counted by
# reason (docs/controller.md, "Phase 4: incremental routes in serve"):
#
#   bash scripts/bench-ctl-c5.sh        # PREFIXES=250 CHANGES=100000 PROFILE=release
#
# PREFIXES is 250 by default, the setting of the first C5 figure; larger FIB objects (the diff
# bringing 1000 routes back) go as signed segments since session 6 (docs/controller.md).
#
# namewayctl serve, two namewayd (r1 under test, r2 whose link to r1 flaps) and nameway bench
# through r1 on loopback; see bench-ctl-c5.py.
set -euo pipefail

PREFIXES="${PREFIXES:-250}"
CHANGES="${CHANGES:-100000}"
PROFILE="${PROFILE:-release}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
bench_build_ctl
python3 scripts/bench-ctl-c5.py --bin "target/$PROFILE" --prefixes "$PREFIXES" --changes "$CHANGES" --pause-ms 200 --interests 500000
