"""Make the repository importable as ansible_collections.rdma.fabric for unit tests.

Modules import their helpers as ``ansible_collections.rdma.fabric.plugins.module_utils``;
a symlinked collection tree under .cache/ gives pytest that layout without a copy.
"""
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLES = os.environ.get("RDMA_FABRIC_SAMPLES", os.path.join(REPO, "..", "shared", "samples"))
_ROOT = os.path.join(REPO, ".cache", "collections")
_LINK = os.path.join(_ROOT, "ansible_collections", "rdma", "fabric")

if not os.path.islink(_LINK):
    os.makedirs(os.path.dirname(_LINK), exist_ok=True)
    os.symlink(REPO, _LINK)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
