# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parts of _gdr_readiness: /proc parsers, peer memory, IOMMU, per-GPU verdicts and ACS
targets.  lspci trees: test_pcie_acs.SWITCH_TREE (GPU 18:00.0 and NIC 1a:00.0 below one
switch, ReqRedir+ on 17:00.0) plus TREE_B below; topology sample TOPO-REAL-OLDFMT-2GPU."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _gdr_readiness as gdr
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts as rf
from ansible_collections.rdma.fabric.tests.unit import samples
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.resources.test_pcie_acs import SWITCH_TREE
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.facts.test_rdma_facts import TOPO_TEXT

TOPO = samples.load("nvidia_smi_topo.txt")

# GPU1 (9b:00.0) and mlx5_1 (9a:00.0) below a second switch whose ports have ACS off; the
# root port 97:01.0 above it keeps ReqRedir+ (isolation) and must not become a target.
TREE_B = """\
0000:97:01.0 PCI bridge [0604]: Intel Corporation Device [8086:352a] (rev 04) (prog-if 00 [Normal decode])
\tBus: primary=97, secondary=98, subordinate=9b, sec-latency=0
\tNUMA node: 1
\tCapabilities: [40] Express (v2) Root Port (Slot+), MSI 00
\tCapabilities: [220 v1] Access Control Services
\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
0000:98:00.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0) (prog-if 00 [Normal decode])
\tBus: primary=98, secondary=99, subordinate=9b, sec-latency=0
\tNUMA node: 1
\tCapabilities: [68] Express (v2) Upstream Port, MSI 00
0000:99:00.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0) (prog-if 00 [Normal decode])
\tBus: primary=99, secondary=9a, subordinate=9a, sec-latency=0
\tNUMA node: 1
\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00
\tCapabilities: [200 v1] Access Control Services
\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+
\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd+ EgressCtrl- DirectTrans-
0000:99:01.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0) (prog-if 00 [Normal decode])
\tBus: primary=99, secondary=9b, subordinate=9b, sec-latency=0
\tNUMA node: 1
\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00
\tCapabilities: [200 v1] Access Control Services
\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+
\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd+ EgressCtrl- DirectTrans-
0000:9a:00.0 Ethernet controller [0200]: Mellanox Technologies MT2910 Family [ConnectX-7] [15b3:1021]
\tNUMA node: 1
\tCapabilities: [60] Express (v2) Endpoint, MSI 00
0000:9b:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)
\tNUMA node: 1
\tCapabilities: [60] Express (v2) Endpoint, MSI 00
"""
LSPCI = SWITCH_TREE + TREE_B

PROC_MODULES = (
    "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
    "nvidia_uvm 1437696 2 - Live 0x0000000000000000 (OE)\n"
    "nvidia 56836096 218 nvidia_peermem,nvidia_uvm, Live 0x0000000000000000 (OE)\n"
    "ib_core 434176 9 nvidia_peermem,rdma_cm,ib_uverbs,mlx5_ib, Live 0x0000000000000000\n")
OPEN_DRIVER = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.129.03  Release Build  "
               "(dvs-builder@U16-I3-B03-4-3)  Tue Oct 31 21:23:38 UTC 2023\n"
               "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n")
PROPRIETARY_DRIVER = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.223.02  Sat Oct  7 15:39:11 UTC 2023\n"


def facts_two_gpus(gpu1_numa=1, nic1_numa=1):
    """rdma facts as derive() makes them: GPU0 -> mlx5_0 (1a:00.0), GPU1 -> mlx5_1 (9a:00.0), PIX."""
    devices = {"mlx5_0": {"pci_address": "0000:1a:00.0", "numa_node": 0},
               "mlx5_1": {"pci_address": "0000:9a:00.0", "numa_node": nic1_numa},
               "mlx5_10": {"pci_address": "0000:5e:00.0", "numa_node": 0}}
    gpus = [{"index": 0, "name": "GPU0", "pci_address": "0000:18:00.0", "numa_node": 0,
             "nearest_nics": ["mlx5_0"], "nearest_relation": "PIX", "rail": "mlx5_0"},
            {"index": 1, "name": "GPU1", "pci_address": "0000:9b:00.0", "numa_node": gpu1_numa,
             "nearest_nics": ["mlx5_1"], "nearest_relation": "PIX", "rail": "mlx5_1"}]
    return {"source": "host", "devices": devices, "gpus": gpus, "errors": []}


