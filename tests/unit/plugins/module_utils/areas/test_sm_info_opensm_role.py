# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opensm area object's decisions (plugins/module_utils/areas/opensm.py): ibstat ports
(samples ibstat.txt), port choice, SM priorities, HA layout and partition validation."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat
from ansible_collections.rdma.fabric.plugins.module_utils.areas import opensm as F
from ansible_collections.rdma.fabric.tests.unit import samples

IBSTAT = samples.load("ibstat.txt")


def stdout(sample):
    return "".join(l for l in sample.raw.splitlines(True) if not l.startswith(("$ ", "[rc=")))


# ------------------------------------------------------------------ ibstat

def test_ibstat_sim_active_port():
    ports = _ibstat.port_list(stdout(IBSTAT["IBSTAT-SIM-ibstat"]))
    assert ports == [{"ca": "ibsim0", "port": 1, "state": "Active", "physical_state": "LinkUp", "rate": "10",
                      "base_lid": 4, "lmc": 0, "sm_lid": 1, "capability_mask": "0x0050c048",
                      "port_guid": "0x0000000000100004", "link_layer": "IB"}]


def test_ibstat_sim_no_sm_port_is_still_usable():
    # Before any SM runs the port is Initializing with the physical link up: OpenSM must bind there.
    ports = _ibstat.port_list(stdout(IBSTAT["IBSTAT-SIM-NOSM"]))
    assert ports[0]["state"] == "Initializing"
    assert F.select_port(ports) == {"port": ports[0]}
    assert ports[0]["port_guid"] == "0x0000000000100001"
    assert ports[0]["base_lid"] == 0


def test_ibstat_h100_skips_roce_port():
    ports = _ibstat.port_list(stdout(IBSTAT["IBSTAT-REAL-H100-ACTIVE2"]))
    assert len(ports) == 9
    usable = F.usable_ib_ports(ports)
    assert [p["ca"] for p in usable] == ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"]
    assert F.select_port(ports)["port"]["port_guid"] == "0x58a2e10300a7820e"
    assert F.select_port(ports, ca="mlx5_4")["port"]["port_guid"] == "0xa088c20300da656a"
    # mlx5_bond_0 is Ethernet (RoCE): never an SM port
    assert "error" in F.select_port(ports, ca="mlx5_bond_0")


def test_ibstat_a100_first_ca_is_ethernet():
    ports = _ibstat.port_list(stdout(IBSTAT["IBSTAT-REAL-A100-ACTIVE"]))
    assert F.select_port(ports)["port"]["ca"] == "mlx5_1"
    assert F.select_port(ports)["port"]["base_lid"] == 1369


def test_ibstat_spaces_and_ibpanic_tail():
    ports = _ibstat.port_list(stdout(IBSTAT["IBSTAT-REAL-A100-IBPANIC"]))
    assert len(ports) == 8
    assert ports[-1]["port_guid"] == "0x00155dfffd3411f2"


def test_ibstat_switch_header():
    ports = _ibstat.port_list(stdout(IBSTAT["IBSTAT-SIM-SWITCH"]))
    assert ports[0]["ca"] == "ibsim0" and ports[0]["port"] == 0


def test_the_area_uses_the_one_guid_and_ibstat_home():
    from ansible_collections.rdma.fabric.plugins.module_utils.common import _guid
    assert F.normalize_guid("a088:c203:00e3:142a") == _guid.normalize_guid("0xa088c20300e3142a")
    with pytest.raises(ValueError, match="GUID '0x10000000000000000': 17 hex digits"):
        F.normalize_guid("0x10000000000000000")
    with pytest.raises(ValueError, match="ibstat line 1 'ibsim0': not an ibstat line"):
        _ibstat.port_list("ibsim0\n")


def test_select_port_by_guid_and_errors():
    ports = _ibstat.port_list(stdout(IBSTAT["IBSTAT-REAL-H100-ACTIVE2"]))
    assert F.select_port(ports, guid="0x58A2E10300A78796")["port"]["ca"] == "mlx5_6"
    err = F.select_port(ports, guid="0x1234")["error"]
    assert err.startswith("opensm_guid 0x0000000000001234 is not a port of this host")
    err = F.select_port(ports, ca="mlx5_0", port=2)["error"]
    assert "no InfiniBand port with the physical link up on CA mlx5_0 port 2" in err
    assert F.select_port([])["error"].endswith("ibstat lists: no ports")


# ------------------------------------------------------------------ priorities / HA

@pytest.mark.parametrize("role, rank, explicit, master, want", [
    ("master", 1, None, 14, 14), ("standby", 1, None, 14, 13), ("standby", 3, None, 14, 11),
    ("standby", 1, 7, 14, 7), ("master", 1, "", 12, 12)])
def test_sm_priority(role, rank, explicit, master, want):
    assert F.sm_priority(role, rank, explicit, master) == want


def member(host, role, rank=1, priority=None, fabric="f1", guid="", master_priority=14):
    return {"host": host, "role": role, "standby_rank": rank, "priority": priority, "fabric": fabric,
            "guid": guid, "master_priority": master_priority}


def test_ha_ok():
    assert F.ha_errors([member("a", "master"), member("b", "standby"), member("c", "standby", rank=2),
                        member("x", "master", fabric="f2")]) == []


