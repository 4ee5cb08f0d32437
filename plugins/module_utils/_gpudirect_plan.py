# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the rdma.fabric.gpudirect role does on a node, decided from its gdr_readiness read and
the role's variables: the variable checks and the plan. Pure functions with no host I/O, run by
the role's filters on the controller and by state_check (the drift check) on the node. Errors
are PlanError."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath
import re

from ansible_collections.rdma.fabric.plugins.module_utils._common import PlanError

from ansible_collections.rdma.fabric.plugins.module_utils import _kernel_args, _pcie_acs

_ARG_NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_UNIT_NAME = re.compile(r"[A-Za-z0-9@_.:\\\-]+\.(service|target|mount|socket|device|path|timer|slice|scope)")
PEER_MEMORY_MODULES = ("nvidia_peermem", "nv_peer_mem")
GDR_LEVELS = ("PIX", "PXB", "PHB", "SYS")
REBOOT_POLICIES = ("never", "if_required")
BACKENDS = ("auto", "grub", "grubby")
ACS_UNIT = "rdma-fabric-acs.service"


def _is_int(value, minimum):
    if isinstance(value, bool):
        return False
    text = str(value).strip()
    return bool(re.fullmatch(r"-?[0-9]+", text)) and int(text) >= minimum


def _is_true(value):
    return value is True or str(value).strip().lower() in ("true", "yes", "on", "1")


def config_errors(config):
    """Every problem of the role's variables (``config``: dict variable name -> value), one
    message each naming the variable and the value; empty when the variables are sound."""
    if not isinstance(config, dict):
        raise PlanError("gpudirect_config_errors: expected a dict of role variables, got %s"
                        % type(config).__name__)
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


def plan(gdr, config):
    """What the role does on this node, decided from the one read (``ansible_facts.gdr`` of
    ``gdr_readiness``) and the role variables; the apply tasks run only what this says.

    Returns kernel_arguments, acs_paths (the GPU-NIC paths with a redirect bit still set:
    one pcie_acs call each), acs_install (install the boot script and unit), acs_bridges,
    acs_mask, units (for node_files: the ACS unit where systemd runs), modprobe (the module to
    load, or None), files (the modules-load.d file), errors (stop the host) and notes."""
    if not isinstance(gdr, dict) or "acs" not in gdr:
        raise PlanError("gpudirect_plan: expected ansible_facts.gdr of rdma.fabric.gdr_readiness, got %r"
                        % (type(gdr).__name__,))
    acs = gdr["acs"]
    targets = list(acs.get("targets") or [])
    notes, errors, files = [], [], []
    arguments = list(config.get("gpudirect_kernel_arguments") or [])
    if _is_true(config.get("gpudirect_acs_kernel_param")):
        if targets:
            arguments.append({"name": "pci", "value": "disable_acs_redir=" + ";".join(targets)})
        else:
            notes.append("gpudirect_acs_kernel_param is true but the audit found no ACS-capable bridge between a GPU "
                         "and its nearest NIC%s: no pci=disable_acs_redir= argument."
                         % ("" if acs.get("audited") else " (ACS not audited: %s)" % acs.get("error")))
    runtime = _is_true(config.get("gpudirect_acs_runtime", True))
    acs_paths = [dict((k, path[k]) for k in ("gpu", "nic", "gpu_pci_address", "nic_pci_address", "bridges"))
                 for path in acs.get("paths") or [] if path.get("redirect")] if runtime else []
    acs_install = runtime and bool(targets)
    systemd = gdr.get("systemd")
    units = [{"name": ACS_UNIT, "enabled": True, "active": True}] if acs_install and systemd else []
    if acs_install and not systemd:
        notes.append("no systemd on this host: %s/%s is installed but not enabled; run %s at boot another way."
                     % (config.get("gpudirect_unit_dir"), ACS_UNIT, config.get("gpudirect_acs_script_path")))
    modprobe = None
    if _is_true(config.get("gpudirect_peer_memory", True)):
        module = config.get("gpudirect_peer_memory_module")
        driver = gdr.get("nvidia_driver") or {}
        loaded = (gdr.get("peer_memory") or {}).get("modules_loaded") or []
        if not driver.get("installed"):
            notes.append("No NVIDIA driver (no nvidia module loaded, modinfo nvidia finds none): peer memory (%s) "
                         "skipped." % module)
        elif module == "nvidia_peermem" and module not in loaded and not driver.get("peermem_available"):
            errors.append("The NVIDIA driver has no nvidia_peermem module (drivers before 470 ship none): install "
                          "MLNX_OFED's nv_peer_mem and set gpudirect_peer_memory_module to nv_peer_mem, or upgrade "
                          "the driver.")
        else:
            modprobe = None if module in loaded else module
            files.append({"path": posixpath.join(config.get("gpudirect_modules_load_dir"),
                                                 module.replace("_", "-") + ".conf"),
                          "content": "# Managed by Ansible (rdma.fabric.gpudirect): edits are overwritten\n"
                                     "# GPUDirect RDMA peer memory (rdma.fabric.gpudirect)\n%s\n" % module,
                          "mode": "0644"})
    return {"kernel_arguments": arguments, "acs_paths": acs_paths, "acs_install": acs_install,
            "acs_bridges": targets, "acs_mask": acs_mask(), "units": units, "modprobe": modprobe,
            "files": files, "errors": errors, "notes": notes}
