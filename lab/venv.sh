#!/usr/bin/env bash
# Install the pinned toolchain (requirements.txt) into the project-local .venv.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv="$top/.venv"
stamp="$venv/.installed"
want=$(sha256sum "$top/requirements.txt" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
py=${PYTHON:-python3}
command -v "$py" >/dev/null || { echo "venv: $py not found: install python3 (>= 3.11) and python3-venv" >&2; exit 1; }
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "venv: $($py --version) is too old: ansible-core 2.19 needs Python >= 3.11" >&2; exit 1; }
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv" \
  || { echo "venv: '$py -m venv' failed: install the python3-venv package" >&2; exit 1; }
"$venv/bin/pip" install -q --disable-pip-version-check -r "$top/requirements.txt" \
  || { echo "venv: pip install failed: is PyPI reachable?" >&2; exit 1; }
echo "$want" >"$stamp"
