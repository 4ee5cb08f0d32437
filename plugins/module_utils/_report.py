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
import xml.etree.ElementTree as ET

from ansible_collections.rdma.fabric.plugins.module_utils import _fileio

RECORD_KEYS = ("host", "area", "object", "setting", "expected", "actual")
# health findings (rdma.fabric.rdma_health, the health_findings filter)
FINDING_KEYS = ("host", "check", "subject", "severity", "expected", "actual", "diagnosis", "remedy")
FINDING_TABLE = ("host", "severity", "check", "subject", "expected", "actual", "diagnosis")
# checks that could not run (rdma_health ``skipped_checks``): no healthy verdict
SKIP_KEYS = ("host", "check", "subject", "reason")


def leaf_differences(expected, actual, path=""):
    """``[(setting, expected, actual)]`` for every leaf where the two differ. Dicts are
    walked key by key; lists and scalars are leaves (a PFC list is one setting)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(set(expected) | set(actual), key=str):
            sub = "%s.%s" % (path, key) if path else str(key)
            out.extend(leaf_differences(expected.get(key), actual.get(key), sub))
        return out
    if expected != actual:
        return [(path or "value", expected, actual)]
    return []


def drift_records(host, area, objects):
    """Records from ``[(object, expected, actual)]``, one per differing leaf setting."""
    records = []
    for name, expected, actual in objects:
        for setting, want, have in leaf_differences(expected, actual):
            records.append({"host": host, "area": area, "object": name, "setting": setting,
                            "expected": want, "actual": have})
    return records


def keyed(state):
    """Lists of identity-keyed dicts as dicts, so that one entry that differs is one setting:
    a DSCP map ``[{dscp, priority}]`` becomes ``{dscp: priority}``."""
    if isinstance(state, dict):
        out = {}
        for key, value in state.items():
            if (isinstance(value, list) and value and all(isinstance(v, dict) and set(v) == set(("dscp", "priority"))
                                                          for v in value)):
                value = dict((str(v["dscp"]), v["priority"]) for v in value)
            out[key] = value
        return out
    return state


def module_objects(result, key_fields=("interface", "rdma_device", "port")):
    """``[(object, after, before)]`` of a resource-engine module result: per-object
    ``before``/``after`` lists (or dicts for a single-object module). In check mode
    ``after`` is what the run would make: the expected state. node_files results are split
    per file and per unit."""
    if not isinstance(result, dict) or result.get("skipped"):
        return []
    before, after = result.get("before"), result.get("after")
    if isinstance(before, dict) and isinstance(after, dict) and set(before) == set(("files", "units")):
        out = []
        for kind in ("files", "units"):
            for name in sorted(set(before[kind]) | set(after[kind])):
                want, have = after[kind].get(name), before[kind].get(name)
                if kind == "files" and (want or {}).get("state") != (have or {}).get("state"):
                    # a file missing (or there when it should not be) is one setting, not five
                    want, have = {"state": (want or {}).get("state")}, {"state": (have or {}).get("state")}
                out.append((name, want, have))
        return out
    if isinstance(before, dict) or isinstance(after, dict):
        return [("", keyed(after), keyed(before))]
    out = []
    for old, new in zip(before or [], after or []):
        name = next((str(old[k]) for k in key_fields if old.get(k) is not None), "")
        strip = dict((k, v) for k, v in old.items() if k not in key_fields)
        out.append((name, keyed(dict((k, v) for k, v in (new or {}).items() if k not in key_fields)), keyed(strip)))
    return out


def sort_records(records, keys=RECORD_KEYS):
    return sorted(records, key=lambda r: tuple(str(r.get(k, "")) for k in keys))


def sort_findings(findings):
    return sort_records(findings, FINDING_KEYS)


# --------------------------------------------------------------------------- writers
def cell(value):
    """A value as one table cell / label: strings as they are, the rest as compact JSON."""
    if isinstance(value, str):
        return value
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
    root = ET.Element("testsuites", name=suite, tests=str(len(cases)), failures=str(failures))
    tsuite = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(failures),
                           errors="0", skipped=str(skipped_count))
    for host, area in cases:
        case = ET.SubElement(tsuite, "testcase", classname=host, name=area)
        for record in sort_records(by_case.get((host, area), []), keys):
            failure = ET.SubElement(case, "failure", message=message(record).strip(), type=failure_type)
            failure.text = json.dumps(record, sort_keys=True, default=str)
        if skips.get((host, area)) and not by_case.get((host, area)):
            ET.SubElement(case, "skipped", message="; ".join(_skip_message(s) for s in skips[(host, area)]))
    return ET.tostring(root, encoding="unicode") + "\n"


def _label(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


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


# rdma_health port rates exported per port (name in the module's ``ports[].rates``)
RATE_SERIES = ("rx_pause", "tx_pause", "cnp_sent", "cnp_handled", "rx_discards_phy", "symbol_errors", "link_downed")


def prometheus_health(findings, checked_hosts, unreachable_hosts, timestamp, info, checks, ports=None,
                      prefix="rdma_fabric_health"):
    """Prometheus textfile of health findings: per host, check and severity the number of
    findings (0 for every check of ``checks`` on a host checked, so alerts resolve), per host,
    port and check the findings of that port, per port the sampled rates (per second), then
    the run series. ``ports``: {host: rdma_health ``ports``}. No timestamps."""
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
    out += ["# HELP %s_port_rate Counter increase per second over the sampling interval." % prefix,
            "# TYPE %s_port_rate gauge" % prefix]
    for host in sorted(ports or {}):
        for port in sorted(ports[host] or {}):
            rates = (ports[host][port] or {}).get("rates") or {}
            for name in RATE_SERIES:
                if name in rates:
                    out.append('%s_port_rate{host="%s",port="%s",counter="%s"} %s' % (
                        prefix, _label(host), _label(port), name, repr(float(rates[name]))))
    return "\n".join(out + _run_series(prefix, sorted(checked_hosts), unreachable_hosts, timestamp, info)) + "\n"


def write_atomic(path, text, mode=0o644):
    """Write ``text`` to ``path`` with ``mode`` through ``_fileio.write_atomic`` (temp file in
    the same directory, mode set on the descriptor, fsync, rename: no symlink followed)."""
    _fileio.write_atomic(path, text, mode)