def raw(facts=None, lspci=LSPCI, modules=PROC_MODULES, **extra):
    data = {"rdma": facts or facts_two_gpus(), "errors": [], "lspci_text": lspci, "chains": {},
            "proc_modules": modules, "sysfs_live_modules": [], "nvidia_sysfs_module": False,
            "nvidia_driver_version": None, "kernel_release": "5.15.0-91-generic",
            "proc_cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/sda1 iommu=pt quiet", "modinfo": {}}
    data.update(extra)
    return data


# ------------------------------------------------------------------ small parsers

def test_proc_modules_names():
    assert gdr.parse_proc_modules(PROC_MODULES) == ["nvidia_peermem", "nvidia_uvm", "nvidia", "ib_core"]
    assert gdr.parse_proc_modules(None) == []


def test_driver_version_open_and_proprietary():
    assert gdr.parse_driver_version(OPEN_DRIVER) == ("535.129.03", True)
    assert gdr.parse_driver_version(PROPRIETARY_DRIVER) == ("470.223.02", False)
    assert gdr.parse_driver_version("") == (None, False)


def test_kernel_version():
    assert gdr.kernel_version("5.15.0-91-generic\n") == (5, 15)
    assert gdr.kernel_version("4.18.0-513.el8.x86_64") == (4, 18)
    assert gdr.kernel_version("garbage") is None


def test_peer_memory_module_wins_over_dma_buf():
    state = gdr.peer_memory_state({"nvidia", "nv_peer_mem"}, True, "6.5.0")
    assert state == {"method": "nv_peer_mem", "modules_loaded": ["nv_peer_mem"], "dma_buf": True}


def test_peer_memory_dma_buf_needs_open_module_and_5_12():
    assert gdr.peer_memory_state({"nvidia"}, True, "5.12.0")["method"] == "dma_buf"
    assert gdr.peer_memory_state({"nvidia"}, True, "5.11.22")["method"] is None
    assert gdr.peer_memory_state({"nvidia"}, False, "6.8.0")["method"] is None
    assert gdr.peer_memory_state(set(), True, None)["dma_buf"] is False


def test_iommu_last_word_wins():
    assert gdr.iommu_state("ro iommu=pt intel_iommu=on")["passthrough"] is True
    assert gdr.iommu_state("iommu=pt iommu.passthrough=0") == {
        "passthrough": False, "arguments": ["iommu=pt", "iommu.passthrough=0"]}
    state = gdr.iommu_state('root=/dev/sda pci=disable_acs_redir=0000:17:00.0;0000:5d:00.0 quiet')
    assert state == {"passthrough": None, "arguments": ["pci=disable_acs_redir=0000:17:00.0;0000:5d:00.0"]}


# ------------------------------------------------------------------ derive

def test_redirect_on_the_switch_blocks_gpu0_only():
    facts = gdr.derive(raw())
    gpu0, gpu1 = facts["gpus"]
    assert gpu0["expected_to_work"] is False
    assert gpu0["reasons"] == ["ACS redirect still enabled on bridge 0000:17:00.0 (ACSCtl 001d)"]
    assert [e["bdf"] for e in gpu0["acs_path"]] == ["0000:17:00.0", "0000:17:01.0", "0000:16:00.0"]
    assert gpu0["acs_redirect"] is True
    assert (gpu1["expected_to_work"], gpu1["reasons"], gpu1["acs_redirect"]) == (True, [], False)
    assert (gpu1["nic"], gpu1["nic_pci_address"], gpu1["numa_node"], gpu1["nic_numa_node"], gpu1["peer_memory"]) == \
        ("mlx5_1", "0000:9a:00.0", 1, 1, "nvidia_peermem")
    assert facts["ready"] is False and facts["not_ready"] == ["GPU0"]
    assert facts["summary"][1] == "GPU1 -> mlx5_1 (PIX, NUMA 1/1): GDR expected to work (peer memory nvidia_peermem)"
    assert facts["summary"][0].startswith("GPU0 -> mlx5_0 (PIX, NUMA 0/0): NOT ready - ACS redirect")


