# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the grammar of rdma-core infiniband-diags/ibstat.c (ca_dump, port_dump): reports
ibstat can print read back through _ibstat.parse; lines it cannot print are refused. Node types: CA,
Switch, Router (every release), iWARP RNIC (a libibumad before 2008, with no Link layer line); ports
with or without the 2026 ``Effective speed`` line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
FAST = hypothesis.settings(max_examples=40, deadline=None)

STATES = ["???", "Down", "Initializing", "Armed", "Active"]                        # port_state_str, '???' > 4
PHYS = ["No state change", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
        "LinkErrorRecovery", "PhyTest", "???"]                                      # port_phy_state_str
guid_st = st.integers(0, 2 ** 64 - 1)
port_st = st.fixed_dictionaries({
    "State": st.sampled_from(STATES),
    "Physical state": st.sampled_from(PHYS),
    # '%d', '2.5' for 1x SDR, '%d (FDR10)' when sysfs rate says FDR10
    "Rate": st.one_of(st.sampled_from(["2.5", "10", "40 (FDR10)", "56", "100", "200", "400", "800"]),
                      st.integers(0, 2000).map(str)),
    "Base lid": st.integers(0, 0xffff).map(str),
    "LMC": st.integers(0, 7).map(str),
    "SM lid": st.integers(0, 0xffff).map(str),
    "Capability mask": st.integers(0, 2 ** 32 - 1).map("0x%08x".__mod__),
    "guid": guid_st,
    "Link layer": st.sampled_from(["InfiniBand", "Ethernet", "IB"]),               # IB: umad's fallback
    # '%g' of ibv_query_port_speed()/10 when the verb succeeds (rdma-core 9a645e432), else no line
    "Effective speed": st.one_of(st.none(), st.integers(0, 20000).map(lambda n: "%g" % (n / 10.0))),
})
ca_st = st.fixed_dictionaries({
    "kind": st.sampled_from(["CA", "CA", "Switch", "Router", "iWARP RNIC"]),       # node_type_str[1..4]
    "name": st.from_regex(r"\A(mlx5_[0-9]{1,2}|mlx4_[0-9]|hfi1_[0-9]|qib[0-9]|mthca[0-9]|ibsim[0-9]|ibp[0-9]s0f[01])\Z"),
    "type": st.sampled_from(["MT4129", "MT4124", "MT4123", "MT4115", "MT4099", "MT25408", "simulator", "InfiniPath_QLE7340", ""]),
    "fw": st.sampled_from(["28.41.1000", "20.41.1000", "2.42.5000", "1", "0.8.0", ""]),
    "hw": st.sampled_from(["0", "a1", "MT_0000000222", "ConnectX-4", ""]),
    "node_guid": guid_st, "sys_guid": guid_st,
    "ports": st.lists(port_st, min_size=1, max_size=2),
})


def _keys(port, ca):
    """port_dump's keys in print order: Effective speed only when the verb answered; an iWARP RNIC
    is listed only by a libibumad older than 2008, whose ibstat printed no Link layer."""
    keys = ["State", "Physical state", "Rate"] + (["Effective speed"] if port["Effective speed"] is not None else [])
    return keys + ["Base lid", "LMC", "SM lid", "Capability mask", "Port GUID"] + (
        [] if ca["kind"] == "iWARP RNIC" else ["Link layer"])


def _value(port, key):
    return "0x%016x" % port["guid"] if key == "Port GUID" else port[key]


def _print_ca(ca, indent, short):
    """ca_dump then port_dump(port, 0) for each port, as ibstat prints them (TABs; a paste: 8 spaces)."""
    one, two = indent, indent * 2
    first = 0 if ca["kind"] == "Switch" else 1                       # a switch has only its port 0 in umad
    lines = ["%s '%s'" % (ca["kind"], ca["name"]), "%s%s type: %s" % (one, ca["kind"], ca["type"]),
             "%sNumber of ports: %d" % (one, len(ca["ports"]) - 1 + first),
             "%sFirmware version: %s" % (one, ca["fw"]), "%sHardware version: %s" % (one, ca["hw"]),
             "%sNode GUID: 0x%016x" % (one, ca["node_guid"]), "%sSystem image GUID: 0x%016x" % (one, ca["sys_guid"])]
    if not short:
        for number, port in enumerate(ca["ports"], first):
            lines.append("%sPort %d:" % (one, number))
            lines += ["%s%s: %s" % (two, key, _value(port, key)) for key in _keys(port, ca)]
    return "".join(line + "\n" for line in lines)


@FAST
@hypothesis.given(st.lists(ca_st, min_size=1, max_size=4, unique_by=lambda ca: ca["name"]),
                  st.sampled_from(["\t", "        "]), st.booleans(), st.booleans())
def test_printed_cas_read_back(cas, indent, short, panic):
    text = "".join(_print_ca(ca, indent, short) for ca in cas)
    if panic:   # main() IBPANICs after the CAs it could stat (stdout and stderr merged)
        text += "ibpanic: [4321] main: stat of IB device 'mlx5_9' failed: No such file or directory\n"
    parsed = _ibstat.parse(text)
    assert parsed["errors"] == (["ibpanic: [4321] main: stat of IB device 'mlx5_9' failed: No such file or directory"]
                                if panic else [])
    assert [(c["name"], c["kind"]) for c in parsed["cas"]] == [(c["name"], c["kind"]) for c in cas]
    for ca, got in zip(cas, parsed["cas"]):
        assert got["node_guid"] == "0x%016x" % ca["node_guid"] and got["sys_image_guid"] == "0x%016x" % ca["sys_guid"]
        assert got["fields"]["%s type" % ca["kind"]] == ca["type"]
        assert (got["fields"]["Firmware version"], got["fields"]["Hardware version"]) == (ca["fw"], ca["hw"])
        assert len(got["ports"]) == (0 if short else len(ca["ports"]))
        for port, got_port in zip(ca["ports"], got["ports"]):
            assert got_port["port_guid"] == "0x%016x" % port["guid"]
            want = dict((k, port[k]) for k in _keys(port, ca) if k != "Port GUID")
            want["Port GUID"] = "0x%016x" % port["guid"]
            assert got_port["fields"] == want


