# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what ``flint -d DEV query`` (``mstflint -d DEV q``, ``q full``) and
``mlxfwmanager --query`` (``mstfwmanager``, ``mlxup --query``, which share the printing code)
print. Pure but for ``read_updates``, the reader that runs the firmware manager.

Followed (read, not copied): Mellanox/mstflint at HEAD b9d9e84 (4.36, May 2026):

* ``flint/subcommands.cpp`` ``QuerySubCommand::printInfo``: one ``Key:`` per line, the value at
  column 23 (``"Image type:            %s"``): ``Image type``, ``FW ISSU Version``, ``FW Version``,
  ``FW Version(Running)``, ``FW Release Date`` (``%x.%x.%x``: day.month.year as printed),
  with ``q full`` also ``Min FIT Version``, ``MIC Version``, ``PRS Name``, ``Part Number`` and
  ``Description`` (the part's description), then ``Product Version``, ``Rom Info`` (one
  ``type=... version=... cpu=...`` per ROM, the next ones on continuation lines indented to column
  23, ``displayExpRomInfo``), the UID block (``displayFs3Uids``: a
  ``Description:           UID                GuidsNumber[  Step]`` header line, then
  ``Base GUID:`` / ``Base MAC:`` with the count, ``Orig Base GUID:`` when the manufacturing
  GUIDs differ, ``System/Node/Port/Allocated GUID:`` on multi-ASIC devices; FS2 images print
  ``GUIDs:`` / ``MACs:``), ``Image VSD``, ``Device VSD`` (``VSD`` on FS2), ``PSID``, ``Orig PSID``,
  ``Security Attributes`` (``N/A``, ``secure-fw``, ``secure-fw, dev`` ...), with ``q full``
  ``Default Update Method``, ``Life cycle``, ``Secure Boot Capable``, ``EFUSE Security Ver`` ...
  Errors print ``-E- Cannot open Device: DEV. ...`` (``flint/err_msgs.h``).
* ``mlxfwupdate/mlxfwmanager.cpp`` ``printDeviceInfoQuery``: ``Querying Mellanox devices firmware
  ...``, per device ``Device #N:``, ten dashes, a blank line, two-space indented ``Device Type:``,
  ``Part Number:``, ``Description:``, ``PSID:``, ``PCI Device Name:``, then ``Base MAC:`` /
  ``Base GUID:`` (``System GUID`` / ``Node GUID`` on multi-ASIC devices; ``Port1 MAC`` ...
  ``Port2 GUID`` when the device does not report a base), ``Versions:         Current
  Available`` and rows ``"     %-12s   %-14s %-14s"`` (``FW``, ``FW (Running)``, ``PXE``,
  ``UEFI``, ``CLP``, ``UEFI Virtio net`` ...), a blank line and ``Status:``. ``--psid`` queries
  print only ``Available``. Update runs add ``Found N device(s) requiring firmware update...``,
  the prompt and progress lines; a query that finds updates ends with ``Found N device(s)
  requiring firmware update. Please use -u flag to perform the update.``. With ``--online``
  (``mlxup --online``, the default source of mlxup) a device that needs an update is followed by
  ``displayReleaseNoteMFAs``: ``Release notes for the available Firmware:``, 41 dashes, a blank
  line, then the server's note as ``  %s`` (free text, any number of lines), read into the
  device's ``release_notes`` up to the next line the tool prints itself (``Device #N:``,
  ``Found N device(s)``, a prompt, ``-E-``/``-W-``/``-I-``, download lines). mlxup itself is not
  open source; it prints through the same mlxfwupdate code.

Values are the text as printed; ``N/A`` becomes None for GUIDs, MACs, VSDs and versions. A line
neither tool prints raises ``ValueError`` naming it; text with none of their lines, or only
``-E-`` lines, raises ``ValueError`` (never an empty result).

