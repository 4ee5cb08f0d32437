# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roce_qos area: lossless RoCE (trust, PFC, the DSCP map, ETS, buffers), DCQCN, the
RoCE ToS and the RDMA-CM default RoCE mode, the LLDP DCB TLVs, and the boot-time applier that re-applies them. Everything the
rdma.fabric.roce_qos role decides is here, in one place, as pure functions with no host I/O:

- ``settings(variables)``: the role's settings from its variables (every option of
  ``roles/roce_qos/meta/argument_specs.yml``, the contract and the only list of them, plus
  ``nccl_env_roce_dscp`` when set: one DSCP for QoS and NCCL);
- ``config_errors(settings)``: every problem, each naming the ``roce_qos_*`` variable the user
  set and its value;
- ``spec(variables, render)``: what the controller hands the node: the settings and the files
  rendered from the role's templates (no facts);
- ``plan(facts, spec)``: everything the role does on a node from its ``rdma_facts``: the ports,
  each module's config, the boot applier's state file, and ``requests``, the module calls in
  the order the role applies them (the drift check runs the same calls in check mode);
- ``records(host, results)``: the drift records of the modules' results, named as every report
  names them (``setting`` of an LLDP TLV is ``lldp.pfc.enabled``, of the NIC ``pfc``).

The role (``rdma.fabric.area_*`` filters), the drift check (``state_check`` on the node) and
the node timer all call these. Errors are PlanError (the filters make them AnsibleFilterError
with the same message)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _dcqcn, _lldp_dcb, _mlnx_qos
from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.common import _dscp
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _qos_validate as V
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError, check_name, sysfs_root
from ansible_collections.rdma.fabric.plugins.module_utils.common._records import drift_records, module_objects
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings
from ansible_collections.rdma.fabric.plugins.module_utils.common._records import config_records

NAME = "roce_qos"
PREFIX = "roce_qos_"
# read from another role when it is set there: one DSCP for QoS and NCCL
OTHER_VARIABLES = ("nccl_env_roce_dscp",)
# the role's boolean variables (converted as ``| bool`` converts them)
FLAGS = ("rdma_cm_tos", "lldp", "lldp_willing", "persist", "refresh_facts", "fail_on_drift", "rollback_on_failure")
# The files the boot-time applier needs besides its state file (which depends on the ports):
# path, role template, mode; and the unit the role enables.
STATE_FILE = "desired.conf"
FILES = (
    ("/usr/local/sbin/rdma-fabric-roce-qos-apply", "roce_qos/rdma-fabric-roce-qos-apply.sh.j2", "0755"),
    ("/etc/systemd/system/rdma-fabric-roce-qos.service", "roce_qos/rdma-fabric-roce-qos.service.j2", "0644"),
    ("/etc/systemd/system/rdma-fabric-roce-qos@.service", "roce_qos/rdma-fabric-roce-qos@.service.j2", "0644"),
    ("/etc/udev/rules.d/90-rdma-fabric-roce-qos.rules", "roce_qos/90-rdma-fabric-roce-qos.rules.j2", "0644"),
)
UNITS = (("rdma-fabric-roce-qos.service", True),)
# the modules the role applies, in order, and the state each is applied with
MODULES = (("mlnx_qos", "replaced"), ("dcqcn", "replaced"), ("lldp_dcb", "merged"))
# Settings of a module that shares objects (interfaces) with another of the area carry its
# name: the LLDP PFC TLV is "lldp.pfc.enabled", the NIC's PFC "pfc".
SETTING_PREFIX = {"lldp_dcb": "lldp."}
# What plan() reads of the node (the drift check gathers it there, _state_check.gather_facts):
# (key, reader, arguments); plan() takes facts[PLAN_FACTS], the ports of rdma_facts' devices.
FACTS = (("rdma", "rdma_facts", {"gather_subset": ["devices"]}),)
PLAN_FACTS = "rdma"

