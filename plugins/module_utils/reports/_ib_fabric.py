# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric checks for rdma.fabric.ib_fabric: links below their width or speed, port error counters
over thresholds, duplicate GUIDs and the cabling against the rail plan, from ``iblinkinfo --line``
and ``ibqueryerrors -r`` (see _iblinkinfo and _ibqueryerrors for the layouts).

Records have the report shape the drift check and health share: ``{host, check, object,
expected, actual, severity, diagnosis}`` (plus ``setting`` for a counter). Checks:
``ib.link_width``, ``ib.link_speed``, ``ib.port_errors``, ``ib.duplicate_guid``, ``ib.cabling``.
A check that could not run gives a record saying why (severity ``warning``), never silence.

``gather`` is the only I/O; everything else is pure and unit-tested on real samples.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibqueryerrors, _iblinkinfo
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError, find_tool, run_tool, umad_address
from ansible_collections.rdma.fabric.plugins.module_utils.common._guid import is_guid, normalize_guid

# infiniband-diags' own suggested thresholds: the commented values of its shipped
# /etc/infiniband-diags/error_thresholds (rdma-core infiniband-diags/etc/error_thresholds).
# PortXmitWait (congestion, not an error; saturates at 2^32-1 on busy fabrics) and QP1Dropped are
# reported only when given in `thresholds`.
DEFAULT_THRESHOLDS = {
    "SymbolErrorCounter": 10,
    "LinkErrorRecoveryCounter": 10,
    "LinkDownedCounter": 10,
    "PortRcvErrors": 10,
    "PortRcvRemotePhysicalErrors": 100,
    "PortRcvSwitchRelayErrors": 100,
    "PortXmitDiscards": 100,
    "PortXmitConstraintErrors": 100,
    "PortRcvConstraintErrors": 100,
    "LocalLinkIntegrityErrors": 10,
    "ExcessiveBufferOverrunErrors": 10,
    "VL15Dropped": 100,
}
SPEED_ORDER = [name for _text, name, _gbps in _iblinkinfo.SPEEDS]
COMMAND_LINE = re.compile(r"^\$ (?P<cmd>\S+)")


def normalize_width(value, field="expected_width"):
    """``4X``/``4x``/``4`` -> ``4X``; ValueError naming the field otherwise."""
    text = str(value).strip().upper()
    if text.isdigit():
        text += "X"
    if text not in _iblinkinfo.WIDTHS:
        raise ValueError("%s=%r: a link width as iblinkinfo prints it (%s)" % (field, value, ", ".join(_iblinkinfo.WIDTHS)))
    return text


def normalize_speed(value, field="expected_speed"):
    """``HDR``, ``53.125 Gbps`` or ``53.125`` -> the generation name (``HDR``); ValueError otherwise."""
    text = str(value).strip()
    if text.upper() in _iblinkinfo.SPEED_BY_NAME:
        return text.upper()
    if _iblinkinfo.speed_name(text):
        return _iblinkinfo.speed_name(text)
    candidate = text if text.lower().endswith("gbps") else text + " Gbps"
    candidate = re.sub(r"\s*gbps$", " Gbps", candidate, flags=re.I)
    name = _iblinkinfo.speed_name(candidate)
    if name:
        return name
    raise ValueError("%s=%r: a speed name (%s) or iblinkinfo's per-lane rate (%s)"
                     % (field, value, ", ".join(SPEED_ORDER), ", ".join(t for t, _n, _g in _iblinkinfo.SPEEDS)))


def merge_thresholds(given):
    """DEFAULT_THRESHOLDS updated with ``given`` (a null value drops a counter); ValueError naming
    the counter and the value."""
    merged = dict(DEFAULT_THRESHOLDS)
    for name, value in (given or {}).items():
        if name not in _ibqueryerrors.ERROR_COUNTERS:
            raise ValueError("thresholds.%s: not an error counter ibqueryerrors reports (%s)"
                             % (name, ", ".join(_ibqueryerrors.ERROR_COUNTERS)))
        if value is None:
            merged.pop(name, None)
            continue
        if isinstance(value, bool) or not isinstance(value, int) and not (isinstance(value, str) and value.strip().isdigit()):
            raise ValueError("thresholds.%s=%r: a whole number >= 0 (the count above which the port is reported)"
                             % (name, value))
        value = int(value)
        if value < 0:
            raise ValueError("thresholds.%s=%r: a whole number >= 0" % (name, value))
        merged[name] = value
    return merged


