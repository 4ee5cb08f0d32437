# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what ``mlxconfig`` (NVIDIA MFT) and ``mstconfig`` (mstflint) print for ``query``,
``-e query`` and ``set``, and build their argument vectors. Pure: no I/O.

Followed (read, not copied): Mellanox/mstflint ``mlxconfig/mlxcfg_ui.cpp`` at HEAD b9d9e84
(4.36, May 2026) and the tags v4.8.0-1, v4.14.0-1, v4.20.0-1, v4.26.0-1, v4.33.0-1, v4.35.0-1,
where the column widths changed; ``mlxconfig/mlxcfg_generic_commander.cpp``
(``loadConfigurationGetStr``, the ``MlxcfgException`` texts) and ``mlxcfg_ui.h`` (``PRE_ERR_MSG``):

* ``printOpening``: a blank line, ``Device #N:``, ten dashes, a blank line, then
  ``Device type:``, ``Name:``, ``Description:`` (free text with semicolons), ``Device:``
  (the ``-d`` argument as given: a BDF or ``/dev/mst/mt4119_pciconf0``), padded ``%-16s``
  before 4.26 and ``%-20s`` since (trailing spaces kept by the padding).
  4th-generation devices (ConnectX-3) print no Name/Description before 4.25.
* ``printConfHeader``: ``Configurations:`` then the column labels ``Default`` (``-e`` when the
  firmware can read defaults), ``Current`` (``-e`` when it can read current), ``Next Boot`` and,
  for ``set``, ``New``. Widths: ``%-16s%36s%16s%18s`` (<= 4.25), ``%-20s%39s%21s%23s`` (4.26-4.32),
  ``%-20s%44s%20s%18s`` (4.33-4.35), ``%-56s`` plus wide value columns (4.36). ``set -with-default``
  labels the next-boot column ``Default`` (``labelNextAsDefault``).
* ``printSingleParam``: ``*`` when the next-boot value differs from default/current (only with
  ``-e``), ``RO`` for read-only parameters (4.25+), then the name and one value per column:
  ``*        NAME`` + ``%-36s`` (<= 4.25) or ``%s%s     %-44s`` (4.26-4.35, 8 blanks before a name
  with no marks) or ``%-48s`` (4.36). ``printValue``: a number alone (``%-16u``), a label with its
  number ``ETH(2)`` / ``True(1)`` / ``force_relax(1)``, ``Array[0..7]`` for an array, ``N/A`` when
  unknown, long hex for BYTES. A space is added only when the previous value filled its column.
* After the table: ``The '*' shows parameters with next value different from default/current
  value.``, ``The 'RO' shows ...``, ``Device Firmware does not support reading ...``; errors as
  ``-E- <text>`` (``The Device doesn't support X parameter``, ``Unknown Parameter X``, ``Failed to
  open the device``, ``Failed to query some of the TLVs:`` followed by indented lines).
* ``set``: the table with ``New``, `` Apply new Configuration? (y/n) [n] : `` (``y`` echoed with
  ``-y``), ``Applying... Done!`` or ``Applying... Failed!`` then ``-E- ...``, and
  ``-I- Please reboot machine to load new configurations.`` (or ``Please power cycle machine``).

Refusal: text with none of these lines raises ``ValueError`` naming the first line; a line inside
a Configurations table that is not a row of that table (wrong number of values, unrelated text,
``...`` left by a person trimming a paste) raises ``ValueError`` naming it. Values are returned
as printed (``ETH(2)``); ``split_value`` / ``same_value`` compare them.

Samples: tests/unit/fixtures/samples/mlxconfig.txt (mlxconfig and mstconfig, both layouts), pinned by
tests/unit/test_corpus.py; the grammar tests are test_grammar_mlxconfig.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re

try:  # Python 2: str and unicode
    _TEXT = (str, unicode)  # noqa: F821 pylint: disable=undefined-variable
except NameError:
    _TEXT = (str,)

