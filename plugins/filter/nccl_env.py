# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the rdma.fabric.nccl_env role: the variable checks of its preflight, the per-node
decision from one rdma_facts read, the fleet check over the play's hosts and the check of what
the files hold; documentation in the nccl_env_NAME.yml files. Pure functions, run on the
controller; the NCCL rules themselves stay in module_utils/_nccl.py and _nccl_consistency.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils import _nccl_consistency
from ansible_collections.rdma.fabric.plugins.module_utils import _nccl_env_plan as P
from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import planner

MANAGED = P.MANAGED
OPTIONS = P.OPTIONS
config_errors = planner(P.config_errors)
node = planner(P.node)
text_errors = planner(P.text_errors)
verify_errors = planner(P.verify_errors)


def fleet(hostvars, hosts, groups=None, per_node=None, key="__nccl_env_node"):
    """The fleet check of ``nccl_fleet_diff`` over the play's ``hosts``, each read once from
    ``hostvars`` (``key``: the host's nccl_env_node result, with its group_names); hosts without
    it or without rails are left out."""
    entries = []
    for host in hosts or []:
        variables = hostvars[host]
        if key not in variables:
            continue
        entry = variables[key]
        if not isinstance(entry, dict) or not entry.get("active"):
            continue
        entries.append({"host": host, "settings": entry["settings"], "groups": list(variables.get("group_names") or []),
                        "fabric": entry["fabric"]})
    try:
        return _nccl_consistency.fleet_diff(entries, groups=groups, per_node=per_node)
    except _nccl.NcclError as exc:
        raise AnsibleFilterError("nccl_env_fleet: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"nccl_env_config_errors": config_errors, "nccl_env_node": node,
                "nccl_env_verify_errors": verify_errors, "nccl_env_fleet": fleet}
