# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the grammar of mlnx_qos's report (Mellanox/mlnx-tools pretty_print(),
every release 2017-06 .. HEAD): outputs printed the way the tool prints them are read back;
near-misses (a line the tool cannot print, a bad TSA, a cut number, another tool's text) are refused."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _mlnx_qos as Q

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings

# release variants: (trust line, dcbx+cable, buffer line suffix or None, default priority, sorted TCs, blank after PFC)
RELEASES = {
    "80fb22e": dict(trust=None, dcbx=False, buffer=None, deflt=False, ordered=True, blank=True),
    "5c00758": dict(trust="mode", dcbx=False, buffer=None, deflt=False, ordered=True, blank=True),
    "d1b0709": dict(trust="state", dcbx=True, buffer=None, deflt=False, ordered=False, blank=False),
    "1259c00": dict(trust="state", dcbx=True, buffer="", deflt=False, ordered=False, blank=False),
    "a60252a": dict(trust="state", dcbx=True, buffer="total_size", deflt=True, ordered=False, blank=False),
    "b8c08c5": dict(trust="state", dcbx=True, buffer="max_buffer_size", deflt=True, ordered=True, blank=False),
    "374d9b5": dict(trust="state", dcbx=True, buffer="max_buffer_size", deflt=False, ordered=True, blank=False),
}


@st.composite
def reports(draw):
    rel = RELEASES[draw(st.sampled_from(sorted(RELEASES)))]
    prio_tc = draw(st.lists(st.integers(0, 7), min_size=8, max_size=8))
    tsa = draw(st.lists(st.sampled_from(["ets", "strict", "vendor", "unknown"]), min_size=8, max_size=8))
    bw = [draw(st.integers(0, 100)) if t == "ets" else 0 for t in tsa]
    rate = draw(st.one_of(st.none(), st.lists(st.sampled_from([0, 1000000, 25000000, 100000000]), min_size=8, max_size=8)))
    pfc = draw(st.integers(0, 255))
    trust = draw(st.sampled_from(["pcp", "dscp"])) if rel["trust"] else None
    dscp = dict((d, draw(st.integers(0, 7))) for d in draw(st.permutations(list(range(64))))) if trust == "dscp" else None
    sizes = draw(st.lists(st.integers(0, 524160), min_size=8, max_size=8))
    p2b = draw(st.lists(st.integers(0, 7), min_size=8, max_size=8))
    printall = draw(st.booleans())
    cable = draw(st.integers(0, 65535))
    spaces = draw(st.booleans())                      # a paste: TABs turned to 8 spaces
    lines = []
    if rate is None:
        lines.append("Rate limit is not supported on your system!")
    if rel["trust"] == "mode":
        lines.append("Priority trust mode: " + trust)
    if rel["dcbx"]:
        lines.append("DCBX mode: " + draw(st.sampled_from(["OS controlled", "Firmware controlled"])))
    if rel["trust"] == "state":
        lines.append("Priority trust state: " + trust)
        if trust == "dscp":
            lines.append("dscp2prio mapping:")
            for prio in range(8):
                vals = "".join("%02d," % d for d in dscp if dscp[d] == prio)
                while len(vals) > 24:
                    lines.append("\tprio:%d dscp:%s" % (prio, vals[:24]))
                    vals = vals[24:]
                if vals:
                    lines.append("\tprio:%d dscp:%s" % (prio, vals))
        if rel["deflt"]:
            lines.append("default priority:")
    if rel["buffer"] is not None:
        lines.append("Receive buffer size (bytes): " + "".join("%d," % b for b in sizes)
                     + ("%s=%d" % (rel["buffer"], 1048576) if rel["buffer"] else ""))
    if rel["dcbx"]:
        lines.append("Cable len: %d" % cable)
    lines += ["PFC configuration:", "\tpriority    0   1   2   3   4   5   6   7",
              "\tenabled     " + "".join("%1d   " % (pfc >> p & 1) for p in range(8))]
    if rel["buffer"] is not None:
        lines.append("\tbuffer      " + "".join("%1d   " % b for b in p2b))
    if rel["blank"]:
        lines.append("")
    order = []
    for prio in range(8):
        if prio_tc[prio] not in order:
            order.append(prio_tc[prio])
    if printall:
        order = list(range(8))      # -a: tc2up.setdefault(0..7) before the priorities are added
    if rel["ordered"]:
        order = sorted(order)
    for tc in order:
        head = "" if rate is None else "tc: %d ratelimit: %s, tsa: " % (tc, "%.1f Gbps" % (rate[tc] / 1000.0 / 1000) if rate[tc] else "unlimited")
        lines.append(head + ("ets, bw: %d%%" % bw[tc] if tsa[tc] == "ets" else tsa[tc]))
        lines += ["\t priority:  %d" % p for p in range(8) if prio_tc[p] == tc]
    text = "\n".join(lines) + "\n"
    if spaces:
        text = text.replace("\t", "        ")
    if trust == "dscp" and rel["trust"] != "state":
        dscp = {}       # 5c00758 prints "Priority trust mode: dscp" and no dscp2prio block: nothing to read
    want = {"prio_tc": prio_tc, "pfc": [p for p in range(8) if pfc >> p & 1], "trust": trust, "dscp2prio": dscp,
            "buffer_size": sizes if rel["buffer"] is not None else None, "printed": order, "tsa": tsa, "bw": bw,
            "rate": rate, "cable": cable if rel["dcbx"] else None,
            "p2b": p2b if rel["buffer"] is not None else None}
    return text, want


@settings(max_examples=40, deadline=None)
@given(reports())
def test_printed_report_reads_back(case):
    text, want = case
    got = Q.parse_report(text)
    assert got["pfc"] == want["pfc"]
    assert got["trust"] == want["trust"]
    assert got["cable_len"] == want["cable"]
    assert got["buffer_size"] == want["buffer_size"]
    assert got["prio2buffer"] == want["p2b"]
    assert got["dscp2prio"] == (want["dscp2prio"] if want["trust"] == "dscp" else None)
    assert got["info"]["unparsed"] == []
    if want["rate"] is None and len(want["printed"]) < 8:
        assert got["prio_tc"] is None       # bare headers, not all TCs: which TC is which is unknown
        return
    assert got["prio_tc"] == want["prio_tc"]
    for tc in want["printed"]:
        assert got["tsa"][tc] == want["tsa"][tc]
        assert got["tcbw"][tc] == want["bw"][tc]
        if want["rate"] is not None:
            assert got["ratelimit"][tc] == round(want["rate"][tc] / 1e6, 1)


JUNK = ["tc: 3 ratelimit: unlimited, tsa: wrr", "Priority trust state", "Cable length: 7", "PFC enabled: 3",
        "IEEE 8021QAZ PFC TLV", "mlx5_0  1  0  fe80::1  v2  eth0", "buffer 0 0 0", "\tprio:3 dscp:2x,"]


@settings(max_examples=40, deadline=None)
@given(reports(), st.sampled_from(JUNK), st.integers(0, 60))
def test_a_line_the_tool_cannot_print_is_refused_by_name(case, junk, where):
    text, _want = case
    lines = text.splitlines()
    where = min(where, len(lines))
    lines.insert(where, junk)
    with pytest.raises(ValueError) as err:
        Q.parse_report("\n".join(lines) + "\n")
    assert junk.strip() in str(err.value) or "no QoS report" in str(err.value)


@settings(max_examples=40, deadline=None)
@given(reports(), st.sampled_from(["Cable len: ", "Receive buffer size (bytes): 1,2,x,", "tc: 0 ratelimit: 1.x Gbps, tsa: vendor",
                                   "\tenabled     0   0   1", "tc: 0 ratelimit: unlimited, tsa: ets, bw: %"]))
def test_a_cut_or_garbled_value_is_refused(case, bad):
    text, _want = case
    with pytest.raises(ValueError):
        Q.parse_report(text.replace("PFC configuration:\n", "PFC configuration:\n" + bad + "\n", 1))


@pytest.mark.parametrize("text", [
    "", "\n\n", "IEEE 8021QAZ PFC TLV\n\t Willing: no\n\t PFC enabled: 3 \n",
    "DEV\tPORT\tINDEX\tGID\n---\nmlx5_0\t1\t0\tfe80::1\tv1\teth0\n", "DCBX mode: OS controlled\n",
])
def test_other_tools_output_is_refused(text):
    with pytest.raises(ValueError):
        Q.parse_report(text)
