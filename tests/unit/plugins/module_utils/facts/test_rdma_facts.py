# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_facts readers: a tmp sysfs tree, and captured ibstat / show_gids / ibdev2netdev texts
(samples ibstat.txt, show_gids.txt, ibdev2netdev.txt, nvidia_smi_topo.txt)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts as rf
from ansible_collections.rdma.fabric.tests.unit import samples

SHOW_GIDS = samples.load("show_gids.txt")
IBSTAT = samples.load("ibstat.txt")
IB2N = samples.load("ibdev2netdev.txt")
TOPO = samples.load("nvidia_smi_topo.txt")

V4 = "0000:0000:0000:0000:0000:ffff:%s"

# Topology of the synthetic host below (newer-driver layout: legend, GPU NUMA ID column).
TOPO_TEXT = (
    "\tGPU0\tGPU1\tNIC0\tNIC1\tNIC2\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV18\tPIX\tSYS\tSYS\t0-47\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tSYS\tPIX\tSYS\t48-95\t1\t\tN/A\n"
    "NIC0\tPIX\tSYS\t X \tSYS\tSYS\t\t\t\t\n"
    "NIC1\tSYS\tPIX\tSYS\t X \tSYS\t\t\t\t\n"
    "NIC2\tSYS\tSYS\tSYS\tSYS\t X \t\t\t\t\n"
    "\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n  NIC2: mlx5_10\n"
)
# nvidia-smi --query-gpu=index,pci.bus_id,name,uuid answer for the same host.
GPU_QUERY = "0, 00000000:18:00.0, NVIDIA H100 80GB HBM3, GPU-a\n1, 00000000:9B:00.0, NVIDIA H100 80GB HBM3, GPU-b\n"


def _write(path, text):
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write(text + "\n")


def add_pci(root, bdf, numa, speed="32.0 GT/s PCIe", width="16", max_speed="32.0 GT/s PCIe",
            max_width="16", vendor="0x15b3", pci_class="0x020000"):
    pci_dir = os.path.join(root, "devices", "pci0000:00", bdf)
    for name, value in (("numa_node", str(numa)), ("current_link_speed", speed), ("current_link_width", width),
                        ("max_link_speed", max_speed), ("max_link_width", max_width),
                        ("vendor", vendor), ("class", pci_class)):
        _write(os.path.join(pci_dir, name), value)
    link = os.path.join(root, "bus", "pci", "devices", bdf)
    if not os.path.isdir(os.path.dirname(link)):
        os.makedirs(os.path.dirname(link))
    os.symlink(os.path.join("..", "..", "..", "devices", "pci0000:00", bdf), link)
    return pci_dir


def add_rdma(root, name, bdf, numa, ports, netdev=None, **pci):
    """One RDMA device the way the kernel lays it out: class symlink into the PCI function,
    ``device`` symlink back to it, GIDs with gid_attrs/types and ndevs."""
    pci_dir = add_pci(root, bdf, numa, **pci)
    dev_dir = os.path.join(pci_dir, "infiniband", name)
    _write(os.path.join(dev_dir, "fw_ver"), "28.39.1002")
    _write(os.path.join(dev_dir, "node_guid"), "a088:c203:00e3:142a")
    _write(os.path.join(dev_dir, "sys_image_guid"), "a088:c203:00e3:142a")
    _write(os.path.join(dev_dir, "hca_type"), "MT4129")
    _write(os.path.join(dev_dir, "node_type"), "1: CA")
    os.symlink(os.path.join("..", "..", "..", bdf), os.path.join(dev_dir, "device"))
    for number, port in ports.items():
        port_dir = os.path.join(dev_dir, "ports", str(number))
        _write(os.path.join(port_dir, "state"), port.get("state", "4: ACTIVE"))
        _write(os.path.join(port_dir, "phys_state"), port.get("phys_state", "5: LinkUp"))
        _write(os.path.join(port_dir, "rate"), port.get("rate", "400 Gb/sec (4X NDR)"))
        _write(os.path.join(port_dir, "link_layer"), port["link_layer"])
        _write(os.path.join(port_dir, "lid"), port.get("lid", "0x0"))
        _write(os.path.join(port_dir, "sm_lid"), port.get("sm_lid", "0x0"))
        os.makedirs(os.path.join(port_dir, "gid_attrs", "types"))
        os.makedirs(os.path.join(port_dir, "gid_attrs", "ndevs"))
        for index in range(16):  # unused slots: zero GID, no type/ndev files
            gid, gtype, ndev = port.get("gids", {}).get(index, ("0000:0000:0000:0000:0000:0000:0000:0000", None, None))
            _write(os.path.join(port_dir, "gids", str(index)), gid)
            if gtype:
                _write(os.path.join(port_dir, "gid_attrs", "types", str(index)), gtype)
            if ndev:
                _write(os.path.join(port_dir, "gid_attrs", "ndevs", str(index)), ndev)
    if netdev:  # IPoIB / fallback path: device/net/<netdev>/dev_port
        _write(os.path.join(pci_dir, "net", netdev, "dev_port"), "0")
    class_dir = os.path.join(root, "class", "infiniband")
    if not os.path.isdir(class_dir):
        os.makedirs(class_dir)
    os.symlink(os.path.join("..", "..", "devices", "pci0000:00", bdf, "infiniband", name),
               os.path.join(class_dir, name))


