# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the grammar of ``lldptool -t`` (intel/openlldp lldp_8021qaz_clif.c: the PFC,
ETS-CFG, ETS-REC printers, and the APP printer before and after 218a515 of 2018-11): dumps printed
the way the C code prints them read back; near-misses are refused naming the line."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _lldptool as L

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings

TSA = ("strict", "cbshaper", "ets", "vendor", "unknown")
LABEL = {1: "Ethertype", 2: "{S}TCP Port", 3: "UDP or DCCP Port", 4: "TCP/STCP/UDP/DCCP Port"}


def print_pfc(willing, mbc, cap, mask):
    body = " Willing: %s\n\t MACsec Bypass Capable: %s\n\t PFC capable traffic classes: %i\n\t PFC enabled: " % (
        "yes" if willing else "no", "yes" if mbc else "no", cap)
    prios = "".join("%i " % p for p in range(8) if mask >> p & 1)
    return body + (prios or "none") + "\n"


def print_ets(cfg, willing, up2tc, tcbw, tsa):
    out = ""
    if cfg:
        out += " Willing: %s\n\t CBS: not supported\n\t MAX_TCS: 8\n\t PRIO_MAP: " % ("yes" if willing else "no")
    else:
        out += " PRIO_MAP:  "
    out += "".join("%i:%i " % (i, up2tc[i]) for i in range(8)) + "\n\t TC Bandwidth: "
    out += "".join("%i%% " % b for b in tcbw) + "\n\t TSA_MAP: " + "".join("%i:%s " % (i, tsa[i]) for i in range(8)) + "\n"
    return out


def print_app(apps, new):
    """apps: [(prio, sel, proto)] in table order."""
    out = ""
    if new:
        for index, (prio, sel, proto) in enumerate(apps):
            if sel == 5:
                continue
            out += "App# %3i \t Prio %1i \t Sel %1i \t P-ID" % (index, prio, sel)
            out += "\t %s: %s\n" % (LABEL.get(sel, "Reserved Port"), "0x%04x" % proto if sel == 1 else "%i" % proto)
        for prio in range(8):
            dscps = [proto for (p, sel, proto) in apps if sel == 5 and p == prio]
            if dscps:
                out += "Prio:%i \t dscp: " % prio + "".join(" %02i," % d for d in dscps) + "\b \n"
        return out
    for index, (prio, sel, proto) in enumerate(apps):
        if index:
            out += "\t"
        out += "App#%i:\n\t Priority: %i\n\t Sel: %i\n" % (index, prio, sel)
        out += "\t %s: %s\n\n" % (LABEL.get(sel, "Reserved Port"), "0x%04x" % proto if sel == 1 else "%i" % proto)
    return out


app_entries = st.tuples(st.integers(0, 7), st.sampled_from([1, 2, 3, 4, 5]), st.integers(0, 0xFFFF)).map(
    lambda e: (e[0], e[1], e[2] % 64 if e[1] == 5 else e[2]))


@st.composite
def dumps(draw):
    text = "Chassis ID TLV\n\tMAC: 00:1b:21:00:00:01\nPort ID TLV\n\tIfname: swp%d\nTime to Live TLV\n\t120\n" % draw(st.integers(1, 64))
    want = {}
    if draw(st.booleans()):
        w, up2tc = draw(st.booleans()), draw(st.lists(st.integers(0, 15), min_size=8, max_size=8))
        tcbw, tsa = draw(st.lists(st.integers(0, 100), min_size=8, max_size=8)), draw(st.lists(st.sampled_from(TSA), min_size=8, max_size=8))
        text += "IEEE 8021QAZ ETS Configuration TLV\n\t" + print_ets(True, w, up2tc, tcbw, tsa)
        want["ets_cfg"] = {"willing": w, "up2tc": up2tc, "tcbw": tcbw, "tsa": tsa}
    if draw(st.booleans()):
        up2tc, tcbw = draw(st.lists(st.integers(0, 15), min_size=8, max_size=8)), draw(st.lists(st.integers(0, 100), min_size=8, max_size=8))
        tsa = draw(st.lists(st.sampled_from(TSA), min_size=8, max_size=8))
        text += "IEEE 8021QAZ ETS Recommendation TLV\n\t" + print_ets(False, None, up2tc, tcbw, tsa)
        want["ets_rec"] = {"up2tc": up2tc, "tcbw": tcbw, "tsa": tsa}
    if draw(st.booleans()):
        w, mask = draw(st.booleans()), draw(st.integers(0, 255))
        text += "IEEE 8021QAZ PFC TLV\n\t" + print_pfc(w, draw(st.booleans()), draw(st.integers(0, 8)), mask)
        want["pfc"] = {"willing": w, "enabled": [p for p in range(8) if mask >> p & 1]}
    if draw(st.booleans()):
        apps = draw(st.lists(app_entries, max_size=6, unique_by=lambda e: (e[1], e[2])))
        text += "IEEE 8021QAZ APP TLV\n\t" + print_app(apps, draw(st.booleans()))
        want["app"] = sorted(({"priority": p, "selector": s, "protocol": x} for p, s, x in apps),
                             key=lambda a: (a["selector"], a["protocol"], a["priority"]))
    text += "End of LLDPDU TLV\n"
    if draw(st.booleans()):
        text = text.replace("\t", "        ")         # a paste
    return text, want


@settings(max_examples=40, deadline=None)
@given(dumps())
def test_printed_dump_reads_back(case):
    text, want = case
    got = L.parse_tlvs(text)
    for key in ("pfc", "ets_cfg", "ets_rec", "app"):
        assert got[key] == want.get(key), key
    assert got["dcbx"] == ("ieee" if want else None)
    assert L.parse_identity(text)["port_id_subtype"] == "Ifname"


@settings(max_examples=40, deadline=None)
@given(dumps(), st.sampled_from([
    ("\t PFC enabled: ", "\t PFC enable: "), ("\t MAX_TCS: 8", "\t MAX_TCS: 9"), ("\t CBS: not supported", "\t CBS: maybe"),
    ("\t MACsec Bypass Capable: ", "\t Priority Bypass: "), (":strict ", ":wrr "), ("7:", "7"), (" Willing: no", " Willing: 0"),
    ("Sel 3", "Sel x"), ("App#", "Apq#"), (" Priority: ", " Prio: "), ("IEEE 8021QAZ APP TLV", "IEEE 8021QAZ APP TL"),
]))
def test_near_miss_is_refused_naming_the_line(case, edit):
    text, _want = case
    old, new = edit
    hypothesis.assume(old in text)
    bad = text.replace(old, new, 1)
    with pytest.raises(ValueError) as err:
        L.parse_tlvs(bad)
    line = [b for a, b in zip(text.splitlines(), bad.splitlines()) if a != b][0]     # the edited line
    assert L._clean(line)[:20] in str(err.value)


@pytest.mark.parametrize("text", [
    "DCBX mode: OS controlled\nPriority trust state: dscp\n",
    "Device not found or inactive \n",
    "connect: Connection refused\nFailed to connect to lldpad - clif_open: Invalid argument\n",
    "adminStatus=rxtx\n",
])
def test_other_output_is_refused(text):
    with pytest.raises(ValueError):
        L.parse_tlvs(text)


def test_empty_output_is_no_tlv_as_lldptool_prints_for_a_tlv_not_sent():
    assert L.parse_tlvs("") == {"pfc": None, "ets_cfg": None, "ets_rec": None, "app": None, "dcbx": None}
