# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``ibstat`` parser (rdma_facts' device and port facts, the opensm role's port list).

Layout, read from the printing code: linux-rdma/rdma-core ``infiniband-diags/ibstat.c`` (ca_dump,
port_dump, ca_stat; read at master commit 1d07d99b); samples ``tests/unit/fixtures/samples/ibstat.txt``
show the same layout in infiniband-diags 44.0 (Debian, ibsim) and rdma-core 39 and 47 (A100/H100
nodes); property tests ``test_grammar_ibstat.py``:

* ``CA 'name'`` (``Switch 'name'`` when the local node is a switch) at column 0, then the
  CA fields (``CA type``, ``Number of ports``, ``Firmware version``, ``Hardware version``,
  ``Node GUID``, ``System image GUID``) indented once, ``Port N:`` once and the port fields
  (``State``, ``Physical state``, ``Rate``, ``Base lid``, ``LMC``, ``SM lid``,
  ``Capability mask``, ``Port GUID``, ``Link layer``) twice. Several CAs follow each
  other without a blank line.
* Values as printed: GUIDs ``0x%016x``, ``Capability mask`` ``0x%08x``, LIDs and ``LMC`` ``%d``,
  ``Rate`` ``%d``, ``2.5`` (1x SDR) or ``%d (FDR10)``, ``State`` ``???`` beyond Active,
  ``Physical state`` ``No state change`` .. ``PhyTest`` or ``???``, ``Link layer`` from sysfs
  (``InfiniBand``, ``Ethernet``; umad's fallback ``IB``, as under ibsim). Firmware version,
  hardware version and CA type may be empty.
* ``ibstat CA PORT`` prints ``CA: 'name'`` and the port block without any indent.
* ca_dump also names node types 3 and 4 (``Router 'name'``, ``iWARP RNIC 'name'``); this parser
  reads ``CA`` and ``Switch`` only and refuses those headers.
* Indents are TABs; pasted copies have spaces: indentation is not relied on, the order is.
* Errors (``ibpanic: ...``, ``ibwarn: ...``) may follow partial output (stdout and
  stderr merged): they are returned in ``errors``, the CAs before them are kept.
* Support-bundle annotations (``$ command``, ``[rc=N]``, ``# comment``) are skipped.

Any other line, a field outside a CA, a ``Base lid``/``SM lid``/``LMC``/``Number of ports``
that is not a number, or a GUID that ``_guid`` refuses raises ``IbstatParseError`` (a
ValueError) naming the line: unparseable text is an error, never an empty result (blank
text, what ibstat prints with no device, gives no CAs). A ``Key: value`` line is read into
``fields`` whatever the key, though ibstat prints only the keys above.
Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils._guid import normalize_guid

_HEAD = re.compile(r"(?P<kind>CA|Switch):? '(?P<name>[^']+)'")
_PORT = re.compile(r"Port (?P<port>\d+):")
_FIELD = re.compile(r"(?P<key>[A-Za-z][A-Za-z ]*[A-Za-z]):(?:\s+(?P<value>.*))?")
_ERROR = re.compile(r"(?:\S*/)?(?:ibpanic|ibwarn|iberror|ibstat):.*")
_ANNOTATION = re.compile(r"\$ .*|\[rc=-?\d+\]|#.*")

GUID_FIELDS = {"Node GUID": "node_guid", "System image GUID": "sys_image_guid", "Port GUID": "port_guid"}
INT_FIELDS = ("Number of ports", "Base lid", "LMC", "SM lid")


class IbstatParseError(ValueError):
    """ibstat text that does not follow ibstat's layout; the message names the line."""


def parse(text):
    """``ibstat`` text -> {"cas": [CA], "errors": [error lines]}.

    CA: {"name", "kind" ("CA" | "Switch"), "fields" {printed key: value}, "node_guid",
    "sys_image_guid", "ports": [{"port": N, "fields": {...}, "port_guid"}]}; GUIDs in the
    ``_guid`` form (None when not printed), values otherwise as printed. Blank text (ibstat
    printed nothing) gives no CAs."""
    cas, errors = [], []
    ca = port = None
    for number, raw in enumerate((text or "").splitlines(), 1):
        line = raw.strip()
        if not line or _ANNOTATION.fullmatch(line):
            continue
        if _ERROR.fullmatch(line):
            errors.append(line)
            continue
        head = _HEAD.fullmatch(line)
        if head:
            ca = {"name": head.group("name"), "kind": head.group("kind"), "fields": {},
                  "node_guid": None, "sys_image_guid": None, "ports": []}
            cas.append(ca)
            port = None
            continue
        where = "ibstat line %d %r" % (number, line)
        port_head = _PORT.fullmatch(line)
        if port_head:
            if ca is None:
                raise IbstatParseError("%s: a port before any CA 'name' line" % where)
            port = {"port": int(port_head.group("port")), "fields": {}, "port_guid": None}
            ca["ports"].append(port)
            continue
        if line.startswith("Port ") and line.endswith(":"):
            raise IbstatParseError("%s: not a port header (Port N:)" % where)
        if line.startswith("Port ") and line.endswith(":"):
            raise IbstatParseError("%s: not a port header (Port N:)" % where)
        field = _FIELD.fullmatch(line)
        if not field:
            raise IbstatParseError("%s: not an ibstat line (CA 'name', Port N:, Key: value)" % where)
        if ca is None:
            raise IbstatParseError("%s: a field before any CA 'name' line" % where)
        key, value = field.group("key"), (field.group("value") or "").strip()
        target = port if port is not None else ca
        if key in INT_FIELDS and not value.isdigit():
            raise IbstatParseError("%s: %s is not a decimal number" % (where, key))
        if key in GUID_FIELDS:
            try:
                target[GUID_FIELDS[key]] = normalize_guid(value)
            except ValueError as exc:
                raise IbstatParseError("%s: %s" % (where, exc))
        target["fields"][key] = value
    return {"cas": cas, "errors": errors}


def _port_key(key):
    return key.lower().replace(" ", "_")


def port_list(text):
    """``ibstat`` text -> flat list of ports, in print order, for the opensm role:
    {"ca", "port", <lower_case_key>: value...}; ``base_lid``, ``lmc`` and ``sm_lid`` as
    integers, ``port_guid`` normalised, the other values as printed (``state`` Active,
    ``physical_state`` LinkUp, ``link_layer`` InfiniBand / IB / Ethernet, ``rate`` "400")."""
    ports = []
    for ca in parse(text)["cas"]:
        for port in ca["ports"]:
            entry = {"ca": ca["name"], "port": port["port"]}
            for key, value in port["fields"].items():
                entry[_port_key(key)] = int(value) if key in INT_FIELDS else value
            if port["port_guid"]:
                entry["port_guid"] = port["port_guid"]
            ports.append(entry)
    return ports
