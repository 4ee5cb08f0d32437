# -*- coding: utf-8 -*-
"""The rails role's filters: plan -> rail_addresses config, persistent files, verify and cabling findings."""
from __future__ import absolute_import, division, print_function

import pytest

from ansible_collections.rdma.fabric.plugins.filter import rails as F
from ansible_collections.rdma.fabric.plugins.plugin_utils import _rail_plan, _rails_role

NICS = [{"netdev": "enp24s0np0", "device": "mlx5_0"}, {"netdev": "enp64s0np0", "device": "mlx5_1"}]


@pytest.fixture
def plan():
    return _rail_plan.plan({"gpu-01": NICS, "gpu-02": NICS}, ["10.10.0.0/24", "10.10.1.0/24"])


SYSCTLS = {"arp_ignore": 1, "arp_announce": 2, "rp_filter": 2}


def test_interfaces_from_the_plan(plan):
    config = F.rails_interfaces(plan["nodes"]["gpu-02"], sysctls=SYSCTLS)
    assert config == [
        {"interface": "enp24s0np0", "addresses": ["10.10.0.3/31"], "link_up": True, "arp_ignore": 1,
         "arp_announce": 2, "rp_filter": 2, "table": 100, "rule_priority": 1000, "gateways": ["10.10.0.2"]},
        {"interface": "enp64s0np0", "addresses": ["10.10.1.3/31"], "link_up": True, "arp_ignore": 1,
         "arp_announce": 2, "rp_filter": 2, "table": 101, "rule_priority": 1001, "gateways": ["10.10.1.2"]}]
    bare = F.rails_interfaces(plan["nodes"]["gpu-02"], policy_routing=False)
    assert "table" not in bare[0] and "arp_ignore" not in bare[0]


def test_interfaces_bad_input(plan):
    with pytest.raises(Exception, match="rails_sysctls.arp_filter: unknown"):
        F.FilterModule().filters()["rails_interfaces"](plan["nodes"]["gpu-01"], sysctls={"arp_filter": 1})
    with pytest.raises(Exception, match="rails_table_base=253: rail 0 would use the kernel's table 253"):
        F.FilterModule().filters()["rails_interfaces"](plan["nodes"]["gpu-01"], table_base=253)
    with pytest.raises(Exception, match="node_plan: expected one node of the rail plan"):
        F.FilterModule().filters()["rails_interfaces"](plan)


def test_networkd_and_keyfiles(plan):
    node = plan["nodes"]["gpu-01"]
    config = F.rails_interfaces(node, sysctls=SYSCTLS)
    files = F.rails_files(node, config, "networkd", header="hdr")
    assert [f["path"] for f in files] == ["/etc/systemd/network/60-rdma-rail0-enp24s0np0.network",
                                          "/etc/systemd/network/60-rdma-rail1-enp64s0np0.network",
                                          "/etc/sysctl.d/60-rdma-rails.conf"]
    text = files[0]["content"]
    assert text.startswith("# hdr\n[Match]\nName=enp24s0np0\n")
    assert "Address=10.10.0.1/31\n" in text
    assert "[Route]\nDestination=10.10.0.0/31\nPreferredSource=10.10.0.1\nScope=link\nTable=100\n" in text
    assert "[Route]\nGateway=10.10.0.0\nTable=100\n" in text
    assert "[RoutingPolicyRule]\nFrom=10.10.0.1\nTable=100\nPriority=1000\n" in text
    assert "net.ipv4.conf.enp64s0np0.rp_filter = 2\n" in files[2]["content"]
    nm = F.rails_files(node, config, "networkmanager")
    assert nm[0]["path"] == "/etc/NetworkManager/system-connections/rdma-rail0-enp24s0np0.nmconnection"
    assert nm[0]["mode"] == "0600"
    key = nm[0]["content"]
    assert "interface-name=enp24s0np0\n" in key and "[ipv4]\nmethod=manual\nnever-default=true\naddress1=10.10.0.1/31\n" in key
    assert "route1=10.10.0.0/31\nroute1_options=table=100,src=10.10.0.1\n" in key
    assert "route2=0.0.0.0/0,10.10.0.0\nroute2_options=table=100\n" in key
    assert "routing-rule1=priority 1000 from 10.10.0.1 table 100\n" in key
    assert "[ipv6]\nmethod=link-local\n" in key
    with pytest.raises(_rails_role.RailsRoleError, match="rails_backend='ifupdown'"):
        _rails_role.persistent_files(node, config, "ifupdown")