``read_updates(module, online)`` is the one reader: it runs the first of mlxfwmanager, mstfwmanager
and mlxup found with ``--query`` (``--online``: the versions NVIDIA's server offers) and reads it; the
mlxconfig module returns it as ``firmware_updates``.

Samples: tests/unit/fixtures/samples/flint.txt and mlxfwmanager.txt, pinned by tests/unit/test_corpus.py;
the grammar tests are test_grammar_mlxfw.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import run_tool

try:  # Python 2: str and unicode
    _TEXT = (str, unicode)  # noqa: F821 pylint: disable=undefined-variable
except NameError:
    _TEXT = (str,)

_KEYVAL = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 ()/._-]*?):(?:\s+(?P<value>.*?))?\s*$")
_ROM_CONT = re.compile(r"^\s{8,}(?P<rom>type=.*?)\s*$")
_MSG = re.compile(r"^-(?P<kind>[EWID])-\s?(?P<text>.*?)\s*$")
_UID_HEADER = re.compile(r"^(?:UID\s+GuidsNumber(?:\s+Step)?|Node\s+Port1.*|Port1\s+Port2.*)$")
_FLINT_KEYS = {
    "Image type": "image_type", "FW Version": "fw_version", "FW Release Date": "fw_release_date",
    "Product Version": "product_version", "Image VSD": "image_vsd", "Device VSD": "device_vsd", "VSD": "device_vsd",
    "PSID": "psid", "Security Attributes": "security_attributes", "Description": "description",
}
_NA_NONE = ("image_vsd", "device_vsd", "base_guid", "base_mac")


def _check_text(text, tool):
    if not isinstance(text, _TEXT) or not text.strip():
        raise ValueError("%s: empty output" % tool)


def _na(value):
    return None if value in (None, "", "N/A") else value


def parse_flint_query(text):
    """``flint -d DEV query [full]`` output -> dict with ``image_type``, ``fw_version``,
    ``fw_release_date``, ``product_version``, ``rom_info`` (list, one string per ROM),
    ``base_guid``, ``base_mac`` (first token of the UID lines; ``GUID1``/``MAC1`` when the device
    prints per-port UIDs), ``image_vsd``, ``device_vsd``, ``psid``, ``security_attributes``,
    ``description`` (the part description ``q full`` prints; never the UID header line), None
    when absent; ``other`` {Key: value} for the remaining keys; ``errors``/``warnings`` (``-E-``,
    ``-W-`` texts)."""
    _check_text(text, "flint")
    out = dict((key, None) for key in set(_FLINT_KEYS.values()))
    out.update({"rom_info": [], "base_guid": None, "base_mac": None, "other": {}, "errors": [], "warnings": []})
    in_rom = False
    seen = False
    first = None
    for raw in text.splitlines():
        line = raw.rstrip("\r").rstrip()
        if not line.strip():
            in_rom = False
            continue
        if first is None:
            first = line
        match = _ROM_CONT.match(line)
        if match and in_rom:
            out["rom_info"].append(match.group("rom"))
            continue
        in_rom = False
        match = _MSG.match(line)
        if match:
            (out["errors"] if match.group("kind") == "E" else out["warnings"]).append(match.group("text"))
            continue
        match = _KEYVAL.match(line)
        if not match or line.startswith(" "):
            raise ValueError("flint: not a line flint query prints: %r" % line)
        key, value = match.group("key"), match.group("value") or ""
        seen = True
        if key == "Rom Info":
            out["rom_info"].append(value)
            in_rom = True
        elif key == "Description" and _UID_HEADER.match(value):
            continue
        elif key in ("Base GUID", "GUID1", "Base GUID1") or (key in ("Base MAC", "MAC1", "Base MAC1")):
            field = "base_guid" if "GUID" in key else "base_mac"
            if out[field] is None:
                out[field] = _na(value.split()[0] if value.split() else None)
            out["other"][key] = value
        elif key in _FLINT_KEYS:
            field = _FLINT_KEYS[key]
            out[field] = _na(value) if field in _NA_NONE else value
        else:
            out["other"][key] = value
    if not seen:
        if out["errors"]:
            raise ValueError("flint: query failed: -E- %s" % "; ".join(out["errors"]))
        raise ValueError("flint: no flint query output in: %r" % first)
    return out


