# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift check's areas, on the controller: from an area's inputs (its role's settings,
given by the role's ``drift_inputs`` tasks) and the node's facts, the resource checks to run
(``rdma.fabric.state_check`` requests), computed by the same filters the roles converge with.

Each area: ``requests(inputs, facts) -> [request]``; ``FACTS[area]`` names the rdma_facts
subsets it needs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.filter.roce_qos import roce_qos_config


def roce_qos_requests(inputs, facts):
    plan = roce_qos_config(facts, inputs["settings"])
    requests = []
    if plan["ports"]:
        requests.append({"area": "roce_qos", "resource": "mlnx_qos", "state": "replaced", "config": plan["mlnx_qos"]})
        requests.append({"area": "roce_qos", "resource": "dcqcn", "state": "replaced", "config": plan["dcqcn"]})
        if inputs["settings"].get("lldp"):
            requests.append({"area": "roce_qos", "resource": "lldp_dcb", "state": "merged", "config": plan["lldp"]})
    if inputs.get("persist"):
        files = [{"path": inputs["state_file"], "content": plan["state_file"]}] + list(inputs.get("files") or [])
        requests.append({"area": "roce_qos", "resource": "node_files", "name": "boot applier",
                         "config": {"files": files, "units": list(inputs.get("units") or [])}})
    return requests


AREAS = {"roce_qos": roce_qos_requests}
FACTS = {"roce_qos": ["devices"]}
