# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ConnectX NIC's non-volatile configuration (``mlxconfig``, or mstflint's ``mstconfig``) on
the resource engine (``_resource``), next-boot aware.

Each object is one device, named by its PCI address (``0000:3b:00.0``), its RDMA device name
(``mlx5_0``, resolved to the PCI address through sysfs) or an mst device path. The one reader
per device is ``mlxconfig -d BDF -e query NAME...`` (``_mlxconfig.parse_query``): the Default,
Current and Next Boot value of every parameter asked for. Then:

- the compare is against **Next Boot**, never Current: a value written with ``set`` becomes
  current only after a firmware reset or a reboot, and automation that compares against Current
  right after a set rewrites (and reboots) forever (nic-configuration-operator#109);
- one ``mlxconfig -d BDF -y set NAME=VALUE ...`` per device (the tool applies it as one NV
  transaction), read back;
- **pending**: the parameters whose Next Boot differs from Current, the reset still owed;
- **not taken**: a pending parameter whose value was already set (or seen pending) in an
  earlier boot, i.e. a reset happened and the firmware did not make it current. The boot of
  each set is kept in a small JSON file (``boot_record``) with the kernel's boot id, so a second
  run knows that a reboot already happened and never asks for another one.

Values are compared as the tool prints them (``ETH(2)``, ``True(1)``, ``5``): a label, its
number, or both name the same value (``_mlxconfig.same_value``). A wanted value is checked
against what the device prints before any write: a number where the device prints a number, one
of the enumeration's labels or numbers where the enumeration is known (``ENUMS``, and the two
labels of every boolean)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxconfig
from ansible_collections.rdma.fabric.plugins.module_utils.common._bdf import is_bdf, normalize_bdf
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError, check_name, run_tool, sysfs_path
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import Resource
from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re

# mlxconfig (NVIDIA MFT) first, then mstflint's own name for the same tool.
TOOLS = ("mlxconfig", "mstconfig")
FLINT_TOOLS = ("flint", "mstflint")
BOOT_ID = "/proc/sys/kernel/random/boot_id"
DEFAULT_BOOT_RECORD = "/var/lib/rdma-fabric/mlxconfig-boot.json"
_NAME = _lazy_re.compile(r"\A[A-Z][A-Z0-9_]*(\[[0-9]+\])?\Z")
_VALUE = _lazy_re.compile(r"\A[A-Za-z0-9_.\-]+\Z")
_INT = _lazy_re.compile(r"\A(?:0x[0-9a-fA-F]+|[0-9]+)\Z")
# Enumerations of the parameters the profiles set (NVIDIA MFT user manual, mlxconfig parameter
# list; mstflint mlxconfig/mlxconfig_dbs): label -> number. A port suffix (_P1, _P2) is removed
# before the lookup.
ENUMS = {
    "LINK_TYPE": {"IB": 1, "ETH": 2, "VPI": 3},
    "PCI_WR_ORDERING": {"per_mkey": 0, "force_relax": 1},
}
_BOOL_LABELS = {"False": 0, "True": 1}
# The firmware field width (bits) of the numeric parameters the nic_firmware area types (NVIDIA
# MFT user manual and the PRM's NV configuration: the CNP DSCP is a 6-bit DSCP, the CNP 802.1p
# priority 3 bits, the congestion control priority mask one bit per priority): a wider value
# would be cut by the firmware (or refused mid-transaction), so it is refused before any read.
WIDTHS = {"CNP_DSCP": 6, "CNP_802P_PRIO": 3, "ROCE_CC_PRIO_MASK": 8, "MAX_ACC_OUT_READ": 8}
# The booleans the area types (True(1)/False(0)).
BOOLEANS = ("ADVANCED_PCI_SETTINGS", "ATS_ENABLED", "SRIOV_EN")
# ConnectX NV per-port parameters: _P1 (physical function 0) and _P2 (function 1).
MAX_PORTS = 2
_PORT = _lazy_re.compile(r"_P([0-9]+)\Z")


def base_name(name):
    """The parameter without its port suffix and array index (``CNP_DSCP_P2`` -> ``CNP_DSCP``)."""
    return _PORT.sub("", re.sub(r"\[[0-9]+\]\Z", "", name))