_MGR_FIELDS = {
    "Device Type": "device_type", "Part Number": "part_number", "Description": "description", "PSID": "psid",
    "PCI Device Name": "pci_device_name", "Base MAC": "base_mac", "Base GUID": "base_guid", "Status": "status",
}
_MGR_FIELD = re.compile(r"^\s*(?P<key>Device Type|Part Number|Description|PSID|PCI Device Name|Base MAC|Base GUID"
                        r"|Port[12] MAC|Port[12] GUID|System GUID|Node GUID|Status|Versions):(?:\s+(?P<value>.*?))?\s*$")
_MGR_VERSIONS = re.compile(r"^(?:Current\s+Available|Available)$")
_MGR_DEVICE = re.compile(r"^Device #(?P<n>\d+):$")
_MGR_FREE = re.compile(
    r"^(?:Querying Mellanox devices firmware \.\.\.|-{3,}"
    r"|Found \d+ device\(s\) requiring firmware update(?:\.\.\.|\. Please use -u flag to perform the update\.)"
    r"|Perform FW update\? \[y/N\]: ?[yYnN]?|Device #\d+(?: \(\S+\))?: .*|Done|Restart needed for updates to take effect\."
    r"|Log File: .*|.* - +(?:OK|FAILED|\d+%)|\S.*\.\.\. *Done|Please wait while .*|.*ownload.*)$")


# displayReleaseNoteMFAs (after a device's Status when it needs an update; mlxup --online gets the
# note from NVIDIA's server): the title, 41 dashes, a blank line, then "  %s\n" with the note as the
# server sent it (free text, one or more lines). It ends at the next line the tool prints itself.
_MGR_NOTES = re.compile(r"^Release notes for the available Firmware:$")
_MGR_AFTER_NOTES = re.compile(
    r"^(?:Device #\d+:|Device #\d+ \(|Found \d+ device\(s\) requiring|Perform FW update\?|Querying Mellanox devices"
    r"|-[EWI]- |Restart needed|Log File:|Please wait while |PSID #\d+:|Downloading file\(s\) to )")


def _new_mgr_device(index):
    device = dict((field, None) for field in _MGR_FIELDS.values())
    device.update({"index": index, "versions": {}, "other": {}, "release_notes": None})
    return device


def parse_mlxfwmanager_query(text):
    """``mlxfwmanager --query`` (also ``mstfwmanager``, ``mlxup --query``) output -> list of
    ``{"device_type", "part_number", "description", "psid", "pci_device_name", "base_mac",
    "base_guid", "versions": {"FW": {"current", "available"}, ...}, "status", "index", "other"}``
    (``other``: ``Port1 GUID``, ``System GUID`` ... as printed), ``release_notes`` (the text of the
    ``Release notes for the available Firmware:`` block ``mlxup --online`` / ``mlxfwmanager
    --online`` print after a device that needs an update, else None).

    This is the function to call for ``mlxup`` (``--query``, ``--online``, and the query part of an
    update run: the ``Found N device(s) requiring firmware update...`` / prompt / progress lines are
    accepted and skipped)."""
    _check_text(text, "mlxfwmanager")
    devices = []
    device = None
    columns = None
    errors = []
    first = None
    notes = None     # the lines of a release-notes block being read
    for raw in text.splitlines():
        line = raw.rstrip("\r").rstrip()
        if notes is not None:
            if not _MGR_AFTER_NOTES.match(line.strip()):
                if not (not notes and (not line.strip() or re.match(r"^-{10,}$", line.strip()))):
                    notes.append(line.strip())
                continue
            device["release_notes"] = "\n".join(notes).strip() or None
            notes = None
        if not line.strip():
            columns = None
            continue
        if first is None:
            first = line
        if _MGR_NOTES.match(line.strip()):
            if device is None:
                raise ValueError("mlxfwmanager: release notes before any device: %r" % line)
            notes = []
            columns = None
            continue
        match = _MGR_DEVICE.match(line)
        if match:
            device = _new_mgr_device(int(match.group("n")))
            devices.append(device)
            columns = None
            continue
        match = _MSG.match(line)
        if match:
            if match.group("kind") == "E":
                errors.append(match.group("text"))
            continue
        match = _MGR_FIELD.match(line)
        if match and device is not None:
            key, value = match.group("key"), match.group("value") or ""
            columns = None
            if key == "Versions":
                if not _MGR_VERSIONS.match(value):
                    raise ValueError("mlxfwmanager: not a Versions header: %r" % line)
                columns = ["current", "available"] if value.startswith("Current") else ["available"]
            elif key in _MGR_FIELDS:
                field = _MGR_FIELDS[key]
                device[field] = _na(value) if field in ("base_mac", "base_guid") else value
            else:
                device["other"][key] = value
            continue
        if columns is not None and line.startswith(" "):
            tokens = line.split()
            if len(tokens) < len(columns) + 1:
                raise ValueError("mlxfwmanager: not a version row: %r" % line)
            name = " ".join(tokens[:-len(columns)])
            entry = {"current": None, "available": None}
            for col, value in zip(columns, tokens[-len(columns):]):
                entry[col] = _na(value)
            device["versions"][name] = entry
            continue
        columns = None
        if _MGR_FREE.match(line.strip()):
            continue
        raise ValueError("mlxfwmanager: not a line mlxfwmanager prints: %r" % line)
    if notes is not None:
        device["release_notes"] = "\n".join(notes).strip() or None
    if not devices:
        if errors:
            raise ValueError("mlxfwmanager: query failed: -E- %s" % "; ".join(errors))
        raise ValueError("mlxfwmanager: no device in: %r" % first)
    for device in devices:
        if device["device_type"] is None and device["psid"] is None and not device["versions"]:
            raise ValueError("mlxfwmanager: device #%s has no fields" % device["index"])
    return devices


