# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.ib_fabric: the iblinkinfo and ibqueryerrors parsers on real samples
(samples iblinkinfo.txt, ibqueryerrors.txt), property tests from iblinkinfo's format strings,
near-miss refusals, the checks, and main() in parsed state."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _ib_fabric
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibqueryerrors, _iblinkinfo
from ansible_collections.rdma.fabric.plugins.modules import ib_fabric
from ansible_collections.rdma.fabric.tests.unit import helpers, samples

IBL = samples.load("iblinkinfo.txt")
IBQ = samples.load("ibqueryerrors.txt")
PLAN = [{"hca": "node%d mlx5_%d" % (node, rail), "leaf": "leaf-r%d" % rail, "rail": rail}
        for node in range(1, 5) for rail in (0, 1)]


def _public(sample_id):
    """A public sample without the pasted shell prompt line."""
    return "\n".join(l for l in IBL[sample_id].raw.splitlines() if not l.startswith("[root@"))


def _sim(sample_id, table=IBL):
    sample = table[sample_id]
    text = sample.section("stdout")
    err = sample.section("stderr")
    return text + ("# stderr:\n" + err if err else "")


# --- iblinkinfo: real samples -------------------------------------------------------------

def test_public_edr_switch_and_cas():
    parsed = _iblinkinfo.parse(_public("IBLI-PUB-linpack-EDR-SB7700"))
    ports = parsed["ports"]
    assert parsed["layout"] == "default" and len(ports) == 20
    cas = [p for p in ports if p["node_type"] == "ca"]
    assert [(p["node"], p["port_guid"], p["lid"], p["peer"]["port"]) for p in cas] == [
        ("n02 HCA-1", "0xec0d9a03003d62be", 4, 17), ("mgt mlx5_0", "0x248a070300928186", 3, 36)]
    switch = [p for p in ports if p["node_type"] == "switch"]
    assert len(switch) == 18 and switch[0]["node_guid"] == "0x506b4b0300820910"
    assert switch[0]["node"] == "MF0;SB7700:MSB7700/U1" and switch[0]["state"] == "Down" and switch[0]["peer"] is None
    up = switch[-1]
    assert (up["width"], up["speed"], up["speed_name"], up["state"], up["phys_state"]) == (
        "4X", "25.78125 Gbps", "EDR", "Active", "LinkUp")
    assert up["peer"] == {"port_guid": None, "lid": 1, "port": 1, "ext_port": None, "node": "n01 HCA-1",
                          "could_be_width": None, "could_be_speed": None}


@pytest.mark.parametrize("sample_id, speed, count", [
    ("IBLI-PUB-legoos-QDR-IS5035", "QDR", 3),
    ("IBLI-PUB-archwiki-DDR-b2b", "DDR", 2),
    ("IBLI-PUB-sharp-HDR-Quantum-CAs", "HDR", 4),
    ("IBLI-PUB-sharp-HDR-Quantum-switch", "HDR", 12),
])
def test_public_speeds(sample_id, speed, count):
    ports = _iblinkinfo.parse(_public(sample_id))["ports"]
    assert len(ports) == count
    assert set(p["speed_name"] for p in ports if p["state"] == "Active") == set([speed])


def test_public_back_to_back_link_once():
    ports = _iblinkinfo.parse(_public("IBLI-PUB-archwiki-DDR-b2b"))["ports"]
    links = _iblinkinfo.links(ports)
    assert len(links) == 1   # the CA-CA link, seen from both ends, counted once
    assert _ib_fabric.link_records(ports, "h", "4X", "EDR")[0]["check"] == "ib.link_speed"


def test_sim_default_and_line_agree():
    default = _iblinkinfo.parse(_sim("IBLI-SIM-cabling-default"))
    line = _iblinkinfo.parse(_sim("IBLI-SIM-cabling-line"))
    assert (default["layout"], line["layout"]) == ("default", "line")

    def key(p):
        return (p["node"], p["port"], p["width"], p["speed_name"], p["state"], p["phys_state"],
                p["peer"] and (p["peer"]["node"], p["peer"]["port"]))
    assert sorted(map(key, default["ports"]), key=repr) == sorted(map(key, list(line["ports"])), key=repr)
    # --line has no node type: switches are inferred from one GUID over several ports.
    assert set(p["node_type"] for p in line["ports"]) == set(["switch", "ca"])
    assert all(p["peer"]["port_guid"] for p in line["ports"] if p["peer"])


