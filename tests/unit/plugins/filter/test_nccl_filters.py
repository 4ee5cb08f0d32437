# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL filter plugins end to end: rdma_facts rails (tmp sysfs tree + topology) -> NCCL values."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.nccl import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils import _rdma_facts as rf
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.test_rdma_facts import TOPO_TEXT, host_sysfs

FILTERS = FilterModule().filters()


@pytest.fixture
def rails(tmp_path, monkeypatch):
    host_sysfs(tmp_path, monkeypatch)
    subsets = set(rf.SUBSETS)
    raw = {"devices": rf.read_rdma_sysfs(subsets), "topo_text": TOPO_TEXT, "gpu_list": None,
           "gpu_pci": {}, "errors": []}
    return rf.derive(raw, subsets)["rails"]


def test_filter_names():
    assert sorted(FILTERS) == ["nccl_conf", "nccl_gdr_level", "nccl_gid_index", "nccl_ib_hca", "nccl_tc", "nccl_validate"]


def test_ib_hca_from_facts_excludes_storage(rails):
    assert FILTERS["nccl_ib_hca"](rails) == "=mlx5_0,mlx5_1"
    assert FILTERS["nccl_ib_hca"](rails, "always") == "=mlx5_0:1,mlx5_1:1"


def test_gid_index_from_facts(rails):
    assert FILTERS["nccl_gid_index"](rails) == 3
    with pytest.raises(AnsibleFilterError, match="mlx5_0=3, mlx5_1=11"):
        FILTERS["nccl_gid_index"](rails, {"mlx5_1": "10.100.0.1"})


def test_gid_index_error_names_device(rails):
    rails[1]["ipv4_gids"] = [g for g in rails[1]["ipv4_gids"] if g["type"] != "RoCE v2"]
    with pytest.raises(AnsibleFilterError, match=r"^nccl_gid_index: mlx5_1 port 1 \(netdev ens2np0\) has no RoCE v2"):
        FILTERS["nccl_gid_index"](rails)


def test_tc_and_gdr_level():
    assert FILTERS["nccl_tc"](26) == 104
    assert FILTERS["nccl_tc"](26, "ect0") == 106
    assert FILTERS["nccl_gdr_level"]("PHB") == "PHB"
    with pytest.raises(AnsibleFilterError, match="^nccl_gdr_level: NCCL_NET_GDR_LEVEL NODE"):
        FILTERS["nccl_gdr_level"]("NODE")


def test_validate_and_conf(rails):
    settings = {"NCCL_IB_HCA": FILTERS["nccl_ib_hca"](rails), "NCCL_IB_GID_INDEX": FILTERS["nccl_gid_index"](rails),
                "NCCL_IB_TC": FILTERS["nccl_tc"](26, True), "NCCL_NET_GDR_LEVEL": "PIX", "NCCL_IB_SL": None}
    assert FILTERS["nccl_validate"](settings) is settings
    assert FILTERS["nccl_conf"](settings) == (
        "NCCL_IB_GID_INDEX=3\nNCCL_IB_HCA==mlx5_0,mlx5_1\nNCCL_IB_TC=106\nNCCL_NET_GDR_LEVEL=PIX\n")
    with pytest.raises(AnsibleFilterError, match="did you mean NCCL_IB_HCA"):
        FILTERS["nccl_validate"]({"NCCL_IB_HCAS": "=mlx5_0"})
    assert FILTERS["nccl_validate"]({"NCCL_IB_HCAS": "=mlx5_0"}, ["NCCL_IB_HCAS"]) == {"NCCL_IB_HCAS": "=mlx5_0"}
    with pytest.raises(AnsibleFilterError, match="case-sensitive"):
        FILTERS["nccl_conf"]({"NCCL_NET_GDR_LEVEL": "pix"})