CABLING_KEYS = ("hca", "port", "leaf", "rail", "leaf_port", "guid", "leaf_guid")


def _guid_text(value):
    """A GUID written as one (``0x...``), normalized; None for a node description."""
    return normalize_guid(value) if isinstance(value, str) and value.lower().startswith("0x") and is_guid(value) else None


def check_cabling(plan):
    """The cabling plan, normalized: ``[{hca, port, leaf, rail, leaf_port, guid, leaf_guid}]``
    (``guid``: the HCA port's GUID, ``leaf_guid``: the leaf switch's; a ``hca``/``leaf`` written
    as a GUID is one too); ValueError naming ``cabling[i].field`` and the value."""
    out = []
    seen = {}
    for index, entry in enumerate(plan or []):
        where = "cabling[%d]" % index
        if not isinstance(entry, dict):
            raise ValueError("%s=%r: a dict {hca, port, leaf, rail, leaf_port, guid, leaf_guid}" % (where, entry))
        unknown = sorted(k for k in entry if k not in CABLING_KEYS)
        if unknown:
            raise ValueError("%s: unknown key(s) %s (%s)" % (where, ", ".join(str(k) for k in unknown), ", ".join(CABLING_KEYS)))
        for key in ("hca", "leaf"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise ValueError("%s.%s=%r: the node description (or GUID) of the %s" % (
                    where, key, entry.get(key), "HCA" if key == "hca" else "leaf switch"))
        norm = {"hca": entry["hca"].strip(), "leaf": entry["leaf"].strip(), "port": 1, "rail": None, "leaf_port": None}
        for key, name in (("guid", "hca"), ("leaf_guid", "leaf")):
            value = entry.get(key)
            if value is None:
                norm[key] = _guid_text(norm[name])
                continue
            if not isinstance(value, str) or not is_guid(value.strip()):
                raise ValueError("%s.%s=%r: the %s GUID (0x followed by 16 hex digits)" % (
                    where, key, value, "HCA port's" if key == "guid" else "leaf switch's"))
            norm[key] = normalize_guid(value.strip())
        for key, low in (("port", 1), ("rail", 0), ("leaf_port", 1)):
            value = entry.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < low or value > 255:
                raise ValueError("%s.%s=%r: a whole number %d-255" % (where, key, value, low))
            norm[key] = value
        for ident in set([(norm["hca"], norm["port"])] + ([(norm["guid"], None)] if norm["guid"] else [])):
            if ident in seen:
                raise ValueError("%s: %s port %d is already planned in cabling[%d]"
                                 % (where, norm["hca"] if ident[1] is not None else norm["guid"], norm["port"], seen[ident]))
            seen[ident] = index
        out.append(norm)
    return out


def _record(host, check, obj, expected, actual, diagnosis, severity="error", **extra):
    record = {"host": host, "check": check, "object": obj, "expected": expected, "actual": actual,
              "severity": severity, "diagnosis": diagnosis}
    record.update(extra)
    return record


def _name(entry):
    return "%s/%d" % (entry.get("node"), entry["port"])


def link_object(link):
    a, b, peer = link["a"], link["b"], link["a"].get("peer") or {}
    if b is not None:
        return "%s peer %s" % (_name(a), _name(b))
    return "%s peer %s/%s" % (_name(a), peer.get("node"), peer.get("port"))


def link_records(ports, host, expected_width=None, expected_speed=None):
    """Links that are up below the expected width or speed, each link once (switch side first)."""
    records = []
    want_lanes = _iblinkinfo.WIDTHS[expected_width] if expected_width else None
    want_rank = SPEED_ORDER.index(expected_speed) if expected_speed else None
    for link in _iblinkinfo.links(ports):
        side = link["a"]
        if side["state"] in ("Down", "NoChange") or side["width"] is None:
            continue
        obj = link_object(link)
        could = (side.get("peer") or {})
        if want_lanes and side["width"] in _iblinkinfo.WIDTHS and _iblinkinfo.WIDTHS[side["width"]] < want_lanes:
            records.append(_record(
                host, "ib.link_width", obj, expected_width, side["width"],
                "the link trained at %s of %s: lanes are down (a damaged cable or optic, a dirty connector, or a port "
                "forced narrower); iblinkinfo: %s %s/%s%s" % (
                    side["width"], expected_width, side["speed"], side["state"], side["phys_state"],
                    ", could be %s" % could["could_be_width"] if could.get("could_be_width") else "")))
        if want_rank is not None and side["speed_name"] in SPEED_ORDER and SPEED_ORDER.index(side["speed_name"]) < want_rank:
            records.append(_record(
                host, "ib.link_speed", obj, "%s (%s)" % (expected_speed, _iblinkinfo.SPEED_BY_NAME[expected_speed][0]),
                "%s (%s)" % (side["speed_name"], side["speed"]),
                "the link trained at %s, below %s: a cable or optic rated lower, an HCA or switch port limited "
                "(LinkSpeedEnabled), or a marginal link that fell back%s" % (
                    side["speed_name"], expected_speed,
                    "; iblinkinfo: could be %s" % could["could_be_speed"] if could.get("could_be_speed") else "")))
    return records


def error_records(qe_ports, thresholds, host):
    """One record per port and counter above its threshold (the switch aggregate ``port ALL`` is skipped)."""
    records = []
    for entry in qe_ports:
        if entry["port"] == "ALL":
            continue
        obj = "%s/%s" % (entry["node"], entry["port"])
        peer = (entry.get("link") or {}).get("peer")
        if peer:
            obj += " peer %s/%s" % (peer["node"], peer["port"])
        for name in sorted(entry["counters"]):
            if name not in thresholds:
                continue
            value = entry["counters"][name]
            if value > thresholds[name]:
                records.append(_record(
                    host, "ib.port_errors", obj, "%s <= %d" % (name, thresholds[name]), value,
                    "%s is %d on %s (threshold %d): %s" % (name, value, obj, thresholds[name], COUNTER_HINTS.get(name, "see ibqueryerrors")),
                    setting=name))
    return records


COUNTER_HINTS = {
    "SymbolErrorCounter": "symbol errors point at the cable, optic or connector of this link",
    "LinkErrorRecoveryCounter": "the link retrained; a marginal cable or optic",
    "LinkDownedCounter": "the link went down; a flapping cable, a rebooted peer or a reseated optic",
    "PortRcvErrors": "malformed packets received; a bad link or a peer sending errors",
    "PortRcvRemotePhysicalErrors": "packets marked bad upstream; look at the links before this one",
    "PortRcvSwitchRelayErrors": "packets the switch could not forward (routing, often harmless on multicast)",
    "PortXmitDiscards": "packets dropped on output: congestion, a down peer or a timeout",
    "PortXmitConstraintErrors": "packets not sent because of partition or raw constraints",
    "PortRcvConstraintErrors": "packets dropped on input because of partition or raw constraints",
    "LocalLinkIntegrityErrors": "the local link exceeded its error threshold; cable or optic",
    "ExcessiveBufferOverrunErrors": "receive buffer overruns; flow-control problem on this link",
    "VL15Dropped": "subnet management packets dropped",
    "PortXmitWait": "time waiting to send: congestion, not a fault",
    "QP1Dropped": "GSI (QP1) packets dropped",
}


def duplicate_guids(ports, reported=None):
    """Port GUIDs seen in two places. libibnetdisc merges nodes with the same GUID, so a duplicate
    shows as one CA port GUID reached from two switch ports (the peer GUIDs of ``--line``), or a GUID
    printed with two node descriptions. Returns ``[{guid, seen_at, nodes}]`` sorted by GUID."""
    where = {}
    nodes = {}
    for entry in ports:
        guid = entry.get("port_guid")
        if guid:
            nodes.setdefault(guid, set()).add(entry["node"])
        peer = entry.get("peer")
        if peer and peer.get("port_guid") and entry.get("node_type") == "switch":
            # A switch port's peer: a CA/router port GUID seen from several switch ports is duplicated
            # (switch-switch links share the peer switch's one GUID over many ports: skip those).
            where.setdefault((peer["port_guid"], peer["port"]), set()).add(_name(entry))
            nodes.setdefault(peer["port_guid"], set()).add(peer["node"])
    switch_guids = set(e["port_guid"] for e in ports if e.get("node_type") == "switch")
    found = {}
    for (guid, port), places in where.items():
        if guid in switch_guids or len(places) < 2:
            continue
        found.setdefault(guid, set()).update(places)
    for guid, descs in nodes.items():
        if guid not in switch_guids and len(descs) > 1:
            found.setdefault(guid, set())
    unplaced = sorted(_name(e) for e in ports if e.get("peer") is None and e["state"] not in ("Down", "NoChange"))
    for dup in reported or []:
        # libibnetdisc kept the first port with the GUID; the other's switch port shows an up link
        # whose peer is "Port not available".
        found.setdefault(dup["guid"], set()).update(
            "%s (%s)" % (_name(e), e["node"]) for e in ports if e.get("port_guid") == dup["guid"])
        found[dup["guid"]].update("%s (peer not available)" % name for name in unplaced)
    return [{"guid": guid, "seen_at": sorted(found[guid]), "nodes": sorted(nodes.get(guid, ()))} for guid in sorted(found)]


def duplicate_records(duplicates, host):
    records = []
    for dup in duplicates:
        records.append(_record(
            host, "ib.duplicate_guid", dup["guid"], "one port",
            "seen at %s" % (", ".join(dup["seen_at"]) or "one place with %d node descriptions" % len(dup["nodes"])),
            "port GUID %s belongs to %s: two ports share it (a cloned VF/firmware GUID or a replaced card "
            "flashed with the old GUID); the SM routes both as one port" % (dup["guid"], " and ".join(dup["nodes"]))))
    return records


def _find_hca(ports, hca, guid=None):
    """The CA ports the plan entry names: by its port GUID when the plan gives one (never by a
    description then: any root on the fabric can set a node description), else by description."""
    if guid:
        return [e for e in ports if e.get("node_type") != "switch" and e.get("port_guid") == guid]
    return [e for e in ports if e.get("node_type") != "switch" and e["node"] == hca]


def _guids(entries):
    return sorted(set(e.get("port_guid") or "(no GUID: %s)" % _name(e) for e in entries))


def cabling(ports, plan, host):
    """Each planned HCA port against the switch it is on. Returns (status list, records)."""
    status, records = [], []
    switch_guids = dict((e["port_guid"], e["node"]) for e in ports if e.get("node_type") == "switch" and e["port_guid"])
    switch_descs = {}
    for guid, desc in switch_guids.items():
        switch_descs.setdefault(desc, set()).add(guid)
    for entry in plan:
        entry = dict({"guid": None, "leaf_guid": None}, **entry)
        rail = "rail %d" % entry["rail"] if entry["rail"] is not None else None
        obj = "%s%s port %d" % ("rail%d/" % entry["rail"] if entry["rail"] is not None else "", entry["hca"], entry["port"])
        expected = entry["leaf"] + (" port %d" % entry["leaf_port"] if entry["leaf_port"] else "")
        row = {"hca": entry["hca"], "port": entry["port"], "rail": entry["rail"], "expected_leaf": entry["leaf"],
               "expected_leaf_port": entry["leaf_port"], "switch": None, "switch_port": None, "state": None, "ok": False}
        matches = _find_hca(ports, entry["hca"], entry["guid"])
        nodes = sorted(set(e["node"] for e in matches))
        found = [e for e in matches if entry["guid"] or e["port"] == entry["port"]]
        what = "%s port %d%s" % (entry["hca"], entry["port"], " (%s)" % rail if rail else "")
        leaf_twins = sorted(switch_descs.get(entry["leaf"], ())) if not entry["leaf_guid"] else []
        if len(nodes) > 1:
            records.append(_record(host, "ib.cabling", obj, expected, "ambiguous: %s" % ", ".join(nodes),
                                   "%s matches %d nodes; name the HCA by its port GUID" % (entry["hca"], len(nodes))))
        elif not entry["guid"] and len(_guids(found)) > 1:
            # one description on two GUIDs is a finding of its own, never resolved by picking one:
            # a second HCA named like the planned one would hide the real one's miscabling
            records.append(_record(
                host, "ib.cabling", obj, expected, "ambiguous: %s port %d is on %d GUIDs (%s)" % (
                    entry["hca"], entry["port"], len(_guids(found)), ", ".join(_guids(found))),
                "the node description %r is set on %d ports with different GUIDs (any root on the fabric can set a "
                "node description): one of them is not the planned HCA; name it by its port GUID (cabling[].guid)"
                % (entry["hca"], len(_guids(found))),
                seen_at=["%s peer %s/%s" % (_name(e), (e.get("peer") or {}).get("node"), (e.get("peer") or {}).get("port"))
                         for e in found]))
        elif len(leaf_twins) > 1:
            records.append(_record(
                host, "ib.cabling", obj, expected, "ambiguous: leaf %s is on %d GUIDs (%s)" % (
                    entry["leaf"], len(leaf_twins), ", ".join(leaf_twins)),
                "the leaf switch's description %r is set on %d switches: one of them is not the planned leaf; name it "
                "by its GUID (cabling[].leaf_guid)" % (entry["leaf"], len(leaf_twins))))
        elif entry["guid"] and found and found[0]["port"] != entry["port"]:
            records.append(_record(host, "ib.cabling", obj, expected, "GUID %s is port %d" % (entry["guid"], found[0]["port"]),
                                   "%s: the planned GUID %s is port %d of %s, not port %d" % (
                                       what, entry["guid"], found[0]["port"], found[0]["node"], entry["port"])))
        elif not found:
            actual = "not in the fabric" if not matches else "no port %d" % entry["port"]
            records.append(_record(host, "ib.cabling", obj, expected, actual,
                                   "%s: iblinkinfo shows no such CA port; the HCA is down, uncabled or its node "
                                   "description differs (check ibstat / the node_desc)" % what))
        else:
            port = found[0]
            peer = port.get("peer")
            row["state"] = "%s/%s" % (port["state"], port["phys_state"])
            if not peer:
                records.append(_record(host, "ib.cabling", obj, expected, "port down (%s)" % row["state"],
                                       "%s has no link; it should be on %s" % (what, expected)))
            else:
                switch = peer["node"]
                row.update(switch=switch, switch_port=peer["port"])
                if entry["leaf_guid"]:
                    # by GUID: the peer's own GUID (--line), else the one switch with its description
                    on_leaf = (peer["port_guid"] == entry["leaf_guid"] if peer.get("port_guid") else
                               switch_descs.get(switch) == set([entry["leaf_guid"]]))
                else:
                    on_leaf = switch == entry["leaf"]
                actual = "%s port %d" % (switch, peer["port"])
                if not on_leaf:
                    records.append(_record(
                        host, "ib.cabling", obj, expected, actual,
                        "%s is cabled to %s port %d; it should be on %s%s" % (
                            what, switch, peer["port"], entry["leaf"],
                            " (%s's leaf)" % rail if rail else ""),
                        switch=switch, switch_port=peer["port"], expected_leaf=entry["leaf"]))
                elif entry["leaf_port"] and peer["port"] != entry["leaf_port"]:
                    records.append(_record(
                        host, "ib.cabling", obj, expected, actual,
                        "%s is on the right leaf %s but port %d, not port %d" % (what, switch, peer["port"], entry["leaf_port"]),
                        severity="warning", switch=switch, switch_port=peer["port"], expected_leaf=entry["leaf"]))
                else:
                    row["ok"] = True
        status.append(row)
    return status, records


def split_capture(text):
    """Captured text -> (iblinkinfo text, ibqueryerrors text). ``$ command`` lines (what gather
    writes) route each section; without them each line goes where its shape says."""
    link_lines, error_lines = [], []
    lines = (text or "").splitlines()
    if any(COMMAND_LINE.match(l) for l in lines):
        target = None
        for line in lines:
            match = COMMAND_LINE.match(line)
            if match:
                tool = os.path.basename(match.group("cmd"))
                target = link_lines if tool == "iblinkinfo" else error_lines if tool == "ibqueryerrors" else None
                continue
            if target is not None:
                target.append(line)
    else:
        for line in lines:
            stripped = line.strip()
            if stripped.startswith(("Errors for", "GUID 0x", "##", "Link info:", "Data Counters for")):
                error_lines.append(line)
            else:
                link_lines.append(line)
    return "\n".join(link_lines), "\n".join(error_lines)


def evaluate(link_text, error_text, host, expected_width=None, expected_speed=None, thresholds=None, plan=None,
             errors_unavailable=None):
    """Parse the texts and run every check. ``error_text`` None: the counters were not read
    (``errors_unavailable`` says why)."""
    parsed = _iblinkinfo.parse(link_text)
    ports = parsed["ports"]
    records = link_records(ports, host, expected_width, expected_speed)
    errors, warnings, summary = [], [], None
    if error_text is not None and error_text.strip():
        qe = _ibqueryerrors.parse(error_text)
        errors, warnings, summary = qe["ports"], qe["warnings"], qe["summary"]
        records += error_records(errors, thresholds if thresholds is not None else DEFAULT_THRESHOLDS, host)
        if summary is None or summary.get("pma_failures"):
            why = "%s PMA queries failed" % summary["pma_failures"] if summary else "no '## Summary' (the run was cut short)"
            records.append(_record(host, "ib.port_errors", "fabric", "every port's counters read", why,
                                   "some port counters were not read: %s" % ("; ".join(warnings[:5]) or why), severity="warning"))
    elif errors_unavailable:
        records.append(_record(host, "ib.port_errors", "fabric", "port counters read", "not read",
                               "the error counters could not be read: %s" % errors_unavailable, severity="warning"))
    dups = duplicate_guids(ports, parsed["duplicates"])
    records += duplicate_records(dups, host)
    status = []
    if plan:
        status, cab = cabling(ports, plan, host)
        records += cab
    return {"links": ports, "layout": parsed["layout"], "errors": errors, "error_summary": summary,
            "duplicate_guids": dups, "cabling": status, "records": records, "tool_warnings": warnings}


def _capture(argv, rc, out, err):
    text = "$ %s\n%s" % (" ".join([os.path.basename(argv[0])] + argv[1:]), out or "")
    if not text.endswith("\n"):
        text += "\n"
    text += "[rc=%s]\n" % rc
    if err and err.strip():
        text += "# stderr:\n" + err.strip() + "\n"
    return text


def gather(module, ca=None, port=None, timeout=None, port_errors=True):
    """Run iblinkinfo --line (and ibqueryerrors -r). Returns (link_text, error_text or None,
    errors_unavailable reason or None, running_config). Raises ToolError when iblinkinfo fails."""
    address = umad_address(ca, port, timeout)
    iblinkinfo = find_tool(module, "iblinkinfo")
    argv = [iblinkinfo, "--line"] + address
    rc, out, err = run_tool(module, argv, check_rc=False)
    captured = [_capture(argv, rc, out, err)]
    link_text = captured[0]
    if rc != 0 or "==(" not in (out or ""):
        raise ToolError("iblinkinfo failed (rc=%s): %s" % (rc, (err or "").strip() or (out or "").strip() or "no output"),
                        argv=argv, rc=rc, stdout=out, stderr=err)
    error_text, unavailable = None, None
    if port_errors:
        tool = find_tool(module, "ibqueryerrors", required=False)
        if not tool:
            unavailable = "ibqueryerrors was not found (infiniband-diags)"
        else:
            # Thresholds from an empty file are all 0: every non-zero counter is printed and the
            # module applies its own thresholds (a site error_thresholds file would hide some).
            argv = [tool, "-r", "--threshold-file", os.devnull] + address
            rc, out2, err2 = run_tool(module, argv, check_rc=False)
            captured.append(_capture(argv, rc, out2, err2))
            if "## Summary" in (out2 or ""):
                error_text = out2 + "\n" + "\n".join(l for l in (err2 or "").splitlines() if l.startswith(("ibwarn", "iberror")))
            else:
                unavailable = "ibqueryerrors (rc=%s): %s%s" % (
                    rc, (err2 or "").strip()[:300] or (out2 or "").strip()[:300] or "no output",
                    "; it reads the counters by LID: a subnet manager must have swept the fabric" if "SM" in (err2 or "") or
                    "lid" in (err2 or "").lower() else "")
    return link_text, error_text, unavailable, "".join(captured)
