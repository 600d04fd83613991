#!/usr/bin/env bash
# Reproduces the published results Nameway builds on, with plots, in one command (as root:
# the lab makes network namespaces):
#
#   sudo bash scripts/lab-reproduce.sh              # every reproduction, full (under 20 minutes)
#   sudo bash scripts/lab-reproduce.sh --quick      # short runs (what CI checks)
#   sudo bash scripts/lab-reproduce.sh latency      # one of them (see docs/lab.md)
#   sudo bash scripts/lab-reproduce.sh routing      # reproduction 7 alone: secure routing
#
# Installs what is missing (matplotlib into .venv via setup-python.sh, Debian's iperf3 for the
# TCP reference), builds nameway and namewayd in release mode, and runs
# `nameway lab reproduce`, which writes target/lab-reports/README.md and one report with its
# plots per reproduction. NFD's column is filled when scripts/build-nfd.sh has built NFD
# ($NAMEWAY_NFD, default ~/nameway-nfd).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
if [ "$(id -u)" -ne 0 ]; then
    echo "lab-reproduce: run as root (network namespaces, veth pairs, qdiscs)" >&2
    exit 2
fi
bash scripts/setup-python.sh
if ! command -v iperf3 >/dev/null; then
    echo "lab-reproduce: installing iperf3 (the TCP reference of reproduction 5)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends iperf3 >/dev/null \
        || echo "lab-reproduce: no iperf3; reproduction 5 goes without its TCP reference" >&2
fi
cargo build --release --locked -p nameway -p namewayd
exec target/release/nameway lab reproduce --out target/lab-reports "$@"
