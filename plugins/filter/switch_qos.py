# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch_qos filters (logic in module_utils/switch/_agreement.py); documentation in the NAME.yml files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.switch import _agreement
from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import wrap


def switch_qos_rates(ports, rdma):
    """A host's CNP and pause rates per netdev, for the switch_qos ECN advice."""
    if not isinstance(ports, dict) or not isinstance(rdma, dict):
        raise TypeError("expected rdma_health's ports (a dict) and ansible_facts.rdma (a dict)")
    return _agreement.host_rates(ports, rdma)


class FilterModule(object):
    def filters(self):
        return {"switch_qos_rates": wrap(switch_qos_rates, (TypeError, KeyError, ValueError))}