COLUMN_KEYS = {"Default": "default", "Current": "current", "Next Boot": "next_boot", "New": "new"}
_DEVICE_START = _lazy_re.compile(r"^Device #(?P<n>\d+):$")
_DASHES = _lazy_re.compile(r"^-{3,}$")
_FIELD = _lazy_re.compile(r"^(?P<key>Device type|Name|Description|Device|PCI device):(?:\s+(?P<value>.*?))?\s*$")
_CONF = _lazy_re.compile(r"^Configurations:(?P<cols>.*)$")
_COL_LABEL = _lazy_re.compile(r"Next Boot|Default|Current|New")
_ROW = _lazy_re.compile(r"^(?P<mark>[* ])?(?P<ro>RO)?\s+(?P<name>[A-Za-z][A-Za-z0-9_]*(?:\[\d+(?:\.\.\d+)?\])?)(?:\s+(?P<values>\S.*?))?\s*$")
_MSG = _lazy_re.compile(r"^-(?P<kind>[EWID])-\s?(?P<text>.*?)\s*$")
_PROMPT = _lazy_re.compile(r"^\s*(?P<question>Apply new Configuration\?|Apply reset and set\?|Do you want to continue\?"
                           r"|Reset configuration for device \S+\?|Do you want to reboot the device \S+ now\?)"
                           r"(?: \(y/n\) \[n\] :)? ?(?P<rest>.*)$")
_APPLY = _lazy_re.compile(r"^Applying\.\.\.\s*(?P<result>Done!|Failed!)?\s*$")
_FREE = _lazy_re.compile(
    r"^(?:The '\*' shows parameters with next value different from default/current value\."
    r"|The 'RO' shows parameters which are for read only and cannot be changed"
    r"|Device Firmware does not support reading (?:default and current|default|current) configurations"
    r"|Param \S+ is not going to be set since value matches next value|Nothing to set|Done!"
    r"|Query output saved to .*|Rebooting device .*|Received signal \d+\.)$")
_TLV_CONT = _lazy_re.compile(r"^ {4}\S")
_NAME_OK = _lazy_re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?:\[\d+(?:\.\.\d+)?\])?$")
_LABELLED = _lazy_re.compile(r"^(?P<label>.*\S)\((?P<num>-?\d+)\)$")
_INT = _lazy_re.compile(r"^-?\d+$")
_HEX = _lazy_re.compile(r"^0[xX][0-9a-fA-F]+$")
_BOOLS = {"true": 1, "false": 0}


def _new_device(device_index):
    return {"index": device_index, "device": None, "device_type": None, "name": None, "description": None,
            "columns": [], "params": {}, "errors": [], "unparsed": []}


def _columns(cols, line):
    labels = _COL_LABEL.findall(cols)
    if _COL_LABEL.sub("", cols).strip():
        raise ValueError("mlxconfig: not a Configurations header: %r" % line)
    if not labels:
        return ["next_boot"]  # a bare header, as seen in trimmed pastes
    keys = [COLUMN_KEYS[label] for label in labels]
    if "next_boot" not in keys and keys[-1] in ("default", "new") and "default" in keys:
        keys[keys.index("default")] = "next_boot"  # set -with-default labels the next column "Default"
    order = ["default", "current", "next_boot", "new"]
    if "next_boot" not in keys or len(set(keys)) != len(keys) or [k for k in order if k in keys] != keys:
        raise ValueError("mlxconfig: not a Configurations header: %r" % line)
    return keys


