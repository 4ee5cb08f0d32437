# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drift check's areas, on the node. An area's *inputs* are what its role would set on
this node. The controller sends each area's *spec* (``__ROLE_drift_spec`` in the role's vars:
the role's settings and the files rendered from its templates, with slots such as
``@RDMA_FABRIC_OPENSM_GUID@`` for what only the node knows, and no facts); ``state_check``
reads the facts (``readers``), plans with the roles' own planners (``plan_inputs``:
``areas/roce_qos.py``, ``_nccl_env_plan``, ``areas/gpudirect.py``, ``_opensm_plan``), fills the
slots, checks and judges, in the same call: one round trip per host.

``AREAS[area](inputs, host)`` turns inputs into the resource checks ``state_check`` runs;
``judge(host, requests, entries)`` turns their results into records.

A request is a ``state_check`` resource (its records are the smallest settings that differ
between ``before`` and ``after``), or carries ``judge(host, result) -> records`` to read the
result itself, or ``records`` already judged from the facts (no module call).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils import _secrets
from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect, roce_qos


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
    """nccl.conf (and the environment file) key by key against what the node's topology gives
    today; a missing file is drift of every key."""
    from ansible_collections.rdma.fabric.plugins.module_utils._nccl import parse_conf
    from ansible_collections.rdma.fabric.plugins.module_utils._nccl_consistency import as_text
    node = inputs["node"]
    errors = list(inputs.get("errors") or []) + list(node.get("errors") or [])
    if errors:
        return [{"records": _config_records(host, "nccl_env", errors)}]
    if not node["active"]:
        return []
    paths = list(inputs["paths"])
    owner, group = inputs.get("owner") or "root", inputs.get("group") or "root"
    files = [{"path": p, "content": node["text"], "mode": "0644", "owner": owner, "group": group} for p in paths]
    expected = dict((k, as_text(v)) for k, v in node["settings"].items())

    def judge(host, result):
        records = []
        for path in paths:
            have = ((result.get("before") or {}).get("files") or {}).get(path) or {}
            if have.get("state") != "present":
                records.extend(record(host, "nccl_env", path, key, value, None) for key, value in sorted(expected.items()))
                continue
            found = parse_conf(have.get("content") or "")
            for key in sorted(set(expected) | set(found)):
                if expected.get(key) != found.get(key):
                    records.append(record(host, "nccl_env", path, key, expected.get(key), found.get(key)))
            for key, want in (("mode", "0644"), ("owner", owner), ("group", group)):
                if have.get(key) != want:
                    records.append(record(host, "nccl_env", path, key, want, have.get(key)))
        return records
    return [{"area": "nccl_env", "resource": "node_files", "name": "NCCL files", "options": {"content": True},
             "config": {"files": files, "units": []}, "judge": judge}]


# opensm.conf's secrets are what the one list (_secrets) says: OpenSM's keys (these) and any
# other *_key (a vendor's), never shown, not even a digit of them.
SECRET_KEYS = _secrets.OPENSM_KEYS
HIDDEN = "(hidden, differs)"
_OPTION_LINE = re.compile(r"[ \t]*(?P<name>[^ \t]+)[ \t]*(?P<value>.*)\Z", re.S)
_OPTION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_KEY_LIKE = re.compile(r"0[xX][0-9a-fA-F]+|[0-9a-fA-F]{8,}")


def _opensm_options(text):
    """opensm.conf as ``{name: value}``, read as OpenSM reads it (osm_subn_parse_conf_file):
    ``#`` starts a comment anywhere on a line, the name is the first word (split on spaces and
    tabs: ``sm_key<TAB>0x..`` is the name ``sm_key``), the value the rest without its blanks and
    one pair of quotes around it (clean_val); the last line of a name wins."""
    options = {}
    for line in (text or "").splitlines():
        found = _OPTION_LINE.match(line.split("#", 1)[0])
        if not found:
            continue
        value = found.group("value").strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        options[found.group("name")] = value
    return options


def _hidden(key, value):
    return _secrets.hide(key, value, HIDDEN)


def _setting(key):
    """The record's setting for a name of opensm.conf: the name; for a line that is no option
    name (a key on a line of its own, ``sa_key=0x..``), the line with its secrets and every
    value that could be a key hidden."""
    if _OPTION_NAME.match(key):
        return key
    return _KEY_LIKE.sub("(hidden)", _secrets.redact_text(key, "(hidden)"))


def _mask(records, secrets):
    """``records`` with every known secret value hidden wherever it stands (a last guard: the
    records of a broken file must not print a key either)."""
    secrets = sorted((s for s in secrets if len(s) >= _secrets.MIN_SECRET_LENGTH), key=len, reverse=True)
    if not secrets:
        return records

    def clean(value):
        if isinstance(value, str):
            for secret in secrets:
                value = value.replace(secret, "(hidden)")
        return value
    return [dict((k, clean(v)) for k, v in r.items()) for r in records]


