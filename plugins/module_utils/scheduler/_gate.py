# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler gate, whatever the scheduler: a node's verdict (from the findings of a health
check, a fabric test, a drift check, or a maintenance step), the reason a drain carries, the
recovery window, and the settings checked. Pure functions; standard library only (the node's
HealthCheckProgram imports it without Ansible).

A verdict: ``{"node", "state": "fail"|"pass"|"maintenance"|"unknown", "scopes": [...],
"check", "subject", "figure", "time"}``. ``scopes`` are the kinds of check the verdict judged
(SCOPES): a pass lifts only a drain whose check is of one of them (a healthy node timer says
nothing about bandwidth: it never lifts a fabric test's drain). ``time``: when the verdict was
reached (Unix seconds); a pass no newer than the drain's last change was already counted.

The reason: ``<prefix> <check> <subject> <figure>``, plus `` [healthy K/N since T]`` while the
node recovers: the recovery window lives in the scheduler itself (the reason and its time),
read the same by the controller's module and by the node's HealthCheckProgram, and shown to
the administrator by ``sinfo -R``/``scontrol show node``. A reason that does not start with the
prefix is someone else's: never changed, never lifted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import math
import re
import time

PREFIX = "rdma.fabric:"
# the kinds of check a verdict judges: scope -> the check-name prefixes of its drains
SCOPES = {
    "health": ("health.",),
    # "onboard": a node waiting for admission (``rdma.fabric: onboard pending``, set by hand or by
    # the onboarding): lifted by the first admission, like a maintenance drain
    "fabric_test": ("perftest.", "nccl.", "fabric_test.", "onboard"),
    "drift": ("drift.",),
    "maintenance": ("maintenance",),
}
STATES = ("fail", "pass", "maintenance", "unknown")
# the module option -> the variable the playbooks (playbooks/tasks/scheduler_gate.yml) set it from
VARIABLES = {"scheduler": "scheduler_gate", "reason_prefix": "scheduler_gate_reason_prefix",
             "recovery_runs": "scheduler_gate_recovery_runs", "recovery_seconds": "scheduler_gate_recovery_seconds",
             "wait_timeout": "scheduler_gate_wait_timeout"}
REASON_MAX = 200
_MARK = re.compile(r" \[healthy (?P<count>\d+)/(?P<runs>\d+) since (?P<since>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\]\Z")


class GateError(ValueError):
    """Bad input: the message names the option (and the playbooks' variable) and the value."""


def _named(option):
    variable = VARIABLES.get(option)
    return "%s (%s)" % (option, variable) if variable else option


def settings_errors(settings, schedulers):
    """Every problem of the gate's settings, each naming the option, its variable and the value."""
    errors = []
    scheduler = settings.get("scheduler")
    if scheduler not in schedulers:
        errors.append("%s=%r: expected one of %s" % (_named("scheduler"), scheduler, ", ".join(sorted(schedulers))))
    prefix = settings.get("reason_prefix")
    if not isinstance(prefix, str) or not prefix.strip() or "=" in prefix or prefix != prefix.strip() \
            or any(ord(c) < 32 for c in prefix) or "[" in prefix:
        errors.append("%s=%r: a non-empty word such as %r, without '=', '[', line breaks or edge spaces (the "
                      "scheduler's key=value syntax, and our recovery mark)" % (_named("reason_prefix"), prefix, PREFIX))
    runs = settings.get("recovery_runs")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        errors.append("%s=%r: the consecutive healthy verdicts before a drain is lifted, an integer >= 1 (0 would "
                      "lift a drain with no healthy verdict at all)" % (_named("recovery_runs"), runs))
    seconds = settings.get("recovery_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0 or math.isnan(seconds):
        errors.append("%s=%r: seconds >= 0 the node must stay healthy before a drain is lifted"
                      % (_named("recovery_seconds"), seconds))
    wait = settings.get("wait_timeout", 0)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0 or math.isnan(wait):
        errors.append("%s=%r: seconds >= 0 to wait for the jobs of a draining node" % (_named("wait_timeout"), wait))
    return errors


def _clean(text):
    """One line: control characters and runs of blanks as one space."""
    return " ".join("".join(c if ord(c) >= 32 and c != "\x7f" else " " for c in str(text)).split())


def reason(prefix, verdict):
    """``<prefix> <check> <subject> <figure>`` on one line, at most REASON_MAX characters."""
    text = _clean(" ".join(str(verdict.get(k)) for k in ("check", "subject", "figure") if verdict.get(k) not in (None, "")))
    text = "%s %s" % (prefix, text)
    return text if len(text) <= REASON_MAX else text[:REASON_MAX - 3] + "..."


def ours(prefix, text):
    """True when the reason is one of our drains (it starts with the prefix and a space)."""
    return isinstance(text, str) and (text == prefix or text.startswith(prefix + " "))


def read_reason(prefix, text):
    """Our reason taken apart: ``{"cause", "check", "scope", "count", "runs", "since"}``, None if not ours."""
    if not ours(prefix, text):
        return None
    mark = _MARK.search(text)
    cause = text[:mark.start()] if mark else text
    words = cause[len(prefix):].split()
    check = words[0] if words else ""
    since = None
    if mark:
        try:
            since = int(_utc_seconds(mark.group("since")))
        except ValueError:
            mark, since = None, None
    return {"cause": cause, "check": check, "scope": scope_of(check),
            "count": int(mark.group("count")) if mark else 0, "runs": int(mark.group("runs")) if mark else None,
            "since": since}


def _utc_seconds(stamp):
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def utc_stamp(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def mark(cause, count, runs, since):
    """The reason of a node recovering: its cause and `` [healthy K/N since T]``."""
    return cause + " [healthy %d/%d since %s]" % (count, runs, utc_stamp(since))


def scope_of(check):
    """The scope whose drains a check makes (SCOPES), None for a check of no scope."""
    for scope, prefixes in SCOPES.items():
        # the scope's own name too: a verdict with no failing finding of its own names its scope
        # (verdict(): ``fabric_test ... not admitted``), and its drain must be lifted by that scope
        if check == scope or any(check == p or check.startswith(p) for p in prefixes):
            return scope
    return None


def _figure(finding):
    actual, expected = finding.get("actual"), finding.get("expected")
    if expected not in (None, ""):
        return "%s (expected %s)" % (actual, expected)
    return "%s" % (actual,)


def verdict(node, scope, findings=None, passed=None, now=None, check_prefix=None):
    """The verdict of one node from the findings of a check of ``scope``: ``fail`` naming the first
    error finding (its check, prefixed ``check_prefix`` when given: ``health.`` for the health
    checks, whose names carry no scope; subject; ``actual (expected ...)``; ``+N more`` when there are
    more), ``pass`` when ``passed`` is true or no finding is an error, ``unknown`` when ``passed``
    is None and ``findings`` is None (the node was not judged)."""
    now = time.time() if now is None else now
    base = {"node": node, "scopes": [scope], "time": now, "check": None, "subject": None, "figure": None}
    # findings (check, subject) or fleet records (area, object, setting), the one record shape
    errors = [dict(f, check=f.get("check") or f.get("area"),
                   subject=f.get("subject") or " ".join(str(f[k]) for k in ("object", "setting") if f.get(k)))
              for f in (findings or []) if isinstance(f, dict) and (f.get("severity") or "error") == "error"]
    if passed is None and findings is None:
        return dict(base, state="unknown")
    if errors and passed is not True:
        first = sorted(errors, key=lambda f: (str(f.get("check")), str(f.get("subject"))))[0]
        check = str(first.get("check") or scope)
        if check_prefix and not check.startswith(check_prefix):
            check = check_prefix + check
        figure = _figure(first) + (" +%d more" % (len(errors) - 1) if len(errors) > 1 else "")
        return dict(base, state="fail", check=check, subject=first.get("subject"), figure=figure)
    if passed is False:
        return dict(base, state="fail", check=scope, subject=node, figure="not admitted")
    return dict(base, state="pass")


def maintenance(node, subject, figure, now=None):
    """A maintenance drain (a reboot to come): lifted only by a pass of scope ``maintenance``."""
    return {"node": node, "state": "maintenance", "scopes": ["maintenance"], "check": "maintenance",
            "subject": subject, "figure": figure, "time": time.time() if now is None else now}


SEVERITIES = ("error", "warning", "info")


def _word(text):
    """True for one word: no blank and no control character (the reason's first word is its check)."""
    return isinstance(text, str) and bool(text) and not any(c.isspace() or ord(c) < 32 or c == "\x7f" for c in text)


def node_errors(index, node):
    """The module's ``nodes[index]`` entry as given (before its findings become a verdict), checked:
    each problem names ``nodes[index].option`` and the value."""
    errors = []
    name = "nodes[%d]" % index
    check = node.get("check")
    if check is not None and (not _word(check) or scope_of(check) is None):
        errors.append("%s.check=%r: one word starting with a check of a scope (%s), or the drain it makes could never "
                      "be lifted" % (name, check, ", ".join("%s: %s" % (k, "/".join(v)) for k, v in sorted(SCOPES.items()))))
    prefix = node.get("check_prefix")
    if prefix is not None and not _word(prefix):
        errors.append("%s.check_prefix=%r: one word put before a finding's check (such as 'health.'), without "
                      "blanks (the reason's first word is its check)" % (name, prefix))
    for key in ("subject", "figure"):
        text = node.get(key)
        if isinstance(text, str) and "[healthy" in text:
            errors.append("%s.%s=%r: holds '[healthy', which our drain reasons keep for the recovery count"
                          % (name, key, text))
    when = node.get("time")
    if when is not None and (isinstance(when, bool) or not isinstance(when, (int, float)) or math.isnan(when)
                             or math.isinf(when) or when < 0):
        errors.append("%s.time=%r: Unix seconds >= 0 (when the verdict was reached)" % (name, when))
    findings = node.get("findings")
    for at, finding in enumerate(findings or []):
        where = "%s.findings[%d]" % (name, at)
        if not isinstance(finding, dict):
            errors.append("%s=%r: expected a finding {check, subject, severity, expected, actual}" % (where, finding))
        elif finding.get("severity") is not None and finding.get("severity") not in SEVERITIES:
            errors.append("%s.severity=%r: expected one of %s (a finding of another severity would neither drain nor "
                          "be seen)" % (where, finding.get("severity"), ", ".join(SEVERITIES)))
        elif not (finding.get("check") or finding.get("area")):
            errors.append("%s=%r: names no check (check, or area for a drift record)" % (where, finding))
    return errors


def verdict_errors(verdicts):
    """The verdicts the module was given, checked: each names ``nodes[i]`` and the value."""
    errors = []
    for index, item in enumerate(verdicts):
        if not isinstance(item, dict):
            errors.append("nodes[%d]=%r: expected a dict" % (index, item))
            continue
        name = item.get("node")
        if not isinstance(name, str) or not name or any(c in name for c in " \t\r\n=,"):
            errors.append("nodes[%d].name=%r: a scheduler node name (the playbooks set it from "
                          "scheduler_gate_node_name)" % (index, name))
        if item.get("state") not in STATES:
            errors.append("nodes[%d].state=%r: expected one of %s" % (index, item.get("state"), ", ".join(STATES)))
        scopes = item.get("scopes")
        if not isinstance(scopes, list) or not scopes or any(s not in SCOPES for s in scopes):
            errors.append("nodes[%d].scopes=%r: expected a list out of %s" % (index, scopes, ", ".join(sorted(SCOPES))))
    names = [i.get("node") for i in verdicts if isinstance(i, dict)]
    for name in sorted(set(n for n in names if isinstance(n, str) and names.count(n) > 1)):
        errors.append("nodes: the node %r is given twice" % name)
    return errors
