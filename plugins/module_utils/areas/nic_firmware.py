# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nic_firmware area: each ConnectX PCI function's non-volatile configuration (mlxconfig),
the reset it owes, and its firmware version. Everything the rdma.fabric.nic_firmware role decides
is here, as pure functions with no host I/O:

- ``settings(variables)``: the role's settings (every option of
  ``roles/nic_firmware/meta/argument_specs.yml``);
- ``config_errors(settings)``: every problem, each naming the ``nic_firmware_*`` variable and
  its value;
- ``spec(variables, render)``: what the controller hands the node (the settings);
- ``plan(facts, spec)``: from ``rdma_facts`` (``ansible_facts.rdma``, the devices subset), the
  ``mlxconfig`` config (one entry per PCI function, the profile's parameters and the host's
  own), ``requests`` (the module call the drift check runs in check mode) and ``errors``;
- ``params_for(port_index, link_layer, settings)``: the profile, with the reason for each value;
- ``records(host, results)``: the drift records of the mlxconfig result (a value that differs at
  next boot, a value set but not yet current, a value the firmware did not take after a reset,
  the firmware version against the pin), named as every report names them (``nv.NAME``,
  ``firmware.version``);
- ``fleet_records(firmware_by_host)``: same-PSID NICs that run different firmware versions.

Errors are PlanError."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.common._bdf import is_bdf, normalize_bdf, parse_bdf
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings
from ansible_collections.rdma.fabric.plugins.module_utils.common._records import config_records
from ansible_collections.rdma.fabric.plugins.module_utils.resources._nvconfig import MAX_PORTS, check_typed, wanted_text
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError

NAME = "nic_firmware"
PREFIX = "nic_firmware_"
OTHER_VARIABLES = ()
FLAGS = ("gpudirect", "reboot_defer", "read_firmware")
PROFILES = ("auto", "roce", "ib", "none")
REBOOT_POLICIES = ("never", "if_required")
# What plan() reads of the node (the drift check gathers it there, _state_check.gather_facts):
# (key, reader, arguments); plan() takes facts[PLAN_FACTS], the PCI functions of rdma_facts' devices.
FACTS = (("rdma", "rdma_facts", {"gather_subset": ["devices"]}),)
PLAN_FACTS = "rdma"
_PARAM = re.compile(r"\A[A-Z][A-Z0-9_]*(\[[0-9]+\])?\Z")
_VALUE = re.compile(r"\A[A-Za-z0-9_.\-]+\Z")
_VERSION = re.compile(r"\A[0-9]+\.[0-9]+\.[0-9]+\Z")
# Why each profile value, and where it comes from (README, "NIC firmware").
REASONS = {
    "LINK_TYPE": "the port runs the fabric's link layer (VPI cards ship as InfiniBand); NVIDIA MFT manual, "
                 "nic-configuration-operator linkType",
    "ROCE_CC_PRIO_MASK": "the firmware runs DCQCN congestion control on the lossless priorities only, as "
                         "roce_qos_dcqcn_priorities does at runtime (nic-configuration-operator roceOptimized sets 255)",
    "CNP_DSCP": "CNPs carry the DSCP roce_qos_cnp_dscp gives them at runtime, from boot on "
                "(nic-configuration-operator roceOptimized)",
    "CNP_802P_PRIO": "CNPs go on the priority roce_qos_cnp_priority gives them at runtime, from boot on "
                     "(nic-configuration-operator roceOptimized)",
    "PCI_WR_ORDERING": "relaxed ordering of PCIe writes for GPUDirect RDMA (AMD ROCm cluster networking guide; "
                       "WEKA's NIC settings check)",
    "ADVANCED_PCI_SETTINGS": "unlocks MAX_ACC_OUT_READ and the ordering settings (AMD ROCm cluster networking guide)",
    "ATS_ENABLED": "ATS off on bare metal so GPU-NIC peer traffic is not translated by the IOMMU "
                   "(nic-configuration-operator gpuDirectOptimized)",
    "MAX_ACC_OUT_READ": "outstanding PCIe reads (AMD ROCm guide and NVIDIA's example use 44; 0 is auto in the PRM)",
}


def settings(variables):
    """The role's settings (keys without ``nic_firmware_``), its booleans converted."""
    return role_settings(variables, PREFIX, FLAGS)


def spec(variables, render=None):
    return {"settings": settings(variables)}