def _conf_secrets(options, text):
    """The secret values of an opensm.conf: those of its secret names and any secret its lines
    (comments left out, as OpenSM leaves them) hold in another layout."""
    lines = "\n".join(line.split("#", 1)[0] for line in (text or "").splitlines())
    return set(v for k, v in options.items() if _secrets.is_secret(k)) | _secrets.secret_values(lines)


def opensm_requests(inputs, host):
    """The managed opensm.conf keys (secrets never printed), partitions, the drop-in and the
    service; from the fabric's SMs read once: exactly one MASTER, this SM in the state its
    role intends, at the intended priority."""
    if inputs.get("errors"):
        return [{"records": _config_records(host, "opensm", inputs["errors"])}]
    sm = inputs.get("sm")
    guid, role, priority = inputs["guid"], inputs["role"], int(inputs["priority"])
    judged = []
    if sm is not None:
        if sm.get("master_count") != 1:
            judged.append(record(host, "opensm", "subnet", "masters", 1, sm.get("master_count")))
        mine = [p for p in sm.get("sm_ports") or [] if p.get("guid") == guid]
        if not mine:
            judged.append(record(host, "opensm", guid, "state", role, "absent"))
        for port in mine:
            if port.get("state") != role:
                judged.append(record(host, "opensm", guid, "state", role, port.get("state")))
            if port.get("priority") is not None and int(port["priority"]) != priority:
                judged.append(record(host, "opensm", guid, "priority", priority, port["priority"]))
    config_file = inputs["config_file"]
    wanted = dict((f["path"], f) for f in inputs["files"])

    def judge(host, result):
        records = []
        before, after = result.get("before") or {}, result.get("after") or {}
        for path in sorted(wanted):
            have, want = (before.get("files") or {}).get(path) or {}, (after.get("files") or {}).get(path) or {}
            if have.get("state") != "present":
                records.append(record(host, "opensm", path, "state", "present", have.get("state")))
                continue
            if path == config_file:
                expected = _opensm_options(wanted[path]["content"])
                found = _opensm_options(have.get("content"))
                conf = []
                for key in sorted(set(expected) | set(found)):
                    if expected.get(key) != found.get(key):
                        conf.append(record(host, "opensm", path, _setting(key), _hidden(key, expected.get(key)),
                                           _hidden(key, found.get(key))))
                records.extend(_mask(conf, _conf_secrets(expected, wanted[path]["content"])
                                     | _conf_secrets(found, have.get("content"))))
            elif have.get("checksum") != want.get("checksum"):
                records.append(record(host, "opensm", path, "content", want.get("checksum"), have.get("checksum")))
            for key in ("mode", "owner", "group"):
                if have.get(key) != want.get(key):
                    records.append(record(host, "opensm", path, key, want.get(key), have.get(key)))
        for name in sorted((after.get("units") or {})):
            have, want = (before.get("units") or {}).get(name) or {}, after["units"][name]
            for key in ("enabled", "active"):
                if have.get(key) != want.get(key):
                    records.append(record(host, "opensm", name, key, want.get(key), have.get(key)))
        return records
    return [{"records": judged},
            {"area": "opensm", "resource": "node_files", "name": "OpenSM files", "options": {"content": True},
             "config": {"files": inputs["files"], "units": inputs["units"]}, "judge": judge}]


AREAS = {"roce_qos": roce_qos_requests, "gpudirect": gpudirect_requests, "nccl_env": nccl_env_requests,
         "opensm": opensm_requests}

# The areas state_check plans on the node from a spec, and the facts each needs.
NODE_AREAS = ("opensm", "roce_qos", "nccl_env", "gpudirect")


def readers(specs):
    """The ``state_check`` facts the node-planned areas start from: rdma_facts (with the GIDs and
    GPUs NCCL needs), gdr_readiness for gpudirect and for NCCL's dma-buf decision."""
    wanted = {}
    if "roce_qos" in specs or "nccl_env" in specs:
        wanted["rdma_facts"] = {"gather_subset": ["devices", "gids", "gpus"] if "nccl_env" in specs else ["devices"]}
    if "gpudirect" in specs or "nccl_env" in specs:
        settings = (specs.get("gpudirect") or {}).get("settings") or {}
        wanted["gdr_readiness"] = {"gdr_level": settings.get("gdr_level") or "PXB"}
    if "opensm" in specs:
        spec = specs["opensm"] or {}
        wanted["opensm"] = {"ibstat": not spec.get("guid")}
        wanted["sm_info"] = {"environment": spec.get("query_environment") or {}}
    return wanted