def test_targets_are_the_switch_ports_of_gpu_nic_paths_not_root_ports():
    acs = gdr.derive(raw())["acs"]
    # 16:00.0 and 98:00.0 (upstream ports) have no ACS capability; the root ports are above
    # the switch where each GPU meets its NIC.
    assert acs["targets"] == ["0000:17:00.0", "0000:17:01.0", "0000:99:00.0", "0000:99:01.0"]
    assert acs["targets_redirect_enabled"] == ["0000:17:00.0"]
    assert acs["redirect_enabled"] == ["0000:15:01.0", "0000:17:00.0", "0000:97:01.0"]
    assert [(p["gpu"], p["nic"], p["redirect"]) for p in acs["paths"]] == [
        ("GPU0", "mlx5_0", True), ("GPU1", "mlx5_1", False)]


def test_misplaced_nic_numa_is_the_reason():
    facts = gdr.derive(raw(facts_two_gpus(nic1_numa=0)))
    assert facts["gpus"][1]["reasons"] == ["NIC on NUMA node 0, GPU on NUMA node 1"]


def test_numa_from_lspci_when_sysfs_unknown():
    facts = gdr.derive(raw(facts_two_gpus(gpu1_numa=None, nic1_numa=-1)))
    gpu1 = facts["gpus"][1]
    assert (gpu1["numa_node"], gpu1["nic_numa_node"], gpu1["expected_to_work"]) == (1, 1, True)


def test_no_peer_memory_every_gpu_not_ready():
    facts = gdr.derive(raw(modules="nvidia 56836096 218 - Live 0x0 (OE)\n"))
    assert facts["peer_memory"] == {"method": None, "modules_loaded": [], "dma_buf": False}
    assert facts["nvidia_driver"]["loaded"] is True and facts["nvidia_driver"]["installed"] is True
    assert all("no peer memory" in g["reasons"][-1] for g in facts["gpus"])
    assert facts["not_ready"] == ["GPU0", "GPU1"]


def test_dma_buf_counts_as_peer_memory():
    facts = gdr.derive(raw(modules="nvidia 1 0 - Live 0x0\n", nvidia_driver_version=OPEN_DRIVER,
                           kernel_release="6.5.0-1015-nvidia"))
    assert facts["peer_memory"]["method"] == "dma_buf"
    assert facts["gpus"][1]["expected_to_work"] is True
    assert facts["nvidia_driver"]["version"] == "535.129.03" and facts["nvidia_driver"]["open_kernel_module"] is True


def test_sysfs_initstate_counts_as_loaded():
    facts = gdr.derive(raw(modules="", sysfs_live_modules=["nvidia", "nvidia_peermem"]))
    assert facts["peer_memory"]["method"] == "nvidia_peermem"
    assert facts["nvidia_driver"]["loaded"] is True


def test_without_lspci_acs_is_unknown_and_said():
    facts = gdr.derive(raw(lspci=None, lspci_error="lspci not found (install pciutils)"))
    assert facts["acs"]["audited"] is False and facts["acs"]["targets"] == []
    assert facts["gpus"][1]["reasons"] == ["ACS along the GPU-NIC path not audited (lspci not found (install pciutils))"]
    assert facts["gpus"][1]["acs_path"] is None and facts["gpus"][1]["expected_to_work"] is False


