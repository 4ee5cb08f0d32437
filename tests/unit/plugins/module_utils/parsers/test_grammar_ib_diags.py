# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the grammar of rdma-core infiniband-diags/iblinkinfo.c (print_node_header, print_port)
and ibqueryerrors.c (print_results, print_port_config, print_summary): outputs they can print read back
through _iblinkinfo.parse and _ibqueryerrors.parse; lines they cannot print are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _iblinkinfo, _ibqueryerrors

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
FAST = hypothesis.settings(max_examples=40, deadline=None)

SPEEDS = [text for text, _name, _gbps in _iblinkinfo.SPEEDS]
desc_st = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9;:/_. -]{0,40}[A-Za-z0-9/]\Z")
peer_st = st.fixed_dictionaries({
    "guid": st.integers(1, 2 ** 64 - 1), "lid": st.integers(1, 0xbfff), "port": st.integers(1, 64),
    "ext": st.sampled_from(["", "", "1", "2"]), "desc": desc_st,
    "could_width": st.sampled_from(["", "Could be 4X", "Could be 12X"]),
    "could_speed": st.sampled_from(["", "Could be 53.125 Gbps", "Could be 106.25 Gbps"]),
})
port_st = st.fixed_dictionaries({
    "port": st.integers(1, 64), "ext": st.sampled_from(["", "", "1", "3"]),
    "down": st.booleans(), "width": st.sampled_from(list(_iblinkinfo.WIDTHS)), "speed": st.sampled_from(SPEEDS),
    "state": st.sampled_from(["Initialize", "Armed", "Active", "Active"]),
    "phys": st.sampled_from(["LinkUp", "LinkUp", "LinkErrorRecovery", "PhyTest"]),
    "down_phys": st.sampled_from(["Polling", "Disabled", "Sleep", "PortConfigurationTraining"]),
    "peer": st.one_of(st.none(), peer_st),
})
node_st = st.fixed_dictionaries({
    "switch": st.booleans(), "guid": st.integers(1, 2 ** 64 - 65), "lid": st.integers(1, 0xbfff), "desc": desc_st,
    "ports": st.lists(port_st, min_size=1, max_size=4, unique_by=lambda p: p["port"]),
})


def _link(port):
    if port["down"]:
        return "(              %6s/%8s)" % ("Down", port["down_phys"])
    return "(%3s %18s %6s/%8s)" % (port["width"], port["speed"], port["state"], port["phys"])


def _remote(port, line_mode):
    """remote_str of print_port: no peer on a Down port, 'Port not available' on an up port whose peer was
    not discovered; the peer GUID only with --line."""
    peer = port["peer"]
    if port["down"]:
        return '           [  ] "" ( )'
    if peer is None:
        return '    "Port not available"'
    guid = "0x%016x " % peer["guid"] if line_mode else ""
    return '%s%6d %4d[%2s] "%s" (%s %s)' % (guid, peer["lid"], peer["port"], peer["ext"], peer["desc"],
                                            peer["could_width"], peer["could_speed"])


def _iblinkinfo_text(nodes, line_mode):
    lines = []
    for node in nodes:
        if not line_mode:
            lines.append("Switch: 0x%016x %s:" % (node["guid"], node["desc"]) if node["switch"] else "CA: %s:" % node["desc"])
        for port in node["ports"]:
            guid = node["guid"] if node["switch"] else node["guid"] + port["port"]
            if line_mode:
                head = '0x%016x "%30s" ' % (guid, node["desc"])
            else:
                head = "      " + ("" if node["switch"] else "0x%016x " % guid)
            values = (head, node["lid"], port["port"], port["ext"], _link(port), _remote(port, line_mode))
            lines.append("%s%6d %4d[%2s] ==%s==>  %s" % values)
    return "".join(line + "\n" for line in lines)


