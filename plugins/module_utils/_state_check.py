# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Several resources checked in one module call (the drift check's only node round trip
per area set): each resource's own reader, planner and prediction through the engine in
check mode. Nothing is written."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils._resource import check_resource


def _mlnx_qos(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils._mlnx_qos import MlnxQosResource
    return MlnxQosResource(module)


def _dcqcn(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils._dcqcn import DcqcnResource
    return DcqcnResource(module)


def _lldp_dcb(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils._lldp_dcb import LldpDcbResource
    return LldpDcbResource(module, dcbx_check=options.get("dcbx_check", True),
                           switch_dcbx_to_os=options.get("switch_dcbx_to_os", False))


def _node_files(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils._node_files import NodeFilesResource
    return NodeFilesResource(module)


RESOURCES = {"mlnx_qos": _mlnx_qos, "dcqcn": _dcqcn, "lldp_dcb": _lldp_dcb, "node_files": _node_files}


def check_all(module, requests):
    """``[{name, area, resource, state, config, options}]`` -> the same list with ``failed``
    and ``result`` (before/after/commands, or msg) of each. One failing resource does not
    stop the others: its error is its result."""
    out = []
    for index, request in enumerate(requests or []):
        name = request.get("resource")
        entry = {"area": request.get("area"), "resource": name, "name": request.get("name") or name}
        factory = RESOURCES.get(name)
        if factory is None:
            entry.update(failed=True, result={"msg": "resources[%d].resource=%r: one of %s"
                                                     % (index, name, ", ".join(sorted(RESOURCES)))})
        else:
            resource = factory(module, request.get("options") or {})
            failed, result = check_resource(module, resource, request.get("state") or "merged",
                                            request.get("config"))
            entry.update(failed=failed, result=result)
        out.append(entry)
    return out