def _is_int(value, low, high):
    if isinstance(value, bool):
        return False
    try:
        number = int(str(value).strip(), 0)
    except ValueError:
        return False
    return low <= number <= high


def config_errors(current):
    """Every problem of the settings, one message each naming the variable and the value."""
    if not isinstance(current, dict):
        raise PlanError("nic_firmware config_errors: expected the role's settings dict, got %r" % (current,))
    errors = []
    profile = current.get("profile")
    if profile not in PROFILES:
        errors.append("nic_firmware_profile=%r: one of %s" % (profile, ", ".join(PROFILES)))
    prios = current.get("cc_priorities")
    if not isinstance(prios, list) or not prios or not all(_is_int(p, 0, 7) for p in prios):
        errors.append("nic_firmware_cc_priorities=%r: expected a non-empty list of priorities 0-7" % (prios,))
    if not _is_int(current.get("cnp_dscp"), 0, 63):
        errors.append("nic_firmware_cnp_dscp=%r: expected a DSCP 0-63" % (current.get("cnp_dscp"),))
    if not _is_int(current.get("cnp_priority"), 0, 7):
        errors.append("nic_firmware_cnp_priority=%r: expected a priority 0-7" % (current.get("cnp_priority"),))
    acc = current.get("max_acc_out_read")
    if acc is not None and not _is_int(acc, 0, 255):
        errors.append("nic_firmware_max_acc_out_read=%r: expected 0-255 or null (not managed)" % (acc,))
    extra = current.get("params")
    if not isinstance(extra, dict):
        errors.append("nic_firmware_params=%r: expected a dict {PARAMETER: value}" % (extra,))
    else:
        for name, value in sorted(extra.items(), key=lambda kv: str(kv[0])):
            if not isinstance(name, str) or not _PARAM.match(name):
                errors.append("nic_firmware_params: %r is not an mlxconfig parameter name (upper case, e.g. SRIOV_EN)" % (name,))
            elif value is not None and not isinstance(value, bool) and not (isinstance(value, int) and value >= 0) \
                    and not (isinstance(value, str) and _VALUE.match(value)):
                errors.append("nic_firmware_params.%s=%r: expected a number, a label (ETH, True) or null (not managed)"
                              % (name, value))
            elif value is not None:
                # the typed checks of the same setting (field width, enumeration, port suffix),
                # the ones rdma.fabric.mlxconfig applies: a raw parameter bypasses none of them
                try:
                    check_typed("nic_firmware_params.%s" % name, name, wanted_text("nic_firmware_params.%s" % name, value))
                except ValidationError as exc:
                    errors.append(str(exc))
    devices = current.get("devices")
    if not isinstance(devices, list) or not all(isinstance(d, str) and d for d in devices):
        errors.append("nic_firmware_devices=%r: expected a list of RDMA device names or PCI addresses ([] = every ConnectX)"
                      % (devices,))
    else:
        seen = {}
        for entry in devices:
            spelled = normalize_bdf(entry) if is_bdf(entry) else entry
            if spelled in seen:
                errors.append("nic_firmware_devices: %r and %r name the same device; give each device once"
                              % (seen[spelled], entry))
            seen.setdefault(spelled, entry)
    versions = current.get("versions")
    if not isinstance(versions, dict):
        errors.append("nic_firmware_versions=%r: expected a dict {PSID: firmware version}" % (versions,))
    else:
        for psid, version in sorted(versions.items(), key=lambda kv: str(kv[0])):
            if not isinstance(version, str) or not _VERSION.match(version):
                errors.append("nic_firmware_versions.%s=%r: expected a version such as 28.39.1002" % (psid, version))
    if current.get("reboot") not in REBOOT_POLICIES:
        errors.append("nic_firmware_reboot=%r: one of %s" % (current.get("reboot"), ", ".join(REBOOT_POLICIES)))
    if not _is_int(current.get("reboot_timeout"), 60, 86400):
        errors.append("nic_firmware_reboot_timeout=%r: expected seconds, 60-86400" % (current.get("reboot_timeout"),))
    record = current.get("boot_record")
    if record and (not isinstance(record, str) or not record.startswith("/") or ".." in record.split("/")
                   or "\x00" in record):
        errors.append("nic_firmware_boot_record=%r: expected an absolute path without '..' (or empty)" % (record,))
    return errors


def _mlxconfig_options(current):
    """The mlxconfig options of the role's call that change what a read gives: the firmware
    read, and the boot record the role keeps (nic_firmware_boot_record; empty: none)."""
    options = {"firmware": bool(current.get("read_firmware"))}
    if "boot_record" in current:
        options["boot_record"] = current["boot_record"] or ""
    return options