ECN_CHOICES = ("ect0", "ect1", "ce", "not_ect")
# roce_qos_rdma_cm_roce_mode: the dcqcn module's choices (v2, v1 and the kernel's spellings), or
# one of these to leave the RDMA-CM default RoCE mode as it is
ROCE_MODE_UNMANAGED = (None, "", "none")
# What rdma-fabric-roce-qos-apply accepts on a state line (it refuses any other character).
STATE_LINE_RE = re.compile(r"[A-Za-z0-9_.:@-]+ (?:mlnx_qos|sysfs) [A-Za-z0-9_.,:=/@ -]+")
LLDP_APP_ROCE = {"selector": 3, "protocol": 4791}       # UDP port 4791 (RoCE v2)


# ------------------------------------------------------------------ the roce_qos role's names
# The roce_qos role builds each module's config from its variables (below:
# mlnx_qos_config, dcqcn_config, lldp_config) and checks it with the modules' own normalisers,
# whose messages name the module's fields ("roce_qos (mlnx_qos) tcbw"). roce_qos_names puts the
# variable the user set in their place.
_ROLE_FIELD = re.compile(r"roce_qos \((?P<module>mlnx_qos|dcqcn|lldp_dcb)\)[. ]?"
                         r"(?P<field>[A-Za-z0-9_]+(?:\[\d+\])?(?:\.[A-Za-z0-9_]+(?:\[\d+\])?)*)?")
_MLNX_SAME = ("trust", "prio_tc", "tsa", "tcbw", "buffer_size", "prio2buffer", "cable_len")
# dscp2prio[0] and [1] are the role's RoCE and CNP entries, [2:] roce_qos_dscp2prio_extra
_MAP_ENTRIES = ({"dscp": "roce_qos_roce_dscp", "priority": "roce_qos_lossless_priority"},
                {"dscp": "roce_qos_cnp_dscp", "priority": "roce_qos_cnp_priority"})
_DSCP_MAP = "the DSCP map (roce_qos_roce_dscp, roce_qos_cnp_dscp, roce_qos_dscp2prio_extra)"
_INDEXED = re.compile(r"(?P<name>[A-Za-z0-9_]+)(?:\[(?P<index>\d+)\])?(?P<rest>.*)\Z", re.S)


def _mlnx_qos_variable(name, index, rest):
    if name == "pfc":
        return "roce_qos_pfc_priorities" + index + rest
    if name in _MLNX_SAME:
        return "roce_qos_" + name + index + rest
    if name == "dscp2prio":
        if not index:
            return _DSCP_MAP + rest
        number = int(index[1:-1])
        if number < len(_MAP_ENTRIES):
            entry = _MAP_ENTRIES[number]
            field = rest[1:] if rest.startswith(".") else ""
            return entry[field] if field in entry else "%s/%s" % (entry["dscp"], entry["priority"])
        return "roce_qos_dscp2prio_extra[%d]%s" % (number - len(_MAP_ENTRIES), rest)
    return None


def _dcqcn_variable(name, index, rest):
    if name in ("np", "rp"):
        if rest.startswith(".params"):
            return "roce_qos_dcqcn_%s_params%s" % (name, rest[len(".params"):])
        if rest.startswith(".enabled_priorities"):
            return "roce_qos_dcqcn_priorities" + rest[len(".enabled_priorities"):]
    if name in ("roce_tos", "rdma_cm_tos"):
        return "roce_qos_default_tos (the ToS, derived from roce_qos_roce_dscp when null)"
    if name == "rdma_cm_roce_mode":
        return "roce_qos_rdma_cm_roce_mode"
    return None


def _lldp_variable(name, index, rest):
    if name == "pfc" and rest.startswith(".enabled"):
        return "roce_qos_pfc_priorities" + rest[len(".enabled"):]
    if name == "pfc" and rest.startswith(".willing"):
        return "roce_qos_lldp_willing"
    if name == "app":
        return "roce_qos_lossless_priority (the RoCE APP entry's priority)"
    return None


_VARIABLE_OF = {"mlnx_qos": _mlnx_qos_variable, "dcqcn": _dcqcn_variable, "lldp_dcb": _lldp_variable}


