# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_ibstat, the one ibstat parser, on every capture in samples ibstat.txt (TABs, pasted
spaces, the switch and single-port layouts, ibpanic after partial output) and on every
refusal with its message."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat
from ansible_collections.rdma.fabric.tests.unit import samples

IBSTAT = samples.load("ibstat.txt")
# Captures of the plain ``ibstat`` / ``ibstat CA PORT`` report (not -l, -p, --help, ibstatus).
REPORTS = ["IBSTAT-SIM-ibstat", "IBSTAT-SIM-ibstat_s", "IBSTAT-SIM-ibstat_dev", "IBSTAT-SIM-NOSM",
           "IBSTAT-SIM-SWITCH", "IBSTAT-REAL-H100-ACTIVE2", "IBSTAT-REAL-A100-ACTIVE", "IBSTAT-REAL-A100-IBPANIC"]


def test_every_report_sample_is_known():
    # a new sample of the report layout must be added to REPORTS (or to the refused list below)
    assert set(REPORTS) | {"IBSTAT-SIM-ibstat_l", "IBSTAT-SIM-ibstat_p", "IBSTAT-SIM-BADDEV", "IBSTAT-HELP"} \
        == set(IBSTAT)


@pytest.mark.parametrize("sample_id", REPORTS)
def test_every_report_parses_with_every_ca_and_port(sample_id):
    raw = IBSTAT[sample_id].raw
    parsed = _ibstat.parse(raw)
    heads = [line for line in raw.splitlines() if line.startswith(("CA '", "CA: '", "Switch '"))]
    assert [ca["name"] for ca in parsed["cas"]] == [h.split("'")[1] for h in heads]
    port_lines = [line for line in raw.splitlines() if line.strip().startswith("Port ") and line.strip()[5:6].isdigit()]
    assert sum(len(ca["ports"]) for ca in parsed["cas"]) == len(port_lines)
    for ca in parsed["cas"]:
        for port in ca["ports"]:
            assert port["port_guid"] == port["fields"]["Port GUID"].lower()
            assert port["fields"]["Link layer"] in ("InfiniBand", "IB", "Ethernet")


def test_h100_ca_and_port_fields():
    parsed = _ibstat.parse(IBSTAT["IBSTAT-REAL-H100-ACTIVE2"].raw)
    assert len(parsed["cas"]) == 9 and parsed["errors"] == []
    bond = parsed["cas"][-1]
    assert (bond["name"], bond["kind"], bond["fields"]["CA type"], bond["fields"]["Firmware version"],
            bond["node_guid"]) == ("mlx5_bond_0", "CA", "MT41692", "32.38.3056", "0x58a2e10300760398")
    port = bond["ports"][0]
    assert (port["port"], port["fields"]["State"], port["fields"]["Rate"], port["fields"]["Link layer"],
            port["port_guid"]) == (1, "Active", "200", "Ethernet", "0x201d97fffe0056cf")


def test_switch_header_and_port_zero():
    ca = _ibstat.parse(IBSTAT["IBSTAT-SIM-SWITCH"].raw)["cas"][0]
    assert (ca["kind"], ca["name"], ca["fields"]["Switch type"], ca["ports"][0]["port"]) == \
        ("Switch", "ibsim0", "simulator", 0)


def test_single_port_layout_without_indent():
    ca = _ibstat.parse(IBSTAT["IBSTAT-SIM-ibstat_dev"].raw)["cas"][0]
    assert ca["name"] == "ibsim0" and ca["fields"] == {} and ca["ports"][0]["fields"]["Base lid"] == "4"


def test_short_output_has_no_ports():
    ca = _ibstat.parse(IBSTAT["IBSTAT-SIM-ibstat_s"].raw)["cas"][0]
    assert ca["ports"] == [] and ca["sys_image_guid"] == "0x0000000000100003"


