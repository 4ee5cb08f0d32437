# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_health's NIC firmware checks against fabricsim (issue 28): ``nv_pending`` (an NV value
set and not yet current, read with one ``mlxconfig -e query`` per adapter) and ``firmware`` (a NIC
whose firmware is not its PSID's pinned version, or not the one the node's other NICs of that
PSID run); a node without mlxconfig has ``nv_pending`` skipped with the reason, never passed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.tests.unit.fabricsim.test_rdma_health_sim import _wire, healthy, run


def _findings(result, check):
    return [(f["subject"], f["severity"], f["expected"], f["actual"]) for f in result["findings"] if f["check"] == check]


def test_a_pending_value_and_a_firmware_off_its_psids_version(sim, monkeypatch, tmp_path):
    healthy(sim, "hgx-h100-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    how, result = run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1"})
    assert how == "exit" and _findings(result, "nv_pending") == [] and _findings(result, "firmware") == []
    assert not [s for s in result["skipped_checks"] if s["check"] == "nv_pending"]
    assert sim.cli("nv-set", "mlx5_1", "PCI_WR_ORDERING=force_relax") == 0
    assert sim.cli("fault", "fw-version", "mlx5_2", "28.36.1010") == 0
    how, result = run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1"})
    assert how == "exit", result
    assert _findings(result, "nv_pending") == [
        ("mlx5_1 PCI_WR_ORDERING", "warning", "force_relax(1) current (set for next boot)",
         "per_mkey(0) until a reboot or firmware reset")]
    firmware = _findings(result, "firmware")
    assert len(firmware) == 1 and firmware[0][0] == "mlx5_2" and firmware[0][3] == "28.36.1010"
    assert firmware[0][2].startswith("28.39.1002 (as ")
    # a pin names every NIC off it; a reboot makes the value current
    how, result = run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1",
                                    "checks": {"firmware_versions": {"MT_0000000838": "28.36.1010"}}})
    subjects = [f[0] for f in _findings(result, "firmware")]
    assert "mlx5_2" not in subjects and "mlx5_0" in subjects and "mlx5_1" in subjects
    assert all(f[2] == "28.36.1010 (pinned for MT_0000000838)" for f in _findings(result, "firmware"))
    assert sim.cli("reset") == 0
    how, result = run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1",
                                    "checks": {"nv_pending": False}})
    assert _findings(result, "nv_pending") == []


def test_without_mlxconfig_the_check_is_skipped_with_the_reason(sim, monkeypatch, tmp_path):
    healthy(sim, "dgx-h100-ib")
    state_file = _wire(sim, monkeypatch, tmp_path)
    assert sim.cli("fault", "tool-missing", "mlxconfig") == 0
    from ansible.module_utils import basic
    real = basic.AnsibleModule.get_bin_path
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **k: None if name in ("mlxconfig", "mstconfig") else real(self, name, *a, **k))
    how, result = run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1"})
    assert how == "exit", result
    assert {"check": "nv_pending", "reason": "neither mlxconfig (NVIDIA MFT) nor mstconfig (mstflint) is installed"} \
        in result["skipped_checks"]


def test_the_firmware_check_from_facts_alone():
    facts = {"devices": dict(("mlx5_%d" % i, {"board_id": "MT_1", "fw_ver": v, "ports": []})
                             for i, v in enumerate(["1.2.3", "1.2.3", "1.2.4"]))}
    found = [(f["subject"], f["expected"], f["actual"]) for f in _health.judge(facts) if f["check"] == "firmware"]
    assert found == [("mlx5_2", "1.2.3 (as 2 of the node's 3 MT_1 NICs)", "1.2.4")]
    pinned = _health.judge(facts, {"firmware_versions": {"MT_1": "1.2.4"}})
    assert [f["subject"] for f in pinned if f["check"] == "firmware"] == ["mlx5_0", "mlx5_1"]
    try:
        _health.merge_checks({"firmware_versions": {"MT_1": 5}}, "health_checks")
    except _health.HealthError as exc:
        assert "health_checks.firmware_versions={'MT_1': 5}" in str(exc)
    else:
        raise AssertionError("a non-string version was accepted")
