# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm's HealthCheckProgram on a node, without Ansible: the node timer's last verdict (the
Prometheus textfile the health role's timer writes, ``health_timer_textfile``) in, this node
drained or resumed by the same state machine as the ``scheduler_gate`` module (scheduler/_slurm),
with the same reason and recovery window.

slurmd runs it as root every ``HealthCheckInterval`` with ``SLURMD_NODENAME`` set. It reads one
file, calls ``sinfo --json -N`` once and ``scontrol update`` at most once, each under a timeout
(``timeout`` seconds), and writes nothing (the recovery count lives in the drain's reason, the
timer's verdict time keeps a verdict from being counted at each run).

The verdict: the timer's run time (``rdma_fabric_health_timer_last_success_timestamp_seconds``)
older than ``stale_seconds`` (default: twice the timer's period plus a minute), or no textfile:
the timer is dead and the node is not judged healthy - nothing is lifted; with ``dead_timer:
drain`` the node is drained (``health.timer``). Else every ``rdma_fabric_health_check_failing``
series at 1 of severity error fails the node (the first names the reason), and none is a pass of
scope ``health`` (it lifts only drains of the health checks, never a fabric test's).

Config (JSON, ``/etc/rdma-fabric/scheduler-gate.json``): {"scheduler", "reason_prefix",
"recovery_runs", "recovery_seconds", "textfile", "stale_seconds", "dead_timer", "timeout"}.
Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import socket
import subprocess
import sys
import time

from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
from ansible_collections.rdma.fabric.plugins.module_utils.scheduler import _gate, _slurm
from ansible_collections.rdma.fabric.plugins.module_utils.scheduler._registry import SCHEDULERS

CONFIG = "/etc/rdma-fabric/scheduler-gate.json"
TEXTFILE_MAX = 16 * 1024 * 1024
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_SAMPLE = re.compile(r'(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)(?:\s+\S+)?\Z')
_LABEL = re.compile(r'\s*(?P<key>[a-zA-Z_][a-zA-Z0-9_]*)="(?P<value>(?:[^"\\]|\\.)*)"\s*(?:,|\Z)')
LAST = "rdma_fabric_health_timer_last_success_timestamp_seconds"
PERIOD = "rdma_fabric_health_timer_period_seconds"
FAILING = "rdma_fabric_health_check_failing"


def _unescape(text):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def samples(text):
    """[(name, {label: value}, float)] of a Prometheus text exposition (comments skipped);
    ValueError naming a line that is no sample."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if not match:
            raise ValueError("line %d is no Prometheus sample: %r" % (number, line[:120]))
        labels, rest = {}, match.group("labels") or ""
        while rest.strip():
            found = _LABEL.match(rest)
            if not found:
                raise ValueError("line %d: bad labels %r" % (number, rest[:120]))
            labels[found.group("key")] = _unescape(found.group("value"))
            rest = rest[found.end():]
        out.append((match.group("name"), labels, float(match.group("value"))))
    return out


def verdict(node, text, config, now):
    """The node timer's verdict from its textfile ``text`` (None: no file)."""
    dead = config.get("dead_timer", "hold")

    def no_verdict(figure):
        if dead == "drain":
            return {"node": node, "state": "fail", "scopes": ["health"], "check": "health.timer", "subject": node,
                    "figure": figure, "time": now}
        return {"node": node, "state": "unknown", "scopes": ["health"], "check": None, "subject": None,
                "figure": figure, "time": now}

    if text is None:
        return no_verdict("no verdict: %s missing (node timer not run?)" % config.get("textfile"))
    try:
        rows = samples(text)
    except ValueError as exc:
        return no_verdict("no verdict: %s unreadable (%s)" % (config.get("textfile"), exc))
    last = [value for name, labels, value in rows if name == LAST]
    period = [value for name, labels, value in rows if name == PERIOD]
    if not last:
        return no_verdict("no verdict: the node timer never ran to the end")
    when = max(last)
    stale = config.get("stale_seconds") or (2 * (period[0] if period else 300) + 60)
    if now - when > stale:
        return no_verdict("no verdict since %s (> %g s: node timer dead)" % (_gate.utc_stamp(when), stale))
    failing = sorted((labels.get("check", "?"), labels.get("subject", "?")) for n, labels, v in rows
                     if n == FAILING and v >= 1 and labels.get("severity", "error") == "error")
    if failing:
        check, subject = failing[0]
        figure = "failing (node timer %s)%s" % (_gate.utc_stamp(when),
                                                " +%d more" % (len(failing) - 1) if len(failing) > 1 else "")
        return {"node": node, "state": "fail", "scopes": ["health"], "check": "health." + check,
                "subject": subject, "figure": figure, "time": when}
    return {"node": node, "state": "pass", "scopes": ["health"], "check": None, "subject": None, "figure": None,
            "time": when}


def runner(timeout):
    def run(argv):
        env = dict(os.environ, LANG="C", LC_ALL="C", PATH=os.environ.get("PATH") or PATH)
        try:
            proc = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, env=env, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return 124, "", "%s: no answer within %g s" % (argv[0], timeout)
        except OSError as exc:
            return 127, "", "%s: %s" % (argv[0], exc)
        return proc.returncode, proc.stdout, proc.stderr
    return run


def config_errors(config):
    if not isinstance(config, dict):
        return ["config: expected a JSON object"]
    settings = dict(scheduler=config.get("scheduler"), reason_prefix=config.get("reason_prefix"),
                    recovery_runs=config.get("recovery_runs"), recovery_seconds=config.get("recovery_seconds", 0),
                    wait_timeout=0)
    errors = _gate.settings_errors(settings, SCHEDULERS)
    if config.get("dead_timer", "hold") not in ("hold", "drain"):
        errors.append("dead_timer=%r: hold or drain" % (config.get("dead_timer"),))
    if not isinstance(config.get("textfile"), str) or not config["textfile"].startswith("/"):
        errors.append("textfile=%r: the node timer's textfile, an absolute path" % (config.get("textfile"),))
    return errors


def main(argv, environ=None, now=None, run=None):
    environ = os.environ if environ is None else environ
    path = argv[1] if len(argv) == 2 and argv[0] == "--config" else CONFIG
    try:
        config = json.loads(_fileio.read_text(path, _fileio.MiB, what="config"))
    except (IOError, OSError, ValueError) as exc:
        sys.stderr.write("rdma-fabric-scheduler-gate: %s: %s\n" % (path, exc))
        return 1
    errors = config_errors(config)
    if errors:
        sys.stderr.write("rdma-fabric-scheduler-gate: %s: %s\n" % (path, "; ".join(errors)))
        return 1
    node = environ.get("SLURMD_NODENAME") or config.get("node") or socket.gethostname().split(".")[0]
    now = time.time() if now is None else now
    try:
        text = _fileio.read_text(config["textfile"], TEXTFILE_MAX, what="textfile")
    except (IOError, OSError):
        text = None
    current = verdict(node, text, config, now)
    settings = {"scheduler": "slurm", "reason_prefix": config["reason_prefix"], "recovery_runs": config["recovery_runs"],
                "recovery_seconds": config.get("recovery_seconds", 0), "wait_timeout": 0}
    try:
        result = _slurm.gate(run or runner(float(config.get("timeout") or 10)), [current], settings, now=now)
    except (_gate.GateError, _slurm.Unreachable) as exc:
        sys.stderr.write("rdma-fabric-scheduler-gate: %s: %s\n" % (node, exc))
        return 1
    action = result["nodes"][node]
    sys.stderr.write("rdma-fabric-scheduler-gate: %s: %s %s: %s (%s)\n" % (
        node, current["state"], current.get("figure") or "", action["action"], action["why"]))
    return 1 if result["failed"] else 0
