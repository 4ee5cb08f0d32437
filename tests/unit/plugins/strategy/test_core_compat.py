"""Issue 30: ansible-core's private API is used in one place, plugin_utils/_core_compat.py,
which lists every private name it uses; no plugin imports ansible._internal."""
import ast
import glob
import os
import re

from ansible_collections.rdma.fabric.plugins.plugin_utils import _core_compat as K

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
COMPAT = os.path.join(REPO, "plugins", "plugin_utils", "_core_compat.py")


def _sources(pattern):
    for path in sorted(glob.glob(os.path.join(REPO, pattern), recursive=True)):
        with open(path) as handle:
            yield os.path.relpath(path, REPO), handle.read()


def test_no_plugin_imports_ansible_internal():
    found = []
    for path, source in _sources("plugins/**/*.py"):
        for node in ast.walk(ast.parse(source)):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            found += ["%s: %s" % (path, name) for name in names if name.startswith("ansible._internal")
                      or name.startswith("ansible.module_utils._internal")]
    assert not found


def _private_attributes(source):
    return sorted(set(node.attr for node in ast.walk(ast.parse(source))
                      if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")))


def test_the_strategy_and_the_lookup_use_no_private_name_themselves():
    # their own modules, and the LookupBase attributes every lookup plugin is given
    allowed = {"_core_compat", "_fileio", "_secrets", "_loader", "_templar"}
    for path in ("plugins/strategy/linear.py", "plugins/lookup/role_template.py"):
        source = dict(_sources(path))[path]
        assert set(_private_attributes(source)) <= allowed, path


def test_every_private_name_the_compat_module_uses_is_listed_in_its_docstring():
    with open(COMPAT) as handle:
        source = handle.read()
    doc = ast.get_docstring(ast.parse(source))
    own = {"_rdma_wake", "_wake_fd", "_drain_wakeups", "_rdma_fabric_code_cache", "_rdma_filters", "_rdma_checked"}
    used = set(_private_attributes(source)) - own
    assert used, "expected the strategy's private names"
    for name in used:
        assert re.search(r"``[\w.]*%s\b" % re.escape(name), doc), name
    # and the versions they were read in, the lowest and highest CI runs among them
    low, high = K.STRATEGY_CORE_RANGE
    for minor in range(low[1], high[1] + 1):
        assert re.search(r"\b2\.%d\.\d+\b" % minor, doc), minor
