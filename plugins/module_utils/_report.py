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

RECORD_KEYS = ("host", "area", "object", "setting", "expected", "actual")


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


def module_objects(result, key_fields=("interface",)):
    """``[(object, after, before)]`` of a resource-engine module result: per-object
    ``before``/``after`` lists (or dicts for a single-object module). In check mode
    ``after`` is what the run would make: the expected state."""
    if not isinstance(result, dict) or result.get("skipped"):
        return []
    before, after = result.get("before"), result.get("after")
    if isinstance(before, dict) or isinstance(after, dict):
        return [("", after, before)]
    out = []
    for old, new in zip(before or [], after or []):
        name = next((str(old[k]) for k in key_fields if old.get(k) is not None), "")
        strip = dict((k, v) for k, v in old.items() if k not in key_fields)
        out.append((name, dict((k, v) for k, v in (new or {}).items() if k not in key_fields), strip))
    return out


def sort_records(records):
    return sorted(records, key=lambda r: tuple(str(r.get(k, "")) for k in RECORD_KEYS))