def test_sim_checks_name_every_fault():
    parsed = _iblinkinfo.parse(_sim("IBLI-SIM-cabling-line"))
    records = _ib_fabric.link_records(parsed["ports"], "sm1", "4X", "HDR")
    assert [(r["check"], r["object"], r["actual"]) for r in records] == [
        ("ib.link_speed", "leaf-r0/2 peer node2 mlx5_0/1", "EDR (25.78125 Gbps)"),
        ("ib.link_width", "leaf-r1/4 peer node4 mlx5_1/1", "1X"),
    ]
    assert "could be 53.125 Gbps" in records[0]["diagnosis"]
    status, cab = _ib_fabric.cabling(parsed["ports"], _ib_fabric.check_cabling(PLAN), "sm1")
    assert len(cab) == 1 and cab[0]["object"] == "rail1/node3 mlx5_1 port 1"
    assert (cab[0]["switch"], cab[0]["switch_port"], cab[0]["expected_leaf"], cab[0]["actual"]) == (
        "leaf-r0", 5, "leaf-r1", "leaf-r0 port 5")
    assert sum(1 for row in status if row["ok"]) == 7


def test_sim_duplicate_guid():
    parsed = _iblinkinfo.parse(_sim("IBLI-SIM-cabling-line-dupguid"))
    assert parsed["duplicates"] == [{"kind": "port", "guid": "0x0000000000100001"}]
    dups = _ib_fabric.duplicate_guids(parsed["ports"], parsed["duplicates"])
    assert dups[0]["guid"] == "0x0000000000100001"
    assert "leaf-r1/4 (peer not available)" in dups[0]["seen_at"]
    # Without libibnetdisc's message (a paste of stdout only) the peer-side view finds nothing
    # here: the merged port is seen once. The message is the evidence.
    assert _ib_fabric.duplicate_guids(parsed["ports"]) == []


def test_duplicate_from_two_switch_ports():
    line = ('0x0000000000200001 "                        leaf-a"      3    %d[  ] ==( 4X        53.125 Gbps Active/  '
            'LinkUp)==>  0x0000000000100001      1    1[  ] "%s" ( )')
    text = "\n".join([line % (1, "n1 mlx5_0"), line % (2, "n1 mlx5_0"), line % (3, "n9 mlx5_0")])
    dups = _ib_fabric.duplicate_guids(_iblinkinfo.parse(text)["ports"])
    assert dups == [{"guid": "0x0000000000100001", "seen_at": ["leaf-a/1", "leaf-a/2", "leaf-a/3"],
                     "nodes": ["n1 mlx5_0", "n9 mlx5_0"]}]


# --- iblinkinfo: refusals -------------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("hello\nworld\n", "not an iblinkinfo line"),
    ("CA: n1:\n", "no iblinkinfo port line"),
    ("      1    1[  ] ==( 4X 10.0 Gbps Active/  LinkUp)==>  2 1[  ] \"sw\" ( )", "before any node header"),
    ("CA: n1:\n      0x0000000000000001      1    1[  ] ==( 3X 10.0 Gbps Active/  LinkUp)==>       2    1[  ] \"sw\" ( )",
     "width '3X'"),
    ("CA: n1:\n      0x0000000000000001      1    1[  ] ==( 4X 40 Gbps Active/  LinkUp)==>       2    1[  ] \"sw\" ( )",
     "speed '40 Gbps'"),
    ("CA: n1:\n      0x0000000000000001      1    1[  ] ==( 4X 10.0 Gbps Up/  LinkUp)==>       2    1[  ] \"sw\" ( )",
     "link column"),
    ("CA: n1:\n      0x0000000000000001      1    1[  ] ==( 4X 10.0 Gbps Active/  LinkUp)==>       2    1[  ] sw",
     "the peer"),
    ("< CA: n1:\n<       0x0000000000000001      1    1[  ] ==(  Down/ Polling)==>  [  ] \"\" ( )", "--diff"),
])
def test_iblinkinfo_refusals(text, words):
    with pytest.raises(ValueError) as exc:
        _iblinkinfo.parse(text)
    assert words in str(exc.value)


def test_ibqueryerrors_text_is_not_iblinkinfo():
    with pytest.raises(ValueError, match="not an iblinkinfo line"):
        _iblinkinfo.parse(IBQ["IBQE-PUB-linux-rdma-SX6036"].raw)


# --- iblinkinfo: properties from the format strings ------------------------------------------

DESC = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126, blacklist_characters='"'), min_size=1,
               max_size=40).map(str.strip).filter(lambda s: s and not s.endswith(":"))
UP = st.tuples(st.sampled_from(sorted(_iblinkinfo.WIDTHS)), st.sampled_from([t for t, _n, _g in _iblinkinfo.SPEEDS]),
               st.sampled_from(["Initialize", "Armed", "Active"]), st.sampled_from(["LinkUp", "LinkErrorRecovery"]))


