# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fabricsim prints the lspci LnkSta layouts of pciutils 3.5 / 3.6-3.7 / 3.8+ and the oldest
nvidia-smi topo -m layout (CPU Affinity only) seen in the corpus, and the parsers read them."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _pcie_acs as acs
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _topo


@pytest.mark.parametrize("version, marker", [("3.5", ", TrErr- Train-"), ("3.7", " (ok), Width"), ("3.8", "GT/s, Width x")])
def test_lspci_pciutils_layouts_parse(sim, version, marker):
    sim.init("dgx-h100-ib")
    default = acs.parse_lspci(sim.out("lspci", "-D", "-nn", "-vvv"))
    sim.edit_profile(lambda data: data.update(pciutils=version))
    out = sim.out("lspci", "-D", "-nn", "-vvv")
    assert any(marker in line for line in out.splitlines() if "LnkSta:" in line)
    devices = acs.parse_lspci(out)
    assert sorted(devices) == sorted(default)
    for bdf, device in devices.items():
        if device["link"]:
            link, ref = device["link"], default[bdf]["link"]
            assert (link["speed"], link["width"], link["cap_speed"], link["cap_width"]) == \
                (ref["speed"], ref["width"], ref["cap_speed"], ref["cap_width"])


def test_topo_cpu_affinity_only_layout_parses(sim):
    sim.init("dgx-h100-ib")
    default = _topo.parse(sim.out("nvidia-smi", "topo", "-m"))
    sim.edit_profile(lambda data: data.update(topo_format="cpu_affinity_only"))
    out = sim.out("nvidia-smi", "topo", "-m")
    assert "NUMA Affinity" not in out and "NIC Legend" not in out
    topo = _topo.parse(out)
    assert [n["device"] for n in topo["nics"]] == [n["device"] for n in default["nics"]]
    assert topo["matrix"] == default["matrix"]
    assert [g["numa_affinity"] for g in topo["gpus"]] == [None] * len(default["gpus"])