def _mask(priorities):
    return sum(1 << int(p) for p in set(int(str(p), 0) for p in priorities))


def params_for(port, link_layer, current):
    """The profile's parameters for the PCI function of port ``port`` (1, 2) whose link layer
    is ``link_layer`` (``Ethernet``, ``InfiniBand``): ``{NAME: value}``. Per-port parameters
    carry the function's port suffix; the PCIe ones are set on every function (the ordering is
    stored per function)."""
    profile = current["profile"]
    if profile == "none":
        fabric = None
    elif profile == "auto":
        fabric = {"Ethernet": "roce", "InfiniBand": "ib"}.get(link_layer)
    else:
        fabric = profile
    out = {}
    suffix = "_P%d" % port
    if fabric == "roce":
        out["LINK_TYPE" + suffix] = "ETH"
        out["ROCE_CC_PRIO_MASK" + suffix] = _mask(current["cc_priorities"])
        out["CNP_DSCP" + suffix] = int(str(current["cnp_dscp"]), 0)
        out["CNP_802P_PRIO" + suffix] = int(str(current["cnp_priority"]), 0)
    elif fabric == "ib":
        out["LINK_TYPE" + suffix] = "IB"
    if current.get("gpudirect") and profile != "none":
        out["PCI_WR_ORDERING"] = "force_relax"
        out["ADVANCED_PCI_SETTINGS"] = True
        out["ATS_ENABLED"] = False
        if current.get("max_acc_out_read") is not None:
            out["MAX_ACC_OUT_READ"] = int(str(current["max_acc_out_read"]), 0)
    for name, value in (current.get("params") or {}).items():
        if value is None:
            out.pop(name, None)
        elif not re.search(r"_P[0-9]+\Z", name) or name.endswith(suffix):
            out[name] = value
    return out


def _devices(rdma):
    devices = (rdma or {}).get("devices")
    if isinstance(devices, list):
        return dict((d.get("name"), d) for d in devices if isinstance(d, dict))
    return devices if isinstance(devices, dict) else {}


def _address(device):
    """The device's PCI address in canonical form, or None."""
    address = (device or {}).get("pci_address")
    return normalize_bdf(address) if isinstance(address, str) and is_bdf(address) else None


def adapter_ports(name, device):
    """``(ports, why)`` of one RDMA device: ``ports`` its adapter ports ``[(port, link_layer)]``,
    ``[]`` for a virtual function (never configured: its NV parameters belong to the physical
    function), None when the port cannot be told (``why`` says why).

    The port follows from the PCI function, never from a position in a list (DOMAIN 8: ``*_P1``
    belongs to physical function 0 and ``*_P2`` to function 1 of the same adapter): function f
    is port f + 1 of a one-port function (mlx5). A function holding every port of the adapter
    (mlx4: ports 1 and 2 on function 0) is those ports. A virtual function is one with a sysfs
    ``physfn`` link (rdma_facts ``physfn``) or a function beyond the adapter's physical ports."""
    address = (device or {}).get("pci_address")
    try:
        function = parse_bdf(address)[3]
    except ValueError:
        return None, "its PCI address %r is not one" % (address,)
    if device.get("physfn"):
        return [], "a virtual function of %s" % device["physfn"]
    numbers = []
    for port in device.get("ports") or []:
        number = port.get("port") if isinstance(port, dict) else None
        if isinstance(number, bool) or not isinstance(number, int):
            return None, "its port list %r has a port without a number" % (device.get("ports"),)
        numbers.append(number)
    layers = dict((p["port"], p.get("link_layer")) for p in device.get("ports") or [])
    if len(numbers) > 1:
        if function == 0 and sorted(numbers) == list(range(1, len(numbers) + 1)) and len(numbers) <= MAX_PORTS:
            return [(n, layers[n]) for n in sorted(numbers)], None
        return None, ("function %d holds ports %s: not one port of a ConnectX adapter (_P1 on function 0, _P2 on "
                      "function 1)" % (function, ", ".join(str(n) for n in sorted(numbers))))
    if function >= MAX_PORTS:
        return [], "function %d, beyond the adapter's %d physical ports" % (function, MAX_PORTS)
    if numbers and numbers != [1]:
        return None, "function %d has port %d, not the one port of a ConnectX function" % (function, numbers[0])
    return [(function + 1, layers.get(1))], None


