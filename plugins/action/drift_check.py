# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.drift_check: per host, the whole drift check in one state_check call. Each area
goes as its spec (its role's settings and rendered files, no facts); the node reads, plans what
the role would set with the roles' own planners, checks and judges. Returns one record per
drifted setting. Documentation in plugins/modules/drift_check.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils import _drift_areas as A


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("areas",))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        host = task_vars.get("inventory_hostname")
        if "areas" not in self._task.args:
            raise AnsibleError("drift_check: areas is required (area: the role's __ROLE_drift_spec)")
        specs = self._task.args.get("areas") or {}
        if not isinstance(specs, dict):
            raise AnsibleError("drift_check: areas: expected a dict of area: spec, got %r" % (specs,))
        specs = dict((k, v) for k, v in specs.items() if v)
        unknown = sorted(set(specs) - set(A.NODE_AREAS))
        if unknown:
            raise AnsibleError("drift_check: areas: %s not one of %s" % (", ".join(unknown), ", ".join(A.NODE_AREAS)))
        for area, spec in sorted(specs.items()):
            if not isinstance(spec, dict):
                raise AnsibleError("drift_check: areas.%s: expected the role's spec (a dict), got %r" % (area, spec))
        result.update(changed=False, drift_records=[], checked=[])
        if not specs:
            return result
        probe = self._execute_module("rdma.fabric.state_check", task_vars=task_vars,
                                     module_args={"areas": specs, "host": host, "return_facts": False})
        if probe.get("unreachable"):
            return probe
        if probe.get("failed"):
            result["drift_records"] = [A.host_record(host, "state_check failed: %s" % probe.get("msg"))]
            result["checked"] = sorted(specs)
            return result
        result.update(drift_records=probe.get("drift_records") or [], checked=probe.get("checked") or [])
        return result
