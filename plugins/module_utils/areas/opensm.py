# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opensm area: OpenSM subnet managers in active/standby on the SM nodes (opensm.conf with
the SM_Key and the other keys, partitions.conf, the service's systemd drop-in, the service;
the priorities of HA). Everything the rdma.fabric.opensm role decides is here, as pure
functions with no host I/O:

- ``settings(variables)``: the role's settings from its variables (every option of
  ``roles/opensm/meta/argument_specs.yml``, the contract and the only list of them), plus the
  names of ``opensm_ha_hosts`` the inventory (``groups``) does not hold;
- ``config_errors(settings)``: every problem, each naming the ``opensm_*`` variable and its
  value (a key by its name only: module_utils/common/_secrets.py);
- ``spec(variables, render)``: what the controller hands the node: the settings, the priority,
  each OS family's paths, the one read's files and units, and the files rendered from the
  role's templates with slots (``SLOTS``) for what only the node knows (the port GUID, the
  family's partitions file). No facts;
- ``plan(facts, spec)``: everything the role does on the node from its read: the OS family,
  the port OpenSM binds to, the files (slots filled) and the unit, what differs from the read
  (install, change, reasons), and ``requests``: the one node_files call;
- ``records(host, results)``: the drift records of the node_files result (opensm.conf key by
  key, a key shown as "(hidden, differs)") and of the fabric's SMs (sm_info: one master, this
  SM in its role's state at its priority), named as the role's verify and the drift check
  both name them.

``ha_errors(members)`` is the cross-host check (one master per fabric, distinct priorities,
standbys below the master, distinct GUIDs) the role's preflight runs once per play.

The role (``rdma.fabric.area_*`` filters), the drift check (``state_check`` on the node) call
these. Errors are PlanError (the filters make them AnsibleFilterError with the same message).

Split by job: ``_opensm_node`` (ports, priority, OS family, the read and its plan),
``_opensm_settings`` (the variables and their checks, the HA layout), ``_opensm_records`` (the drift
records); this file is the area object, and every public name of the three is reachable here."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat
from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.common._guid import normalize_guid
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings
from ansible_collections.rdma.fabric.plugins.module_utils.common._records import config_records
from ansible_collections.rdma.fabric.plugins.module_utils.areas._opensm_node import (  # noqa: F401 pylint: disable=unused-import
    BINARIES,
    FAMILIES,
    FAMILY_MARKERS,
    conf_text,
    node_plan,
    os_family,
    read_spec,
    select_port,
    sm_priority,
    usable_ib_ports)
from ansible_collections.rdma.fabric.plugins.module_utils.areas._opensm_records import (  # noqa: F401 pylint: disable=unused-import
    CONFIG_FILES,
    HIDDEN,
    conf_options,
    records)
from ansible_collections.rdma.fabric.plugins.module_utils.areas._opensm_settings import (  # noqa: F401 pylint: disable=unused-import
    DEFAULT_PKEY,
    ENV_NAME_RE,
    IB_MTUS,
    IB_RATES,
    LINE_BREAKS,
    LOG_FLAGS_RE,
    MANAGED_OPTIONS,
    MEMBERSHIPS,
    MEMBER_KEYS,
    OPTION_NAME_RE,
    PARTITION_KEYS,
    PARTITION_NAME_RE,
    PATH_RE,
    PKEY_MAX,
    PKEY_MIN,
    PREFIX,
    ROUTING_ENGINE_RE,
    VARIABLE_CHECKS,
    conf_value,
    config_errors,
    effective_priority,
    extra_option_errors,
    ha_errors,
    normalize_key,
    partition_errors,
    partition_lines,
    with_default_partition)
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError


# ------------------------------------------------------------------ the area object
NAME = "opensm"
# read besides the role's own variables: the inventory, which every name of opensm_ha_hosts
# must be in (only the names it lacks are kept)
OTHER_VARIABLES = ("groups",)
# the role's boolean variables (converted as ``| bool`` converts them)
FLAGS = ("honor_guid2lid_file", "keep_default_partition", "allow_equal_priority", "install", "service_enabled",
         "verify")
# The files: family path key, role template, mode (opensm.conf holds the keys: 0600).
FILES = (
    ("config_file", "opensm/opensm.conf.j2", "0600"),
    ("partitions_file", "opensm/partitions.conf.j2", "0644"),
    ("dropin_file", "opensm/opensm-dropin.conf.j2", "0644"),
    ("ports_file", "opensm/opensm.default.j2", "0644"),
)
# The files are rendered on the controller with a slot where a value only the node knows goes
# (its port GUID from ibstat, its OS family's partitions file): plan key -> slot.
SLOTS = {"guid": "@RDMA_FABRIC_OPENSM_GUID@", "partitions_file": "@RDMA_FABRIC_OPENSM_PARTITIONS_FILE@"}


