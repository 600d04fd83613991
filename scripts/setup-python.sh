#!/usr/bin/env bash
# Creates (or updates) the Python virtual environment used by the python-ndn interop tests:
# $REPO/.venv with the packages pinned in tests/interop/requirements.txt.
#
# Idempotent: an existing venv is reused, and pip is skipped when the pinned packages are already
# installed. Run from anywhere:
#   bash scripts/setup-python.sh && NAMEWAY_REQUIRE_INTEROP=1 cargo test -p nameway-wire --test python_ndn
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
req="$repo/tests/interop/requirements.txt"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "setup-python: creating $venv"
    "$python" -m venv "$venv"
fi

# The stamp records the requirements the venv was last installed from.
stamp="$venv/.nameway-requirements"
if [ -f "$stamp" ] && cmp -s "$req" "$stamp" \
    && "$venv/bin/python" -c 'import ndn.encoding, ndn.security, prometheus_client' 2>/dev/null; then
    echo "setup-python: $venv is up to date"
    exit 0
fi

"$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$req"
cp "$req" "$stamp"
echo "setup-python: installed $(grep -v '^#' "$req" | tr '\n' ' ')into $venv"