def test_ibpanic_after_partial_output_and_spaces_for_tabs():
    parsed = _ibstat.parse(IBSTAT["IBSTAT-REAL-A100-IBPANIC"].raw)
    assert len(parsed["cas"]) == 8
    assert parsed["errors"] == ["ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: No such file or directory"]


def test_ibpanic_alone_is_an_error_not_a_ca():
    parsed = _ibstat.parse(IBSTAT["IBSTAT-SIM-BADDEV"].raw)
    assert parsed["cas"] == [] and parsed["errors"][0].startswith("ibpanic: [19154] main: 'mlx5_9' IB device")


def test_blank_text_is_no_ca():
    assert _ibstat.parse("") == {"cas": [], "errors": []}
    assert _ibstat.parse(None) == {"cas": [], "errors": []}


def test_port_list_for_the_opensm_role():
    ports = _ibstat.port_list(IBSTAT["IBSTAT-SIM-NOSM"].raw)
    assert ports == [{"ca": "ibsim0", "port": 1, "state": "Initializing", "physical_state": "LinkUp", "rate": "10",
                      "base_lid": 0, "lmc": 0, "sm_lid": 0, "capability_mask": ports[0]["capability_mask"],
                      "port_guid": "0x0000000000100001", "link_layer": "IB"}]
    assert ports[0]["capability_mask"].startswith("0x")


@pytest.mark.parametrize("sample_id, message", [
    ("IBSTAT-SIM-ibstat_l", "ibstat line 2 'ibsim0': not an ibstat line (CA 'name', Port N:, Key: value)"),
    ("IBSTAT-SIM-ibstat_p", "ibstat line 2 '0x0000000000100004': not an ibstat line"),
    ("IBSTAT-HELP", "ibstat line 3 'Usage: ibstat [options] <ca_name> [portnum]': a field before any CA 'name'"),
])
def test_other_layouts_are_refused_naming_the_line(sample_id, message):
    with pytest.raises(_ibstat.IbstatParseError) as exc:
        _ibstat.parse(IBSTAT[sample_id].raw)
    assert str(exc.value).startswith(message)


GOOD = IBSTAT["IBSTAT-SIM-ibstat"].raw


@pytest.mark.parametrize("old, new, message", [
    ("Port GUID: 0x0000000000100004", "Port GUID: 0x00000000001000041",
     "ibstat line 17 'Port GUID: 0x00000000001000041': GUID '0x00000000001000041': 17 hex digits, a GUID has at "
     "most 16"),
    ("Node GUID: 0x0000000000100003", "Node GUID: n/a",
     "ibstat line 7 'Node GUID: n/a': GUID 'n/a': not a 64-bit GUID"),
    ("Base lid: 4", "Base lid: 0x4", "ibstat line 13 'Base lid: 0x4': Base lid is not a decimal number"),
    ("SM lid: 1", "SM lid:", "ibstat line 15 'SM lid:': SM lid is not a decimal number"),
    ("CA 'ibsim0'", "CA ibsim0", "ibstat line 2 'CA ibsim0': not an ibstat line"),
    ("CA 'ibsim0'\n", "", "ibstat line 2 'CA type: simulator': a field before any CA 'name' line"),
    ("\tPort 1:", "\tPort one:", "ibstat line 9 'Port one:': not a port header (Port N:)"),
])
def test_broken_reports_are_refused_naming_the_line(old, new, message):
    assert old in GOOD
    with pytest.raises(_ibstat.IbstatParseError) as exc:
        _ibstat.parse(GOOD.replace(old, new, 1))
    assert str(exc.value).startswith(message)


def test_port_before_ca_is_refused():
    with pytest.raises(_ibstat.IbstatParseError, match=r"ibstat line 1 'Port 1:': a port before any CA 'name' line"):
        _ibstat.parse("Port 1:\n\tState: Active\n")


def test_refusal_is_a_value_error():
    assert issubclass(_ibstat.IbstatParseError, ValueError)