def roce_qos_names(message):
    """``message`` of a module's normaliser run by the roce_qos role, with each module field
    (``roce_qos (mlnx_qos) tcbw``, ``roce_qos (dcqcn).rp.params.rpg_gd``, ``config.buffer_size``)
    replaced by the roce_qos_* variable it comes from (``roce_qos_tcbw``,
    ``roce_qos_dcqcn_rp_params.rpg_gd``); a field with no variable keeps its name."""
    def replace(found):
        parts = _INDEXED.match(found.group("field") or "")
        if not parts:
            return found.group(0)
        variable = _VARIABLE_OF[found.group("module")](parts.group("name"), parts.group("index") and
                                                       "[%s]" % parts.group("index") or "", parts.group("rest"))
        return variable or found.group(0)
    text = _ROLE_FIELD.sub(replace, message)
    text = re.sub(r"(?<![A-Za-z0-9_])config\.(%s)(?![A-Za-z0-9_])" % "|".join(_MLNX_SAME), r"roce_qos_\1", text)
    return re.sub(r"\((prio2buffer)=", r"(roce_qos_\1=", text)


def _setting(settings, name, default=None):
    return settings.get(name, default)


def tos_of(settings):
    """The default ToS: roce_qos_default_tos, or the RoCE DSCP << 2 | the ECN bits."""
    if settings.get("default_tos") is not None:
        return settings["default_tos"]
    # RoCE v2 data packets carry ECT(0) in the ECN bits of the ToS byte (RFC 3168).
    return _dscp.tos(settings["roce_dscp"], settings.get("tos_ecn") or "ect0")


def rdma_cm_roce_mode_of(settings):
    """roce_qos_rdma_cm_roce_mode as the dcqcn module takes it (``v2``, ``v1``); None when it
    is left unmanaged (``none``, empty, null) or not one of the module's choices (config_errors
    names it)."""
    mode = settings.get("rdma_cm_roce_mode")
    if mode in ROCE_MODE_UNMANAGED or mode not in _dcqcn.ROCE_MODE_CHOICES:
        return None
    return _dcqcn.normalize_roce_mode("roce_qos_rdma_cm_roce_mode", mode)


def mlnx_qos_config(settings):
    config = {
        "trust": settings["trust"], "pfc": settings["pfc_priorities"],
        "dscp2prio": [{"dscp": settings["roce_dscp"], "priority": settings["lossless_priority"]},
                      {"dscp": settings["cnp_dscp"], "priority": settings["cnp_priority"]}]
        + list(settings.get("dscp2prio_extra") or []),
        "prio_tc": settings["prio_tc"], "tsa": settings["tsa"], "tcbw": settings["tcbw"],
    }
    for key in ("buffer_size", "prio2buffer", "cable_len"):
        if settings.get(key) is not None:
            config[key] = settings[key]
    return config


def dcqcn_config(settings):
    np_params = {"cnp_dscp": settings["cnp_dscp"], "cnp_802p_prio": settings["cnp_priority"]}
    np_params.update(settings.get("dcqcn_np_params") or {})
    config = {"np": {"enabled_priorities": settings["dcqcn_priorities"], "params": np_params},
              "rp": {"enabled_priorities": settings["dcqcn_priorities"],
                     "params": dict(settings.get("dcqcn_rp_params") or {})},
              "roce_tos": tos_of(settings)}
    if settings.get("rdma_cm_tos"):
        config["rdma_cm_tos"] = tos_of(settings)
    mode = rdma_cm_roce_mode_of(settings)
    if mode is not None:
        config["rdma_cm_roce_mode"] = mode
    return config


def lldp_config(settings):
    return {"admin_status": "rxtx",
            "pfc": {"willing": bool(settings.get("lldp_willing")), "enabled": settings["pfc_priorities"],
                    "enable_tx": True},
            "app": [dict(LLDP_APP_ROCE, priority=settings["lossless_priority"])],
            # advertise the APP TLV so the switch learns RoCE's priority
            "app_enable_tx": True}


def _check(errors, function, *args):
    try:
        return function(*args)
    except (V.ValidationError, ValueError, TypeError, KeyError) as exc:
        errors.append(getattr(exc, "msg", None) or str(exc))
        return None


