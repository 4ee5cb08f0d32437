# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rail planner: both schemes in IPv4 and IPv6, stability of the allocation, every error,
switch counts, and the CSV / table / SVG renderings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import csv
import io
import xml.etree.ElementTree as ET

import netaddr
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.rail_plan import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts as rf
from ansible_collections.rdma.fabric.plugins.plugin_utils import _rail_plan as rp
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.facts.test_rdma_facts import TOPO_TEXT, host_sysfs

FILTERS = FilterModule().filters()
V4_POOLS = ["10.10.%d.0/24" % rail for rail in range(4)]
V6_POOLS = ["fd00:10:%d::/56" % rail for rail in range(4)]


def cluster(count, rails=4, start=1):
    return dict(("gpu-%03d" % index, {"rails": ["ens%dnp0" % (rail + 1) for rail in range(rails)]})
                for index in range(start, start + count))


def addresses(result):
    return dict((name, [row["cidr"] for row in node["rails"]]) for name, node in result["nodes"].items())


def test_filter_names():
    assert sorted(FILTERS) == ["rail_layouts", "rail_plan", "rail_plan_csv", "rail_plan_svg", "rail_plan_table",
                               "rail_switches"]


# --------------------------------------------------------------------------- schemes

def test_p2p31_leaf_even_nic_odd():
    result = FILTERS["rail_plan"](cluster(40), V4_POOLS, management="192.168.0.0/24")
    assert result["scheme"] == "p2p31" and result["family"] == 4
    taken = set()
    for name, node in result["nodes"].items():
        for rail, row in enumerate(node["rails"]):
            ip = netaddr.IPAddress(row["address"])
            assert row["prefix"] == 31 and int(ip) % 2 == 1
            assert netaddr.IPAddress(row["peer"]) == ip - 1 == netaddr.IPAddress(row["gateway"])
            assert ip in netaddr.IPNetwork(V4_POOLS[rail])
            assert row["network"] == str(netaddr.IPNetwork(row["cidr"]).cidr)
            assert row["netdev"] == "ens%dnp0" % (rail + 1)
            assert ip not in taken
            taken.add(ip)
    # 64-port leaves at 1:1 hold 32 hosts: node 33 starts stripe 1 on every rail at port 1
    first, thirty_third = result["nodes"]["gpu-001"], result["nodes"]["gpu-033"]
    assert [row["leaf"] for row in first["rails"]] == ["rail%d-leaf0" % rail for rail in range(4)]
    assert first["leaf_port"] == 1 and result["nodes"]["gpu-032"]["leaf_port"] == 32
    assert [row["leaf"] for row in thirty_third["rails"]] == ["rail%d-leaf1" % rail for rail in range(4)]
    assert thirty_third["leaf_port"] == 1
    assert first["rails"][0]["cidr"] == "10.10.0.1/31" and result["nodes"]["gpu-002"]["rails"][3]["cidr"] == "10.10.3.3/31"
    assert len(result["table"]) == 40 * 4


def test_p2p127_ipv6():
    result = FILTERS["rail_plan"](cluster(3), V6_POOLS, scheme="p2p127", management="fd00:1::/64")
    assert result["scheme"] == "p2p127" and result["family"] == 6
    row = result["nodes"]["gpu-002"]["rails"][2]
    assert row["cidr"] == "fd00:10:2::3/127" and row["peer"] == "fd00:10:2::2" and row["prefix"] == 127
    # p2p picks the family from the pools
    assert FILTERS["rail_plan"](cluster(3), V6_POOLS)["scheme"] == "p2p127"


def test_shared_ipv4_subnet_per_rail_and_stripe():
    # 8-port leaves at 1:1: 4 host ports; default subnet /29 (network, gateway, 4 hosts, broadcast)
    result = FILTERS["rail_plan"](cluster(6), V4_POOLS, scheme="shared", leaf_ports=8)
    assert result["subnet_prefix"] == 29
    gpu1, gpu4, gpu5 = (result["nodes"]["gpu-%03d" % index] for index in (1, 4, 5))
    assert gpu1["rails"][1]["cidr"] == "10.10.1.2/29" and gpu1["rails"][1]["gateway"] == "10.10.1.1"
    assert gpu4["rails"][1]["cidr"] == "10.10.1.5/29" and gpu4["leaf_port"] == 4
    assert gpu5["rails"][1]["cidr"] == "10.10.1.10/29" and gpu5["rails"][1]["gateway"] == "10.10.1.9"
    assert gpu5["rails"][1]["network"] == "10.10.1.8/29" and gpu5["rails"][1]["leaf"] == "rail1-leaf1"
    assert gpu5["leaf_port"] == 1 and gpu5["stripe"] == 1


