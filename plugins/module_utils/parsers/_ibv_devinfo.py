# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``ibv_devinfo [-v|-vv]`` parser: ports and the GID table (occupancy vs
``gid_tbl_len``, RoCE v2 IPv4 GIDs).

Printing code followed: linux-rdma/rdma-core ``libibverbs/examples/devinfo.c``
(``print_hca_cap()`` and its helpers, rdma-core v22 .. HEAD 691953d8, 2026; ``-vv`` is ``-v``
given twice: one verbose level) and the legacy MLNX_OFED 4.x libibverbs (``-v`` adds EXP
capability blocks and a ``Device ports:`` header). Real outputs: samples ``ibv_devinfo.txt``
(corpus test ``tests/unit/test_corpus.py``, adapter ``tests/unit/corpus/ibv_devinfo.py``).

The grammar, by indent (TABs in the tool's bytes; pasted copies turn them into spaces, so
only the *relative* indent is used, and where a paste lost it, the order):

* ``hca_id:\\t<dev>`` starts a device. Device lines sit at the device indent (one TAB):
  ``key:\\t<value>`` (``max_qp:``, ``completion timestamp_mask:``, ``raw packet caps:``,
  ``maximum available device memory:`` ...), status lines (``tag matching not supported``,
  ``core clock not supported``, MLNX_OFED 4.x ``Multi-Packet RQ supported``) and, in
  MLNX_OFED 4.x, value lines without a colon (``log atomic arg sizes (mask)\\t\\t0x8``,
  ``ooo_rc_caps  = 0x1``).
* Everything indented deeper than the device indent is free text belonging to the device line
  above it, until the next line at the device indent: the flag lists (five TABs:
  ``BAD_PKEY_CNTR``, ``NO SUPPORT``, ``C-VLAN stripping offload``, ``Scatter FCS offload``,
  ``Unknown flags: 0x1C000000000``) and sub-blocks (``tso_caps:``, ``rss_caps:``,
  ``packet_pacing_caps:``, ``cq moderation caps:``; two TABs). Kept, whitespace-normalised, in
  ``device["lists"][key]``. Where a paste lost the indent, a line that is no ``key:`` line
  still continues the list of a key that opens one (no value, or a ``*flags*`` key).
* ``\\t\\tport:\\t<n>`` starts a port (MLNX_OFED 4.x prints ``\\tDevice ports:`` first); its
  lines are ``\\t\\t\\t<key>:\\t<value>`` and ``GID[%3d]:\\t\\t<gid>[, RoCE v1|, RoCE v2]``: only
  non-zero GIDs are printed (indexes skip); the type suffix since rdma-core 28 and only on
  Ethernet; RoCE v2 GIDs are then compressed IPv6 (``::ffff:192.168.1.1``), others (and
  every GID of MLNX_OFED 4.x / rdma-core < 28) 8 groups of 4 hex digits.
* ``state: PORT_ACTIVE (4)``, ``phys_state: LINK_UP (5)`` (``PORT_CONFIGURATION TRAINNING
  (4)``, only for the InfiniBand transport), ``active_speed: 25.0 Gbps (32)``,
  ``effective_speed: 200.0 Gbps`` (rdma-core 2026, b8675bad5), ``max_vl_num: invalid value
  (0)`` on RoCE.
* ``No IB devices found``, ``Failed to ...``, ``IB device 'x' wasn't found``, ``Invalid port
  requested for device`` (stderr) are errors, not "no devices"; ``$ command`` and ``[rc=N]``
  annotations and libibverbs' warnings (``libibverbs: Warning: ...``, stderr) are skipped.

Refused with a ValueError naming the line: a device line that is none of the above (prose at
the device indent), a port line that is not ``key: value`` or a GID, a GID that is not an
IPv6 address, a ``gid_tbl_len`` that is not a number, a field before ``hca_id:``; an output
with no ``hca_id:`` at all.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

_HCA = re.compile(r"hca_id:\s*(?P<dev>\S+)\Z")
_PORT = re.compile(r"port:\s*(?P<port>\d+)\Z")
_GID = re.compile(r"GID\[\s*(?P<index>\d+)\]:\s*(?P<gid>[0-9A-Fa-f:.]+)(?:,\s*(?P<type>RoCE v[12]|IB))?\Z")
_FIELD = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_ ]*?):\s*(?P<value>.*?)\s*\Z")
# MLNX_OFED 4.x device lines without a colon: 'log atomic arg sizes (mask)\t\t0x8', 'ooo_rc_caps  = 0x1'
_SPACED = re.compile(r"(?P<key>[A-Za-z_][\w ()]*?)(?:\s*=\s*|\t\s*|\s{2,})(?P<value>0x[0-9A-Fa-f]+|\d+)\Z")
_STATUS = re.compile(r"[A-Za-z][\w .-]* supported\Z")
_UNKNOWN_FLAGS = re.compile(r"Unknown flags: 0x[0-9A-Fa-f]+\Z")
# support-bundle annotations; libibverbs' own warnings (stderr, 'libibverbs: Warning: couldn't open config directory')
_ANNOTATION = re.compile(r"\$ .*|\[rc=-?\d+\]\Z|libibverbs: ")
_ERRORS = ("No IB devices found", "Failed to ", "IB device '", "Invalid port requested", "Usage: ")
_INT_PORT_FIELDS = ("sm_lid", "port_lid", "gid_tbl_len", "pkey_tbl_len", "sm_sl", "subnet_timeout")


