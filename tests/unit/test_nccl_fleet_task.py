# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/nccl_env/tasks/fleet.yml: one task per host warns about (nccl_env_fleet_check=warn) or fails
(fail) a host whose settings differ from the other hosts; the others pass. The role file's own task,
run by ansible-playbook on local hosts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _fleet_task():
    with open(os.path.join(REPO, "roles", "nccl_env", "tasks", "fleet.yml")) as handle:
        tasks = yaml.safe_load(handle)
    per_host = [t for t in tasks if "run_once" not in t and "ansible.builtin.assert" in t]
    assert len(per_host) == 1, "expected one per-host task in fleet.yml"
    return per_host[0]


@pytest.mark.parametrize("mode, failed, warned", [("fail", ["b"], []), ("warn", [], ["b"]), ("skip", [], [])])
def test_a_differing_host_is_warned_about_or_failed(tmp_path, mode, failed, warned):
    play = [{"hosts": "all", "gather_facts": False,
             "vars": {"nccl_env_fleet_check": mode,
                      "__nccl_env_fleet": {"consistent": False, "messages": {"b": ["NCCL_IB_TC: 106 here, 98 elsewhere"]}}},
             "tasks": [_fleet_task()]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": {"a": {}, "b": {}}, "vars": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}))
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
    if not os.path.exists(os.path.join(os.path.dirname(sys.executable), "ansible-playbook")):
        pytest.skip("no ansible-playbook beside this python")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                           str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml")],
                          capture_output=True, text=True, env=env, check=False)
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        pytest.skip("the json callback is not there (ansible-core before 2.19 takes it from ansible.posix)")
    results = out["plays"][0]["tasks"][0]["hosts"]
    assert sorted(h for h, r in results.items() if r.get("failed")) == failed
    assert sorted(h for h, r in results.items() if not r.get("failed") and not r.get("skipped")) == warned
    for host in warned:
        assert "WARNING: b differs from the other hosts" in json.dumps(results[host])
    for host in failed:
        assert "b differs from the other hosts: NCCL_IB_TC" in results[host]["msg"]
    assert results["a"].get("skipped")
    assert (proc.returncode != 0) == bool(failed)