def fill_slots(text, slots, plan):
    """A file rendered on the controller with a slot (``@NAME@``) where a value of the node's
    plan goes (``{slot: plan key}``), filled from this node's plan; a list is joined by spaces,
    as the templates join it."""
    for slot, key in sorted((slots or {}).items()):
        value = plan[key]
        text = text.replace(slot, " ".join(value) if isinstance(value, (list, tuple)) else str(value))
    return text


def plan_inputs(area, spec, facts, host):
    """An area's inputs (what its role would set) from the controller's ``spec`` and this
    node's ``facts``, with the role's own planners. A PlanError is the area's config record."""
    from ansible_collections.rdma.fabric.plugins.module_utils._common import PlanError
    try:
        if area == "roce_qos":
            errors = roce_qos.config_errors(spec["settings"])
            return dict(spec, area=area, errors=errors, plan=None if errors else roce_qos.plan(facts["rdma"], spec))
        if area == "nccl_env":
            from ansible_collections.rdma.fabric.plugins.module_utils import _nccl_env_plan
            errors = _nccl_env_plan.config_errors(spec["config"])
            node = {"errors": [], "active": False} if errors else \
                _nccl_env_plan.node(facts["rdma"], spec["config"], host, facts.get("gdr"))
            return dict(spec, area=area, errors=errors, node=node)
        if area == "gpudirect":
            errors = gpudirect.config_errors(spec["settings"])
            return dict(spec, area=area, errors=errors, plan=None if errors else gpudirect.plan(facts["gdr"], spec))
        if area == "opensm":
            return opensm_inputs(spec, facts)
    except PlanError as exc:
        return {"area": area, "errors": [str(exc)], "plan": {"errors": []}, "node": {"errors": []}}
    raise ValueError("plan_inputs: %r is not planned on the node (one of %s)" % (area, ", ".join(NODE_AREAS)))


def opensm_inputs(spec, facts):
    """OpenSM's inputs on an SM node: the OS family from its marker files, the port from
    ``ibstat`` (unless the GUID is bound), the role's files with the slots filled, and the
    fabric's SMs as read in the same call."""
    from ansible_collections.rdma.fabric.plugins.module_utils import _opensm_plan
    from ansible_collections.rdma.fabric.plugins.module_utils._common import PlanError
    node = facts.get("opensm") or {}
    choice = _opensm_plan.os_family(node.get("markers"), spec.get("facts_family") or None)
    if "error" in choice:
        raise PlanError(choice["error"])
    family = spec["families"][choice["family"]]
    guid = spec.get("guid")
    if not guid:
        port = _opensm_plan.select_port(node.get("ports") or [], "", spec.get("ca") or "", spec.get("ca_port"))
        if "error" in port:
            raise PlanError(port["error"])
        guid = port["port"]["port_guid"]
    values = {"guid": guid, "partitions_file": family["partitions_file"]}
    slots = dict((slot, key) for key, slot in (spec.get("slots") or {}).items())

    def fill(text):
        return fill_slots(text, slots, values)
    files = [{"path": family["config_file"], "content": fill(spec["config"]), "mode": "0600"},
             {"path": family["partitions_file"], "content": fill(spec["partitions"]), "mode": "0644"},
             {"path": family["dropin_file"], "content": fill(spec["dropins"][choice["family"]]), "mode": "0644"}]
    if family.get("ports_file"):
        files.append({"path": family["ports_file"], "content": fill(spec["ports"]), "mode": "0644"})
    units = [{"name": family["service"], "enabled": bool(spec.get("service_enabled")),
              "active": bool(spec.get("service_active"))}]
    return {"area": "opensm", "files": files, "units": units, "config_file": family["config_file"],
            "role": spec["role"], "guid": guid, "priority": spec["priority"], "sm": facts.get("sm")}


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
    from ansible_collections.rdma.fabric.plugins.module_utils._report import drift_records, module_objects
    records = []
    for request, entry in zip(requests, entries):
        if entry["failed"]:
            records.append(record(host, entry["area"], entry["name"], "read", "readable", entry["result"].get("msg")))
            continue
        if request.get("judge") is not None:
            records.extend(request["judge"](host, entry["result"]))
            continue
        if entry["area"] in ("roce_qos", "gpudirect"):
            area_object = gpudirect if entry["area"] == "gpudirect" else roce_qos
            records.extend(area_object.records(host, [(entry["resource"], entry["result"])]))
            continue
        records.extend(drift_records(host, entry["area"], module_objects(entry["result"])))
    return records


# What state_check takes of a request; the rest (judge, records) stays with the caller.
MODULE_FIELDS = ("resource", "name", "area", "state", "config", "options")


def module_request(request):
    return dict((k, v) for k, v in request.items() if k in MODULE_FIELDS)