def _port_line(line_mode, guid, desc, lid, port, up, peer):
    if up:
        link = "(%3s %18s %6s/%8s)" % up
    else:
        link = "(              %6s/%8s)" % ("Down", "Polling")
    if peer:
        rguid, rlid, rport, rdesc = peer
        remote = "%s%6d %4d[%2s] \"%s\" (%s %s)\n" % ("0x%016x " % rguid if line_mode else "", rlid, rport, "", rdesc, "", "")
    else:
        remote = "           [  ] \"\" ( )\n"
    if line_mode:
        head = "0x%016x \"%30s\" " % (guid, desc)
    else:
        head = "      0x%016x " % guid
    return head + "%6d %4d[%2s] ==%s==>  %s" % (lid, port, "", link, remote)


@settings(max_examples=150, deadline=None)
@given(line_mode=st.booleans(), guid=st.integers(1, 2 ** 64 - 1), desc=DESC, lid=st.integers(0, 49151),
       port=st.integers(1, 255), up=st.one_of(st.none(), UP), rdesc=DESC, rguid=st.integers(1, 2 ** 64 - 1),
       rport=st.integers(1, 255))
def test_property_round_trip(line_mode, guid, desc, lid, port, up, rdesc, rguid, rport):
    peer = (rguid, 7, rport, rdesc) if up else None
    text = ("" if line_mode else "CA: %s:\n" % desc) + _port_line(line_mode, guid, desc, lid, port, up, peer)
    (entry,) = _iblinkinfo.parse(text)["ports"]
    assert entry["node"] == desc and entry["port_guid"] == "0x%016x" % guid
    assert (entry["lid"], entry["port"]) == (lid, port)
    if up:
        assert (entry["width"], entry["speed"], entry["state"], entry["phys_state"]) == up
        assert entry["peer"]["node"] == rdesc and entry["peer"]["port"] == rport
        assert entry["peer"]["port_guid"] == ("0x%016x" % rguid if line_mode else None)
    else:
        assert entry["state"] == "Down" and entry["width"] is None and entry["peer"] is None


@settings(max_examples=100, deadline=None)
@given(width=st.sampled_from(sorted(_iblinkinfo.WIDTHS)), want=st.sampled_from(sorted(_iblinkinfo.WIDTHS)),
       speed=st.sampled_from(_ib_fabric.SPEED_ORDER), want_speed=st.sampled_from(_ib_fabric.SPEED_ORDER))
def test_property_below_expected(width, want, speed, want_speed):
    text = ("Switch: 0x0000000000000002 leaf:\n" + "           2    1[  ] ==( %s %s Active/  LinkUp)==>       1    1[  ] "
            "\"n1 mlx5_0\" ( )\n" % (width, _iblinkinfo.SPEED_BY_NAME[speed][0]))
    records = _ib_fabric.link_records(_iblinkinfo.parse(text)["ports"], "h", want, want_speed)
    checks = sorted(r["check"] for r in records)
    expected = []
    if _iblinkinfo.WIDTHS[width] < _iblinkinfo.WIDTHS[want]:
        expected.append("ib.link_width")
    if _ib_fabric.SPEED_ORDER.index(speed) < _ib_fabric.SPEED_ORDER.index(want_speed):
        expected.append("ib.link_speed")
    assert checks == sorted(expected)


# --- ibqueryerrors ----------------------------------------------------------------------------

def test_ibqueryerrors_public_32bit():
    parsed = _ibqueryerrors.parse(IBQ["IBQE-PUB-linux-rdma-SX6036"].raw)
    assert parsed["summary"]["nodes"] == 4 and parsed["summary"]["bad_ports"] == 14
    ports = parsed["ports"]
    assert len(ports) == 15
    assert ports[0] == {"node": "dl380g7 mlx4_0", "node_guid": None, "port_guid": "0x7cfe900300179b31", "port": 1,
                        "counters": {"VL15Dropped": 14, "PortXmitWait": 4294967295}, "link": None}
    sw = [p for p in ports if p["node_guid"] == "0x0002c903006e29b0"]
    assert sw[0]["port"] == "ALL" and sw[6]["counters"]["SymbolErrorCounter"] == 65535
    records = _ib_fabric.error_records(ports, _ib_fabric.DEFAULT_THRESHOLDS, "sm1")
    objects = set(r["object"] for r in records)
    assert "MF0;ys23ib4:SX6036/U1/ALL" not in objects   # the aggregate is not a port
    assert {"object": "MF0;ys23ib4:SX6036/U1/5", "setting": "SymbolErrorCounter", "actual": 65535} == dict(
        (k, v) for k, v in next(r for r in records if r["object"].endswith("/5") and r["setting"] == "SymbolErrorCounter").items()
        if k in ("object", "setting", "actual"))
    assert not [r for r in records if r["setting"] == "PortXmitWait"]   # congestion, not in the defaults
    with_wait = _ib_fabric.error_records(ports, _ib_fabric.merge_thresholds({"PortXmitWait": 1000}), "sm1")
    assert len([r for r in with_wait if r["setting"] == "PortXmitWait"]) > 0


