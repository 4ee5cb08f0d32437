# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RDMA-CM default RoCE mode on fabricsim: the configfs file default_roce_mode takes what the
kernel takes (exactly "RoCE v2" or "IB/RoCE v1", RoCE v2 only on a RoCE port), the
cma_roce_mode shim reads and writes that same file, the dcqcn module manages it, and
rdma_health judges it (an error for IB/RoCE v1 on a RoCE port, skipped where the group is
absent)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil

import pytest

from ansible_collections.rdma.fabric.plugins.modules import dcqcn
from ansible_collections.rdma.fabric.tests.unit import helpers

import test_rdma_health_sim as H

IF = "enp24s0np0"
MODE = "kernel/config/rdma_cm/%s/ports/1/default_roce_mode"


@pytest.fixture
def watcher(sim):
    from fabricsim import watch
    w = watch.Watcher().start()
    yield w
    w.ino.close()


@pytest.mark.parametrize("profile, dev, value, ok", [
    ("hgx-h100-roce", "mlx5_0", "IB/RoCE v1", True),
    ("hgx-h100-roce", "mlx5_0", "RoCE v2", True),
    ("hgx-h100-roce", "mlx5_0", "RoCE v3", False),
    ("hgx-h100-roce", "mlx5_0", "roce v2", False),
    ("hgx-h100-roce", "mlx5_0", "2", False),
    ("dgx-h100-ib", "mlx5_0", "RoCE v2", False),        # an IB port supports only IB/RoCE v1
    ("dgx-h100-ib", "mlx5_0", "IB/RoCE v1", True),
])
def test_watcher_takes_the_modes_the_kernel_takes(sim, profile, dev, value, ok):
    from fabricsim import watch
    sim.init(profile)
    w = watch.Watcher().start()
    try:
        path = MODE % dev
        before = sim.sysfs(path)
        sim.write_sysfs(path, value + "\n")
        recs = w.process(timeout=2)
        assert [(r["path"], r["value"], r.get("errno")) for r in recs] == [("/sys/" + path, value, None if ok else 22)]
        assert sim.sysfs(path) == (value + "\n" if ok else before)
    finally:
        w.ino.close()


def test_validate_is_exact_as_the_kernel_store():
    """What a write(2) brings (the FUSE view passes it as it is): one trailing newline at most."""
    from fabricsim import sysfs
    assert sysfs.validate("/x/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode", "IB/RoCE v1\n") == (
        True, 0, "IB/RoCE v1")
    for text in (" IB/RoCE v1", "IB/RoCE v1\n\n", "", "IB/RoCE v1 "):
        assert sysfs.validate("/x/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode", text)[:2] == (False, 22)


def test_cma_roce_mode_shim_is_the_configfs_file(sim):
    sim.init("hgx-h100-roce")
    assert sim.sysfs(MODE % "mlx5_0") == "RoCE v2\n"
    assert sim.run("cma_roce_mode", "-d", "mlx5_0", "-p", "1", "-m", "1") == ("IB/RoCE v1\n", "", 0)
    assert sim.sysfs(MODE % "mlx5_0") == "IB/RoCE v1\n"
    sim.write_sysfs(MODE % "mlx5_0", "RoCE v2\n")
    assert sim.out("cma_roce_mode", "-d", "mlx5_0") == "RoCE v2\n"
    out, err, rc = sim.run("cma_roce_mode", "-d", "mlx5_0", "-p", "1", "-m", "v2")       # ignored, bash complains
    assert (out, rc) == ("RoCE v2\n", 0) and err.count("integer expression expected") == 2
    assert sim.run("cma_roce_mode", "-d", "mlx5_0", "-p", "2") == ("Device mlx5_0 port 2 does not exist\n", "", 1)
    out, err, rc = sim.run("cma_roce_mode", "-d", "mlx5_99")
    assert (out, rc) == ("Failed to create configuration for mlx5_99\n", 1) and "No such device" in err
    assert "Set/Show RoCE default mode" in sim.out("cma_roce_mode", "-h")


