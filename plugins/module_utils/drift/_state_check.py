# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Several resources checked in one module call (the drift check's only node round trip
per area set): each resource's own reader, planner and prediction through the engine in
check mode. Nothing is written, except with ``apply`` (``apply_areas``): then each area that
drifted is converged in the same call with its role's module calls (the area object's
``apply_requests``), through the engine's whole lifecycle, and checked again."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.rdma.fabric.plugins.module_utils.areas import _registry
from ansible_collections.rdma.fabric.plugins.module_utils.common import _secrets
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import apply_resource, check_resource


def _mlnx_qos(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils.resources._mlnx_qos import MlnxQosResource
    return MlnxQosResource(module)


def _dcqcn(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils.resources._dcqcn import DcqcnResource
    return DcqcnResource(module)


def _lldp_dcb(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils.resources._lldp_dcb import LldpDcbResource
    return LldpDcbResource(module, dcbx_check=options.get("dcbx_check", True),
                           switch_dcbx_to_os=options.get("switch_dcbx_to_os", False))


def _node_files(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils.resources._node_files import NodeFilesResource
    return NodeFilesResource(module, with_content=options.get("content", False))


def _kernel_cmdline(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils.resources._kernel_cmdline import KernelCmdlineResource
    return KernelCmdlineResource(module)


def _mlxconfig(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils.resources._nvconfig import DEFAULT_BOOT_RECORD, MlxconfigResource
    # boot_record as the module takes it: absent, its default; empty, none
    record = options["boot_record"] or None if "boot_record" in options else DEFAULT_BOOT_RECORD
    return MlxconfigResource(module, firmware=options.get("firmware", False), boot_record=record, read_only=True)


def _pcie_acs(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils.resources._pcie_acs import PcieAcsResource
    return PcieAcsResource(module)


def _kernel_module(module, options):
    from ansible_collections.rdma.fabric.plugins.module_utils.resources._kernel_module import KernelModuleResource
    return KernelModuleResource(module)


# kernel_cmdline's and pcie_acs' configs are their modules' parameters; these are their argument
# specs' defaults.
KERNEL_CMDLINE_DEFAULTS = {"backend": "auto", "grub_file": "/etc/default/grub", "update_command": None,
                           "backup": False, "proc_cmdline": "/proc/cmdline"}
PCIE_ACS_DEFAULTS = {"devices": None, "clear": "redirect", "state": "audited"}
RESOURCES = {"mlnx_qos": _mlnx_qos, "dcqcn": _dcqcn, "lldp_dcb": _lldp_dcb, "node_files": _node_files,
             "kernel_cmdline": _kernel_cmdline, "mlxconfig": _mlxconfig, "pcie_acs": _pcie_acs,
             "kernel_module": _kernel_module}


# What an entry of ``resources`` may hold besides its config: the state the module would run
# with, and the module's other options (each a boolean), per resource.
STATES = ("merged", "replaced")
OPTIONS = {"lldp_dcb": ("dcbx_check", "switch_dcbx_to_os"), "node_files": ("content",), "mlxconfig": ("firmware", "boot_record")}
# The options that are paths (an absolute path, or empty for none); the others are booleans.
PATH_OPTIONS = ("boot_record",)
# The resources whose config is a list of dicts (one per interface); the others take one dict.
LIST_CONFIG = ("dcqcn", "lldp_dcb", "mlnx_qos", "mlxconfig")
_CONFIG_SHAPE = {"node_files": "a dict {files, units}",
                 "kernel_cmdline": "a dict of the kernel_cmdline module's parameters (arguments, backend, grub_file, ...)",
                 "pcie_acs": "a dict of the pcie_acs module's parameters (state, devices, clear)",
                 "kernel_module": "a dict {name}, the kernel module to load"}


def shown(name, value):
    """``value`` for a message about the field ``name``: hidden when the name says it holds a
    secret, and every secret in it masked (common/_secrets.py: state_check's areas and resources are
    no_log, so a message is the only place their values show)."""
    return repr(_secrets.redact(_secrets.hide(name, value)))


def request_error(index, request):
    """``(message, options)``: what is wrong with the ``index``-th entry of ``resources`` (None
    when nothing is), naming the field and the value, and its options as booleans."""
    where = "resources[%d]" % index
    if not isinstance(request, dict):
        return "%s=%s: expected a dict {resource, config, ...}" % (where, shown("resources", request)), {}
    name = request.get("resource")
    if name not in RESOURCES:
        return "%s.resource=%r: one of %s" % (where, name, ", ".join(sorted(RESOURCES))), {}
    state = request.get("state")
    if state is not None and state not in STATES:
        return "%s.state=%s: one of %s (the state the %s module would run with)" % (
            where, shown("state", state), ", ".join(STATES), name), {}
    options = request.get("options")
    if options is not None and not isinstance(options, dict):
        return "%s.options=%s: expected a dict of the %s module's options" % (where, shown("options", options), name), {}
    taken = OPTIONS.get(name, ())
    unknown = sorted((k for k in options or {} if k not in taken), key=str)
    if unknown:
        return "%s.options: %s %s not an option state_check takes for %s (%s)" % (
            where, ", ".join(repr(k) for k in unknown), "is" if len(unknown) == 1 else "are", name,
            "it takes " + ", ".join(taken) if taken else "it takes none"), {}
    flags = {}
    for key, value in sorted((options or {}).items()):
        if key in PATH_OPTIONS:
            if value not in (None, "") and (not isinstance(value, str) or not value.startswith("/") or "\x00" in value):
                return "%s.options.%s=%s: expected an absolute path (or empty for none)" % (where, key, shown(key, value)), {}
            flags[key] = value or ""
            continue
        try:
            flags[key] = boolean(value, strict=True)
        except TypeError:
            return "%s.options.%s=%s: expected true or false" % (where, key, shown(key, value)), {}
    config = request.get("config")
    if name in LIST_CONFIG:
        if config is not None and not isinstance(config, list):
            return "%s.config=%s: expected a list of dicts, the %s module's config (one per interface)" % (
                where, shown("config", config), name), {}
    elif config is not None and not isinstance(config, dict):
        return "%s.config=%s: expected %s" % (where, shown("config", config), _CONFIG_SHAPE[name]), {}
    elif name == "kernel_cmdline":
        arguments = (config or {}).get("arguments")
        if arguments is not None and not isinstance(arguments, list):
            return "%s.config.arguments=%s: expected a list of dicts {name, value, state}" % (
                where, shown("arguments", arguments)), {}
        for number, argument in enumerate(arguments or []):
            if not isinstance(argument, dict):
                return "%s.config.arguments[%d]=%s: expected a dict {name, value, state}" % (
                    where, number, shown("arguments", argument)), {}
    return None, flags


def _module_config(name, config):
    """A request's config as its resource's engine takes it: a module's parameters with that
    module's defaults (kernel_cmdline, pcie_acs)."""
    if name == "kernel_cmdline":
        config = dict(KERNEL_CMDLINE_DEFAULTS, **(config or {}))
        config["arguments"] = [dict({"value": None, "state": "present"}, **a) for a in config.get("arguments") or []]
    elif name == "pcie_acs":
        config = dict(PCIE_ACS_DEFAULTS, **(config or {}))
    return config


def run_request(module, index, request, run=check_resource):
    """One entry of ``resources`` (or of an area's requests) through ``run`` (check_resource,
    or apply_resource): ``{area, resource, name, failed, result}``. An entry of the wrong shape
    is refused here, naming the field and the value."""
    error, options = request_error(index, request)
    request = request if isinstance(request, dict) else {}
    name = request.get("resource")
    entry = {"area": request.get("area"), "resource": name, "name": request.get("name") or name}
    if error:
        entry.update(failed=True, result={"msg": error})
        return entry
    resource = RESOURCES[name](module, options)
    failed, result = run(module, resource, request.get("state") or "merged", _module_config(name, request.get("config")))
    entry.update(failed=failed, result=result)
    return entry


def check_all(module, requests):
    """``[{name, area, resource, state, config, options}]`` -> the same list with ``failed``
    and ``result`` (before/after/commands, or msg) of each. One failing resource does not
    stop the others: its error is its result. An entry of the wrong shape (a state, an option
    or a config the module would refuse) is refused here, naming the field and the value."""
    return [run_request(module, index, request) for index, request in enumerate(requests or [])]


# The readers of ``facts`` and what each takes (the option: its check, returning the value or
# raising ValueError with what is expected).
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _positive(value):
    if isinstance(value, bool) or not re.match(r"[0-9]+\Z", str(value)) or int(str(value)) < 1:
        raise ValueError("expected a positive integer")
    return int(str(value))


def _flag(value):
    try:
        return boolean(value, strict=True)
    except TypeError:
        raise ValueError("expected true or false")


def _subsets(value):
    from ansible_collections.rdma.fabric.plugins.module_utils.facts._rdma_facts import SUBSETS
    if not isinstance(value, list) or any(v not in SUBSETS for v in value):
        raise ValueError("expected a list of %s" % ", ".join(SUBSETS))
    return value


def _gdr_level(value):
    from ansible_collections.rdma.fabric.plugins.module_utils.facts._gdr_readiness import GDR_LEVELS
    if value not in GDR_LEVELS:
        raise ValueError("one of %s" % ", ".join(GDR_LEVELS))
    return value


def _abs_path(value):
    if not isinstance(value, str) or not value.startswith("/") or "\x00" in value:
        raise ValueError("expected an absolute path")
    return value


def _ca(value):
    from ansible_collections.rdma.fabric.plugins.module_utils.common._common import RDMA_DEVICE_MAX, check_name
    try:
        return check_name("ca", value, "CA", RDMA_DEVICE_MAX)
    except ValueError as exc:
        raise ValueError(str(exc).split(": ", 1)[-1])


READER_OPTIONS = {
    "rdma_facts": {"gather_subset": _subsets},
    "gdr_readiness": {"gdr_level": _gdr_level, "proc_root": _abs_path},
    "opensm": {"ibstat": _flag},
    "sm_info": {"ca": _ca, "port": _positive, "timeout": _positive, "environment": None},
}


def facts_errors(facts):
    """What is wrong with the ``facts`` option (``{reader: {option: value}}``): an unknown
    reader, options that are not a dict, an option the reader does not take or a value it
    would refuse; each message names ``facts.READER.OPTION`` and the value."""
    errors = []
    for reader in sorted(facts or {}, key=str):
        options = facts[reader]
        where = "facts.%s" % (reader,)
        if reader not in READER_OPTIONS:
            errors.append("facts: %r is not a reader; one of %s" % (reader, ", ".join(sorted(READER_OPTIONS))))
            continue
        if options is None:
            continue
        if not isinstance(options, dict):
            errors.append("%s=%s: expected a dict of the reader's options (%s)"
                          % (where, shown(reader, options), ", ".join(sorted(READER_OPTIONS[reader]))))
            continue
        for key in sorted(options, key=str):
            value = options[key]
            if key not in READER_OPTIONS[reader]:
                errors.append("%s: %r is not an option of the reader; it takes %s"
                              % (where, key, ", ".join(sorted(READER_OPTIONS[reader]))))
            elif key == "environment":
                errors.extend(_environment_errors("%s.environment" % where, value))
            elif value is not None:
                try:
                    READER_OPTIONS[reader][key](value)
                except ValueError as exc:
                    errors.append("%s.%s=%s: %s" % (where, key, shown(key, value), exc))
    return errors


def _environment_errors(where, value):
    if value is None:
        return []
    if not isinstance(value, dict):
        return ["%s=%s: expected a dict of environment variable: value" % (where, shown("environment", value))]
    errors = []
    for name in sorted(value, key=str):
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            errors.append("%s: %r is not an environment variable name (letters, digits and '_', not starting "
                          "with a digit)" % (where, name))
        elif not isinstance(value[name], (str, int, float, bool)) or "\x00" in str(value[name]):
            errors.append("%s.%s=%s: expected a string or a number" % (where, name, shown(name, value[name])))
    return errors


def areas_errors(areas):
    """An area of ``areas`` whose spec is not a dict (the role's ``__AREA_drift_spec``)."""
    return ["areas.%s=%s: expected the role's drift spec (a dict, its __%s_drift_spec)"
            % (area, shown(area, spec), area)
            for area, spec in sorted((areas or {}).items()) if not isinstance(spec, dict)]


class _ReadOnce(object):
    """The module as the readers see it, with each distinct tool run made once: rdma_facts
    and gdr_readiness both read the GPUs (``nvidia-smi``) and the PCIe tree; in one read-only
    call the second reader gets the first one's output instead of running the tool again."""

    def __init__(self, module):
        self._module = module
        self._runs = {}

    def run_command(self, args, **kwargs):
        key = (tuple(args) if isinstance(args, (list, tuple)) else args,
               tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
        if key not in self._runs:
            self._runs[key] = self._module.run_command(args, **kwargs)
        return self._runs[key]

    def __getattr__(self, name):
        return getattr(self._module, name)


class _WithEnvironment(object):
    """The module as one reader sees it: every command it runs gets ``environment`` on top of
    the task's (``environ_update``)."""

    def __init__(self, module, environment):
        self._module = module
        self._environment = dict((str(k), str(v)) for k, v in (environment or {}).items())

    def run_command(self, args, **kwargs):
        kwargs["environ_update"] = dict(kwargs.get("environ_update") or {}, **self._environment)
        return self._module.run_command(args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._module, name)


def gather_facts(module, wanted):
    """The readers the areas' expected states start from, in the same call: ``rdma_facts``
    (``{gather_subset}``) as ``rdma``, ``gdr_readiness`` (``{gdr_level}``) as ``gdr``,
    ``opensm`` (``{ibstat}``: the OS family markers, and the ports when discovering) as
    ``opensm``, ``sm_info`` (``{ca, port, timeout, environment}``) as ``sm`` (no SM answering
    is a state: no master).
    Returns ``(facts, errors)``; a reader that fails is an error, not empty facts."""
    facts, errors = {}, {}
    wanted = wanted or {}
    module = _ReadOnce(module)
    if "rdma_facts" in wanted:
        from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts
        try:
            facts["rdma"] = _rdma_facts.gather(module, (wanted["rdma_facts"] or {}).get("gather_subset") or ["devices"])
        except Exception as exc:        # any reader failure is reported, never read as healthy
            errors["rdma_facts"] = "%s: %s" % (type(exc).__name__, getattr(exc, "msg", None) or exc)
    if "gdr_readiness" in wanted:
        from ansible_collections.rdma.fabric.plugins.module_utils.facts import _gdr_readiness
        try:
            raw = _gdr_readiness.read_host(module, (wanted["gdr_readiness"] or {}).get("proc_root") or "/proc")
            facts["gdr"] = _gdr_readiness.derive(raw, (wanted["gdr_readiness"] or {}).get("gdr_level") or "PXB")
        except Exception as exc:
            errors["gdr_readiness"] = "%s: %s" % (type(exc).__name__, getattr(exc, "msg", None) or exc)
    if "opensm" in wanted:
        from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat
        from ansible_collections.rdma.fabric.plugins.module_utils.areas import opensm as _opensm
        from ansible_collections.rdma.fabric.plugins.module_utils.common._common import run_tool
        try:
            # the OS family's marker files (stat only) and, to discover the port, ibstat
            markers = dict((path, {"state": "present" if os.path.exists(path) else "absent"})
                           for path, _family in _opensm.FAMILY_MARKERS)
            facts["opensm"] = {"markers": {"files": markers}}
            if (wanted["opensm"] or {}).get("ibstat"):
                facts["opensm"]["ports"] = _ibstat.port_list(run_tool(module, ["ibstat"])[1])
        except Exception as exc:
            errors["opensm"] = "%s: %s" % (type(exc).__name__, getattr(exc, "msg", None) or exc)
    if "sm_info" in wanted:
        from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _sm_info
        from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError
        args = wanted["sm_info"] or {}
        try:
            # sminfo asks the fabric from a port with no SM: its own environment
            # (opensm_query_environment), the other readers keep the task's
            reader = _WithEnvironment(module, args.get("environment")) if args.get("environment") else module
            facts["sm"] = _sm_info.gather(reader, args.get("ca"), args.get("port"), args.get("timeout"))[0]
        except ToolError as exc:
            # no SM answered: that is the fabric's state (no MASTER), not a failed read
            facts["sm"] = {"master": None, "sm_ports": [], "master_count": 0, "standby_count": 0,
                           "issm_ports": [], "errors": [{"lid": None, "error": exc.msg}]}
        except Exception as exc:
            errors["sm_info"] = "%s: %s" % (type(exc).__name__, getattr(exc, "msg", None) or exc)
    return facts, errors


def _check_areas(module, host, specs, facts, facts_errors):
    """``check_areas``' result, and each planned area's inputs (``{area: inputs}``)."""
    from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
    needed = A.readers(specs)
    failed = dict((k, v) for k, v in (facts_errors or {}).items() if k in needed)
    if failed:
        why = "; ".join("%s: %s" % kv for kv in sorted(failed.items()))
        return {"drift_records": [A.host_record(host, "gather failed: %s" % why)], "checked": sorted(specs)}, {}
    inputs, records = [], []
    for area in A.NODE_AREAS:
        if area not in specs:
            continue
        try:
            inputs.append(A.plan_inputs(area, specs[area], facts, host))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            # a spec of the wrong shape (not the role's __ROLE_drift_spec): the area's record
            records.append(A.record(host, area, "", "config", "valid", "areas.%s: %s: %s"
                                    % (area, type(exc).__name__, exc)))
    requests, planned = A.requests_of(inputs, host)
    records.extend(planned)
    entries = check_all(module, [A.module_request(r) for r in requests])
    records.extend(A.judge(host, requests, entries))
    checked = {"drift_records": records, "checked": [area for area in A.NODE_AREAS if area in specs]}
    return checked, dict((i["area"], i) for i in inputs)


def check_areas(module, host, specs, facts, facts_errors):
    """The drift check of the areas planned on this node (``_drift_areas.NODE_AREAS``), in the
    call that read their facts: each area's inputs from its spec and the facts, its resources
    checked, and the records judged. ``{drift_records, checked}``; a reader that failed makes
    the host a record of its own, never "no drift"."""
    return _check_areas(module, host, specs, facts, facts_errors)[0]


# The areas ``apply`` converges (areas/_registry: applied): their roles' module calls are all
# resources on the engine.
# opensm (service restarts, the HA order of the SMs) and nic_firmware (resets, reboots) stay
# with their roles: with ``apply`` they are checked only.
APPLIED_AREAS = _registry.names(applied=True)


def _plan_errors(inputs):
    """Why an area cannot be applied (its role would fail the host before any module call)."""
    if inputs is None:
        return ["its spec could not be planned (see its config record)"]
    return list(inputs.get("errors") or []) + list((inputs.get("plan") or {}).get("errors") or [])


def _rollback(module, area, settings, entries):
    """roce_qos_rollback_on_failure after a failure midway on an interface: what the role's
    rescue restores (``_roce_qos_rollback.rollback``), restored through the same resources
    (``state: replaced``), and the role's message. ``(rollback entries, message)``."""
    from ansible_collections.rdma.fabric.plugins.module_utils.areas import _roce_qos_rollback as R
    results = dict((e["resource"], dict(e["result"], failed=e["failed"])) for e in entries
                   if e["resource"] in R.ROLLBACK_ORDER)
    failed = dict(entries[-1]["result"], failed=True)
    plan = R.rollback(results, failed, bool(settings.get("rollback_on_failure")))
    restored, out = {}, []
    for name in plan["order"]:
        if not plan.get(name):
            continue
        entry = run_request(module, 0, {"resource": name, "name": "restore %s" % name, "area": area,
                                        "state": "replaced", "config": plan[name]}, apply_resource)
        restored[name] = dict(entry["result"], failed=entry["failed"])
        out.append(entry)
    return out, R.report(plan, failed, restored)


def _apply_area(module, host, area, inputs, settings):
    """Run the area's requests in order, stopping at the first failure. ``(entries, failure
    message or None)``."""
    from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
    problems = _plan_errors(inputs)
    if problems:
        return [], "%s: %s: not applied, its role would stop the host: %s" % (host, area, "; ".join(problems))
    entries = []
    for index, request in enumerate(A.AREA_OBJECTS[area].apply_requests(inputs["plan"])):
        entry = run_request(module, index, dict(request, area=area), apply_resource)
        entries.append(entry)
        if not entry["failed"]:
            continue
        done = [e["name"] for e in entries[:-1]]
        msg = ("%s: %s: %s (%s) failed: %s || Applied before it in %s: %s."
               % (host, area, entry["name"], entry["resource"], entry["result"].get("msg"), area,
                  ", ".join(done) or "none"))
        if "after" in entry["result"]:
            msg += " State read back: %s." % (entry["result"]["after"],)
        if area == "roce_qos":
            restored, text = _rollback(module, area, settings, entries)
            entries.extend(restored)
            msg += " " + text.split(" || ", 1)[-1]      # the role's words after the failure's own
        return entries, msg
    return entries, None


def apply_areas(module, host, specs, wanted, facts, facts_errors, unless_drifted=()):
    """``check_areas``, then each area of APPLIED_AREAS that drifted (has records) converged:
    its role's module calls (``apply_requests`` of its plan) in order through the engine's
    whole lifecycle; an area stops at its first failure (roce_qos rolls back as its role
    does), the others still run. Then, when something was applied, the facts are read and
    the areas checked again. Returns ``{drift_records, checked, applied, changed,
    drift_records_after, failed, msg}``. In check mode nothing is written: the results are the
    predictions and ``drift_records_after`` is ``drift_records``. A node that did not drift
    runs nothing. When an area of ``unless_drifted`` drifted, nothing is applied and
    ``apply_deferred`` says which (a later call converges the node, playbooks/site.yml)."""
    out, inputs = _check_areas(module, host, specs, facts, facts_errors)
    records = out["drift_records"]
    out.update(applied={}, changed=False, failed=False, drift_records_after=records)
    deferring = sorted(set(r["area"] for r in records if r["area"] in set(unless_drifted or ())))
    if deferring:
        out["apply_deferred"] = "%s drifted: the other areas are applied after %s" % (
            ", ".join(deferring), "it" if len(deferring) == 1 else "them")
        out["plans"] = area_summaries(inputs, facts, records)
        return out
    failures = []
    host_failed = [r for r in records if r["area"] == "host"]
    for area in APPLIED_AREAS:
        if area not in specs or not any(r["area"] == area for r in records) and not host_failed:
            continue
        if host_failed:
            failures.append("%s: %s: not applied: %s" % (host, area, host_failed[0]["actual"]))
            continue
        entries, failure = _apply_area(module, host, area, inputs.get(area), (specs[area] or {}).get("settings") or {})
        out["applied"][area] = [dict((k, e[k]) for k in ("name", "resource", "failed", "result")) for e in entries]
        if failure:
            failures.append(failure)
    out["changed"] = any(e["result"].get("changed") for entries in out["applied"].values() for e in entries)
    if failures:
        out.update(failed=True, msg="; ".join(failures))
    if any(out["applied"].values()) and not module.check_mode:
        facts, errors = gather_facts(module, wanted)
        out["drift_records_after"] = check_areas(module, host, specs, facts, errors)["drift_records"]
    out["plans"] = area_summaries(inputs, facts, out["drift_records_after"])
    return out


def area_summaries(inputs, facts, records_after):
    """What the controller's steps after a node-side converge read (``site.yml``), per area
    planned: nccl_env's plan as the role's fleet check compares it (``active``, ``settings``,
    ``fabric``, ``fleet``, ``notes``, ``warnings``, ``errors``); gpudirect's readiness from the
    facts read last (``ready``, ``not_ready``, ``summary``, ``ready_gpus``), its
    ``kernel_cmdline`` parameters, and the reboot state: ``reboot_required`` when a kernel
    argument is written but not booted, ``pending_arguments`` (``[{name}]``) as the role's
    reboot tasks name them."""
    out = {}
    nccl = (inputs.get("nccl_env") or {}).get("plan")
    if isinstance(nccl, dict):
        out["nccl_env"] = dict((key, nccl.get(key)) for key in
                               ("active", "settings", "fabric", "fleet", "notes", "warnings", "errors"))
    gpu = (inputs.get("gpudirect") or {}).get("plan")
    if isinstance(gpu, dict):
        gdr = (facts or {}).get("gdr") or {}
        pending = [{"name": r["setting"]} for r in records_after or []
                   if r.get("area") == "gpudirect" and r.get("object") == "/proc/cmdline" and r.get("actual") == "pending reboot"]
        out["gpudirect"] = {
            "ready": bool(gdr.get("ready")), "not_ready": list(gdr.get("not_ready") or []),
            "summary": list(gdr.get("summary") or []),
            "ready_gpus": [g.get("gpu") for g in gdr.get("gpus") or [] if g.get("expected_to_work")],
            "kernel_cmdline": gpu.get("kernel_cmdline"), "notes": list(gpu.get("notes") or []),
            "reboot_required": bool(pending), "pending_arguments": pending}
    return out