def _dscp_map_conflicts(settings, roce_dscp, cnp_dscp, lossless, cnp_prio):
    """A DSCP the role's variables send to two priorities (mlnx_qos refuses such a map, and as
    DSCP APP entries of lldp_dcb it would advertise two priorities for one DSCP): each message
    names both variables. Values already refused elsewhere (None) are skipped."""
    sources = []
    if roce_dscp is not None and lossless is not None:
        sources.append(("roce_qos_roce_dscp", roce_dscp, "roce_qos_lossless_priority", lossless))
    if cnp_dscp is not None and cnp_prio is not None:
        sources.append(("roce_qos_cnp_dscp", cnp_dscp, "roce_qos_cnp_priority", cnp_prio))
    extra = settings.get("dscp2prio_extra") or []
    for index, entry in enumerate(extra if isinstance(extra, list) else []):
        if not isinstance(entry, dict):
            continue
        try:
            dscp = V.dscp("roce_qos_dscp2prio_extra[%d].dscp" % index, entry.get("dscp"))
            prio = V.priority("roce_qos_dscp2prio_extra[%d].priority" % index, entry.get("priority"))
        except (V.ValidationError, ValueError, TypeError):
            continue            # the modules' normaliser names it
        name = "roce_qos_dscp2prio_extra[%d]" % index
        sources.append((name + ".dscp", dscp, name + ".priority", prio))
    errors, seen = [], {}
    for name, dscp, prio_name, prio in sources:
        if dscp in seen:
            first, first_prio_name, first_prio = seen[dscp]
            if name.startswith("roce_qos_dscp2prio_extra") and not first.startswith("roce_qos_dscp2prio_extra"):
                continue        # "moves roce_qos_roce_dscp/cnp_dscp" below names both
            if first_prio != prio:
                errors.append("%s=%s and %s=%s send DSCP %s to two priorities (%s=%s, %s=%s): mlnx_qos and an "
                              "LLDP DSCP APP entry take one priority per DSCP; use another DSCP for one of them"
                              % (first, dscp, name, dscp, dscp, first_prio_name, first_prio, prio_name, prio))
            elif name.startswith("roce_qos_dscp2prio_extra") and first.startswith("roce_qos_dscp2prio_extra"):
                errors.append("%s=%s and %s=%s map DSCP %s twice: give it once"
                              % (first, dscp, name, dscp, dscp))
            continue
        seen[dscp] = (name, prio_name, prio)
    return errors


