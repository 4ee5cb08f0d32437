# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.drift_check: per host, check every area's resources in one state_check call
(the areas' inputs come from each role's drift_inputs tasks, computed from the facts the
play read once), compare on the controller, return one record per drifted setting.
Documentation in plugins/modules/drift_check.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils._report import drift_records, module_objects
from ansible_collections.rdma.fabric.plugins.plugin_utils._drift_areas import AREAS


# Settings of a resource that shares objects (interfaces) with another in the same area carry
# its name: the LLDP PFC TLV is "lldp.pfc.enabled", the NIC's PFC "pfc".
PREFIX = {"lldp_dcb": "lldp."}
# What state_check takes of a request; the rest (judge, records) stays on the controller.
MODULE_FIELDS = ("resource", "name", "area", "state", "config", "options")


def host_record(host, actual, setting="check"):
    return {"host": host, "area": "host", "object": "", "setting": setting, "expected": "checked", "actual": actual}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("inputs", "gathered"))

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
        # The play's first read (state_check facts); when it failed the areas have no inputs,
        # and the host is a record of its own, never "no drift".
        gathered = self._task.args.get("gathered") or {}
        if gathered.get("unreachable"):
            return gathered
        if gathered.get("failed") or gathered.get("facts_errors"):
            why = gathered.get("msg") or "; ".join("%s: %s" % kv for kv in sorted(gathered["facts_errors"].items()))
            result["drift_records"] = [host_record(host, "gather failed: %s" % why)]
            return result
        if not inputs:
            return result
        requests, records = [], []
        for item in inputs:
            try:
                for request in AREAS[item["area"]](item, host):
                    if request.get("records") is not None:      # judged from the facts alone
                        records.extend(request["records"])
                    else:
                        requests.append(request)
            except AnsibleError as exc:
                records.append({"host": host, "area": item["area"], "object": "", "setting": "config",
                                "expected": "valid", "actual": str(exc)})
        if requests:
            sent = [dict((k, v) for k, v in r.items() if k in MODULE_FIELDS) for r in requests]
            probe = self._execute_module("rdma.fabric.state_check", module_args={"resources": sent},
                                         task_vars=task_vars)
            if probe.get("unreachable"):
                return probe
            if probe.get("failed"):
                records.append(host_record(host, "state_check failed: %s" % probe.get("msg")))
            for request, entry in zip(requests, probe.get("results") or []):
                if entry["failed"]:
                    records.append({"host": host, "area": entry["area"], "object": entry["name"], "setting": "read",
                                    "expected": "readable", "actual": entry["result"].get("msg")})
                    continue
                if request.get("judge") is not None:            # the area reads the result itself
                    records.extend(request["judge"](host, entry["result"]))
                    continue
                objects = module_objects(entry["result"])
                found = drift_records(host, entry["area"], objects)
                prefix = PREFIX.get(entry["resource"], "")
                for record in found:
                    record["setting"] = prefix + record["setting"]
                records.extend(found)
        result["drift_records"] = records
        return result