def _check_port(got, node, port, line_mode):
    assert (got["lid"], got["port"], got["ext_port"]) == (node["lid"], port["port"], int(port["ext"]) if port["ext"] else None)
    assert got["node"] == node["desc"]
    assert got["port_guid"] == "0x%016x" % (node["guid"] if node["switch"] else node["guid"] + port["port"])
    if not line_mode:
        assert got["node_type"] == ("switch" if node["switch"] else "ca")
    if port["down"]:
        assert (got["width"], got["speed"], got["state"], got["phys_state"]) == (None, None, "Down", port["down_phys"])
    else:
        assert (got["width"], got["speed"], got["state"], got["phys_state"]) == (
            port["width"], port["speed"], port["state"], port["phys"])
        assert got["speed_name"] == _iblinkinfo.speed_name(port["speed"])
    peer = None if port["down"] else port["peer"]
    if peer is None:
        assert got["peer"] is None
    else:
        assert got["peer"] == {"port_guid": "0x%016x" % peer["guid"] if line_mode else None, "lid": peer["lid"],
                               "port": peer["port"], "ext_port": int(peer["ext"]) if peer["ext"] else None,
                               "node": peer["desc"], "could_be_width": peer["could_width"][9:] or None,
                               "could_be_speed": peer["could_speed"][9:] or None}


@FAST
@hypothesis.given(st.lists(node_st, min_size=1, max_size=4), st.booleans())
def test_iblinkinfo_ports_read_back(nodes, line_mode):
    parsed = _iblinkinfo.parse(_iblinkinfo_text(nodes, line_mode))
    assert parsed["layout"] == ("line" if line_mode else "default") and parsed["duplicates"] == []
    want = [(node, port) for node in nodes for port in node["ports"]]
    assert len(parsed["ports"]) == len(want)
    for got, (node, port) in zip(parsed["ports"], want):
        _check_port(got, node, port, line_mode)


IBLI_PORT = '      0xec0d9a03003d62be      4    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       2   17[  ] "sw" ( )\n'
IBLINKINFO_NEAR_MISSES = [
    "CA: n02 HCA-1:\n" + IBLI_PORT.replace(" 4X", " 3X"),                           # no 3X width
    "CA: n02 HCA-1:\n" + IBLI_PORT.replace("25.78125 Gbps", "    26.0 Gbps"),       # no such lane speed
    "CA: n02 HCA-1:\n" + IBLI_PORT.replace("Active/  LinkUp", "    Up/  LinkUp"),   # no such PortState
    "CA: n02 HCA-1:\n" + IBLI_PORT.replace("  LinkUp", "    Link"),
    "CA: n02 HCA-1:\n" + IBLI_PORT.replace('17[  ] "sw" ( )', '17 "sw" ( )'),       # peer without its [ext]
    "CA: n02 HCA-1:\n" + IBLI_PORT.replace('"sw" ( )', '"sw'),                      # cut short
    "CA: n02 HCA-1:\n< " + IBLI_PORT.lstrip(),                                      # a --diff line
    IBLI_PORT,                                                                      # a port before any header
    "CA: n02 HCA-1:\n",                                                             # headers only, no port
    "CA 'mlx5_0'\n\tCA type: MT4129\n",                                             # ibstat
    "Errors for \"dl380g7 mlx4_0\"\n",                                              # ibqueryerrors
    "",
]


@pytest.mark.parametrize("text", IBLINKINFO_NEAR_MISSES)
def test_iblinkinfo_near_misses_are_refused(text):
    with pytest.raises(ValueError, match="iblinkinfo"):
        _iblinkinfo.parse(text)


counters_st = st.dictionaries(st.sampled_from(list(_ibqueryerrors.ERROR_COUNTERS)), st.integers(1, 2 ** 64 - 1),
                              min_size=1, max_size=4)
qe_node_st = st.fixed_dictionaries({
    "switch": st.booleans(), "guid": st.integers(1, 2 ** 64 - 1), "desc": desc_st, "all": counters_st,
    "ports": st.lists(st.tuples(st.integers(0, 64), counters_st), min_size=1, max_size=3, unique_by=lambda p: p[0]),
})


def _human(value):
    """conv_cnt_human_readable + '%5.3f%s'."""
    unit, val = "", float(value)
    for name in ("K", "M", "G", "T", "P", "E"):
        if val < 1024:
            break
        val, unit = val / 1024, name
    return "%5.3f%s" % (val, unit)


def _items(counters, extended):
    if extended:
        return "".join(" [%s == %d (%s)]" % (name, value, _human(value)) for name, value in counters.items())
    return "".join(" [%s == %d]" % (name, value & 0xffffffff) for name, value in counters.items())


@FAST
@hypothesis.given(st.lists(qe_node_st, min_size=0, max_size=3), st.booleans(), st.booleans(),
                  st.dictionaries(st.sampled_from(list(_ibqueryerrors.ERROR_COUNTERS)), st.integers(0, 10 ** 6)),
                  st.integers(0, 5))
