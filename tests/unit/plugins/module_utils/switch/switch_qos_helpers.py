# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared inputs of the switch_qos tests: a leaf's settings over hosts that keep the roce_qos
role's defaults (read from roles/roce_qos/defaults/main.yml, not restated here)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
with open(os.path.join(REPO, "roles", "roce_qos", "defaults", "main.yml")) as _handle:
    ROCE_DEFAULTS = yaml.safe_load(_handle)
with open(os.path.join(REPO, "roles", "switch_qos", "defaults", "main.yml")) as _handle:
    SWITCH_DEFAULTS = yaml.safe_load(_handle)


def leaf(os_name, speed=100, ports=None, hosts=None, **switch_vars):
    """The settings of one leaf with ``ports`` (default: Ethernet0 to lab-hgx-01 eth0 at ``speed``)."""
    variables = dict(SWITCH_DEFAULTS, switch_qos_os=os_name)
    variables["switch_qos_ports"] = ports or [{"name": "Ethernet0", "speed": speed, "host": "lab-hgx-01",
                                               "host_interface": "eth0"}]
    variables.update(("switch_qos_" + k, v) for k, v in switch_vars.items())
    if hosts is None:
        hosts = {"lab-hgx-01": {}}
    host_variables = dict((name, dict(copy.deepcopy(ROCE_DEFAULTS), **values)) for name, values in hosts.items())
    return switch_qos.settings(variables, host_variables)
