# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's part of the rails area (module_utils/areas/rails.py decides the rest): what
needs the rail planner (plugin_utils/_rail_plan.py), which sees the whole fleet and runs only on
the controller. ``spec_inputs(variables)`` is what ``_role_specs.area_spec`` hands the area's
``spec`` besides the role's variables: the planner's own checks of the role's parameters (a
plan of no node) and of ``rails_nics`` (as one node's NICs), each message naming the role
variable (``rails_pools[1]``, ``rails_nics[1]``) in place of the planner's field."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.plugin_utils import _rail_plan

# the planner's fields and the role variables that give them
_PLAN_FIELDS = (("pools", "rails_pools"), ("management", "rails_management"), ("scheme", "rails_scheme"),
                ("release", "rails_release"), ("leaf_ports", "rails_leaf_ports"),
                ("oversubscription", "rails_oversubscription"), ("subnet_prefix", "rails_subnet_prefix"))


def _named(exc):
    text = str(exc)
    for field, variable in _PLAN_FIELDS:
        if re.match(r"%s\b" % field, text):
            return variable + text[len(field):]
    return re.sub(r"^nodes\.node\.rails", "rails_nics", text)


def planner_errors(variables):
    """The rail planner's checks of the role's variables (``{rails_*: value}``), each message
    naming the variable and the value; [] when the planner takes them. An empty ``rails_pools``
    is left to the area (it names the variable itself)."""
    errors = []
    pools = variables.get("rails_pools")
    if pools:
        try:
            _rail_plan.plan({}, pools, scheme=variables.get("rails_scheme"),
                            management=variables.get("rails_management"), release=variables.get("rails_release"),
                            leaf_ports=variables.get("rails_leaf_ports"),
                            oversubscription=variables.get("rails_oversubscription"),
                            subnet_prefix=variables.get("rails_subnet_prefix"))
        except ValueError as exc:
            errors.append(_named(exc))
    nics = variables.get("rails_nics")
    if isinstance(nics, list):
        try:
            _rail_plan.normalize_nodes({"node": {"rails": nics}})
        except ValueError as exc:
            errors.append(_named(exc))
    return errors


def spec_inputs(variables):
    """The keyword arguments of the rails area's ``spec`` that only the controller can give."""
    return {"planner_errors": planner_errors(variables)}