def test_ibqueryerrors_read_back(nodes, extended, report_port, thresholds, pma_failures):
    lines, want = [], []
    for node in nodes:
        guid = node["guid"]
        lines.append('Errors for 0x%x "%s"' % (guid, node["desc"]) if node["switch"] else 'Errors for "%s"' % node["desc"])
        if node["switch"]:
            lines.append("   GUID 0x%x port ALL:%s" % (guid, _items(node["all"], extended)))
            want.append((node, "ALL", node["all"], guid))
        for number, counters in node["ports"]:
            port_guid = guid if node["switch"] else guid ^ number
            lines.append("   GUID 0x%x port %d:%s" % (port_guid, number, _items(counters, extended)))
            want.append((node, number, counters, port_guid))
            if report_port:
                lines.append('       Link info: %6d%4d[%2s] ==( 4X        53.125 Gbps Active/  LinkUp)==>  '
                             '0x%016x %6d %4d[%2s] "peer" ( )' % (7, number, "", 0x100007, 9, 1, ""))
    bad_ports = sum(len(node["ports"]) for node in nodes)
    lines += ["", "## Summary: %d nodes checked, %d bad nodes found" % (len(nodes) + 3, len(nodes)),
              "##          %d ports checked, %d ports have errors beyond threshold" % (bad_ports + 7, bad_ports),
              "## Thresholds: " + "".join("[%s = %d]" % item for item in thresholds.items())]
    if pma_failures:
        lines.append("##          %d PMA query failures" % pma_failures)
    lines.append("## Suppressed:" + "".join(" " + name for name in sorted(thresholds)))
    parsed = _ibqueryerrors.parse("\n".join(lines) + "\n")
    assert len(parsed["ports"]) == len(want)
    for got, (node, number, counters, port_guid) in zip(parsed["ports"], want):
        assert (got["node"], got["port"], got["port_guid"]) == (node["desc"], number, "0x%016x" % port_guid)
        assert got["node_guid"] == ("0x%016x" % node["guid"] if node["switch"] else None)
        assert got["counters"] == dict((k, v if extended else v & 0xffffffff) for k, v in counters.items())
        if report_port and number != "ALL":
            assert (got["link"]["lid"], got["link"]["speed_name"], got["link"]["peer"]["lid"]) == (7, "HDR", 9)
        else:
            assert got["link"] is None
    assert parsed["summary"] == {"nodes": len(nodes) + 3, "bad_nodes": len(nodes), "ports": bad_ports + 7,
                                 "bad_ports": bad_ports, "pma_failures": pma_failures, "thresholds": thresholds,
                                 "suppressed": sorted(thresholds)}


def test_ibqueryerrors_without_threshold_file_prints_null():
    """No threshold file: threshold_str stays NULL and glibc prints '## (null)'."""
    parsed = _ibqueryerrors.parse("\n## Summary: 1 nodes checked, 0 bad nodes found\n"
                                  "##          1 ports checked, 0 ports have errors beyond threshold\n## (null)\n"
                                  "## Suppressed:\n")
    assert parsed["ports"] == [] and parsed["summary"]["thresholds"] == {}


QE_NEAR_MISSES = [
    'Errors for dl380g7 mlx4_0\n',                                                   # the name unquoted
    'Errors for 0x2c903006e29b0 "sw"\n   GUID 0x2c903006e29b0 port one: [VL15Dropped == 5]\n',
    'Errors for "h"\n   GUID 0x7cfe900300179b31 port 1: [VL15Dropped == -5]\n',          # %u / PRIu64
    'Errors for "h"\n   GUID 0x7cfe900300179b31 port 1: [VL15Dropped = 5]\n',            # a threshold item
    'Errors for "h"\n   GUID 0x7cfe900300179b31 port 1: [VL15Dropped == 5\n',            # cut short
    'Errors for "h"\n   GUID 0x7cfe900300179b31 port 1: VL15Dropped == 5\n',
    'Errors for "h"\n   GUID 0x7cfe900300179b3100 port 1: [VL15Dropped == 5]\n',         # 18 hex digits
    '       Link info:      4   2[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>  "x" ( )\n',   # before a port
    "## Summary: four nodes checked, 1 bad nodes found\n",
    "## Totals: 4\n",
    "CA 'mlx5_0'\n\tCA type: MT4129\n",                                                  # ibstat
    "",
]