def _read_arguments(settings):
    """The OS family's markers, and ibstat's ports when the port GUID is to be discovered."""
    return {"ibstat": not settings.get("guid")}


def _sm_arguments(settings):
    """sminfo from a port with no SM, in its own environment (opensm_query_environment)."""
    return {"environment": settings.get("query_environment") or {}}


# What the area reads of the node (the drift check gathers it there, _state_check.gather_facts):
# (key, reader, arguments, or arguments(settings)). plan() takes facts[PLAN_FACTS]; ``sm``, the
# fabric's SMs as sm_info reads them, is judged by records (one master, this SM's state).
FACTS = (("opensm", "opensm", _read_arguments), ("sm", "sm_info", _sm_arguments))
PLAN_FACTS = "opensm"


def settings(variables):
    """The role's settings (keys without the ``opensm_`` prefix) from ``variables``, the templated
    value of every variable of the role's argument spec, plus ``groups`` when defined:
    ``unknown_ha_hosts`` is then the names of opensm_ha_hosts the inventory does not hold."""
    out = role_settings(variables, PREFIX, FLAGS)
    groups = variables.get("groups")
    ha_hosts = out.get("ha_hosts")
    out["unknown_ha_hosts"] = None
    if isinstance(groups, dict) and isinstance(ha_hosts, list):
        known = set(str(h) for h in groups.get("all") or ())
        out["unknown_ha_hosts"] = sorted(set(h for h in ha_hosts if isinstance(h, str) and h and h not in known))
    return out


def options(settings, priority):
    """opensm.conf's options, in the order written (the role's, then opensm_extra_options), as
    opensm.conf text; the port GUID and the partitions file are slots the node fills."""
    wanted = [
        ("guid", SLOTS["guid"]),
        ("sm_priority", priority),
        ("sm_key", normalize_key(settings["sm_key"], "opensm_sm_key")),
        ("sminfo_polling_timeout", int(settings["sminfo_polling_timeout"])),
        ("polling_retry_number", int(settings["polling_retry_number"])),
        ("honor_guid2lid_file", bool(settings.get("honor_guid2lid_file"))),
        ("partition_config_file", SLOTS["partitions_file"]),
        ("log_file", settings["log_file"]),
        ("log_flags", settings["log_flags"]),
        ("log_max_size", int(settings["log_max_size"])),
    ]
    if settings.get("routing_engine"):
        wanted.append(("routing_engine", settings["routing_engine"]))
    if settings.get("m_key"):
        wanted += [("m_key", normalize_key(settings["m_key"], "opensm_m_key")),
                   ("m_key_protection_level", int(settings["m_key_protection_level"])),
                   ("m_key_lease_period", int(settings["m_key_lease_period"]))]
    wanted += list((settings.get("extra_options") or {}).items())
    out = {}
    for key, value in wanted:
        out[key] = conf_value(value, key)
    return out


def read_files():
    """node_files options (state=gathered) of the role's one read: every family's files, markers
    and unit, and the binaries."""
    return read_spec(FAMILIES, [path for path, _family in FAMILY_MARKERS], BINARIES)


def spec(variables, render):
    """What the controller hands the node (the role's ``__opensm_spec``, the drift check's area
    spec): the settings, the priority, each family's paths, the one read, and the files rendered
    from the role's templates by ``render(template, template_vars)``, with slots (``SLOTS``) for
    what only the node knows. Settings ``config_errors`` refuses are rendered into no file
    (``files`` is None; the preflight and the plan report them). No facts: ``plan`` takes the
    node's."""
    values = settings(variables)
    out = {"settings": values, "families": FAMILIES, "read": read_files(), "slots": dict(SLOTS),
           "priority": None, "files": None}
    if config_errors(values):
        return out
    priority = effective_priority(values)
    partitions = with_default_partition(values.get("partitions"), values.get("keep_default_partition"))
    template_vars = {"__opensm_options": options(values, priority), "__opensm_priority": priority,
                     "__opensm_guid": SLOTS["guid"], "__opensm_partition_lines": partition_lines(partitions)}
    out["priority"] = priority
    out["files"] = {
        "config": render("opensm/opensm.conf.j2", template_vars),
        "partitions": render("opensm/partitions.conf.j2", template_vars),
        "ports": render("opensm/opensm.default.j2", template_vars),
        "dropins": dict((name, render("opensm/opensm-dropin.conf.j2",
                                      dict(template_vars, __opensm_dropin_execstart=family["dropin_execstart"])))
                        for name, family in sorted(FAMILIES.items())),
    }
    return out


def _fill(text, values):
    for key, slot in sorted(SLOTS.items()):
        text = text.replace(slot, str(values[key]))
    return text


def _ports(facts):
    if facts.get("ports") is not None:
        return facts["ports"]
    if facts.get("ibstat") is not None:
        try:
            return _ibstat.port_list(facts["ibstat"])
        except ValueError as exc:
            raise PlanError("opensm: ibstat: %s" % exc)
    return None


