# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``ibstat`` parser (rdma_facts' device and port facts, the opensm role's port list).

Layout, read from the printing code: linux-rdma/rdma-core ``infiniband-diags/ibstat.c`` (ca_dump,
port_dump, ca_stat; read at master commit 1d07d99b); samples ``tests/unit/fixtures/samples/ibstat.txt``
show the same layout in infiniband-diags 44.0 (Debian, ibsim) and rdma-core 39 and 47 (A100/H100
nodes); property tests ``test_grammar_ibstat.py``:

* ``CA 'name'`` at column 0 (the node type's name from ``node_type_str``: ``Switch 'name'``
  when the local node is a switch, ``Router 'name'``, ``iWARP RNIC 'name'``), then the CA
  fields (``<kind> type``, ``Number of ports``, ``Firmware version``, ``Hardware version``,
  ``Node GUID``, ``System image GUID``) indented once, ``Port N:`` once and the port fields
  (``State``, ``Physical state``, ``Rate``, ``Effective speed`` (rdma-core 2026, 9a645e432,
  when ibv_query_port_speed succeeds), ``Base lid``, ``LMC``, ``SM lid``, ``Capability mask``,
  ``Port GUID``, ``Link layer`` (since 2010, 1226619d6)) twice. Several CAs follow each
  other without a blank line.
* Values as printed: GUIDs ``0x%016x``, ``Capability mask`` ``0x%08x``, LIDs and ``LMC`` ``%d``,
  ``Rate`` ``%d``, ``2.5`` (1x SDR) or ``%d (FDR10)``, ``State`` ``???`` beyond Active,
  ``Physical state`` ``No state change`` .. ``PhyTest`` or ``???``, ``Link layer`` from sysfs
  (``InfiniBand``, ``Ethernet``; umad's fallback ``IB``, as under ibsim). Firmware version,
  hardware version and CA type may be empty.
* ``ibstat CA PORT`` prints ``CA: 'name'`` and the port block without any indent.
* Which node types reach ca_dump: libibumad lists only node types 1..3 (``is_ib_type``, since
  4474288a0, 2008) and ``ibstat NAME`` looks NAME up in that list, so ``Router`` is printed by
  every release and ``iWARP RNIC`` (type 4) only with a libibumad older than 2008 (OFED 1.3),
  which also printed no ``Link layer``. ``??? 'name'`` (a type above 4) cannot be printed: the
  kernel had no such type before that filter, and type 0 makes ca_dump return. Refused.
* Indents are TABs; pasted copies have spaces: indentation is not relied on, the order is.
* Errors (``ibpanic: ...``, ``ibwarn: ...``) may follow partial output (stdout and
  stderr merged): they are returned in ``errors``, the CAs before them are kept.
* Support-bundle annotations (``$ command``, ``[rc=N]``, ``# comment``) are skipped.

Any other line raises ``IbstatParseError`` (a ValueError) naming the line: a key ibstat never
prints, a CA field after a ``Port N:`` or a port field before one, a type line of another kind
than the header's (``CA type`` under ``Switch 'x'``), a CA field after ``CA: 'name'`` (that form
prints the port block only), a key printed twice in one block, a field outside a CA, a
``Base lid``/``SM lid``/``LMC``/``Number of ports`` that is not a number, or a GUID that
``_guid`` refuses. Unparseable text is an error, never an empty result (blank text, what
ibstat prints with no device, gives no CAs).
Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.rdma.fabric.plugins.module_utils.common._guid import normalize_guid
from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re

KINDS = ("CA", "Switch", "Router", "iWARP RNIC")
_HEAD = _lazy_re.compile(r"(?P<kind>%s)(?P<alone>:?) '(?P<name>[^']+)'" % "|".join(KINDS))
_PORT = _lazy_re.compile(r"Port (?P<port>\d+):")
_FIELD = _lazy_re.compile(r"(?P<key>[A-Za-z][A-Za-z ]*[A-Za-z]):(?:\s+(?P<value>.*))?")
_ERROR = _lazy_re.compile(r"(?:\S*/)?(?:ibpanic|ibwarn|iberror|ibstat):.*")
_ANNOTATION = _lazy_re.compile(r"\$ .*|\[rc=-?\d+\]|#.*")

GUID_FIELDS = {"Node GUID": "node_guid", "System image GUID": "sys_image_guid", "Port GUID": "port_guid"}
INT_FIELDS = ("Number of ports", "Base lid", "LMC", "SM lid")
# the keys ca_dump prints after the header (with "<kind> type" first), and port_dump after "Port N:"
CA_FIELDS = ("Number of ports", "Firmware version", "Hardware version", "Node GUID", "System image GUID")
PORT_FIELDS = ("State", "Physical state", "Rate", "Effective speed", "Base lid", "LMC", "SM lid", "Capability mask",
               "Port GUID", "Link layer")


class IbstatParseError(ValueError):
    """ibstat text that does not follow ibstat's layout; the message names the line."""


def parse(text):
    """``ibstat`` text -> {"cas": [CA], "errors": [error lines]}.

    CA: {"name", "kind" ("CA" | "Switch" | "Router" | "iWARP RNIC"), "fields" {printed key: value}, "node_guid",
    "sys_image_guid", "ports": [{"port": N, "fields": {...}, "port_guid"}]}; GUIDs in the
    ``_guid`` form (None when not printed), values otherwise as printed. Blank text (ibstat
    printed nothing) gives no CAs."""
    cas, errors = [], []
    ca = port = None
    alone = False
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
            port, alone = None, bool(head.group("alone"))
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
        field = _FIELD.fullmatch(line)
        if not field:
            raise IbstatParseError("%s: not an ibstat line (CA 'name', Port N:, Key: value)" % where)
        if ca is None:
            raise IbstatParseError("%s: a field before any CA 'name' line" % where)
        key, value = field.group("key"), (field.group("value") or "").strip()
        _check_key(where, key, ca, port, alone)
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


def _check_key(where, key, ca, port, alone):
    """Refuse a key where ca_dump / port_dump cannot print it (see the module docstring)."""
    ca_keys = CA_FIELDS + ("%s type" % ca["kind"],)
    if port is not None:
        if key not in PORT_FIELDS:
            what = "a CA field after a Port N: line" if key in ca_keys else "not a key ibstat prints in a port block"
            raise IbstatParseError("%s: %s (%s)" % (where, what, ", ".join(PORT_FIELDS)))
    elif alone:
        raise IbstatParseError("%s: a field before Port N: after \"%s: '%s'\", which prints a port block only"
                               % (where, ca["kind"], ca["name"]))
    elif key not in ca_keys:
        what = ("a port field before any Port N: line" if key in PORT_FIELDS
                else "not a key ibstat prints for a %s" % ca["kind"])
        raise IbstatParseError("%s: %s (%s)" % (where, what, ", ".join(ca_keys[-1:] + CA_FIELDS)))
    if key in (port if port is not None else ca)["fields"]:
        raise IbstatParseError("%s: %s printed twice in one block" % (where, key))


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
