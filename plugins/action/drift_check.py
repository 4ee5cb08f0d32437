# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.drift_check: per host, the whole drift check in one state_check call. The areas
planned on the node (``areas``: roce_qos, nccl_env, gpudirect) go as specs, and the node reads,
plans, checks and judges them; the areas computed on the controller (``inputs``: opensm, from its
role's drift_inputs tasks) go as resources, judged here. Returns one record per drifted setting.
Documentation in plugins/modules/drift_check.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils import _drift_areas as A


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("areas", "inputs", "gathered"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        host = task_vars.get("inventory_hostname")
        specs = self._task.args.get("areas") or {}
        if not isinstance(specs, dict):
            raise AnsibleError("drift_check: areas: expected a dict of area: spec, got %r" % (specs,))
        specs = dict((k, v) for k, v in specs.items() if v)
        unknown = sorted(set(specs) - set(A.NODE_AREAS))
        if unknown:
            raise AnsibleError("drift_check: areas: %s not planned on the node; one of %s"
                               % (", ".join(unknown), ", ".join(A.NODE_AREAS)))
        inputs = [i for i in (self._task.args.get("inputs") or []) if i]
        for index, item in enumerate(inputs):
            if not isinstance(item, dict) or item.get("area") not in A.AREAS:
                raise AnsibleError("drift_check: inputs[%d]: expected a dict with area one of %s, got %r"
                                   % (index, ", ".join(sorted(A.AREAS)), item if not isinstance(item, dict)
                                      else item.get("area")))
        result.update(changed=False, drift_records=[], checked=[i["area"] for i in inputs])
        # An earlier read the controller-computed inputs came from; when it failed those areas
        # have no inputs, and the host is a record of its own, never "no drift".
        gathered = self._task.args.get("gathered") or {}
        if gathered.get("unreachable"):
            return gathered
        if gathered.get("failed") or gathered.get("facts_errors"):
            why = gathered.get("msg") or "; ".join("%s: %s" % kv for kv in sorted(gathered["facts_errors"].items()))
            result["drift_records"] = [A.host_record(host, "gather failed: %s" % why)]
            return result
        requests, records = A.requests_of(inputs, host)
        if requests or specs:
            probe = self._execute_module("rdma.fabric.state_check", task_vars=task_vars, module_args={
                "areas": specs, "host": host, "return_facts": False,
                "resources": [A.module_request(r) for r in requests]})
            if probe.get("unreachable"):
                return probe
            if probe.get("failed"):
                records.append(A.host_record(host, "state_check failed: %s" % probe.get("msg")))
            else:
                records.extend(A.judge(host, requests, probe.get("results") or []))
                records.extend(probe.get("drift_records") or [])
                result["checked"].extend(probe.get("checked") or [])
        result["drift_records"] = records
        return result
