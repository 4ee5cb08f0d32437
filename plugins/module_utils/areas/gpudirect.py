# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpudirect area: the kernel's IOMMU and ACS arguments (kernel_cmdline), ACS redirect
cleared at runtime (pcie_acs) and again at each boot (the rdma-fabric-acs script and unit), the
peer-memory module loaded and its modules-load.d file, GPUDirect RDMA readiness and the reboot
the kernel arguments need. Everything the rdma.fabric.gpudirect role decides is here, as pure
functions with no host I/O:

- ``settings(variables)``: the role's settings from its variables (every option of
  ``roles/gpudirect/meta/argument_specs.yml``, the contract and the only list of them);
- ``config_errors(settings)``: every problem, each naming the ``gpudirect_*`` variable the user
  set and its value;
- ``spec(variables, render)``: what the controller hands the node: the settings and the ACS
  files rendered from the role's templates with slots (``SLOTS``) where the node's own values
  go (no facts);
- ``plan(facts, spec)``: everything the role does on a node from its ``gdr_readiness`` facts
  (``ansible_facts.gdr``): the kernel_cmdline and pcie_acs configs, the module to load, the
  files (slots filled) and units of its one node_files call, what the read itself shows as
  drift (``judged``), and ``requests``, the module calls the drift check runs in check mode;
