# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``ibqueryerrors`` (infiniband-diags) for rdma.fabric.ib_fabric.

Layout rules, read from linux-rdma/rdma-core ``infiniband-diags/ibqueryerrors.c`` (print_results,
check_threshold, print_port_config, print_summary; the same since rdma-core v17 (2018) to the
master of 2026; the ``(%5.3f<unit>)`` suffix since the extended counters, infiniband-diags 1.6);
samples ``tests/unit/fixtures/samples/ibqueryerrors.txt`` (a 2021 linux-rdma post, UCX #9590,
infiniband-diags 44.0 with ibsim), property tests ``test_grammar_ib_diags.py``:

* per node with a port over its threshold: ``Errors for 0x%x "<desc>"`` (a switch: its port-0
  GUID, ``PRIx64`` without zero padding) or ``Errors for "<desc>"`` (a CA or router);
* then per port ``   GUID 0x%x port <N>:`` (``port ALL:`` for a switch's aggregate, PortSelect
  0xFF) followed by `` [<Counter> == <value>]`` for each counter over its threshold, or
  `` [<Counter> == <value> (<value %5.3f><unit>)]`` when the port has the extended counters
  (CapabilityMask2 IsAddlPortCountersExtendedSupported); ``--data`` appends the data counters and
  ``--details`` the PortXmitDiscardDetails/PortRcvErrorDetails fields in the same form;
* with ``-r`` (``--report-port``) a ``       Link info: %6d%4d[%2s] ==<link>==>  <remote>`` line
  in iblinkinfo's link and ``--line`` peer layout (see _iblinkinfo);
