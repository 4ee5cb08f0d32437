# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric-health parsers on the real captures in tests/unit/fixtures/samples (the
sample id and file are named beside each test) and on the variants the tools' printing
code can produce (rules in each sample file's header)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ethtool_stats, _ibv_devinfo, _rdma_link
from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _pcie_acs
from ansible_collections.rdma.fabric.tests.unit.samples import load


def _tool_text(raw):
    """A dossier capture without its command line and elision marks ('[...]', '.......')."""
    return "\n".join(line for line in raw.splitlines()
                     if not re.match(r"\s*(\$ |\[\.\.\.|\.+\s*\Z|#\s*rdma|root@|ibv_devinfo |rdma link\s*\Z)", line))


# ---------------------------------------------------------------- ethtool -S

def test_ethtool_real_mlx5_ofed():
    # ethtool_S_mlx5.txt, ETHS-REAL-MLX5-OFED-ANNOT
    counters = _ethtool_stats.parse(_tool_text(load("ethtool_S_mlx5.txt")["ETHS-REAL-MLX5-OFED-ANNOT"].raw))
    assert counters["rx_steer_missed_packets"] == 194
    assert counters["rx_vport_unicast_bytes"] == 1704131709
    assert "rx_prio3_pause" not in counters       # PFC disabled on that host
    assert _ethtool_stats.pause_frames(counters)["rx"] == 0


def test_ethtool_variants():
    text = ("NIC statistics:\n     rx_prio3_pause: 12\n\ttx_prio3_pause: 3\n     tx_pause_storm_warning_events : 1\n"
            "     rx_global_pause: 5\n     tx-0.packets: 9\n")
    counters = _ethtool_stats.parse(text)
    assert counters["tx_pause_storm_warning_events"] == 1
    assert counters["tx-0.packets"] == 9
    assert _ethtool_stats.pause_frames(counters) == {"rx": 17, "tx": 3, "per_priority": {3: {"rx": 12, "tx": 3}}}


@pytest.mark.parametrize("text, words", [
    ("no stats available\n", "line 1"),                                              # rc 94, ETHS-LOCAL-ERRORS
    ("Cannot get stats strings information: No such device\n", "line 1"),            # rc 96
    ("NIC statistics:\n", "without a single counter"),
    ("", "empty"),
    ("NIC statistics:\n     rx_pause: -1\n", "rx_pause"),
    ("NIC statistics:\n     rx_pause: 18446744073709551616\n", "64-bit"),
    ("NIC statistics:\n     rx_pause 1\n", "line 2"),
    ("NIC statistics:\n     a: 1\n     a: 2\n", "twice"),
    ("NIC statistics:\n     a: 1\nNIC statistics:\n     b: 1\n", "second"),
])
def test_ethtool_garbage(text, words):
    with pytest.raises(ValueError, match=words):
        _ethtool_stats.parse(text)


# ---------------------------------------------------------------- ibv_devinfo -v

def test_ibv_devinfo_rdma_core_28_types():
    # ibv_devinfo.txt, IBVDEV-REAL-COMMIT-BBCE02EA3 (bnxt_re, compressed RoCE v2 GIDs with a type suffix)
    # The author elided the lines between the device fields and phys_state, the 'port:' line with them.
    text = _tool_text(load("ibv_devinfo.txt")["IBVDEV-REAL-COMMIT-BBCE02EA3"].raw).replace(
        "        phys_state:", "        port:   1\n        phys_state:")
    devices = _ibv_devinfo.parse(text)
    assert devices["bnxt_re2"]["fw_ver"] == "216.0.220.0"
    port = devices["bnxt_re2"]["ports"][1]
    assert [(g["index"], g["type"], g["ipv4"]) for g in port["gids"]] == [
        (0, "RoCE v1", None), (1, "RoCE v2", None), (2, "RoCE v1", "192.170.1.101"), (3, "RoCE v2", "192.170.1.101")]
    assert _ibv_devinfo.gid_table(port)["roce_v2_ipv4"] == ["192.170.1.101"]


def test_ibv_devinfo_ofed4_gid_table():
    # ibv_devinfo.txt, IBVDEV-REAL-OFED4-CX4LX (MLNX_OFED 4.x: 'Device ports:', no type suffix)
    devices = _ibv_devinfo.parse(_tool_text(load("ibv_devinfo.txt")["IBVDEV-REAL-OFED4-CX4LX"].raw))
    port = devices["mlx5_3"]["ports"][1]
    assert (port["state"], port["phys_state"], port["link_layer"], port["active_speed"]) == (
        "PORT_ACTIVE", "LINK_UP", "Ethernet", 10.0)
    assert [g["index"] for g in port["gids"]] == [0, 1, 2, 3]
    table = _ibv_devinfo.gid_table(port)
    assert (table["size"], table["used"], table["free"]) == (256, 4, 252)
    assert table["ipv4_any"] == ["192.168.242.56"]
    assert table["roce_v2_ipv4"] == []           # no type suffix: v1 and v2 cannot be told apart


def test_ibv_devinfo_nonverbose_has_no_table_size():
    # ibv_devinfo.txt, IBVDEV-RECON-NONVERBOSE-IB
    devices = _ibv_devinfo.parse(load("ibv_devinfo.txt")["IBVDEV-RECON-NONVERBOSE-IB"].raw)
    port = devices["mlx5_0"]["ports"][1]
    assert (port["sm_lid"], port["port_lid"], port["gid_tbl_len"]) == (1, 75, None)
    assert _ibv_devinfo.gid_table(port)["occupancy"] is None


def test_ibv_devinfo_v2_compressed_and_full_table():
    gids = "".join("\t\t\tGID[%3d]:\t\tfe80::%x, RoCE v1\n" % (i, i + 1) for i in range(3))
    text = ("hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tdevice_cap_flags:\t\t0x1\n\t\t\t\t\tRESIZE_MAX_WR\n"
            "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tgid_tbl_len:\t\t4\n\t\t\tlink_layer:\t\tEthernet\n"
            + gids + "\t\t\tGID[  3]:\t\t::ffff:10.0.0.1, RoCE v2\n\n")
    port = _ibv_devinfo.parse(text)["mlx5_0"]["ports"][1]
    table = _ibv_devinfo.gid_table(port)
    assert (table["used"], table["free"], table["occupancy"], table["roce_v2_ipv4"]) == (4, 0, 1.0, ["10.0.0.1"])


@pytest.mark.parametrize("text, words", [
    ("No IB devices found\n", "failed"),
    ("", "empty"),
    ("\tport:\t1\n", "starts with 'hca_id:'"),
    ("hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tGID[  0]:\t\tnot-a-gid\n", "GID"),
    ("hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tgid_tbl_len:\t\tmany\n", "gid_tbl_len"),
    ("hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tGID[  0]:\t\tfe80::1\n\t\t\tGID[  0]:\t\tfe80::2\n", "twice"),
    ("hca_id:\tmlx5_0\n\tthis is prose\n", "line 2"),
])
def test_ibv_devinfo_garbage(text, words):
    with pytest.raises(ValueError, match=words):
        _ibv_devinfo.parse(text)


# ---------------------------------------------------------------- lspci -vv LnkCap / LnkSta

def test_lspci_link_real_cx7_ok():
    # lspci_pcie.txt, LSPCI-REAL-CX7-FULL (leptonai/gpud testdata, H100 node)
    device = _pcie_acs.parse_lspci(load("lspci_pcie.txt")["LSPCI-REAL-CX7-FULL"].raw)["0000:1a:00.0"]
    assert device["link"] == {"cap_speed": 32.0, "cap_width": 16, "speed": 32.0, "width": 16,
                              "speed_note": "ok", "width_note": "ok", "downgraded": False}


def test_lspci_link_real_cx6dx_ok():
    # lspci_pcie.txt, LSPCI-REAL-CX6DX-FULL
    devices = _pcie_acs.parse_lspci(load("lspci_pcie.txt")["LSPCI-REAL-CX6DX-FULL"].raw)
    links = [d["link"] for d in devices.values() if d["link"]]
    assert links and all((l["cap_speed"], l["speed"], l["downgraded"]) == (16.0, 16.0, False) for l in links)


_FN = "0000:1a:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"


@pytest.mark.parametrize("cap, sta, expected", [
    ("Port #0, Speed 32GT/s, Width x16, ASPM not supported", "Speed 16GT/s (downgraded), Width x16 (ok)",
     (16.0, 16, True)),
    ("Port #0, Speed 32GT/s, Width x16, ASPM not supported", "Speed 32GT/s (ok), Width x8 (downgraded)",
     (32.0, 8, True)),
    # pciutils < 3.6: no notes, a trailing comma; judged against LnkCap
    ("Port #0, Speed 8GT/s, Width x16, ASPM L0s", "Speed 8GT/s, Width x8,", (8.0, 8, True)),
    ("Port #0, Speed 8GT/s, Width x16, ASPM L0s", "Speed 8GT/s, Width x16, TrErr- Train-", (8.0, 16, False)),
    ("Port #8, Speed 2.5GT/s, Width x1, ASPM L1", "Speed 2.5GT/s (ok), Width x1 (ok)", (2.5, 1, False)),
    ("Port #0, Speed unknown, Width x16, ASPM L1", "Speed unknown (ok), Width x16 (ok)", (None, 16, False)),
])
def test_lspci_link_variants(cap, sta, expected):
    link = _pcie_acs.parse_lspci(_FN + "\t\tLnkCap:\t%s\n\t\tLnkSta:\t%s\n" % (cap, sta))["0000:1a:00.0"]["link"]
    assert (link["speed"], link["width"], bool(link["downgraded"])) == expected


def test_lspci_link_garbage():
    with pytest.raises(ValueError, match="LnkSta"):
        _pcie_acs.parse_lspci(_FN + "\t\tLnkSta:\tSpeed fast, Width wide\n")


# ---------------------------------------------------------------- rdma link

@pytest.mark.parametrize("sample, first", [
    ("RDMA-REAL-OLDFMT", {"device": "i40iw0", "port": 1, "state": "DOWN", "physical_state": "NOP", "netdev": None}),
    ("RDMA-REAL-NEWFMT-CX5", {"device": "mlx5_0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP",
                              "netdev": "ens6f0np0"}),
    ("RDMA-REAL-NEWFMT-RXE", {"device": "rxe0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP",
                              "netdev": "eno12399np0"}),
    ("RDMA-REAL-ROCE-NAMES", {"device": "rocep1s0f0", "port": 1, "state": "ACTIVE", "physical_state": "LINK_UP",
                              "netdev": "enp1s0f0np0"}),
])
def test_rdma_link_real(sample, first):
    # rdma_link.txt, the named sample
    links = _rdma_link.parse(_tool_text(load("rdma_link.txt")[sample].raw))
    assert dict((k, links[0][k]) for k in first) == first


def test_rdma_link_ib_fields_and_details():
    # rdma_link.txt, RDMA-RECON-NEWFMT-IB (trailing space kept), plus '-d' fields
    link = _rdma_link.parse(load("rdma_link.txt")["RDMA-RECON-NEWFMT-IB"].raw)[0]
    assert (link["lid"], link["sm_lid"], link["lmc"], link["subnet_prefix"]) == (12, 4, 0, "fe80:0000:0000:0000")
    link = _rdma_link.parse("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1 netdev_index 4 "
                            "caps: <CM, IP_BASED_GID_TABLE> \n")[0]
    assert (link["netdev_index"], link["caps"]) == (4, ["CM", "IP_BASED_GID_TABLE"])


@pytest.mark.parametrize("text, words", [
    ("Failed to open NETLINK_RDMA socket\n", "line 1"),     # RDMA-LOCAL-NOSOCK
    ("", "no 'link"),
    ("link mlx5_0/1 state\n", "without a value"),
    ("link mlx5_0/1 state ACTIVE colour blue\n", "unknown field"),
    ("link mlx5_0/1 lid x state ACTIVE\n", "not a number"),
    ("link mlx5_0/1 physical_state LINK_UP\n", "no 'state'"),
    ("link mlx5_0/1 state ACTIVE\nlink mlx5_0/1 state DOWN\n", "twice"),
])
def test_rdma_link_garbage(text, words):
    with pytest.raises(ValueError, match=words):
        _rdma_link.parse(text)


# ---------------------------------------------------------------- NCCL NET/IB log lines

def test_nccl_log_gdr_used_on_the_chosen_hca():
    # nccl.txt, NCCL-REAL-2.16.5-ROCE-IB-GDR (nccl-tests issue 350)
    node = _nccl.parse_log(load("nccl.txt")["NCCL-REAL-2.16.5-ROCE-IB-GDR"].raw)["nodes"]["n013"]
    assert node["relaxed_ordering"] is True and node["network"] == "IB"
    assert [(h["name"], h["port"], h["link_layer"], h["gdr_enabled"], h["gdr_used"]) for h in node["hcas"]] == [
        ("mlx5_0", 1, "RoCE", True, None), ("mlx5_2", 1, "IB", True, True)]


def test_nccl_log_old_without_gdr():
    # nccl.txt, NCCL-REAL-2.4.8-MLX4-NORO: ' ; OOB' (no RO), 'Ring 00 ... via NET/IB/0' = no GPUDirect RDMA
    nodes = _nccl.parse_log(load("nccl.txt")["NCCL-REAL-2.4.8-MLX4-NORO"].raw)["nodes"]
    assert sorted(nodes) == ["node01", "node02"]
    hca = nodes["node01"]["hcas"][0]
    assert (hca["name"], hca["gdr_used"], nodes["node01"]["relaxed_ordering"]) == ("mlx4_0", False, False)


def test_nccl_log_launcher_prefix_two_ports():
    # nccl.txt, NCCL-REAL-2.16.2-MPI-PREFIX-2PORT
    node = _nccl.parse_log(load("nccl.txt")["NCCL-REAL-2.16.2-MPI-PREFIX-2PORT"].raw)["nodes"]["node01"]
    assert [(h["name"], h["port"]) for h in node["hcas"]] == [("mlx4_0", 1), ("mlx4_0", 2)]


def test_nccl_log_no_device():
    # nccl.txt, NCCL-REAL-2.18.3-NODEVICE-SOCKET
    node = _nccl.parse_log(load("nccl.txt")["NCCL-REAL-2.18.3-NODEVICE-SOCKET"].raw)["nodes"]["nf5688m7-1"]
    assert (node["no_device"], node["network"], node["hcas"]) == (True, "Socket", [])


def test_nccl_log_variants_and_garbage():
    log = ("NCCL INFO NET/IB : Using [0]mlx5_0:1:0/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
           "NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n"
           "NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA/Shared\n"
           "NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/1\n")
    node = _nccl.parse_log(log)["nodes"][""]
    assert [(h["name"], h["gdr_enabled"], h["gdr_used"]) for h in node["hcas"]] == [
        ("mlx5_0", None, True), ("mlx5_1", False, False)]
    with pytest.raises(ValueError, match="no 'NET/IB'"):
        _nccl.parse_log("hello\nNCCL version 2.18.3\n")
    with pytest.raises(ValueError, match="line 1"):
        _nccl.parse_log("NCCL INFO NET/IB : Using [0]mlx5_0 ; OOB eth0:10.0.0.1<0>\n")