def config_errors(settings):
    """Every problem of the role's variables, each naming the ``roce_qos_*`` variable and the
    value (not the modules' fields their normalisers name); [] when they are good."""
    if not isinstance(settings, dict):
        raise PlanError("roce_qos_config_errors: expected the role's settings dict, got %r"
                        % type(settings).__name__)
    errors = []
    lossless = _check(errors, V.priority, "roce_qos_lossless_priority", settings.get("lossless_priority"))
    cnp_prio = _check(errors, V.priority, "roce_qos_cnp_priority", settings.get("cnp_priority"))
    roce_dscp = _check(errors, V.dscp, "roce_qos_roce_dscp", settings.get("roce_dscp"))
    cnp_dscp = _check(errors, V.dscp, "roce_qos_cnp_dscp", settings.get("cnp_dscp"))
    pfc = _check(errors, V.priority_list, "roce_qos_pfc_priorities", settings.get("pfc_priorities"))
    dcqcn = _check(errors, V.priority_list, "roce_qos_dcqcn_priorities", settings.get("dcqcn_priorities"))
    interfaces = settings.get("interfaces") or []
    if not isinstance(interfaces, list):
        errors.append("roce_qos_interfaces=%r: expected a list of interface names" % (interfaces,))
        interfaces = []
    for index, name in enumerate(interfaces):
        _check(errors, check_name, "roce_qos_interfaces[%d]" % index, name)
    if settings.get("tos_ecn") not in (None,) + ECN_CHOICES:
        errors.append("roce_qos_tos_ecn=%r: must be one of %s" % (settings.get("tos_ecn"), ", ".join(ECN_CHOICES)))
    mode = settings.get("rdma_cm_roce_mode")
    if mode not in ROCE_MODE_UNMANAGED and mode not in _dcqcn.ROCE_MODE_CHOICES:
        errors.append("roce_qos_rdma_cm_roce_mode=%r: must be v2 (RoCE v2, what NCCL and routed RoCE need), v1 "
                      "(IB/RoCE v1), the kernel's spellings 'RoCE v2' or 'IB/RoCE v1', or none to leave the "
                      "RDMA-CM default RoCE mode as it is" % (mode,))
    if mode not in ROCE_MODE_UNMANAGED and mode in _dcqcn.ROCE_MODE_CHOICES and settings.get("trust") == "dscp" \
            and rdma_cm_roce_mode_of(settings) == "v1":
        # RoCE v1 is an Ethernet frame (EtherType 0x8915) with no IP header: no DSCP to trust, so
        # the NIC and the switches put RDMA-CM's connections in the default, lossy class
        errors.append("roce_qos_rdma_cm_roce_mode=%r with roce_qos_trust=dscp: RoCE v1 has no IP header, so DSCP "
                      "trust cannot classify it (RDMA-CM connections would leave the lossless class "
                      "roce_qos_roce_dscp=%s sets); use v2, or none to leave the mode as it is"
                      % (mode, settings.get("roce_dscp")))
    tos = settings.get("default_tos")
    if tos is not None:
        tos = _check(errors, V.int_in_range, "roce_qos_default_tos", tos, 0, 255, "ToS")
        mismatch = None if tos is None or roce_dscp is None else \
            _dscp.tos_mismatch(tos, roce_dscp, "roce_qos_default_tos", "roce_qos_roce_dscp")
        if mismatch:
            errors.append(mismatch + ": RDMA traffic would leave the lossless class; fix it or leave "
                          "roce_qos_default_tos null to derive it")
    nccl_dscp = settings.get("nccl_roce_dscp")
    if nccl_dscp is not None and roce_dscp is not None and str(nccl_dscp) != str(roce_dscp):
        errors.append("nccl_env_roce_dscp=%s and roce_qos_roce_dscp=%s differ: NCCL would send on a DSCP the QoS "
                      "does not make lossless; use one DSCP" % (nccl_dscp, roce_dscp))
    if lossless is not None and pfc is not None and lossless not in pfc:
        errors.append("roce_qos_lossless_priority=%d has no PFC: add it to roce_qos_pfc_priorities=%s"
                      % (lossless, pfc))
    errors.extend(_pfc_by_interface_errors(settings.get("pfc_priorities_by_interface"), lossless))
    if lossless is not None and dcqcn is not None and lossless not in dcqcn:
        errors.append("roce_qos_lossless_priority=%d has no DCQCN: add it to roce_qos_dcqcn_priorities=%s"
                      % (lossless, dcqcn))
    for index, extra in enumerate(settings.get("dscp2prio_extra") or []):
        dscp = extra.get("dscp") if isinstance(extra, dict) else None
        for name, value in (("roce_qos_roce_dscp", roce_dscp), ("roce_qos_cnp_dscp", cnp_dscp)):
            if value is not None and dscp is not None and str(dscp) == str(value):
                errors.append("roce_qos_dscp2prio_extra[%d].dscp=%s moves %s=%s: the role maps that DSCP itself"
                              % (index, dscp, name, value))
    errors.extend(_dscp_map_conflicts(settings, roce_dscp, cnp_dscp, lossless, cnp_prio))
    errors.extend(_dcqcn_param_errors(settings))
    errors.extend(persist_dir_errors(settings))
    np_params = settings.get("dcqcn_np_params") or {}
    if not isinstance(np_params, dict):
        np_params = {}
    for key, name, value in (("cnp_dscp", "roce_qos_cnp_dscp", cnp_dscp), ("cnp_802p_prio", "roce_qos_cnp_priority",
                                                                           cnp_prio)):
        if key in np_params and value is not None and str(np_params[key]) != str(value):
            errors.append("roce_qos_dcqcn_np_params.%s=%s contradicts %s=%s: set it once, in %s"
                          % (key, np_params[key], name, value, name))
    tsa, prio_tc = settings.get("tsa"), settings.get("prio_tc")
    if errors:
        return [roce_qos_names(e) for e in errors]
    # The modules' own normalisers: what mlnx_qos, dcqcn and lldp_dcb would refuse.
    mlnx = _check(errors, _mlnx_qos.normalize_want, mlnx_qos_config(settings), "roce_qos (mlnx_qos)")
    _check(errors, _dcqcn.normalize_want, dcqcn_config(settings), "(interface)", "(device)", "roce_qos (dcqcn)")
    if settings.get("lldp"):
        _check(errors, _lldp_dcb.normalize_want, lldp_config(settings), "roce_qos (lldp_dcb)")
    if mlnx and isinstance(tsa, list) and isinstance(prio_tc, list) and len(tsa) == 8 and len(prio_tc) == 8:
        if tsa[prio_tc[lossless]] != "ets":
            errors.append("roce_qos_tsa=%s: TC%d of the lossless priority %d (roce_qos_prio_tc=%s) must be ets"
                          % (tsa, prio_tc[lossless], lossless, prio_tc))
    if settings.get("buffer_size") is not None and settings.get("prio2buffer") is None:
        errors.append("roce_qos_buffer_size is set but roce_qos_prio2buffer is not: the PFC priorities' buffers "
                      "cannot be checked; set both")
    return [roce_qos_names(e.replace("roce_qos (mlnx_qos).", "roce_qos (mlnx_qos) ")) for e in errors]


