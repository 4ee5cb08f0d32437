# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``ibv_devinfo [-v]`` parser: ports and the GID table (occupancy vs
``gid_tbl_len``, RoCE v2 IPv4 GIDs). Printing code: rdma-core libibverbs/examples/devinfo.c,
samples ``ibv_devinfo.txt``.

* ``hca_id:\\t<dev>`` at column 0; device fields ``\\t<key>:\\t...\\t<value>``; flag lists
  (``device_cap_flags`` ...) continue on lines that are a bare word; port blocks start with
  ``\\t\\tport:\\t<n>`` (MLNX_OFED 4.x prints a ``Device ports:`` header first); a blank line
  follows each port. Pasted copies turn TABs into spaces: the order is relied on, not the
  indent.
* ``GID[%3d]:\\t\\t<gid>[, RoCE v1|, RoCE v2]``: only non-zero GIDs are printed (indexes
  skip); the type suffix only since rdma-core 28 and only on Ethernet; RoCE v2 GIDs are then
  compressed IPv6 (``::ffff:192.168.1.1``), others 8 groups of 4 hex digits.
* ``state: PORT_ACTIVE (4)``, ``phys_state: LINK_UP (5)``, ``active_speed: 25.0 Gbps (32)``,
  ``max_vl_num: invalid value (0)`` on RoCE.
* ``No IB devices found`` / ``Failed to get IB devices list`` / ``Failed to open device``
  are errors, not "no devices"; support-bundle annotations (``$ command``, ``[rc=N]``) are skipped.

Unparseable lines (a field outside a device, a GID that is not an IPv6 address, a
``gid_tbl_len`` that is not a number) raise ValueError naming the line.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

_HCA = re.compile(r"hca_id:\s*(?P<dev>\S+)\Z")
_PORT = re.compile(r"port:\s*(?P<port>\d+)\Z")
_GID = re.compile(r"GID\[\s*(?P<index>\d+)\]:\s*(?P<gid>[0-9A-Fa-f:.]+)(?:,\s*(?P<type>RoCE v[12]|IB))?\Z")
_FIELD = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_ ]*?):\s*(?P<value>.*?)\s*\Z")
_WORD = re.compile(r"[A-Z0-9_]+\Z")
_ANNOTATION = re.compile(r"\$ .*|\[rc=-?\d+\]\Z")
_ERRORS = ("No IB devices found", "Failed to get IB devices list", "Failed to open device",
           "Failed to query", "Failed to get")
_INT_PORT_FIELDS = ("sm_lid", "port_lid", "gid_tbl_len", "pkey_tbl_len", "sm_sl", "subnet_timeout")


def _enum(value):
    """'PORT_ACTIVE (4)' -> 'PORT_ACTIVE'."""
    return re.sub(r"\s*\(\d+\)\Z", "", value)


def _gid(text, where):
    try:
        return ipaddress.IPv6Address(text).exploded
    except ValueError:
        raise ValueError("%s: GID %r is not an IPv6 address" % (where, text))


def parse(text, source="ibv_devinfo output"):
    """-> {device: {fields..., "ports": {n: {state, phys_state, link_layer, gid_tbl_len,
    active_speed, active_width, sm_lid, port_lid, gids: [{index, gid, type, ipv4}]}}}}."""
    devices = {}
    device = port = None
    for number, line in enumerate((text or "").splitlines(), 1):
        stripped = line.strip()
        where = "%s line %d %r" % (source, number, stripped[:80])
        if not stripped or _ANNOTATION.match(stripped):
            continue
        if stripped.startswith(_ERRORS):
            raise ValueError("%s: ibv_devinfo failed" % where)
        match = _HCA.match(stripped)
        if match:
            if match.group("dev") in devices:
                raise ValueError("%s: device %s appears twice" % (where, match.group("dev")))
            device = devices[match.group("dev")] = {"name": match.group("dev"), "ports": {}}
            port = None
            continue
        if device is None:
            raise ValueError("%s: not 'ibv_devinfo' output (it starts with 'hca_id:')" % where)
        if stripped == "Device ports:":
            continue
        match = _PORT.match(stripped)
        if match:
            number_ = int(match.group("port"))
            if number_ in device["ports"]:
                raise ValueError("%s: port %d of %s appears twice" % (where, number_, device["name"]))
            port = device["ports"][number_] = {
                "port": number_, "state": None, "phys_state": None, "link_layer": None, "gid_tbl_len": None,
                "active_speed": None, "active_width": None, "sm_lid": None, "port_lid": None, "gids": []}
            continue
        match = _GID.match(stripped)
        if match:
            if port is None:
                raise ValueError("%s: a GID outside a port block" % where)
            gid = _gid(match.group("gid"), where)
            index = int(match.group("index"))
            if any(entry["index"] == index for entry in port["gids"]):
                raise ValueError("%s: GID index %d appears twice" % (where, index))
            mapped = ipaddress.IPv6Address(gid).ipv4_mapped
            port["gids"].append({"index": index, "gid": gid, "type": match.group("type"),
                                 "ipv4": str(mapped) if mapped else None})
            continue
        if stripped.startswith("GID["):
            raise ValueError("%s: not a 'GID[n]: gid[, RoCE vN]' line" % where)
        match = _FIELD.match(stripped)
        if match and match.group("key") != "GID":
            key, value = match.group("key").strip(), match.group("value")
            target = port if port is not None else device
            if port is not None and key in _INT_PORT_FIELDS:
                if not re.match(r"\d+\Z", value):
                    raise ValueError("%s: %s=%r is not a number" % (where, key, value))
                value = int(value)
            elif key in ("state", "phys_state", "active_width"):
                value = _enum(value)
            elif key == "active_speed":
                speed = re.match(r"(?P<gbps>\d+(?:\.\d+)?) Gbps(?: \(\d+\))?\Z", value)
                value = float(speed.group("gbps")) if speed else value
            target[key] = value
            continue
        if _WORD.match(stripped) or stripped.startswith("[") or stripped == ".":
            continue   # flag list continuation ('IBV_DEVICE_...'), dossier elision
        raise ValueError("%s: not an ibv_devinfo 'key: value', port or GID line" % where)
    if not devices:
        raise ValueError("%s: empty, no 'hca_id:' in it (expected 'ibv_devinfo -v' output)" % source)
    return devices


def gid_table(port):
    """Occupancy of one port's GID table: {size, used, free, occupancy, roce_v2_ipv4,
    ipv4_any}. ``size`` None when ibv_devinfo printed no ``gid_tbl_len`` (non-verbose)."""
    size = port.get("gid_tbl_len")
    used = len(port.get("gids") or [])
    v2 = sorted(set(g["ipv4"] for g in port.get("gids") or [] if g["ipv4"] and g["type"] == "RoCE v2"))
    any4 = sorted(set(g["ipv4"] for g in port.get("gids") or [] if g["ipv4"]))
    return {"size": size, "used": used, "free": None if size is None else max(size - used, 0),
            "occupancy": None if not size else round(float(used) / size, 4),
            "roce_v2_ipv4": v2, "ipv4_any": any4}
