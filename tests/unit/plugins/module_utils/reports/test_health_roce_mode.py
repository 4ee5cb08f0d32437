# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rdma_cm_roce_mode health check: the RDMA-CM default RoCE mode of every RoCE port
(rdma_cm configfs default_roce_mode) is RoCE v2; IB/RoCE v1 is an error naming the device and
port; a port whose mode was not read is a skipped check with its reason, never a pass. The
reader never creates the configfs group (health is read-only)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.reports import test_health as T

S0, S1 = "mlx5_0 port 1 (eth0)", "mlx5_1 port 1 (eth1)"


def observed(modes, link_layer="Ethernet"):
    obs = T.node(link_layer)
    obs["rdma_cm_roce_mode"] = modes
    return obs


def test_roce_v2_passes_v1_is_an_error_naming_device_and_port():
    obs = observed({"mlx5_0/1": {"mode": "RoCE v2"}, "mlx5_1/1": {"mode": "IB/RoCE v1"}})
    findings = _health.judge(obs)
    assert [(f["check"], f["subject"], f["severity"], f["expected"], f["actual"]) for f in findings] == [
        ("rdma_cm_roce_mode", S1, "error", "RoCE v2", "IB/RoCE v1")]
    assert findings[0]["diagnosis"] == "cma_roce_mode -d mlx5_1 -p 1"
    assert "cma_roce_mode -d mlx5_1 -p 1 -m 2" in findings[0]["remedy"]
    assert "roce_qos_rdma_cm_roce_mode" in findings[0]["remedy"]
    assert _health.skipped(obs) == []


def test_switch_severity_and_ignored_devices():
    obs = observed({"mlx5_0/1": {"mode": "IB/RoCE v1"}, "mlx5_1/1": {"mode": "IB/RoCE v1"}})
    assert T.found(obs, {"rdma_cm_roce_mode": False}) == []
    assert _health.skipped(observed({"mlx5_0/1": {"skipped": "x"}}), {"rdma_cm_roce_mode": False}) == []
    assert T.found(obs, {"severity": {"rdma_cm_roce_mode": "warning"}, "ignore_devices": ["mlx5_0"]}) == [
        ("rdma_cm_roce_mode", S1, "warning")]


def test_unread_ports_are_skipped_with_their_reason_never_passed():
    why = "the device's rdma_cm configfs group does not exist"
    obs = observed({"mlx5_0/1": {"skipped": why}, "mlx5_1/1": {"skipped": why}})
    assert T.found(obs) == []
    assert _health.skipped(obs) == [{"check": "rdma_cm_roce_mode", "subject": S0 + ", " + S1, "reason": why}]
    # a text that is neither mode, and a port missing from the observations
    obs = observed({"mlx5_0/1": {"mode": "Invalid GID type"}})
    assert T.found(obs) == []
    assert _health.skipped(obs) == [
        {"check": "rdma_cm_roce_mode", "subject": S0,
         "reason": "default_roce_mode reads 'Invalid GID type', neither RoCE v2 nor IB/RoCE v1"},
        {"check": "rdma_cm_roce_mode", "subject": S1, "reason": "the RDMA-CM default RoCE mode was not read"}]


def test_infiniband_ports_and_facts_only_input_are_not_judged():
    obs = observed({"mlx5_0/1": {"mode": "IB/RoCE v1"}}, link_layer="InfiniBand")
    assert [f for f in T.found(obs) if f[0] == "rdma_cm_roce_mode"] == []
    assert _health.skipped(obs) == []
    assert _health.skipped(T.node()) == [] and T.found(T.node()) == []     # the gate: rdma_facts only


def test_the_check_switch_is_a_known_key():
    assert _health.merge_checks({"rdma_cm_roce_mode": False})["rdma_cm_roce_mode"] is False


def _devices(link_layer="Ethernet"):
    return {"mlx5_0": {"ports": [{"port": 1, "link_layer": link_layer, "netdev": "eth0"}]},
            "mlx5_1": {"ports": [{"port": 1, "link_layer": link_layer, "netdev": "eth1"}]}}


def test_reader_never_creates_the_configfs_group(tmp_path, monkeypatch):
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))
    base = tmp_path / "kernel" / "config" / "rdma_cm"
    modes = _health_read.read_roce_modes(_devices())
    assert set(modes) == set(["mlx5_0/1", "mlx5_1/1"])
    assert "configfs is not mounted or the rdma_cm module is not loaded" in modes["mlx5_0/1"]["skipped"]
    base.mkdir(parents=True)
    (base / "mlx5_1" / "ports" / "1").mkdir(parents=True)
    (base / "mlx5_1" / "ports" / "1" / "default_roce_mode").write_text("IB/RoCE v1\n")
    modes = _health_read.read_roce_modes(_devices())
    assert "appears only after a mkdir" in modes["mlx5_0/1"]["skipped"] and not (base / "mlx5_0").exists()
    assert modes["mlx5_1/1"] == {"mode": "IB/RoCE v1"}
    os.unlink(str(base / "mlx5_1" / "ports" / "1" / "default_roce_mode"))
    assert "cannot be read" in _health_read.read_roce_modes(_devices())["mlx5_1/1"]["skipped"]
    assert sorted(os.listdir(str(base))) == ["mlx5_1"]
    assert _health_read.read_roce_modes(_devices("InfiniBand")) is None


def test_derive_keeps_the_modes_and_an_old_bundle_is_skipped():
    facts = {"devices": _devices()}
    assert _health_read.derive_roce_modes({"rdma_cm_roce_mode": {"mlx5_0/1": {"mode": "RoCE v2"}}}, facts) == {
        "mlx5_0/1": {"mode": "RoCE v2"}}
    assert _health_read.derive_roce_modes({}, facts) is None
    old = _health_read.derive_roce_modes({"source": "bundle"}, facts)
    assert sorted(old) == ["mlx5_0/1", "mlx5_1/1"] and "support bundle" in old["mlx5_0/1"]["skipped"]