def _pfc_by_interface_errors(by_interface, lossless):
    """roce_qos_pfc_priorities_by_interface: interface name -> its PFC priorities, each list
    with the lossless priority."""
    if not by_interface:
        return []
    if not isinstance(by_interface, dict):
        return ["roce_qos_pfc_priorities_by_interface=%r: expected a dict of interface: priorities" % (by_interface,)]
    errors = []
    for name, priorities in sorted(by_interface.items(), key=lambda item: str(item[0])):
        variable = "roce_qos_pfc_priorities_by_interface.%s" % (name,)
        if _check(errors, check_name, "roce_qos_pfc_priorities_by_interface key", name) is None:
            continue
        pfc = _check(errors, V.priority_list, variable, priorities)
        if pfc is not None and lossless is not None and lossless not in pfc:
            errors.append("roce_qos_lossless_priority=%d has no PFC on %s: add it to %s=%s"
                          % (lossless, name, variable, pfc))
    return errors


def _dcqcn_param_errors(settings):
    """A name in roce_qos_dcqcn_np_params / _rp_params that is no ECN parameter file of the mlx5
    driver (``_dcqcn.KNOWN_PARAMS``, en_ecn.c): the dcqcn module would refuse it only on the node,
    when it finds no such file. A name of the other point is left to the module's own message
    (give it under the other variable)."""
    errors = []
    for point in _dcqcn.POINTS:
        variable = "roce_qos_dcqcn_%s_params" % point
        params = settings.get("dcqcn_%s_params" % point)
        if params is None:
            continue
        if not isinstance(params, dict):
            errors.append("%s=%r: expected a dict of roce_%s parameter: integer" % (variable, params, point))
            continue
        other = [p for p in _dcqcn.POINTS if p != point][0]
        unknown = sorted(str(name) for name in params
                         if str(name) not in _dcqcn.KNOWN_PARAMS[point] and str(name) not in _dcqcn.KNOWN_PARAMS[other])
        if unknown:
            errors.append("%s: %s %s not a roce_%s parameter of the mlx5 driver (ecn/roce_%s has %s)"
                          % (variable, ", ".join(repr(n) for n in unknown), "is" if len(unknown) == 1 else "are",
                             point, point, ", ".join(_dcqcn.KNOWN_PARAMS[point])))
    return errors


# What the persist directory may not hold: it is written into the udev rule (a quoted TEST
# value, where % and $ are substitutions) and the boot applier (shell-quoted).
_PERSIST_DIR_BAD = set('"\\%$') | set(chr(c) for c in range(32)) | set("\x7f\x85\u2028\u2029")


def persist_dir_errors(settings):
    """roce_qos_persist_dir (``persist_dir``, when the settings hold it): an absolute path with
    no line break and nothing the udev rule would read as syntax."""
    if "persist_dir" not in settings:
        return []
    value = settings["persist_dir"]
    if not isinstance(value, str) or not value.startswith("/") or any(c in _PERSIST_DIR_BAD for c in value):
        return ["roce_qos_persist_dir=%r: expected an absolute path without line breaks, control characters, "
                "quotes, backslashes, '%%' or '$' (it goes into the udev rule and the boot-time applier)" % (value,)]
    return []


