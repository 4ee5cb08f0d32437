# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the grammar of MLNX_OFED ofed_scripts ibdev2netdev (plain and -v): lines the script
can print read back through _rdma_facts.parse_ibdev2netdev(strict=True); lines it cannot print are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
FAST = hypothesis.settings(max_examples=40, deadline=None)

DESCRIPTIONS = ["ConnectX-6 VPI adapter card, HDR IB (200Gb/s) and 200GbE, single-port QSFP56",
                "CX556A - ConnectX-5 QSFP28", "ConnectX-4 VF", "Mellanox ConnectX-7 (NDR) PCIe 5.0 x16"]
line_st = st.fixed_dictionaries({
    "dev": st.from_regex(r"\Amlx5_(bond_)?[0-9]{1,2}\Z"),
    "port": st.integers(1, 2),
    "ndev": st.from_regex(r"\A(ib|ens|enp)[0-9a-z]{1,8}\Z"),
    "carrier": st.sampled_from(["Up", "Down"]),
    "verbose": st.booleans(),
    "bdf": st.tuples(st.integers(0, 0xff), st.integers(0, 0x1f), st.integers(0, 7)),
    "desc": st.sampled_from(DESCRIPTIONS),
    "fw": st.from_regex(r"\A[0-9]{2}\.[0-9]{2}\.[0-9]{4}\Z"),
    "state": st.sampled_from(["ACTIVE", "DOWN", "INIT"]),
})


def _print(line):
    if not line["verbose"]:
        return "%s port %d ==> %s (%s)" % (line["dev"], line["port"], line["ndev"], line["carrier"])
    bdf = "0000:%02x:%02x.%d" % line["bdf"]
    return "%s %s (MT4123 - MT_0000000222) %s fw %s port %d (%s) ==> %s (%s)" % (
        bdf, line["dev"], line["desc"], line["fw"], line["port"], line["state"], line["ndev"], line["carrier"])


@FAST
@hypothesis.given(st.lists(line_st, min_size=1, max_size=6, unique_by=lambda l: l["dev"]))
def test_printed_lines_read_back(lines):
    devices = _rdma_facts.parse_ibdev2netdev("\n".join(_print(l) for l in lines) + "\n", {}, strict=True)
    assert sorted(devices) == sorted(l["dev"] for l in lines)
    for line in lines:
        device = devices[line["dev"]]
        port = [p for p in device["ports"] if p["port"] == line["port"]][0]
        assert port["netdev"] == line["ndev"]
        if line["verbose"]:
            assert device["fw_ver"] == line["fw"] and port["state"] == line["state"]
            assert device["pci_address"] == "0000:%02x:%02x.%d" % line["bdf"]


NEAR_MISSES = [
    "mlx5_0 port 1 ==> ib0\n",                  # no carrier
    "mlx5_0 port one ==> ib0 (Up)\n",
    "mlx5_0 port 1 --> ib0 (Up)\n",
    "mlx5_0 port 1 ==> ib0 (Up)\nmlx5_1 port 1 =\n",   # a truncated line after a good one
    "CA 'mlx5_0'\n",
    "",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_refused(text):
    with pytest.raises(ValueError, match="ibdev2netdev"):
        _rdma_facts.parse_ibdev2netdev(text, {}, strict=True)
