# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet report records: one flat dict per drifted setting or health finding.

Drift record: ``{host, area, object, setting, expected, actual}``; health findings add
``check``, ``subject``, ``severity``, ``diagnosis`` and ``remedy``. ``setting`` is the
smallest part that differs, as a dotted path (``np.enabled_priorities``), never a whole
blob. Pure functions: the writers (table, JSON, JUnit XML, Prometheus textfile) take the
records and nothing else.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import xml.etree.ElementTree as ET

from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health

# the record primitives live in common/_records (the areas and the drift check use them without
# importing the reports); the writers here and their users keep these names
from ansible_collections.rdma.fabric.plugins.module_utils.common._records import (  # noqa: F401 pylint: disable=unused-import
    RECORD_KEYS, drift_records, keyed, leaf_differences, module_objects)
# health findings (rdma.fabric.rdma_health, the health_findings filter)
FINDING_KEYS = ("host", "check", "subject", "severity", "expected", "actual", "diagnosis", "remedy")
FINDING_TABLE = ("host", "severity", "check", "subject", "expected", "actual", "diagnosis")
# checks that could not run (rdma_health ``skipped_checks``): no healthy verdict
SKIP_KEYS = ("host", "check", "subject", "reason")


def sort_records(records, keys=RECORD_KEYS):
    return sorted(records, key=lambda r: tuple(str(r.get(k, "")) for k in keys))


def sort_findings(findings):
    return sort_records(findings, FINDING_KEYS)