def _choose(devices, wanted, errors):
    """The devices the role manages, ``[(name, device)]``: every device with a PCI address, or
    the ones ``nic_firmware_devices`` names (by name or PCI address, each once)."""
    by_address = {}
    for name in sorted(devices):
        address = _address(devices[name])
        if address:
            by_address.setdefault(address, []).append(name)
    if not wanted:   # a device with no PCI address (rxe, siw) is no ConnectX function
        return [(name, devices[name] or {}) for name in sorted(devices) if (devices[name] or {}).get("pci_address")]
    chosen, named, missing = [], {}, []
    for entry in wanted:
        if entry in devices:
            names = [entry]
        elif is_bdf(entry) and normalize_bdf(entry) in by_address:
            names = by_address[normalize_bdf(entry)]
        else:
            missing.append(entry)
            continue
        for name in names:
            if name in named:
                errors.append("nic_firmware_devices: %s and %s are the same device (%s, %s); give each device once"
                              % (named[name], entry, name, _address(devices[name]) or "no PCI address"))
                continue
            named[name] = entry
            chosen.append((name, devices[name] or {}))
    if missing:
        errors.append("nic_firmware_devices: %s not on this host (its RDMA devices: %s)"
                      % (", ".join(missing), ", ".join(sorted(devices)) or "none"))
    for name, device in chosen:
        if not device.get("pci_address"):
            errors.append("nic_firmware_devices: %s has no PCI address; mlxconfig configures PCI functions only" % name)
    return [(name, device) for name, device in sorted(chosen) if device.get("pci_address")]


def plan(facts, spec_):
    """``{config, devices, requests, errors}`` for one node from its ``ansible_facts.rdma``."""
    current = spec_["settings"]
    errors = config_errors(current)
    if errors:
        return {"config": [], "devices": [], "requests": [], "errors": errors, "versions": {}}
    devices = _devices(facts)
    wanted = list(current.get("devices") or [])
    chosen = _choose(devices, wanted, errors)
    # each chosen function's ports, from its own PCI function (never from its position among
    # the chosen ones); a virtual function is left out (an error when named), a function whose
    # port cannot be told is refused by name, and two functions claiming one port as well
    config, managed, owners = [], [], {}
    for name, device in chosen:
        ports, why = adapter_ports(name, device)
        if ports is None:
            errors.append("nic_firmware: %s (%s): cannot tell which port of its adapter it is: %s; leave it out with "
                          "nic_firmware_devices" % (name, device.get("pci_address"), why))
            continue
        if not ports:
            if wanted:
                errors.append("nic_firmware_devices: %s (%s) is %s; its NV parameters are the physical function's"
                              % (name, device.get("pci_address"), why))
            continue
        domain, bus, dev, _function = parse_bdf(device["pci_address"])
        clash = [owners.get((domain, bus, dev, port)) for port, _layer in ports if (domain, bus, dev, port) in owners]
        if clash:
            errors.append("nic_firmware: %s (%s) and %s claim the same adapter port; leave one out with "
                          "nic_firmware_devices" % (name, device.get("pci_address"), clash[0]))
            continue
        for port, _layer in ports:
            owners[(domain, bus, dev, port)] = name
        managed.append(name)
        params = {}
        for port, link_layer in ports:
            params.update(params_for(port, link_layer, current))
        if params:
            config.append({"device": name, "params": params})
    if errors:
        return {"config": [], "devices": managed, "requests": [], "errors": errors, "versions": {},
                "drift_spec": _spec.node_files(NAME, spec_)}
    requests = []
    if config:
        requests.append({"resource": "mlxconfig", "name": "NV configuration", "state": "merged",
                         "config": config, "options": _mlxconfig_options(current)})
    versions = dict(current.get("versions") or {})
    return {"config": config, "devices": managed, "requests": requests, "errors": errors,
            "versions": versions, "drift_spec": _spec.node_files(NAME, spec_)}


def judge(versions):
    """``judge(host, result)`` of the drift check's mlxconfig request: its records, with the pins."""
    def judge_result(host, result):
        return mlxconfig_records(host, result, versions)
    return judge_result


def _record(host, obj, setting, expected, actual):
    return {"host": host, "area": NAME, "object": obj, "setting": setting, "expected": expected, "actual": actual}


