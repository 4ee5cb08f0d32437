# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_pcie_acs: lspci -vvv ACS parsing (samples lspci_pcie.txt LSPCI-REAL-CX7-FULL, LSPCI-REAL-CX6DX-FULL,
LSPCI-REAL-ACSCTL-ENABLED), upstream paths, setpci plan, GDR verdict."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _pcie_acs as acs
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError
from ansible_collections.rdma.fabric.tests.unit import samples

LSPCI = samples.load("lspci_pcie.txt")

# A PEX890xx switch under a root port, as `lspci -D -nn -vvv` prints it (pciutils
# ls-caps.c/ls-ecaps.c layout; lines cut to the ones the parser reads and their
# neighbours).  17:00.0 (above the GPU) still has ReqRedir+ CmpltRedir+; 17:01.0 (above
# the NIC) has only SrcValid+, like the real node of LSPCI-REAL-ACSCTL-ENABLED.
SWITCH_TREE = """\
0000:15:01.0 PCI bridge [0604]: Intel Corporation Device [8086:352a] (rev 04) (prog-if 00 [Normal decode])
\tControl: I/O+ Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR+ FastB2B- DisINTx+
\tBus: primary=15, secondary=16, subordinate=1b, sec-latency=0
\tNUMA node: 0
\tCapabilities: [40] Express (v2) Root Port (Slot+), MSI 00
\tCapabilities: [220 v1] Access Control Services
\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
0000:16:00.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0) (prog-if 00 [Normal decode])
\tBus: primary=16, secondary=17, subordinate=1b, sec-latency=0
\tNUMA node: 0
\tCapabilities: [68] Express (v2) Upstream Port, MSI 00
0000:17:00.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0) (prog-if 00 [Normal decode])
\tBus: primary=17, secondary=18, subordinate=18, sec-latency=0
\tNUMA node: 0
\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00
\tCapabilities: [200 v1] Access Control Services
\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+
\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
0000:17:01.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0) (prog-if 00 [Normal decode])
\tBus: primary=17, secondary=1a, subordinate=1a, sec-latency=0
\tNUMA node: 0
\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00
\tCapabilities: [200 v1] Access Control Services
\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+
\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-
0000:18:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)
\tSubsystem: NVIDIA Corporation Device [10de:16c1]
\tNUMA node: 0
\tCapabilities: [60] Express (v2) Endpoint, MSI 00
0000:1a:00.0 Ethernet controller [0200]: Mellanox Technologies MT2910 Family [ConnectX-7] [15b3:1021]
\tSubsystem: Mellanox Technologies MT2910 Family [ConnectX-7] [15b3:0041]
\tNUMA node: 0
\tCapabilities: [60] Express (v2) Endpoint, MSI 00
"""


def test_cx7_sample_no_acs_capability():
    devices = acs.parse_lspci(LSPCI["LSPCI-REAL-CX7-FULL"].raw)
    dev = devices["0000:1a:00.0"]
    assert (dev["class"], dev["numa_node"], dev["port_type"], dev["acs"], dev["bus"]) == (
        "Ethernet controller", 0, "Endpoint", None, None)
    assert acs.is_rdma_nic(dev) and not acs.is_bridge(dev)


def test_cx6dx_sample_acs_all_off():
    dev = acs.parse_lspci(LSPCI["LSPCI-REAL-CX6DX-FULL"].raw)["0000:1b:00.0"]
    assert dev["acs"]["offset"] == 0x230
    assert dev["acs"]["ctl_word"] == 0
    assert dev["acs"]["cap"] == dict((name, False) for name in acs.ACS_BITS)


def test_acsctl_enabled_sample_line_srcvalid_only():
    line = LSPCI["LSPCI-REAL-ACSCTL-ENABLED"].raw.splitlines()[1]
    text = ("00:01.0 PCI bridge: Intel Corporation Device 352a (rev 04)\n"
            "\tBus: primary=00, secondary=01, subordinate=01, sec-latency=0\n"
            "\tCapabilities: [220 v1] Access Control Services\n" + line + "\n")
    dev = acs.parse_lspci(text)["0000:00:01.0"]
    assert dev["acs"]["ctl_word"] == 0x0001
    assert acs.bridge_state(dev, acs.REDIRECT_MASK)["redirect"] is False
    assert acs.bridge_state(dev, acs.ALL_MASK)["redirect"] is True


def test_nn_header_and_prog_if_parsed():
    devices = acs.parse_lspci(SWITCH_TREE)
    assert list(devices) == ["0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:17:01.0",
                             "0000:18:00.0", "0000:1a:00.0"]
    sw = devices["0000:17:00.0"]
    assert (sw["class"], sw["class_id"], sw["vendor_id"], sw["device_id"]) == ("PCI bridge", "0604", "1000", "c030")
    assert sw["bus"] == (0x18, 0x18)
    assert sw["acs"]["ctl_word"] == 0x001d          # SrcValid ReqRedir CmpltRedir UpstreamFwd
    assert devices["0000:18:00.0"]["vendor_id"] == "10de" and acs.is_gpu(devices["0000:18:00.0"])


