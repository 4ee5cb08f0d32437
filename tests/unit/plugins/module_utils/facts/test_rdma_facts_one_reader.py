# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""#29 leftovers: ``derive`` reads the topology text once (``parse_topo(text, require_gpus=True)``)
with the results the lenient-then-strict pair gave, and ``read_captured``'s show_gids condition
in both of its branches."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts as rf
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _topo
from ansible_collections.rdma.fabric.tests.unit import samples

TOPO = samples.load("nvidia_smi_topo.txt")
NIC_ROW_ONLY = "\tGPU0\tNIC0\tCPU Affinity\nNIC0\tPIX\t X \t\n\nNIC Legend:\n\n  NIC0: mlx5_0\n"


def _derive(text):
    raw = {"devices": {}, "topo_text": text, "gpu_list": None, "gpu_pci": {}, "errors": []}
    return rf.derive(raw, {"devices", "gpus"})


@pytest.mark.parametrize("sample_id", sorted(TOPO))
def test_require_gpus_reads_a_matrix_as_the_lenient_reader_does(sample_id):
    raw = TOPO[sample_id].raw
    try:
        lenient = _topo.parse_topo(raw)
    except _topo.TopoParseError:
        with pytest.raises(_topo.TopoParseError):
            _topo.parse_topo(raw, require_gpus=True)
        return
    if lenient["gpus"]:
        assert _topo.parse_topo(raw, require_gpus=True) == lenient
    else:
        with pytest.raises(_topo.TopoParseError) as err:
            _topo.parse_topo(raw, require_gpus=True)
        assert err.value.topo == lenient


@pytest.mark.parametrize("text,message", [
    ("", "nvidia-smi topo -m: empty output"),
    ("No devices were found\n", "line 1 'No devices were found': no matrix header"),
    ("Failed to initialize NVML: Driver/library version mismatch\n", "line 1 'Failed to initialize NVML"),
    (NIC_ROW_ONLY, "no row for column(s) GPU0 (cut-off matrix)"),
])
def test_no_gpu_row_raises_the_strict_readers_reason(text, message):
    with pytest.raises(_topo.TopoParseError) as err:
        _topo.parse_topo(text, require_gpus=True)
    assert message in str(err.value)
    with pytest.raises(_topo.TopoParseError) as strict:
        _topo.parse(text)
    assert str(strict.value) == str(err.value)
    assert err.value.topo == _topo.parse_topo(text)         # the lenient result, unchanged


def test_derive_reports_the_matrix_read_and_the_reason():
    """A matrix with a NIC row and no GPU row: one error entry naming the missing row, no
    GPU and no rail, and the topology read (the NIC from its legend), as before."""
    facts = _derive(NIC_ROW_ONLY)
    assert [e["msg"] for e in facts["errors"]] == ["nvidia-smi topo -m: no row for column(s) GPU0 (cut-off matrix)"]
    assert facts["gpus"] == [] and facts["rails"] == []
    assert facts["topology"] == {"nics": ["mlx5_0"], "nic_legend": {"NIC0": "mlx5_0"},
                                 "matrix": {"mlx5_0": {"GPU0": "PIX", "mlx5_0": "X"}}}


def test_derive_no_devices_text_gives_an_error_and_an_empty_topology():
    facts = _derive("No devices were found\n")
    assert len(facts["errors"]) == 1 and "no matrix header" in facts["errors"][0]["msg"]
    assert facts["topology"] == {"nics": [], "nic_legend": {}, "matrix": {}}


def test_derive_malformed_matrix_reports_no_topology():
    facts = _derive("\tGPU0\tNIC0\nGPU0\t X \tWAT\n")
    assert "unknown relation 'WAT'" in facts["errors"][0]["msg"] and facts["topology"] is None


def test_derive_reads_a_real_matrix_without_an_error():
    sample = next(s for i, s in sorted(TOPO.items()) if "GPU0" in s.raw and _topo.parse_topo(s.raw)["gpus"])
    facts = _derive(sample.raw)
    assert facts["errors"] == [] or all("not an RDMA device" in e["msg"] for e in facts["errors"])
    assert [g["name"] for g in facts["gpus"]] == [g["name"] for g in _topo.parse_topo(sample.raw)["gpus"]]


# ------------------------------------------------------------ read_captured: show_gids

BAD_GIDS = "mlx5_0 1 Segmentation fault\n"


@pytest.mark.parametrize("subsets", [{"devices"}, {"devices", "gids"}])
def test_show_gids_text_is_read_whatever_the_subsets(subsets):
    """A non-empty show_gids text is read (strictly) with or without the gids subset."""
    with pytest.raises(ValueError, match=r"^captured\.show_gids line 1"):
        rf.read_captured({"show_gids": BAD_GIDS}, subsets)


def test_empty_show_gids_is_refused_when_gids_are_asked_for():
    with pytest.raises(ValueError, match=r"^captured\.show_gids: empty"):
        rf.read_captured({"show_gids": ""}, {"devices", "gids"})


def test_empty_show_gids_is_skipped_without_the_gids_subset():
    assert rf.read_captured({"show_gids": ""}, {"devices"})["devices"] == {}


@pytest.mark.parametrize("subsets", [{"devices"}, {"devices", "gids"}])
def test_absent_show_gids_is_skipped(subsets):
    assert rf.read_captured({}, subsets)["devices"] == {}
