# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fabricsim prints the ibstat and ibstatus layouts #29 left out, as profile options, and the
collection's parsers read them: ibstat's Router and iWARP RNIC CAs (ibstat.c node_type_str; an
iWARP RNIC only with a pre-2008 libibumad, whose ibstat printed no Link layer) and its
``'<ca>' IB device can't be found`` panic; ibstatus's ``unknown`` values and the script before
2010 without ``link_layer``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat, _ibstatus
from ansible_collections.rdma.fabric.tests.unit import samples


def _options(sim, key, value):
    def edit(data):
        data[key] = value
    sim.edit_profile(edit)


def test_router_ca_header_and_type_line(sim):
    sim.init("dgx-h100-ib")
    _options(sim, "ibstat", {"node_types": {"mlx5_0": "Router"}})
    out = sim.out("ibstat")
    assert out.startswith("Router 'mlx5_0'\n\tRouter type: ")
    cas = _ibstat.parse(out)["cas"]
    assert [ca["kind"] for ca in cas[:2]] == ["Router", "CA"]
    assert cas[0]["ports"][0]["fields"]["Link layer"] == "InfiniBand"
    assert sim.out("ibstat", "mlx5_0").startswith("Router 'mlx5_0'\n")


def test_iwarp_rnic_is_not_listed_by_a_current_libibumad(sim):
    """is_ib_type() keeps node types 1..3: the RNIC is left out, and naming it panics."""
    sim.init("dgx-h100-ib")
    _options(sim, "ibstat", {"node_types": {"mlx5_0": "iWARP RNIC"}})
    names = [ca["name"] for ca in _ibstat.parse(sim.out("ibstat"))["cas"]]
    assert names and "mlx5_0" not in names
    assert "mlx5_0\n" not in sim.out("ibstat", "-l")
    out, err, rc = sim.run("ibstat", "mlx5_0")
    assert (out, rc) == ("", 255)
    assert err == "ibpanic: [1000] main: 'mlx5_0' IB device can't be found: Success\n"


def test_iwarp_rnic_with_the_2007_libibumad_has_no_link_layer(sim):
    sim.init("dgx-h100-ib")
    _options(sim, "ibstat", {"node_types": {"mlx5_0": "iWARP RNIC"}, "umad_2007": True})
    out = sim.out("ibstat", "mlx5_0")
    assert out.startswith("iWARP RNIC 'mlx5_0'\n\tiWARP RNIC type: ") and "Link layer" not in out
    (ca,) = _ibstat.parse(out)["cas"]
    assert ca["kind"] == "iWARP RNIC" and "Link layer" not in ca["ports"][0]["fields"]


def test_unknown_device_panics_as_ibstat_does(sim):
    """The same line as the real run (IBSTAT-SIM-BADDEV), pid aside."""
    sim.init("hgx-h100-roce")
    out, err, rc = sim.run("ibstat", "mlx5_99")
    real = [line for line in samples.load("ibstat.txt")["IBSTAT-SIM-BADDEV"].raw.splitlines() if "ibpanic" in line][0]
    assert (out, rc) == ("", 255)
    assert err.strip().split("] ", 1)[1] == real.split("] ", 1)[1].replace("mlx5_9", "mlx5_99")
    parsed = _ibstat.parse(out + err)
    assert parsed["cas"] == [] and parsed["errors"] == [err.strip()]


def test_ibstatus_unreadable_files_print_unknown(sim):
    sim.init("dgx-h100-ib")
    _options(sim, "ibstatus", {"unreadable": ["default gid", "rate", "link_layer"]})
    out = sim.out("ibstatus", "mlx5_0:1")
    assert "\tdefault gid:\t unknown\n" in out and "\trate:\t\t unknown\n" in out and "\tlink_layer:\t IB\n" in out
    (port,) = _ibstatus.parse(out)["ports"]
    assert (port["default_gid"], port["rate"]) == (None, None)
    assert port["link_layer"] == "InfiniBand"                   # the script's fallback 'IB', read as InfiniBand
    assert port["state"] is not None


def test_ibstatus_before_2010_prints_no_link_layer(sim):
    sim.init("dgx-h100-ib")
    _options(sim, "ibstatus", {"link_layer": False})
    out = sim.out("ibstatus", "mlx5_0", "mlx5_0:7")
    assert "link_layer" not in out and out.count("status:\n") == 2
    ports = _ibstatus.parse(out)["ports"]
    assert [(p["device"], p["port"]) for p in ports] == [("mlx5_0", 1), ("mlx5_0", 7)]
    assert all(p.get("link_layer") is None for p in ports)
