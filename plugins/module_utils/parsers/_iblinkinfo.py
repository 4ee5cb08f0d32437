# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``iblinkinfo`` (infiniband-diags), both layouts, for rdma.fabric.ib_fabric.

Layout rules, read from the printing code of linux-rdma/rdma-core
``infiniband-diags/iblinkinfo.c`` (print_port, print_node_header; the same format strings
since the 2011 extended-speed change d7bb3c119, infiniband-diags 1.5.x, through rdma-core
v17..v57 and master of 2026), ``ibdiag_common.c`` (get_max_msg), ``libibmad/dump.c`` and
``libibnetdisc/ibnetdisc.c`` (ibnd_dump_agg_linkspeedext); samples
``tests/unit/fixtures/samples/iblinkinfo.txt`` (MLNX_OFED of 2019, DDR/QDR/HDR pastes, infiniband-diags
44.0 with ibsim), property tests ``test_grammar_ib_diags.py``:

* default layout: a node header, ``Switch: 0x%016x <desc>:`` or ``CA: <desc>:`` (``Router:``,
  ``??:``), then one line per port:
  ``      [0x%016x ]%6d %4d[%2s] ==<link>==>  <remote>`` (the port GUID only for CAs/routers,
  the LID is the switch's LID for switch ports).
  Before 2011 (infiniband-diags 1.4/1.5.0) the header was ``Switch 0x%016x <desc>:`` and the speed
  column 9 wide; both are accepted.
* ``--line`` (``-l``): one line per port, ``0x%016x "%30s" %6d %4d[%2s] ==<link>==>  <remote>``
  with the port GUID, the node description right-aligned in 30 columns, no header lines.
* ``<link>``: ``(%3s %18s %6s/%8s)`` width, speed, PortState, PortPhysicalState for a port that is
  not Down; ``(              %6s/%8s)`` for a Down port (C14-24.2.1: only the states are valid).
  ``-p`` appends `` (HOQ:%d VL_Stall:%d)``.
  width: ``1X 2X 4X 8X 12X`` (``undefined (N)``); speed: ``2.5 Gbps``, ``5.0 Gbps``, ``10.0 Gbps``,
  ``10.0 Gbps (FDR10)``, ``14.0625 Gbps``, ``25.78125 Gbps``, ``53.125 Gbps``, ``106.25 Gbps``,
  ``212.5 Gbps`` (``undefined (N)``); state ``NoChange Down Initialize Armed Active ?(N)``;
  physical state ``NoChange Sleep Polling Disabled PortConfigurationTraining LinkUp
  LinkErrorRecovery PhyTest ?(N)``.
* ``<remote>``: ``[0x%016x ]%6d %4d[%2s] "<desc>" (<width msg> <speed msg>)`` (the remote port GUID
  only with ``--line``), where the messages are ``Could be <width>`` / ``Could be <speed>`` (or
  the FDR10 sentence) or empty; ``           [  ] "" ( )`` for a Down port without a peer;
  ``    "Port not available"`` for an up port whose peer was not discovered.
* With ``--diff`` every line is prefixed with ``< `` or ``> ``; those lines are refused (a
  diff is not the fabric).

* on stderr, libibnetdisc's ``<file>.c:<line>; <message>`` lines, among them
  ``Duplicate Port: Port with guid 0x%016x already exists in ports DB`` (and ``Duplicate Node``)
  when two ports answer with one GUID; the second is then dropped from the fabric.

``parse(text)`` returns ``{"ports": [...], "layout": "default"|"line"|"mixed", "messages": [...],
"duplicates": [{kind, guid}]}``; text with no
iblinkinfo line, or a line that looks like one (``==(``) but is not, raises ValueError naming the line.
Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# Per-lane signalling rate as iblinkinfo prints it -> generation name.
SPEEDS = (
    ("2.5 Gbps", "SDR", 2.5),
    ("5.0 Gbps", "DDR", 5.0),
    ("10.0 Gbps", "QDR", 10.0),
    ("10.0 Gbps (FDR10)", "FDR10", 10.3125),
    ("14.0625 Gbps", "FDR", 14.0625),
    ("25.78125 Gbps", "EDR", 25.78125),
    ("53.125 Gbps", "HDR", 53.125),
    ("106.25 Gbps", "NDR", 106.25),
    ("212.5 Gbps", "XDR", 212.5),
)
SPEED_BY_TEXT = dict((text, (name, gbps)) for text, name, gbps in SPEEDS)
SPEED_BY_NAME = dict((name, (text, gbps)) for text, name, gbps in SPEEDS)
WIDTHS = {"1X": 1, "2X": 2, "4X": 4, "8X": 8, "12X": 12}
PORT_STATES = ("NoChange", "Down", "Initialize", "Armed", "Active")
PHYS_STATES = ("NoChange", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
               "LinkErrorRecovery", "PhyTest")

_HEX16 = r"0x(?:[0-9a-fA-F]{16})"
HEADER = re.compile(r"^(?P<type>Switch|CA|Router|\?\?):? (?:(?P<guid>%s) )?(?P<desc>.*):\s*$" % _HEX16)
# Port line, both layouts. The LID and port columns are %6d %4d; the ext port is %2s. The link
# column holds no node description (widths, speeds, states, "undefined (N)", "?(N)", "(FDR10)"):
# it is read with no '"', '=' or nested parentheses beyond one level, so a node description
# shaped like iblinkinfo's own arrows never moves where the fixed fields are read (issue 40).
_LINK = r"\((?P<link>(?:[^()\"=\n]|\([^()\"=\n]*\))*(?:\) \(HOQ:\d+ VL_Stall:\d+)?)\)"
_FIXED = r"(?P<lid>\d+)\s+(?P<port>\d+)\[(?P<ext>[ 0-9]{0,3})\]\s*==" + _LINK + r"==>\s*(?P<remote>.*?)\s*$"
# Default layout: no description on the port line, so the fixed fields are anchored at its start.
PORT = re.compile(r"^\s*(?:(?P<cguid>%s)\s+)?%s" % (_HEX16, _FIXED))
# --line: '0x<guid> "<%30s description>" ' then the fixed fields; the description is quoted but
# not escaped by iblinkinfo, so each closing quote followed by the fixed fields is a candidate.
LINE_HEAD = re.compile(r"^(?P<lguid>%s) \"" % _HEX16)
LINE_REST = re.compile(r"\"\s+" + _FIXED)
STATE = r"(?P<state>[A-Za-z]+|\?\(\d+\))/\s*(?P<phys>[A-Za-z]+|\?\(\d+\))"
LINK_UP = re.compile(r"^\s*(?P<width>\d+X|undefined \(\d+\))\s+(?P<speed>.+?)\s+%s\s*$" % STATE)
LINK_DOWN = re.compile(r"^\s*%s\s*$" % STATE)
HOQ = re.compile(r"\) \(HOQ:(?P<hoq>\d+) VL_Stall:(?P<stall>\d+)\Z")
# The peer's description runs to the last '" (' of the line: the messages after it (get_max_msg:
# "Could be 4X", the FDR10 sentence) hold no '"'.
REMOTE = re.compile(
    r"^(?:(?P<rguid>%s)\s+)?(?P<lid>\d+)\s+(?P<port>\d+)\[(?P<ext>[ 0-9]{0,3})\] \"(?P<desc>.*)\" \((?P<msg>[^\"]*)\)$"
    % _HEX16)
REMOTE_NONE = re.compile(r"^\[\s*\] \"\" \( \)$")
COULD_WIDTH = re.compile(r"Could be (\d+X)")
COULD_SPEED = re.compile(r"Could be (\d+(?:\.\d+)? Gbps|FDR10)")
# Lines a capture may carry that are not iblinkinfo output.
_ANNOTATION = re.compile(r"^(\$ |\[rc=\d+\]|ibwarn:|iberror:|WARN: |\S*iblinkinfo: )")
# libibnetdisc's IBND_ERROR/IBND_DEBUG lines on stderr: "<file>.c:<line>; <message>".
IBND_MESSAGE = re.compile(r"^\S+\.c:\d+; (?P<msg>.*)$")
DUPLICATE = re.compile(r"Duplicate (?P<kind>Port|Node): (?:Port|Node) with guid (?P<guid>0x[0-9a-fA-F]{1,16}) already exists")


def speed_name(text):
    """iblinkinfo's speed text -> generation name (``HDR``) or None when unknown."""
    found = SPEED_BY_TEXT.get((text or "").strip())
    return found[0] if found else None


def _ext(value):
    value = (value or "").strip()
    return int(value) if value else None


def _guid(value):
    return ("0x%016x" % int(value, 16)) if value else None


def parse_link(text, number, line):
    """``(... )`` link column -> dict; ValueError naming the line otherwise."""
    hoq = HOQ.search(text)
    extra = {}
    if hoq:
        text = text[:hoq.start()]
        extra = {"hoq_life": int(hoq.group("hoq")), "vl_stall_count": int(hoq.group("stall"))}
    up = LINK_UP.match(text)
    down = None if up else LINK_DOWN.match(text)
    match = up or down
    if not match or not _known_state(match.group("state"), PORT_STATES) or not _known_state(match.group("phys"), PHYS_STATES):
        raise ValueError("iblinkinfo line %d '%s': the link column '(%s)' is not '(<width> <speed> <state>/<physical "
                         "state>)' or '(<state>/<physical state>)' as iblinkinfo prints it"
                         % (number, line.strip()[:160], text.strip()))
    link = {"width": None, "speed": None, "speed_name": None, "state": match.group("state"),
            "phys_state": match.group("phys")}
    if up:
        width, speed = up.group("width"), up.group("speed").strip()
        if width not in WIDTHS and not width.startswith("undefined") or (
                speed not in SPEED_BY_TEXT and not speed.startswith("undefined")):
            raise ValueError("iblinkinfo line %d '%s': width '%s' / speed '%s' is not one iblinkinfo prints (widths %s; "
                             "speeds %s)" % (number, line.strip()[:160], width, speed, ", ".join(WIDTHS),
                                             ", ".join(t for t, _n, _g in SPEEDS)))
        link.update(width=width, speed=speed, speed_name=speed_name(speed))
    link.update(extra)
    return link


def _known_state(word, names):
    return word in names or re.match(r"^\?\(\d+\)$", word) is not None


def parse_remote(text, number, line):
    """The part after ``==>`` -> dict or None (no peer); ValueError otherwise."""
    text = text.strip()
    if REMOTE_NONE.match(text) or text == '"Port not available"':
        return None
    match = REMOTE.match(text)
    if not match:
        raise ValueError("iblinkinfo line %d '%s': the peer '%s' is not '[0x<guid> ]<lid> <port>[<ext>] \"<node>\" "
                         "(<messages>)' as iblinkinfo prints it" % (number, line.strip()[:160], text[:120]))
    msg = match.group("msg")
    could_width = COULD_WIDTH.search(msg)
    could_speed = COULD_SPEED.search(msg)
    return {"port_guid": _guid(match.group("rguid")), "lid": int(match.group("lid")), "port": int(match.group("port")),
            "ext_port": _ext(match.group("ext")), "node": match.group("desc"),
            "could_be_width": could_width.group(1) if could_width else None,
            "could_be_speed": could_speed.group(1) if could_speed else None}


def _port_line(line, number, messages):
    """``(match, link, peer, local description, local GUID)`` of one port line. The default
    layout is anchored at the line's start; a ``--line`` line is read at the first closing quote
    of its description after which the fixed fields, the link and the peer all read (a
    description that itself holds a complete port line is noted in ``messages``). ValueError
    naming the line when no reading fits."""
    head = LINE_HEAD.match(line)
    if not head:
        match = PORT.match(line)
        if not match:
            raise ValueError("iblinkinfo line %d '%s': not an iblinkinfo port line ('[0x<guid> \"<node>\"] <lid> "
                             "<port>[<ext>] ==(<link>)==>  <peer>')" % (number, line.strip()[:160]))
        return match, parse_link(match.group("link"), number, line), parse_remote(match.group("remote"), number, line), \
            None, None
    readings, first_error = [], None
    start = head.end()
    at = line.find('"', start)
    while at >= 0:
        match = LINE_REST.match(line, at)
        if match:
            try:
                readings.append((match, parse_link(match.group("link"), number, line),
                                 parse_remote(match.group("remote"), number, line), line[start:at]))
            except ValueError as exc:
                first_error = first_error or exc
        at = line.find('"', at + 1)
    if not readings:
        if first_error is not None:
            raise first_error
        raise ValueError("iblinkinfo line %d '%s': not an iblinkinfo port line ('0x<guid> \"<node>\" <lid> "
                         "<port>[<ext>] ==(<link>)==>  <peer>')" % (number, line.strip()[:160]))
    if len(readings) > 1:
        messages.append("iblinkinfo line %d: the node description %r holds iblinkinfo's own fields; read as the "
                        "shortest description" % (number, readings[0][3].strip()[:80]))
    match, link, peer, ldesc = readings[0]
    return match, link, peer, ldesc, head.group("lguid")


def parse(text):
    """iblinkinfo output (either layout, several runs concatenated) -> ``{"ports", "layout"}``.

    Each port: ``{node, node_type, node_guid, port_guid, lid, port, ext_port, width, speed,
    speed_name, state, phys_state, peer}``; ``node_type`` is ``switch``, ``ca``, ``router`` or None
    (``--line`` does not say); ``node_guid`` is the switch GUID of a switch header, else None;
    ``peer`` is ``{port_guid, lid, port, ext_port, node, could_be_width, could_be_speed}`` or None.
    """
    lines = (text or "").splitlines()
    ports = []
    layouts = set()
    messages = []
    header = None
    stderr = False
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if stripped.startswith(("$ ", "[rc=")):
            stderr = False
        elif stripped == "# stderr:":
            stderr = True
            continue
        ibnd = IBND_MESSAGE.match(stripped)
        if stderr or ibnd or stripped.startswith(("ibwarn:", "iberror:")):
            if stripped:
                messages.append(ibnd.group("msg") if ibnd else stripped)
            continue
        if not stripped or _ANNOTATION.match(stripped):
            continue
        if stripped.startswith(("< ", "> ")) and ("==(" in stripped or HEADER.match(stripped[2:])):
            raise ValueError("iblinkinfo line %d '%s': a --diff line (prefixed '%s'), not the fabric; capture "
                             "iblinkinfo without --diff" % (number, stripped[:160], stripped[:1]))
        # A node header starts with its node type (a port line with spaces or its GUID), so a
        # description holding '==(' or '==>' is still read as the header it is.
        head = HEADER.match(stripped) if not re.match(r"^(0x|\d)", stripped) else None
        if head:
            kind = {"Switch": "switch", "CA": "ca", "Router": "router"}.get(head.group("type"))
            desc, guid = head.group("desc"), head.group("guid")
            if kind != "switch" and guid:   # only a switch header prints a GUID: a CA's description starts so
                desc, guid = "%s %s" % (guid, desc), None
            header = {"node": desc, "node_type": kind, "node_guid": _guid(guid)}
            layouts.add("default")
            continue
        if "==(" not in stripped and ")==>" not in stripped:
            if stripped.startswith("numports = "):
                continue
            raise ValueError("iblinkinfo line %d '%s': not an iblinkinfo line (a node header 'Switch: 0x<guid> <node>:' "
                             "/ 'CA: <node>:' or a port line '... ==(<link>)==> ...')" % (number, stripped[:160]))
        match, link, peer, ldesc, lguid = _port_line(line, number, messages)
        if lguid:
            layouts.add("line")
            node = {"node": ldesc.strip(), "node_type": None, "node_guid": None}
            port_guid = _guid(lguid)
        else:
            if header is None:
                raise ValueError("iblinkinfo line %d '%s': a port line before any node header ('Switch: ...:' / "
                                 "'CA: ...:'); capture the whole output" % (number, stripped[:160]))
            node = dict(header)
            port_guid = _guid(match.group("cguid")) or (header["node_guid"] if header["node_type"] == "switch" else None)
        entry = {"lid": int(match.group("lid")), "port": int(match.group("port")), "ext_port": _ext(match.group("ext")),
                 "port_guid": port_guid, "peer": peer}
        entry.update(node)
        entry.update(link)
        ports.append(entry)
    if not ports:
        first = next(((n, l.strip()) for n, l in enumerate(lines, 1) if l.strip()), None)
        if first is None:
            raise ValueError("iblinkinfo: empty text (expected iblinkinfo or iblinkinfo --line output)")
        raise ValueError("iblinkinfo line %d '%s': no iblinkinfo port line in the text (expected iblinkinfo or "
                         "iblinkinfo --line output)" % (first[0], first[1][:120]))
    _infer_types(ports)
    layout = "mixed" if len(layouts) > 1 else layouts.pop()
    duplicates = [{"kind": m.group("kind").lower(), "guid": _guid(m.group("guid"))}
                  for m in (DUPLICATE.search(msg) for msg in messages) if m]
    return {"ports": ports, "layout": layout, "messages": messages, "duplicates": duplicates}


def _infer_types(ports):
    """``--line`` has no node type: a GUID shared by several port numbers of one node is a switch
    (switch ports all carry the switch's port-0 GUID); the peer's GUID of a switch port is known
    from the other side. What cannot be told stays None."""
    numbers = {}
    for entry in ports:
        if entry["port_guid"]:
            numbers.setdefault((entry["port_guid"], entry["node"]), set()).add(entry["port"])
    for entry in ports:
        if entry["node_type"] is None and entry["port_guid"]:
            if len(numbers.get((entry["port_guid"], entry["node"]), ())) > 1:
                entry["node_type"] = "switch"
                entry["node_guid"] = entry["port_guid"]
    switches = set(e["port_guid"] for e in ports if e["node_type"] == "switch" and e["port_guid"])
    for entry in ports:
        if entry["node_type"] is None and entry["port_guid"] and entry["peer"] and entry["peer"]["port_guid"] in switches:
            # A single-port node hanging off a switch: a CA (or a router; iblinkinfo -l cannot say).
            entry["node_type"] = "ca"


def links(ports):
    """Each physical link once: the switch side first (a CA-CA link: the smaller name first).

    Returns ``[{"a": port entry, "b": the peer's entry or None}]`` for ports that have a peer;
    ``a["peer"]`` always describes the far end. The peer is found by its port GUID (``--line``)
    or, in the default layout, by its node description when that is unique.
    """
    by_guid, by_node, names = {}, {}, {}
    for entry in ports:
        if entry.get("port_guid"):
            by_guid.setdefault((entry["port_guid"], entry["port"]), entry)
        names.setdefault(entry.get("node"), set()).add(entry.get("port_guid"))
        by_node.setdefault((entry.get("node"), entry["port"]), entry)
    emitted = set()
    out = []
    for entry in ports:
        peer = entry.get("peer")
        if not peer or id(entry) in emitted:
            continue
        if peer["port_guid"]:
            other = by_guid.get((peer["port_guid"], peer["port"]))
        else:
            other = by_node.get((peer["node"], peer["port"])) if len(names.get(peer["node"], ())) == 1 else None
        emitted.add(id(entry))
        if other is not None:
            if id(other) in emitted:
                continue
            emitted.add(id(other))
        first, second = entry, other
        if other is not None and other.get("peer") and _order(other) < _order(entry):
            first, second = other, entry
        out.append({"a": first, "b": second})
    return out


def _order(entry):
    return (0 if entry.get("node_type") == "switch" else 1, str(entry.get("node")), entry["port"])
