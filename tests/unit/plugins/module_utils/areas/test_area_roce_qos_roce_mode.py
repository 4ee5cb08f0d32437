# -*- coding: utf-8 -*-
"""roce_qos_rdma_cm_roce_mode: the RDMA-CM default RoCE mode the roce_qos area plans into the
dcqcn config (default v2), leaves unmanaged (none, empty, null), checks by variable name, renders
for the boot applier, names in drift records and restores in a rollback."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.filter.roce_qos import roce_qos_rollback
from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.areas.test_area_roce_qos import F, FACTS, errors, plan, settings


def test_default_is_roce_v2_on_every_roce_port(monkeypatch):
    monkeypatch.delenv("SYSFS_PATH", raising=False)
    planned = plan(FACTS, settings())
    assert [d["rdma_cm_roce_mode"] for d in planned["dcqcn"]] == ["v2", "v2"]
    lines = planned["state_file"].splitlines()
    assert "eth2 sysfs /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode=RoCE v2" in lines
    assert "eth3 sysfs /sys/kernel/config/rdma_cm/mlx5_2/ports/1/default_roce_mode=RoCE v2" in lines
    assert all(roce_qos.STATE_LINE_RE.fullmatch(ln) for ln in lines[2:])


@pytest.mark.parametrize("value, mode, text", [
    ("v1", "v1", "IB/RoCE v1"), ("IB/RoCE v1", "v1", "IB/RoCE v1"), ("RoCE v2", "v2", "RoCE v2"),
])
def test_the_kernel_spellings_are_normalised(monkeypatch, value, mode, text):
    monkeypatch.delenv("SYSFS_PATH", raising=False)
    # RoCE v1 with DSCP trust (the role's only trust with its DSCP map) is refused by name (#40)
    found = errors(settings(rdma_cm_roce_mode=value))
    assert roce_qos.dcqcn_config(settings(rdma_cm_roce_mode=value)["settings"])["rdma_cm_roce_mode"] == mode
    if mode == "v1":
        assert len(found) == 1 and "roce_qos_rdma_cm_roce_mode=%r with roce_qos_trust=dscp" % value in found[0]
        with pytest.raises(Exception, match="RoCE v1 has no IP header"):
            plan(FACTS, settings(rdma_cm_roce_mode=value))
        return
    assert found == []
    planned = plan(FACTS, settings(rdma_cm_roce_mode=value))
    assert planned["dcqcn"][0]["rdma_cm_roce_mode"] == mode
    assert "eth2 sysfs /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode=%s" % text in \
        planned["state_file"].splitlines()


@pytest.mark.parametrize("value", ["none", "", None])
def test_none_leaves_it_unmanaged(value):
    assert errors(settings(rdma_cm_roce_mode=value)) == []
    planned = plan(FACTS, settings(rdma_cm_roce_mode=value))
    assert all("rdma_cm_roce_mode" not in d for d in planned["dcqcn"])
    assert "default_roce_mode" not in planned["state_file"]


@pytest.mark.parametrize("value", ["v3", "roce v2", "V2", "2", 2, ["v2"], "None"])
def test_a_bad_mode_names_the_variable_and_the_value(value):
    found = errors(settings(rdma_cm_roce_mode=value))
    assert len(found) == 1 and found[0].startswith("roce_qos_rdma_cm_roce_mode=%r: " % (value,)), found
    assert "v2" in found[0] and "none" in found[0]


def test_the_modules_field_is_named_as_the_variable():
    assert roce_qos.roce_qos_names("roce_qos (dcqcn).rdma_cm_roce_mode='x': must be") == \
        "roce_qos_rdma_cm_roce_mode='x': must be"


def test_drift_records_name_the_mode_setting():
    dcqcn = {"changed": True,
             "before": [{"interface": "eth2", "rdma_device": "mlx5_0", "port": 1, "rdma_cm_tos": 106,
                         "rdma_cm_roce_mode": "v1"}],
             "after": [{"interface": "eth2", "rdma_device": "mlx5_0", "port": 1, "rdma_cm_tos": 106,
                        "rdma_cm_roce_mode": "v2"}]}
    assert F["area_records"]({"dcqcn": dcqcn}, "roce_qos", "node1") == [
        {"host": "node1", "area": "roce_qos", "object": "eth2", "setting": "rdma_cm_roce_mode",
         "expected": "v2", "actual": "v1"}]


@pytest.mark.parametrize("before, restored", [("v1", {"rdma_cm_roce_mode": "v1"}), ("Invalid GID type", {})])
def test_rollback_puts_the_mode_back(before, restored):
    failed = {"failed": True, "failed_on": {"interface": "eth2"}}
    entry = {"interface": "eth2", "rdma_device": "mlx5_0", "port": 1, "rdma_cm_tos": 0, "rdma_cm_roce_mode": before}
    dcqcn = {"before": [entry], "after": [dict(entry, rdma_cm_tos=106, rdma_cm_roce_mode="v2")]}
    rollback = roce_qos_rollback({"mlnx_qos": {}, "dcqcn": dcqcn, "lldp_dcb": {}}, failed)
    assert rollback["dcqcn"] == [dict({"interface": "eth2", "rdma_device": "mlx5_0", "port": 1, "rdma_cm_tos": 0},
                                      **restored)]
