# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the rdma.fabric.gpudirect role: the variable checks of its preflight and the pure
decision between the one read of the node (``gdr_readiness``) and the apply tasks; documentation
in the gpudirect_NAME.yml files. Pure functions, run on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils import _gpudirect_plan as P
from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import planner

acs_mask = P.acs_mask
PEER_MEMORY_MODULES = P.PEER_MEMORY_MODULES
ACS_UNIT = P.ACS_UNIT
config_errors = planner(P.config_errors)
plan = planner(P.plan)


class FilterModule(object):
    def filters(self):
        return {"gpudirect_config_errors": config_errors, "gpudirect_plan": plan}
