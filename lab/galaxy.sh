#!/usr/bin/env bash
# galaxy-importer on the built collection: the validator Galaxy and Automation Hub run on every
# import (metadata, README of the collection and of every role, ansible-doc of every plugin,
# ansible-lint). Exit 1 when it reports an error.
#   lab/galaxy.sh            build into .cache/galaxy/ and import the tarball
#   lab/galaxy.sh TARBALL    import a tarball already built (e.g. .cache/build/rdma-fabric-*.tar.gz)
#   lab/galaxy.sh --venv     only make the importer's venv (lab/test.sh all makes every venv at once first)
# galaxy-importer has its own pins (ansible-core, ansible-lint, ...): it lives in its own venv,
# .cache/galaxy-venv, not in .venv / requirements.txt. Offline and without containers: no
# ansible-test run (Galaxy's needs podman or docker and network), ansible-lint offline.
set -euo pipefail

GALAXY_IMPORTER_VERSION=0.4.44

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
venv="$top/.cache/galaxy-venv"
work="$top/.cache/galaxy"

# The importer's venv, made again when the pin changes.
if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$GALAXY_IMPORTER_VERSION" ]; then
  echo "galaxy: installing galaxy-importer==$GALAXY_IMPORTER_VERSION into .cache/galaxy-venv"
  rm -rf "$venv"
  "${PYTHON:-python3}" -m venv "$venv" || { echo "galaxy: '${PYTHON:-python3} -m venv' failed: install python3-venv" >&2; exit 1; }
  mkdir -p "$top/.cache"
  "$venv/bin/pip" install -q --disable-pip-version-check "galaxy-importer==$GALAXY_IMPORTER_VERSION" \
    >"$top/.cache/galaxy-venv.log" 2>&1 \
    || { tail -20 "$top/.cache/galaxy-venv.log" >&2
         echo "galaxy: pip install galaxy-importer==$GALAXY_IMPORTER_VERSION failed: is PyPI reachable?" >&2; exit 1; }
  echo "$GALAXY_IMPORTER_VERSION" >"$venv/.installed"
fi

[ "${1:-}" = --venv ] && exit 0

rm -rf "$work" && mkdir -p "$work/tmp" "$work/ansible-tmp"
if [ $# -ge 1 ]; then
  tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  [ -s "$tarball" ] || { echo "galaxy: $1: no such tarball" >&2; exit 1; }
else
  "$venv/bin/ansible-galaxy" collection build --force --output-path "$work" . >/dev/null
  tarball=$(ls "$work"/rdma-fabric-*.tar.gz)
fi

cat >"$work/galaxy-importer.cfg" <<EOF
[galaxy-importer]
log_level_main = INFO
run_ansible_doc = True
run_ansible_lint = True
offline_ansible_lint = True
run_ansible_test = False
run_flake8 = False
check_changelog = True
check_required_tags = False
require_v1_or_greater = False
tmp_root_dir = $work/tmp
ansible_local_tmp = $work/ansible-tmp
EOF

# As on Galaxy: the importer's own ansible-doc and ansible-lint, none of the project's settings.
log="$work/importer.log"
set +e
(cd "$work" && env -u ANSIBLE_COLLECTIONS_PATH -u ANSIBLE_CONFIG -u ANSIBLE_HOME \
   PATH="$venv/bin:$PATH" HOME="$work" GALAXY_IMPORTER_CONFIG="$work/galaxy-importer.cfg" \
   "$venv/bin/python" -m galaxy_importer.main "$tarball") >"$log" 2>&1
rc=$?
set -e

# What it found: every line but the "Loading <type> <name>" progress, then the contents.
grep -v -E '^(Loading [a-z_]+ |\s*$)' "$log" || true
if [ -s "$work/importer_result.json" ]; then
  "$venv/bin/python" - "$work/importer_result.json" <<'EOF'
import collections, json, sys
data = json.load(open(sys.argv[1]))
meta = data.get("metadata") or {}
counts = collections.Counter(item["content_type"] for item in data.get("contents") or [])
print("galaxy: %s.%s %s, requires_ansible %s; %s" % (
    meta.get("namespace"), meta.get("name"), meta.get("version"), data.get("requires_ansible"),
    ", ".join("%d %s" % (n, kind) for kind, n in sorted(counts.items()))))
roles = [c for c in (data.get("docs_blob") or {}).get("contents") or [] if c.get("content_type") == "role"]
print("galaxy: role READMEs: %s" % ", ".join("%s (%s)" % (r["content_name"], r.get("readme_file")) for r in roles))
EOF
fi

errors=$(grep -c -E '^(ERROR|CRITICAL):' "$log" || true)
warnings=$(grep -c -E '^WARNING:' "$log" || true)
if [ "$rc" -ne 0 ] || [ "$errors" -gt 0 ] || ! grep -q '^Importer processing completed successfully' "$log"; then
  echo "galaxy: galaxy-importer $GALAXY_IMPORTER_VERSION rejects $(basename "$tarball"): $errors error(s) above (exit $rc; log $log)" >&2
  exit 1
fi
echo "galaxy: galaxy-importer $GALAXY_IMPORTER_VERSION accepts $(basename "$tarball") ($warnings warning(s))"
