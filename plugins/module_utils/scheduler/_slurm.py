# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler gate on Slurm: read with ``sinfo --json`` (parsers/_sinfo), change with
``scontrol update``, nothing else (no Python binding; slurmrestd 22.05 cannot drain).
Standard library only: the node's HealthCheckProgram runs it without Ansible.

``plan_node`` is the pure state machine: a node's state (from sinfo) and its verdict
(scheduler/_gate) in, the exact ``scontrol`` argv (or none) and why out:

* fail, maintenance: a node with no reason gets ``State=DRAIN Reason=<prefix> <check> <subject>
  <figure>``; a node whose reason is not ours (an administrator's drain, slurmd's ``Not
  responding`` on a DOWN node) is left as is, because ``scontrol`` would silently replace the
  reason; our own drain keeps its cause, refreshed when the same scope fails again (or the node
  was recovering, or it was a maintenance drain: a failure outranks it);
* pass: only our drain, only one of a scope the verdict judged, only with a verdict newer than
  the drain's last change (the node's HealthCheckProgram sees the same timer verdict several
  times); the count of consecutive healthy verdicts goes in the reason (`` [healthy K/N since
  T]``) until ``recovery_runs`` verdicts and ``recovery_seconds`` have passed, then
  ``State=UNDRAIN`` (``RESUME`` is refused on an idle node: "Invalid node state specified");
  a maintenance drain is lifted by the first pass of scope ``maintenance``, a node waiting for
  admission (``<prefix> onboard ...``) by the first pass of the fabric test;
* unknown: nothing.

States: DRAIN with jobs is ``draining`` (drained once they end), DRAIN on a DOWN node (slurmd
gone) ``down+drain``; a drain survives slurmd and slurmctld restarts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _sinfo
from ansible_collections.rdma.fabric.plugins.module_utils.scheduler import _gate

NAME = "slurm"
READ_ARGV = list(_sinfo.ARGV)
POLL_SECONDS = 2.0


def summary(node):
    """What the result shows of a node (``before``/``after``)."""
    if node is None:
        return None
    return {"state": _sinfo.display_state(node), "reason": node["reason"], "flags": list(node["flags"]),
            "reason_time": node.get("reason_time"), "jobs_running": _sinfo.jobs_running(node)}


def drain_argv(name, text):
    return ["scontrol", "update", "NodeName=" + name, "State=DRAIN", "Reason=" + text]


def undrain_argv(name):
    return ["scontrol", "update", "NodeName=" + name, "State=UNDRAIN"]


def _after(node, flags=None, reason=None, now=None):
    out = dict(node, flags=sorted(flags if flags is not None else node["flags"]))
    if reason is not None:
        out["reason"], out["reason_time"] = reason, int(now)
    return out


def plan_node(node, verdict, settings, now=None):
    """``{"node", "action": none|drain|update|undrain, "argv", "why", "after"}`` of one node
    (``after``: the parsed node as it will be)."""
    now = time.time() if now is None else now
    prefix = settings["reason_prefix"]
    name = verdict["node"]
    state = verdict["state"]
    drained = "DRAIN" in node["flags"]
    text = node["reason"] or ""
    mine = _gate.read_reason(prefix, text)
    foreign = mine is None and (bool(text) or drained)

    def result(action, why, argv=None, after=None):
        return {"node": name, "action": action, "argv": argv, "why": why, "after": after or node}

    if state == "unknown":
        return result("none", "no verdict for the node: left as it is")
    if state in ("fail", "maintenance"):
        # a maintenance drain's check is always "maintenance": what lifts it (and only it)
        want = _gate.reason(prefix, dict(verdict, check="maintenance") if state == "maintenance" else verdict)
        if foreign:
            return result("none", "its reason %r is not ours (no %r prefix): left as is, never overwritten"
                          % (text, prefix))
        if not drained:
            return result("drain", "%s: drained" % state, drain_argv(name, want),
                          _after(node, node["flags"] + ["DRAIN"], want, now))
        if state == "maintenance":
            return result("none", "already drained by us (%s): kept" % mine["cause"])
        scope = verdict["scopes"][0]
        if mine["scope"] in (scope, "maintenance") or mine["count"]:
            if want == text:
                return result("none", "drained by us with this reason already")
            return result("update", "drained by us; the reason is now this failure", drain_argv(name, want),
                          _after(node, reason=want, now=now))
        return result("none", "drained by us for %s (a %s check): kept until that check passes"
                      % (mine["check"], mine["scope"]))
    # pass
    if not drained:
        return result("none", "healthy and not drained")
    if foreign:
        return result("none", "drained by someone else (reason %r, no %r prefix): left drained" % (text, prefix))
    if mine["scope"] not in verdict["scopes"]:
        return result("none", "drained by us for %s, which a %s verdict does not judge: kept"
                      % (mine["check"] or "?", "/".join(verdict["scopes"])))
    when = verdict.get("time")
    if when is not None and node.get("reason_time") and when <= node["reason_time"]:
        return result("none", "this verdict (%s) is no newer than the drain's last change (%s): already counted"
                      % (_gate.utc_stamp(when), _gate.utc_stamp(node["reason_time"])))
    undrained = _after(node, [f for f in node["flags"] if f != "DRAIN"], "", now)
    if mine["scope"] == "maintenance" or mine["check"] == "onboard":
        return result("undrain", "%s done and healthy: resumed" % mine["check"], undrain_argv(name), undrained)
    runs, seconds = settings["recovery_runs"], settings.get("recovery_seconds") or 0
    count = mine["count"] + 1
    since = mine["since"] if mine["count"] and mine["since"] is not None else (when if when is not None else now)
    if count >= runs and now - since >= seconds:
        return result("undrain", "healthy %d/%d verdicts since %s: resumed" % (count, runs, _gate.utc_stamp(since)),
                      undrain_argv(name), undrained)
    marked = _gate.mark(mine["cause"], count, runs, since)
    return result("update", "healthy %d/%d (recovery window: %d verdicts, %g s): still drained"
                  % (count, runs, runs, seconds), drain_argv(name, marked), _after(node, reason=marked, now=now))