def test_shared_ipv6_64_per_stripe():
    result = FILTERS["rail_plan"](cluster(34), V6_POOLS, scheme="shared")
    assert result["subnet_prefix"] == 64
    row = result["nodes"]["gpu-001"]["rails"][0]
    assert row["cidr"] == "fd00:10::2/64" and row["gateway"] == "fd00:10::1"
    row = result["nodes"]["gpu-033"]["rails"][3]
    assert row["cidr"] == "fd00:10:3:1::2/64" and row["gateway"] == "fd00:10:3:1::1"
    assert row["leaf"] == "rail3-leaf1"


def test_rails_from_rdma_facts(tmp_path, monkeypatch):
    host_sysfs(tmp_path, monkeypatch)
    subsets = set(rf.SUBSETS)
    raw = {"devices": rf.read_rdma_sysfs(subsets), "topo_text": TOPO_TEXT, "gpu_list": None,
           "gpu_pci": {}, "errors": []}
    rails = rf.derive(raw, subsets)["rails"]
    result = FILTERS["rail_plan"]({"gpu-a": {"rails": rails}}, ["10.20.0.0/24", "10.20.1.0/24"])
    rows = result["nodes"]["gpu-a"]["rails"]
    assert [row["device"] for row in rows] == [rail["device"] for rail in rails[:2]]
    assert [row["netdev"] for row in rows] == [rail["netdev"] for rail in rails[:2]]
    # more rail NICs than the plan has rails: the first ones are used
    wider = FILTERS["rail_plan"]({"gpu-a": {"rails": rails}}, ["10.20.0.0/24"])
    assert len(wider["nodes"]["gpu-a"]["rails"]) == 1


def test_list_form_and_pinned_address():
    nodes = [{"name": "n1", "rails": [{"netdev": "eth1", "address": "10.10.0.9/31"}, "eth2"]},
             {"name": "n2", "rails": ["eth1", "eth2"]}]
    result = FILTERS["rail_plan"](nodes, V4_POOLS[:2])
    assert addresses(result) == {"n1": ["10.10.0.9/31", "10.10.1.1/31"], "n2": ["10.10.0.1/31", "10.10.1.3/31"]}


# --------------------------------------------------------------------------- stability

def test_stability_64_add_8_remove_1_add_1():
    plan64 = FILTERS["rail_plan"](cluster(64), V4_POOLS)
    assert plan64["changed"] and len(plan64["new"]) == 64
    again = FILTERS["rail_plan"](cluster(64), V4_POOLS, allocation=plan64["allocation"])
    assert not again["changed"] and again["new"] == [] and addresses(again) == addresses(plan64)

    plan72 = FILTERS["rail_plan"](cluster(72), V4_POOLS, allocation=plan64["allocation"])
    assert sorted(plan72["new"]) == ["gpu-%03d" % index for index in range(65, 73)]
    before = addresses(plan64)
    after = addresses(plan72)
    assert dict((name, after[name]) for name in before) == before
    assert plan72["nodes"]["gpu-065"]["rails"][0]["leaf"] == "rail0-leaf2"

    # gpu-010 leaves: without release it keeps its addresses; the others do not move
    nodes71 = cluster(72)
    del nodes71["gpu-010"]
    kept = FILTERS["rail_plan"](nodes71, V4_POOLS, allocation=plan72["allocation"])
    assert kept["retained"] == ["gpu-010"] and kept["allocation"]["nodes"]["gpu-010"] == plan72["allocation"]["nodes"]["gpu-010"]
    assert not kept["changed"]
    released = FILTERS["rail_plan"](nodes71, V4_POOLS, allocation=plan72["allocation"], release=["gpu-010"])
    assert released["released"] == ["gpu-010"] and "gpu-010" not in released["allocation"]["nodes"]
    after_remove = addresses(released)
    assert all(after_remove[name] == after[name] for name in after_remove)

    # one more node: it takes the freed slot and addresses; nobody else moves
    nodes72 = dict(nodes71, **cluster(1, start=100))
    plan_new = FILTERS["rail_plan"](nodes72, V4_POOLS, allocation=released["allocation"])
    assert plan_new["new"] == ["gpu-100"]
    final = addresses(plan_new)
    assert all(final[name] == after[name] for name in after_remove)
    assert final["gpu-100"] == after["gpu-010"]
    assert plan_new["nodes"]["gpu-100"]["slot"] == plan72["nodes"]["gpu-010"]["slot"]

    # the allocation round-trips through YAML unchanged
    import yaml
    assert yaml.safe_load(yaml.safe_dump(plan_new["allocation"])) == plan_new["allocation"]


