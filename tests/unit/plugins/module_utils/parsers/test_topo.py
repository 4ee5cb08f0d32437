# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi topo -m parsing and rail assignment (samples nvidia_smi_topo.txt + layout-rule variants)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _topo
from ansible_collections.rdma.fabric.tests.unit import samples

TOPO = samples.load("nvidia_smi_topo.txt")
A100 = TOPO["TOPO-REAL-A100-10NIC"].raw
OLD = TOPO["TOPO-REAL-OLDFMT-2GPU"].raw

# Newer-driver layout from the sample header rules (no real capture of it in samples/):
# ANSI underline on the header, GPU NUMA ID column with the "\t\t" before it, a NIC legend,
# NIC rows ending in four empty cells, and one GPU with an EMPTY CPU Affinity cell.
H100_LIKE = (
    "\x1b[4m\tGPU0\tGPU1\tNIC0\tNIC1\tNIC2\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\tPIX\tSYS\tNODE\t0-47,96-143\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tSYS\tPIX\tSYS\t\t1\t\tN/A\n"
    "NIC0\tPIX\tSYS\t X \tSYS\tNODE\t\t\t\t\n"
    "NIC1\tSYS\tPIX\tSYS\t X \tSYS\t\t\t\t\n"
    "NIC2\tNODE\tSYS\tNODE\tSYS\t X \t\t\t\t\n"
    "\n"
    "Legend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect\n"
    "\n"
    "NIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n  NIC2: mlx5_10\n\n"
)


def test_a100_legend_resolves_nic_columns():
    topo = _topo.parse_topo(A100)
    assert [g["name"] for g in topo["gpus"]] == ["GPU%d" % i for i in range(8)]
    assert [n["device"] for n in topo["nics"]] == ["mlx5_%d" % i for i in range(10)]
    assert topo["nic_legend"]["NIC9"] == "mlx5_9"
    assert topo["matrix"]["GPU0"]["GPU1"] == "NV12"
    assert topo["matrix"]["GPU0"]["GPU0"] == "X"
    assert topo["matrix"]["GPU2"]["mlx5_2"] == "PXB"
    assert topo["matrix"]["mlx5_8"]["mlx5_9"] == "PIX"
    assert topo["gpus"][0]["cpu_affinity"] == "48-63,176-191"
    assert [g["numa_affinity"] for g in topo["gpus"]] == [3, 3, 1, 1, 7, 7, 5, 5]
    assert topo["gpus"][0]["gpu_numa_id"] is None


def test_a100_rails_split_ties_and_exclude_storage_pair():
    topo = _topo.parse_topo(A100)
    rails, compute = _topo.assign_rails(topo)
    assert [r["device"] for r in rails] == ["mlx5_%d" % i for i in range(8)]
    assert rails[0]["nearest"] == ["mlx5_0", "mlx5_1"]
    assert {r["relation"] for r in rails} == {"PXB"}
    assert compute == set("mlx5_%d" % i for i in range(8))  # mlx5_8/9: SYS to every GPU


def test_old_format_device_headers_without_legend():
    topo = _topo.parse_topo(OLD)
    assert topo["nic_legend"] == {}
    assert [n["column"] for n in topo["nics"]] == ["mlx5_0", "mlx5_1"]
    assert topo["matrix"]["GPU1"]["mlx5_1"] == "NODE"
    assert topo["gpus"][1]["cpu_affinity"] == "64-127"
    rails, compute = _topo.assign_rails(topo)
    assert [(r["gpu"], r["device"], r["relation"]) for r in rails] == [("GPU0", "mlx5_0", "NODE"), ("GPU1", "mlx5_1", "NODE")]


def test_new_format_gpu_numa_id_empty_cpu_affinity_and_ansi():
    topo = _topo.parse_topo(H100_LIKE)
    assert [n["device"] for n in topo["nics"]] == ["mlx5_0", "mlx5_1", "mlx5_10"]
    gpu0, gpu1 = topo["gpus"]
    assert (gpu0["cpu_affinity"], gpu0["numa_affinity"], gpu0["gpu_numa_id"]) == ("0-47,96-143", 0, None)
    assert (gpu1["cpu_affinity"], gpu1["numa_affinity"]) == (None, 1)
    rails, compute = _topo.assign_rails(topo)
    assert [(r["device"], r["relation"]) for r in rails] == [("mlx5_0", "PIX"), ("mlx5_1", "PIX")]
    assert compute == {"mlx5_0", "mlx5_1"}


def test_tabs_expanded_to_spaces_parse_the_same():
    expanded = A100.expandtabs(8)
    assert "\t" not in expanded
    a, b = _topo.parse_topo(A100), _topo.parse_topo(expanded)
    assert a["matrix"] == b["matrix"]
    assert a["gpus"] == b["gpus"]


def test_spaces_with_empty_cpu_affinity_aligns_right():
    topo = _topo.parse_topo(H100_LIKE.expandtabs(8))
    assert topo["gpus"][1]["numa_affinity"] == 1
    assert topo["gpus"][1]["cpu_affinity"] is None
    assert topo["matrix"]["GPU1"]["mlx5_1"] == "PIX"


def test_prompt_and_crlf_are_ignored():
    topo = _topo.parse_topo("$ nvidia-smi topo -m\r\n" + OLD.replace("\n", "\r\n"))
    assert len(topo["gpus"]) == 2


def test_no_gpu_output_is_empty():
    assert _topo.parse_topo("") == {"gpus": [], "nics": [], "nic_legend": {}, "matrix": {}}
    assert _topo.parse_topo("No devices were found\n")["gpus"] == []


def test_gpus_without_nics():
    topo = _topo.parse_topo("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV4\t0-7\t0\nGPU1\tNV4\t X \t0-7\t0\n")
    rails, compute = _topo.assign_rails(topo)
    assert [r["device"] for r in rails] == [None, None]
    assert compute == set()


def test_unknown_relation_is_an_error():
    with pytest.raises(_topo.TopoParseError, match="unknown relation 'QQQ'"):
        _topo.parse_topo("\tGPU0\tNIC0\nGPU0\t X \tQQQ\nNIC0\tPIX\t X \n")


def test_short_row_is_an_error():
    with pytest.raises(_topo.TopoParseError, match="row 'GPU0' has 1 relation cells"):
        _topo.parse_topo("\tGPU0\tGPU1\tNIC0\tCPU Affinity\nGPU0\t X \n")


def test_relation_rank_order():
    ranks = [_topo.relation_rank(code) for code in ("PIX", "PXB", "PHB", "NODE", "SYS")]
    assert ranks == sorted(ranks) and len(set(ranks)) == 5


def test_natural_sort():
    assert _topo.natural_sorted(["mlx5_10", "mlx5_2", "mlx5_1", "mlx5_bond_0"]) == ["mlx5_1", "mlx5_2", "mlx5_10", "mlx5_bond_0"]


def test_usable_restricts_candidates():
    topo = _topo.parse_topo(H100_LIKE)
    rails, compute = _topo.assign_rails(topo, usable={"mlx5_1", "mlx5_10"})
    # GPU0's PIX NIC is gone: NODE mlx5_10 is now nearest.
    assert [(r["device"], r["relation"]) for r in rails] == [("mlx5_10", "NODE"), ("mlx5_1", "PIX")]
