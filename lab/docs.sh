#!/usr/bin/env bash
# The collection's rendered docs with antsibull-docs: every module, filter and role with its
# argument spec, examples and return values; each role page opens with the role's README.md.
#   lab/docs.sh build   HTML into build/docs/build/html/ (open build/docs/build/html/index.html)
#   lab/docs.sh lint    antsibull-docs lint-collection-docs (markup, references, schemas)
# Offline: Sphinx fetches no intersphinx inventory. The labels the pages take from ansible-core's
# docs (common_return_values, action_plugins, ansible_configuration_settings, the ansible.builtin
# plugin pages) resolve through a small inventory written here, each one a link into
# docs.ansible.com. Any Sphinx warning fails the build.
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

# write_inventory RSTDIR OUTFILE: a Sphinx (v2) inventory of the ansible-core docs labels the
# pages refer to, as links into docs.ansible.com/projects/ansible/devel/: the fixed ones below
# and every ansible.builtin plugin page (label ansible_collections.ansible.builtin.NAME_TYPE).
# A label it does not know stays undefined, and Sphinx's warning fails the build.
write_inventory() {
  python3 - "$1" "$2" <<'PYEOF'
import os, re, sys, zlib
rst, out = sys.argv[1:]
CORE = {  # label: (page, title)
    "common_return_values": ("reference_appendices/common_return_values.html", "Return Values"),
    "action_plugins": ("plugins/action.html", "Action plugins"),
    "ansible_configuration_settings": ("reference_appendices/config.html", "Ansible Configuration Settings"),
}
BUILTIN = re.compile(r"ansible_collections\.ansible\.builtin\.([a-z0-9_]+)_([a-z]+)$")
text = []
for root, _, files in os.walk(rst):
    for name in files:
        if name.endswith(".rst"):
            with open(os.path.join(root, name)) as handle:
                text.append(handle.read())
text = "\n".join(text)
refs = set(re.findall(r":ref:`(?:[^`<]*<)?([^`<>]+?)>?`", text))
refs |= set("ansible_collections.ansible.builtin.%s_%s" % found
            for found in re.findall(r":ansplugin:`(?:[^`<]*<)?ansible\.builtin\.([a-z0-9_]+)#([a-z]+)>?`", text))
lines = []
for label in sorted(refs):
    if label in CORE:
        page, title = CORE[label]
    elif BUILTIN.match(label):
        plugin, kind = BUILTIN.match(label).groups()
        page, title = "collections/ansible/builtin/%s_%s.html" % (plugin, kind), "ansible.builtin.%s %s" % (plugin, kind)
    else:
        continue
    anchor = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    lines.append("%s std:label -1 %s#%s %s" % (label, page, anchor, title))
with open(out, "wb") as handle:
    handle.write(b"# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n"
                 b"# The remainder of this file is compressed using zlib.\n")
    handle.write(zlib.compress(("\n".join(lines) + "\n").encode()))
print("docs: %d labels of the ansible-core docs linked offline: %s" % (len(lines), ", ".join(line.split()[0] for line in lines)))
PYEOF
}

# add_role_readmes RSTDIR: each role page (rendered from meta/argument_specs.yml) gets a README
# section, the role's README.md as HTML (markdown-it, in .venv through ansible-lint's rich),
# before the entry points. A role without README.md or without a page fails.
add_role_readmes() {
  python3 - "$1" "$top/roles" <<'PYEOF'
import os, re, sys
from markdown_it import MarkdownIt
rst, roles = sys.argv[1:]
md = MarkdownIt("commonmark", {"html": False}).enable("table")
for role in sorted(os.listdir(roles)):
    readme = os.path.join(roles, role, "README.md")
    page = os.path.join(rst, "collections", "rdma", "fabric", "%s_role.rst" % role)
    if not os.path.isfile(readme):
        sys.exit("docs: roles/%s has no README.md" % role)
    if not os.path.isfile(page):
        sys.exit("docs: no role page %s for roles/%s" % (page, role))
    with open(readme) as handle:
        html = md.render(handle.read())
    html = re.sub(r"<h1>.*?</h1>\n?", "", html, count=1)  # the page has its title
    html = re.sub(r"<(/?)h([1-5])>", lambda m: "<%sh%d>" % (m.group(1), int(m.group(2)) + 1), html)
    html = html.replace("<table>", '<table class="docutils align-default">')  # the theme's table style
    block = ("\n.. _ansible_collections.rdma.fabric.%s_role__readme:\n\nREADME\n------\n\n"
             "The role's ``README.md``: what it reads, writes and checks, and its variables.\n\n"
             ".. raw:: html\n\n" % role)
    body = '<div class="rdma-fabric-role-readme">\n' + html + "</div>"
    block += "".join(("    %s\n" % line) if line.strip() else "\n" for line in body.splitlines())
    with open(page) as handle:
        text = handle.read()
    marker = "\n.. _ansible_collections.rdma.fabric.%s_role__entrypoint-" % role
    if marker not in text:
        sys.exit("docs: %s: no entry point section to put the README before" % page)
    text = text.replace(marker, block + "\n" + marker, 1)
    with open(page, "w") as handle:
        handle.write(text)
print("docs: README.md added to the role pages of %s" % ", ".join(sorted(os.listdir(roles))))
PYEOF
}

build() {
  local dest="$top/build/docs"
  rm -rf "$dest" && mkdir -p "$dest" && chmod 0755 "$dest"
  antsibull-docs sphinx-init --use-current --fail-on-error --dest-dir "$dest" \
    --project rdma.fabric --title "rdma.fabric" --intersphinx ansible_devel:https://docs.ansible.com/projects/ansible/devel/ \
    rdma.fabric >/dev/null
  cd "$dest"
  mkdir -p rst && chmod 0700 rst
  antsibull-docs --config-file antsibull-docs.cfg collection --use-current --fail-on-error \
    --cleanup everything --dest-dir rst rdma.fabric
  add_role_readmes rst
  write_inventory rst "$dest/ansible_devel.inv"
  cat >>conf.py <<EOF

# Offline build (lab/docs.sh): only the inventory written next to this file, ansible-core's
# labels as links into docs.ansible.com; nothing is fetched.
intersphinx_mapping = {
    'ansible_devel': ('https://docs.ansible.com/projects/ansible/devel/', '$dest/ansible_devel.inv'),
}
EOF
  sphinx-build -M html rst build -c . -q -w warnings.log
  if [ -s warnings.log ]; then
    cat warnings.log >&2
    echo "docs: Sphinx warnings above" >&2
    return 1
  fi
  local page role
  page=build/html/collections/rdma/fabric/mlnx_qos_module.html
  [ -s "$page" ] || { echo "docs: $page missing" >&2; return 1; }
  for role in "$top"/roles/*/; do
    role=$(basename "$role")
    page=build/html/collections/rdma/fabric/${role}_role.html
    [ -s "$page" ] || { echo "docs: $page missing" >&2; return 1; }
    grep -q 'rdma-fabric-role-readme' "$page" || { echo "docs: $page has no README section" >&2; return 1; }
  done
  echo "docs: open $dest/build/html/index.html"
}

case "${1:-}" in
  build) build ;;
  lint) lint ;;
  *) echo "usage: $0 build|lint" >&2; exit 2 ;;
esac