def test_retained_node_addresses_are_not_reused():
    first = FILTERS["rail_plan"](cluster(3), V4_POOLS)
    nodes = cluster(3)
    del nodes["gpu-002"]
    nodes.update(cluster(1, start=9))
    result = FILTERS["rail_plan"](nodes, V4_POOLS, allocation=first["allocation"])
    assert result["nodes"]["gpu-009"]["rails"][0]["cidr"] == "10.10.0.7/31"
    assert result["nodes"]["gpu-009"]["slot"] == 3


def test_hand_made_allocation_is_kept():
    allocation = {"version": 1, "scheme": "p2p31", "nodes": {
        "gpu-002": {"slot": 5, "rails": ["10.10.0.101/31", "10.10.1.101/31", "10.10.2.101/31", "10.10.3.101/31"]}}}
    result = FILTERS["rail_plan"](cluster(3), V4_POOLS, allocation=allocation)
    assert addresses(result)["gpu-002"] == allocation["nodes"]["gpu-002"]["rails"]
    assert result["nodes"]["gpu-002"]["leaf_port"] == 6
    assert result["nodes"]["gpu-001"]["slot"] == 0 and result["nodes"]["gpu-003"]["slot"] == 1


# --------------------------------------------------------------------------- errors

def raises(match, nodes, pools=V4_POOLS, **kwargs):
    with pytest.raises(AnsibleFilterError, match=match):
        FILTERS["rail_plan"](nodes, pools, **kwargs)


def test_error_pool_exhausted():
    raises(r"rail_plan: pools\[1\]: rail 1 pool 10\.10\.1\.0/29 is exhausted: no free /31 for node gpu-005",
           cluster(5, rails=2), ["10.10.0.0/24", "10.10.1.0/29"])
    FILTERS["rail_plan"](cluster(4, rails=2), ["10.10.0.0/24", "10.10.1.0/29"])  # exactly fits


def test_error_shared_exhausted():
    raises(r"rail 0 subnet 10\.10\.0\.0/29 of stripe 0 is exhausted \(node gpu-006\)", cluster(6, rails=1),
           ["10.10.0.0/24"], scheme="shared", leaf_ports=64, subnet_prefix=29)
    raises(r"no /29 subnet left for stripe 1", cluster(5, rails=1), ["10.10.0.0/29"], scheme="shared", leaf_ports=8)


def test_error_pools_overlap_each_other():
    raises(r"rail 1 pool 10\.10\.0\.128/25 overlaps rail 0 pool 10\.10\.0\.0/24", cluster(1, rails=2),
           ["10.10.0.0/24", "10.10.0.128/25"])


def test_error_pool_overlaps_management():
    raises(r"rail 0 pool 10\.10\.0\.0/24 overlaps the management network 10\.10\.0\.0/16", cluster(1),
           V4_POOLS, management=["192.168.0.0/24", "10.10.0.0/16"])
    raises(r"rail 0 pool fd00:10::/56 overlaps the management network fd00::/16", cluster(1), V6_POOLS,
           management="fd00::/16")


def test_error_fewer_rail_nics():
    nodes = cluster(3)
    nodes["gpu-002"] = {"rails": ["ens1np0", "ens2np0"]}
    raises(r"nodes\.gpu-002: has 2 rail NICs \(ens1np0, ens2np0\), the plan has 4 rails", nodes)


def test_error_duplicate_address_in_inventory():
    nodes = {"a": {"rails": [{"netdev": "e1", "address": "10.10.0.5/31"}]},
             "b": {"rails": [{"netdev": "e1", "address": "10.10.0.5/31"}]}}
    raises(r"nodes\.b\.rails\[0\]\.address: address 10\.10\.0\.5 on rail 0 is already a's", nodes, ["10.10.0.0/24"])