def roce_port(netdev, ipv4_hex, extra=None):
    gids = {
        0: ("fe80:0000:0000:0000:a288:c2ff:fee3:142a", "IB/RoCE v1", netdev),
        1: ("fe80:0000:0000:0000:a288:c2ff:fee3:142a", "RoCE v2", netdev),
        2: (V4 % ipv4_hex, "IB/RoCE v1", netdev),
        3: (V4 % ipv4_hex, "RoCE v2", netdev),
    }
    gids.update(extra or {})
    return {"link_layer": "Ethernet", "rate": "200 Gb/sec (2X HDR)", "gids": gids}


def build_host(root):
    """Two GPUs with a RoCE rail each (mlx5_0, mlx5_1 with a VLAN GID), an IB storage NIC
    named mlx5_10 (sorts before mlx5_2 in sysfs), and a down mlx5_2 no GPU sees."""
    add_rdma(root, "mlx5_0", "0000:1a:00.0", 0, {1: roce_port("ens1np0", "0a00:0001")})
    add_rdma(root, "mlx5_1", "0000:9a:00.0", 1, {1: roce_port("ens2np0", "0a00:0101", {
        10: (V4 % "0a64:0001", "IB/RoCE v1", "ens2np0.100"), 11: (V4 % "0a64:0001", "RoCE v2", "ens2np0.100")})},
        speed="16.0 GT/s PCIe", width="8")
    add_rdma(root, "mlx5_10", "0000:5e:00.0", 0, {1: {
        "link_layer": "InfiniBand", "lid": "0x4b", "sm_lid": "0x1",
        "gids": {0: ("fe80:0000:0000:0000:a088:c203:00e3:142a", "IB/RoCE v1", None)}}}, netdev="ib0")
    add_rdma(root, "mlx5_2", "0000:5f:00.0", -1, {1: {"link_layer": "Ethernet", "state": "1: DOWN",
                                                      "phys_state": "3: Disabled", "rate": "10 Gb/sec (4X SDR)"}})
    add_pci(root, "0000:18:00.0", 0, vendor="0x10de", pci_class="0x030200")
    add_pci(root, "0000:9b:00.0", 1, vendor="0x10de", pci_class="0x030200", speed="2.5 GT/s PCIe")
    add_pci(root, "0000:07:00.0", 0, vendor="0x10de", pci_class="0x068000")  # NVSwitch: not a GPU


def host_sysfs(tmp_path, monkeypatch):
    """build_host() under tmp_path/sys with SYSFS_PATH pointing there; returns that root."""
    root = str(tmp_path / "sys")
    build_host(root)
    monkeypatch.setenv("SYSFS_PATH", root)
    return root


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    return host_sysfs(tmp_path, monkeypatch)


# ------------------------------------------------------------------ sysfs reader

