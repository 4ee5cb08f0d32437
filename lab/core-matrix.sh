#!/usr/bin/env bash
# The unit tests and ansible-test sanity on the LOWEST ansible-core that meta/runtime.yml
# claims (the highest is the one pinned in requirements.txt: `lab/test.sh unit` and
# `lab/test.sh sanity` run on it).
#   lab/core-matrix.sh            unit, then sanity, on the lowest claimed ansible-core
#   lab/core-matrix.sh unit|sanity
#   lab/core-matrix.sh venv       only make its venv (lab/test.sh all makes every venv at once first)
# The version is the newest patch release of the lowest claimed minor (CORE_LOWEST), checked
# against requires_ansible below. Its venv is .cache/core-<version>/ (ansible-core, and the
# pins of requirements.txt the unit tests need); sanity runs as lab/test.sh's run_sanity does.
# Both stages run even when the first fails; the exit code says whether both passed.
set -uo pipefail

# shellcheck source=lab/env.sh
. "$(dirname "$0")/env.sh"
export PY_COLORS=0

CORE_LOWEST=2.16.19
# What the unit tests import besides ansible-core, pinned as in requirements.txt.
UNIT_DEPS=(pytest hypothesis jinja2 netaddr prometheus-client)

minor=${CORE_LOWEST%.*}
claimed=$(sed -n "s/^requires_ansible: *'\(.*\)'.*/\1/p" meta/runtime.yml)
case "$claimed" in
  ">=$minor.0,"*|">=$minor.0") ;;
  *) echo "core-matrix: meta/runtime.yml claims '$claimed', this script tests $CORE_LOWEST: update CORE_LOWEST" >&2; exit 2 ;;
esac

venv="$top/.cache/core-$CORE_LOWEST"
# shellcheck source=lab/stage.sh
. "$top/lab/stage.sh"

make_venv() {
  local stamp="$venv/.installed" want pins=() dep pin
  for dep in "${UNIT_DEPS[@]}"; do
    pin=$(grep -i "^$dep==" requirements.txt) || pin=$dep
    pins+=("$pin")
  done
  want="ansible-core==$CORE_LOWEST ${pins[*]}"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  rm -rf "$venv" && "${PYTHON:-python3}" -m venv "$venv" \
    && "$venv/bin/pip" install -q --disable-pip-version-check "ansible-core==$CORE_LOWEST" "${pins[@]}" \
    && echo "$want" >"$stamp"
}

link_collection() {
  # only when missing or wrong: lab/test.sh runs this script beside its own unit tests, which read the link
  [ "$(readlink .cache/collections/ansible_collections/rdma/fabric 2>/dev/null)" = "$top" ] && return 0
  mkdir -p .cache/collections/ansible_collections/rdma
  ln -sfn "$top" .cache/collections/ansible_collections/rdma/fabric
}

run_unit() {
  # This venv's python, pytest and ansible; the collection from .cache/collections as in lab/test.sh.
  (PATH="$venv/bin:$PATH" "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/unit)
}

run_sanity() {
  # As lab/test.sh's run_sanity, with this version's ansible-test: the collection copied as
  # files outside the work tree, HOME under .cache, lab/get_pip_offline.py for get-pip.py.
  local dest="${TMPDIR:-/tmp}/rdma-fabric-sanity-$CORE_LOWEST/ansible_collections/rdma/fabric"
  rm -rf "$dest" && mkdir -p "$dest"
  git ls-files --cached --others --exclude-standard -z | rsync -a --from0 --ignore-missing-args --files-from=- ./ "$dest/"
  local home="$top/.cache/sanity-home-$CORE_LOWEST" v
  mkdir -p "$home/.ansible/test/cache"
  for v in $(grep -o "pip='[0-9.]*'" "$venv"/lib/python3*/site-packages/ansible_test/_internal/python_requirements.py | tr -dc '0-9.\n'); do
    cp lab/get_pip_offline.py "$home/.ansible/test/cache/get_pip_${v//./_}.py"
  done
  (cd "$dest" && HOME="$home" PATH="$venv/bin:$PATH" "$venv/bin/ansible-test" sanity --venv --python 3.11 --color no)
}

report() {
  echo
  echo "==> timings (ansible-core $CORE_LOWEST)"
  printf '%s\n' "${timings[@]}"
  if [ "${#failed[@]}" -gt 0 ]; then
    echo "FAILED stages: ${failed[*]}"
    return 1
  fi
  echo "all stages passed"
}

what=${1:-all}
[ "$what" = venv ] && { make_venv; exit; }
stage "venv core-$CORE_LOWEST" make_venv
[ "${#failed[@]}" -eq 0 ] || { report; exit 1; }
link_collection
case "$what" in
  all)
    stage "unit core-$CORE_LOWEST" run_unit
    stage "sanity core-$CORE_LOWEST" run_sanity
    ;;
  unit) stage "unit core-$CORE_LOWEST" run_unit ;;
  sanity) stage "sanity core-$CORE_LOWEST" run_sanity ;;
  *) echo "usage: $0 [all|unit|sanity|venv]" >&2; exit 2 ;;
esac
report