def roce_ports(facts, interfaces=None):
    """``[{netdev, device, port}]``: the RoCE (Ethernet link layer) ports with a netdev."""
    found = []
    for name in facts.get("device_names") or []:
        for port in facts["devices"][name]["ports"]:
            if port.get("link_layer") == "Ethernet" and port.get("netdev"):
                found.append({"netdev": port["netdev"], "device": name, "port": port["port"]})
    if interfaces:
        unknown = [i for i in interfaces if i not in [p["netdev"] for p in found]]
        if unknown:
            raise PlanError(
                "roce_qos_interfaces: %s %s not a RoCE port of this node; RoCE ports found: %s"
                % (", ".join(unknown), "is" if len(unknown) == 1 else "are",
                   ", ".join(p["netdev"] for p in found) or "none"))
        found = [p for p in found if p["netdev"] in interfaces]
    return found


def rendered_state(ports, mlnx, dcqcn, node_sysfs="/sys"):
    """The applier's state file: ``IFNAME mlnx_qos ARGV...`` and ``IFNAME sysfs PATH=VALUE``
    lines, rendered from scratch by the modules' planners (what ``state: rendered`` gives).
    The planners build paths under this process's sysfs root; the file holds the node's
    (``node_sysfs``, which rdma_facts reports)."""
    local = sysfs_root()
    lines = ["# rdma.fabric.roce_qos desired state, written by Ansible; applied at boot by",
             "# rdma-fabric-roce-qos-apply. One line per command: IFNAME mlnx_qos ARGV | IFNAME sysfs PATH=VALUE"]
    for port, mlnx_entry, dcqcn_entry in zip(ports, mlnx, dcqcn):
        netdev = port["netdev"]
        want = _mlnx_qos.normalize_want(mlnx_entry)
        for argv in _mlnx_qos.plan_commands(want, None, "merged", netdev):
            lines.append("%s mlnx_qos %s" % (netdev, " ".join(argv[1:])))
        config = dict((k, v) for k, v in dcqcn_entry.items() if k not in ("interface", "rdma_device", "port"))
        dwant = _dcqcn.normalize_want(config, netdev, port["device"])
        for path, value in _dcqcn.plan_writes(dwant, None, "merged", netdev, port["device"], port["port"]):
            if node_sysfs != local and path.startswith(local.rstrip("/") + "/"):
                path = node_sysfs.rstrip("/") + path[len(local.rstrip("/")):]
            lines.append("%s sysfs %s" % (netdev, _dcqcn.write_string((path, value))))
    for line in lines[2:]:
        if not STATE_LINE_RE.fullmatch(line):
            raise PlanError("roce_qos: the boot-time state line %r holds characters the applier refuses "
                            "(it never expands them into an argv)" % (line,))
    return "\n".join(lines) + "\n"


def roce_qos_config(facts, settings):
    """The ports and each module's config list, plus the applier's state file text."""
    if not isinstance(facts, dict) or "devices" not in facts:
        raise PlanError("roce_qos_config: the input must be ansible_facts.rdma (rdma.fabric.rdma_facts)")
    errors = config_errors(settings)
    if errors:
        raise PlanError("roce_qos: " + "; ".join(errors))
    ports = roce_ports(facts, settings.get("interfaces"))
    by_interface = settings.get("pfc_priorities_by_interface") or {}
    unknown = sorted(set(by_interface) - set(p["netdev"] for p in ports))
    if unknown:
        raise PlanError("roce_qos_pfc_priorities_by_interface: %s %s not a RoCE port the role sets on this node; "
                        "its RoCE ports: %s" % (", ".join(unknown), "is" if len(unknown) == 1 else "are",
                                                ", ".join(p["netdev"] for p in ports) or "none"))

    def port_settings(port):      # the port's own PFC priorities, where it has them
        if port["netdev"] in by_interface:
            return dict(settings, pfc_priorities=by_interface[port["netdev"]])
        return settings
    dcqcn = dcqcn_config(settings)
    result = {
        "ports": ports,
        "mlnx_qos": [dict(mlnx_qos_config(port_settings(p)), interface=p["netdev"]) for p in ports],
        "dcqcn": [dict(dcqcn, interface=p["netdev"], rdma_device=p["device"], port=p["port"]) for p in ports],
        "lldp": [dict(lldp_config(port_settings(p)), interface=p["netdev"]) for p in ports],
    }
    result["state_file"] = rendered_state(ports, result["mlnx_qos"], result["dcqcn"], facts.get("sysfs_root") or "/sys")
    return result


