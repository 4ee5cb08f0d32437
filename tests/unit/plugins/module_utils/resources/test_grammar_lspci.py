# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the lspci -vvv grammar (pciutils lspci.c show_device, ls-caps.c
cap_express_link/link_speed/link_compare, ls-ecaps.c cap_acs; versions 3.5-3.14): outputs
printed the way the C code prints them read back; near-misses are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _pcie_acs

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings
FAST = settings(max_examples=40, deadline=None)

SPEEDS = ["2.5GT/s", "5GT/s", "8GT/s", "16GT/s", "32GT/s", "64GT/s", "128GT/s"]
ACS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
PORTS = {"ep": "Endpoint", "rp": "Root Port (Slot+)", "up": "Upstream Port", "dp": "Downstream Port (Slot-)",
         "leg": "Legacy Endpoint"}


def _note(version, port, sta, cap):
    """ls-caps.c link_compare of each version."""
    if version == "3.5":
        return None
    if version == "3.7":
        return "ok" if sta == cap else ("downgraded" if sta < cap else "strange")
    if sta > cap:
        return "overdriven"
    if sta == cap or port in ("rp", "dp"):
        return None
    return "downgraded"


@st.composite
def functions(draw):
    bus = draw(st.integers(0, 255))
    dev = draw(st.integers(0, 31))
    fn = draw(st.integers(0, 7))
    port = draw(st.sampled_from(sorted(PORTS)))
    cap_s, sta_s = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    cap_w, sta_w = draw(st.sampled_from([1, 2, 4, 8, 16])), draw(st.sampled_from([1, 2, 4, 8, 16]))
    acs = draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=7, max_size=7)))
    numa = draw(st.one_of(st.none(), st.integers(0, 7)))
    vpd = draw(st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40))
    return dict(bus=bus, dev=dev, fn=fn, port=port, cap=(cap_s, cap_w), sta=(sta_s, sta_w), acs=acs, numa=numa, vpd=vpd)


def _print(fn, version, domain, tabs):
    """One function the way lspci -vvv prints it."""
    slot = "%02x:%02x.%d" % (fn["bus"], fn["dev"], fn["fn"])
    out = ["%s%s Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]" % ("0000:" if domain else "", slot),
           "\tSubsystem: Mellanox Technologies Device 0041"]
    if fn["numa"] is not None:
        out.append("\tNUMA node: %d" % fn["numa"])
    out.append("\tCapabilities: [60] Express (v2) %s, MSI 00" % PORTS[fn["port"]])
    cap_s, cap_w = fn["cap"]
    sta_s, sta_w = fn["sta"]
    out.append("\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM not supported" % (SPEEDS[cap_s], cap_w))
    out.append("\t\t\tClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+")
    flags = "TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-"
    if version == "3.5":
        out.append("\t\tLnkSta:\tSpeed %s, Width x%d, %s" % (SPEEDS[sta_s], sta_w, flags))
    else:
        sn, wn = _note(version, fn["port"], sta_s, cap_s), _note(version, fn["port"], sta_w, cap_w)
        out.append("\t\tLnkSta:\tSpeed %s%s, Width x%d%s" % (SPEEDS[sta_s], " (%s)" % sn if sn else "", sta_w,
                                                             " (%s)" % wn if wn else ""))
        out.append("\t\t\t" + flags)
    out.append("\tCapabilities: [48] Vital Product Data")
    out.append("\t\tProduct Name: " + fn["vpd"])
    if fn["acs"] is not None:
        out.append("\tCapabilities: [230 v1] Access Control Services")
        out.append("\t\tACSCap:\t" + " ".join(n + "+" for n in ACS))
        out.append("\t\tACSCtl:\t" + " ".join(n + ("+" if on else "-") for n, on in zip(ACS, fn["acs"])))
    out.append("\tKernel driver in use: mlx5_core")
    text = "\n".join(out) + "\n\n"
    return text if tabs else text.expandtabs(8)


def _bdf(fn):
    return "0000:%02x:%02x.%d" % (fn["bus"], fn["dev"], fn["fn"])