def test_ibqueryerrors_public_extended_line():
    parsed = _ibqueryerrors.parse("Errors for 0x1070fd0300370ea2 \"sw\"\n" + IBQ["IBQE-PUB-ucx-9590-extended"].raw)
    assert parsed["ports"][0]["counters"] == {"LinkDownedCounter": 25, "PortRcvErrors": 26, "PortXmitDiscards": 2846,
                                              "PortXmitWait": 14681376621}
    assert parsed["summary"] is None


def test_ibqueryerrors_sim_link_info():
    parsed = _ibqueryerrors.parse(_sim("IBQE-SIM-cabling-r", IBQ))
    (agg, port) = parsed["ports"]
    assert agg["port"] == "ALL" and port["port"] == 2 and port["counters"] == {"SymbolErrorCounter": 120}
    assert port["link"]["peer"]["node"] == "node2 mlx5_1" and port["link"]["width"] == "4X"
    assert parsed["summary"]["thresholds"] == {} and parsed["summary"]["bad_ports"] == 1
    (record,) = _ib_fabric.error_records(parsed["ports"], _ib_fabric.DEFAULT_THRESHOLDS, "sm1")
    assert (record["object"], record["expected"], record["actual"]) == (
        "leaf-r1/2 peer node2 mlx5_1/1", "SymbolErrorCounter <= 10", 120)
    default = _ibqueryerrors.parse(_sim("IBQE-SIM-cabling-default", IBQ))
    assert [p["counters"] for p in default["ports"]] == [{"SymbolErrorCounter": 120}] * 2


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("CA: n1:\n", "not an ibqueryerrors line"),
    ("Errors for n1\n", "Errors for"),
    ("Errors for \"n1\"\n   GUID 0x1 port 1: [SymbolErrorCounter = 5]\n", "is not a '[<Counter> == <value>]'"),
    ("Errors for \"n1\"\n   GUID 0x1 port one: [SymbolErrorCounter == 5]\n", "GUID 0x<guid> port"),
    ("## Summary: many nodes\n", "'## Summary' lines"),
])
def test_ibqueryerrors_refusals(text, words):
    with pytest.raises(ValueError) as exc:
        _ibqueryerrors.parse(text)
    assert words in str(exc.value)


# --- options ------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, name", [("4X", "4X"), ("4x", "4X"), ("12", "12X")])
def test_width(value, name):
    assert _ib_fabric.normalize_width(value) == name


@pytest.mark.parametrize("value, name", [("HDR", "HDR"), ("ndr", "NDR"), ("53.125 Gbps", "HDR"), ("25.78125", "EDR"),
                                         ("10.0 Gbps (FDR10)", "FDR10"), ("2.5 gbps", "SDR")])
def test_speed(value, name):
    assert _ib_fabric.normalize_speed(value) == name


def test_bad_options_name_field_and_value():
    with pytest.raises(ValueError, match=r"expected_width='3X'"):
        _ib_fabric.normalize_width("3X")
    with pytest.raises(ValueError, match=r"expected_speed='200G'"):
        _ib_fabric.normalize_speed("200G")
    with pytest.raises(ValueError, match=r"thresholds.SymbolErrorCounter='ten'"):
        _ib_fabric.merge_thresholds({"SymbolErrorCounter": "ten"})
    with pytest.raises(ValueError, match=r"thresholds.SymbolErrors: not an error counter"):
        _ib_fabric.merge_thresholds({"SymbolErrors": 1})
    assert "SymbolErrorCounter" not in _ib_fabric.merge_thresholds({"SymbolErrorCounter": None})
    with pytest.raises(ValueError, match=r"cabling\[1\]: node1 mlx5_0 port 1 is already planned in cabling\[0\]"):
        _ib_fabric.check_cabling([{"hca": "node1 mlx5_0", "leaf": "a"}, {"hca": "node1 mlx5_0", "leaf": "b"}])
    with pytest.raises(ValueError, match=r"cabling\[0\].rail=-1"):
        _ib_fabric.check_cabling([{"hca": "n", "leaf": "a", "rail": -1}])


