# -*- coding: utf-8 -*-
"""The rails area object (issue 30): settings from the argument spec, the planner's and the
role's checks naming the variables, the node's part of the fleet's rail plan (rail_addresses
config, persistent files, LLDP), and the verify and cabling records."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.area import area_errors, area_plan, area_records
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.areas import rails
from ansible_collections.rdma.fabric.plugins.plugin_utils import _rail_plan, _rails_role, _role_specs

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", ".."))
NICS = [{"netdev": "enp24s0np0", "device": "mlx5_0"}, {"netdev": "enp64s0np0", "device": "mlx5_1"}]
SYSCTLS = {"arp_ignore": 1, "arp_announce": 2, "rp_filter": 2}


def _variables(**over):
    with open(os.path.join(REPO, "roles", "rails", "defaults", "main.yml")) as handle:
        variables = yaml.safe_load(handle)
    variables.update(rails_pools=["10.10.0.0/24", "10.10.1.0/24"], inventory_hostname="gpu-01",
                     ansible_play_hosts_all=["gpu-01", "gpu-02"])
    variables.update(over)
    return variables


def _spec(**over):
    """The spec as the role_spec lookup builds it: the argument spec's check and the planner's."""
    variables = _variables(**over)

    def get(name, *default):
        return variables[name] if name in variables else (default[0] if default else None)
    return _role_specs.area_spec("rails", get, lambda term, template_vars=None: "")


@pytest.fixture
def fleet():
    return _rail_plan.plan({"gpu-01": NICS, "gpu-02": NICS}, ["10.10.0.0/24", "10.10.1.0/24"])


def test_registered_and_settings_from_the_argument_spec():
    assert _role_specs.AREA_OBJECTS["rails"] is rails and "rails" in _role_specs.SPECS
    spec = _spec()
    options = _role_specs.role_options("rails")
    assert set("rails_" + key for key in spec["settings"] if "rails_" + key in options) == set(options)
    assert spec["settings"]["host"] == "gpu-01" and spec["node"] is None
    assert spec["settings"]["policy_routing"] is True and spec["settings"]["planner_errors"] == []
    assert area_errors(spec, "rails") == []


@pytest.mark.parametrize("over, words", [
    ({"rails_pools": []}, ["rails_pools=[]", "must be set"]),
    ({"rails_pools": ["10.0.0.0/16", "banana"]}, ["rails_pools[1]", "banana"]),
    ({"rails_leaf_ports": 0}, ["rails_leaf_ports", "got 0"]),
    ({"rails_release": ["gpu-02"]}, ["rails_release", "gpu-02", "still in the play"]),
    ({"rails_nics": ["eth2", ""]}, ["rails_nics[1]", "empty"]),
    ({"rails_sysctls": {"forwarding": 1}}, ["rails_sysctls.forwarding: unknown"]),
    ({"rails_table_base": 252}, ["rails_table_base=252", "253"]),
    ({"rails_rule_priority_base": 0}, ["rails_rule_priority_base=0"]),
    ({"rails_header": "a\nb"}, ["rails_header", "a\\nb"]),
    ({"rails_leaf_port_format": "swp{bogus}"}, ["rails_leaf_port_format", "swp{bogus}"]),
])
def test_each_problem_names_the_variable(over, words):
    errors = area_errors(_spec(**over), "rails")
    assert len(errors) == 1, errors
    for word in words:
        assert word in errors[0]


def test_planner_errors_are_the_controllers():
    assert _rails_role.spec_inputs({"rails_pools": ["x"]})["planner_errors"][0].startswith("rails_pools[0]")
    assert rails.config_errors(dict(rails.settings(_variables()), planner_errors=["rails_pools: bad"])) == \
        ["rails_pools: bad"]


def test_before_the_fleet_plan_only_the_nics():
    spec = _spec(rails_nics=["eth2", "eth3"])
    assert area_plan({}, "rails", spec) == {"nics": ["eth2", "eth3"], "requests": []}
    assert area_plan({"rdma": {"rails": NICS}}, "rails", _spec())["nics"] == NICS
    with pytest.raises(AnsibleFilterError, match="gpu-01: no rail NICs"):
        area_plan({}, "rails", _spec())


def test_node_plan_interfaces_files_and_requests(fleet):
    spec = _spec(__rails_node=fleet["nodes"]["gpu-02"], inventory_hostname="gpu-02", rails_header="hdr")
    plan = area_plan({"os_family": "Debian", "rdma": {"rails": NICS}}, "rails", spec)
    assert plan["interfaces"] == [
        {"interface": "enp24s0np0", "addresses": ["10.10.0.3/31"], "link_up": True, "arp_ignore": 1,
         "arp_announce": 2, "rp_filter": 2, "table": 100, "rule_priority": 1000, "gateways": ["10.10.0.2"]},
        {"interface": "enp64s0np0", "addresses": ["10.10.1.3/31"], "link_up": True, "arp_ignore": 1,
         "arp_announce": 2, "rp_filter": 2, "table": 101, "rule_priority": 1001, "gateways": ["10.10.1.2"]}]
    assert plan["backend"] == "networkd"
    assert [f["path"] for f in plan["files"]] == ["/etc/systemd/network/60-rdma-rail0-enp24s0np0.network",
                                                  "/etc/systemd/network/60-rdma-rail1-enp64s0np0.network",
                                                  "/etc/sysctl.d/60-rdma-rails.conf"]
    assert plan["lldp"] == [{"interface": "enp24s0np0"}, {"interface": "enp64s0np0"}]
    assert plan["neighbors"][1] == {"rail": 1, "netdev": "enp64s0np0", "switch": "rail1-leaf0", "port": "swp2"}
    assert [r["resource"] for r in plan["requests"]] == ["rail_addresses", "node_files", "lldp_dcb"]
    rhel = area_plan({"os_family": "RedHat"}, "rails", dict(spec, settings=dict(spec["settings"], nics=NICS)))
    assert rhel["backend"] == "networkmanager" and rhel["files"][0]["mode"] == "0600"
    none = area_plan({}, "rails", _spec(__rails_node=fleet["nodes"]["gpu-02"], rails_backend="none",
                                        rails_lldp_check="never", rails_nics=NICS))
    assert none["files"] == [] and [r["resource"] for r in none["requests"]] == ["rail_addresses"]
    with pytest.raises(AnsibleFilterError, match="rails_backend=auto: the node's OS family is unknown"):
        area_plan({"rdma": {"rails": NICS}}, "rails", spec)
    bare = rails.interfaces(fleet["nodes"]["gpu-02"], policy_routing=False)
    assert "table" not in bare[0] and "arp_ignore" not in bare[0]


def test_networkd_and_keyfiles(fleet):
    node = fleet["nodes"]["gpu-01"]
    config = rails.interfaces(node, sysctls=SYSCTLS)
    files = rails.persistent_files(node, config, "networkd", header="hdr")
    text = files[0]["content"]
    assert text.startswith("# hdr\n[Match]\nName=enp24s0np0\n")
    assert "Address=10.10.0.1/31\n" in text
    assert "[Route]\nDestination=10.10.0.0/31\nPreferredSource=10.10.0.1\nScope=link\nTable=100\n" in text
    assert "[Route]\nGateway=10.10.0.0\nTable=100\n" in text
    assert "[RoutingPolicyRule]\nFrom=10.10.0.1\nTable=100\nPriority=1000\n" in text
    assert "net.ipv4.conf.enp64s0np0.rp_filter = 2\n" in files[2]["content"]
    nm = rails.persistent_files(node, config, "networkmanager")
    assert nm[0]["path"] == "/etc/NetworkManager/system-connections/rdma-rail0-enp24s0np0.nmconnection"
    key = nm[0]["content"]
    assert "interface-name=enp24s0np0\n" in key and "[ipv4]\nmethod=manual\nnever-default=true\naddress1=10.10.0.1/31\n" in key
    assert "route1=10.10.0.0/31\nroute1_options=table=100,src=10.10.0.1\n" in key
    assert "route2=0.0.0.0/0,10.10.0.0\nroute2_options=table=100\n" in key
    assert "routing-rule1=priority 1000 from 10.10.0.1 table 100\n" in key
    assert "[ipv6]\nmethod=link-local\n" in key
    with pytest.raises(PlanError, match="rails_backend='ifupdown'"):
        rails.persistent_files(node, config, "ifupdown")
    with pytest.raises(PlanError, match="node_plan: expected one node of the rail plan"):
        rails.interfaces(fleet)


def _live(config):
    out = []
    for entry in config:
        addr = entry["addresses"][0]
        ip = addr.split("/")[0]
        out.append({"interface": entry["interface"], "link_up": True, "addresses": [addr], "sysctls": dict(SYSCTLS),
                    "rules": [{"priority": entry["rule_priority"], "from": ip, "table": entry["table"]}],
                    "routes": [{"dst": rails._network_of(addr), "gateway": None, "src": ip, "dev": entry["interface"]},
                               {"dst": "default", "gateway": entry["gateways"][0], "src": None,
                                "dev": entry["interface"]}]})
    return out


def _gid(index, ip, netdev, gtype="RoCE v2"):
    return {"index": index, "gid": ipaddress.IPv6Address("::ffff:" + ip).exploded, "type": gtype,
            "netdev": netdev, "ipv4": ip}


def _gids_result(gids):
    return {"changed": False, "ansible_facts": {"rdma": {"devices": {
        "mlx5_0": {"ports": [{"gids": gids.get("mlx5_0", [])}]}, "mlx5_1": {"ports": [{"gids": gids.get("mlx5_1", [])}]}}}}}


def _node_plan(fleet, host="gpu-01"):
    return area_plan({"os_family": "Debian"}, "rails", _spec(__rails_node=fleet["nodes"][host], rails_nics=NICS,
                                                             inventory_hostname=host))


def test_verify_records(fleet):
    plan = _node_plan(fleet)
    live = _live(plan["interfaces"])
    good = _gids_result({"mlx5_0": [_gid(3, "10.10.0.1", "enp24s0np0")], "mlx5_1": [_gid(3, "10.10.1.1", "enp64s0np0")]})
    results = {"plan": plan, "rail_addresses": {"changed": False, "after": live}, "rdma_facts": good}
    assert area_records(results, "rails", "gpu-01") == []
    live[1]["addresses"] = []
    live[1]["link_up"] = False
    live[0]["rules"] = []
    bad = _gids_result({"mlx5_0": [_gid(3, "10.10.0.1", "enp24s0np0", "RoCE v1")], "mlx5_1": [_gid(3, "10.10.1.1", "x")]})
    found = area_records(dict(results, rdma_facts=bad), "rails", "gpu-01")
    assert [(r["object"], r["setting"]) for r in found] == [
        ("rail 0 enp24s0np0", "rules.10.10.0.1"), ("rail 0 enp24s0np0", "gids.mlx5_0"),
        ("rail 1 enp64s0np0", "link_up"), ("rail 1 enp64s0np0", "addresses"), ("rail 1 enp64s0np0", "gids.mlx5_1")]
    assert found[3] == {"host": "gpu-01", "area": "rails", "object": "rail 1 enp64s0np0", "setting": "addresses",
                        "expected": "10.10.1.1/31", "actual": []}
    # verify did not run (check mode, rails_verify false): no verify records
    assert area_records(dict(results, rdma_facts={"skipped": True}), "rails", "gpu-01") == []
    assert area_records(dict(results, plan={"nics": NICS, "requests": []}), "rails", "gpu-01") == []


def test_cabling_records(fleet):
    plan = _node_plan(fleet, "gpu-02")
    good = [{"interface": "enp24s0np0", "neighbor": {"system_name": "rail0-leaf0", "port_id": "swp2"}},
            {"interface": "enp64s0np0", "neighbor": {"system_name": "rail1-leaf0", "port_id": "swp2"}}]
    assert area_records({"plan": plan, "lldp_dcb": {"gathered": good}}, "rails", "gpu-02") == []
    swapped = [good[0], {"interface": "enp64s0np0", "neighbor": {"system_name": "rail0-leaf0", "port_id": "swp3"}}]
    assert area_records({"plan": plan, "lldp_dcb": {"gathered": swapped}}, "rails", "gpu-02") == [
        {"host": "gpu-02", "area": "rails_cabling", "object": "rail 1 enp64s0np0", "setting": "neighbor.switch",
         "expected": "rail1-leaf0", "actual": "rail0-leaf0"},
        {"host": "gpu-02", "area": "rails_cabling", "object": "rail 1 enp64s0np0", "setting": "neighbor.port",
         "expected": "swp2", "actual": "swp3"}]
    silent = area_records({"plan": plan, "lldp_dcb": {"gathered": good[:1]}}, "rails", "gpu-02")
    assert [(r["object"], r["setting"], r["actual"]) for r in silent] == [("rail 1 enp64s0np0", "neighbor", None)]
    # lldpad did not answer (failed_when: false leaves no gathered): not checked, no records
    assert area_records({"plan": plan, "lldp_dcb": {"failed": False, "msg": "no lldpad"}}, "rails", "gpu-02") == []
    other = _spec(__rails_node=fleet["nodes"]["gpu-02"], rails_nics=NICS, rails_leaf_port_format="Ethernet1/{port}")
    assert area_plan({"os_family": "Debian"}, "rails", other)["neighbors"][0]["port"] == "Ethernet1/2"
