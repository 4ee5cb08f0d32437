# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.scheduler_gate against a fake Slurm (sinfo --json and scontrol update): check and
diff mode, before/commands/after, bad input named and nothing run, an unreachable slurmctld."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.modules import scheduler_gate
from ansible_collections.rdma.fabric.tests.unit import helpers
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.scheduler.test_slurm_gate import (
    FakeSlurm, slurm_nodes)

NODE = {"name": "gpu-01", "state": "fail", "scopes": ["fabric_test"], "check": "perftest.write_bw",
        "subject": "rail3/mlx5_3", "figure": "180 Gb/s (expected >= 360)"}


def fake(slurm):
    return lambda argv, **kwargs: slurm(argv)


def test_doc_matches_argspec():
    helpers.assert_doc_matches_argspec(scheduler_gate)


def test_check_diff_then_real_then_idempotent(monkeypatch):
    slurm = FakeSlurm(slurm_nodes(), lambda: 1765000000)
    args = {"scheduler": "slurm", "nodes": [NODE]}
    kind, result = helpers.run_module(monkeypatch, scheduler_gate.main, args, check_mode=True, diff=True,
                                      run_command=fake(slurm))
    assert kind == "exit" and result["changed"] and slurm.nodes["gpu-01"]["flags"] == []
    assert result["commands"] == [["scontrol", "update", "NodeName=gpu-01", "State=DRAIN",
                                   "Reason=rdma.fabric: perftest.write_bw rail3/mlx5_3 180 Gb/s (expected >= 360)"]]
    assert "gpu-01: idle" in result["diff"]["before"] and "gpu-01: drained rdma.fabric:" in result["diff"]["after"]
    kind, result = helpers.run_module(monkeypatch, scheduler_gate.main, args, run_command=fake(slurm))
    assert kind == "exit" and result["changed"] and result["after"]["gpu-01"]["state"] == "drained"
    assert result["before"]["gpu-01"]["state"] == "idle" and result["nodes"]["gpu-01"]["action"] == "drain"
    kind, result = helpers.run_module(monkeypatch, scheduler_gate.main, args, run_command=fake(slurm))
    assert kind == "exit" and not result["changed"] and result["commands"] == []


def test_bad_input_named_and_nothing_run(monkeypatch):
    for change, needle in (({"scheduler": "kubernetes"}, "scheduler (scheduler_gate)='kubernetes'"),
                           ({"recovery_runs": 0}, "scheduler_gate_recovery_runs)=0"),
                           ({"reason_prefix": "a=b"}, "scheduler_gate_reason_prefix)='a=b'"),
                           ({"reason_prefix": ""}, "scheduler_gate_reason_prefix)=''")):
        kind, result = helpers.run_module(monkeypatch, scheduler_gate.main,
                                          dict({"scheduler": "slurm", "nodes": [NODE]}, **change))
        assert kind == "fail" and needle in result["msg"] and not result["changed"], result["msg"]


def test_unknown_node_and_unreachable_reported(monkeypatch):
    slurm = FakeSlurm(slurm_nodes(), lambda: 1765000000)
    kind, result = helpers.run_module(monkeypatch, scheduler_gate.main,
                                      {"scheduler": "slurm", "nodes": [dict(NODE, name="gpu-99")]},
                                      run_command=fake(slurm))
    assert kind == "fail" and "'gpu-99'" in result["msg"] and "nothing was changed" in result["msg"]
    down = FakeSlurm(slurm_nodes(), lambda: 1765000000, fail_sinfo=True)
    kind, result = helpers.run_module(monkeypatch, scheduler_gate.main, {"scheduler": "slurm", "nodes": [NODE]},
                                      run_command=fake(down))
    assert kind == "fail" and "Unable to contact slurm controller" in result["msg"]


def test_findings_make_the_verdict(monkeypatch):
    slurm = FakeSlurm(slurm_nodes(), lambda: 1765000000)
    findings = [{"host": "gpu-01", "check": "rate", "subject": "mlx5_3 port 1", "severity": "error",
                 "expected": ">= 400 Gb/s", "actual": "200 Gb/s"},
                {"host": "gpu-01", "check": "flap", "subject": "mlx5_0 port 1", "severity": "warning",
                 "expected": "0", "actual": "3"}]
    args = {"scheduler": "slurm", "nodes": [
        {"name": "gpu-01", "findings": findings, "scopes": ["health"], "check_prefix": "health."},
        {"name": "gpu-03", "findings": findings[1:], "scopes": ["health"], "check_prefix": "health."}]}
    kind, result = helpers.run_module(monkeypatch, scheduler_gate.main, args, run_command=fake(slurm))
    assert kind == "exit" and result["commands"] == [[
        "scontrol", "update", "NodeName=gpu-01", "State=DRAIN",
        "Reason=rdma.fabric: health.rate mlx5_3 port 1 200 Gb/s (expected >= 400 Gb/s)"]]
    assert result["nodes"]["gpu-03"]["action"] == "none"
    kind, result = helpers.run_module(monkeypatch, scheduler_gate.main,
                                      {"scheduler": "slurm", "nodes": [{"name": "gpu-01", "scopes": ["health"]}]})
    assert kind == "fail" and "nodes[0] (gpu-01): give state or findings" in result["msg"]
