#!/usr/bin/env bash
# Every test of rdma.fabric, stage by stage, with timings:
#   lab/test.sh all              deps, the venvs (at once), image; then unit and sanity on the highest and
#                                lowest ansible-core, lint, galaxy, ee, build, docs, rules and every Molecule
#                                scenario, two at once, the longest first (RDMA_FABRIC_JOBS=1: one at a time)
#   lab/test.sh unit|sanity|lint|build
#   lab/test.sh rules            the Prometheus alert pack: promtool check rules and its unit tests (tests/prometheus)
#   lab/test.sh core             unit and sanity on the lowest ansible-core meta/runtime.yml claims (lab/core-matrix.sh)
#   lab/test.sh galaxy           galaxy-importer (what Galaxy and Automation Hub run on import) on the built collection
#   lab/test.sh docs             antsibull-docs lint-collection-docs (make docs builds the HTML)
#   lab/test.sh ee               the execution environment: build context, image, drift check in it
#   lab/test.sh molecule [NAMES] every scenario, or the named ones ("a b"); two at once
#                                (RDMA_FABRIC_LANES=1 or RDMA_FABRIC_JOBS=1: one after the other)
#   lab/test.sh journey          the journey over the lab make lab starts (lab/journey.sh): every feature, then
#                                each fault injected, named and cleared; in `all` it starts first in the pool
#   lab/test.sh bench            the QoS converge benchmark on the lab
# Every stage runs even when an earlier one fails; the exit code says whether all passed.
set -uo pipefail

# shellcheck source=lab/env.sh
. "$(dirname "$0")/env.sh"
export PY_COLORS=0 MOLECULE_NO_LOG=false

# shellcheck source=lab/stage.sh
. "$top/lab/stage.sh"

link_collection() {
  # Ansible finds the collection under a symlinked ansible_collections/rdma/fabric.
  mkdir -p .cache/collections/ansible_collections/rdma
  ln -sfn "$top" .cache/collections/ansible_collections/rdma/fabric
}

