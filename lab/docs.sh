#!/usr/bin/env bash
# The collection's rendered docs with antsibull-docs: every module, filter and role with its
# argument spec, examples and return values.
#   lab/docs.sh build   HTML into build/docs/build/html/ (open build/docs/build/html/index.html)
#   lab/docs.sh lint    antsibull-docs lint-collection-docs (markup, references, schemas)
# Offline: Sphinx gets no intersphinx inventory from docs.ansible.com, so the two labels that live
# there (common_return_values, ansible_configuration_settings) are the only warnings tolerated.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export PATH="$top/.venv/bin:$PATH"
# Only this collection (and ansible.builtin): not the ~100 collections of the `ansible` package.
export ANSIBLE_COLLECTIONS_PATH="$top/.cache/collections" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
export ANSIBLE_HOME="$top/.cache/ansible"
mkdir -p .cache/collections/ansible_collections/rdma
ln -sfn "$top" .cache/collections/ansible_collections/rdma/fabric

lint() {
  antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs dependent \
    --disallow-unknown-collection-refs --check-extra-docs-refs \
    "$top/.cache/collections/ansible_collections/rdma/fabric"
}

build() {
  local dest="$top/build/docs"
  rm -rf "$dest" && mkdir -p "$dest" && chmod 0755 "$dest"
  antsibull-docs sphinx-init --use-current --fail-on-error --dest-dir "$dest" \
    --project rdma.fabric --title "rdma.fabric" --intersphinx ansible_devel:https://docs.ansible.com/projects/ansible/devel/ \
    rdma.fabric >/dev/null
  cd "$dest"
  echo 'intersphinx_mapping = {}  # offline build: no inventory is fetched' >>conf.py
  mkdir -p rst && chmod 0700 rst
  antsibull-docs --config-file antsibull-docs.cfg collection --use-current --fail-on-error \
    --cleanup everything --dest-dir rst rdma.fabric
  sphinx-build -M html rst build -c . -q -w warnings.log
  local bad
  bad=$(grep -v -E "undefined label: '(common_return_values|ansible_configuration_settings)'" warnings.log || true)
  if [ -n "$bad" ]; then
    echo "$bad" >&2
    echo "docs: Sphinx warnings above" >&2
    return 1
  fi
  local page
  for page in build/html/collections/rdma/fabric/{mlnx_qos_module,qos_pending_filter,roce_qos_role}.html; do
    [ -s "$page" ] || { echo "docs: $page missing" >&2; return 1; }
  done
  echo "docs: open $dest/build/html/index.html"
}

case "${1:-}" in
  build) build ;;
  lint) lint ;;
  *) echo "usage: $0 build|lint" >&2; exit 2 ;;
esac
