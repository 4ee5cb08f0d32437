# -*- coding: utf-8 -*-
"""The node timer ships with only the module_utils files it imports (issue 30): the closure of
_health_timer.py's imports, and that closure alone imports and runs on a Python without
ansible or the rest of the collection."""
from __future__ import absolute_import, division, print_function

import os
import subprocess
import sys

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.health import health_node_files, module_utils_closure

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE_UTILS = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "plugins", "module_utils"))
ENTRY = os.path.join(MODULE_UTILS, "_health_timer.py")


def test_the_timer_gets_its_imports_and_not_the_rest():
    files, root = module_utils_closure(ENTRY)
    names = [os.path.relpath(f, root) for f in files]
    assert "_health_timer.py" in names and "_health.py" in names and "_fileio.py" in names
    # the resource modules of the converge are not the timer's
    for other in ("_kernel_cmdline.py", "_dcqcn.py", "_drift_areas.py", "_state_check.py", "_node_files.py"):
        assert other not in names, other
    assert len(names) < len([n for n in os.listdir(MODULE_UTILS) if n.endswith(".py")])


def test_the_shipped_files_alone_import_the_timer(tmp_path):
    entries = health_node_files([ENTRY], str(tmp_path))
    for entry in entries:
        assert entry["mode"] == "0644"
        os.makedirs(os.path.dirname(entry["path"]), exist_ok=True)
        with open(entry["path"], "w") as handle:
            handle.write(entry["content"])
    # -S: no site-packages (no ansible), -I: no user paths; only the shipped files on sys.path
    code = ("import sys; sys.path.insert(0, %r); "
            "from ansible_collections.rdma.fabric.plugins.module_utils import _health_timer; "
            "print(_health_timer.__name__)" % str(tmp_path))
    proc = subprocess.run([sys.executable, "-S", "-I", "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("_health_timer")


def test_a_subpackage_brings_its_init(tmp_path):
    root = tmp_path / "module_utils"
    (root / "areas").mkdir(parents=True)
    (root / "areas" / "__init__.py").write_text("")
    (root / "areas" / "one.py").write_text("from ansible_collections.rdma.fabric.plugins.module_utils import _two\n")
    (root / "_two.py").write_text("X = 1\n")
    (root / "_entry.py").write_text("from ansible_collections.rdma.fabric.plugins.module_utils.areas import one\n")
    (root / "_unused.py").write_text("")
    files, base = module_utils_closure(str(root / "_entry.py"))
    assert sorted(os.path.relpath(f, base) for f in files) == ["_entry.py", "_two.py", "areas/__init__.py", "areas/one.py"]


@pytest.mark.parametrize("paths", [[], "x", ["/nonexistent/_x.py"], ["/etc/hostname"]])
def test_a_wrong_list_is_named(paths):
    with pytest.raises(AnsibleFilterError, match="health_node_files"):
        health_node_files(paths, "/usr/local/lib/rdma-fabric")