def test_sysfs_devices_natural_order_and_attributes(sysfs):
    devices = rf.read_rdma_sysfs({"devices", "gids", "pci"})
    assert list(devices) == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10"]
    dev = devices["mlx5_0"]
    assert (dev["pci_address"], dev["numa_node"], dev["fw_ver"], dev["node_guid"], dev["node_type"]) == \
        ("0000:1a:00.0", 0, "28.39.1002", "0xa088c20300e3142a", "CA")
    port = dev["ports"][0]
    assert (port["state"], port["phys_state"], port["rate_gbps"], port["link_layer"], port["netdev"]) == \
        ("ACTIVE", "LinkUp", 200, "Ethernet", "ens1np0")
    assert port["port_guid"] == "0xa288c2fffee3142a"
    assert devices["mlx5_2"]["numa_node"] is None  # numa_node -1
    assert devices["mlx5_2"]["ports"][0]["state"] == "DOWN"


def test_sysfs_gid_table_types_and_ipv4(sysfs):
    devices = rf.read_rdma_sysfs({"devices", "gids"})
    gids = devices["mlx5_1"]["ports"][0]["gids"]
    assert [(g["index"], g["type"], g["netdev"], g["ipv4"]) for g in gids] == [
        (0, "RoCE v1", "ens2np0", None), (1, "RoCE v2", "ens2np0", None),
        (2, "RoCE v1", "ens2np0", "10.0.1.1"), (3, "RoCE v2", "ens2np0", "10.0.1.1"),
        (10, "RoCE v1", "ens2np0.100", "10.100.0.1"), (11, "RoCE v2", "ens2np0.100", "10.100.0.1")]
    assert devices["mlx5_1"]["ports"][0]["ipv4"] == ["10.0.1.1", "10.100.0.1"]
    assert devices["mlx5_1"]["netdevs"] == ["ens2np0", "ens2np0.100"]


def test_sysfs_infiniband_port(sysfs):
    devices = rf.read_rdma_sysfs({"devices", "gids"})
    port = devices["mlx5_10"]["ports"][0]
    assert (port["lid"], port["sm_lid"], port["netdev"]) == (0x4b, 1, "ib0")  # netdev via device/net dev_port
    assert [(g["index"], g["type"]) for g in port["gids"]] == [(0, "IB")]
    assert port["port_guid"] == "0xa088c20300e3142a"


def test_sysfs_pcie_link(sysfs):
    devices = rf.read_rdma_sysfs({"devices", "pci"})
    assert devices["mlx5_0"]["pcie"] == {"current_link_speed": 32.0, "current_link_width": 16,
                                         "max_link_speed": 32.0, "max_link_width": 16,
                                         # on the root bus (pci0000:00): no upstream port
                                         "upstream_max_link_speed": None, "upstream_max_link_width": None,
                                         "downgraded": False}
    assert devices["mlx5_1"]["pcie"]["downgraded"] is True
    assert devices["mlx5_1"]["pcie"]["current_link_speed"] == 16.0
    assert rf.read_rdma_sysfs({"devices"})["mlx5_0"]["pcie"] is None


def test_sysfs_without_gids_subset_has_no_gid_table(sysfs):
    devices = rf.read_rdma_sysfs({"devices"})
    assert devices["mlx5_0"]["ports"][0]["gids"] == []
    assert devices["mlx5_0"]["ports"][0]["netdev"] == "ens1np0"


def test_sysfs_gpu_listing_skips_nvswitch(sysfs):
    assert rf.list_nvidia_gpus_sysfs() == ["0000:18:00.0", "0000:9b:00.0"]


def test_no_infiniband_class_is_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))
    assert rf.read_rdma_sysfs({"devices", "gids", "pci"}) == {}