def live_from(config):
    out = []
    for entry in config:
        addr = entry["addresses"][0]
        ip = addr.split("/")[0]
        net = _rails_role._network_of(addr)
        out.append({"interface": entry["interface"], "link_up": True, "addresses": [addr],
                    "sysctls": {"arp_ignore": 1, "arp_announce": 2, "rp_filter": 2},
                    "rules": [{"priority": entry["rule_priority"], "from": ip, "table": entry["table"]}],
                    "routes": [{"dst": net, "gateway": None, "src": ip, "dev": entry["interface"]},
                               {"dst": "default", "gateway": entry["gateways"][0], "src": None,
                                "dev": entry["interface"]}]})
    return out


def facts_with(gids):
    return {"devices": {"mlx5_0": {"ports": [{"gids": gids.get("mlx5_0", [])}]},
                        "mlx5_1": {"ports": [{"gids": gids.get("mlx5_1", [])}]}}}


def gid(index, ip, netdev, gtype="RoCE v2"):
    import ipaddress
    return {"index": index, "gid": ipaddress.IPv6Address("::ffff:" + ip).exploded, "type": gtype,
            "netdev": netdev, "ipv4": ip}


def test_verify_clean_and_each_finding(plan):
    node = plan["nodes"]["gpu-01"]
    config = F.rails_interfaces(node, sysctls=SYSCTLS)
    live = live_from(config)
    facts = facts_with({"mlx5_0": [gid(3, "10.10.0.1", "enp24s0np0")], "mlx5_1": [gid(3, "10.10.1.1", "enp64s0np0")]})
    assert F.rails_verify(node, "gpu-01", config, live, facts) == []
    live[1]["addresses"] = []
    live[1]["link_up"] = False
    live[0]["rules"] = []
    facts = facts_with({"mlx5_0": [gid(3, "10.10.0.1", "enp24s0np0", "RoCE v1")], "mlx5_1": [gid(3, "10.10.1.1", "x")]})
    found = F.rails_verify(node, "gpu-01", config, live, facts)
    settings = [(r["object"], r["setting"]) for r in found]
    assert settings == [("rail 0 enp24s0np0", "rules.10.10.0.1"), ("rail 0 enp24s0np0", "gids.mlx5_0"),
                        ("rail 1 enp64s0np0", "link_up"), ("rail 1 enp64s0np0", "addresses"),
                        ("rail 1 enp64s0np0", "gids.mlx5_1")]
    assert found[3] == {"host": "gpu-01", "area": "rails", "object": "rail 1 enp64s0np0", "setting": "addresses",
                        "expected": "10.10.1.1/31", "actual": []}
    text = F.rails_findings_text(found)
    assert text[3] == "gpu-01 rail 1 enp64s0np0: addresses expected 10.10.1.1/31, found []"


def test_cabling(plan):
    node = plan["nodes"]["gpu-02"]
    good = {"enp24s0np0": {"system_name": "rail0-leaf0", "port_id": "swp2"},
            "enp64s0np0": {"system_name": "rail1-leaf0", "port_id": "swp2"}}
    assert F.rails_cabling(node, "gpu-02", good) == []
    swapped = dict(good, enp64s0np0={"system_name": "rail0-leaf0", "port_id": "swp3"})
    found = F.rails_cabling(node, "gpu-02", swapped)
    assert found == [
        {"host": "gpu-02", "area": "rails_cabling", "object": "rail 1 enp64s0np0", "setting": "neighbor.switch",
         "expected": "rail1-leaf0", "actual": "rail0-leaf0"},
        {"host": "gpu-02", "area": "rails_cabling", "object": "rail 1 enp64s0np0", "setting": "neighbor.port",
         "expected": "swp2", "actual": "swp3"}]
    silent = F.rails_cabling(node, "gpu-02", {"enp24s0np0": good["enp24s0np0"]})
    assert [(r["object"], r["setting"], r["actual"]) for r in silent] == [("rail 1 enp64s0np0", "neighbor", None)]
    assert F.rails_cabling(node, "gpu-02", good, port_format="Ethernet1/{port}")[0]["expected"] == "Ethernet1/2"


def test_nodes_from_hostvars():
    hostvars = {"a": {"rails_nics": ["x0", "x1"]}, "b": {"ansible_facts": {"rdma": {"rails": [{"netdev": "y0"}]}}},
                "c": {}}
    assert F.rails_nodes(["a", "b"], hostvars) == {"a": ["x0", "x1"], "b": [{"netdev": "y0"}]}
    with pytest.raises(_rails_role.RailsRoleError, match="c: no rail NICs"):
        _rails_role.nodes(["c"], hostvars)
    assert F.rails_neighbors([{"interface": "x0", "neighbor": {"port_id": "swp1"}}]) == {"x0": {"port_id": "swp1"}}
    assert F.rails_lldp_config([{"interface": "x0", "addresses": []}]) == [{"interface": "x0"}]