* a summary: ``## Summary: N nodes checked, N bad nodes found``,
  ``##          N ports checked, N ports have errors beyond threshold``, ``## Thresholds: [..]``
  (``[<name> = <value>]`` items side by side; ``## (null)`` when there is no threshold file),
  optionally ``##          N PMA query failures``, ``## Suppressed: <names>``;
* failures are ``ibwarn: [pid] <function>: <what> query failed on <node>, Lid N port N`` on stderr.

The exit status is the number of ports over the threshold (capped by the shell at 255), so a
non-zero status with a ``## Summary`` is a successful run. ``parse(text)`` raises ValueError on text
with no ibqueryerrors line, and on a line that starts like one but is malformed.
Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _iblinkinfo

# PortCounters / PortCountersExtended error fields ibqueryerrors checks (libibmad fields.c names,
# IB_PC_ERR_SYM_F..IB_PC_VL15_DROPPED_F, then PortXmitWait), and the extended-only QP1Dropped.
ERROR_COUNTERS = (
    "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
    "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
    "PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors", "QP1Dropped", "VL15Dropped", "PortXmitWait",
)

DATA_FOR = re.compile(r"^Data Counters for (?P<guid>0x[0-9a-fA-F]{1,16}) \"(?P<desc>.*)\"\s*$")
ERRORS_FOR = re.compile(r"^Errors for (?:(?P<guid>0x[0-9a-fA-F]{1,16}) )?\"(?P<desc>.*)\"\s*$")
GUID_PORT = re.compile(r"^GUID (?P<guid>0x[0-9a-fA-F]{1,16}) port (?P<port>ALL|\d+):(?P<rest>.*)$")
COUNTER = re.compile(r"\[(?P<name>[A-Za-z][A-Za-z0-9_]*) == (?P<value>\d+)(?: \((?P<human>[^)]*)\))?\]")
LINK_INFO = re.compile(r"^Link info:\s*(?P<lid>\d+)\s*(?P<port>\d+)\[(?P<ext>[ 0-9]{0,3})\]\s*==\((?P<link>.*)\)==>\s*(?P<remote>.*)$")
SUMMARY = re.compile(r"^## Summary: (?P<nodes>\d+) nodes checked, (?P<bad_nodes>\d+) bad nodes found\s*$")
SUMMARY_PORTS = re.compile(r"^##\s+(?P<ports>\d+) ports checked, (?P<bad_ports>\d+) ports have errors beyond threshold\s*$")
SUMMARY_PMA = re.compile(r"^##\s+(?P<failures>\d+) PMA query failures\s*$")
THRESHOLDS = re.compile(r"^## (?:Thresholds:(?P<thr>.*)|\(null\))\s*$")
THRESHOLD_ITEM = re.compile(r"\[(?P<name>\w+) = (?P<value>\d+)\]")
SUPPRESSED = re.compile(r"^## Suppressed:(?P<names>.*)$")
WARNING = re.compile(r"^(?:ibwarn|iberror):|^Failed to reset (?:errors|extended|data|counters)")
_ANNOTATION = re.compile(r"^(\$ |\[rc=\d+\]|# stderr:)")


def parse(text):
    """ibqueryerrors output -> ``{"ports", "summary", "warnings", "data"}``.

    ``ports``: ``[{node, node_guid, port_guid, port (int or "ALL"), counters {name: int}, link}]``
    (``node_guid`` is the switch GUID of an ``Errors for 0x..`` header, else None; ``link`` the
    ``-r`` Link info as an iblinkinfo port, or None). ``summary``: ``{nodes, bad_nodes, ports,
    bad_ports, pma_failures, thresholds {name: int}, suppressed [names]}`` or None when the text
    has no summary (a cut capture). ``warnings``: the tool's ibwarn/iberror lines, verbatim.
    ``data``: the ``--counters`` blocks (``Data Counters for 0x<guid> "<node>"``, print_data_cnts),
    one entry per port in the layout of ``ports`` (PortXmitData, PortRcvData, PortXmitPkts ...;
    ``Link info`` with ``-r``); they are data, never errors. ``--data`` appends the data counters to
    an error port's line (``ports``), ``--details`` the discard/receive-error details; ``-k``/``-K``
    (clear after read) print nothing more on success, ``Failed to reset ...`` on stderr.
    """
    lines = (text or "").splitlines()
    ports, warnings, data = [], [], []
    last = None
    summary = None
    node = None
    seen = False
    for number, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if not stripped or _ANNOTATION.match(stripped):
            continue
        if WARNING.match(stripped):
            warnings.append(stripped)
            seen = True
            continue
        if stripped.startswith("Errors for"):
            match = ERRORS_FOR.match(stripped)
            if not match:
                raise ValueError("ibqueryerrors line %d '%s': not 'Errors for [0x<guid> ]\"<node>\"'" % (number, stripped[:160]))
            node = {"node": match.group("desc"), "node_guid": _guid(match.group("guid"))}
            seen = True
            continue
        if stripped.startswith("Data Counters for"):
            # --counters (print_data_cnts): 'Data Counters for 0x%x "<desc>"' (the node GUID, CAs too),
            # then per port '   GUID 0x%x port <N|ALL>: [<Counter> == <u64> (<%5.3f><unit>)]...'
            match = DATA_FOR.match(stripped)
            if not match:
                raise ValueError("ibqueryerrors line %d '%s': not 'Data Counters for 0x<guid> \"<node>\"'" % (number, stripped[:160]))
            node = {"node": match.group("desc"), "node_guid": _guid(match.group("guid")), "data": True}
            seen = True
            continue
        if stripped.startswith("GUID "):
            match = GUID_PORT.match(stripped)
            if not match:
                raise ValueError("ibqueryerrors line %d '%s': not 'GUID 0x<guid> port <N|ALL>: [<Counter> == <value>]...'"
                                 % (number, stripped[:160]))
            seen = True
            if node is None:
                continue    # a port line quoted without its node header: nothing to attribute it to
            rest = match.group("rest")
            counters = dict((m.group("name"), int(m.group("value"))) for m in COUNTER.finditer(rest))
            leftover = COUNTER.sub("", rest).strip()
            if leftover:
                raise ValueError("ibqueryerrors line %d '%s': '%s' is not a '[<Counter> == <value>]' item"
                                 % (number, stripped[:160], leftover[:60]))
            port = match.group("port")
            entry = {"node": node["node"], "node_guid": node["node_guid"], "port_guid": _guid(match.group("guid")),
                     "port": port if port == "ALL" else int(port), "counters": counters, "link": None}
            (data if node.get("data") else ports).append(entry)
            last = entry
            continue
        if stripped.startswith("Link info:"):
            match = LINK_INFO.match(stripped)
            if not match or last is None:
                raise ValueError("ibqueryerrors line %d '%s': not a 'Link info: <lid> <port>[<ext>] ==(<link>)==>  <peer>' "
                                 "line after a port line" % (number, stripped[:160]))
            link = _iblinkinfo.parse_link(match.group("link"), number, stripped)
            link["peer"] = _iblinkinfo.parse_remote(match.group("remote"), number, stripped)
            link["lid"] = int(match.group("lid"))
            last["link"] = link
            continue
        if stripped.startswith("##"):
            summary = summary or {"nodes": None, "bad_nodes": None, "ports": None, "bad_ports": None,
                                  "pma_failures": 0, "thresholds": {}, "suppressed": []}
            seen = True
            for regex, keys in ((SUMMARY, ("nodes", "bad_nodes")), (SUMMARY_PORTS, ("ports", "bad_ports")),
                                (SUMMARY_PMA, ("failures",))):
                match = regex.match(stripped)
                if match:
                    for key in keys:
                        summary["pma_failures" if key == "failures" else key] = int(match.group(key))
                    break
            else:
                thr = THRESHOLDS.match(stripped)
                sup = SUPPRESSED.match(stripped)
                if thr:
                    summary["thresholds"] = dict((m.group("name"), int(m.group("value")))
                                                 for m in THRESHOLD_ITEM.finditer(thr.group("thr") or ""))
                elif sup:
                    summary["suppressed"] = sup.group("names").split()
                else:
                    raise ValueError("ibqueryerrors line %d '%s': not one of ibqueryerrors' '## Summary' lines"
                                     % (number, stripped[:160]))
            continue
        raise ValueError("ibqueryerrors line %d '%s': not an ibqueryerrors line ('Errors for ...', 'GUID 0x... port N: "
                         "[...]', 'Link info: ...', '## ...')" % (number, stripped[:160]))
    if not seen:
        first = next(((n, l.strip()) for n, l in enumerate(lines, 1) if l.strip()), None)
        if first is None:
            raise ValueError("ibqueryerrors: empty text (expected ibqueryerrors output)")
        raise ValueError("ibqueryerrors line %d '%s': no ibqueryerrors line in the text" % (first[0], first[1][:120]))
    return {"ports": ports, "summary": summary, "warnings": warnings, "data": data}


def _guid(value):
    return ("0x%016x" % int(value, 16)) if value else None
