# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the grammar of rdma-core infiniband-diags/sminfo.c (the one printf of main) and
saquery.c (SMInfoRecord and 'saquery -s' PortInfoRecord dumps): answers read back through _sm_info.parse;
lines sminfo cannot print are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _sm_info

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
FAST = hypothesis.settings(max_examples=40, deadline=None)

STATESTR = ["SMINFO_NOTACT", "SMINFO_DISCOVER", "SMINFO_STANDBY", "SMINFO_MASTER"]
NAMES = {0: "not_active", 1: "discovering", 2: "standby", 3: "master"}
sm_st = st.fixed_dictionaries({
    "lid": st.integers(1, 0xbfff),
    "guid": st.integers(0, 2 ** 64 - 1),
    "act": st.integers(0, 2 ** 32 - 1),          # %u
    "prio": st.integers(0, 15),                  # 4-bit field
    "state": st.integers(0, 15),                 # 4-bit field; STATESTR gives '???' from 4 up
})
sms_st = st.lists(sm_st, min_size=1, max_size=4, unique_by=lambda sm: sm["lid"])


def _sminfo(sm):
    return "sminfo: sm lid %d sm guid 0x%x, activity count %d priority %d state %d %s\n" % (
        sm["lid"], sm["guid"], sm["act"], sm["prio"], sm["state"], STATESTR[sm["state"]] if sm["state"] < 4 else "???")


def _dots(key, value, width):
    return "\t\t%s%s\n" % (key.ljust(width, "."), value)


def _smir(sm):
    """One SMInfoRecord as saquery dumps it (dot leaders to 22 columns, GUID and SM_Key zero padded)."""
    return ("SMInfoRecord dump:\n\t\tRID\n" + _dots("LID", sm["lid"], 22) + "\t\tSMInfo dump:\n" +
            _dots("GUID", "0x%016x" % sm["guid"], 22) + _dots("SM_Key", "0x%016x" % 0, 22) +
            _dots("ActCount", sm["act"], 22) + _dots("Priority", sm["prio"], 22) + _dots("SMState", sm["state"], 22))


def _check(entry, sm, source):
    assert entry == {"lid": sm["lid"], "guid": "0x%016x" % sm["guid"], "priority": sm["prio"],
                     "state": NAMES.get(sm["state"], "unknown"), "state_id": sm["state"], "activity_count": sm["act"],
                     "source": source}


@FAST
@hypothesis.given(sms_st, st.booleans())
def test_sminfo_answers_read_back(sms, captured):
    text = "".join(("$ sminfo %d\n%s[rc=0]\n" % (sm["lid"], _sminfo(sm))) if captured else _sminfo(sm) for sm in sms)
    facts = _sm_info.parse(text)
    assert [e["lid"] for e in facts["sm_ports"]] == sorted(sm["lid"] for sm in sms)
    by_lid = dict((e["lid"], e) for e in facts["sm_ports"])
    for sm in sms:
        _check(by_lid[sm["lid"]], sm, "sminfo")
    assert facts["master_count"] == len([sm for sm in sms if sm["state"] == 3])
    assert facts["standby_count"] == len([sm for sm in sms if sm["state"] == 2])
    assert facts["errors"] == []


@FAST
@hypothesis.given(sms_st, st.lists(sm_st, max_size=3))
def test_smir_records_read_back_and_live_answers_win(records, live):
    text = "$ saquery SMIR\n" + "".join(_smir(sm) for sm in records) + "[rc=0]\n"
    text += "".join("$ sminfo %d\n%s[rc=0]\n" % (sm["lid"], _sminfo(sm)) for sm in live)
    facts = _sm_info.parse(text)
    want = dict((sm["lid"], (sm, "saquery_smir")) for sm in records)
    want.update((sm["lid"], (sm, "sminfo")) for sm in live)          # the last answer for a LID wins
    assert [e["lid"] for e in facts["sm_ports"]] == sorted(want)
    for entry in facts["sm_ports"]:
        _check(entry, *want[entry["lid"]])


port_st = st.fixed_dictionaries({"lid": st.integers(1, 0xbfff), "port": st.integers(0, 64),
                                 "master": st.integers(1, 0xbfff), "cap": st.integers(0, 2 ** 32 - 1)})


@FAST
@hypothesis.given(st.lists(port_st, min_size=1, max_size=3), st.lists(port_st, max_size=3))
def test_issm_ports_read_back(enabled, disabled):
    """The SA that answers is the master SM's: its own port is always in the IsSM list."""
    def block(port):
        return ("PortInfoRecord dump:\n" + _dots("EndPortLid", port["lid"], 24) + _dots("PortNum", port["port"], 24) +
                _dots("base_lid", port["lid"], 24) + _dots("master_sm_base_lid", port["master"], 24) +
                _dots("capability_mask", "0x%X" % port["cap"], 24))
    text = ("$ saquery -s\nIsSM ports\n" + "".join(block(p) for p in enabled) + "\nIsSMdisabled ports\n" +
            "".join(block(p) for p in disabled) + "[rc=0]\n")
    got = _sm_info.parse(text)["issm_ports"]
    want = [{"lid": p["lid"], "port": p["port"], "master_sm_lid": p["master"], "capability_mask": "0x%08x" % p["cap"],
             "sm_disabled": flag} for ports, flag in ((enabled, False), (disabled, True)) for p in ports]
    assert got == sorted(want, key=lambda p: (p["lid"], p["port"]))


@FAST
@hypothesis.given(st.integers(1, 0xbfff))
def test_failed_query_is_an_error_of_its_lid(lid):
    text = ("$ sminfo %d\nsminfo: iberror: failed: query\n[rc=255]\n# stderr:\n"
            "ibwarn: [21344] mad_rpc: _do_madrpc failed; dport (Lid %d)\n" % (lid, lid))
    facts = _sm_info.parse(text)
    assert facts["sm_ports"] == [] and [e["lid"] for e in facts["errors"]] == [lid]


LINE = "sminfo: sm lid 1 sm guid 0x100001, activity count 118 priority 10 state 3 SMINFO_MASTER\n"
NEAR_MISSES = [
    LINE.replace(" state 3 SMINFO_MASTER", " state"),                    # truncated
    LINE.replace("priority 10 ", "priority 10 \n"),                      # wrapped by a mail client
    LINE.replace("0x100001", "0x"),                                       # no hex digits
    LINE.replace("0x100001", "0x10000100000000001"),                      # 17 hex digits
    LINE.replace("0x100001", "0xe89e4903003xxxxx"),                       # redacted
    LINE.replace("lid 1 ", "lid 0x1 "),                                   # %d, never hex
    LINE.replace("lid 1 ", "lid -1 "),
    LINE.replace("count 118", "count 1.5"),
    "$ saquery SMIR\n" + _smir({"lid": 1, "guid": 1, "act": 1, "prio": 1, "state": 3}).replace(
        "0x0000000000000001", "0x00000000000000zz", 1) + "[rc=0]\n",      # a record GUID that is not hex
    "CA 'mlx5_0'\n\tCA type: MT4129\n",                                   # ibstat
    "mlx5_0 port 1 ==> ib0 (Up)\n",                                       # ibdev2netdev
    "",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_refused(text):
    with pytest.raises(ValueError):
        _sm_info.parse(text)