class Unreachable(Exception):
    """sinfo or scontrol could not reach slurmctld (or failed): a reported failure."""


def read(run):
    """``{name: node}`` from one ``sinfo --json`` call; Unreachable when it fails."""
    rc, out, err = run(READ_ARGV)
    if rc != 0:
        raise Unreachable("%s failed (rc=%s): %s" % (" ".join(READ_ARGV), rc, (err or out or "").strip()[:500]))
    try:
        return _sinfo.parse(out)["nodes"]
    except ValueError as exc:
        raise Unreachable(str(exc))


def gate(run, verdicts, settings, check_mode=False, now=None, sleep=time.sleep, clock=time.time):
    """Read, plan every node, apply (unless ``check_mode``), wait for the jobs of the nodes drained
    (``settings["wait_timeout"]`` seconds, 0: no wait), read back. ``run(argv)`` -> (rc, out, err).
    Returns ``{"before", "after", "commands", "nodes", "changed", "failed", "msg"}``."""
    now = clock() if now is None else now
    nodes = read(run)
    unknown = [v["node"] for v in verdicts if v["node"] not in nodes]
    if unknown:
        raise _gate.GateError("node name%s %s (scheduler_gate_node_name) not known to Slurm (sinfo lists %d node%s: %s)"
                              % ("s" if len(unknown) > 1 else "", ", ".join(repr(u) for u in unknown), len(nodes),
                                 "" if len(nodes) == 1 else "s", ", ".join(sorted(nodes)[:12])
                                 + (", ..." if len(nodes) > 12 else "")))
    plans = [plan_node(nodes[v["node"]], v, settings, now) for v in verdicts]
    before = dict((v["node"], summary(nodes[v["node"]])) for v in verdicts)
    commands = [p["argv"] for p in plans if p["argv"]]
    out = {"before": before, "commands": commands, "changed": bool(commands), "failed": False, "msg": "",
           "nodes": dict((p["node"], {"action": p["action"], "why": p["why"]}) for p in plans)}
    if check_mode:
        out["after"] = dict((p["node"], summary(p["after"])) for p in plans)
        return out
    done = []
    for argv in commands:
        rc, stdout, err = run(argv)
        if rc != 0:
            out.update(failed=True, commands_done=done,
                       msg="%s failed (rc=%s): %s" % (" ".join(argv[:3]), rc, (err or stdout or "").strip()[:500]))
            break
        done.append(argv)
    wait = settings.get("wait_timeout") or 0
    # a maintenance verdict waits for the jobs of its node, once drained (by us, or by anyone)
    waited = [p["node"] for p in plans if p["node"] in _waiting(verdicts) and "DRAIN" in p["after"]["flags"]]
    after = read(run) if commands or (wait and waited) else nodes
    if wait and waited and not out["failed"]:
        deadline = clock() + wait
        while any(_sinfo.jobs_running(after[n]) for n in waited) and clock() < deadline:
            sleep(POLL_SECONDS)
            after = read(run)
        busy = [n for n in waited if _sinfo.jobs_running(after[n])]
        if busy:
            out.update(failed=True, msg="jobs still run on %s after %g s (scheduler_gate_wait_timeout): drained, "
                       "not ready for maintenance" % (", ".join(busy), wait))
    out["after"] = dict((v["node"], summary(after.get(v["node"]))) for v in verdicts)
    return out


def _waiting(verdicts):
    """The nodes whose jobs a maintenance verdict waits for."""
    return set(v["node"] for v in verdicts if v["state"] == "maintenance")