@FAST
@hypothesis.given(ca_st)
def test_one_port_layout_reads_back(ca):
    """``ibstat CA PORT``: ``CA: 'name'`` and port_dump(port, 1), no indent at all."""
    port = ca["ports"][0]
    text = "%s: '%s'\nPort 1:\n" % (ca["kind"], ca["name"]) + "".join(
        "%s: %s\n" % (key, _value(port, key)) for key in _keys(port, ca))
    ports = _ibstat.port_list(text)
    assert ports[0].get("effective_speed") == port["Effective speed"]
    assert len(ports) == 1 and (ports[0]["ca"], ports[0]["port"]) == (ca["name"], 1)
    assert (ports[0]["base_lid"], ports[0]["sm_lid"], ports[0]["lmc"]) == (
        int(port["Base lid"]), int(port["SM lid"]), int(port["LMC"]))
    assert ports[0]["port_guid"] == "0x%016x" % port["guid"] and ports[0]["state"] == port["State"]


CA = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n"
NEAR_MISSES = [
    "\tCA type: MT4129\n",                                       # a field before any CA line
    "\tPort 1:\n\t\tState: Active\n",                            # a port before any CA line
    CA.replace("1\n", "one\n"),                                  # Number of ports: %d
    CA + "\tPort 1:\n\t\tBase lid: 0x80\n",                      # Base lid: %d, never hex
    CA + "\tPort 1:\n\t\tLMC: 0.5\n",
    CA + "\tPort 1:\n\t\tSM lid: -1\n",
    CA + "\tNode GUID: 0x58a2e10300a7820e0\n",                   # 17 hex digits: not a 64-bit GUID
    CA + "\tNode GUID: 0x58a2e103zza7820e\n",
    CA + "\tPort 1:\n\t\tPort GUID: 58a2:e103\n",                # a truncated GUID
    CA + "\tPort one:\n",
    CA + "\tPort 1a:\n",
    "CA 'mlx5_0\n",                                              # the quote cut off
    "mlx5_0\nmlx5_1\n",                                          # ibstat -l (another mode)
    "0x58a2e10300a7820e\n",                                      # ibstat -p (another mode)
    "Infiniband device 'mlx5_0' port 1 status:\n\tdefault gid:\t fe80:0000:0000:0000:58a2:e103:00a7:820e\n",  # ibstatus
    "mlx5_0 port 1 ==> ib0 (Up)\n",                              # ibdev2netdev
    "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n",        # ibv_devinfo
    # node types: '???' (a type above 4) never reaches ca_dump; the type line names the header's type
    "??? 'efa_0'\n\t??? type: \n",
    "Switch 'mlx5_0'\n\tCA type: MT4129\n",
    "Router 'mlx5_0'\n\tiWARP RNIC type: MT4129\n",
    # keys: one ibstat never prints, a CA field in a port block, a port field before Port N:, a key twice
    CA + "\tPort 1:\n\t\tState: Active\n\t\tActive speed: 400\n",
    CA + "\tVendor ID: 0x02c9\n",
    CA + "\tPort 1:\n\t\tFirmware version: 28.41.1000\n",
    CA + "\tState: Active\n",
    CA + "\tPort 1:\n\t\tState: Active\n\t\tState: Down\n",
    CA + "\tNumber of ports: 2\n",
    # ``CA: 'name'`` (ibstat CA PORT) prints the port block only
    "CA: 'mlx5_0'\nCA type: MT4129\nPort 1:\nState: Active\n",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_refused(text):
    with pytest.raises(ValueError, match="ibstat"):
        _ibstat.parse(text)


@pytest.mark.parametrize("text,message", [
    (CA + "\tPort 1:\n\t\tActive speed: 400\n", r"line 5 'Active speed: 400': not a key ibstat prints in a port block"),
    (CA + "\tPort 1:\n\t\tFirmware version: 1\n", r"line 5 'Firmware version: 1': a CA field after a Port N: line"),
    (CA + "\tState: Active\n", r"line 4 'State: Active': a port field before any Port N: line"),
    ("Switch 'sw0'\n\tCA type: x\n", r"line 2 'CA type: x': not a key ibstat prints for a Switch \(Switch type, "),
    (CA + "\tNumber of ports: 2\n", r"line 4 'Number of ports: 2': Number of ports printed twice"),
    ("??? 'efa_0'\n", r"line 1 \"\?\?\? 'efa_0'\": not an ibstat line"),
])
def test_refusals_name_the_line_and_why(text, message):
    with pytest.raises(_ibstat.IbstatParseError, match=message):
        _ibstat.parse(text)


def test_no_device_prints_nothing():
    """main() with an empty umad device list prints nothing and exits 0: no CAs, not an error."""
    assert _ibstat.parse("") == {"cas": [], "errors": []}