def test_cabling_states():
    ports = _iblinkinfo.parse(_sim("IBLI-SIM-cabling-line"))["ports"]
    plan = _ib_fabric.check_cabling([
        {"hca": "node9 mlx5_0", "leaf": "leaf-r0"},
        {"hca": "node1 mlx5_0", "leaf": "leaf-r0", "leaf_port": 2},
        {"hca": "0x0000000000100003", "leaf": "0x0000000000200002", "rail": 1},   # by GUIDs: node1 mlx5_1 on leaf-r1
    ])
    status, records = _ib_fabric.cabling(ports, plan, "h")
    assert [(r["actual"], r["severity"]) for r in records] == [("not in the fabric", "error"), ("leaf-r0 port 1", "warning")]
    assert status[2]["ok"] and status[2]["switch"] == "leaf-r1"


# --- main() ----------------------------------------------------------------------------------------

def test_doc_matches_argspec():
    helpers.assert_doc_matches_argspec(ib_fabric)


def test_main_parsed(capsys):
    text = ("$ iblinkinfo --line\n" + _sim("IBLI-SIM-cabling-line") + "[rc=0]\n$ ibqueryerrors -r\n"
            + _sim("IBQE-SIM-cabling-r", IBQ) + "[rc=1]\n")
    rc, result = helpers.run_main_json(capsys, ib_fabric.main, {
        "state": "parsed", "running_config": text, "host": "sm1", "expected_width": "4x", "expected_speed": "53.125",
        "cabling": PLAN})
    assert rc == 0, result
    assert sorted(r["check"] for r in result["records"]) == ["ib.cabling", "ib.link_speed", "ib.link_width", "ib.port_errors"]
    assert all(r["host"] == "sm1" for r in result["records"])
    assert result["changed"] is False and "running_config" not in result


def test_main_parsed_without_commands(capsys):
    text = _public("IBLI-PUB-linpack-EDR-SB7700") + "\n" + IBQ["IBQE-PUB-linux-rdma-SX6036"].raw
    args = {"state": "parsed", "running_config": text, "expected_speed": "HDR"}
    rc, result = helpers.run_main_json(capsys, ib_fabric.main, args)
    assert rc == 0, result
    # n02 and n01 from the switch side, mgt mlx5_0 (its switch port 36 is not in the paste) from its own side.
    assert len([r for r in result["records"] if r["check"] == "ib.link_speed"]) == 3
    assert result["error_summary"]["bad_ports"] == 14


def test_main_refuses_other_text(capsys):
    rc, result = helpers.run_main_json(capsys, ib_fabric.main, {"state": "parsed", "running_config": "hello\n"})
    assert rc == 1 and result["msg"].startswith("running_config: iblinkinfo line 1 'hello'")


def test_main_bad_option(capsys):
    args = {"state": "parsed", "running_config": "x", "thresholds": {"PortRcvErrors": -1}}
    rc, result = helpers.run_main_json(capsys, ib_fabric.main, args)
    assert rc == 1 and "thresholds.PortRcvErrors" in result["msg"]


def test_main_gathered_without_sm(capsys, monkeypatch):
    line = _sim("IBLI-SIM-cabling-line")

    def fake_run(self, argv, **kwargs):
        if argv[0].endswith("iblinkinfo"):
            return 0, line, ""
        return 255, "", "ibwarn: [7] sa_get_handle: No SM/SA found on port (null):0\n"

    monkeypatch.setattr(ib_fabric.AnsibleModule, "run_command", fake_run)
    monkeypatch.setattr(ib_fabric.AnsibleModule, "get_bin_path", lambda self, name, **kw: "/usr/sbin/" + name)
    rc, result = helpers.run_main_json(capsys, ib_fabric.main, {"host": "sm1"})
    assert rc == 0, result
    (warn,) = [r for r in result["records"] if r["check"] == "ib.port_errors"]
    assert warn["severity"] == "warning" and "No SM/SA found" in warn["diagnosis"]
    assert "$ iblinkinfo --line" in result["running_config"]


def test_main_gathered_iblinkinfo_fails(capsys, monkeypatch):
    monkeypatch.setattr(ib_fabric.AnsibleModule, "run_command",
                        lambda self, argv, **kw: (255, "", "ibwarn: [1] mad_rpc_open_port: can't open UMAD port ((null):0)\n"))
    monkeypatch.setattr(ib_fabric.AnsibleModule, "get_bin_path", lambda self, name, **kw: "/usr/sbin/" + name)
    rc, result = helpers.run_main_json(capsys, ib_fabric.main, {})
    assert rc == 1 and result["msg"].startswith("iblinkinfo failed (rc=255): ibwarn")