# pool NAME CMD [NAME CMD ...]: the jobs, at most RDMA_FABRIC_JOBS (2, the machines' cores) at
# once, started in the order given (the longest first, so that the short ones fill the gaps);
# each job's output printed whole after all end, each job timed and judged as a stage of its
# own; one more line gives the wall time of the whole pool. Fails when any job fails.
pool() {
  local title=$1; shift
  local max=${RDMA_FABRIC_JOBS:-${RDMA_FABRIC_LANES:-2}} dir start=$SECONDS i=0 rc=0 secs verdict
  local -a names=()
  dir=$(mktemp -d)
  echo "==> $title ($max at once)"
  while [ $# -ge 2 ]; do
    names+=("$1")
    while [ "$(jobs -rp | wc -l)" -ge "$max" ]; do wait -n; done
    # shellcheck disable=SC2086
    ( s=$SECONDS
      if $2 >"$dir/$i.log" 2>&1; then v=ok; else v=FAILED; fi
      echo "$((SECONDS - s)) $v" >"$dir/$i.result" ) &
    i=$((i + 1)); shift 2
  done
  wait
  for i in "${!names[@]}"; do
    echo "==> ${names[$i]}"
    cat "$dir/$i.log"
    read -r secs verdict 2>/dev/null <"$dir/$i.result" || { secs=-; verdict=FAILED; }
    timings+=("$(printf '%-28s %5ss  %s' "${names[$i]}" "$secs" "$verdict")")
    [ "$verdict" = ok ] || { failed+=("${names[$i]}"); rc=1
      failure_tails+=("==> ${names[$i]} FAILED, its last 80 lines:" "$(tail -80 "$dir/$i.log")"); }
  done
  timings+=("$(printf '%-28s %5ss  (wall, %s at once)' "$title" $((SECONDS - start)) "$max")")
  rm -rf "$dir"
  return "$rc"
}

run_unit() {
  pytest -q -p no:cacheprovider tests/unit
}

sanity_venv() {
  # ansible-test's own venv, .cache/sanity-venv: the ansible-core requirements.txt pins
  local svenv="$top/.cache/sanity-venv" pipver
  pipver=$(sed -n 's/^ansible-core==//p' requirements.txt)
  if [ ! -x "$svenv/bin/ansible-test" ] || [ "$("$svenv/bin/python" -c 'import importlib.metadata as m; print(m.version("ansible-core"))' 2>/dev/null)" != "$pipver" ]; then
    rm -rf "$svenv" && "$PYTHON" -m venv "$svenv" \
      && "$svenv/bin/pip" install -q --disable-pip-version-check "ansible-core==$pipver" || return 1
  fi
}

run_sanity() {
  # ansible-test wants the collection at .../ansible_collections/rdma/fabric, as files.
  # Outside the work tree: inside it, ansible-test would ask git and see only tracked files.
  local dest="${TMPDIR:-/tmp}/rdma-fabric-sanity/ansible_collections/rdma/fabric"
  rm -rf "$dest" && mkdir -p "$dest"
  git ls-files --cached --others --exclude-standard -z | rsync -a --from0 --ignore-missing-args --files-from=- ./ "$dest/"
  # ansible-test runs from its own venv, with HOME under .cache so that its per-test
  # venvs and its pip bootstrap stand-in (lab/get_pip_offline.py) stay in the project.
  local home="$top/.cache/sanity-home" svenv="$top/.cache/sanity-venv"
  sanity_venv || return 1
  mkdir -p "$home/.ansible/test/cache"
  for v in $(grep -o "pip='[0-9.]*'" "$svenv"/lib/python3*/site-packages/ansible_test/_internal/python_requirements.py | tr -dc '0-9.\n'); do
    cp lab/get_pip_offline.py "$home/.ansible/test/cache/get_pip_${v//./_}.py"
  done
  (cd "$dest" && HOME="$home" "$svenv/bin/ansible-test" sanity --venv --python 3.11 --color no)
}

run_rules() {
  # extensions/prometheus/*.rules.yml with the real promtool (Debian's prometheus, lab/install-deps.sh):
  # the rules load, and every alert fires and stays silent where tests/prometheus/*.test.yml says
  command -v promtool >/dev/null \
    || { echo "rules: promtool not found: install Debian's prometheus package (lab/install-deps.sh)"; return 1; }
  promtool check rules extensions/prometheus/*.rules.yml && promtool test rules tests/prometheus/*.test.yml
}

run_lint() {
  yamllint -s . && ansible-lint --profile production -q
}

run_build() {
  local out="$top/.cache/build"
  rm -rf "$out" && mkdir -p "$out"
  ansible-galaxy collection build --force --output-path "$out" . \
    && ansible-galaxy collection install --force -p "$out/installed" "$out"/rdma-fabric-*.tar.gz \
    && for m in plugins/modules/*.py; do
         m=$(basename "$m" .py)
         ANSIBLE_COLLECTIONS_PATH="$out/installed" ansible-doc "rdma.fabric.$m" >/dev/null \
           || { echo "ansible-doc rdma.fabric.$m failed"; return 1; }
       done \
    && run_installed
}

run_installed() {
  # The installed collection, not this tree: every playbook by FQCN, and module_defaults groups.
  local out="$top/.cache/build" p
  for p in playbooks/*.yml; do
    p=$(basename "$p" .yml)
    ANSIBLE_COLLECTIONS_PATH="$out/installed" ansible-playbook --syntax-check -i localhost, "rdma.fabric.$p" >/dev/null \
      || { echo "ansible-playbook rdma.fabric.$p: not found in the installed collection"; return 1; }
  done
  ANSIBLE_COLLECTIONS_PATH="$out/installed" ansible-playbook -i localhost, tests/playbooks/module_defaults_group.yml >/dev/null \
    || { echo "module_defaults group/rdma.fabric.qos failed (tests/playbooks/module_defaults_group.yml)"; return 1; }
}

scenarios() {
  local d
  for d in molecule/*/molecule.yml; do basename "$(dirname "$d")"; done
}

run_scenario() {
  molecule test -s "$1"
}

# The last CI times (seconds, 2 cores) of the jobs pool() runs: sort_jobs puts the longest first,
# so that two jobs at once finish together and the short ones fill the end. Update them from the
# report of a CI run; a job not listed counts as 300 s. A fresh clone of 2026-12-06, round 4
# (the journey with its make lab and the Slurm gate).
declare -A LAST_CI=(
  [journey]=989 [unit]=438 ["unit core-lowest"]=354 [sanity]=233 ["sanity core-lowest"]=246
  [lint]=87 [galaxy]=58 [ee]=90 [build]=34 [docs]=17 [rules]=4
  ["molecule health"]=262 ["molecule gpudirect"]=271
  ["molecule roce_qos"]=354 ["molecule rails"]=272 ["molecule default"]=158 ["molecule opensm_ha"]=243
)

sort_jobs() {  # sort_jobs NAME CMD [NAME CMD ...]: sorted_jobs=(the pairs, longest last CI time first)
  local -a names=() cmds=()
  local i
  while [ $# -ge 2 ]; do names+=("$1"); cmds+=("$2"); shift 2; done
  sorted_jobs=()
  for i in $(for i in "${!names[@]}"; do echo "${LAST_CI[${names[$i]}]:-300} $i"; done | sort -k1,1nr -k2,2n | cut -d' ' -f2); do
    sorted_jobs+=("${names[$i]}" "${cmds[$i]}")
  done
}

molecule_jobs() {  # molecule_jobs SCENARIO...: molecule_job_list=("molecule NAME" "run_scenario NAME" ...)
  local s
  molecule_job_list=()
  for s in "$@"; do molecule_job_list+=("molecule $s" "run_scenario $s"); done
}

failure_tails=()
report() {
  # a failed job's last lines again at the very end, where a CI excerpt (the tail) shows them
  [ "${#failure_tails[@]}" -eq 0 ] || { echo; printf '%s\n' "${failure_tails[@]}"; }
  echo
  echo "==> timings"
  printf '%s\n' "${timings[@]}"
  if [ "${#failed[@]}" -gt 0 ]; then
    echo "FAILED stages: ${failed[*]}"
    return 1
  fi
  echo "all stages passed"
}

# The python3 of the system (not .venv's) makes the venvs: lab/test.sh all makes them at once.
export PYTHON; PYTHON=${PYTHON:-$(PATH=${PATH#"$top/.venv/bin:"} command -v python3)}
what=${1:-all}
if [ "$what" = all ] || [ "$what" = molecule ] || [ "$what" = bench ] || [ "$what" = journey ]; then
  stage deps lab/install-deps.sh || true
fi
if [ "$what" = all ]; then
  # the toolchain, and the venvs of the lowest ansible-core, of ansible-test and of
  # galaxy-importer, all at once (mostly downloads and unpacking)
  # and the node image (debootstrap when its recipe changed: minutes of downloads too)
  pool venvs image lab/image.sh venv lab/venv.sh "venv core-lowest" "lab/core-matrix.sh venv" \
    "venv sanity" sanity_venv "venv galaxy-importer" "lab/galaxy.sh --venv"
else
  stage venv lab/venv.sh
fi
for f in "${failed[@]}"; do [ "$f" = venv ] && { report; exit 1; }; done
link_collection

case "$what" in
  all)
    for f in "${failed[@]}"; do [ "$f" = image ] && { report; exit 1; }; done
    export RDMA_FABRIC_NODE_IMAGE; RDMA_FABRIC_NODE_IMAGE=$(lab/image.sh 2>/dev/null)
    # unit tests and ansible-test sanity on the highest (pinned) and the lowest claimed
    # ansible-core, lint, galaxy, ee, build, docs, rules and every Molecule scenario: each about
    # one busy core, so two at once, the longest first (LAST_CI); a job starts as soon as
    # another ends, with no barrier between the checks and Molecule
    # shellcheck disable=SC2046
    molecule_jobs $(scenarios)
    sort_jobs \
      journey lab/journey.sh \
      unit run_unit "unit core-lowest" "lab/core-matrix.sh unit" \
      sanity run_sanity "sanity core-lowest" "lab/core-matrix.sh sanity" \
      lint run_lint galaxy lab/galaxy.sh ee lab/ee.sh build run_build docs "lab/docs.sh lint" rules run_rules \
      "${molecule_job_list[@]}"
    pool "checks and molecule" "${sorted_jobs[@]}"
    ;;
  unit) stage unit run_unit ;;
  sanity) stage sanity run_sanity ;;
  lint) stage lint run_lint ;;
  rules) stage rules run_rules ;;
  build) stage build run_build ;;
  galaxy) stage galaxy lab/galaxy.sh ;;
  core) stage "lowest ansible-core" lab/core-matrix.sh ;;
  docs) stage docs lab/docs.sh lint ;;
  ee)
    stage image lab/image.sh
    export RDMA_FABRIC_NODE_IMAGE; RDMA_FABRIC_NODE_IMAGE=$(lab/image.sh 2>/dev/null)
    stage ee lab/ee.sh
    ;;
  molecule)
    stage image lab/image.sh
    export RDMA_FABRIC_NODE_IMAGE; RDMA_FABRIC_NODE_IMAGE=$(lab/image.sh 2>/dev/null)
    # shellcheck disable=SC2046,SC2086
    molecule_jobs ${2:-$(scenarios)}
    sort_jobs "${molecule_job_list[@]}"
    pool molecule "${sorted_jobs[@]}"
    ;;
  journey)
    stage image lab/image.sh
    stage journey lab/journey.sh
    ;;
  bench)
    stage image lab/image.sh
    stage bench "$top/lab/bench.sh"
    ;;
  *) echo "usage: $0 all|unit|sanity|rules|lint|build|galaxy|core|docs|ee|molecule [SCENARIO]|journey|bench" >&2; exit 2 ;;
esac
report