def port_of(name):
    """The port of a per-port parameter (``LINK_TYPE_P2`` -> 2), None for an adapter-wide one."""
    match = _PORT.search(re.sub(r"\[[0-9]+\]\Z", "", name))
    return int(match.group(1)) if match else None


def check_typed(field, name, want):
    """``want`` (the text mlxconfig is given, ``wanted_text``) against what this code knows of
    ``name`` with no device read: the port suffix exists (_P1, _P2), a number fits its field
    width, an enumeration's label or number, a boolean's label or 0/1. ValidationError naming
    the field and the value; a parameter this code does not type passes (the device read checks
    it against what the device prints)."""
    port = port_of(name)
    if port is not None and not 1 <= port <= MAX_PORTS:
        raise ValidationError("%s=%r: %s names port %d; ConnectX NV parameters have ports _P1 to _P%d"
                              % (field, want, name, port, MAX_PORTS))
    base = base_name(name)
    if base in WIDTHS:
        bits = WIDTHS[base]
        if _INT.match(want) and int(want, 0) >= 1 << bits:
            raise ValidationError("%s=%r: %s is a %d-bit field, 0-%d" % (field, want, name, bits, (1 << bits) - 1))
    enum = ENUMS.get(base) or (_BOOL_LABELS if base in BOOLEANS else None)
    if enum is not None:
        if want.lower() in [k.lower() for k in enum] or (_INT.match(want) and int(want, 0) in enum.values()):
            return
        raise ValidationError("%s=%r: %s takes one of %s" % (
            field, want, name, ", ".join("%s(%d)" % (k, v) for k, v in sorted(enum.items(), key=lambda kv: kv[1]))))


def enum_of(name, printed):
    """``{label: number}`` of a parameter: the known enumeration, the booleans' two labels when
    the device prints one of them, or None (a number, or an enumeration this code does not know)."""
    base = re.sub(r"_P[0-9]+\Z", "", name)
    if base in ENUMS:
        return ENUMS[base]
    label, number = _mlxconfig.split_value(printed) if printed is not None else (None, None)
    if label in _BOOL_LABELS and number == _BOOL_LABELS[label]:
        return _BOOL_LABELS
    return None