def mlxconfig_records(host, result, versions=None):
    """A value that differs at next boot (``nv.NAME``: expected the wanted value as the device
    would print it, actual its next-boot value); else a value set and not yet current (object
    ``DEV (current)``, actual ``pending reset``); a value the firmware did not take after a
    reset; the firmware version against ``versions`` (PSID -> version)."""
    out = []
    before = dict((d.get("device"), d) for d in result.get("before") or [] if isinstance(d, dict))
    after = dict((d.get("device"), d) for d in result.get("after") or [] if isinstance(d, dict))
    not_taken = result.get("not_taken") or {}
    for device in sorted(after):
        old = (before.get(device) or {}).get("params") or {}
        new = (after.get(device) or {}).get("params") or {}
        changed = []
        for name in sorted(new):
            was = (old.get(name) or {}).get("next_boot")
            will = (new.get(name) or {}).get("next_boot")
            if was != will:
                changed.append(name)
                out.append(_record(host, device, "nv." + name, will, was))
        lost = not_taken.get(device) or {}
        for name in sorted(lost):
            out.append(_record(host, device + " (current)", "nv." + name, lost[name].get("next_boot"),
                               "%s: the firmware did not take it after a reset" % lost[name].get("current")))
        for name in (before.get(device) or {}).get("pending") or []:
            if name in changed or name in lost:
                continue
            value = old.get(name) or {}
            out.append(_record(host, device + " (current)", "nv." + name, value.get("next_boot"),
                               "%s: pending reset" % value.get("current")))
    for device, info in sorted((result.get("firmware") or {}).items()):
        if info.get("error"):
            out.append(_record(host, device, "firmware.read", "readable", info["error"]))
            continue
        pin = (versions or {}).get(info.get("psid"))
        if pin and pin != info.get("fw_version"):
            out.append(_record(host, device, "firmware.version", "%s (pinned for %s)" % (pin, info.get("psid")),
                               info.get("fw_version")))
    return out


def records(host, results, versions=None):
    """Drift records of ``[(name, result)]``: ``plan`` (its errors as ``config`` records; its
    ``versions``, the pins, for what follows) and ``mlxconfig`` (``mlxconfig_records``). A
    skipped or failed result has none."""
    out = []
    for name, result in results:
        if name == "plan" and isinstance(result, dict):
            versions = result.get("versions") or versions
        if not isinstance(result, dict) or result.get("skipped") or result.get("failed"):
            continue
        if name == "plan":
            out.extend(_record(host, "", "config", "valid", error) for error in result.get("errors") or [])
        elif name == "mlxconfig":
            out.extend(mlxconfig_records(host, result, versions))
    return out


def fleet(plans, options=None):
    """``area_fleet``: each host's plan (``__nic_firmware`` with the ``firmware`` the role's
    mlxconfig call read) -> ``fleet_records``."""
    return fleet_records(dict((item["host"], (item.get("plan") or {}).get("firmware") or {}) for item in plans or []))


def fleet_records(firmware_by_host):
    """Same-PSID NICs running different firmware across the fleet: ``{host: {device: {psid,
    fw_version}}}`` -> a ``firmware.version`` record for each NIC whose version is not the one
    most of that PSID's NICs run (expected names that version and how many run it)."""
    by_psid = {}
    for host, devices in sorted((firmware_by_host or {}).items()):
        for device, info in sorted((devices or {}).items()):
            if isinstance(info, dict) and info.get("psid") and info.get("fw_version"):
                by_psid.setdefault(info["psid"], []).append((host, device, info["fw_version"]))
    out = []
    for psid, nics in sorted(by_psid.items()):
        counts = {}
        for _h, _d, version in nics:
            counts[version] = counts.get(version, 0) + 1
        if len(counts) < 2:
            continue
        common = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        for host, device, version in nics:
            if version != common:
                out.append(_record(host, device, "firmware.version",
                                   "%s (%d of %d %s NICs run it)" % (common, counts[common], len(nics), psid), version))
    return out


def drift_requests(inputs, host):
    """The drift check's requests on the node (``drift/_drift_areas``): the plan's mlxconfig
    call, the call the role makes, judged with the firmware pins (``firmware.version``), a value
    set and not yet current (``pending reset``) and one the firmware did not take as their own
    records; a problem of the settings or the plan is a config record."""
    errors = list(inputs.get("errors") or []) + list((inputs.get("plan") or {}).get("errors") or [])
    if errors:
        return [{"records": config_records(host, NAME, errors)}]
    plan = inputs["plan"]
    return [dict(request, area=NAME, judge=judge(plan.get("versions"))) for request in plan["requests"]]