def test_far_nic_and_gdr_level():
    facts = facts_two_gpus()
    facts["gpus"][1]["nearest_relation"] = "SYS"
    result = gdr.derive(raw(facts), gdr_level="PXB")
    assert result["gpus"][1]["reasons"][0].startswith("GPU and NIC are SYS apart (across the inter-socket link)")
    assert gdr.derive(raw(facts), gdr_level="SYS")["gpus"][1]["expected_to_work"] is True


def test_gpu_without_nic():
    facts = facts_two_gpus()
    facts["gpus"][1].update(rail=None, nearest_nics=[], nearest_relation=None)
    entry = gdr.derive(raw(facts))["gpus"][1]
    assert (entry["expected_to_work"], entry["reasons"]) == (False, ["no RDMA NIC in the GPU's topology row"])


def test_no_gpu_is_not_ready_with_a_clear_summary():
    facts = gdr.derive(raw({"source": "host", "devices": {}, "gpus": [], "errors": []}))
    assert (facts["ready"], facts["gpu_count"], facts["gpus"]) == (False, 0, [])
    assert facts["summary"] == ["no GPU found (nvidia-smi absent or failing): nothing to check"]


def test_access_denied_bridge_is_unknown_and_a_target():
    text = LSPCI.replace("0000:99:00.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0) "
                         "(prog-if 00 [Normal decode])\n\tBus: primary=99, secondary=9a, subordinate=9a, sec-latency=0\n"
                         "\tNUMA node: 1\n\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00\n"
                         "\tCapabilities: [200 v1] Access Control Services\n",
                         "0000:99:00.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0) "
                         "(prog-if 00 [Normal decode])\n\tBus: primary=99, secondary=9a, subordinate=9a, sec-latency=0\n"
                         "\tNUMA node: 1\n\tCapabilities: <access denied>\n\tCapabilities: [200 v1] Access Control Services\n")
    facts = gdr.derive(raw(lspci=text))
    gpu1 = facts["gpus"][1]
    assert gpu1["acs_redirect"] is None
    assert "ACS state of bridge 0000:99:00.0 unknown (lspci without root)" in gpu1["reasons"]
    assert "0000:99:00.0" in facts["acs"]["targets_redirect_enabled"]


def test_real_topology_sample_through_rdma_derive():
    """TOPO-REAL-OLDFMT-2GPU: both GPUs NODE from their NICs; NCCL's default PXB refuses it."""
    rdma_raw = {"devices": {}, "topo_text": TOPO["TOPO-REAL-OLDFMT-2GPU"].raw, "gpu_list": None, "gpu_pci": {},
                "errors": []}
    facts = rf.derive(rdma_raw, {"devices", "gpus"})
    result = gdr.derive(raw(facts, lspci=None))
    assert [(g["gpu"], g["nic"], g["relation"]) for g in result["gpus"]] == [
        ("GPU0", "mlx5_0", "NODE"), ("GPU1", "mlx5_1", "NODE")]
    assert result["gpus"][0]["reasons"][0].startswith("GPU and NIC are NODE apart")


def test_topo_text_fixture_pix_pairs():
    rdma_raw = {"devices": {}, "topo_text": TOPO_TEXT, "gpu_list": None, "gpu_pci": {}, "errors": []}
    facts = rf.derive(rdma_raw, {"devices", "gpus"})
    result = gdr.derive(raw(facts, lspci=None))
    assert [(g["gpu"], g["nic"], g["relation"], g["numa_node"]) for g in result["gpus"]] == [
        ("GPU0", "mlx5_0", "PIX", 0), ("GPU1", "mlx5_1", "PIX", 1)]


def test_systemd_is_reported_and_unknown_for_captures():
    assert gdr.derive(raw(systemd=True))["systemd"] is True
    assert gdr.derive(raw(systemd=False))["systemd"] is False
    assert gdr.derive(gdr.read_captured(None, {"proc_cmdline": "quiet"}))["systemd"] is None
