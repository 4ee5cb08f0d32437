# -*- coding: utf-8 -*-
"""The roce_qos area object through the rdma.fabric.area_* filters: settings validation,
per-port configs, rendered state, the boot applier, the module calls and the drift records."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.area import FilterModule

F = FilterModule().filters()
DEFAULTS = "roles/roce_qos/defaults/main.yml"


def settings(**over):
    with open(DEFAULTS) as handle:
        defaults = yaml.safe_load(handle)
    base = dict((k[len("roce_qos_"):], v) for k, v in defaults.items())
    base["nccl_roce_dscp"] = None
    base.update(over)
    return {"settings": base, "files": [{"path": "/usr/local/sbin/x", "content": "x\n", "mode": "0755"}],
            "units": [{"name": "rdma-fabric-roce-qos.service", "enabled": True}]}


def errors(spec):
    return F["area_errors"](spec, "roce_qos")


def plan(facts, spec):
    return F["area_plan"](facts, "roce_qos", spec)


FACTS = {"device_names": ["mlx5_0", "mlx5_1", "mlx5_2"], "devices": {
    "mlx5_0": {"ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "eth2"}]},
    "mlx5_1": {"ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": "ib0"}]},
    "mlx5_2": {"ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "eth3"}]}}}


def test_defaults_are_good_and_give_tos_106():
    assert errors(settings()) == []
    planned = plan(FACTS, settings())
    assert [p["netdev"] for p in planned["ports"]] == ["eth2", "eth3"]
    assert planned["dcqcn"][1] == dict(planned["dcqcn"][0], interface="eth3", rdma_device="mlx5_2")
    assert planned["dcqcn"][0]["roce_tos"] == 106 and planned["dcqcn"][0]["rdma_cm_tos"] == 106
    assert planned["mlnx_qos"][0]["interface"] == "eth2" and planned["mlnx_qos"][0]["pfc"] == [3]
    assert planned["lldp"][0]["app"] == [{"selector": 3, "protocol": 4791, "priority": 3}]


def test_state_file_is_what_the_modules_render(monkeypatch):
    monkeypatch.delenv("SYSFS_PATH", raising=False)
    text = plan(FACTS, settings())["state_file"]
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert lines[0] == "eth2 mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0 --trust dscp --tsa " \
        "ets,strict,strict,ets,strict,strict,strict,strict --tcbw 50,0,0,50,0,0,0,0 --prio_tc 0,0,0,3,0,0,6,0"
    assert lines[1] == "eth2 mlnx_qos -i eth2 --dscp2prio set,26,3 --dscp2prio set,48,6"
    assert "eth2 sysfs /sys/class/infiniband/mlx5_0/tc/1/traffic_class=106" in lines
    assert "eth3 sysfs /sys/class/net/eth3/ecn/roce_np/enable/3=1" in lines
    assert sum(1 for ln in lines if ln.startswith("eth3 ")) == sum(1 for ln in lines if ln.startswith("eth2 "))


@pytest.mark.parametrize("over, words", [
    ({"lossless_priority": 9}, "roce_qos_lossless_priority=9: priority must be 0-7"),
    ({"pfc_priorities": [4]}, "roce_qos_lossless_priority=3 has no PFC: add it to roce_qos_pfc_priorities=[4]"),
    ({"dcqcn_priorities": [4]}, "has no DCQCN: add it to roce_qos_dcqcn_priorities=[4]"),
    ({"default_tos": 300}, "roce_qos_default_tos=300: ToS must be 0-255"),
    ({"default_tos": 98}, "roce_qos_default_tos 98 carries DSCP 24 (98 >> 2), but roce_qos_roce_dscp is 26; the ToS for DSCP 26 is 104, or 106"),
    ({"nccl_roce_dscp": 24}, "nccl_env_roce_dscp=24 and roce_qos_roce_dscp=26 differ"),
    ({"dcqcn_np_params": {"cnp_dscp": 46}}, "roce_qos_dcqcn_np_params.cnp_dscp=46 contradicts roce_qos_cnp_dscp=48"),
    ({"dscp2prio_extra": [{"dscp": 26, "priority": 5}]}, "roce_qos_dscp2prio_extra[0].dscp=26 moves roce_qos_roce_dscp=26"),
    ({"tsa": ["ets", "strict", "strict", "strict", "strict", "strict", "strict", "strict"],
      "tcbw": [100, 0, 0, 0, 0, 0, 0, 0]}, "TC3 of the lossless priority 3"),
    ({"buffer_size": [0, 0, 0, 0, 0, 0, 0, 0], "prio2buffer": [0] * 8}, "PFC priority 3 is mapped to receive buffer 0"),
    ({"interfaces": ["eth/1"]}, "roce_qos_interfaces[0]='eth/1'"),
    ({"tos_ecn": "maybe"}, "roce_qos_tos_ecn='maybe': must be one of"),
    ({"tcbw": [50, 0, 0, 40, 0, 0, 0, 0]}, "sums to 90, must be 100"),
])
def test_each_problem_names_the_variable_and_value(over, words):
    found = errors(settings(**over))
    assert any(words in e for e in found), found
    with pytest.raises(AnsibleFilterError, match="roce_qos: "):
        plan(FACTS, settings(**over))


def test_unknown_interface_names_the_ports_found():
    with pytest.raises(AnsibleFilterError, match="eth9 is not a RoCE port of this node; RoCE ports found: eth2, eth3"):
        plan(FACTS, settings(interfaces=["eth9"]))
    assert [p["netdev"] for p in plan(FACTS, settings(interfaces=["eth3"]))["ports"]] == ["eth3"]


def test_drift_records_name_the_smallest_setting():
    mlnx = {"changed": True,
            "before": [{"interface": "eth2", "pfc": [], "dscp2prio": [{"dscp": 26, "priority": 3}, {"dscp": 27, "priority": 3}]}],
            "after": [{"interface": "eth2", "pfc": [3], "dscp2prio": [{"dscp": 26, "priority": 3}, {"dscp": 27, "priority": 5}]}]}
    dcqcn = {"changed": True,
             "before": [{"interface": "eth2", "rdma_device": "mlx5_0", "port": 1,
                         "np": {"enabled_priorities": [], "params": {"cnp_dscp": 48}}}],
             "after": [{"interface": "eth2", "rdma_device": "mlx5_0", "port": 1,
                        "np": {"enabled_priorities": [3], "params": {"cnp_dscp": 48}}}]}
    records = F["area_records"]({"mlnx_qos": mlnx, "dcqcn": dcqcn, "lldp_dcb": {"skipped": True}}, "roce_qos", "node 1")
    assert records == [
        {"host": "node 1", "area": "roce_qos", "object": "eth2", "setting": "dscp2prio.27", "expected": 5, "actual": 3},
        {"host": "node 1", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []},
        {"host": "node 1", "area": "roce_qos", "object": "eth2", "setting": "np.enabled_priorities",
         "expected": [3], "actual": []}]
    unchanged = {"changed": False, "before": mlnx["after"], "after": mlnx["after"]}
    assert F["area_records"]({"mlnx_qos": unchanged}, "roce_qos", "n") == []
    lldp = {"before": [{"interface": "eth2", "pfc": {"enabled": []}}], "after": [{"interface": "eth2", "pfc": {"enabled": [3]}}]}
    assert [r["setting"] for r in F["area_records"]({"lldp_dcb": lldp}, "roce_qos", "n")] == ["lldp.pfc.enabled"]


def test_state_file_paths_are_under_the_nodes_sysfs(monkeypatch):
    monkeypatch.setenv("SYSFS_PATH", "/controller/sys")
    text = plan(dict(FACTS, sysfs_root="/run/fabricsim/sys"), settings())["state_file"]
    paths = [ln.split()[2] for ln in text.splitlines() if not ln.startswith("#") and " sysfs " in ln]
    assert paths and all(p.startswith("/run/fabricsim/sys/") for p in paths), paths


def test_the_plan_is_the_module_calls_in_the_roles_order():
    spec = settings(lldp=True)
    planned = plan(FACTS, spec)
    assert [(r["resource"], r.get("state")) for r in planned["requests"]] == [
        ("mlnx_qos", "replaced"), ("dcqcn", "replaced"), ("lldp_dcb", "merged"), ("node_files", None)]
    files = planned["boot_applier"]["files"]
    assert files[0] == {"path": "/etc/rdma-fabric/roce_qos/desired.conf", "content": planned["state_file"], "mode": "0644"}
    assert files[1:-1] == spec["files"] and files[-1] == {"path": "/etc/rdma-fabric/roce_qos/desired.sha256", "state": "absent"}
    assert planned["requests"][3]["config"] == planned["boot_applier"]
    bare = plan(FACTS, settings(persist=False))
    assert bare["boot_applier"] is None and [r["resource"] for r in bare["requests"]] == ["mlnx_qos", "dcqcn"]
    assert plan({"device_names": [], "devices": {}}, settings(persist=False))["requests"] == []


@pytest.mark.parametrize("call", [
    lambda: F["area_plan"](FACTS, "nope", settings()),
    lambda: F["area_errors"]({"settings": None}, "roce_qos"),
    lambda: F["area_plan"]("facts", "roce_qos", settings()),
    lambda: F["area_records"]([], "roce_qos", "n"),
])
def test_a_wrong_input_is_named(call):
    with pytest.raises(AnsibleFilterError, match="area_"):
        call()


def test_pfc_priorities_per_interface_set_that_port_only():
    spec = settings(pfc_priorities_by_interface={"eth3": [3, 4]}, lldp=True)
    planned = plan(FACTS, spec)
    assert [c["pfc"] for c in planned["mlnx_qos"]] == [[3], [3, 4]]
    assert [c["pfc"]["enabled"] for c in planned["lldp"]] == [[3], [3, 4]]
    assert "eth3 mlnx_qos -i eth3 --pfc 0,0,0,1,1,0,0,0" in planned["state_file"]
    assert "eth2 mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0" in planned["state_file"]


@pytest.mark.parametrize("by_interface, words", [
    ({"eth3": [4]}, "roce_qos_lossless_priority=3 has no PFC on eth3: add it to roce_qos_pfc_priorities_by_interface.eth3=[4]"),
    ({"eth3": [9]}, "roce_qos_pfc_priorities_by_interface.eth3[0]=9"),
    ({"eth/3": [3]}, "roce_qos_pfc_priorities_by_interface key='eth/3'"),
    ("eth3", "roce_qos_pfc_priorities_by_interface='eth3': expected a dict"),
])
def test_pfc_priorities_per_interface_errors_name_the_variable(by_interface, words):
    found = errors(settings(pfc_priorities_by_interface=by_interface))
    assert any(words in e for e in found), found


def test_pfc_priorities_of_an_interface_the_node_lacks_is_named():
    with pytest.raises(AnsibleFilterError, match="roce_qos_pfc_priorities_by_interface: eth9 is not a RoCE port"):
        plan(FACTS, settings(pfc_priorities_by_interface={"eth9": [3]}))