def _parse(text):
    """Common reader: returns (devices, state) where state holds applied/reboot/errors/seen."""
    if not isinstance(text, _TEXT) or not text.strip():
        raise ValueError("mlxconfig: empty output")
    devices = []
    state = {"applied": None, "reboot_needed": False, "errors": [], "seen": False, "answers": []}
    device = None
    table = False
    tlv_error = None
    first = None
    for raw in text.splitlines():
        line = raw.rstrip("\r").rstrip()
        if first is None and line.strip():
            first = line
        if not line.strip():
            tlv_error = None
            table = False  # mlxconfig prints no blank line inside a table
            continue
        if tlv_error is not None and _TLV_CONT.match(line):
            tlv_error.append(line.strip())
            continue
        tlv_error = None
        match = _DEVICE_START.match(line)
        if match:
            device = _new_device(int(match.group("n")))
            devices.append(device)
            table = False
            state["seen"] = True
            continue
        if _DASHES.match(line) and device is not None and not table:
            continue
        match = _FIELD.match(line)
        if match and not table:
            if device is None:
                device = _new_device(None)
                devices.append(device)
            key = {"Device type": "device_type", "Name": "name", "Description": "description",
                   "Device": "device", "PCI device": "device"}[match.group("key")]
            device[key] = match.group("value") or None
            state["seen"] = True
            continue
        match = _CONF.match(line)
        if match:
            if device is None:
                device = _new_device(None)
                devices.append(device)
            if device["columns"]:
                raise ValueError("mlxconfig: a second Configurations header in one device block: %r" % line)
            device["columns"] = _columns(match.group("cols"), line)
            table = True
            state["seen"] = True
            continue
        match = _MSG.match(line)
        if match:
            kind, msg = match.group("kind"), match.group("text")
            state["seen"] = True
            table = False
            if kind == "E":
                state["errors"].append(msg)
                if device is not None:
                    device["errors"].append(msg)
                if msg.startswith("Failed to query some of the TLVs"):
                    tlv_error = []
                    state.setdefault("tlv_details", []).append(tlv_error)
            elif kind == "I" and re.search(r"reboot|power cycle|load new configurations", msg, re.I):
                state["reboot_needed"] = True
            elif device is not None:
                device["unparsed"].append(line)
            continue
        if _PROMPT.match(line):
            line = _consume_prompt(line, state)
            table = False
            if line is None:
                continue
        if table and (line.startswith((" ", "*")) or line.startswith("RO")):
            match = _ROW.match(line)
            values = (match.group("values") or "").split() if match else []
            if not match or len(values) != len(device["columns"]):
                raise ValueError("mlxconfig: not a row of the %s table: %r" % ("/".join(device["columns"]), line))
            param = {"default": None, "current": None, "next_boot": None, "modified": match.group("mark") == "*"}
            for key, value in zip(device["columns"], values):
                param[key] = value
            if match.group("ro"):
                device.setdefault("read_only", []).append(match.group("name"))
            device["params"][match.group("name")] = param
            continue
        match = _APPLY.match(line)
        if match:
            state["seen"] = True
            table = False
            if match.group("result") == "Done!":
                state["applied"] = True
            elif match.group("result") == "Failed!":
                state["applied"] = False
            continue
        if _FREE.match(line.strip()):
            table = False
            if line.strip() == "Done!" and state["answers"]:
                state["applied"] = True
            if device is not None:
                device["unparsed"].append(line.strip())
            continue
        if table:
            raise ValueError("mlxconfig: a line mlxconfig cannot print inside the Configurations table: %r" % line)
        raise ValueError("mlxconfig: not a line mlxconfig prints: %r" % line)
    if not state["seen"]:
        raise ValueError("mlxconfig: no mlxconfig output in: %r" % first)
    return devices, state


def _consume_prompt(line, state):
    """Handle a yes/no prompt; return the rest of the line to classify, or None when consumed."""
    match = _PROMPT.match(line)
    if not match:
        return line
    state["seen"] = True
    rest = match.group("rest").strip()
    if rest.lower() in ("y", "yes", "n", "no"):
        state["answers"].append(rest.lower()[0])
        return None
    state["answers"].append("")
    return rest or None


def _public(device):
    out = dict(device)
    out.pop("index", None)
    return out


def parse_query(text):
    """``mlxconfig [-d DEV] [-e] query [NAMES]`` output -> list of device dicts.

    Each: ``device``, ``device_type``, ``name``, ``description`` (None when not printed),
    ``columns`` (``default``/``current``/``next_boot``[/``new``] as printed), ``params``
    ({NAME: {"default", "current", "next_boot", "modified"}}, values as printed or None),
    ``errors`` (the ``-E-`` messages printed in that device block), ``unparsed`` (accepted
    free text), and ``read_only`` (names marked ``RO``) when any. Raises ValueError when the
    text is not mlxconfig output or when no device or table was printed (the message carries
    the ``-E-`` lines)."""
    devices, state = _parse(text)
    if not devices or not any(d["columns"] or d["device"] for d in devices):
        raise ValueError("mlxconfig: no device printed%s" % (
            (": -E- " + "; ".join(state["errors"])) if state["errors"] else ""))
    return [_public(d) for d in devices]


