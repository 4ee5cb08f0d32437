# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.drift_check: per host, read every area in two module calls (rdma_facts for
the ports, state_check for all areas' resources), compare on the controller, return one
record per drifted setting. Documentation in plugins/modules/drift_check.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils._report import drift_records, module_objects
from ansible_collections.rdma.fabric.plugins.plugin_utils._drift_areas import AREAS, FACTS


def host_record(host, actual, setting="check"):
    return {"host": host, "area": "host", "object": "", "setting": setting, "expected": "checked", "actual": actual}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("inputs",))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        host = task_vars.get("inventory_hostname")
        inputs = [i for i in (self._task.args.get("inputs") or []) if i]
        for index, item in enumerate(inputs):
            if not isinstance(item, dict) or item.get("area") not in AREAS:
                raise AnsibleError("drift_check: inputs[%d]: expected a dict with area one of %s, got %r"
                                   % (index, ", ".join(sorted(AREAS)), item if not isinstance(item, dict)
                                      else item.get("area")))
        result.update(changed=False, drift_records=[], checked=[i["area"] for i in inputs])
        if not inputs:
            return result
        subsets = sorted(set(s for i in inputs for s in FACTS[i["area"]]))
        facts = self._execute_module("rdma.fabric.rdma_facts", module_args={"gather_subset": subsets},
                                     task_vars=task_vars)
        if facts.get("unreachable"):
            return facts
        if facts.get("failed"):
            result["drift_records"] = [host_record(host, "gather failed: %s" % facts.get("msg"))]
            return result
        rdma = facts["ansible_facts"]["rdma"]
        requests, records = [], []
        for item in inputs:
            try:
                requests.extend(AREAS[item["area"]](item, rdma))
            except AnsibleError as exc:
                records.append({"host": host, "area": item["area"], "object": "", "setting": "config",
                                "expected": "valid", "actual": str(exc)})
        if requests:
            probe = self._execute_module("rdma.fabric.state_check", module_args={"resources": requests},
                                         task_vars=task_vars)
            if probe.get("unreachable"):
                return probe
            if probe.get("failed"):
                records.append(host_record(host, "state_check failed: %s" % probe.get("msg")))
            for entry in probe.get("results") or []:
                if entry["failed"]:
                    records.append({"host": host, "area": entry["area"], "object": entry["name"], "setting": "read",
                                    "expected": "readable", "actual": entry["result"].get("msg")})
                    continue
                objects = module_objects(entry["result"])
                if entry["resource"] == "node_files":
                    objects = [(name, want, have) for name, want, have in objects]
                records.extend(drift_records(host, entry["area"], objects))
        result["drift_records"] = records
        return result
