# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scheduler/_health_check_program: Slurm's HealthCheckProgram reading the node timer's textfile
(written here by the timer's own writer, _report.prometheus_health), draining its node, resuming
after the window, holding on a dead timer, writing nothing; and the health role's file list held to
the entry's module_utils closure."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report
from ansible_collections.rdma.fabric.plugins.module_utils.scheduler import _health_check_program as hcp
from ansible_collections.rdma.fabric.plugins.plugin_utils import _node_package
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.scheduler.test_slurm_gate import (
    FakeSlurm, slurm_nodes)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
NOW = 1765000000.0


def textfile(findings, when, host="gpu-01", period=300.0):
    """What the node timer writes (reports/_health_timer.run): its findings' verdicts, then its run time."""
    text = _report.prometheus_health(findings, [host], [], when, {"source": "timer"}, ["link", "rate"],
                                     {host: {"mlx5_0/1": {}, "mlx5_3/1": {}}})
    text += '%s{host="%s"} %.3f\n' % (hcp.LAST, host, when)
    text += '%s{host="%s"} %s\n' % (hcp.PERIOD, host, repr(period))
    return text


LINK_DOWN = [{"host": "gpu-01", "check": "link", "subject": "mlx5_3 port 1", "severity": "error",
              "expected": "ACTIVE", "actual": "DOWN"}]
CONFIG = {"scheduler": "slurm", "reason_prefix": "rdma.fabric:", "recovery_runs": 2, "recovery_seconds": 0,
          "textfile": "/nonexistent/rdma_fabric_health.prom", "dead_timer": "hold", "timeout": 5}


def test_verdict_from_the_timers_own_textfile():
    fail = hcp.verdict("gpu-01", textfile(LINK_DOWN, NOW - 30), CONFIG, NOW)
    assert fail["state"] == "fail" and fail["check"] == "health.link" and fail["subject"] == "mlx5_3 port 1"
    assert fail["time"] == NOW - 30 and fail["scopes"] == ["health"]
    ok = hcp.verdict("gpu-01", textfile([], NOW - 30), CONFIG, NOW)
    assert ok["state"] == "pass" and ok["time"] == NOW - 30
    warning = [dict(LINK_DOWN[0], severity="warning")]
    assert hcp.verdict("gpu-01", textfile(warning, NOW - 30), CONFIG, NOW)["state"] == "pass"


def test_a_dead_timer_is_not_healthy():
    for text in (None, textfile([], NOW - 2000), "garbage line\n", "# only comments\n"):
        held = hcp.verdict("gpu-01", text, CONFIG, NOW)
        assert held["state"] == "unknown", text
        drained = hcp.verdict("gpu-01", text, dict(CONFIG, dead_timer="drain"), NOW)
        assert drained["state"] == "fail" and drained["check"] == "health.timer"


def run_main(tmp_path, slurm, text, env=None, now=NOW, config=None):
    path = tmp_path / "scheduler-gate.json"
    prom = tmp_path / "rdma_fabric_health.prom"
    if text is not None:
        prom.write_text(text)
    elif prom.exists():
        prom.unlink()
    path.write_text(json.dumps(dict(config or CONFIG, textfile=str(prom))))
    before = sorted(os.listdir(str(tmp_path)))
    rc = hcp.main(["--config", str(path)], environ=env if env is not None else {"SLURMD_NODENAME": "gpu-01"},
                  now=now, run=slurm)
    assert sorted(os.listdir(str(tmp_path))) == before      # writes nothing
    return rc


def test_drains_then_resumes_after_the_window_counting_each_timer_verdict_once(tmp_path):
    clock = [NOW]
    slurm = FakeSlurm(slurm_nodes(), lambda: clock[0])
    assert run_main(tmp_path, slurm, textfile(LINK_DOWN, NOW - 10)) == 0
    node = slurm.nodes["gpu-01"]
    assert "DRAIN" in node["flags"] and node["reason"].startswith("rdma.fabric: health.link mlx5_3 port 1 failing")
    # the timer recovers: each new timer verdict counts once, however often slurmd runs the program
    for step, (verdict_time, run_time) in enumerate(((NOW + 290, NOW + 300), (NOW + 290, NOW + 360),
                                                     (NOW + 590, NOW + 600))):
        clock[0] = run_time
        assert run_main(tmp_path, slurm, textfile([], verdict_time), now=run_time) == 0
        if step < 2:
            assert "DRAIN" in node["flags"] and "[healthy 1/2 since" in node["reason"], (step, node)
    assert "DRAIN" not in node["flags"] and node["reason"] == ""
    assert ["scontrol", "update", "NodeName=gpu-01", "State=UNDRAIN"] in slurm.calls


def test_an_admins_drain_is_left_and_a_fabric_test_drain_is_not_lifted_by_the_timer(tmp_path):
    nodes = slurm_nodes()
    nodes["gpu-01"].update(flags=["DRAIN"], reason="rdma.fabric: perftest.write_bw rail3/mlx5_3 180 Gb/s",
                           reason_time=int(NOW - 1000))
    slurm = FakeSlurm(nodes, lambda: NOW)
    for dummy in range(3):
        run_main(tmp_path, slurm, textfile([], NOW - 10), config=dict(CONFIG, recovery_runs=1))
    assert "DRAIN" in nodes["gpu-01"]["flags"] and all(c[0] == "sinfo" for c in slurm.calls)
    run_main(tmp_path, slurm, textfile(LINK_DOWN, NOW - 10), env={"SLURMD_NODENAME": "gpu-02"})
    assert nodes["gpu-02"]["reason"] == "hw ticket 4411"


def test_dead_timer_holds_and_unreachable_is_a_failure(tmp_path):
    slurm = FakeSlurm(slurm_nodes(), lambda: NOW)
    assert run_main(tmp_path, slurm, None) == 0 and all(c[0] == "sinfo" for c in slurm.calls)
    down = FakeSlurm(slurm_nodes(), lambda: NOW, fail_sinfo=True)
    assert run_main(tmp_path, down, textfile(LINK_DOWN, NOW - 10)) == 1


def test_bad_config_refused_by_name(tmp_path, capsys):
    slurm = FakeSlurm(slurm_nodes(), lambda: NOW)
    assert run_main(tmp_path, slurm, textfile([], NOW), config=dict(CONFIG, recovery_runs=0)) == 1
    assert "recovery_runs (scheduler_gate_recovery_runs)=0" in capsys.readouterr().err and slurm.calls == []


def test_runner_timeout_is_bounded():
    rc, out, err = hcp.runner(0.2)(["sleep", "5"])
    assert rc == 124 and "no answer within" in err and out == ""


def test_role_ships_the_entrys_closure():
    with open(os.path.join(REPO, "roles", "health", "vars", "main.yml")) as handle:
        listed = yaml.safe_load(handle)["__health_gate_module_utils"]
    paths, root = _node_package.module_utils_closure(
        os.path.join(REPO, "plugins", "module_utils", "scheduler", "_health_check_program.py"))
    assert listed == [os.path.relpath(p, root) for p in paths]