def test_cma_roce_mode_v2_on_an_ib_port_is_refused_as_the_kernel_does(sim):
    sim.init("dgx-h100-ib")
    out, err, rc = sim.run("cma_roce_mode", "-d", "mlx5_0", "-p", "1", "-m", "2")
    assert (out, rc) == ("IB/RoCE v1\n", 0) and "echo: write error: Invalid argument" in err
    assert sim.sysfs(MODE % "mlx5_0") == "IB/RoCE v1\n"


def _dcqcn(monkeypatch, sim, args, check_mode=False):
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    return helpers.run_module(monkeypatch, dcqcn.main, args, check_mode=check_mode)


def test_dcqcn_manages_the_mode_on_the_simulated_node(sim, monkeypatch):
    sim.init("hgx-h100-roce")
    sim.out("cma_roce_mode", "-d", "mlx5_0", "-p", "1", "-m", "1")
    args = {"state": "merged", "config": [{"interface": IF, "rdma_device": "mlx5_0", "rdma_cm_roce_mode": "v2"}]}
    kind, res = _dcqcn(monkeypatch, sim, args, check_mode=True)
    assert kind == "exit" and res["changed"] is True and res["commands"] == [
        os.path.join(sim.sys, MODE % "mlx5_0") + "=RoCE v2"]
    assert sim.sysfs(MODE % "mlx5_0") == "IB/RoCE v1\n"
    kind, res = _dcqcn(monkeypatch, sim, args)
    assert kind == "exit" and res["changed"] is True
    assert res["before"][0]["rdma_cm_roce_mode"] == "v1" and res["after"][0]["rdma_cm_roce_mode"] == "v2"
    assert sim.out("cma_roce_mode", "-d", "mlx5_0", "-p", "1") == "RoCE v2\n"
    kind, res = _dcqcn(monkeypatch, sim, args)
    assert kind == "exit" and res["changed"] is False and res["commands"] == []
    kind, res = _dcqcn(monkeypatch, sim, {"state": "gathered", "config": [{"interface": IF, "rdma_device": "mlx5_0"}]})
    assert kind == "exit" and res["gathered"][0]["rdma_cm_roce_mode"] == "v2"


def _mode_skips(result):
    return [s for s in result["skipped_checks"] if s["check"] == "rdma_cm_roce_mode"]


def test_rdma_health_judges_the_mode(sim, monkeypatch, tmp_path):
    H.healthy(sim, "hgx-h100-roce")
    state_file = H._wire(sim, monkeypatch, tmp_path)
    args = {"interval": 0, "state_file": state_file, "host": "node1", "boot_grace": 0}
    how, result = H.run(monkeypatch, args)
    assert how == "exit" and result["findings"] == [] and _mode_skips(result) == []

    sim.out("cma_roce_mode", "-d", "mlx5_1", "-p", "1", "-m", "1")
    how, result = H.run(monkeypatch, args)
    assert how == "exit" and H.triples(result) == [("rdma_cm_roce_mode", "mlx5_1 port 1 (enp64s0np0)", "error")], \
        H.triples(result)
    assert result["findings"][0]["actual"] == "IB/RoCE v1" and result["findings"][0]["expected"] == "RoCE v2"

    # a device whose configfs group is absent (as on a host where no one made it): skipped, not
    # passed, and not created by the health run
    group = os.path.join(sim.sys, "kernel/config/rdma_cm/mlx5_1")
    shutil.rmtree(os.path.realpath(group))
    how, result = H.run(monkeypatch, args)
    assert how == "exit" and result["findings"] == []
    assert [(s["check"], s["subject"]) for s in _mode_skips(result)] == [
        ("rdma_cm_roce_mode", "mlx5_1 port 1 (enp64s0np0)")]
    assert "appears only after a mkdir" in _mode_skips(result)[0]["reason"]
    assert not os.path.exists(group)


def test_ib_node_is_not_judged(sim, monkeypatch, tmp_path):
    H.healthy(sim, "dgx-h100-ib")
    state_file = H._wire(sim, monkeypatch, tmp_path)
    how, result = H.run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1", "boot_grace": 0})
    assert how == "exit" and [f for f in result["findings"] if f["check"] == "rdma_cm_roce_mode"] == []
    assert _mode_skips(result) == []
