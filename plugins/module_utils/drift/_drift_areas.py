# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift check's areas, on the node. An area's *inputs* are what its role would set on
this node. The controller sends each area's *spec* (``__ROLE_drift_spec`` in the role's vars:
the role's settings and the files rendered from its templates, with slots such as
``@RDMA_FABRIC_OPENSM_GUID@`` for what only the node knows, and no facts); ``state_check``
reads the facts each area declares (its ``FACTS``, gathered by ``readers``), plans with the
roles' own planners (``plan_inputs``: the ``plan`` of ``areas/roce_qos.py``, ``areas/nccl_env.py``,
``areas/gpudirect.py``, ``areas/opensm.py``, ``areas/nic_firmware.py``), fills the slots, checks and
judges, in the same call: one round trip per host.

``AREAS[area](inputs, host)`` (the area object's ``drift_requests``) turns inputs into the
resource checks ``state_check`` runs;
``judge(host, requests, entries)`` turns their results into records.

A request is a ``state_check`` resource (its records are the smallest settings that differ
between ``before`` and ``after``), or carries ``judge(host, result) -> records`` to read the
result itself, or ``records`` already judged from the facts (no module call).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.areas import _registry
# record: the one record shape (the drift check's callers build theirs with it)
from ansible_collections.rdma.fabric.plugins.module_utils.common._records import record


def host_record(host, actual, setting="check"):
    return {"host": host, "area": "host", "object": "", "setting": setting, "expected": "checked", "actual": actual}


# The areas state_check plans on the node from a spec (areas/_registry: planned on the node), in
# the registry's order; each declares the facts it reads (``FACTS``: key, reader, arguments) and
# which of them its plan takes (``PLAN_FACTS``), and turns its inputs into requests
# (``drift_requests(inputs, host)``).
NODE_AREAS = _registry.names(planned=_registry.NODE)
# The area objects: their records name what their role's verify names.
AREA_OBJECTS = _registry.modules(planned=_registry.NODE)
AREAS = dict((name, area.drift_requests) for name, area in AREA_OBJECTS.items())


def _arguments(arguments, settings):
    return dict(arguments(settings) if callable(arguments) else arguments)


def _merged(reader, wanted, arguments):
    """One reader asked by several areas: the union of their lists (in the areas' order), a
    value asked by one; two areas asking one argument with different values is a ValueError."""
    merged = dict(wanted)
    for name, value in arguments.items():
        if isinstance(value, list) and isinstance(merged.get(name), list):
            merged[name] = merged[name] + [item for item in value if item not in merged[name]]
        elif name in merged and merged[name] != value:
            raise ValueError("readers: %s %s asked as %r and as %r" % (reader, name, merged[name], value))
        else:
            merged[name] = list(value) if isinstance(value, list) else value
    return merged


def readers(specs):
    """The ``state_check`` readers the node-planned areas of ``specs`` start from, with their
    arguments (``_state_check.gather_facts``): what each area declares (``FACTS``), merged."""
    wanted = {}
    for area in NODE_AREAS:
        if area not in specs:
            continue
        settings = (specs[area] or {}).get("settings") or {}
        for _key, reader, arguments in AREA_OBJECTS[area].FACTS:
            wanted[reader] = _merged(reader, wanted.get(reader) or {}, _arguments(arguments, settings))
    return wanted


def area_facts(area, facts):
    """The gathered ``facts`` the area declares (``FACTS``): all its plan and records see."""
    return dict((key, facts[key]) for key, _reader, _arguments in AREA_OBJECTS[area].FACTS if key in facts)


def plan_inputs(area, spec, facts, host):
    """An area's inputs (what its role would set) from the controller's ``spec`` and this
    node's ``facts``, with the role's own planner (the area object's ``plan``), given the facts
    it declares: ``facts[PLAN_FACTS]``, or all of them (``PLAN_FACTS`` None); the others it
    declares go with the inputs to its records (opensm's ``sm``). A spec that names its host
    (nccl_env's, for its messages) names this node. A PlanError is the area's config record."""
    from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
    if area not in NODE_AREAS:
        raise ValueError("plan_inputs: %r is not planned on the node (one of %s)" % (area, ", ".join(NODE_AREAS)))
    obj = AREA_OBJECTS[area]
    declared = area_facts(area, facts)
    key = obj.PLAN_FACTS
    inputs = dict((name, declared.get(name)) for name, _reader, _arguments in obj.FACTS
                  if key is not None and name != key)
    try:
        errors = obj.config_errors(spec["settings"])
        plan = None
        if not errors:
            plan = obj.plan(declared if key is None else declared[key], dict(spec, host=host) if "host" in spec else spec)
        return dict(inputs, area=area, errors=errors, plan=plan)
    except PlanError as exc:
        return {"area": area, "errors": [str(exc)], "plan": {"errors": []}, "node": {"errors": []}}


def requests_of(inputs_list, host):
    """``(requests, records)``: the resource checks of every area's inputs, and the records
    judged from the inputs alone (config errors, facts)."""
    requests, records = [], []
    for item in inputs_list:
        try:
            for request in AREAS[item["area"]](item, host):
                if request.get("records") is not None:      # judged from the facts alone
                    records.extend(request["records"])
                else:
                    requests.append(request)
        except (KeyError, TypeError, ValueError) as exc:
            records.append(record(host, item.get("area"), "", "config", "valid", "%s: %s" % (type(exc).__name__, exc)))
    return requests, records


def judge(host, requests, entries):
    """Records from ``state_check``'s result of each request (same order): a failed read is
    a record; an area that reads the result itself (``judge``) does; otherwise every smallest
    setting that differs between ``before`` and ``after``."""
    from ansible_collections.rdma.fabric.plugins.module_utils.common._records import drift_records, module_objects
    records = []
    for request, entry in zip(requests, entries):
        if entry["failed"]:
            records.append(record(host, entry["area"], entry["name"], "read", "readable", entry["result"].get("msg")))
            continue
        if request.get("judge") is not None:
            records.extend(request["judge"](host, entry["result"]))
            continue
        if entry["area"] in AREA_OBJECTS:
            records.extend(AREA_OBJECTS[entry["area"]].records(host, [(entry["resource"], entry["result"])]))
            continue
        records.extend(drift_records(host, entry["area"], module_objects(entry["result"])))
    return records


# What state_check takes of a request; the rest (judge, records) stays with the caller.
MODULE_FIELDS = ("resource", "name", "area", "state", "config", "options")


def module_request(request):
    return dict((k, v) for k, v in request.items() if k in MODULE_FIELDS)