# The tools that print the query above, in the order they are looked for: NVIDIA MFT's
# mlxfwmanager, mstflint's mstfwmanager, then mlxup (the same printing code, its images built in).
UPDATE_TOOLS = ("mlxfwmanager", "mstfwmanager", "mlxup")


def query_argv(tool, online=False):
    """The query's argument vector: ``TOOL --query``, with ``--online`` the available versions from
    NVIDIA's server (it needs the network) instead of the images the tool has."""
    return [tool, "--query"] + (["--online"] if online else [])


def updates(devices):
    """``parse_mlxfwmanager_query``'s devices -> one entry each: ``{pci_device_name, psid,
    part_number, description, fw_current, fw_available, update, status, release_notes}``;
    ``update`` is True when an available FW version is printed and differs from the current one,
    None when no version is available to compare (the tool has no image for the PSID)."""
    out = []
    for device in devices:
        fw = device["versions"].get("FW") or {}
        current, available = fw.get("current"), fw.get("available")
        out.append({"pci_device_name": device["pci_device_name"], "psid": device["psid"],
                    "part_number": device["part_number"], "description": device["description"],
                    "fw_current": current, "fw_available": available,
                    "update": None if not available or not current else available != current,
                    "status": device["status"], "release_notes": device["release_notes"]})
    return out


def read_updates(module, online=False):
    """The one reader: the first tool of UPDATE_TOOLS on the node, run with ``query_argv``, its
    output read by ``parse_mlxfwmanager_query``. ``{"tool", "argv", "devices": updates(...)}``, or
    ``{"error"}`` naming the command and why (not found, failed, a line the tool does not print)."""
    tool = None
    for name in UPDATE_TOOLS:
        tool = module.get_bin_path(name, required=False)
        if tool:
            break
    if not tool:
        return {"error": "none of %s was found in PATH (NVIDIA MFT, mstflint or mlxup)" % ", ".join(UPDATE_TOOLS)}
    argv = query_argv(tool, online)
    rc, out, err = run_tool(module, argv, check_rc=False)
    try:
        devices = parse_mlxfwmanager_query(out or "")
    except ValueError as exc:
        return {"error": "%s (rc=%s): %s" % (" ".join(argv), rc, (err or "").strip() or exc)}
    return {"tool": tool, "argv": argv, "devices": updates(devices)}
