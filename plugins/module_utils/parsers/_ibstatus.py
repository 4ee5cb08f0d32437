# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``ibstatus`` parser (samples ``ibstatus.txt``).

Layout, read from the printing code: linux-rdma/rdma-core ``infiniband-diags/scripts/ibstatus``
(the same ``port_status`` function from OFED 1.x infiniband-diags 1.4 through rdma-core v17..v57 and
Debian's infiniband-diags 44.0; the ``link_layer`` line was added with RoCE, OFED 1.5.x, so older
outputs have none):

* per port ``Infiniband device '<dev>' port <n> status:`` then seven lines
  ``echo "\\t<key>:\\t[\\t]" `cat <sysfs file>```: ``default gid`` (gids/0), ``base lid`` (lid, hex),
  ``sm lid`` (sm_lid, hex), ``state`` (``4: ACTIVE``), ``phys state`` (``5: LinkUp``), ``rate``
  (``100 Gb/sec (4X EDR)``), ``link_layer`` (``InfiniBand``/``Ethernet``); an unreadable file prints
  ``unknown`` (``IB`` for link_layer); then a blank line. ``echo`` joins the words of the value with one
  space, so the value is never empty.
* ``Fatal error:  <message>`` (exit 255) for no devices or a device without sys files.
* Indents are TABs; pasted copies have spaces or a Markdown indent: indentation is not relied on.
* Support-bundle annotations (``$ command``, ``# command``, ``[rc=N]``) are skipped.

A line the script cannot print (an unknown key, a value of the wrong shape, a field before any
``Infiniband device`` line) raises ``IbstatusParseError`` (a ValueError) naming the line; text with
no port and no ``Fatal error`` raises too. Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_HEAD = re.compile(r"Infiniband device '(?P<dev>[^']+)' port (?P<port>\d+) status:")
_FIELD = re.compile(r"(?P<key>default gid|base lid|sm lid|state|phys state|rate|link_layer):\s+(?P<value>\S.*)")
_FATAL = re.compile(r"Fatal error: +(?P<msg>.*)")
_ANNOTATION = re.compile(r"\$ .*|#.*|\[rc=-?\d+\]")
_GID = re.compile(r"[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}")
_LID = re.compile(r"0x[0-9a-fA-F]+")
_STATE = re.compile(r"(?P<id>\d+): (?P<word>\S+)")
_RATE = re.compile(r"(?P<gbps>\d+(?:\.\d+)?) Gb/sec(?: \((?P<detail>[^()]*)\))?")
_LINK_LAYERS = ("InfiniBand", "Ethernet", "IB")
KEYS = {"default gid": "default_gid", "base lid": "base_lid", "sm lid": "sm_lid", "state": "state",
        "phys state": "phys_state", "rate": "rate", "link_layer": "link_layer"}


class IbstatusParseError(ValueError):
    """ibstatus text that does not follow the script's layout; the message names the line."""


def _value(key, value, where):
    """One field value -> what the port keeps, or IbstatusParseError."""
    if value == "unknown":
        return None
    if key == "default gid":
        if not _GID.fullmatch(value):
            raise IbstatusParseError("%s: default gid is not 8 groups of 4 hex digits" % where)
        return value.lower()
    if key in ("base lid", "sm lid"):
        if not _LID.fullmatch(value):
            raise IbstatusParseError("%s: %s is not a hex number (0x...)" % (where, key))
        return int(value, 16)
    if key in ("state", "phys state"):
        match = _STATE.fullmatch(value)
        if not match:
            raise IbstatusParseError("%s: %s is not 'N: NAME'" % (where, key))
        return {"id": int(match.group("id")), "name": match.group("word")}
    if key == "rate":
        match = _RATE.fullmatch(value)
        if not match:
            raise IbstatusParseError("%s: rate is not 'N Gb/sec (WIDTH SPEED)'" % where)
        gbps = float(match.group("gbps"))
        return {"text": value, "gbps": int(gbps) if gbps.is_integer() else gbps, "detail": match.group("detail")}
    if value not in _LINK_LAYERS:
        raise IbstatusParseError("%s: link_layer is not InfiniBand, Ethernet or IB" % where)
    return "InfiniBand" if value == "IB" else value


def parse(text):
    """``ibstatus`` text -> {"ports": [port], "errors": [Fatal error lines]}.

    port: {"device", "port", "default_gid", "base_lid", "sm_lid" (ints, None when ``unknown``),
    "state", "phys_state" ({"id", "name"} or None), "rate" ({"text", "gbps", "detail"} or None),
    "link_layer" (None when the line is absent: infiniband-diags before RoCE)}."""
    ports, errors = [], []
    port = None
    for number, raw in enumerate((text or "").splitlines(), 1):
        line = raw.strip()
        if not line or _ANNOTATION.fullmatch(line):
            continue
        where = "ibstatus line %d %r" % (number, line[:120])
        fatal = _FATAL.fullmatch(line)
        if fatal:
            errors.append(line)
            port = None
            continue
        head = _HEAD.fullmatch(line)
        if head:
            port = dict((name, None) for name in KEYS.values())
            port.update({"device": head.group("dev"), "port": int(head.group("port"))})
            ports.append(port)
            continue
        field = _FIELD.fullmatch(line)
        if not field:
            raise IbstatusParseError("%s: not an ibstatus line (Infiniband device 'DEV' port N status:, "
                                     "'key:  value', Fatal error:)" % where)
        if port is None:
            raise IbstatusParseError("%s: a field before any 'Infiniband device' line" % where)
        key = field.group("key")
        port[KEYS[key]] = _value(key, field.group("value").strip(), where)
    if not ports and not errors:
        first = [(n, ln.strip()) for n, ln in enumerate((text or "").splitlines(), 1) if ln.strip()]
        if not first:
            raise IbstatusParseError("ibstatus: empty text (expected 'Infiniband device ... status:' blocks)")
        raise IbstatusParseError("ibstatus line %d %r: no 'Infiniband device' block and no 'Fatal error' in the text"
                                 % (first[0][0], first[0][1][:120]))
    return {"ports": ports, "errors": errors}