# --------------------------------------------------------------------------- writers
# Node text (descriptions, tool errors, interface names) is written by whoever is root on the node:
# every writer escapes what its format cannot carry, as visible \xNN / \uNNNN text (issue 40).
# - the console table: C0 and C1 controls (ESC starts a terminal sequence), DEL, the bidi
#   overrides and isolates (text that reads other than it is), line and paragraph separators,
#   and lone surrogates (which no terminal encoding can write);
_TERMINAL = re.compile(u"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# - JUnit: every character XML 1.0 forbids (W3C XML 1.0 section 2.2: Char is #x9 | #xA | #xD |
#   [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]), lone surrogates too: the complement of Char,
#   written out (the negated class compiled in 4.5 ms, at every report; this one in 0.4);
_XML_FORBIDDEN = re.compile(u"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# - Prometheus label values: the exposition format escapes only \\, \" and \n (any other
#   backslash sequence is refused by its parser): the controls and lone surrogates become
#   visible text first, then the three escapes.
_LABEL_CONTROL = re.compile(u"[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _visible(match):
    code = ord(match.group(0))
    if code < 0x100:
        return "\\x%02x" % code
    return "\\u%04x" % code if code <= 0xffff else "\\U%08x" % code


def terminal_text(value):
    """``value`` (text) with every character that would act on a terminal shown as an escape."""
    return _TERMINAL.sub(_visible, value)


def xml_text(value):
    """``value`` as text with every character XML 1.0 cannot hold shown as an escape."""
    return _XML_FORBIDDEN.sub(_visible, value if isinstance(value, str) else str(value))


def label_value(value):
    """A Prometheus label value, escaped as the exposition format wants it."""
    text = _LABEL_CONTROL.sub(_visible, str(value))
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def cell(value):
    """A value as one table cell / label, always one line: strings with their line breaks
    folded into ``; `` (a tool's multi-line error would break the table's rows) and every
    terminal control shown as an escape (``terminal_text``), the rest as compact JSON (which
    escapes them)."""
    if isinstance(value, str):
        if "\n" in value or "\r" in value:
            value = "; ".join(line.strip() for line in re.split(r"[\r\n]+", value) if line.strip())
        return terminal_text(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def summary(records, hosts_checked, unreachable, noun="drifted", unit="settings"):
    """``3 of 120 hosts drifted, 7 settings; 1 unreachable``."""
    bad = [r for r in records if r.get("area") != "host"]
    hosts = len(set(r["host"] for r in bad))
    return "%d of %d hosts %s, %d %s; %d unreachable" % (hosts, hosts_checked, noun, len(bad), unit, unreachable)


def table(records, columns=RECORD_KEYS, width=60, keys=RECORD_KEYS):
    """A fixed-width text table of the records, sorted; cells longer than ``width`` are cut."""
    rows = [[cell(r.get(c, "")) for c in columns] for r in sort_records(records, keys)]
    rows = [[v if len(v) <= width else v[:width - 3] + "..." for v in row] for row in rows]
    widths = [max([len(c)] + [len(row[i]) for row in rows]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(widths[i]) for i, c in enumerate(columns)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(v.ljust(widths[i]) for i, v in enumerate(row)).rstrip())
    return "\n".join(lines)


def to_json(records, meta, keys=RECORD_KEYS, skipped=None):
    """``{"meta", "records"}``, plus ``"skipped"`` (records of SKIP_KEYS) when ``skipped`` is given."""
    data = {"meta": meta, "records": sort_records(records, keys)}
    if skipped is not None:
        data["skipped"] = sort_records(skipped, SKIP_KEYS)
    return json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"


def skipped_table(skipped, width=100):
    """The end-of-run section of checks that could not run (nothing when there is none)."""
    if not skipped:
        return ""
    return "skipped (not judged, no healthy verdict):\n" + table(skipped, SKIP_KEYS, width=width, keys=SKIP_KEYS)


def _drift_message(record):
    return "%s %s: expected %s, actual %s" % (record.get("object", ""), record.get("setting", ""),
                                              cell(record.get("expected")), cell(record.get("actual")))


def finding_message(finding):
    """``[error] mlx5_0 port 1: expected ..., actual ... (diagnosis: ...; remedy: ...)``."""
    return "[%s] %s: expected %s, actual %s (diagnosis: %s; remedy: %s)" % (
        finding.get("severity"), finding.get("subject"), cell(finding.get("expected")), cell(finding.get("actual")),
        finding.get("diagnosis"), finding.get("remedy"))


def _skip_message(skip):
    return ("%s: %s" % (skip["subject"], skip.get("reason")) if skip.get("subject") else skip.get("reason")) or ""


def junit_xml(records, checked, suite="rdma.fabric drift", case_key="area", message=_drift_message,
              failure_type="drift", keys=RECORD_KEYS, skipped=None):
    """JUnit XML: one testcase per (host, ``case_key``) in ``checked``, one failure per record.
    ``skipped`` (records of SKIP_KEYS, key ``check``): the case of a check that could not run is
    ``<skipped/>`` with the reason; when the same case also failed (the check ran on some objects
    only), the skip is a case of its own (``CHECK (skipped)``)."""
    by_case = {}
    for record in records:
        by_case.setdefault((record["host"], record[case_key]), []).append(record)
    skips = {}
    for skip in sort_records(skipped or [], SKIP_KEYS):
        key = (skip["host"], skip["check"])
        if by_case.get(key):
            key = (skip["host"], "%s (skipped)" % skip["check"])
        skips.setdefault(key, []).append(skip)
    cases = sorted(set(checked) | set(by_case) | set(skips))
    failures = sum(1 for case in cases if by_case.get(case))
    skipped_count = sum(1 for case in cases if skips.get(case) and not by_case.get(case))
    # every text node's text through xml_text: one node's control character (or lone surrogate)
    # would make the whole fleet's file invalid XML (or not encodable at all)
    root = ET.Element("testsuites", name=xml_text(suite), tests=str(len(cases)), failures=str(failures))
    tsuite = ET.SubElement(root, "testsuite", name=xml_text(suite), tests=str(len(cases)), failures=str(failures),
                           errors="0", skipped=str(skipped_count))
    for host, area in cases:
        case = ET.SubElement(tsuite, "testcase", classname=xml_text(host), name=xml_text(area))
        for record in sort_records(by_case.get((host, area), []), keys):
            failure = ET.SubElement(case, "failure", message=xml_text(message(record).strip()), type=xml_text(failure_type))
            failure.text = xml_text(json.dumps(record, sort_keys=True, default=str))
        if skips.get((host, area)) and not by_case.get((host, area)):
            ET.SubElement(case, "skipped", message=xml_text("; ".join(_skip_message(s) for s in skips[(host, area)])))
    return ET.tostring(root, encoding="unicode") + "\n"


_label = label_value


def prometheus(records, checked_hosts, unreachable_hosts, timestamp, info, prefix="rdma_fabric_drift"):
    """Prometheus textfile (node_exporter textfile collector): per host and area the number of
    drifted settings (0 for clean ones checked), hosts checked and unreachable, the last run
    time in seconds, and an ``_info`` series with the run's metadata. No timestamps."""
    counts = {}
    for record in records:
        if record.get("area") != "host":
            counts[(record["host"], record["area"])] = counts.get((record["host"], record["area"]), 0) + 1
    for host, area in checked_hosts:
        counts.setdefault((host, area), 0)
    out = ["# HELP %s_settings Settings that differ from the desired state, per host and area." % prefix,
           "# TYPE %s_settings gauge" % prefix]
    for (host, area) in sorted(counts):
        out.append('%s_settings{host="%s",area="%s"} %d' % (prefix, _label(host), _label(area), counts[(host, area)]))
    hosts = sorted(set(h for h, _a in checked_hosts))
    return "\n".join(out + _run_series(prefix, hosts, unreachable_hosts, timestamp, info)) + "\n"


def _run_series(prefix, hosts, unreachable_hosts, timestamp, info):
    """The series every report ends with: hosts checked and unreachable, run time, info."""
    return ["# HELP %s_hosts_checked Hosts whose state was read." % prefix, "# TYPE %s_hosts_checked gauge" % prefix,
            "%s_hosts_checked %d" % (prefix, len(hosts)),
            "# HELP %s_hosts_unreachable Hosts that could not be checked." % prefix,
            "# TYPE %s_hosts_unreachable gauge" % prefix, "%s_hosts_unreachable %d" % (prefix, len(unreachable_hosts)),
            "# HELP %s_last_run_timestamp_seconds When the check ran (Unix time)." % prefix,
            "# TYPE %s_last_run_timestamp_seconds gauge" % prefix,
            "%s_last_run_timestamp_seconds %.3f" % (prefix, timestamp),
            "# HELP %s_info The run's metadata." % prefix, "# TYPE %s_info gauge" % prefix,
            "%s_info{%s} 1" % (prefix, ",".join('%s="%s"' % (k, _label(info[k])) for k in sorted(info)))]


# Checks whose findings name one port (``DEV port N ...``, or the port's netdev for the lossless
# checks): their verdict is exported per port, 0 for every port observed. The other checks'
# verdicts are per host (subject: the host).
PORT_CHECKS = ("link", "rate", "counters", "pfc_storm", "ecn", "discards", "symbol_errors", "flap", "gid_table",
               "gid_ipv4", "sm", "sm_master", "sm_priority", "lossless_agreement", "lossless_unverified",
               "rdma_cm_roce_mode")
_PORT_SUBJECT = re.compile(r"(?P<device>[^\s/]+) port (?P<port>\d+)(?:\s|\Z)")


def _series(name, labels, value):
    """One sample line: ``name{k="v",...} value`` (labels in the given order, escaped)."""
    return "%s{%s} %s" % (name, ",".join('%s="%s"' % (k, _label(v)) for k, v in labels), value)


def _family(name, kind, text):
    return ["# HELP %s %s" % (name, text), "# TYPE %s %s" % (name, kind)]


def _verdict_key(finding, netdevs):
    """(subject, device, port) of a finding: its port when the subject names one (``DEV port N``,
    or a netdev of ``netdevs`` {netdev: "DEV/N"} first), else the host."""
    match = _PORT_SUBJECT.match(finding.get("subject") or "")
    if match:
        device, port = match.group("device"), match.group("port")
    else:
        key = (netdevs or {}).get((finding.get("subject") or "").split(" ")[0])
        if not key:
            return finding["host"], "", ""
        device, port = key.split("/", 1)
    return "%s port %s" % (device, port), device, port


def check_verdicts(findings, checked_hosts, checks, ports=None, severities=None, netdevs=None):
    """{(host, check, subject, device, port, severity): 0 or 1}: every check of ``checks`` on
    every host checked, 0 when healthy: per port observed for PORT_CHECKS (``ports``: {host:
    {"DEV/N": ...}}), else per host, at the check's severity (``severities`` {check: severity},
    else ``_health.CHECKS``' default, else error); 1 for each (check, subject) with a finding (at
    the finding's severity). ``netdevs``: {host: {netdev: "DEV/N"}}, to place the lossless
    checks' findings (subject: the netdev) on their port."""
    rows = {}
    for host in checked_hosts:
        observed = sorted((ports or {}).get(host) or {})
        for check in checks:
            severity = (severities or {}).get(check) or _health.CHECKS.get(check, ("error",))[0]
            if check in PORT_CHECKS and observed:
                for key in observed:
                    device, port = key.split("/", 1)
                    rows[(host, check, "%s port %s" % (device, port), device, port, severity)] = 0
            else:
                rows[(host, check, host, "", "", severity)] = 0
    for finding in findings:
        subject, device, port = _verdict_key(finding, (netdevs or {}).get(finding["host"]))
        rows[(finding["host"], finding["check"], subject, device, port, finding["severity"])] = 1
    return rows


def prometheus_health(findings, checked_hosts, unreachable_hosts, timestamp, info, checks, ports=None,
                      prefix="rdma_fabric_health", severities=None, netdevs=None):
    """Prometheus textfile of health findings: per host, check and severity the number of
    findings (0 for every check of ``checks`` on a host checked, so alerts resolve), per host,
    port and check the findings of that port, each check's verdict (``check_verdicts``: 1
    failing, 0 healthy) per port or host, then the run series. ``ports``: {host: rdma_health
    ``ports``}. Rates are Prometheus' to compute: the node timer exports the raw counters
    (``prometheus_port_counters``). No timestamps."""
    counts = {}
    for host in checked_hosts:
        for check in checks:
            counts[(host, check, "error")] = 0
            counts[(host, check, "warning")] = 0
    per_port = {}
    port_names = dict((h, sorted(p or {})) for h, p in (ports or {}).items())
    for finding in findings:
        key = (finding["host"], finding["check"], finding["severity"])
        counts[key] = counts.get(key, 0) + 1
        for port in port_names.get(finding["host"], []):
            device, number = port.split("/", 1)
            if finding["subject"].startswith("%s port %s" % (device, number)):
                pkey = (finding["host"], port, finding["check"])
                per_port[pkey] = per_port.get(pkey, 0) + 1
    out = ["# HELP %s_findings Fabric health findings, per host, check and severity." % prefix,
           "# TYPE %s_findings gauge" % prefix]
    for host, check, severity in sorted(counts):
        out.append('%s_findings{host="%s",check="%s",severity="%s"} %d' % (
            prefix, _label(host), _label(check), _label(severity), counts[(host, check, severity)]))
    out += ["# HELP %s_port_findings Fabric health findings of one port, per check." % prefix,
            "# TYPE %s_port_findings gauge" % prefix]
    for host in sorted(port_names):
        for port in port_names[host]:
            for check in sorted(set(c for h, p, c in per_port if h == host and p == port)):
                out.append('%s_port_findings{host="%s",port="%s",check="%s"} %d' % (
                    prefix, _label(host), _label(port), _label(check), per_port[(host, port, check)]))
    out += _family("%s_check_failing" % prefix, "gauge",
                   "1 when the check fails on the subject (a port, or the host), 0 when it passed.")
    verdicts = check_verdicts(findings, checked_hosts, checks, ports, severities, netdevs)
    for key in sorted(verdicts):
        out.append(_series("%s_check_failing" % prefix,
                           zip(("host", "check", "subject", "device", "port", "severity"), key), verdicts[key]))
    return "\n".join(out + _run_series(prefix, sorted(checked_hosts), unreachable_hosts, timestamp, info)) + "\n"


# The raw port counters the node timer exports (``prometheus_port_counters``), those the health
# checks judge and node_exporter does not export: ethtool -S (RoCE netdevs) and the RDMA
# hw_counters (node_exporter's infiniband collector reads counters/, not hw_counters/).
# (family, source, counter name or pattern, unit divisor, help)
_PRIO_COUNTER = re.compile(r"(?P<direction>rx|tx)_prio(?P<priority>[0-7])_pause(?P<duration>_duration)?\Z")
_DISCARDS = re.compile(r"(?P<direction>rx|tx)_discards_phy\Z")
_STORM = re.compile(r"tx_pause_storm_(?P<level>warning|error)_events\Z")
PORT_COUNTERS = (
    ("pause_frames_total", "PFC pause frames per priority and direction (ethtool -S rx_prioN_pause, tx_prioN_pause)."),
    ("pause_duration_seconds_total", "Time paused per priority and direction (ethtool -S rx_prioN_pause_duration, "
                                     "tx_prioN_pause_duration, microseconds, as seconds)."),
    ("pause_storm_events_total", "NIC PFC storm prevention events (ethtool -S tx_pause_storm_warning_events, "
                                 "tx_pause_storm_error_events)."),
    ("discards_total", "Packets the port discarded, per direction (ethtool -S rx_discards_phy, tx_discards_phy)."),
    ("cnp_sent_total", "Congestion notification packets sent: notification point (hw_counters/np_cnp_sent)."),
    ("cnp_handled_total", "Congestion notification packets handled: reaction point (hw_counters/rp_cnp_handled)."),
    ("ecn_marked_packets_total", "ECN-marked RoCE packets received (hw_counters/np_ecn_marked_roce_packets)."),
)


def port_counter_samples(host, key, sysfs, ethtool):
    """[(family, labels, value)] of one port ``DEV/N``: ``sysfs`` its counters/ and hw_counters/
    {name: int}, ``ethtool`` its ``ethtool -S`` {name: int} (None on InfiniBand)."""
    device, port = key.split("/", 1)
    base = [("host", host), ("device", device), ("port", port)]
    out = []
    for name, value in sorted((ethtool or {}).items()):
        match = _PRIO_COUNTER.match(name)
        if match:
            labels = base + [("priority", match.group("priority")), ("direction", match.group("direction"))]
            if match.group("duration"):
                out.append(("pause_duration_seconds_total", labels, value / 1e6))
            else:
                out.append(("pause_frames_total", labels, value))
            continue
        match = _DISCARDS.match(name)
        if match:
            out.append(("discards_total", base + [("direction", match.group("direction"))], value))
            continue
        match = _STORM.match(name)
        if match:
            out.append(("pause_storm_events_total", base + [("level", match.group("level"))], value))
    for family, name in (("cnp_sent_total", "np_cnp_sent"), ("cnp_handled_total", "rp_cnp_handled"),
                         ("ecn_marked_packets_total", "np_ecn_marked_roce_packets")):
        if (sysfs or {}).get(name) is not None:
            out.append((family, base, sysfs[name]))
    return out


def prometheus_port_counters(host, ports, prefix="rdma_fabric_port"):
    """Prometheus text of the raw port counters (``PORT_COUNTERS``, ``_total`` counters, labels
    host, device, port as node_exporter's ``node_infiniband_*{device,port}``, and priority /
    direction / level where the counter has them). ``ports``: {"DEV/N": {"sysfs": {...},
    "ethtool": {...}}} of one sample. Families without a sample are left out."""
    by_family = {}
    for key in sorted(ports or {}):
        entry = ports[key] or {}
        for family, labels, value in port_counter_samples(host, key, entry.get("sysfs"), entry.get("ethtool")):
            by_family.setdefault(family, []).append((labels, value))
    out = []
    for family, text in PORT_COUNTERS:
        if family not in by_family:
            continue
        name = "%s_%s" % (prefix, family)
        out += _family(name, "counter", text)
        out += [_series(name, labels, repr(float(value)) if isinstance(value, float) else "%d" % value)
                for labels, value in by_family[family]]
    return "\n".join(out) + "\n" if out else ""


def write_atomic(path, text, mode=0o644):
    """Write ``text`` to ``path`` with ``mode`` through ``_fileio.write_atomic`` (temp file in
    the same directory, mode set on the descriptor, fsync, rename: no symlink followed)."""
    _fileio.write_atomic(path, text, mode)