def test_error_duplicate_address_in_allocation():
    allocation = {"version": 1, "nodes": {"a": {"slot": 0, "rails": ["10.10.0.1/31"]},
                                          "b": {"slot": 1, "rails": ["10.10.0.1/31"]}}}
    raises(r"allocation\.nodes\.b\.rails\[0\]: address 10\.10\.0\.1 on rail 0 is already a's", cluster(1, rails=1),
           ["10.10.0.0/24"], allocation=allocation)


def test_error_pinned_address_taken_by_allocation():
    allocation = FILTERS["rail_plan"](cluster(1, rails=1), ["10.10.0.0/24"])["allocation"]
    nodes = dict(cluster(1, rails=1), new={"rails": [{"netdev": "e1", "address": "10.10.0.1/31"}]})
    raises(r"nodes\.new\.rails\[0\]\.address: address 10\.10\.0\.1 on rail 0 is already gpu-001's", nodes,
           ["10.10.0.0/24"], allocation=allocation)


def test_error_duplicate_slot_in_allocation():
    allocation = {"version": 1, "nodes": {"a": {"slot": 0, "rails": ["10.10.0.1/31"]},
                                          "b": {"slot": 0, "rails": ["10.10.0.3/31"]}}}
    raises(r"allocation\.nodes\.b\.slot: slot 0 is already a's", {}, ["10.10.0.0/24"], allocation=allocation)


def test_error_same_nic_on_two_rails():
    raises(r"nodes\.n\.rails\[1\]: netdev eth1 is already rail 0", {"n": {"rails": ["eth1", "eth1"]}},
           V4_POOLS[:2])


def test_error_duplicate_node_in_list():
    raises(r"nodes: node n is listed twice", [{"name": "n", "rails": ["a"]}, {"name": "n", "rails": ["a"]}],
           V4_POOLS[:1])


def test_error_address_in_management_or_other_rail_or_wrong_end():
    nodes = {"n": {"rails": [{"netdev": "e1", "address": "10.10.0.4/31"}]}}
    raises(r"nodes\.n\.rails\[0\]\.address: address 10\.10\.0\.4/31 is not the NIC \(odd\) end of a /31 in rail 0",
           nodes, ["10.10.0.0/24"])
    nodes = {"n": {"rails": [{"netdev": "e1", "address": "10.10.1.5/31"}, "e2"]}}
    raises(r"address 10\.10\.1\.5/31 of rail 0 is in rail 1's pool 10\.10\.1\.0/24", nodes, V4_POOLS[:2])
    nodes = {"n": {"rails": [{"netdev": "e1", "address": "192.168.0.5/31"}]}}
    raises(r"address 192\.168\.0\.5/31 is in the management network 192\.168\.0\.0/24", nodes, ["10.10.0.0/24"],
           management="192.168.0.0/24")


def test_error_allocation_does_not_fit_the_pools():
    allocation = FILTERS["rail_plan"](cluster(2, rails=1), ["10.10.0.0/24"])["allocation"]
    raises(r"allocation\.nodes\.gpu-001\.rails\[0\]: address 10\.10\.0\.1/31 is not the NIC \(odd\) end of a /31 "
           r"in rail 0 pool 10\.20\.0\.0/24", cluster(2, rails=1), ["10.20.0.0/24"], allocation=allocation)
    raises(r"the allocation was made with p2p31, not shared", cluster(2, rails=1), ["10.10.0.0/24"],
           scheme="shared", allocation=allocation)
    raises(r"allocation\.nodes\.gpu-001\.rails: expected 2 addresses", cluster(2, rails=2), V4_POOLS[:2],
           allocation=allocation)


def test_error_inventory_pin_differs_from_allocation():
    allocation = FILTERS["rail_plan"](cluster(1, rails=1), ["10.10.0.0/24"])["allocation"]
    nodes = {"gpu-001": {"rails": [{"netdev": "e1", "address": "10.10.0.7/31"}]}}
    raises(r"nodes\.gpu-001\.rails\[0\]\.address: 10\.10\.0\.7/31 differs from the allocation \(10\.10\.0\.1/31\)",
           nodes, ["10.10.0.0/24"], allocation=allocation)