def wanted_text(field, value):
    """A wanted value as mlxconfig takes it on its command line: a Python bool as its label, an
    int as its digits, a label or number as given. ValidationError naming the field and value."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        if value < 0:
            raise ValidationError("%s=%r: mlxconfig values are not negative" % (field, value))
        return str(value)
    if not isinstance(value, str) or not _VALUE.match(value.strip()):
        raise ValidationError("%s=%r: expected a number or a label such as ETH or True (letters, digits, '_', '.', '-')"
                              % (field, value))
    return value.strip()


def check_value(field, name, want, printed):
    """``want`` (text) against what the device prints for ``name`` (``printed``, its Next Boot
    value): ValidationError naming the field and the value when the device cannot take it."""
    label, number = _mlxconfig.split_value(printed) if printed is not None else (None, None)
    enum = enum_of(name, printed)
    if enum is not None:
        if want in enum or (_INT.match(want) and int(want, 0) in enum.values()):
            return
        for known in enum:   # labels are case-insensitive on the command line
            if known.lower() == want.lower():
                return
        raise ValidationError("%s=%r: %s takes one of %s" % (
            field, want, name, ", ".join("%s(%d)" % (k, v) for k, v in sorted(enum.items(), key=lambda kv: kv[1]))))
    if label is None and number is not None and not _INT.match(want):
        raise ValidationError("%s=%r: %s is a number (the device prints %s)" % (field, want, name, printed))


def display(name, want, printed):
    """The value as the device would print it after the set (check mode's prediction)."""
    enum = enum_of(name, printed)
    if enum is not None:
        for label, number in enum.items():
            if label.lower() == want.lower() or (_INT.match(want) and int(want, 0) == number):
                return "%s(%d)" % (label, number)
    return want


pending_of = _mlxconfig.pending_of


def read_boot_id():
    try:
        return _fileio.read_text(BOOT_ID, limit=4096, what="boot id").strip() or None
    except (IOError, OSError, ValueError):
        return None


def load_record(path):
    """The boot record ``{"devices": {bdf: {NAME: {value, boot_id}}}}``; {} when absent or
    unreadable (a record that cannot be read only costs the not-taken verdict)."""
    if not path:
        return {}
    try:
        data = json.loads(_fileio.read_text(path, limit=1024 * 1024, what="mlxconfig boot record"))
    except (IOError, OSError, ValueError):
        return {}
    devices = data.get("devices") if isinstance(data, dict) else None
    return devices if isinstance(devices, dict) else {}


def not_taken(params, wants, record, boot_id):
    """Pending wanted parameters whose value was set (or seen pending) in an earlier boot: the
    reset happened and the firmware did not make the value current. ``{NAME: {wanted, current,
    next_boot}}``."""
    out = {}
    if not boot_id:
        return out
    for name in pending_of(params):
        want = wants.get(name)
        seen = (record or {}).get(name) or {}
        value = params[name]
        if want is None or not _mlxconfig.same_value(value["next_boot"], want):
            continue
        if seen.get("boot_id") and seen.get("boot_id") != boot_id and _mlxconfig.same_value(seen.get("value"), want):
            out[name] = {"wanted": want, "current": value["current"], "next_boot": value["next_boot"]}
    return out


class MlxconfigResource(Resource):
    """``mlxconfig`` on the resource engine: objects keyed by ``device``. want ``{params:
    {NAME: text}}``; have ``{pci_address, device_type, params: {NAME: {default, current,
    next_boot}}}``; commands: one ``mlxconfig -d BDF -y set`` argv per device."""

    name = "mlxconfig"
    key_field = "device"

    def __init__(self, module, firmware=False, boot_record=DEFAULT_BOOT_RECORD, read_only=False):
        super(MlxconfigResource, self).__init__(module)
        self.firmware = firmware
        self.read_only = read_only
        self.set_names = {}
        self.boot_record = boot_record
        self.exports = {}
        self.wants = {}
        self.set_devices = []
        self.tool = None
        self._boot_id = None
        self._record = None
        self.addresses = {}

    # --- want
    def check_key(self, field, value):
        if isinstance(value, str) and is_bdf(value):
            return normalize_bdf(value)
        if isinstance(value, str) and value.startswith("/dev/mst/"):
            if not re.match(r"\A/dev/mst/[A-Za-z0-9_.\-]+\Z", value):
                raise ValidationError("%s=%r: not an mst device path" % (field, value))
            return value
        try:
            return check_name(field, value, "RDMA device or PCI address", 63)
        except ValueError as exc:
            raise ValidationError(str(exc))

    def normalize(self, entry, field):
        params = entry.get("params")
        if params is None:
            params = {}
        if isinstance(params, list) and self.state == "gathered":
            params = dict((name, None) for name in params)
        if not isinstance(params, dict):
            raise ValidationError("%s.params=%r: expected a dict {NAME: value} (a list of names to gather)" % (field, params))
        if not params and self.state not in ("gathered",):
            raise ValidationError("%s.params: empty; name at least one parameter" % field)
        want = {}
        for name in sorted(params, key=str):
            where = "%s.params.%s" % (field, name)
            if not isinstance(name, str) or not _NAME.match(name):
                raise ValidationError("%s: %r is not an mlxconfig parameter name (upper case, e.g. LINK_TYPE_P1)"
                                      % ("%s.params" % field, name))
            if self.state != "gathered":
                want[name] = wanted_text(where, params[name])
                check_typed(where, name, want[name])
            else:
                want[name] = None
        self.wants[self.check_key("%s.device" % field, entry.get("device"))] = want
        return {"params": want, "field": field}

    # --- have
    def _tool(self):
        if self.tool is None:
            for name in TOOLS:
                path = self.module.get_bin_path(name, required=False)
                if path:
                    self.tool = path
                    break
            else:
                raise ToolError("required tool mlxconfig (NVIDIA MFT) or mstconfig (mstflint) was not found in PATH")
        return self.tool

    def resolve(self, key, field="device"):
        """The PCI address (or mst path) mlxconfig is given for ``key``."""
        if is_bdf(key) or key.startswith("/dev/mst/"):
            return key
        link = sysfs_path("class", "infiniband", key, "device")
        if not os.path.exists(link):
            raise ValueError("%s=%s: no such RDMA device (%s does not exist)" % (field, key, link))
        bdf = os.path.basename(os.path.realpath(link))
        if not is_bdf(bdf):
            raise ValueError("%s=%s: its sysfs device %s is not a PCI function" % (field, key, os.path.realpath(link)))
        return normalize_bdf(bdf)

    def read(self, key, want):
        address = self.resolve(key)
        # one device under two names (its PCI address and its mlx5_N name, two spellings of the
        # address): two entries would plan against one NV store; every read comes before any set
        if address in self.addresses and self.addresses[address][0] != key:
            other, where = self.addresses[address]
            raise ValueError("%s.device=%s: the same device as %s.device=%s (%s); give each device once"
                             % ((want or {}).get("field", "config"), key, where, other, address))
        self.addresses.setdefault(address, (key, (want or {}).get("field", "config")))
        names = sorted(want["params"]) if want else []
        argv = [self._tool(), "-d", address, "-e", "query"] + names
        rc, out, err = run_tool(self.module, argv, check_rc=False)
        errors = _mlxconfig.errors((out or "") + "\n" + (err or ""))
        if rc != 0 or errors:
            unknown = [n for n in names if any(n in e for e in errors)]
            if unknown:
                raise ValueError("%s.params.%s: the device %s has no such parameter (mlxconfig: %s)"
                                 % (want.get("field", "config"), unknown[0], key, "; ".join(errors)))
            raise ToolError("%s failed (rc=%s): %s" % (" ".join(argv), rc, "; ".join(errors) or (err or out or "").strip()),
                            argv=argv, rc=rc, stdout=out, stderr=err)
        devices = _mlxconfig.parse_query(out)
        if len(devices) != 1:
            raise ToolError("%s printed %d device blocks, expected 1" % (" ".join(argv), len(devices)), argv=argv, rc=rc,
                            stdout=out, stderr=err)
        device = devices[0]
        missing = [n for n in names if n not in device["params"]]
        if missing:
            raise ValueError("%s.params.%s: the device %s has no such parameter (mlxconfig printed no row for it)"
                             % (want.get("field", "config"), missing[0], key))
        params = dict((name, {"default": v.get("default"), "current": v.get("current"), "next_boot": v.get("next_boot")})
                      for name, v in device["params"].items())
        return {"pci_address": address, "device_type": device.get("device_type"), "params": params}

    def parse(self, text):
        return _mlxconfig.parse_query(text)

    def export(self, key, have):
        if have is None:
            return None
        out = {"pci_address": have["pci_address"], "device_type": have.get("device_type"),
               "params": have["params"], "pending": pending_of(have["params"])}
        self.exports[key] = out
        return out

    # --- plan
    def _changes(self, want, have):
        changes = {}
        for name, value in sorted(want["params"].items()):
            printed = have["params"][name].get("next_boot") if have else None
            if have is not None:
                check_value("%s.params.%s" % (want["field"], name), name, value, printed)
            if printed is None or not _mlxconfig.same_value(printed, value):
                changes[name] = value
        return changes

    def plan(self, key, want, have, state):
        changes = self._changes(want, have)
        if not changes:
            return []
        address = have["pci_address"] if have else key
        return [[self.tool or TOOLS[0], "-d", address, "-y", "set"] + ["%s=%s" % (n, v) for n, v in sorted(changes.items())]]

    def predict(self, key, want, have, state):
        params = dict((name, dict(value)) for name, value in have["params"].items())
        for name, value in self._changes(want, have).items():
            params[name]["next_boot"] = display(name, value, params[name].get("next_boot"))
        return dict(have, params=params)

    # --- apply
    def apply(self, key, command):
        rc, out, err = run_tool(self.module, command, check_rc=False)
        errors = _mlxconfig.errors((out or "") + "\n" + (err or ""))
        if rc != 0 or errors:
            raise ToolError("%s failed (rc=%s): %s" % (" ".join(command), rc, "; ".join(errors) or (err or out or "").strip()),
                            argv=command, rc=rc, stdout=out, stderr=err)
        # exit 0 is not proof: mlxconfig prints "Applying... Done!" once the firmware took the set
        # (mlxconfig.cpp setCfg); without it nothing is claimed applied
        try:
            applied = _mlxconfig.parse_set(out)["applied"]
        except ValueError:
            applied = False
        if not applied:
            raise ToolError("%s exited 0 without mlxconfig's \"Applying... Done!\": the values are not known to be set: %s"
                            % (" ".join(command), (out or err or "").strip()[-300:]),
                            argv=command, rc=rc, stdout=out, stderr=err)
        self.set_devices.append(key)
        self.set_names[key] = [word.split("=", 1)[0] for word in command[command.index("set") + 1:]]

    # --- results
    def boot_id(self):
        if self._boot_id is None:
            self._boot_id = read_boot_id() or ""
        return self._boot_id

    def record(self):
        if self._record is None:
            self._record = load_record(self.boot_record)
        return self._record

    def _save_record(self):
        """Note the boot of every pending wanted value not noted yet (and of every value set
        now), so that the next run knows a reset already happened. Not in check mode; no write
        when nothing is new."""
        if not self.boot_record or self.read_only or self.module.check_mode or not self.boot_id():
            return
        record = self.record()
        new = json.loads(json.dumps(record))
        for key, exported in self.exports.items():
            if not exported:
                continue
            address = exported["pci_address"]
            wants = (self.wants.get(key) or {})
            entry = new.setdefault(address, {})
            for name in exported["pending"]:
                want = wants.get(name)
                if want is None:
                    continue
                seen = entry.get(name) or {}
                fresh = key in self.set_devices and name in self._set_names(key)
                if fresh or not _mlxconfig.same_value(seen.get("value"), want):
                    entry[name] = {"value": want, "boot_id": self.boot_id()}
            for name in list(entry):
                if name not in exported["pending"]:
                    del entry[name]
            if not entry:
                del new[address]
        if new != record:
            _fileio.write_atomic(self.boot_record, json.dumps({"version": 1, "devices": new}, indent=2, sort_keys=True) + "\n",
                                 mode=0o644, make_dirs=0o755)
            self._record = new

    def _set_names(self, key):
        return self.set_names.get(key, [])

    def read_firmware(self, address):
        tool = None
        for name in FLINT_TOOLS:
            tool = self.module.get_bin_path(name, required=False)
            if tool:
                break
        if not tool:
            return {"error": "flint (NVIDIA MFT) or mstflint was not found in PATH"}
        argv = [tool, "-d", address, "q"]
        rc, out, err = run_tool(self.module, argv, check_rc=False)
        if rc != 0:
            return {"error": "%s failed (rc=%s): %s" % (" ".join(argv), rc, (err or out or "").strip())}
        from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxfw
        try:
            info = _mlxfw.parse_flint_query(out)
        except ValueError as exc:
            return {"error": "%s: %s" % (" ".join(argv), exc)}
        return dict((k, info.get(k)) for k in ("fw_version", "psid", "product_version", "image_type", "fw_release_date"))

    def extra_result(self):
        pending, taken_not, firmware = {}, {}, {}
        record = self.record()
        for key, exported in sorted(self.exports.items()):
            if not exported:
                continue
            wants = self.wants.get(key) or {}
            names = exported["pending"]
            if names:
                pending[key] = dict((n, {"current": exported["params"][n]["current"],
                                         "next_boot": exported["params"][n]["next_boot"]}) for n in names)
            lost = not_taken(exported["params"], wants, record.get(exported["pci_address"]), self.boot_id())
            if lost:
                taken_not[key] = lost
            if self.firmware and self.state != "parsed":
                firmware[key] = self.read_firmware(exported["pci_address"])
        try:
            self._save_record()
        except (IOError, OSError, ValueError) as exc:
            self.module.warn("mlxconfig: the boot record %s was not written: %s" % (self.boot_record, exc))
        owed = [(key, name) for key, names in pending.items() for name in names if name not in taken_not.get(key, {})]
        result = {"pending": pending, "reboot_required": bool(owed), "not_taken": taken_not}
        if self.firmware:
            result["firmware"] = firmware
        return result