def test_access_denied_marks_unknown():
    text = "0000:17:00.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)\n" \
           "\tBus: primary=17, secondary=18, subordinate=18, sec-latency=0\n\tCapabilities: <access denied>\n"
    dev = acs.parse_lspci(text)["0000:17:00.0"]
    assert acs.bridge_state(dev, acs.REDIRECT_MASK) == {"bdf": "0000:17:00.0", "port_type": None, "acs": None,
                                                        "redirect": None, "ctl": None, "ctl_word": None}
    with pytest.raises(ToolError, match="access denied"):
        acs.plan({"0000:17:00.0": acs.bridge_state(dev, acs.REDIRECT_MASK)}, acs.REDIRECT_MASK)


def test_upstream_from_lspci_bus_numbers_when_sysfs_flat():
    devices = acs.parse_lspci(SWITCH_TREE)
    assert acs.upstream_bridges("0000:18:00.0", devices, chain=["0000:18:00.0"]) == [
        "0000:17:00.0", "0000:16:00.0", "0000:15:01.0"]


def test_upstream_from_sysfs_chain_wins(tmp_path, monkeypatch):
    real = tmp_path / "devices" / "pci0000:15" / "0000:15:01.0" / "0000:16:00.0" / "0000:17:01.0" / "0000:1a:00.0"
    real.mkdir(parents=True)
    links = tmp_path / "bus" / "pci" / "devices"
    links.mkdir(parents=True)
    (links / "0000:1a:00.0").symlink_to(real)
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))
    chain = acs.sysfs_chain("0000:1a:00.0")
    assert chain == ["0000:15:01.0", "0000:16:00.0", "0000:17:01.0", "0000:1a:00.0"]
    assert acs.upstream_bridges("0000:1a:00.0", {}, chain) == ["0000:17:01.0", "0000:16:00.0", "0000:15:01.0"]
    assert acs.sysfs_chain("0000:99:00.0") is None


def test_path_between_stops_at_the_switch():
    gpu = ["0000:17:00.0", "0000:16:00.0", "0000:15:01.0"]
    nic = ["0000:17:01.0", "0000:16:00.0", "0000:15:01.0"]
    assert acs.path_between(gpu, nic) == ["0000:17:00.0", "0000:17:01.0", "0000:16:00.0"]
    assert acs.path_between(["0000:00:01.0"], ["0000:80:01.0"]) == ["0000:00:01.0", "0000:80:01.0"]


def test_audit_pairs_and_plan_values():
    devices = acs.parse_lspci(SWITCH_TREE)
    bridges, ups = acs.audit(devices, ["0000:18:00.0", "0000:1a:00.0"], {}, acs.REDIRECT_MASK)
    assert sorted(bridges) == ["0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:17:01.0"]
    assert [b for b in sorted(bridges) if bridges[b]["redirect"]] == ["0000:15:01.0", "0000:17:00.0"]
    assert bridges["0000:16:00.0"]["acs"] is False and bridges["0000:16:00.0"]["redirect"] is False
    assert acs.pair_paths(devices, ups) == {"0000:18:00.0": {"0000:1a:00.0": ["0000:17:00.0", "0000:17:01.0", "0000:16:00.0"]}}
    steps = acs.plan(bridges, acs.REDIRECT_MASK, "/usr/bin/setpci")
    # 0x001d & ~0x002c = 0x0011: SrcValid and UpstreamFwd kept
    assert steps == [
        {"bdf": "0000:15:01.0", "before": "001d", "after": "0011",
         "argv": ["/usr/bin/setpci", "-s", "0000:15:01.0", "ECAP_ACS+0x6.w=0000:002c"]},
        {"bdf": "0000:17:00.0", "before": "001d", "after": "0011",
         "argv": ["/usr/bin/setpci", "-s", "0000:17:00.0", "ECAP_ACS+0x6.w=0000:002c"]}]
    all_steps = acs.plan(acs.audit(devices, ["0000:18:00.0", "0000:1a:00.0"], {}, acs.ALL_MASK)[0], acs.ALL_MASK)
    assert [(s["bdf"], s["after"], s["argv"][-1]) for s in all_steps] == [
        ("0000:15:01.0", "0000", "ECAP_ACS+0x6.w=0000:007f"),
        ("0000:17:00.0", "0000", "ECAP_ACS+0x6.w=0000:007f"),
        ("0000:17:01.0", "0000", "ECAP_ACS+0x6.w=0000:007f")]


def test_plan_converged_is_empty():
    bridges = {"0000:17:01.0": {"bdf": "0000:17:01.0", "acs": True, "ctl_word": "0011", "redirect": False}}
    assert acs.plan(bridges, acs.REDIRECT_MASK) == []


def test_unknown_endpoint_is_an_error():
    with pytest.raises(ToolError, match="0000:99:00.0 not found"):
        acs.audit(acs.parse_lspci(SWITCH_TREE), ["0000:99:00.0"], {}, acs.REDIRECT_MASK)


