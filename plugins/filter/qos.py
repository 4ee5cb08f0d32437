# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.qos_pending: which RoCE ports differ from the desired QoS, decided on the
controller from one rdma_facts ``qos`` gather, with the modules' own parsers and compares.

The roce_qos role runs rdma.fabric.mlnx_qos and rdma.fabric.dcqcn only on the ports this
returns, so a converged node costs one module call instead of two per port. It never
decides alone that a port is converged when it cannot tell: a port it cannot parse or
compare (read error, bad config, unknown parameter) is pending, and the module then
reports the problem in its own words. Documentation in qos_pending.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils import _dcqcn, _mlnx_qos
from ansible_collections.rdma.fabric.plugins.module_utils._qos_validate import ValidationError


def _mlnx_qos_pending(report, config, state, interface):
    if report is None:
        return True
    try:
        have = _mlnx_qos.parse_report(report)
        return bool(_mlnx_qos.plan_commands(_mlnx_qos.normalize_want(config), have, state, interface))
    except (_mlnx_qos.MlnxQosError, ValidationError):
        return True


def _dcqcn_pending(files, config, state, interface, device, port):
    if files is None:
        return True
    try:
        want = _dcqcn.normalize_want(config, interface, device)
        have = _dcqcn.parse_tree(_dcqcn.parse_running_config(files), interface, device, port)
        if "rdma_cm_tos" in want and "rdma_cm_tos" not in have:
            return True          # no rdma_cm configfs: the module says why
        return bool(_dcqcn.plan_writes(want, have, state, interface, device, port))
    except (_dcqcn.DcqcnError, ValidationError):
        return True


def qos_pending(qos, ports, mlnx_qos_config=None, dcqcn_config=None, state="replaced"):
    """``{'mlnx_qos': [netdev...], 'dcqcn': [netdev...]}``: the ports of ``ports`` (dicts with
    ``netdev``, ``device``, ``port``) whose live state in ``qos`` (``ansible_facts.rdma.qos``)
    differs from the config, or cannot be judged."""
    if not isinstance(qos, dict):
        raise AnsibleFilterError("qos_pending: the input must be ansible_facts.rdma.qos "
                                 "(rdma_facts with gather_subset qos), got %r" % (type(qos).__name__,))
    if state not in ("merged", "replaced"):
        raise AnsibleFilterError("qos_pending: state=%r: merged or replaced" % (state,))
    pending = {"mlnx_qos": [], "dcqcn": []}
    for item in ports or []:
        netdev = item["netdev"]
        live = qos.get(netdev) or {}
        if mlnx_qos_config is not None and _mlnx_qos_pending(live.get("mlnx_qos"), mlnx_qos_config, state, netdev):
            pending["mlnx_qos"].append(netdev)
        if dcqcn_config is not None and _dcqcn_pending(live.get("dcqcn"), dcqcn_config, state, netdev,
                                                       item["device"], int(item["port"])):
            pending["dcqcn"].append(netdev)
    return pending


class FilterModule(object):
    def filters(self):
        return {"qos_pending": qos_pending}
