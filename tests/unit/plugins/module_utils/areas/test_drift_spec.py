# -*- coding: utf-8 -*-
"""The spec each role leaves on the node (issue 31 C, ``areas/_spec``): the file in each area
plan's ``drift_spec`` holds exactly the spec the drift check sends (the same dict the role plans
with), its version, mode 0600 (the opensm spec holds the SM_Key); planned again from the file,
the node gets the same file (a converged node is not drift); the health timer's drift entry."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.filter.area import area_plan
from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.areas import health as H
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.drift import test_drift_node_plan as node_plan
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.areas import test_area_gpudirect as gpudirect_tests
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.areas import test_area_nccl_env as nccl
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.areas import test_area_opensm as opensm_tests

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))


def _json(value):
    return json.loads(json.dumps(value))


def _cases():
    ports = opensm_tests.gathered()
    return [
        ("roce_qos", node_plan.roce_spec(), node_plan.FACTS, {"rdma": node_plan.FACTS}),
        ("gpudirect", gpudirect_tests.spec(), gpudirect_tests.facts(), {"gdr": gpudirect_tests.facts()}),
        ("opensm", opensm_tests.spec(), {"gathered": ports, "ibstat": opensm_tests.IBSTAT},
         {"opensm": {"markers": node_plan.markers("/etc/debian_version"), "ports": node_plan.IBSTAT_PORTS}}),
    ]


@pytest.mark.parametrize("area, spec, role_facts, node_facts", _cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_file_is_the_spec_the_drift_check_sends_and_planning_from_it_gives_the_same_file(
        area, spec, role_facts, node_facts):
    role = area_plan(role_facts, area, spec)["drift_spec"]                 # the role's plan (the file it writes)
    (entry,) = role["files"]
    assert role["units"] == []
    assert entry["path"] == "/etc/rdma-fabric/spec/%s.json" % area and entry["mode"] == "0600"
    loaded, version, collection = _spec.load(entry["content"], area)
    # exactly the spec the drift check sends to state_check for this host and area
    assert loaded == _json(spec)
    assert version == _spec.version(spec) and collection == _spec.COLLECTION_VERSION
    # the drift check's own planning on the node gives the same file, from the spec or from the file
    node = A.plan_inputs(area, spec, node_facts, "h1")["plan"]["drift_spec"]
    again = A.plan_inputs(area, loaded, node_facts, "h1")["plan"]["drift_spec"]
    assert node == role == again


def test_the_opensm_spec_keeps_its_key_in_a_root_only_file():
    spec = opensm_tests.spec()
    key = spec["settings"]["sm_key"]
    entry = area_plan({"gathered": opensm_tests.gathered(), "ibstat": opensm_tests.IBSTAT}, "opensm", spec)[
        "drift_spec"]["files"][0]
    assert key and key in entry["content"] and entry["mode"] == "0600"


@pytest.fixture
def nccl_facts(tmp_path, monkeypatch):
    """rdma_facts of the nccl_env tests' node (test_area_nccl_env's facts)."""
    nccl.host_sysfs(tmp_path, monkeypatch)
    subsets = set(nccl.rf.SUBSETS)
    raw = {"devices": nccl.rf.read_rdma_sysfs(subsets), "topo_text": nccl.TOPO_TEXT, "gpu_list": None,
           "gpu_pci": {}, "errors": []}
    return nccl.rf.derive(raw, subsets)


def test_nccl_env_and_nic_firmware_plans_leave_their_spec(nccl_facts):
    from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.areas import test_area_nic_firmware as nf
    spec = nf._defaults()
    plan = area_plan(nf._facts(("mlx5_0", "0000:17:00.0", "Ethernet")), "nic_firmware", spec)
    assert _spec.load(plan["drift_spec"]["files"][0]["content"], "nic_firmware")[0] == _json(spec)
    spec = nccl.spec()
    plan = area_plan({"rdma": nccl_facts}, "nccl_env", spec)
    assert plan["files"]
    assert _spec.load(plan["drift_spec"]["files"][0]["content"], "nccl_env")[0] == _json(spec)


@pytest.mark.parametrize("text, words", [
    ("{", "not JSON"), ("[]", "expected {format"),
    (json.dumps({"format": 9, "area": "roce_qos", "spec": {}}), "format 9"),
    (_spec.content("opensm", {"settings": {}}), "holds the area 'opensm'"),
    (_spec.content("roce_qos", {"settings": {}}).replace('"settings": {}', '"settings": {"x": 1}'),
     "does not match"),
])
def test_a_file_it_did_not_write_is_refused_naming_why(text, words):
    with pytest.raises(_spec.SpecError, match=words):
        _spec.load(text, "roce_qos")


def test_the_collection_version_is_galaxys():
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        assert yaml.safe_load(handle)["version"] == _spec.COLLECTION_VERSION


def test_the_health_timer_config_has_the_drift_entry_next_to_the_textfile():
    settings = {"host": "n1", "interval": 5, "state_file": "/s", "flap_window": 1, "boot_grace": 1, "check_sm": True,
                "check_gdr": True, "check_lossless": True, "timer_textfile": "/var/lib/ne/rdma_fabric_health.prom",
                "timer_drift": True}
    config = json.loads(H.timer_config(settings))
    assert config["drift"] == {"spec_dir": "/etc/rdma-fabric/spec", "textfile": "/var/lib/ne/rdma_fabric_node_drift.prom"}
    assert "drift" not in json.loads(H.timer_config(dict(settings, timer_drift=False)))
