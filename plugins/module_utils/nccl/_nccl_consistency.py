# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare NCCL settings across a fleet, and a rendered nccl.conf against the intended settings.

Pure functions, no I/O, standard library only (used by filter plugins on the controller).
Values are compared the way NCCL reads them from /etc/nccl.conf: as text (106 and "106"
are the same setting, true is "1"); a null value means "not set".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.nccl._nccl import NcclError, parse_conf

# Settings resolved per node from its own hardware: their values legitimately differ.
PER_NODE_DEFAULT = ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX")

UNSET = "(unset)"


def as_text(value):
    """A setting value as NCCL sees it in the file; None when not set."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _shape(name, value):
    """What must still agree for a per-node setting: set or not, and how many HCAs."""
    text = as_text(value)
    if text is None:
        return None
    if name in ("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME"):
        items = [item for item in text.lstrip("^").lstrip("=").split(",") if item]
        return "%d item%s" % (len(items), "" if len(items) == 1 else "s")
    return "set"


def _normalise_entries(entries):
    """Accept a list of {host, settings, groups, fabric} or a dict host -> settings."""
    if isinstance(entries, dict):
        entries = [{"host": host, "settings": settings} for host, settings in entries.items()]
    if not isinstance(entries, (list, tuple)):
        raise NcclError("expected a list of {host, settings} entries or a dict host -> settings, got %s"
                        % type(entries).__name__)
    normalised = []
    seen = set()
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict) or not entry.get("host"):
            raise NcclError("entries[%d]: expected a dict with 'host' and 'settings', got %r" % (position, entry))
        host = str(entry["host"])
        if host in seen:
            raise NcclError("entries[%d]: host %s is listed twice" % (position, host))
        seen.add(host)
        settings = entry.get("settings") or {}
        if not isinstance(settings, dict):
            raise NcclError("entries[%d] (%s): settings must be a dict of NAME: value, got %r"
                            % (position, host, settings))
        groups = entry.get("groups") or []
        if isinstance(groups, str):
            groups = [groups]
        normalised.append({"host": host, "settings": settings, "groups": list(groups),
                           "fabric": entry.get("fabric")})
    return normalised


def _partitions(entries, groups):
    """Sets of hosts to compare: one per named group, or one per fabric when no group is named."""
    partitions = []
    unchecked = []
    if groups:
        for group in groups:
            members = [entry for entry in entries if group in entry["groups"]]
            partitions.append(("group %s" % group, members))
        unchecked = [entry["host"] for entry in entries if not set(groups) & set(entry["groups"])]
    else:
        by_fabric = {}
        for entry in entries:
            by_fabric.setdefault(entry["fabric"] or "any", []).append(entry)
        for fabric in sorted(by_fabric):
            partitions.append(("fabric %s" % fabric, by_fabric[fabric]))
    return partitions, sorted(unchecked)


def _compare(members, per_node):
    """Differences inside one set of hosts; the reference is the value most hosts have."""
    differences = []
    names = set()
    for entry in members:
        names.update(entry["settings"])
    for name in sorted(names):
        by_value = {}
        for entry in members:
            value = entry["settings"].get(name)
            key = _shape(name, value) if name in per_node else as_text(value)
            by_value.setdefault(key, []).append(entry["host"])
        if len(by_value) < 2:
            continue
        counts = sorted((len(hosts) for hosts in by_value.values()), reverse=True)
        majority = None
        has_majority = counts[0] > counts[1]
        if has_majority:
            majority = [value for value, hosts in by_value.items() if len(hosts) == counts[0]][0]
        values = []
        outliers = []
        for value in sorted(by_value, key=lambda v: (-len(by_value[v]), UNSET if v is None else v)):
            hosts = sorted(by_value[value])
            values.append({"value": value, "hosts": hosts})
            if not has_majority or value != majority:
                outliers.extend(hosts)
        differences.append({
            "setting": name, "per_node": name in per_node, "has_majority": has_majority,
            "majority": majority, "values": values, "outliers": sorted(outliers),
        })
    return differences


def _show(value):
    return UNSET if value is None else value


def fleet_diff(entries, groups=None, per_node=None):
    """Report hosts whose NCCL settings differ from the rest of their group.

    ``entries``: list of ``{host, settings, groups, fabric}`` (or a dict host -> settings).
    ``groups``: inventory group names; hosts are compared within each named group. Without
    groups, hosts are compared within their ``fabric`` (RoCE hosts with RoCE hosts, ...).
    ``per_node``: settings whose values are per node (default NCCL_IB_HCA and
    NCCL_IB_GID_INDEX); only their presence and item count are compared.
    The reference value of a setting is the one most hosts of the set have; every other host
    is an outlier. When no value has a strict majority, every host of that setting is one.
    """
    per_node = set(PER_NODE_DEFAULT if per_node is None else per_node)
    if groups is not None and not isinstance(groups, (list, tuple)):
        raise NcclError("groups must be a list of inventory group names, got %r" % (groups,))
    normalised = _normalise_entries(entries)
    partitions, unchecked = _partitions(normalised, list(groups or []))
    compared = []
    outliers = {}
    summary = []
    for scope, members in partitions:
        hosts = sorted(entry["host"] for entry in members)
        differences = _compare(members, per_node)
        compared.append({"scope": scope, "hosts": hosts, "differences": differences})
        for difference in differences:
            mine = dict((host, item["value"]) for item in difference["values"] for host in item["hosts"])
            spread = "; ".join("%s on %s" % (_show(item["value"]), ", ".join(item["hosts"]))
                               for item in difference["values"])
            label = difference["setting"] + (" (count)" if difference["per_node"] else "")
            if difference["has_majority"]:
                summary.append("%s: %s differs on %s (most hosts: %s) [%s]" % (
                    scope, label, ", ".join(difference["outliers"]), _show(difference["majority"]), spread))
            else:
                summary.append("%s: %s has no majority value [%s]" % (scope, label, spread))
            for host in difference["outliers"]:
                outliers.setdefault(host, []).append({
                    "scope": scope, "setting": difference["setting"], "value": mine[host],
                    "majority": difference["majority"], "has_majority": difference["has_majority"],
                    "per_node": difference["per_node"],
                })
    report = {
        "consistent": not outliers,
        "compared": compared,
        "outliers": outliers,
        "unchecked": unchecked,
        "summary": summary,
    }
    report["messages"] = dict((host, outlier_messages(report, host)) for host in sorted(outliers))
    return report


def outlier_messages(report, host):
    """One line per differing setting of ``host``, for a task failure or warning."""
    lines = []
    for item in (report or {}).get("outliers", {}).get(host, []):
        label = item["setting"] + (" (count)" if item["per_node"] else "")
        if not item["has_majority"]:
            lines.append("%s: %s = %s, and no value is shared by most hosts" % (item["scope"], label, _show(item["value"])))
        else:
            lines.append("%s: %s = %s, most hosts have %s" % (item["scope"], label, _show(item["value"]),
                                                              _show(item["majority"])))
    return lines


def conf_diff(text, settings):
    """Differences between nccl.conf text (as NCCL reads it) and the intended settings.

    Returns a list of messages, empty when the file holds exactly the intended values (no
    missing, no different, no extra variable).
    """
    if not isinstance(settings, dict):
        raise NcclError("settings must be a dict of NAME: value, got %r" % (type(settings).__name__,))
    found = parse_conf(text)
    intended = dict((name, as_text(value)) for name, value in settings.items() if value is not None)
    problems = []
    for name in sorted(set(found) | set(intended)):
        if name not in found:
            problems.append("%s is missing (intended %s)" % (name, intended[name]))
        elif name not in intended:
            problems.append("%s=%s is in the file but not intended" % (name, found[name]))
        elif found[name] != intended[name]:
            problems.append("%s is %r in the file, intended %r" % (name, found[name], intended[name]))
    return problems
