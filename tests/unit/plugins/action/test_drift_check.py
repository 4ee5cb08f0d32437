# -*- coding: utf-8 -*-
"""drift_check action: the controller-computed inputs (opensm) in the one state_check call, records from the results, failures as records."""
from __future__ import absolute_import, division, print_function

from unittest import mock

import yaml

from ansible_collections.rdma.fabric.plugins.action.drift_check import ActionModule

FACTS = {"device_names": ["mlx5_0"], "devices": {
    "mlx5_0": {"ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "eth2"}]}}}


def settings():
    with open("roles/roce_qos/defaults/main.yml") as handle:
        defaults = yaml.safe_load(handle)
    out = dict((k[len("roce_qos_"):], v) for k, v in defaults.items())
    out["nccl_roce_dscp"] = None
    return out


def action(responses, args):
    task = mock.MagicMock()
    task.args = args
    task.async_val = 0
    plugin = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    calls = []

    def execute(module_name, module_args=None, task_vars=None, **kwargs):
        calls.append((module_name, module_args))
        return responses.pop(0)
    plugin._execute_module = execute
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        result = plugin.run(task_vars={"inventory_hostname": "gpu 1"})
    return result, calls


def inputs():
    from ansible_collections.rdma.fabric.plugins.filter.roce_qos import roce_qos_config
    return [{"area": "roce_qos", "errors": [], "plan": roce_qos_config(FACTS, settings()), "lldp": False,
             "persist": False}, None]


GATHERED = {"facts": {"rdma": FACTS}, "facts_errors": {}}


def test_two_calls_and_one_record_per_setting():
    before = [{"interface": "eth2", "pfc": [], "trust": "dscp"}]
    after = [{"interface": "eth2", "pfc": [3], "trust": "dscp"}]
    probe = {"results": [
        {"area": "roce_qos", "resource": "mlnx_qos", "name": "mlnx_qos", "failed": False,
         "result": {"before": before, "after": after, "commands": ["x"]}},
        {"area": "roce_qos", "resource": "dcqcn", "name": "dcqcn", "failed": True,
         "result": {"msg": "interface=eth2: no ecn directory"}}]}
    result, calls = action([probe], {"inputs": inputs(), "gathered": GATHERED})
    assert [c[0] for c in calls] == ["rdma.fabric.state_check"]
    assert [r["resource"] for r in calls[0][1]["resources"]] == ["mlnx_qos", "dcqcn"]
    assert set(calls[0][1]["resources"][0]) <= {"resource", "name", "area", "state", "config", "options"}
    assert result["checked"] == ["roce_qos"]
    assert result["drift_records"] == [
        {"host": "gpu 1", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []},
        {"host": "gpu 1", "area": "roce_qos", "object": "dcqcn", "setting": "read", "expected": "readable",
         "actual": "interface=eth2: no ecn directory"}]


def test_a_failed_gather_is_a_host_record_and_unreachable_passes_through():
    result, calls = action([], {"inputs": [None], "gathered": {"facts": {}, "facts_errors": {"rdma_facts": "OSError: boom"}}})
    assert calls == []
    assert result["drift_records"] == [{"host": "gpu 1", "area": "host", "object": "", "setting": "check",
                                        "expected": "checked", "actual": "gather failed: rdma_facts: OSError: boom"}]
    result, calls = action([{"unreachable": True, "msg": "gone"}], {"inputs": inputs(), "gathered": GATHERED})
    assert result == {"unreachable": True, "msg": "gone"}


def test_no_inputs_no_call():
    result, calls = action([], {"inputs": [None]})
    assert calls == [] and result["drift_records"] == [] and result["checked"] == []


def test_an_area_judges_files_key_by_key_and_a_missing_file_drifts_every_key():
    node = {"errors": [], "active": True, "text": "NCCL_IB_HCA==mlx5_0\nNCCL_IB_GID_INDEX=3\n",
            "settings": {"NCCL_IB_HCA": "=mlx5_0", "NCCL_IB_GID_INDEX": 3}}
    nccl = {"area": "nccl_env", "errors": [], "node": node, "paths": ["/etc/nccl.conf", "/etc/nccl.env"],
            "owner": "root", "group": "root"}
    probe = {"results": [{"area": "nccl_env", "resource": "node_files", "name": "NCCL files", "failed": False,
                          "result": {"before": {"units": {}, "files": {
                              "/etc/nccl.conf": {"state": "present", "mode": "0644", "owner": "root", "group": "root",
                                                 "content": "NCCL_IB_HCA==mlx5_0\nNCCL_IB_GID_INDEX=5\n"},
                              "/etc/nccl.env": {"state": "absent"}}}}}]}
    result, calls = action([probe], {"inputs": [nccl], "gathered": GATHERED})
    assert calls[0][1]["resources"][0]["options"] == {"content": True}
    assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in result["drift_records"]] == [
        ("/etc/nccl.conf", "NCCL_IB_GID_INDEX", "3", "5"),
        ("/etc/nccl.env", "NCCL_IB_GID_INDEX", "3", None), ("/etc/nccl.env", "NCCL_IB_HCA", "=mlx5_0", None)]
