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

# Property tests (hypothesis): the same examples on every run by default, so that make test
# cannot fail on a draw no earlier run made; HYPOTHESIS_PROFILE=explore draws new ones (and
# keeps failures in .hypothesis/) when working on a parser.
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:   # the property tests skip themselves
    _hypothesis_settings = None
if _hypothesis_settings is not None:
    _hypothesis_settings.register_profile("rdma_fabric", derandomize=True, database=None)
    _hypothesis_settings.register_profile("explore")
    _hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "rdma_fabric"))
