# -*- coding: utf-8 -*-
"""The roce_qos role's filters: settings validation, per-port configs, rendered state, drift records."""
from __future__ import absolute_import, division, print_function

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.roce_qos import FilterModule

F = FilterModule().filters()
DEFAULTS = "roles/roce_qos/defaults/main.yml"


def settings(**over):
    with open(DEFAULTS) as handle:
        defaults = yaml.safe_load(handle)
    base = dict((k[len("roce_qos_"):], v) for k, v in defaults.items())
    base["nccl_roce_dscp"] = None
    base.update(over)
    return base


FACTS = {"device_names": ["mlx5_0", "mlx5_1", "mlx5_2"], "devices": {
    "mlx5_0": {"ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "eth2"}]},
    "mlx5_1": {"ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": "ib0"}]},
    "mlx5_2": {"ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "eth3"}]}}}


def test_defaults_are_good_and_give_tos_106():
    assert F["roce_qos_config_errors"](settings()) == []
    plan = F["roce_qos_config"](FACTS, settings())
    assert [p["netdev"] for p in plan["ports"]] == ["eth2", "eth3"]
    assert plan["dcqcn"][1] == dict(plan["dcqcn"][0], interface="eth3", rdma_device="mlx5_2")
    assert plan["dcqcn"][0]["roce_tos"] == 106 and plan["dcqcn"][0]["rdma_cm_tos"] == 106
    assert plan["mlnx_qos"][0]["interface"] == "eth2" and plan["mlnx_qos"][0]["pfc"] == [3]
    assert plan["lldp"][0]["app"] == [{"selector": 3, "protocol": 4791, "priority": 3}]


def test_state_file_is_what_the_modules_render(monkeypatch):
    monkeypatch.delenv("SYSFS_PATH", raising=False)
    text = F["roce_qos_config"](FACTS, settings())["state_file"]
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
    errors = F["roce_qos_config_errors"](settings(**over))
    assert any(words in e for e in errors), errors
    with pytest.raises(AnsibleFilterError, match="roce_qos: "):
        F["roce_qos_config"](FACTS, settings(**over))


def test_unknown_interface_names_the_ports_found():
    with pytest.raises(AnsibleFilterError, match="eth9 is not a RoCE port of this node; RoCE ports found: eth2, eth3"):
        F["roce_qos_config"](FACTS, settings(interfaces=["eth9"]))
    assert [p["netdev"] for p in F["roce_qos_config"](FACTS, settings(interfaces=["eth3"]))["ports"]] == ["eth3"]


def test_drift_records_name_the_smallest_setting():
    mlnx = {"changed": True,
            "before": [{"interface": "eth2", "pfc": [], "dscp2prio": [{"dscp": 26, "priority": 3}, {"dscp": 27, "priority": 3}]}],
            "after": [{"interface": "eth2", "pfc": [3], "dscp2prio": [{"dscp": 26, "priority": 3}, {"dscp": 27, "priority": 5}]}]}
    dcqcn = {"changed": True,
             "before": [{"interface": "eth2", "rdma_device": "mlx5_0", "port": 1,
                         "np": {"enabled_priorities": [], "params": {"cnp_dscp": 48}}}],
             "after": [{"interface": "eth2", "rdma_device": "mlx5_0", "port": 1,
                        "np": {"enabled_priorities": [3], "params": {"cnp_dscp": 48}}}]}
    records = F["roce_qos_drift"]([mlnx, dcqcn, {"skipped": True}], "node 1")
    assert records == [
        {"host": "node 1", "area": "roce_qos", "object": "eth2", "setting": "dscp2prio.27", "expected": 5, "actual": 3},
        {"host": "node 1", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []},
        {"host": "node 1", "area": "roce_qos", "object": "eth2", "setting": "np.enabled_priorities",
         "expected": [3], "actual": []}]
    unchanged = {"changed": False, "before": mlnx["after"], "after": mlnx["after"]}
    assert F["roce_qos_drift"]([unchanged], "n") == []


def test_state_file_paths_are_under_the_nodes_sysfs(monkeypatch):
    monkeypatch.setenv("SYSFS_PATH", "/controller/sys")
    text = F["roce_qos_config"](dict(FACTS, sysfs_root="/run/fabricsim/sys"), settings())["state_file"]
    paths = [ln.split()[2] for ln in text.splitlines() if not ln.startswith("#") and " sysfs " in ln]
    assert paths and all(p.startswith("/run/fabricsim/sys/") for p in paths), paths