def _decide(gathered, files, units, values):
    try:
        return node_plan(gathered, files, units, BINARIES, values.get("install"))
    except ValueError as exc:
        raise PlanError("opensm: %s" % exc)


def _not_planned(errors):
    return {"errors": errors, "files": [], "units": [], "requests": [], "install": False, "change": False,
            "reasons": [], "port": {}, "guid": "", "priority": None, "service": None, "packages": [],
            "ports_needed": False}


def plan(facts, spec):
    """Everything the role does on the node from its read. ``facts``: ``gathered`` (the one
    node_files read, ``read_files()``) or ``markers`` (the family's marker files), ``os_family``
    (the facts' when gathered), ``ports`` (``ibstat`` parsed) or ``ibstat`` (its text; needed
    when opensm_guid is empty, and read when the plan changes something to check a bound GUID).

    Returns ``{errors, family, service, packages, config_file, guid, port, priority, role, files,
    units, install, change, reasons, sm_expected, ports_needed, requests}``; with ``errors`` (the
    settings, an unknown OS family, no port) nothing else is planned; with ``ports_needed``
    (opensm_guid empty, ibstat not read) only the family and ``install``.
    ``install``/``change``/``reasons``: what differs from ``gathered`` (``change`` None without it)."""
    values = spec["settings"]
    errors = config_errors(values)
    if errors or spec.get("files") is None:
        return _not_planned(errors or ["opensm: the spec holds no files (its settings were refused)"])
    try:
        read = facts.get("gathered") if facts.get("gathered") is not None else facts.get("markers")
        choice = os_family(read, facts.get("os_family") or None)
        if "error" in choice:
            return _not_planned([choice["error"]])
        family = spec["families"][choice["family"]]
        guid = normalize_guid(values["guid"]) if values.get("guid") else ""
        ports, port = _ports(facts), {}
        if ports is not None:
            found = select_port(ports, guid, values.get("ca") or "", values.get("ca_port"))
            if "error" in found:
                return _not_planned([found["error"]])
            port = found["port"]
            guid = guid or port["port_guid"]
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanError("opensm: %s: %s" % (type(exc).__name__, exc))
    units = [{"name": family["service"], "enabled": bool(values.get("service_enabled")),
              "active": values.get("service_state") == "started"}]
    result = {"errors": [], "family": choice["family"], "service": family["service"], "packages": family["packages"],
              "config_file": family["config_file"], "guid": guid, "port": port, "priority": spec["priority"],
              "role": values["role"], "files": [], "units": units, "ports_needed": False,
              "sm_expected": {"guid": guid, "role": values["role"], "priority": spec["priority"]},
              "install": False, "change": None, "reasons": [], "requests": [],
              # the spec the node's own drift check reads (_drift_spec: 0600, it holds the keys)
              "drift_spec": _spec.node_files(NAME, spec)}
    if not guid:
        # discovery before ibstat was read (the packages that bring it may not be installed
        # yet): the install decision only
        if facts.get("gathered") is not None:
            result["install"] = _decide(facts["gathered"], [], units, values)["install"]
        result["ports_needed"] = True
        return result
    filled = {"guid": guid, "partitions_file": family["partitions_file"]}
    texts = {"config_file": spec["files"]["config"], "partitions_file": spec["files"]["partitions"],
             "dropin_file": spec["files"]["dropins"][choice["family"]], "ports_file": spec["files"]["ports"]}
    files = [{"path": family[key], "content": _fill(texts[key], filled), "mode": mode}
             for key, _template, mode in FILES if family.get(key)]
    result["files"] = files
    if facts.get("gathered") is not None:
        decided = _decide(facts["gathered"], files, units, values)
        result.update(install=decided["install"], change=decided["change"], reasons=decided["reasons"])
    result["requests"] = [{"resource": "node_files", "name": "OpenSM files", "options": {"content": True},
                           "config": {"files": files, "units": units}}]
    return result


def drift_requests(inputs, host):
    """The drift check's requests on the node (``drift/_drift_areas``): the fabric's SMs as read
    in the same call (one master, this SM in its role's state at its priority), then the plan's
    node_files call (the files, opensm.conf key by key with its keys hidden, and the service), the
    call the role makes; a problem of the settings or the plan is a config record."""
    errors = list(inputs.get("errors") or []) + list((inputs.get("plan") or {}).get("errors") or [])
    if errors:
        return [{"records": config_records(host, NAME, errors)}]
    plan = inputs["plan"]
    if plan["ports_needed"]:
        return [{"records": config_records(host, NAME, ["opensm: ibstat was not read: no port to bind to"])}]
    judged = records(host, [("sm_info", {"sm": inputs.get("sm"), "expected": plan["sm_expected"]})])
    return [{"records": judged}] + [dict(request, area=NAME) for request in plan["requests"]]