@pytest.mark.parametrize("text", QE_NEAR_MISSES)
def test_ibqueryerrors_near_misses_are_refused(text):
    with pytest.raises(ValueError, match="ibqueryerrors"):
        _ibqueryerrors.parse(text)


# --counters (print_data_cnts) and --data (print_results): data counters, libibmad fields.c names of
# IB_PC_EXT_XMT_BYTES_F .. IB_PC_EXT_RCV_MPKTS_F (extended) / IB_PC_XMT_BYTES_F .. IB_PC_RCV_PKTS_F
DATA_EXT = ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortUnicastXmitPkts", "PortUnicastRcvPkts",
            "PortMulticastXmitPkts", "PortMulticastRcvPkts")


def _data_human(value):
    """conv_cnt_human_readable(val, &f, data=1): the data counters count 4-byte words."""
    val, units = float(value) * 4, ("B", "KB", "MB", "GB", "TB", "PB", "EB")
    ui = 0
    while val >= 1024 and ui < len(units) - 1:
        val, ui = val / 1024, ui + 1
    return "%5.3f%s" % (val, units[ui])


@FAST
@hypothesis.given(st.lists(st.tuples(st.integers(1, 2 ** 64 - 1), desc_st, st.booleans(),
                                     st.lists(st.integers(1, 36), min_size=1, max_size=3, unique=True)),
                           min_size=1, max_size=3),
                  st.lists(st.integers(0, 2 ** 64 - 1), min_size=8, max_size=8))
def test_ibqueryerrors_data_counter_blocks_read_back(nodes, values):
    """'ibqueryerrors --counters': a 'Data Counters for 0x<guid> "<desc>"' block per node (CAs too),
    per port the data counters with '(%5.3f<unit>)'; read into ``data``, never into ``ports``."""
    lines, want = [], []
    for guid, desc, switch, ports in nodes:
        lines.append('Data Counters for 0x%x "%s"' % (guid, desc))
        for port in (["ALL"] if switch else []) + ports:
            items = "".join(" [%s == %d (%s)]" % (n, v, _data_human(v) if "Data" in n else _human(v))
                            for n, v in zip(DATA_EXT, values))
            lines.append("   GUID 0x%x port %s:%s" % (guid, port, items))
            want.append((desc, port))
    lines += ["", "## Summary: %d nodes checked, 0 bad nodes found" % len(nodes),
              "##          %d ports checked, 0 ports have errors beyond threshold" % len(want), "## (null)"]
    parsed = _ibqueryerrors.parse("\n".join(lines) + "\n")
    assert parsed["ports"] == []
    assert [(d["node"], d["port"]) for d in parsed["data"]] == want
    assert all(d["counters"] == dict(zip(DATA_EXT, values)) for d in parsed["data"])


def test_ibqueryerrors_data_flag_and_report_port():
    """--data appends the data counters to an error port line; -r puts Link info after the data
    block's port line too (print_data_cnts calls print_port_config)."""
    text = ('Errors for "node2 mlx5_0"\n'
            "   GUID 0x248a0703005c2b1e port 1: [SymbolErrorCounter == 7 (7.000)] [PortXmitData == 1024 (4.000KB)]\n"
            'Data Counters for 0x248a0703005c2b1e "node2 mlx5_0"\n'
            "   GUID 0x248a0703005c2b1e port 1: [PortXmitData == 1024 (4.000KB)] [PortRcvData == 0 (0.000B)]\n"
            "       Link info:      4    1[  ] ==( 4X      53.125 Gbps Active/  LinkUp)==>       1    3[  ] \"sw1\" ( )\n"
            "Failed to reset errors node2 mlx5_0 port 1\n")
    parsed = _ibqueryerrors.parse(text)
    assert parsed["ports"][0]["counters"] == {"SymbolErrorCounter": 7, "PortXmitData": 1024}
    assert parsed["data"][0]["counters"]["PortRcvData"] == 0 and parsed["data"][0]["link"]["lid"] == 4
    assert parsed["ports"][0]["link"] is None and parsed["warnings"] == ["Failed to reset errors node2 mlx5_0 port 1"]


@pytest.mark.parametrize("text", ['Data Counters for "node2 mlx5_0"\n', "Data Counters for 0x12 node2\n"])
def test_ibqueryerrors_data_header_near_misses_are_refused(text):
    with pytest.raises(ValueError, match="ibqueryerrors"):
        _ibqueryerrors.parse(text)
