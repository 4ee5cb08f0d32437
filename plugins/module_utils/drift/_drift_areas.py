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

``AREAS[area](inputs, host)`` turns inputs into the resource checks ``state_check`` runs;
``judge(host, requests, entries)`` turns their results into records.

A request is a ``state_check`` resource (its records are the smallest settings that differ
between ``before`` and ``after``), or carries ``judge(host, result) -> records`` to read the
result itself, or ``records`` already judged from the facts (no module call).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect, nccl_env, roce_qos
from ansible_collections.rdma.fabric.plugins.module_utils.areas import nic_firmware, opensm


def record(host, area, obj, setting, expected, actual):
    return {"host": host, "area": area, "object": obj, "setting": setting, "expected": expected, "actual": actual}


def host_record(host, actual, setting="check"):
    return {"host": host, "area": "host", "object": "", "setting": setting, "expected": "checked", "actual": actual}


def _config_records(host, area, errors):
    return [record(host, area, "", "config", "valid", error) for error in errors]


def roce_qos_requests(inputs, host):
    """The roce_qos area's plan's module calls (areas/roce_qos.py ``plan``: mlnx_qos, dcqcn, the
    LLDP TLVs where lldpad runs, the boot applier), the calls the role makes."""
    if inputs.get("errors"):
        return [{"records": _config_records(host, "roce_qos", inputs["errors"])}]
    return [dict(request, area="roce_qos") for request in inputs["plan"]["requests"]]


def gpudirect_requests(inputs, host):
    """The gpudirect area's plan (areas/gpudirect.py ``plan``): what the read itself shows
    (runtime ACS redirect on the GPU-NIC paths, the peer-memory module not loaded), then its
    module calls (the kernel arguments, the ACS boot unit and files), the calls the role makes."""
    if inputs.get("errors"):
        return [{"records": _config_records(host, "gpudirect", inputs["errors"])}]
    plan = inputs["plan"]
    return [{"records": gpudirect.records(host, [("plan", plan)])}] + \
        [dict(request, area="gpudirect") for request in plan["requests"]]


def nccl_env_requests(inputs, host):
    """The nccl_env area's plan's node_files call (areas/nccl_env.py ``plan``: nccl.conf and the
    environment file with the text the node's topology gives today), the call the role makes; none
    on a node without rails. A missing file is drift of every NCCL variable it should hold."""
    errors = list(inputs.get("errors") or []) + list((inputs.get("plan") or {}).get("errors") or [])
    if errors:
        return [{"records": _config_records(host, "nccl_env", errors)}]
    return [dict(request, area="nccl_env") for request in inputs["plan"]["requests"]]


def opensm_requests(inputs, host):
    """The opensm area's plan (areas/opensm.py ``plan``): the fabric's SMs as read in the same call
    (one master, this SM in its role's state at its priority), then its node_files call (the
    files, opensm.conf key by key with its keys hidden, and the service), the call the role makes."""
    errors = list(inputs.get("errors") or []) + list((inputs.get("plan") or {}).get("errors") or [])
    if errors:
        return [{"records": _config_records(host, "opensm", errors)}]
    plan = inputs["plan"]
    if plan["ports_needed"]:
        return [{"records": _config_records(host, "opensm", ["opensm: ibstat was not read: no port to bind to"])}]
    judged = opensm.records(host, [("sm_info", {"sm": inputs.get("sm"), "expected": plan["sm_expected"]})])
    return [{"records": judged}] + [dict(request, area="opensm") for request in plan["requests"]]


def nic_firmware_requests(inputs, host):
    """The nic_firmware area's plan (areas/nic_firmware.py ``plan``): its mlxconfig call, the call
    the role makes, judged with the firmware pins (``firmware.version``), a value set and not
    yet current (``pending reset``) and one the firmware did not take as their own records."""
    errors = list(inputs.get("errors") or []) + list((inputs.get("plan") or {}).get("errors") or [])
    if errors:
        return [{"records": _config_records(host, "nic_firmware", errors)}]
    plan = inputs["plan"]
    return [dict(request, area="nic_firmware", judge=nic_firmware.judge(plan.get("versions")))
            for request in plan["requests"]]


AREAS = {"roce_qos": roce_qos_requests, "gpudirect": gpudirect_requests, "nccl_env": nccl_env_requests,
         "opensm": opensm_requests, "nic_firmware": nic_firmware_requests}

# The area objects (module_utils/areas/): their records name what their role's verify names.
AREA_OBJECTS = {"roce_qos": roce_qos, "nccl_env": nccl_env, "gpudirect": gpudirect, "opensm": opensm,
                "nic_firmware": nic_firmware}

# The areas state_check plans on the node from a spec; each declares the facts it reads
# (``FACTS``: key, reader, arguments) and which of them its plan takes (``PLAN_FACTS``).
NODE_AREAS = ("opensm", "roce_qos", "nccl_env", "gpudirect", "nic_firmware")


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