- ``records(host, results)``: the drift records of the plan and of the modules' results, named
  as every report names them (a kernel argument by its name, a bridge's ``acs_redirect``).

The role (``rdma.fabric.area_*`` filters) and the drift check (``state_check`` on the node) call
these. Errors are PlanError."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath
import re


from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _kernel_args, _pcie_acs
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.common._records import drift_records, module_objects
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings
from ansible_collections.rdma.fabric.plugins.module_utils.common._records import config_records

NAME = "gpudirect"
PREFIX = "gpudirect_"
OTHER_VARIABLES = ()
# the role's boolean variables (converted as ``| bool`` converts them)
FLAGS = ("acs_kernel_param", "acs_runtime", "peer_memory", "fail_on_not_ready", "reboot_defer")
ACS_UNIT = "rdma-fabric-acs.service"
# The boot-time ACS script and unit: the setting holding the path (with the file name, or the
# directory and this name), the role template, the mode.
FILES = (
    (("acs_script_path", None), "gpudirect/rdma-fabric-acs.sh.j2", "0755"),
    (("unit_dir", ACS_UNIT), "gpudirect/rdma-fabric-acs.service.j2", "0644"),
)
# The templates are rendered once, on the controller, with SLOT_PLAN as __gpudirect_plan: the
# node's plan puts its own value where each slot stands (SLOTS: slot -> plan key).
SLOT_PLAN = {"acs_mask": "@RDMA_FABRIC_ACS_MASK@", "acs_bridges": ["@RDMA_FABRIC_ACS_BRIDGES@"]}
SLOTS = {"@RDMA_FABRIC_ACS_MASK@": "acs_mask", "@RDMA_FABRIC_ACS_BRIDGES@": "acs_bridges"}

_ARG_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_UNIT_NAME = re.compile(r"[A-Za-z0-9@_.:\\\-]+\.(service|target|mount|socket|device|path|timer|slice|scope)")
PEER_MEMORY_MODULES = ("nvidia_peermem", "nv_peer_mem")
GDR_LEVELS = ("PIX", "PXB", "PHB", "SYS")
REBOOT_POLICIES = ("never", "if_required")
BACKENDS = ("auto", "grub", "grubby")


def _gdr_arguments(settings):
    return {"gdr_level": settings.get("gdr_level") or "PXB"}


# What plan() reads of the node (the drift check gathers it there, _state_check.gather_facts):
# (key, reader, arguments, or arguments(settings)); plan() takes facts[PLAN_FACTS], gdr_readiness
# at the role's gpudirect_gdr_level.
FACTS = (("gdr", "gdr_readiness", _gdr_arguments),)
PLAN_FACTS = "gdr"


def _is_int(value, minimum):
    if isinstance(value, bool):
        return False
    text = str(value).strip()
    return bool(re.fullmatch(r"-?[0-9]+", text)) and int(text) >= minimum


def _is_true(value):
    return value is True or str(value).strip().lower() in ("true", "yes", "on", "1")


def config_errors(settings):
    """Every problem of the role's settings (``settings(variables)``), one message each naming
    the ``gpudirect_*`` variable the user set and its value; [] when they are good."""
    if not isinstance(settings, dict):
        raise PlanError("gpudirect config_errors: expected the role's settings dict, got %s"
                        % type(settings).__name__)
    config = dict((PREFIX + key, value) for key, value in settings.items())
    errors = []
    arguments = config.get("gpudirect_kernel_arguments")
    if not isinstance(arguments, list):
        errors.append("gpudirect_kernel_arguments must be a list of {name, value, state}, got %r" % (arguments,))
        arguments = []
    for index, item in enumerate(arguments):
        where = "gpudirect_kernel_arguments[%d]" % index
        if not isinstance(item, dict):
            errors.append("%s must be a dict with name, value, state, got %r" % (where, item))
            continue
        name = item.get("name")
        if not isinstance(name, str) or not _ARG_NAME.fullmatch(name):
            errors.append("%s.name must be a kernel parameter name (letters, digits, _ . -), got %r" % (where, name))
        if item.get("state", "present") not in ("present", "absent"):
            errors.append("%s.state must be present or absent, got %r" % (where, item.get("state")))
        if name == "pci" and "disable_acs_redir" in str(item.get("value") or "") \
                and _is_true(config.get("gpudirect_acs_kernel_param")):
            errors.append("%s sets pci=%s while gpudirect_acs_kernel_param is true (the role builds that argument "
                          "from the audit): keep one of them" % (where, item.get("value")))
    if arguments and not errors:   # what kernel_cmdline refuses, named as the role's variable
        try:
            _kernel_args.validate_arguments(arguments)
        except ValueError as exc:
            text = str(exc)
            errors.append(re.sub(r"\barguments\[", "gpudirect_kernel_arguments[", text) if text.startswith("arguments[")
                          else "gpudirect_kernel_arguments: %s" % text)
    after = config.get("gpudirect_acs_unit_after")
    if not isinstance(after, list) or not after:
        errors.append("gpudirect_acs_unit_after must name at least one unit, got %r" % (after,))
    else:
        bad = [unit for unit in after if not isinstance(unit, str) or not _UNIT_NAME.fullmatch(unit)]
        if bad:
            errors.append("gpudirect_acs_unit_after: %s not systemd unit names (e.g. fabricsim.service)"
                          % ", ".join(repr(unit) for unit in bad))
    for name in ("gpudirect_grub_file", "gpudirect_proc_cmdline"):   # kernel_cmdline's, when given
        value = config.get(name, "/")
        if not isinstance(value, str) or not value.startswith("/") or any(c in value for c in "\r\n\x00"):
            errors.append("%s must be an absolute path, got %r" % (name, value))
    for name in ("gpudirect_acs_script_path", "gpudirect_unit_dir", "gpudirect_modules_load_dir"):
        value = config.get(name)
        if not isinstance(value, str) or not value.startswith("/") or "\n" in value or " " in value:
            errors.append("%s must be an absolute path without spaces, got %r" % (name, value))
    choices = (("gpudirect_peer_memory_module", PEER_MEMORY_MODULES), ("gpudirect_gdr_level", GDR_LEVELS),
               ("gpudirect_reboot", REBOOT_POLICIES), ("gpudirect_kernel_backend", BACKENDS))
    for name, allowed in choices:
        if config.get(name) not in allowed:
            errors.append("%s must be one of %s, got %r" % (name, ", ".join(allowed), config.get(name)))
    for name, minimum in (("gpudirect_reboot_timeout", 1), ("gpudirect_health_retries", 1),
                          ("gpudirect_health_delay", 0)):
        if not _is_int(config.get(name), minimum):
            errors.append("%s must be an integer >= %d, got %r" % (name, minimum, config.get(name)))
    command = config.get("gpudirect_grub_update_command")
    if not isinstance(command, list) or not all(isinstance(word, str) and word for word in command):
        errors.append("gpudirect_grub_update_command must be a list of non-empty strings (argv), got %r" % (command,))
    return errors


def acs_mask():
    """The ACS Control bits the role clears (``_pcie_acs.REDIRECT_MASK``) as 4 hex digits."""
    return "%04x" % _pcie_acs.REDIRECT_MASK


def settings(variables):
    """The role's settings (keys without the ``gpudirect_`` prefix) from ``variables``, the
    templated value of every variable of the role's argument spec."""
    return role_settings(variables, PREFIX, FLAGS)


def file_path(settings, setting, name):
    """The path of one of FILES: the setting itself, or the directory it names and ``name``."""
    value = settings.get(setting)
    return value if name is None else "%s/%s" % (value, name)


def spec(variables, render):
    """What the controller hands the node (the role's ``__gpudirect_spec``, the drift check's
    area spec): the settings, and the boot-time ACS script and unit rendered from the role's
    templates by ``render(template, template_vars)`` with SLOT_PLAN as ``__gpudirect_plan``.
    No facts: ``plan`` takes the node's and fills the slots."""
    values = settings(variables)
    slot_plan = dict(SLOT_PLAN, acs_bridges=list(SLOT_PLAN["acs_bridges"]))
    return {"settings": values,
            "files": [{"path": file_path(values, setting, name), "content": render(term, {"__gpudirect_plan": slot_plan}),
                       "mode": mode} for (setting, name), term, mode in FILES]}


def fill_slots(text, plan):
    """A file rendered on the controller with a slot (``@NAME@``, SLOTS) where a value of the
    node's plan goes, filled from this node's plan; a list is joined by spaces, as the
    templates join it."""
    for slot, key in sorted(SLOTS.items()):
        value = plan[key]
        text = text.replace(slot, " ".join(value) if isinstance(value, (list, tuple)) else str(value))
    return text


def _peer_memory(gdr, values, notes, errors):
    """``(module to load or None, modules-load.d files)``."""
    if not _is_true(values.get("peer_memory", True)):
        return None, []
    module = values.get("peer_memory_module")
    driver = gdr.get("nvidia_driver") or {}
    loaded = (gdr.get("peer_memory") or {}).get("modules_loaded") or []
    if not driver.get("installed"):
        notes.append("No NVIDIA driver (no nvidia module loaded, modinfo nvidia finds none): peer memory (%s) "
                     "skipped." % module)
        return None, []
    if module == "nvidia_peermem" and module not in loaded and not driver.get("peermem_available"):
        errors.append("The NVIDIA driver has no nvidia_peermem module (drivers before 470 ship none): install "
                      "MLNX_OFED's nv_peer_mem and set gpudirect_peer_memory_module to nv_peer_mem, or upgrade "
                      "the driver.")
        return None, []
    return (None if module in loaded else module), [
        {"path": posixpath.join(values.get("modules_load_dir"), module.replace("_", "-") + ".conf"),
         "content": "# Managed by Ansible (rdma.fabric.gpudirect): edits are overwritten\n"
                    "# GPUDirect RDMA peer memory (rdma.fabric.gpudirect)\n%s\n" % module,
         "mode": "0644"}]


def kernel_cmdline_config(values, arguments):
    """The kernel_cmdline module's parameters for these arguments."""
    command = values.get("grub_update_command")
    return {"arguments": arguments, "backend": values.get("kernel_backend"), "grub_file": values.get("grub_file"),
            "proc_cmdline": values.get("proc_cmdline"), "update_command": list(command) if command else None}


def plan(facts, spec):
    """Everything the role does on this node, from its one read (``facts``: ``ansible_facts.gdr``
    of ``gdr_readiness``) and the spec; the role's apply tasks run only what this says.

    Returns kernel_arguments; kernel_cmdline (the module's parameters); acs_paths (the GPU-NIC
    paths with a redirect bit still set); pcie_acs (the one pcie_acs call clearing them: its
    ``state`` and ``devices``, the endpoints of those paths; null when none); acs_install,
    acs_bridges, acs_mask; modprobe (the module to load, or null); files and units (the one
    node_files call: the ACS script and unit with the slots filled, the modules-load.d file);
    judged (what the read itself shows differs: ``{object, setting, expected, actual}``);
    errors (stop the host), notes; requests (``[{resource, name, config}]``: kernel_cmdline and
    node_files, the calls the drift check makes in check mode; the ACS bits and the loaded module
    are judged from the read)."""
    if not isinstance(facts, dict) or "acs" not in facts:
        raise PlanError("gpudirect plan: expected ansible_facts.gdr of rdma.fabric.gdr_readiness, got %r"
                        % (type(facts).__name__,))
    if not isinstance(spec, dict) or not isinstance(spec.get("settings"), dict):
        raise PlanError("gpudirect plan: expected the area's spec (a dict with settings), got %r"
                        % (type(spec).__name__,))
    values = spec["settings"]
    problems = config_errors(values)
    if problems:
        raise PlanError("gpudirect: " + "; ".join(problems))
    acs = facts["acs"]
    targets = list(acs.get("targets") or [])
    notes, errors = [], []
    arguments = list(values.get("kernel_arguments") or [])
    if _is_true(values.get("acs_kernel_param")):
        if targets:
            arguments.append({"name": "pci", "value": "disable_acs_redir=" + ";".join(targets)})
        else:
            notes.append("gpudirect_acs_kernel_param is true but the audit found no ACS-capable bridge between a GPU "
                         "and its nearest NIC%s: no pci=disable_acs_redir= argument."
                         % ("" if acs.get("audited") else " (ACS not audited: %s)" % acs.get("error")))
    runtime = _is_true(values.get("acs_runtime", True))
    acs_paths = [dict((k, path[k]) for k in ("gpu", "nic", "gpu_pci_address", "nic_pci_address", "bridges"))
                 for path in acs.get("paths") or [] if path.get("redirect")] if runtime else []
    devices = []
    for path in acs_paths:
        for address in (path["gpu_pci_address"], path["nic_pci_address"]):
            if address not in devices:
                devices.append(address)
    acs_install = runtime and bool(targets)
    systemd = facts.get("systemd")
    units = [{"name": ACS_UNIT, "enabled": True, "active": True}] if acs_install and systemd else []
    if acs_install and not systemd:
        notes.append("no systemd on this host: %s/%s is installed but not enabled; run %s at boot another way."
                     % (values.get("unit_dir"), ACS_UNIT, values.get("acs_script_path")))
    modprobe, module_files = _peer_memory(facts, values, notes, errors)
    result = {"kernel_arguments": arguments, "kernel_cmdline": kernel_cmdline_config(values, arguments),
              "acs_paths": acs_paths, "acs_install": acs_install, "acs_bridges": targets, "acs_mask": acs_mask(),
              "pcie_acs": {"state": "redirect_disabled", "devices": devices} if devices else None,
              "modprobe": modprobe, "units": units, "errors": errors, "notes": notes}
    acs_files = [dict(f, content=fill_slots(f["content"], result)) for f in spec.get("files") or []]
    result["files"] = (acs_files if acs_install else []) + module_files
    judged = [{"object": bridge, "setting": "acs_redirect", "expected": "off", "actual": "on"}
              for bridge in (acs.get("targets_redirect_enabled") or []) if acs_paths]
    if modprobe:
        judged.append({"object": modprobe, "setting": "loaded", "expected": True, "actual": False})
    result["judged"] = judged
    requests = []
    if arguments:
        requests.append({"resource": "kernel_cmdline", "name": "kernel arguments", "config": result["kernel_cmdline"]})
    if result["files"] or units:
        requests.append({"resource": "node_files", "name": "ACS boot unit",
                         "config": {"files": result["files"], "units": units}})
    result["requests"] = requests
    result["drift_spec"] = _spec.node_files(NAME, spec)
    return result


def _record(host, obj, setting, expected, actual):
    return {"host": host, "area": NAME, "object": obj, "setting": setting, "expected": expected, "actual": actual}


def _word_name(word):
    return word.split("=", 1)[0]


def kernel_cmdline_records(host, result):
    """Kernel arguments: each one that differs in the boot configuration; when the boot
    configuration is right, each one the running kernel lacks (set, not yet booted)."""
    out = []
    before = (result.get("before") or {}).get("arguments") or []
    after = (result.get("after") or {}).get("arguments") or []
    for word in sorted(set(after) - set(before)):
        actual = next((b for b in before if _word_name(b) == _word_name(word)), None)
        out.append(_record(host, "boot configuration", _word_name(word), word, actual))
    for word in sorted(set(before) - set(after)):
        if not any(_word_name(a) == _word_name(word) for a in after):
            out.append(_record(host, "boot configuration", _word_name(word), None, word))
    if (result.get("before") or {}).get("boot_loader_update_pending"):
        # the files hold the arguments, the boot loader was not regenerated since (a run killed
        # in between): a reboot alone would not boot them; the next converge runs the update
        out.append(_record(host, "boot configuration", "boot loader update", "done", "pending"))
    if not out:
        for item in result.get("running") or []:
            name = item.get("name") if isinstance(item, dict) else str(item)
            value = item.get("value") if isinstance(item, dict) else None
            out.append(_record(host, "/proc/cmdline", name,
                               name if value is None else "%s=%s" % (name, value), "pending reboot"))
    return out


def records(host, results):
    """Drift records ``{host, area, object, setting, expected, actual}`` of ``[(name, result)]``:
    ``plan`` (the plan: its errors as ``config`` records, what the read shows differs: a bridge's
    ``acs_redirect``, the peer-memory module ``loaded``), ``kernel_cmdline`` (an argument by its
    name, in the boot configuration or pending a reboot) and ``node_files`` (a file's or unit's
    smallest setting that differs; check mode: ``after`` is expected, ``before`` actual). The
    role's verify and the drift check both name settings here. A skipped or failed result, and
    any other (pcie_acs, the modprobe: the read judges them), has none."""
    out = []
    for name, result in results:
        if not isinstance(result, dict) or result.get("skipped") or result.get("failed"):
            continue
        if name == "plan":
            out.extend(_record(host, "", "config", "valid", error) for error in result.get("errors") or [])
            out.extend(_record(host, item["object"], item["setting"], item["expected"], item["actual"])
                       for item in result.get("judged") or [])
        elif name == "kernel_cmdline":
            out.extend(kernel_cmdline_records(host, result))
        elif name == "node_files":
            out.extend(drift_records(host, NAME, module_objects(result)))
    return out


def apply_requests(plan):
    """The module calls the role's apply tasks make on the node, in their order, from the same
    ``plan``: kernel_cmdline (the plan's kernel arguments, when any), pcie_acs (clearing the
    redirect bits on the GPU-NIC paths where still set), kernel_module (``modprobe`` of the
    peer-memory module the read found not loaded), the ACS boot unit's node_files (the plan's
    ``requests``), then the drift spec's node_files."""
    planned = dict((request["resource"], request) for request in plan["requests"])
    out = []
    if "kernel_cmdline" in planned:
        out.append(dict(planned["kernel_cmdline"]))
    if plan.get("pcie_acs"):
        out.append({"resource": "pcie_acs", "name": "ACS redirect",
                    "config": dict(plan["pcie_acs"], clear="redirect")})
    if plan.get("modprobe"):
        out.append({"resource": "kernel_module", "name": "peer memory module", "config": {"name": plan["modprobe"]}})
    if "node_files" in planned:
        out.append(dict(planned["node_files"]))
    out.append({"resource": "node_files", "name": "drift spec", "config": plan["drift_spec"]})
    return out


def drift_requests(inputs, host):
    """The drift check's requests on the node (``drift/_drift_areas``): what the read itself
    shows (runtime ACS redirect on the GPU-NIC paths, the peer-memory module not loaded), then
    the plan's module calls (the kernel arguments, the ACS boot unit and files), the calls the
    role makes; a problem of the settings is a config record."""
    if inputs.get("errors"):
        return [{"records": config_records(host, NAME, inputs["errors"])}]
    plan = inputs["plan"]
    return [{"records": records(host, [("plan", plan)])}] + [dict(request, area=NAME) for request in plan["requests"]]