def test_ha_no_master_and_two_masters():
    errors = F.ha_errors([member("a", "standby"), member("b", "standby", rank=2),
                          member("c", "master", fabric="f2"), member("d", "master", fabric="f2", priority=3)])
    assert "fabric f1: exactly one host must have opensm_role=master, found 0 (none)" in errors
    assert "fabric f2: exactly one host must have opensm_role=master, found 2 (c, d)" in errors


def test_ha_equal_priority_refused_unless_allowed():
    members = [member("a", "master"), member("b", "standby"), member("c", "standby")]
    errors = F.ha_errors(members)
    assert len(errors) == 1
    assert errors[0].startswith("fabric f1: SMs b, c share priority 13")
    assert F.ha_errors(members, allow_equal_priority=True) == []


def test_ha_priority_range_and_standby_above_master():
    errors = F.ha_errors([member("a", "master", master_priority=3), member("b", "standby", rank=5, master_priority=3),
                          member("c", "standby", priority=9, master_priority=3)])
    assert any(e.startswith("b: SM priority -2 is outside 0-15") for e in errors)
    assert "fabric f1: standby c has priority 9 above the master's 3; it would take over as soon as it starts" in errors


def test_ha_guid_format_and_duplicates():
    errors = F.ha_errors([member("a", "master", guid="0x100001"), member("b", "standby", guid="0x0000000000100001"),
                          member("c", "standby", rank=2, guid="100007")])
    assert "fabric f1: hosts a, b bind the same port GUID 0x0000000000100001" in errors
    assert any(e.startswith("c: opensm_guid GUID '100007': not a 64-bit GUID") for e in errors)


def test_ha_bad_role():
    assert F.ha_errors([member("a", "primary")]) == ["a: opensm_role must be master or standby, got 'primary'"]


# ------------------------------------------------------------------ partitions

def test_partitions_ok_and_rendered():
    parts = [{"name": "storage", "pkey": "0x0002", "ipoib": True, "mtu": 5, "rate": 7,
              "members": [{"guid": "0x100004", "membership": "limited"}, {"guid": "ALL_SWITCHES"}]},
             {"name": "compute", "pkey": 3, "members": [{"guid": "ALL_CAS", "membership": "both"}]}]
    assert F.partition_errors(parts) == []
    lines = F.partition_lines(F.with_default_partition(parts))
    assert lines == ["Default=0x7fff,ipoib : ALL=full ;",
                     "storage=0x0002,ipoib,mtu=5,rate=7 : 0x0000000000100004=limited, ALL_SWITCHES=full ;",
                     "compute=0x0003 : ALL_CAS=both ;"]


def test_default_partition_kept_or_dropped():
    own = [{"name": "Default", "pkey": "0x7fff", "members": [{"guid": "ALL", "membership": "limited"}]}]
    assert F.with_default_partition(own) == own
    assert F.with_default_partition([], keep_default=False) == []
    assert F.with_default_partition([])[0]["pkey"] == 0x7FFF


def test_partition_errors():
    errors = F.partition_errors([
        {"name": "a", "pkey": "0x8001"},
        {"name": "a", "pkey": 2, "mtu": 9, "rate": 1, "members": [{"guid": "zz"}, {"guid": "ALL", "membership": "half"}]},
        {"name": "b", "pkey": "0x0002"},
        {"name": "c", "pkey": "0x7fff"},
        {"name": "bad name", "pkey": "x"},
        {"name": "d", "pkey": 0},
    ])
    assert errors == [
        "opensm_partitions[0].pkey 0x8001 is outside 0x0001-0x7fff (the full-membership bit 0x8000 is set by "
        "'membership', not in the key)",
        "opensm_partitions[1].name 'a' is already used by opensm_partitions[0]",
        "opensm_partitions[1].mtu 9 must be an IB MTU code 1-5 (1=256 .. 5=4096)",
        "opensm_partitions[1].rate 1 must be an IB rate code 2-22 (e.g. 3=10G, 7=40G, 16=56G)",
        "opensm_partitions[1].members[0].guid 'zz' must be a port GUID (0x...) or ALL, ALL_CAS, ALL_SWITCHES, "
        "ALL_ROUTERS, SELF",
        "opensm_partitions[1].members[1].membership 'half' must be full, limited or both",
        "opensm_partitions[2].pkey 0x0002 is already used by opensm_partitions[1]",
        "opensm_partitions[3]: pkey 0x7fff is the Default partition; name it Default, got 'c'",
        "opensm_partitions[4].name 'bad name' must be letters, digits, '_', '.', '-'",
        "opensm_partitions[4].pkey 'x' is not a number",
        "opensm_partitions[5].pkey 0x0000 is outside 0x0001-0x7fff (the full-membership bit 0x8000 is set by "
        "'membership', not in the key)",
    ]


def test_partition_errors_not_a_list():
    assert F.partition_errors({"name": "x"}) == ["opensm_partitions must be a list of dicts, got {'name': 'x'}"]


@pytest.mark.parametrize("value, want", [(True, "TRUE"), (False, "FALSE"), (None, "(null)"), (10, "10"), ("0x03", "0x03")])
def test_conf_value(value, want):
    assert F.conf_text(value) == want
