#!/usr/bin/env bash
# Creates (or updates) the Python virtual environment used by the python-ndn interop tests and
# by the lab's plots: $REPO/.venv with the packages pinned in tests/interop/requirements.txt and
# scripts/lab-requirements.txt (matplotlib, for `nameway lab reproduce`).
#
# Idempotent: an existing venv is reused, and pip is skipped when the pinned packages are already
# installed. Run from anywhere:
#   bash scripts/setup-python.sh && NAMEWAY_REQUIRE_INTEROP=1 cargo test -p nameway-wire --test python_ndn
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
req="$repo/tests/interop/requirements.txt"
lab_req="$repo/scripts/lab-requirements.txt"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "setup-python: creating $venv"
    "$python" -m venv "$venv"
fi

# The stamp records the requirements the venv was last installed from.
stamp="$venv/.nameway-requirements"
if [ -f "$stamp" ] && cat "$req" "$lab_req" | cmp -s - "$stamp" \
    && "$venv/bin/python" -c 'import ndn.encoding, ndn.security, prometheus_client, matplotlib' 2>/dev/null; then
    echo "setup-python: $venv is up to date"
    exit 0
fi

"$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$req" -r "$lab_req"
cat "$req" "$lab_req" > "$stamp"
echo "setup-python: installed $(cat "$req" "$lab_req" | grep -v '^#' | tr '\n' ' ')into $venv"