@pytest.mark.parametrize("kwargs, match", [
    ({"scheme": "ring"}, r"scheme: expected one of p2p, p2p31, p2p127, shared, got 'ring'"),
    ({"scheme": "p2p127"}, r"scheme: p2p127 needs IPv6 pools"),
    ({"pools": ["10.10.0.0/24", "fd00::/56"]}, r"pools: mixes IPv4 and IPv6"),
    ({"pools": ["10.10.0.1/24"]}, r"pools\[0\]: '10\.10\.0\.1/24' has host bits set \(the network is 10\.10\.0\.0/24\)"),
    ({"pools": ["10.10.0.0"]}, r"pools\[0\]: expected a network in CIDR form"),
    ({"pools": ["10.10.0.0/33"]}, r"pools\[0\]: '10\.10\.0\.0/33' is not a network"),
    ({"pools": []}, r"pools: expected a list"),
    ({"management": "mgmt"}, r"management\[0\]: expected a network in CIDR form"),
    ({"leaf_ports": 0}, r"leaf_ports: expected an integer >= 2, got 0"),
    ({"oversubscription": "fast"}, r"oversubscription: expected a number >= 1 or N:M, got 'fast'"),
    ({"oversubscription": 0.5}, r"oversubscription: expected a number >= 1"),
    ({"oversubscription": float("inf")}, r"oversubscription: expected a number >= 1 \(3 for 3:1\), got inf"),
    ({"release": ["gpu-001"]}, r"release: node gpu-001 is still in the inventory"),
    ({"allocation": {"version": 2}}, r"allocation\.version: expected 1, got 2"),
    ({"allocation": {"nodes": {"x": {"slot": -1, "rails": []}}}}, r"allocation\.nodes\.x\.slot: expected an integer >= 0, got -1"),
    ({"scheme": "shared", "subnet_prefix": 31}, r"subnet_prefix: /31 leaves no room"),
])
def test_errors_name_the_value(kwargs, match):
    kwargs = dict(kwargs)
    pools = kwargs.pop("pools", V4_POOLS[:1])
    raises(match, cluster(1, rails=1), pools, **kwargs)


def test_error_bad_node_shapes():
    raises(r"nodes: expected a dict", "gpu-001", V4_POOLS[:1])
    raises(r"nodes\.n\.rails: expected a list of rail NICs, got None", {"n": {}}, V4_POOLS[:1])
    raises(r"nodes\.n\.rails\[0\]: a rail NIC needs a netdev or an RDMA device", {"n": {"rails": [{}]}}, V4_POOLS[:1])


# --------------------------------------------------------------------------- switch counting

def test_switch_counts_64_nodes_8_gpus_4_and_8_rails():
    """64 nodes of 8 GPUs, 64-port leaves and spines at 1:1.

    A leaf keeps 32 ports for hosts and 32 for uplinks. Each rail has 64 host ports (one NIC of every
    node), so 2 leaves per rail. 4 rails: 8 leaves, 8 x 32 = 256 uplinks, 256 / 64 = 4 spines, 12
    switches. 8 rails: 16 leaves, 512 uplinks, 8 spines, 24 switches. The naive count (all NICs over
    64 ports) would be 4 and 8 leaves with no uplink at all.
    """
    four, eight = FILTERS["rail_layouts"](64, 8, [4, 8])
    for entry, rails in ((four, 4), (eight, 8)):
        assert entry["rails"] == rails and entry["gpus_per_nic"] == 8 // rails
        assert entry["host_ports_per_leaf"] == 32 and entry["uplink_ports_per_leaf"] == 32
        assert entry["host_ports_per_rail"] == 64 and entry["host_ports"] == 64 * rails
        assert entry["leaves_per_rail"] == 2 and entry["leaves"] == 2 * rails
        assert entry["uplinks"] == 32 * 2 * rails and entry["spines"] == 32 * 2 * rails // 64
        assert entry["switches"] == entry["leaves"] + entry["spines"]
        assert entry["naive_leaves"] == rails
    assert (four["leaves"], four["uplinks"], four["spines"], four["switches"]) == (8, 256, 4, 12)
    assert (eight["leaves"], eight["uplinks"], eight["spines"], eight["switches"]) == (16, 512, 8, 24)
    table = FILTERS["rail_layouts"](64, 8, [4, 8], table=True).splitlines()
    assert table[0].split()[0] == "rails" and table[2].split() == ["4", "2", "256", "32", "2", "8", "256", "4", "12", "4"]
    assert table[3].split() == ["8", "1", "512", "32", "2", "16", "512", "8", "24", "8"]


