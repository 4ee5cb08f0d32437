# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``sinfo --json`` parser: each node's state, state flags and reason.

Follows Slurm's JSON dumpers of sinfo (``src/sinfo/sinfo.c`` hands its data to the openapi /
data_parser plugin of the release), in the two shapes Slurm has printed, samples
``tests/unit/fixtures/sinfo/*.yml`` (each cites its source):

* Slurm 21.08 and 22.05 (``openapi/v0.0.37``, ``v0.0.38``; Debian 12 ships 22.05): a dump of the
  node table, ``{"meta", "errors", "nodes": [...]}``, one object per node: ``name``, ``state``
  (the base state as one lower-case word: ``idle``, ``allocated``, ``mixed``, ``down``, ``error``,
  ``future``, ``unknown``), ``state_flags`` (upper case: ``DRAIN``, ``NOT_RESPONDING``,
  ``COMPLETING``, ...), ``reason`` (``""`` when none), ``reason_changed_at`` (Unix time, 0 when
  none) and ``reason_set_by_user`` (a user name or null). ``partitions`` lists the node's
  partitions.
* Slurm 23.02 and later (``data_parser/v0.0.39`` to ``v0.0.4x``): sinfo's own records,
  ``{"meta", "sinfo": [...], "warnings", "errors"}``, one record per group of nodes sinfo would
  print on one line (with ``-N`` one per node and partition, so a node of two partitions is in two
  records): ``node.state`` a list, the base state first then the flags, all upper case
  (``["IDLE", "DRAIN"]``); ``nodes.nodes`` the node names; ``reason`` an object
  ``{"description", "time", "user"}`` whose ``time`` is a number (v0.0.39) or, from v0.0.40
  (23.11), ``{"set", "infinite", "number"}``; ``partition.name`` the partition.

Derived states that sinfo prints in text (``drained``, ``draining``, ``drng``) never appear
in its JSON: they are the base state with the DRAIN flag (``display_state`` derives them as
sinfo's ``node_state_string`` does). A non-empty ``errors`` list (sinfo prints it with its own
JSON when slurmctld cannot be reached, for instance) is a ValueError with its texts; text that is
no JSON object holding ``nodes`` or ``sinfo`` (sinfo's table, an error line) is refused, never
read as "no nodes".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

ARGV = ("sinfo", "--json", "-N")
# node base states (slurm.h enum node_states, node_state_base_string)
BASE_STATES = ("UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE")
# a hostlist with one bracket group (nodes.nodes of some releases: "gpu[01-04,07]")
_HOSTLIST = re.compile(r"(?P<head>[^\[\]]*)\[(?P<ranges>[0-9,\-]+)\](?P<tail>[^\[\]]*)\Z")


def _expand(name):
    """A node name, or a one-group hostlist expression expanded (zero padding kept)."""
    match = _HOSTLIST.match(name)
    if not match:
        return [name]
    out = []
    for part in match.group("ranges").split(","):
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise ValueError("not a hostlist range: %r in %r" % (part, name))
        width = len(low)
        for number in range(int(low), int(high or low) + 1):
            out.append("%s%0*d%s" % (match.group("head"), width, number, match.group("tail")))
    return out


def _time(value):
    """A reason time: a number (0: none) or ``{"set", "infinite", "number"}`` (v0.0.40+)."""
    if isinstance(value, dict):
        if not value.get("set") or value.get("infinite"):
            return None
        value = value.get("number")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return int(value)


def _text(value):
    return value if isinstance(value, str) else ""


def _record(name, base, flags, reason, reason_time, user, partitions):
    return {"name": name, "state": base, "flags": sorted(set(flags)), "reason": reason,
            "reason_time": reason_time, "reason_user": user or None, "partitions": sorted(set(partitions))}


def _from_nodes(entries, source):
    """Slurm 21.08/22.05: ``nodes`` of the node table dump."""
    out = {}
    for index, node in enumerate(entries):
        if not isinstance(node, dict) or not isinstance(node.get("name"), str) or not node.get("name"):
            raise ValueError("%s: nodes[%d] is no node object with a name" % (source, index))
        state = node.get("state")
        if isinstance(state, list):     # a 23.x node dump (scontrol/slurmrestd shape) read the same way
            words = [str(s).upper() for s in state]
        elif isinstance(state, str) and state:
            words = [state.upper()]
        else:
            raise ValueError("%s: node %s has no state: %r" % (source, node["name"], state))
        base = [w for w in words if w in BASE_STATES]
        flags = [w for w in words if w not in BASE_STATES] + [str(f).upper() for f in node.get("state_flags") or []]
        reason = node.get("reason")
        if isinstance(reason, dict):
            text, when, user = _text(reason.get("description")), _time(reason.get("time")), reason.get("user")
        else:
            text, when, user = _text(reason), _time(node.get("reason_changed_at")), node.get("reason_set_by_user")
        out[node["name"]] = _record(node["name"], (base[0] if base else "UNKNOWN").lower(), flags, text, when,
                                    user if isinstance(user, str) else None, node.get("partitions") or [])
    return out


def _from_sinfo(entries, source):
    """Slurm 23.02 and later: sinfo's records (a node may be in several, one per partition)."""
    out = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError("%s: sinfo[%d] is no object" % (source, index))
        state = (entry.get("node") or {}).get("state")
        if isinstance(state, str):
            state = [state]
        if not isinstance(state, list) or not state:
            raise ValueError("%s: sinfo[%d] has no node.state: %r" % (source, index, state))
        words = [str(s).upper() for s in state]
        base = [w for w in words if w in BASE_STATES]
        flags = [w for w in words if w not in BASE_STATES]
        names = (entry.get("nodes") or {}).get("nodes")
        if not isinstance(names, list):
            raise ValueError("%s: sinfo[%d] has no nodes.nodes list" % (source, index))
        reason = entry.get("reason")
        if isinstance(reason, dict):
            text, when, user = _text(reason.get("description")), _time(reason.get("time")), reason.get("user")
        else:
            text, when, user = _text(reason), None, None
        partition = (entry.get("partition") or {}).get("name")
        for listed in names:
            for name in _expand(str(listed)):
                record = out.get(name)
                if record is None:
                    out[name] = _record(name, (base[0] if base else "UNKNOWN").lower(), flags, text, when,
                                        user if isinstance(user, str) else None, [partition] if partition else [])
                else:
                    record["partitions"] = sorted(set(record["partitions"] + ([partition] if partition else [])))
    return out


def parse(text, source="sinfo --json output"):
    """``{"version": "22.05.8" or None, "shape": "nodes"|"sinfo", "nodes": {name: {name, state,
    flags, reason, reason_time, reason_user, partitions}}}``: ``state`` the base state in lower
    case, ``flags`` the state flags in upper case, ``reason`` "" when none, ``reason_time``
    Unix seconds or None. ValueError on text that is not sinfo's JSON or that carries errors."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("%s: empty (no sinfo JSON)" % source)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError("%s: not JSON (%s); sinfo without --json, or an error line? %r" % (source, exc, text[:160]))
    if not isinstance(data, dict) or not isinstance(data.get("nodes", data.get("sinfo")), list):
        raise ValueError("%s: not sinfo --json (no 'nodes' or 'sinfo' list): %r" % (source, text[:160]))
    errors = data.get("errors") or []
    if errors:
        words = []
        for error in errors if isinstance(errors, list) else [errors]:
            if isinstance(error, dict):
                words.append(" ".join(str(error.get(k)) for k in ("error", "description", "source") if error.get(k)))
            else:
                words.append(str(error))
        raise ValueError("%s: sinfo reported errors: %s" % (source, "; ".join(words)))
    meta = data.get("meta") or {}
    slurm = meta.get("Slurm") or meta.get("slurm") or {}
    version = slurm.get("release") if isinstance(slurm, dict) else None
    if not version and isinstance(slurm, dict) and isinstance(slurm.get("version"), dict):
        parts = slurm["version"]
        version = "%s.%s.%s" % (parts.get("major"), str(parts.get("minor")).zfill(2), parts.get("micro"))
    if "sinfo" in data and isinstance(data["sinfo"], list):
        return {"version": version, "shape": "sinfo", "nodes": _from_sinfo(data["sinfo"], source)}
    return {"version": version, "shape": "nodes", "nodes": _from_nodes(data["nodes"], source)}


def jobs_running(node):
    """True while jobs still run on the node (sinfo's ``draining``/``mix``/``alloc``, or ``COMPLETING``)."""
    return node["state"] in ("allocated", "mixed") or "COMPLETING" in node["flags"]


def display_state(node):
    """The state in sinfo's words with scontrol's DOWN+DRAIN: ``drained``, ``draining``,
    ``down+drain`` (sinfo's text prints it ``drained*``: a drained node whose slurmd is gone), else
    the base state; ``*`` when slurmd does not answer (NOT_RESPONDING), as sinfo marks it."""
    flags = node["flags"]
    if "DRAIN" in flags:
        if node["state"] == "down":
            text = "down+drain"
        elif jobs_running(node):
            text = "draining"
        else:
            text = "drained"
    else:
        text = node["state"]
    if "NOT_RESPONDING" in flags:
        text += "*"
    return text