def test_apply_step_names_the_bridge():
    step = {"bdf": "0000:17:00.0", "argv": ["setpci", "-s", "0000:17:00.0", "ECAP_ACS+0x6.w=0000:002c"]}

    class FakeModule(object):
        def run_command(self, argv, **kwargs):
            return 1, "0000:17:00.0 ", "setpci: 0000:17:00.0: Instance #0 of Extended capability 000d not found"

    with pytest.raises(ToolError) as exc:
        acs.apply_step(FakeModule(), step)
    assert exc.value.msg.startswith("setpci failed on 0000:17:00.0: ")
    assert "Extended capability 000d not found" in exc.value.msg


def test_predict_bridges_uses_the_planned_words():
    bridges, dummy = acs.audit(acs.parse_lspci(SWITCH_TREE), ["0000:1a:00.0"], {}, acs.REDIRECT_MASK)
    steps = acs.plan(bridges, acs.REDIRECT_MASK, "setpci")
    assert steps
    predicted = acs.predict_bridges(bridges, steps, acs.REDIRECT_MASK)
    assert all(not predicted[st["bdf"]]["redirect"] for st in steps)
    assert acs.plan(predicted, acs.REDIRECT_MASK, "setpci") == []


def test_acs_word_helpers():
    # BDF forms: test_bdf.py (module_utils/common/_bdf is the one normaliser)
    assert acs.word_to_flags(0x0024)["ReqRedir"] and acs.word_to_flags(0x0024)["EgressCtrl"]
    assert acs.flags_to_word(acs.word_to_flags(0x005a)) == 0x005a


# ---------------------------------------------------------------- GDR verdict

CLEAN = [{"bdf": "0000:17:00.0", "acs": True, "redirect": False, "ctl_word": "0011"}]


def test_verdict_good_pxb():
    assert acs.gdr_verdict("PXB", 0, 0, CLEAN, "nvidia_peermem") == {"expected_to_work": True, "reasons": []}
    assert acs.gdr_verdict("PIX", None, 3, [], "dma_buf")["expected_to_work"] is True


def test_verdict_collects_every_blocker():
    path = [{"bdf": "0000:17:00.0", "acs": True, "redirect": True, "ctl_word": "001d"},
            {"bdf": "0000:16:00.0", "acs": None, "redirect": None, "ctl_word": None}]
    verdict = acs.gdr_verdict("SYS", 0, 1, path, None)
    assert verdict["expected_to_work"] is False
    assert verdict["reasons"] == [
        "GPU and NIC are SYS apart (across the inter-socket link), farther than the GDR level PXB: "
        "NCCL stages through host memory",
        "NIC on NUMA node 1, GPU on NUMA node 0",
        "ACS redirect still enabled on bridge 0000:17:00.0 (ACSCtl 001d)",
        "ACS state of bridge 0000:16:00.0 unknown (lspci without root)",
        "no peer memory: nvidia_peermem not loaded and no dma-buf support (got None)"]


@pytest.mark.parametrize("relation,level,ok", [
    ("PHB", "PXB", False), ("PHB", "PHB", True), ("NODE", "PHB", False), ("X", "PXB", True), ("PXB", "PIX", False)])
def test_verdict_gdr_level(relation, level, ok):
    assert acs.gdr_verdict(relation, 0, 0, CLEAN, "nvidia_peermem", gdr_level=level)["expected_to_work"] is ok


def test_verdict_nvlink_and_unknown_relation():
    assert acs.gdr_verdict("NV18", 0, 0, CLEAN, "nvidia_peermem")["reasons"] == [
        "relation NV18 is an NVLink between GPUs, not a GPU-NIC PCIe path"]
    assert acs.gdr_verdict("", 0, 0, CLEAN, "nvidia_peermem")["reasons"] == ["unknown GPU-NIC relation ''"]


def test_verdict_numa_unknown_minus_one_ignored():
    assert acs.gdr_verdict("PXB", -1, 1, CLEAN, "nvidia_peermem")["expected_to_work"] is True


def test_write_targets_stop_at_shared_switch():
    devices = acs.parse_lspci(SWITCH_TREE)
    bridges, ups = acs.audit(devices, ["0000:18:00.0", "0000:1a:00.0"], {}, acs.REDIRECT_MASK)
    targets = acs.write_targets(bridges, acs.rail_paths(devices, ups), devices)
    assert sorted(targets) == ["0000:16:00.0", "0000:17:00.0", "0000:17:01.0"]
    assert [s["bdf"] for s in acs.plan(targets, acs.REDIRECT_MASK)] == ["0000:17:00.0"]
    # only a GPU listed: no pair, nothing is a target (never the root port 15:01.0)
    bridges, ups = acs.audit(devices, ["0000:18:00.0"], {}, acs.REDIRECT_MASK)
    assert acs.rail_paths(devices, ups) == {}
    assert acs.write_targets(bridges, acs.rail_paths(devices, ups), devices) == {}