def test_switch_counts_oversubscribed_and_partial_leaves():
    # 3:1 on 64 ports: 48 host ports, 16 uplinks; 64 nodes: a full leaf (16 uplinks) and one of 16 hosts
    # (ceil(16/3) = 6 uplinks) per rail
    counts = FILTERS["rail_switches"](64, 4, oversubscription="3:1")
    assert (counts["host_ports_per_leaf"], counts["uplink_ports_per_leaf"]) == (48, 16)
    assert counts["leaf_hosts"] == [{"stripe": 0, "hosts": 48, "uplinks": 16}, {"stripe": 1, "hosts": 16, "uplinks": 6}]
    assert counts["uplinks"] == 4 * 22 and counts["spines"] == 2
    # one leaf in all: no spine
    single = FILTERS["rail_switches"](20, 1)
    assert (single["leaves"], single["uplinks"], single["spines"]) == (1, 0, 0)
    # 2:1 on 64 ports: 42 host ports (42/22 <= 2), not 43 (43/21 > 2)
    assert FILTERS["rail_switches"](10, 1, oversubscription=2)["host_ports_per_leaf"] == 42
    with pytest.raises(AnsibleFilterError, match=r"rail_switches: spine_ports: 80 leaves cannot all reach a spine of 32"):
        FILTERS["rail_switches"](320, 8, leaf_ports=64, spine_ports=32)
    with pytest.raises(AnsibleFilterError, match=r"rail_layouts: rail_options: 3 rails do not divide 8 GPUs"):
        FILTERS["rail_layouts"](64, 8, [3])


def test_plan_switch_counts_match_the_counter():
    result = FILTERS["rail_plan"](cluster(64, rails=8), ["10.%d.0.0/24" % rail for rail in range(8)])
    counts = rp.switch_count(64, 8)
    for key in ("leaves", "leaves_per_rail", "uplinks", "spines", "switches", "host_ports"):
        assert result["switches"][key] == counts[key], key
    assert len(result["leaves"]) == 16 and result["spines"] == ["spine%d" % index for index in range(8)]
    assert all(leaf["hosts"] == 32 and leaf["uplinks"] == 32 for leaf in result["leaves"])


# --------------------------------------------------------------------------- renderings

def test_csv_table_svg():
    result = FILTERS["rail_plan"](cluster(3, rails=2), V4_POOLS[:2])
    rows = list(csv.DictReader(io.StringIO(FILTERS["rail_plan_csv"](result))))
    assert len(rows) == 6 and rows[3] == {"node": "gpu-002", "rail": "1", "netdev": "ens2np0", "device": "",
                                          "address": "10.10.1.3", "prefix": "31", "peer": "10.10.1.2",
                                          "leaf": "rail1-leaf0", "leaf_port": "2"}
    text = FILTERS["rail_plan_table"](result).splitlines()
    assert text[0].split()[:2] == ["NODE", "RAIL"] and len(text) == 2 + 6 + 1
    assert text[-1].startswith("3 nodes, 2 rails (p2p31): 2 leaves")
    root = ET.fromstring(FILTERS["rail_plan_svg"](result).split("\n", 1)[1])
    ns = "{http://www.w3.org/2000/svg}"
    assert [g.get("id") for g in root.iter(ns + "g")] == ["gpu-001", "gpu-002", "gpu-003"]
    assert len([r for r in root.iter(ns + "rect") if r.get("class") == "leaf"]) == 2
    assert len([r for r in root.iter(ns + "rect") if r.get("class") == "spine"]) == result["switches"]["spines"] == 1
    assert len([line for line in root.iter(ns + "line") if line.get("class") == "link"]) == 6
    with pytest.raises(AnsibleFilterError, match="rail_plan_csv: expected the dict rail_plan returns"):
        FILTERS["rail_plan_csv"]("plan")


def test_inputs_not_modified():
    nodes = cluster(4)
    allocation = FILTERS["rail_plan"](cluster(2), V4_POOLS)["allocation"]
    before_nodes, before_alloc = copy.deepcopy(nodes), copy.deepcopy(allocation)
    FILTERS["rail_plan"](nodes, V4_POOLS, allocation=allocation)
    assert nodes == before_nodes and allocation == before_alloc
