# -*- coding: utf-8 -*-
"""rdma_facts names an SR-IOV virtual function's physical function (sysfs ``physfn``), so that
the nic_firmware area never configures a VF (issue 40, the high defect): the key is there only
for a VF, and the area leaves such a device out."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts
from ansible_collections.rdma.fabric.plugins.module_utils.areas import nic_firmware
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.facts.test_rdma_facts import add_rdma, roce_port


def test_a_virtual_function_names_its_physical_function_and_is_never_configured(tmp_path, monkeypatch):
    root = str(tmp_path / "sys")
    add_rdma(root, "mlx5_0", "0000:3b:00.0", 0, {1: roce_port("ens1f0np0", "0a00:0001")})
    add_rdma(root, "mlx5_2", "0000:3b:00.2", 0, {1: roce_port("ens1f0v0", "0a00:0002")})
    add_rdma(root, "mlx5_3", "0000:3b:01.0", 0, {1: roce_port("ens1f0v1", "0a00:0003")})
    for vf in ("0000:3b:00.2", "0000:3b:01.0"):
        os.symlink(os.path.join("..", "0000:3b:00.0"), os.path.join(root, "devices", "pci0000:00", vf, "physfn"))
    monkeypatch.setenv("SYSFS_PATH", root)
    devices = _rdma_facts.read_rdma_sysfs(set())
    assert "physfn" not in devices["mlx5_0"]
    assert devices["mlx5_2"]["physfn"] == devices["mlx5_3"]["physfn"] == "0000:3b:00.0"
    spec = nic_firmware.spec({"nic_firmware_" + k: v for k, v in {
        "profile": "roce", "cc_priorities": [3], "cnp_dscp": 48, "cnp_priority": 6, "gpudirect": False,
        "max_acc_out_read": None, "params": {}, "devices": [], "versions": {}, "read_firmware": False,
        "reboot": "never", "reboot_timeout": 900, "reboot_defer": False, "boot_record": ""}.items()})
    plan = nic_firmware.plan({"devices": devices}, spec)
    assert plan["errors"] == [] and [c["device"] for c in plan["config"]] == ["mlx5_0"]
    assert sorted(plan["config"][0]["params"]) == ["CNP_802P_PRIO_P1", "CNP_DSCP_P1", "LINK_TYPE_P1", "ROCE_CC_PRIO_MASK_P1"]