@FAST
@given(st.lists(functions(), min_size=1, max_size=4, unique_by=_bdf), st.sampled_from(["3.5", "3.7", "3.8"]),
       st.booleans(), st.booleans())
def test_printed_functions_read_back(fns, version, domain, tabs):
    devices = _pcie_acs.parse_lspci("".join(_print(fn, version, domain, tabs) for fn in fns))
    assert list(devices) == [_bdf(fn) for fn in fns]
    for fn in fns:
        device = devices[_bdf(fn)]
        assert device["numa_node"] == fn["numa"]
        assert device["port_type"] == PORTS[fn["port"]].split(" (")[0]
        link = device["link"]
        speeds = [float(s[:-4]) for s in SPEEDS]
        assert (link["cap_speed"], link["cap_width"]) == (speeds[fn["cap"][0]], fn["cap"][1])
        assert (link["speed"], link["width"]) == (speeds[fn["sta"][0]], fn["sta"][1])
        assert link["downgraded"] == (fn["sta"][0] < fn["cap"][0] or fn["sta"][1] < fn["cap"][1])
        if fn["acs"] is None:
            assert device["acs"] is None
        else:
            assert device["acs"]["ctl_word"] == sum(1 << i for i, on in enumerate(fn["acs"]) if on)


NEAR_MISSES = [
    ("\t\tLnkSta:\tSpeed 12GT/s (ok), Width x16 (ok)", "LnkSta"),           # no such link_speed()
    ("\t\tLnkSta:\tSpeed 16GT/s (slow), Width x16 (ok)", "LnkSta"),         # no such link_compare() note
    ("\t\tLnkSta:\tSpeed 16GT/s (ok), Width x1", "LnkSta"),                 # half of it cut: ok, then the width
    ("\t\tLnkSta:\tSpeed 16GT/s (ok), Width x", "LnkSta"),                  # truncated number
    ("\t\tLnkCap:\tSpeed 16GT/s, Width x16", "LnkCap"),                     # LnkCap always starts with Port #
    ("\tCapabilities: [230 v1] Access Control Services\n\t\tACSCtl:\tSrcValid- TransBlk-", "ACS"),
    ("\tCapabilities: [230 v1] Access Control Services\n\t\tACSCtl:\tSrcValid? TransBlk- ReqRedir- CmpltRedir- "
     "UpstreamFwd- EgressCtrl- DirectTrans-", "ACS"),
    ("Speed 16GT/s at column 0", "not a PCI function header"),
    ("1a:00.0", "not a PCI function header"),
]


@pytest.mark.parametrize("line, words", NEAR_MISSES)
def test_near_misses_are_refused(line, words):
    text = "1a:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n" \
           "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n" + line + "\n"
    with pytest.raises(ValueError, match=words):
        _pcie_acs.parse_lspci(text)


@pytest.mark.parametrize("text", [
    "", "\n\n",
    "\tSubsystem: Mellanox Technologies Device 0041\n",                               # indented, no header
    "        GPU0    GPU1    CPU Affinity\nGPU0     X      NV18    0-47\n",           # nvidia-smi topo -m
    "CA 'mlx5_0'\n\tCA type: MT4129\n",                                              # ibstat
    "-[0000:00]-+-00.0  Intel Corporation Device 09a2\n",                            # lspci -t
])
def test_other_tools_output_is_refused(text):
    with pytest.raises(ValueError):
        _pcie_acs.parse_lspci(text)


def test_indented_line_before_the_first_header_is_refused():
    with pytest.raises(ValueError, match="before the first PCI function header"):
        _pcie_acs.parse_lspci("\tNUMA node: 0\n1a:00.0 Ethernet controller: Mellanox Technologies Device 1021\n")


def test_own_messages_and_hex_dumps_are_skipped():
    text = ("pcilib: sysfs_read_vpd: read failed: No such device\n"
            "1a:00.0 Ethernet controller: Mellanox Technologies Device 1021\n"
            "\tNUMA node: 1\n"
            "00: b3 15 21 10 06 04 10 00 00 00 00 02 08 00 00 00\n\n")
    assert _pcie_acs.parse_lspci(text)["0000:1a:00.0"]["numa_node"] == 1