def parse_set(text):
    """``mlxconfig -d DEV [-y] set NAME=VALUE ...`` output -> ``{"devices", "applied",
    "reboot_needed", "errors"}``. ``applied`` is True after ``Applying... Done!``; params carry
    a ``new`` value besides ``next_boot``."""
    devices, state = _parse(text)
    result = []
    for device in devices:
        public = _public(device)
        for param in public["params"].values():
            param.setdefault("new", None)
        result.append(public)
    return {"devices": result, "applied": bool(state["applied"]), "reboot_needed": state["reboot_needed"],
            "errors": list(state["errors"])}


def errors(text):
    """The ``-E-`` messages (text after ``-E- ``) of any mlxconfig output, in order."""
    out = []
    for raw in (text or "").splitlines():
        match = _MSG.match(raw.rstrip("\r").rstrip())
        if match and match.group("kind") == "E":
            out.append(match.group("text"))
    return out


def split_value(text):
    """``"ETH(2)"`` -> ``("ETH", 2)``, ``"5"`` -> ``(None, 5)``, ``"0x10"`` -> ``(None, 16)``,
    anything else (``"Array[0..7]"``, ``"N/A"``) -> ``(text, None)``."""
    if isinstance(text, bool):
        return ("True" if text else "False", int(text))
    if isinstance(text, int):
        return (None, text)
    value = str(text).strip()
    if _INT.match(value):
        return (None, int(value))
    if _HEX.match(value):
        return (None, int(value, 16))
    match = _LABELLED.match(value)
    if match:
        return (match.group("label"), int(match.group("num")))
    return (text, None)


def _normal(value):
    label, number = split_value(value)
    if label is not None:
        label = str(label).strip().lower()
        if number is None and label in _BOOLS:
            number = _BOOLS[label]
    return label, number


def same_value(a, b):
    """True when two mlxconfig values name the same setting: ``"ETH(2)"``, ``"ETH"``, ``"2"`` and
    ``2`` match each other through ``ETH(2)``; ``"True(1)"``, ``"True"``, ``"1"`` and ``True``
    match each other. Labels compare case-insensitively. A bare label and a bare number other
    than true/false cannot be matched without the enumeration and compare unequal."""
    if a is None or b is None:
        return a is None and b is None
    la, na = _normal(a)
    lb, nb = _normal(b)
    if na is not None and nb is not None:
        return na == nb and (la is None or lb is None or la == lb or la in _BOOLS or lb in _BOOLS)
    if la is not None and lb is not None:
        return la == lb
    return False


def _check_device(device):
    if not isinstance(device, _TEXT) or not device or re.search(r"\s", device):
        raise ValueError("mlxconfig: bad device %r" % (device,))


def _check_name(name):
    if not isinstance(name, _TEXT) or not _NAME_OK.match(name):
        raise ValueError("mlxconfig: bad parameter name %r" % (name,))


def set_argv(device, values):
    """``["mlxconfig", "-d", DEV, "-y", "set", "NAME=VALUE", ...]`` sorted by name; values passed
    through as given (label or number)."""
    _check_device(device)
    argv = ["mlxconfig", "-d", device, "-y", "set"]
    for name in sorted(values):
        _check_name(name)
        value = values[name]
        text = str(value)
        if not text or re.search(r"\s", text):
            raise ValueError("mlxconfig: bad value %r for %s" % (value, name))
        argv.append("%s=%s" % (name, text))
    return argv


def query_argv(device, names):
    """``["mlxconfig", "-d", DEV, "-e", "query"] + sorted(names)``."""
    _check_device(device)
    names = sorted(names or [])
    for name in names:
        _check_name(name)
    return ["mlxconfig", "-d", device, "-e", "query"] + names


def pending_of(params):
    """The parameters of a parsed device (``parse_query``'s ``params``) whose Next Boot value
    differs from the Current one: the firmware reset or reboot still owed."""
    return sorted(name for name, value in params.items()
                  if value.get("current") is not None and value.get("next_boot") is not None
                  and not same_value(value["current"], value["next_boot"]))
