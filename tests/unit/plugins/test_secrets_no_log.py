# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenSM's keys in logs and task output (issue 26): state_check (the drift check's one call,
with the rendered opensm.conf in its parameters) neither logs a key to the node's journal nor
returns one, and keeps the records' other values; every task of the opensm role whose
parameters or result hold opensm.conf is no_log."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os

import yaml

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.modules import state_check
from ansible_collections.rdma.fabric.tests.unit import helpers

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
KEYS = ("0x00000000c0ffee01", "0x00000000beefcafe", "0x00000000cc0ffee0")
CONF = ("guid @RDMA_FABRIC_OPENSM_GUID@\nsm_priority 14\nsm_key\t0x00000000c0ffee01\nsa_key 0x00000000beefcafe\n"
        "cc_key 0x00000000cc0ffee0\nsweep_interval 10\n")


def _run(monkeypatch, capsys, tmp_path, args):
    logged = []
    monkeypatch.setattr(basic.AnsibleModule, "log", lambda self, msg, log_args=None: logged.append((msg, log_args)))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, *a, **k: (1, "", "no such tool here"))
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path / "sys"))
    code, result = helpers.run_main_json(capsys, state_check.main, args)
    return code, result, logged


def test_state_check_logs_and_returns_no_opensm_key(monkeypatch, capsys, tmp_path):
    spec = {"role": "master", "priority": 14, "config": CONF, "partitions": "Default=0x7fff, ipoib : ALL=full ;\n",
            "slots": {"guid": "@RDMA_FABRIC_OPENSM_GUID@"}}
    nccl = tmp_path / "nccl.conf"
    nccl.write_text("NCCL_IB_HCA=mlx5_0\n")
    args = {"areas": {"opensm": spec}, "host": "sm1", "return_facts": False,
            "resources": [{"resource": "node_files", "name": "conf", "options": {"content": True},
                           "config": {"files": [{"path": str(nccl), "content": "sm_key 0x00000000c0ffee01\n",
                                                 "mode": "0644"}], "units": []}}]}
    code, result, logged = _run(monkeypatch, capsys, tmp_path, args)
    text = json.dumps(result)
    assert not [k for k in KEYS if k in text], text
    log = json.dumps([str(entry) for entry in logged])
    assert logged and not [k for k in KEYS if k in log], log
    # only the secrets are masked: the records, paths, modes and contents keep their values
    files = result["results"][0]["result"]
    assert files["before"]["files"][str(nccl)]["content"] == "NCCL_IB_HCA=mlx5_0\n"
    assert files["after"]["files"][str(nccl)]["content"] == "sm_key ********\n"
    assert files["after"]["files"][str(nccl)]["mode"] == "0644"
    assert result["drift_records"][0]["actual"] == "gather failed: opensm: ToolError: ibstat failed (rc=1): no such tool here"
    # the call's echo names the areas, without their specs (what the controller sent); the other
    # options are echoed, masked as before
    echo = result["invocation"]["module_args"]
    assert echo["areas"] == ["opensm"] and echo["host"] == "sm1" and echo["return_facts"] is False
    assert echo["resources"][0]["config"]["files"][0]["content"] == "sm_key ********\n"
    assert "sweep_interval 10" not in text   # opensm.conf, the spec's, not echoed


def _tasks(data):
    for task in data or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key))


# the facts whose value holds opensm.conf (the key among them): the opensm area's plan
OPENSM_CONF_FACTS = ("__opensm",)


def test_every_opensm_task_holding_opensm_conf_is_no_log():
    """A node_files task (its result holds the files' content under --diff or with content:
    true, its parameters opensm.conf) and a set_fact of the plan (the files' content): no_log,
    the registered value stays usable. An assert's result holds its condition, not the values,
    and keeps its message."""
    checked = []
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "opensm", "tasks", "*.yml"))):
        with open(path) as handle:
            for task in _tasks(yaml.safe_load(handle)):
                module = [k for k in task if k.startswith(("rdma.fabric.", "ansible.builtin."))]
                if not module:
                    continue
                module = module[0]
                if module == "rdma.fabric.node_files":
                    holds = True
                elif module == "ansible.builtin.set_fact":
                    holds = any(name in task[module] for name in OPENSM_CONF_FACTS)
                else:
                    continue
                if holds:
                    checked.append((os.path.basename(path), task["name"]))
                    assert task.get("no_log") is True, (path, task["name"])
    assert ("read.yml", "Read the OpenSM files, binaries and service state") in checked
    assert ("read.yml", "Plan the OpenSM files and service") in checked
    assert len(checked) >= 4, checked