def test_derive_from_sysfs_and_topology(sysfs):
    raw = {"devices": rf.read_rdma_sysfs(set(rf.SUBSETS)), "topo_text": TOPO_TEXT,
           "gpu_list": rf.parse_gpu_query("0, 00000000:18:00.0, NVIDIA H100 80GB HBM3, GPU-aaa\n"
                                          "1, 00000000:9B:00.0, NVIDIA H100 80GB HBM3, GPU-bbb\n"),
           "gpu_pci": rf.read_gpu_pci(["0000:18:00.0", "0000:9b:00.0"], True), "errors": []}
    facts = rf.derive(raw, set(rf.SUBSETS))
    assert facts["device_names"] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10"]
    assert [(r["gpu"], r["device"], r["port"], r["netdev"], r["numa_node"], r["relation"]) for r in facts["rails"]] == [
        ("GPU0", "mlx5_0", 1, "ens1np0", 0, "PIX"), ("GPU1", "mlx5_1", 1, "ens2np0", 1, "PIX")]
    assert [g["index"] for g in facts["rails"][1]["ipv4_gids"]] == [2, 3, 10, 11]
    assert facts["compute_nics"] == ["mlx5_0", "mlx5_1"]
    assert facts["extra_nics"] == ["mlx5_2", "mlx5_10"]
    assert facts["devices"]["mlx5_10"]["role"] == "extra"
    gpu1 = facts["gpus"][1]
    assert (gpu1["pci_address"], gpu1["numa_node"], gpu1["model"], gpu1["rail"]) == \
        ("0000:9b:00.0", 1, "NVIDIA H100 80GB HBM3", "mlx5_1")
    assert gpu1["pcie"]["downgraded"] is True
    assert facts["topology"]["nic_legend"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1", "NIC2": "mlx5_10"}
    assert facts["topology"]["matrix"]["GPU0"]["mlx5_0"] == "PIX"
    # NIC legend names mlx5_10, not in the matrix as NIC2; mlx5_2 is in sysfs only: no error for it.
    assert facts["errors"] == []


def test_derive_reports_topology_nic_missing_from_sysfs(sysfs):
    raw = {"devices": rf.read_rdma_sysfs({"devices"}), "topo_text": TOPO_TEXT.replace("NIC2: mlx5_10", "NIC2: mlx5_99"),
           "gpu_list": None, "gpu_pci": {}, "errors": []}
    facts = rf.derive(raw, {"devices", "gpus"})
    assert [e["msg"] for e in facts["errors"]] == [
        "NIC mlx5_99 of the topology matrix is not an RDMA device of this host; it is not used as a rail"]
    assert "mlx5_99" in facts["extra_nics"]


def test_derive_bad_topology_is_an_error_entry_not_a_crash():
    raw = {"devices": {}, "topo_text": "\tGPU0\tNIC0\nGPU0\t X \tWAT\n", "gpu_list": None, "gpu_pci": {}, "errors": []}
    facts = rf.derive(raw, {"devices", "gpus"})
    assert facts["gpus"] == [] and facts["rails"] == []
    assert "unknown relation 'WAT'" in facts["errors"][0]["msg"]


@pytest.mark.parametrize("text,why", [
    ("Failed to initialize NVML: Driver/library version mismatch\n", "no matrix header"),
    ("ibstat output, not a matrix\n", "no matrix header"),
])
def test_derive_topology_without_a_gpu_row_is_an_error_not_no_gpus(text, why):
    """Issue 29: nvidia-smi output (rc 0) with no matrix is an error entry naming the line,
    never a host that silently has no GPUs."""
    raw = {"devices": {}, "topo_text": text, "gpu_list": None, "gpu_pci": {}, "errors": []}
    facts = rf.derive(raw, {"devices", "gpus"})
    assert facts["gpus"] == [] and len(facts["errors"]) == 1
    assert why in facts["errors"][0]["msg"] and text.split()[0] in facts["errors"][0]["msg"]


@pytest.mark.parametrize("name,text", [
    ("show_gids", "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n"
                  "mlx5_0\t1\t0\tfe80:0000:0000:0000:0000:0000:0000:0001\t\tv1\tens1\n"
                  "mlx5_0 1 Segmentation fault\n"),
    ("ibdev2netdev", "mlx5_0 port 1 ==> ens1f0np0 (Up)\nmlx5_1 port 1 ==> ens1f1np1 (Up) extra words\n"),
])
def test_captured_line_the_tool_cannot_print_is_refused_by_name(name, text):
    """Issue 29: captured texts are read strictly, a stray line is named with its input."""
    with pytest.raises(ValueError) as err:
        rf.read_captured({name: text}, {"devices", "gids"})
    assert str(err.value).startswith("captured.%s line" % name), str(err.value)


# ------------------------------------------------------------------ captured parsers

def test_show_gids_exec_synth_lexicographic_to_numeric():
    devices = rf.parse_show_gids(SHOW_GIDS["SHOWGIDS-EXEC-SYNTH"].raw, {})
    gids = devices["mlx5_1"]["ports"][0]["gids"]
    rf.finish_device(devices["mlx5_1"])
    assert [g["index"] for g in gids] == [0, 1, 2, 3, 4, 5, 10, 11]
    assert [(g["index"], g["type"], g["ipv4"], g["netdev"]) for g in gids if g["ipv4"]] == [
        (2, "RoCE v1", "192.168.10.11", "ens1f0np0"), (3, "RoCE v2", "192.168.10.11", "ens1f0np0"),
        (10, "RoCE v1", "10.100.0.1", "ens1f0np0.100"), (11, "RoCE v2", "10.100.0.1", "ens1f0np0.100")]
    assert gids[6]["gid"] == "0000:0000:0000:0000:0000:ffff:0a64:0001"
    assert devices["mlx5_0"]["ports"][0]["gids"][0]["type"] == "IB"  # v1 with empty DEV column
    assert devices["mlx5_1"]["ports"][0]["netdev"] == "ens1f0np0"


def test_show_gids_spaces_and_huawei_v2_only():
    cx5 = rf.parse_show_gids(SHOW_GIDS["SHOWGIDS-REAL-CX5"].raw, {})
    assert [(g["index"], g["type"], g["ipv4"]) for g in cx5["mlx5_0"]["ports"][0]["gids"]][2:] == [
        (2, "RoCE v1", "192.168.6.132"), (3, "RoCE v2", "192.168.6.132")]
    assert cx5["mlx5_1"]["ports"][0]["gids"][0]["type"] == "IB"
    huawei = rf.parse_show_gids(SHOW_GIDS["SHOWGIDS-REAL-HUAWEI-MIXED"].raw, {})
    assert [(g["index"], g["type"], g["ipv4"], g["netdev"]) for g in huawei["hrn3_bond_0"]["ports"][0]["gids"]] == [
        (0, "RoCE v2", None, "bond0"), (1, "RoCE v2", "27.105.180.3", "bond0")]


@pytest.mark.parametrize("sample_id", sorted(SHOW_GIDS))
def test_show_gids_every_sample_counts_match_footer(sample_id):
    raw = SHOW_GIDS[sample_id].raw
    devices = rf.parse_show_gids(raw, {})
    total = sum(len(p["gids"]) for d in devices.values() for p in d["ports"])
    footer = [line for line in raw.splitlines() if line.startswith("n_gids_found=")]
    assert total == int(footer[0].split("=")[1])


def test_ibstat_h100_with_bond_and_spaces():
    errors = []
    devices = rf.parse_ibstat(IBSTAT["IBSTAT-REAL-H100-ACTIVE2"].raw, {}, errors)
    assert list(devices)[-1] == "mlx5_bond_0" and len(devices) == 9
    bond = devices["mlx5_bond_0"]
    assert (bond["fw_ver"], bond["hca_type"], bond["node_guid"]) == ("32.38.3056", "MT41692", "0x58a2e10300760398")
    port = bond["ports"][0]
    assert (port["state"], port["phys_state"], port["rate_gbps"], port["link_layer"], port["port_guid"], port["lid"]) == \
        ("ACTIVE", "LinkUp", 200, "Ethernet", "0x201d97fffe0056cf", 0)
    assert devices["mlx5_9"]["ports"][0]["lid"] == 2015
    assert errors == []


def test_ibstat_sim_states_and_ibpanic():
    errors = []
    devices = rf.parse_ibstat(IBSTAT["IBSTAT-SIM-NOSM"].raw, {}, errors)
    port = devices["ibsim0"]["ports"][0]
    assert (port["state"], port["link_layer"], port["sm_lid"]) == ("INIT", "InfiniBand", 0)
    devices = rf.parse_ibstat(IBSTAT["IBSTAT-REAL-A100-IBPANIC"].raw, {}, errors)
    assert len(devices) == 8
    assert errors[0]["msg"].startswith("ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed")


def test_ibstat_refused_text_is_an_error_entry_not_devices():
    errors = []
    devices = rf.parse_ibstat(IBSTAT["IBSTAT-SIM-ibstat_l"].raw, {}, errors)
    assert devices == {}
    assert errors == [{"tool": "ibstat", "cmd": None, "rc": None,
                       "stderr": errors[0]["msg"], "msg": errors[0]["msg"]}]
    assert errors[0]["msg"].startswith("ibstat line 2 'ibsim0': not an ibstat line")


def test_unreadable_sysfs_guid_is_none():
    assert rf.normalize_guid("a088:c203:00e3:142a") == "0xa088c20300e3142a"
    assert rf.normalize_guid(None) is None and rf.normalize_guid("0x" + "1" * 17) is None


def test_ibstat_single_port_layout():
    devices = rf.parse_ibstat(IBSTAT["IBSTAT-SIM-ibstat_dev"].raw, {}, [])
    assert devices["ibsim0"]["ports"][0]["port_guid"] == "0x0000000000100004"


def test_ibdev2netdev_verbose_and_plain():
    devices = rf.parse_ibdev2netdev(IB2N["IB2N-REAL-V-CX6"].raw, {})
    assert [(n, d["pci_address"], d["fw_ver"], d["ports"][0]["netdev"], d["ports"][0]["state"])
            for n, d in devices.items()] == [
        ("mlx5_0", "0000:01:00.0", "20.28.1002", "p5p1", "ACTIVE"),
        ("mlx5_1", "0000:41:00.0", "20.28.1002", "p4p1", "ACTIVE"),
        ("mlx5_2", "0000:8f:00.0", "20.28.1002", "p2p1", "ACTIVE")]
    sriov = rf.parse_ibdev2netdev(IB2N["IB2N-REAL-V-CX4-SRIOV"].raw, {})
    assert sriov["mlx5_2"]["ports"][0]["state"] == "DOWN" and sriov["mlx5_2"]["pci_address"] == "0000:02:00.5"
    assert sriov["mlx5_1"]["ports"][0]["netdev"] == "ib1"
    padded = rf.parse_ibdev2netdev(IB2N["IB2N-REAL-V-CX5-PARTPAD"].raw, {})
    assert padded["mlx5_1"]["ports"][0]["netdev"] == "enp94s0f1"
    azure = rf.parse_ibdev2netdev(IB2N["IB2N-REAL-AZURE-RENAMED"].raw, {})
    assert rf.natural_sorted(azure)[:3] == ["mlx5_an0", "mlx5_ib0", "mlx5_ib1"]


def test_captured_a100_ibstat_and_topology():
    captured = {"nvidia_smi_topo": TOPO["TOPO-REAL-A100-10NIC"].raw, "ibstat": IBSTAT["IBSTAT-REAL-A100-ACTIVE"].raw}
    subsets = rf.expand_subsets(["all"])
    facts = rf.derive(rf.read_captured(captured, subsets), subsets)
    # ibstat has mlx5_0..mlx5_8; the matrix names mlx5_9 too: reported, not a crash.
    assert [r["device"] for r in facts["rails"]] == ["mlx5_%d" % i for i in range(8)]
    assert facts["rails"][0]["link_layer"] == "Ethernet"
    assert facts["rails"][1]["link_layer"] == "InfiniBand"
    assert facts["extra_nics"] == ["mlx5_8", "mlx5_9"]
    assert "mlx5_9" in facts["errors"][0]["msg"]


@pytest.mark.parametrize("text, expected", [
    # the forms are _bdf's (test_bdf.py); rdma_facts turns a refused or missing one into None
    ("0000:1A:00.0", "0000:1a:00.0"), ("00000000:1A:00.0", "0000:1a:00.0"), ("1a:00.0", "0000:1a:00.0"),
    ("0000:1a:20.0", None), ("", None), (None, None)])
def test_normalize_bdf(text, expected):
    assert rf.normalize_bdf(text) == expected


def test_gid_helpers():
    assert rf.normalize_gid("::ffff:192.170.1.101") == "0000:0000:0000:0000:0000:ffff:c0aa:0165"
    assert rf.gid_ipv4("0000:0000:0000:0000:0000:ffff:c0aa:0165") == "192.170.1.101"
    assert rf.gid_ipv4("fe80:0000:0000:0000:b226:28ff:fed3:b0f0") is None
    assert rf.gid_type("IB/RoCE v1", "InfiniBand") == "IB"
    assert rf.gid_type("IB/RoCE v1", "Ethernet") == "RoCE v1"
    assert rf.gid_type("RoCE v2", "Ethernet") == "RoCE v2"
    assert rf.rate_gbps("2.5 Gb/sec (1X SDR)") == 2.5
