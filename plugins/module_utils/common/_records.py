# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift records from a resource's result: the one record shape
``{host, area, object, setting, expected, actual}`` with ``setting`` the smallest part that differs
(a dotted path), from the ``before``/``after`` of a resource-engine result. Used by the area objects
(their ``records``), the drift check's judge and the report writers (``reports/_report`` re-exports
them); standard library only, so the node's drift check runs it without Ansible."""

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


def record(host, area, obj, setting, expected, actual):
    """One record of the one shape."""
    return {"host": host, "area": area, "object": obj, "setting": setting, "expected": expected, "actual": actual}


def config_records(host, area, errors):
    """A record per problem of an area's settings (``config``: expected ``valid``)."""
    return [record(host, area, "", "config", "valid", error) for error in errors]
