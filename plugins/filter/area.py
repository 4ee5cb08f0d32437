# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The area objects (plugins/module_utils/areas/) as filters: the one way a role reaches its
area's Python. Each filter takes the area's name and calls that area's function.

- ``area_errors(spec, area)``: every problem of the role's settings, each naming the variable;
- ``area_plan(rdma_facts, area, spec)``: everything the role does on the node;
- ``area_records(results, area, host)``: the drift records of the modules' results;
- ``area_fleet(hostvars, area, hosts, options)``: the comparison of the play's hosts' plans
  (nccl_env: the NCCL settings must agree across the fleet).

Documentation in the .yml files of the same names.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.areas import _registry

# every area object (areas/_registry)
AREAS = _registry.modules()


def _area(name, area):
    if area not in AREAS:
        raise AnsibleFilterError("%s: %r is not an area object (one of %s)" % (name, area, ", ".join(sorted(AREAS))))
    return AREAS[area]


def _spec(name, spec):
    if not isinstance(spec, dict) or not isinstance(spec.get("settings"), dict):
        raise AnsibleFilterError("%s: expected the area's spec (__AREA_spec: a dict with settings), got %r"
                                 % (name, type(spec).__name__))
    return spec


def area_errors(spec, area):
    """Every problem of the area's settings, each naming the variable and the value; [] when good."""
    try:
        return _area("area_errors", area).config_errors(_spec("area_errors", spec)["settings"])
    except PlanError as exc:
        raise AnsibleFilterError(str(exc))


def area_plan(facts, area, spec):
    """The area's plan for the node with these facts (``ansible_facts.rdma``)."""
    area_object = _area("area_plan", area)
    if not isinstance(facts, dict):
        raise AnsibleFilterError("area_plan: expected ansible_facts.rdma (rdma.fabric.rdma_facts), got %r"
                                 % type(facts).__name__)
    try:
        return area_object.plan(facts, _spec("area_plan", spec))
    except PlanError as exc:
        raise AnsibleFilterError(str(exc))


def area_records(results, area, host):
    """Drift records of ``{module: registered result}`` (check mode: ``after`` expected)."""
    if not isinstance(results, dict):
        raise AnsibleFilterError("area_records: expected {module: registered result}, got %r" % type(results).__name__)
    return _area("area_records", area).records(host, list(results.items()))


def area_fleet(hostvars, area, hosts, options=None):
    """The area's comparison of the plans of the play's ``hosts`` (each host's ``__AREA`` var
    and its group_names, read once from ``hostvars``); ``options`` the plan's ``fleet``."""
    area_object = _area("area_fleet", area)
    if not _registry.row(area).fleet:
        raise AnsibleFilterError("area_fleet: the %s area has no fleet check" % area)
    key, plans = "__%s" % area, []
    for host in hosts or []:
        variables = hostvars[host]
        if key in variables:
            plans.append({"host": host, "plan": variables[key], "groups": list(variables.get("group_names") or [])})
    try:
        return area_object.fleet(plans, options)
    except PlanError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {"area_errors": area_errors, "area_plan": area_plan, "area_records": area_records,
                "area_fleet": area_fleet}