def _enum(value):
    """'PORT_ACTIVE (4)' -> 'PORT_ACTIVE'."""
    return re.sub(r"\s*\(\d+\)\Z", "", value)


def _gid(text, where):
    try:
        return ipaddress.IPv6Address(text).exploded
    except ValueError:
        raise ValueError("%s: GID %r is not an IPv6 address" % (where, text))


def _indent(line):
    """The column the text starts at, TABs at 8 (what a terminal paste shows)."""
    expanded = line.expandtabs(8)
    return len(expanded) - len(expanded.lstrip())


def _opens_list(key, value):
    return not value or "flags" in key


def _port_line(port, stripped, where):
    match = _GID.match(stripped)
    if match:
        gid = _gid(match.group("gid"), where)
        index = int(match.group("index"))
        if any(entry["index"] == index for entry in port["gids"]):
            raise ValueError("%s: GID index %d appears twice" % (where, index))
        mapped = ipaddress.IPv6Address(gid).ipv4_mapped
        port["gids"].append({"index": index, "gid": gid, "type": match.group("type"),
                             "ipv4": str(mapped) if mapped else None})
        return
    if stripped.startswith("GID["):
        raise ValueError("%s: not a 'GID[n]: gid[, RoCE vN]' line" % where)
    match = _FIELD.match(stripped)
    if not match:
        raise ValueError("%s: not an ibv_devinfo port 'key: value' or GID line" % where)
    key, value = match.group("key").strip(), match.group("value") or ""
    if key in _INT_PORT_FIELDS:
        if not re.match(r"\d+\Z", value):
            raise ValueError("%s: %s=%r is not a number" % (where, key, value))
        value = int(value)
    elif key in ("state", "phys_state", "active_width"):
        value = _enum(value)
    elif key in ("active_speed", "effective_speed"):
        speed = re.match(r"(?P<gbps>\d+(?:\.\d+)?) Gbps(?: \(\d+\))?\Z", value)
        value = float(speed.group("gbps")) if speed else value
    port[key] = value


def _device_line(device, state, stripped, indent, where):
    """One line of the device section (before the first port). ``state``: the device indent
    and the device line whose free text follows (``opener``)."""
    if state["indent"] is None:
        state["indent"] = indent
    opener = state["opener"]
    if opener is not None and indent > state["indent"]:
        device["lists"][opener["key"]].append(" ".join(stripped.split()))
        return
    if opener is not None and opener["list"] and _UNKNOWN_FLAGS.match(stripped):
        device["lists"][opener["key"]].append(stripped)
        return
    match = _FIELD.match(stripped)
    if match:
        key, value = match.group("key").strip(), match.group("value") or ""
        device[key] = value
        device["lists"].setdefault(key, [])
        state["opener"] = {"key": key, "list": _opens_list(key, value)}
        return
    if _STATUS.match(stripped):
        device["notes"].append(" ".join(stripped.split()))
        device["lists"].setdefault(device["notes"][-1], [])
        state["opener"] = {"key": device["notes"][-1], "list": False}
        return
    match = _SPACED.match(stripped)
    if match:
        key = " ".join(match.group("key").split())
        device[key] = match.group("value")
        device["lists"].setdefault(key, [])
        state["opener"] = {"key": key, "list": False}
        return
    if opener is not None and opener["list"]:
        # a paste that lost the indent: the flag list goes on until the next key line
        device["lists"][opener["key"]].append(" ".join(stripped.split()))
        return
    raise ValueError("%s: not an ibv_devinfo device line ('key: value', a flag list under a key, "
                     "'... not supported')" % where)


def parse(text, source="ibv_devinfo output"):
    """-> {device: {fields..., "lists": {key: [free-text lines under it]}, "notes": [status
    lines], "ports": {n: {state, phys_state, link_layer, gid_tbl_len, active_speed, active_width,
    sm_lid, port_lid, gids: [{index, gid, type, ipv4}], other printed fields}}}}."""
    devices = {}
    device = port = None
    state = {}
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
            device = devices[match.group("dev")] = {"name": match.group("dev"), "ports": {}, "lists": {}, "notes": []}
            port = None
            state = {"indent": None, "opener": None}
            continue
        if device is None:
            raise ValueError("%s: not 'ibv_devinfo' output (it starts with 'hca_id:')" % where)
        if stripped == "Device ports:" and port is None:
            state["opener"] = None
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
        if port is not None:
            _port_line(port, stripped, where)
            continue
        if stripped.startswith("GID["):
            raise ValueError("%s: a GID outside a port block" % where)
        _device_line(device, state, stripped, _indent(line), where)
    if not devices:
        raise ValueError("%s: empty, no 'hca_id:' in it (expected 'ibv_devinfo -v' output)" % source)
    for device in devices.values():
        device["lists"] = dict((k, v) for k, v in device["lists"].items() if v)
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
