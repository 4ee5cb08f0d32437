# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Values that were not read (None) in rdma_health's observations: a port whose state, rate or
SM LID cannot be read is a skipped check with its reason, never an error and never a pass
(issue #31: the lab's SM nodes, whose umad2sim sysfs the module cannot open, failed health.yml
with 'link ibsim0 port 1: expected ACTIVE/LinkUp, actual None/None'). The gate's bare rdma facts
have no skipped-checks report: there an unread state stays a finding."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts
from ansible_collections.rdma.fabric.plugins.modules import rdma_health
from ansible_collections.rdma.fabric.tests.unit import helpers

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.reports import test_health as T

S0, S1 = "mlx5_0 port 1 (eth0)", "mlx5_1 port 1 (eth1)"


def sm_node():
    """What rdma_health observes on the lab's SM nodes: the device listed, nothing of its port read."""
    device = _rdma_facts.new_device("ibsim0")
    device["ports"].append(_rdma_facts.new_port(1))
    return {"facts": {"devices": {"ibsim0": device}, "gpus": [], "rails": [], "errors": [],
                      "gather_subset": ["devices", "gids", "pci", "gpus", "counters"]},
            "ports": {"ibsim0/1": {"interval": 5.0, "rates": {}, "deltas": {}, "ethtool": {}}},
            "sm": {}, "gdr": None, "nccl": None}


def test_an_unread_port_state_is_a_skip_with_its_reason_not_a_finding():
    obs = sm_node()
    assert _health.judge(obs) == []
    skips = _health.skipped(obs)
    assert [(s["check"], s["subject"]) for s in skips] == [("link", "ibsim0 port 1")]
    assert skips[0]["reason"] == _health.UNREAD_STATE
    assert "not read" in skips[0]["reason"] and "\n" not in skips[0]["reason"]


def test_an_unread_state_is_never_a_pass_of_that_port():
    # one port read ACTIVE, one not read: the second is neither a finding nor silently healthy
    obs = T.node()
    obs["facts"]["devices"]["mlx5_1"]["ports"][0].update(state=None, phys_state=None)
    assert T.found(obs) == []
    assert [(s["check"], s["subject"]) for s in _health.skipped(obs)] == [("link", S1)]
    # a read DOWN state stays an error, whatever phys_state is
    obs["facts"]["devices"]["mlx5_1"]["ports"][0].update(state="DOWN")
    assert T.found(obs) == [("link", S1, "error")]
    assert _health.judge(obs)[0]["actual"] == "DOWN/unknown"
    assert _health.skipped(obs) == []


def test_unread_ports_of_one_reason_are_one_skip_and_ignored_devices_none():
    obs = T.node()
    for name in ("mlx5_0", "mlx5_1"):
        obs["facts"]["devices"][name]["ports"][0]["state"] = None
    assert T.found(obs) == []
    assert [(s["check"], s["subject"]) for s in _health.skipped(obs)] == [("link", S0 + ", " + S1)]
    assert _health.skipped(obs, {"ignore_devices": ["mlx5_0"]})[0]["subject"] == S1


def test_an_active_port_with_an_unread_phys_state_is_up():
    obs = T.node()
    obs["facts"]["devices"]["mlx5_0"]["ports"][0]["phys_state"] = None
    assert T.found(obs) == [] and _health.skipped(obs) == []


def test_the_rails_count_skips_when_unread_ports_could_make_it():
    obs = T.node()
    obs["facts"]["devices"]["mlx5_1"]["ports"][0]["state"] = None
    checks = {"expected_ports": 2}
    assert T.found(obs, checks) == []
    assert [s["check"] for s in _health.skipped(obs, checks)] == ["link", "ports"]
    assert "mlx5_1/1 not read" in _health.skipped(obs, checks)[1]["reason"]
    # too few even if every unread port were up: a finding, which names the unread ones
    assert T.found(obs, {"expected_ports": 3}) == [("ports", "rail ports (NVIDIA H100 80GB HBM3)", "error")]
    assert _health.judge(obs, {"expected_ports": 3})[0]["actual"] == "1 (mlx5_0/1); not read: mlx5_1/1"


def test_an_unread_rate_is_a_skip_not_a_pass():
    obs = T.node()
    obs["facts"]["devices"]["mlx5_0"]["ports"][0]["rate_gbps"] = None
    assert T.found(obs, {"min_rate_gbps": 400}) == []
    skips = _health.skipped(obs, {"min_rate_gbps": 400})
    assert [(s["check"], s["subject"]) for s in skips] == [("rate", S0)]
    assert ">= 400 Gb/s" in skips[0]["reason"]


def test_an_unread_sm_lid_without_sminfo_is_a_skip():
    obs = T.node("InfiniBand")
    obs["facts"]["devices"]["mlx5_0"]["ports"][0]["sm_lid"] = None
    assert T.found(obs) == []
    assert [(s["check"], s["subject"]) for s in _health.skipped(obs)] == [("sm", "mlx5_0 port 1 (ib0)")]
    # sm_lid 0 (read: no SM) stays an error; sminfo's own error is judged whatever the LID
    obs["facts"]["devices"]["mlx5_0"]["ports"][0]["sm_lid"] = 0
    assert T.found(obs) == [("sm", "mlx5_0 port 1 (ib0)", "error")]
    obs["facts"]["devices"]["mlx5_0"]["ports"][0]["sm_lid"] = None
    obs["sm"] = {"mlx5_0/1": {"error": "sminfo: iberror: failed"}}
    assert T.found(obs) == [("sm", "mlx5_0 port 1 (ib0)", "error")]
    assert _health.judge(obs)[0]["expected"] == "SM lid unknown answers sminfo"


def test_the_gate_keeps_an_unread_state_a_finding():
    # health_gate judges bare rdma facts and has no skipped-checks report: never let a node in unseen
    facts = T.node()["facts"]
    facts["devices"]["mlx5_0"]["ports"][0].update(state=None, phys_state=None)
    findings = _health.judge(facts)
    assert [(f["check"], f["subject"], f["actual"]) for f in findings] == [("link", S0, "unknown/unknown")]
    facts["devices"]["mlx5_0"]["ports"][0].update(state="ACTIVE", sm_lid=None, link_layer="InfiniBand")
    assert [f["check"] for f in _health.judge(facts)] == ["sm"]


LAB_SM_RAW = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "health", "lab-sm-01-health-raw.json")


def test_the_lab_sm_node_as_rdma_health_read_it_is_clean(monkeypatch):
    """rdma_health's raw read on a freshly converged lab's lab-sm-01 (return_raw, umad2sim's sysfs:
    the device listed, no attribute readable by Python), judged through the module's bundle
    option: no finding (health.yml exits 0), the link check skipped with its reason."""
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", helpers._exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", helpers._fail_json)
    with helpers.patch_module_args({"bundle": LAB_SM_RAW, "host": "lab-sm-01"}):
        with pytest.raises(helpers.ExitJson) as exc:
            rdma_health.main()
    result = exc.value.args[0]
    assert result["findings"] == []
    assert result["skipped_checks"] == [{"check": "link", "subject": "ibsim0 port 1", "reason": _health.UNREAD_STATE}]
