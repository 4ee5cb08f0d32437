# -*- coding: utf-8 -*-
"""The health area object (issue 30): its settings from the argument spec, its checks, the
timer's files; the node timer ships with only the module_utils files it imports (the closure
of reports/_health_timer.py's imports), and that closure alone imports on a Python without ansible."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import json

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.filter.area import area_errors, area_plan
from ansible_collections.rdma.fabric.plugins.module_utils.areas import health
from ansible_collections.rdma.fabric.plugins.plugin_utils._node_package import module_utils_closure
from ansible_collections.rdma.fabric.plugins.plugin_utils import _node_package

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE_UTILS = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "..", "plugins", "module_utils"))
ENTRY = os.path.join(MODULE_UTILS, "reports/_health_timer.py")
REPO = os.path.abspath(os.path.join(MODULE_UTILS, "..", ".."))


def _variables(**over):
    with open(os.path.join(REPO, "roles", "health", "defaults", "main.yml")) as handle:
        variables = yaml.safe_load(handle)
    variables.update(health_report_dir="/tmp/report", inventory_hostname="gpu-01", rdma_fabric_environment={})
    variables.update(over)
    return variables


def _spec(**over):
    return health.spec(_variables(**over), lambda term, template_vars=None: "text of %s %s" % (term, sorted(template_vars or {})),
                       _node_package.files(health.NODE_ENTRY))


def test_the_timer_gets_its_imports_and_not_the_rest():
    files, root = module_utils_closure(ENTRY)
    names = [os.path.relpath(f, root) for f in files]
    assert "reports/_health_timer.py" in names and "reports/_health.py" in names and "common/_fileio.py" in names
    # the node's drift step (_drift_timer) runs the drift check's own code: state_check's resources
    for needed in ("drift/_drift_timer.py", "areas/_spec.py", "drift/_drift_areas.py", "drift/_state_check.py", "resources/_dcqcn.py",
                   "resources/_kernel_cmdline.py", "resources/_node_files.py", "areas/roce_qos.py", "areas/__init__.py"):
        assert needed in names, needed
    # the fabric acceptance and rails modules are not the timer's
    for other in ("acceptance/_perftest_run.py", "acceptance/_acceptance.py", "resources/_rail_addresses.py"):
        assert other not in names, other
    assert len(names) < sum(len([n for n in found if n.endswith(".py")]) for _top, _dirs, found in os.walk(MODULE_UTILS))


def test_the_shipped_files_alone_import_the_timer(tmp_path):
    entries = [f for f in _spec()["files"] if "/module_utils/" in f["path"]]
    for entry in entries:
        assert entry["mode"] == "0644"
        path = str(tmp_path) + entry["path"]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(entry["content"])
    # -S: no site-packages (no ansible), -I: no user paths; only the shipped files on sys.path
    # and the drift step's imports (ansible's convert_bool provided by _drift_timer without Ansible)
    code = ("import sys; sys.path.insert(0, %r); "
            "from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health_timer; "
            "from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_timer; "
            "_drift_timer._provide_convert_bool(); "
            "from ansible_collections.rdma.fabric.plugins.module_utils.drift import _state_check, _drift_areas; "
            "assert _drift_timer.check_module().check_mode; "
            "print(_health_timer.__name__)" % (str(tmp_path) + health.TIMER_DIR))
    proc = subprocess.run([sys.executable, "-S", "-I", "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("_health_timer")


def test_the_timer_plan_and_its_config():
    spec = _spec(health_timer=True, health_interval=2)
    plan = area_plan({}, "health", spec)
    paths = [f["path"] for f in plan["timer"]["files"]]
    assert paths[:4] == ["/usr/local/lib/rdma-fabric/rdma-fabric-health", "/etc/systemd/system/rdma-fabric-health.service",
                         "/etc/systemd/system/rdma-fabric-health.timer", "/etc/rdma-fabric/health.json"]
    assert plan["timer"]["units"] == [{"name": "rdma-fabric-health.timer", "enabled": True, "active": True}]
    assert plan["requests"] == [{"resource": "node_files", "name": "health timer", "config": plan["timer"]}]
    config = json.loads(plan["timer"]["files"][3]["content"])
    assert config["host"] == "gpu-01" and config["interval"] == 2 and config["checks"] == spec["checks"]
    assert config["period_seconds"] == 300.0    # health_timer_every: 5min, exported for the staleness alerts
    assert spec["read"]["checks"]["sm"] is True and "nccl_log" not in spec["read"]
    assert area_plan({}, "health", _spec(health_timer="no"))["timer"]["units"][0]["enabled"] is False


@pytest.mark.parametrize("over, words", [
    ({"health_interval": -1}, "health_interval=-1"),
    ({"health_timer_every": "sometimes"}, "health_timer_every='sometimes'"),
    ({"health_thresholds": {"max_pause_per_s": -1}}, "health_thresholds.max_pause_per_s=-1"),
    ({"health_thresholds": ["x"]}, "health_thresholds"),
])
def test_each_problem_names_the_variable(over, words):
    found = area_errors(_spec(**over), "health")
    assert any(words in e for e in found), found
    assert area_errors(_spec(), "health") == []


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


def test_a_missing_entry_is_an_error():
    with pytest.raises((IOError, OSError)):
        _node_package.files("_no_such_file.py")


@pytest.mark.parametrize("span, seconds", [
    ("1h", 3600.0), ("5min", 300.0), ("1h 30min", 5400.0), ("90", 90.0), (90, 90.0), ("5s", 5.0),
    ("2m", 120.0), ("1M", 2629800.0), ("500ms", 0.5), ("1d 2h", 93600.0),
    ("sometimes", None), ("", None), (True, None), (None, None), ("5 parsecs", None),
])
def test_a_systemd_time_span_in_seconds(span, seconds):
    assert health.span_seconds(span) == seconds