# ------------------------------------------------------------------ the area object


def settings(variables):
    """The role's settings (keys without the ``roce_qos_`` prefix) from ``variables``, the
    templated value of every variable of the role's argument spec, plus those of
    ``OTHER_VARIABLES`` that are defined: ``nccl_roce_dscp`` is ``nccl_env_roce_dscp``."""
    out = role_settings(variables, PREFIX, FLAGS)
    dscp = variables.get("nccl_env_roce_dscp")
    # a template before ansible-core 2.19's native types gives text ("26")
    out["nccl_roce_dscp"] = int(dscp) if isinstance(dscp, str) and dscp.strip().isdigit() else dscp
    return out


def spec(variables, render):
    """What the controller hands the node (the role's ``__roce_qos_spec``, the drift check's
    area spec): the settings, and the boot applier's files rendered from the role's templates
    by ``render(template)``. No facts: ``plan`` takes the node's."""
    return {"settings": settings(variables),
            "files": [{"path": path, "content": render(term), "mode": mode} for path, term, mode in FILES],
            "units": [{"name": name, "enabled": enabled} for name, enabled in UNITS]}


def plan(facts, spec):
    """Everything the role does on the node with these ``rdma_facts``: the ports, each module's
    config, the boot applier's state file and files (``boot_applier``, null without
    ``roce_qos_persist``), and ``requests``: ``[{resource, state, config}]``,
    the module calls in the order the role applies them and the drift check checks them."""
    settings = spec["settings"]
    result = roce_qos_config(facts, settings)
    requests = []
    if result["ports"]:
        for resource, state in MODULES:
            key = "lldp" if resource == "lldp_dcb" else resource
            if resource != "lldp_dcb" or settings.get("lldp"):
                requests.append({"resource": resource, "state": state, "config": result[key]})
    result["boot_applier"] = None
    if settings.get("persist"):
        directory = settings["persist_dir"].rstrip("/")
        files = [{"path": "%s/%s" % (directory, STATE_FILE), "content": result["state_file"], "mode": "0644"}]
        files += list(spec.get("files") or [])
        # the boot applier of round 1 kept a checksum beside the state file
        files.append({"path": "%s/desired.sha256" % directory, "state": "absent"})
        result["boot_applier"] = {"files": files, "units": list(spec.get("units") or [])}
        requests.append({"resource": "node_files", "name": "boot applier", "config": result["boot_applier"]})
    result["requests"] = requests
    # the spec the node's own drift check reads (_drift_spec: the file the role leaves)
    result["drift_spec"] = _spec.node_files(NAME, spec)
    return result


def records(host, results):
    """Drift records ``{host, area, object, setting, expected, actual}`` of the modules'
    results (``[(resource, result)]``; check mode: ``after`` is expected, ``before`` actual),
    one per smallest setting that differs. The role's verify and the drift check both name
    settings here. A skipped or failed result has none (the run reports the failure)."""
    out = []
    for resource, result in results:
        if not isinstance(result, dict) or result.get("skipped") or result.get("failed"):
            continue
        found = drift_records(host, NAME, module_objects(result))
        for item in found:
            item["setting"] = SETTING_PREFIX.get(resource, "") + item["setting"]
        out.extend(found)
    return out


def apply_requests(plan):
    """The module calls the role makes on the node, in its order, from the same ``plan``:
    mlnx_qos and dcqcn (replaced), lldp_dcb (merged, with roce_qos_lldp), the boot applier's
    node_files (with roce_qos_persist): the plan's ``requests``; then the drift spec's
    node_files. What ``state_check`` with ``apply`` runs on a drifted node."""
    return [dict(request) for request in plan["requests"]] + [
        {"resource": "node_files", "name": "drift spec", "config": plan["drift_spec"]}]


def drift_requests(inputs, host):
    """The drift check's requests on the node (``drift/_drift_areas``): the plan's module calls
    (mlnx_qos, dcqcn, the LLDP TLVs where lldpad runs, the boot applier), the calls the role
    makes; a problem of the settings is a config record."""
    if inputs.get("errors"):
        return [{"records": config_records(host, NAME, inputs["errors"])}]
    return [dict(request, area=NAME) for request in inputs["plan"]["requests"]]
