# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scheduler/_slurm and _gate: the state machine on every base state and flag sinfo --json
reports, the recovery window, an administrator's drain, and the gate run against a fake Slurm
(sinfo --json printed from the real fixtures' shapes, scontrol applied to it)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools
import json
import os

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _sinfo
from ansible_collections.rdma.fabric.plugins.module_utils.scheduler import _gate, _slurm
from ansible_collections.rdma.fabric.plugins.module_utils.scheduler._registry import SCHEDULERS

P = _gate.PREFIX
SETTINGS = {"scheduler": "slurm", "reason_prefix": P, "recovery_runs": 2, "recovery_seconds": 0, "wait_timeout": 0}
NOW = 1765000000.0
FAIL = {"node": "n", "state": "fail", "scopes": ["fabric_test"], "check": "perftest.write_bw",
        "subject": "rail3/mlx5_3", "figure": "180 Gb/s (expected >= 360)", "time": NOW}
OURS = P + " perftest.write_bw rail3/mlx5_3 180 Gb/s (expected >= 360)"
PASS = {"node": "n", "state": "pass", "scopes": ["fabric_test"], "time": NOW}
BASES = ("idle", "allocated", "mixed", "down", "future", "unknown", "error")
FLAGS = ("NOT_RESPONDING", "COMPLETING", "MAINTENANCE", "RESERVED", "REBOOT_REQUESTED", "POWERED_DOWN", "CLOUD", "FAIL")


def node(state="idle", flags=(), reason="", when=None):
    return {"name": "n", "state": state, "flags": sorted(flags), "reason": reason,
            "reason_time": when if when is not None else (NOW - 600 if reason else None), "reason_user": None,
            "partitions": ["gpu"]}


def plan(n, verdict, **settings):
    return _slurm.plan_node(n, verdict, dict(SETTINGS, **settings), NOW)


@pytest.mark.parametrize("base,flag", list(itertools.product(BASES, (None,) + FLAGS)))
def test_fail_drains_a_node_with_no_reason_in_every_state(base, flag):
    result = plan(node(base, [flag] if flag else []), FAIL)
    assert result["action"] == "drain"
    assert result["argv"] == ["scontrol", "update", "NodeName=n", "State=DRAIN", "Reason=" + OURS]
    assert "DRAIN" in result["after"]["flags"]


@pytest.mark.parametrize("base,drained,verdict", list(itertools.product(
    BASES, (True, False), (FAIL, PASS, dict(FAIL, state="maintenance", scopes=["maintenance"])))))
def test_a_foreign_reason_is_never_touched(base, drained, verdict):
    """An administrator's drain, or Slurm's own reason on a DOWN node: no call, whatever the verdict."""
    for reason in ("hw ticket 4411", "Not responding", "rdma.fabricX: lookalike", "RDMA.FABRIC: case"):
        result = plan(node(base, ["DRAIN"] if drained else [], reason), verdict)
        assert result["action"] == "none" and result["argv"] is None, (reason, result)


def test_a_drain_with_no_reason_is_not_ours():
    assert plan(node("idle", ["DRAIN"], ""), PASS)["action"] == "none"
    assert plan(node("idle", ["DRAIN"], ""), FAIL)["action"] == "none"


def test_no_call_when_already_drained_with_this_reason():
    for base in BASES:
        assert plan(node(base, ["DRAIN"], OURS), FAIL)["argv"] is None


def test_same_scope_new_figure_updates_the_reason():
    result = plan(node("idle", ["DRAIN"], OURS), dict(FAIL, figure="150 Gb/s (expected >= 360)"))
    assert result["action"] == "update" and result["argv"][-1].endswith("150 Gb/s (expected >= 360)")


def test_other_scope_failure_keeps_the_first_cause():
    health = dict(FAIL, scopes=["health"], check="health.link", subject="mlx5_0 port 1", figure="Down")
    assert plan(node("idle", ["DRAIN"], OURS), health)["action"] == "none"
    # but a recovering node (or a maintenance drain) takes the new failure
    recovering = OURS + " [healthy 1/2 since 2025-12-06T05:00:00Z]"
    assert plan(node("idle", ["DRAIN"], recovering), health)["action"] == "update"
    assert plan(node("idle", ["DRAIN"], P + " maintenance reboot nic_firmware"), health)["action"] == "update"


def test_pass_on_a_node_not_drained_does_nothing():
    for base, flag in itertools.product(BASES, (None,) + FLAGS):
        assert plan(node(base, [flag] if flag else []), PASS)["argv"] is None


def test_recovery_window_counts_in_the_reason_then_undrains():
    first = plan(node("idle", ["DRAIN"], OURS), PASS)
    assert first["action"] == "update"
    assert first["argv"][-1] == "Reason=" + OURS + " [healthy 1/2 since 2025-12-06T05:46:40Z]"
    # the next run reads what the first wrote (slurmctld stamps the change)
    later = dict(PASS, time=NOW + 300)
    second = _slurm.plan_node(node("idle", ["DRAIN"], first["argv"][-1][len("Reason="):], NOW + 1), later, SETTINGS,
                              NOW + 300)
    assert second["action"] == "undrain" and second["argv"] == ["scontrol", "update", "NodeName=n", "State=UNDRAIN"]
    assert "DRAIN" not in second["after"]["flags"]


@pytest.mark.parametrize("base", ["idle", "allocated", "mixed", "down"])
def test_undrain_not_resume_in_every_state(base):
    result = plan(node(base, ["DRAIN"], OURS), PASS, recovery_runs=1)
    assert result["action"] == "undrain" and "State=UNDRAIN" in result["argv"] and "State=RESUME" not in result["argv"]


def test_recovery_window_of_one_run_undrains_at_the_first_pass():
    assert plan(node("idle", ["DRAIN"], OURS), PASS, recovery_runs=1)["action"] == "undrain"


def test_recovery_seconds_hold_the_drain_after_enough_runs():
    marked = OURS + " [healthy 3/2 since 2025-12-06T05:45:00Z]"      # 100 s before NOW
    held = plan(node("idle", ["DRAIN"], marked), PASS, recovery_seconds=600)
    assert held["action"] == "update" and "[healthy 4/2 since 2025-12-06T05:45:00Z]" in held["argv"][-1]
    assert plan(node("idle", ["DRAIN"], marked), PASS, recovery_seconds=60)["action"] == "undrain"


def test_a_verdict_no_newer_than_the_last_change_is_not_counted_twice():
    marked = OURS + " [healthy 1/2 since 2025-12-06T05:45:00Z]"
    result = plan(node("idle", ["DRAIN"], marked, when=NOW), dict(PASS, time=NOW - 5))
    assert result["action"] == "none" and "already counted" in result["why"]


def test_a_pass_of_another_scope_does_not_lift_the_drain():
    assert plan(node("idle", ["DRAIN"], OURS), dict(PASS, scopes=["health"]), recovery_runs=1)["action"] == "none"


def test_a_failure_resets_the_count():
    marked = OURS + " [healthy 1/2 since 2025-12-06T05:45:00Z]"
    result = plan(node("idle", ["DRAIN"], marked), FAIL)
    assert result["action"] == "update" and result["argv"][-1] == "Reason=" + OURS


def test_maintenance_drains_then_only_a_maintenance_pass_lifts_it():
    verdict = _gate.maintenance("n", "reboot", "nic_firmware", NOW)
    drained = plan(node("mixed"), verdict)
    assert drained["argv"][-1] == "Reason=" + P + " maintenance reboot nic_firmware"
    reason = drained["argv"][-1][len("Reason="):]
    # the node's own HealthCheckProgram (scope health) must not lift it before the reboot
    assert plan(node("idle", ["DRAIN"], reason), dict(PASS, scopes=["health"]), recovery_runs=1)["action"] == "none"
    assert plan(node("idle", ["DRAIN"], reason), dict(PASS, scopes=["health", "maintenance"]),
                recovery_runs=5)["action"] == "undrain"
    # already drained by us for a failure: the maintenance keeps that cause
    assert plan(node("idle", ["DRAIN"], OURS), verdict)["action"] == "none"


def test_unknown_changes_nothing():
    for n in (node(), node("idle", ["DRAIN"], OURS), node("down", ["DRAIN"], "x")):
        assert plan(n, dict(PASS, state="unknown"))["argv"] is None


def test_reason_is_one_line_and_bounded():
    text = _gate.reason(P, dict(FAIL, figure="a\nb\tc" + "x" * 400))
    assert "\n" not in text and "\t" not in text and len(text) <= _gate.REASON_MAX and text.startswith(P + " ")


def test_verdict_from_findings():
    findings = [{"check": "rate", "subject": "mlx5_3 port 1", "actual": "200", "expected": ">= 400", "severity": "error"},
                {"check": "link", "subject": "mlx5_0 port 1", "actual": "Down", "expected": "ACTIVE", "severity": "error"},
                {"check": "flap", "subject": "mlx5_1 port 1", "actual": "2", "expected": "0", "severity": "warning"}]
    verdict = _gate.verdict("n", "health", findings, now=NOW, check_prefix="health.")
    assert verdict["state"] == "fail" and verdict["check"] == "health.link"
    assert verdict["figure"] == "Down (expected ACTIVE) +1 more"
    assert _gate.verdict("n", "health", findings[2:], now=NOW)["state"] == "pass"        # a warning does not drain
    assert _gate.verdict("n", "health", None, None)["state"] == "unknown"
    assert _gate.verdict("n", "fabric_test", [], passed=False)["state"] == "fail"


@pytest.mark.parametrize("change,needle", [
    ({"scheduler": "pbs"}, "scheduler (scheduler_gate)='pbs'"),
    ({"scheduler": None}, "scheduler (scheduler_gate)=None"),
    ({"recovery_runs": 0}, "recovery_runs (scheduler_gate_recovery_runs)=0"),
    ({"recovery_runs": True}, "recovery_runs (scheduler_gate_recovery_runs)=True"),
    ({"reason_prefix": ""}, "reason_prefix (scheduler_gate_reason_prefix)=''"),
    ({"reason_prefix": "a=b"}, "reason_prefix (scheduler_gate_reason_prefix)='a=b'"),
    ({"reason_prefix": "x\ny"}, "reason_prefix"),
    ({"recovery_seconds": -1}, "recovery_seconds (scheduler_gate_recovery_seconds)=-1"),
    ({"wait_timeout": -5}, "wait_timeout (scheduler_gate_wait_timeout)=-5")])
def test_bad_settings_named(change, needle):
    errors = _gate.settings_errors(dict(SETTINGS, **change), SCHEDULERS)
    assert len(errors) == 1 and needle in errors[0], errors


def test_bad_verdicts_named():
    errors = _gate.verdict_errors([dict(PASS, node="a b"), dict(PASS, state="ok"), dict(PASS, scopes=["x"]),
                                   dict(PASS), dict(PASS)])
    text = "; ".join(errors)
    assert "nodes[0].name='a b'" in text and "nodes[1].state='ok'" in text and "nodes[2].scopes=['x']" in text
    assert "'n' is given twice" in text


class FakeSlurm(object):
    """sinfo --json (22.05's node-table shape) printed from a node table; scontrol update applied to it
    as slurmctld does (a reason change stamps the time; UNDRAIN clears the flag and the reason)."""

    def __init__(self, nodes, clock, fail_sinfo=False):
        self.nodes, self.clock, self.calls, self.fail_sinfo = nodes, clock, [], fail_sinfo

    def __call__(self, argv):
        self.calls.append(list(argv))
        if argv[0] == "sinfo":
            if self.fail_sinfo:
                return 1, "", "sinfo: error: Unable to contact slurm controller (connect failure)\n"
            return 0, json.dumps({"meta": {"Slurm": {"release": "22.05.8"}}, "errors": [], "nodes": [
                {"name": name, "state": n["state"], "state_flags": n["flags"], "reason": n["reason"],
                 "reason_changed_at": n["reason_time"] or 0, "reason_set_by_user": "root" if n["reason"] else None}
                for name, n in sorted(self.nodes.items())]}), ""
        words = dict(a.split("=", 1) for a in argv[2:])
        n = self.nodes[words["NodeName"]]
        if words["State"] == "DRAIN":
            n["flags"] = sorted(set(n["flags"]) | {"DRAIN"})
            n["reason"], n["reason_time"] = words["Reason"], int(self.clock())
            if n["state"] in ("allocated", "mixed") and self.drain_ends_jobs:
                n["state"] = "idle"
        elif words["State"] == "UNDRAIN":
            n["flags"] = [f for f in n["flags"] if f != "DRAIN"]
            n["reason"], n["reason_time"] = "", None
        return 0, "", ""

    drain_ends_jobs = False


def slurm_nodes():
    return {"gpu-01": {"state": "idle", "flags": [], "reason": "", "reason_time": None},
            "gpu-02": {"state": "idle", "flags": ["DRAIN"], "reason": "hw ticket 4411", "reason_time": 1000},
            "gpu-03": {"state": "mixed", "flags": [], "reason": "", "reason_time": None}}


def test_gate_drain_idempotent_then_recover_and_the_admins_drain_stays():
    clock = [NOW]
    slurm = FakeSlurm(slurm_nodes(), lambda: clock[0])
    fail = [dict(FAIL, node="gpu-01"), dict(FAIL, node="gpu-02")]
    first = _slurm.gate(slurm, fail, SETTINGS, now=clock[0])
    assert first["changed"] and first["commands"] == [_slurm.drain_argv("gpu-01", OURS)]
    assert first["after"]["gpu-01"]["state"] == "drained" and first["after"]["gpu-02"]["reason"] == "hw ticket 4411"
    assert first["before"]["gpu-01"]["state"] == "idle"
    clock[0] += 60
    again = _slurm.gate(slurm, fail, SETTINGS, now=clock[0])
    assert not again["changed"] and again["commands"] == []
    assert [c[0] for c in slurm.calls[-1:]] == ["sinfo"]            # a converged run only reads
    passes = [dict(PASS, node="gpu-01"), dict(PASS, node="gpu-02")]
    for step, want in ((1, "drained"), (2, "idle")):
        clock[0] += 300
        result = _slurm.gate(slurm, [dict(p, time=clock[0]) for p in passes], SETTINGS, now=clock[0])
        assert result["after"]["gpu-01"]["state"] == want, (step, result)
        assert result["after"]["gpu-02"]["state"] == "drained" and result["after"]["gpu-02"]["reason"] == "hw ticket 4411"
    assert all("NodeName=gpu-02" not in c for c in slurm.calls)


def test_gate_check_mode_changes_nothing():
    slurm = FakeSlurm(slurm_nodes(), lambda: NOW)
    result = _slurm.gate(slurm, [dict(FAIL, node="gpu-01")], SETTINGS, check_mode=True, now=NOW)
    assert result["changed"] and result["after"]["gpu-01"]["state"] == "drained"
    assert [c[0] for c in slurm.calls] == ["sinfo"] and slurm.nodes["gpu-01"]["flags"] == []


def test_gate_unknown_node_and_unreachable_fail_before_any_change():
    slurm = FakeSlurm(slurm_nodes(), lambda: NOW)
    with pytest.raises(_gate.GateError, match="'gpu-99'.*scheduler_gate_node_name.*gpu-01"):
        _slurm.gate(slurm, [dict(FAIL, node="gpu-01"), dict(FAIL, node="gpu-99")], SETTINGS, now=NOW)
    assert [c[0] for c in slurm.calls] == ["sinfo"]
    down = FakeSlurm(slurm_nodes(), lambda: NOW, fail_sinfo=True)
    with pytest.raises(_slurm.Unreachable, match="Unable to contact slurm controller"):
        _slurm.gate(down, [dict(FAIL, node="gpu-01")], SETTINGS, now=NOW)


def test_gate_maintenance_waits_for_jobs_bounded():
    clock = [NOW]

    def sleep(seconds):
        clock[0] += seconds

    slurm = FakeSlurm(slurm_nodes(), lambda: clock[0])
    verdict = [_gate.maintenance("gpu-03", "reboot", "gpudirect", clock[0])]
    result = _slurm.gate(slurm, verdict, dict(SETTINGS, wait_timeout=10), now=clock[0], sleep=sleep,
                         clock=lambda: clock[0])
    assert result["failed"] and "gpu-03" in result["msg"] and result["after"]["gpu-03"]["state"] == "draining"
    assert clock[0] - NOW >= 10
    slurm2 = FakeSlurm(slurm_nodes(), lambda: clock[0])
    slurm2.drain_ends_jobs = True
    ok = _slurm.gate(slurm2, [_gate.maintenance("gpu-03", "reboot", "gpudirect", clock[0])],
                     dict(SETTINGS, wait_timeout=10), now=clock[0], sleep=sleep, clock=lambda: clock[0])
    assert not ok["failed"] and ok["after"]["gpu-03"]["state"] == "drained"


def test_registry_matches_the_module_docs():
    from ansible_collections.rdma.fabric.plugins.modules import scheduler_gate
    doc = yaml.safe_load(scheduler_gate.DOCUMENTATION)
    text = " ".join(doc["options"]["scheduler"]["description"])
    assert sorted(SCHEDULERS) == sorted(w[2:-1] for w in text.split() if w.startswith("V(") and w.endswith(")")) \
        or all("V(%s)" % name in text for name in SCHEDULERS)
    assert doc["options"]["nodes"]["suboptions"]["state"]["choices"] == list(_gate.STATES)
    scopes = " ".join(doc["options"]["nodes"]["suboptions"]["scopes"]["description"])
    assert all("V(%s)" % s in scopes for s in _gate.SCOPES)


def test_fixture_states_plan_without_error():
    here = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "sinfo")
    for name in sorted(os.listdir(here)):
        nodes = _sinfo.parse(yaml.safe_load(open(os.path.join(here, name)))["stdout"])["nodes"]
        for n in nodes.values():
            for verdict in (FAIL, PASS):
                result = _slurm.plan_node(n, dict(verdict, node=n["name"]), SETTINGS, NOW)
                if n["reason"] and not n["reason"].startswith(P):
                    assert result["argv"] is None, (name, n)


def test_a_node_waiting_for_admission_is_resumed_at_its_admission():
    pending = node("idle", ["DRAIN"], P + " onboard pending")
    assert plan(pending, PASS, recovery_runs=5)["action"] == "undrain"
    assert plan(pending, dict(PASS, scopes=["health"]), recovery_runs=1)["action"] == "none"
    failed = plan(pending, FAIL)
    assert failed["action"] == "update" and failed["argv"][-1] == "Reason=" + OURS


def test_drift_records_make_a_verdict():
    records = [{"host": "n", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": "3",
                "actual": "none"}]
    verdict = _gate.verdict("n", "drift", records, now=NOW, check_prefix="drift.")
    assert verdict["state"] == "fail" and verdict["check"] == "drift.roce_qos" and verdict["subject"] == "eth2 pfc"
    assert _gate.reason(P, verdict) == P + " drift.roce_qos eth2 pfc none (expected 3)"


def test_a_maintenance_reason_always_names_maintenance():
    verdict = {"node": "n", "state": "maintenance", "scopes": ["maintenance"], "check": None, "subject": "reboot",
               "figure": "gpudirect", "time": NOW}
    assert plan(node(), verdict)["argv"][-1] == "Reason=" + P + " maintenance reboot gpudirect"
