# shellcheck shell=bash
# The lab scripts' shared environment (lab.sh, bench.sh, scale.sh, test.sh source it, they do
# not run it): `top` is the checkout and the working directory; podman uses the lab's
# containers.conf; ansible and the test tools come from .venv, the collection from the
# .cache/collections symlink, ANSIBLE_HOME under .cache; no colour in the output.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
export CONTAINERS_CONF="$top/lab/containers.conf"
export PATH="$top/.venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$top/.cache/collections:$top/.venv/lib/python3.11/site-packages"
export ANSIBLE_HOME="$top/.cache/ansible" ANSIBLE_FORCE_COLOR=false
