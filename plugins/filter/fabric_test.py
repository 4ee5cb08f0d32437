# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.fabric_test: the fabric_test area object's fleet steps (plugins/module_utils/areas/fabric_test.py)
as one filter, the role's one way to its Python. Documentation in fabric_test.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.areas import fabric_test as area
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report


def _spec(spec):
    if not isinstance(spec, dict) or not isinstance(spec.get("settings"), dict):
        raise AnsibleFilterError("fabric_test: expected __fabric_test_spec (a dict with settings), got %r"
                                 % type(spec).__name__)
    return spec


def _node(gathered, spec, host, fact_names=None):
    return area.node(host, spec, gathered, list(fact_names or ()))


def _peers(results, spec, hostvars):
    """{peer: node} from the run_once loop's results over the known-good peers outside the play."""
    out = {}
    for result in results or []:
        host = result.get("item")
        if not host:
            continue
        variables = hostvars[host] if host in hostvars else {}
        # the peer's own address settings; it serves, it is not judged
        peer_spec = {"settings": dict(spec["settings"], address=variables.get("fabric_test_address") or "",
                                      ansible_host=variables.get("ansible_host") or "", host=host)}
        if result.get("unreachable"):
            result = {"failed": True, "msg": "unreachable: %s" % (result.get("msg") or "")}
        out[host] = area.node(host, peer_spec, result)
    return out


def _rounds(nodes, spec, known_good=None):
    return area.rounds(nodes, spec, known_good or ())


def _plan(nodes, spec, known_good=None):
    return area.plan(nodes, spec, known_good or ())


def _rows(outcomes, spec, nodes, phase="round", known_good=None):
    return area.rows(nodes, spec, [o for o in outcomes or [] if o], phase, known_good or ())


def _isolation(rows, spec, nodes, known_good=None):
    return area.isolation(nodes, spec, rows or [], known_good or ())


def _verdict(rows, spec, nodes, judged, known_good=None, nccl=None, first_round=None):
    """``nccl``: the NCCL outcomes the play hosts kept; only those of a planned pair of the first
    round (``first_round``, where the NCCL test runs) count: a node cannot make up another's."""
    planned = set((e.get("client"), e.get("server")) for e in (first_round or {}).values()
                  if isinstance(e, dict) and not e.get("loopback"))
    outcomes = [n for n in nccl or [] if isinstance(n, dict) and (n.get("client"), n.get("server")) in planned]
    return area.verdict(nodes, spec, rows or [], list(judged or []), known_good or (), outcomes)


def _launcher(pair, spec, nodes, client=None):
    return area.nccl_launcher(nodes, spec, pair["client"], pair["server"])


def _verdict_file(verdict, spec, host):
    findings = (verdict.get("failed") or {}).get(host) or []
    provisional = (verdict.get("provisional") or {}).get(host)
    return json.dumps({"host": host, "passed": host in (verdict.get("passed") or []), "findings": findings,
                       "provisional": bool(provisional), "owed_pair_tests": (provisional or {}).get("owed", 0),
                       "skipped": [s for s in verdict.get("skipped") or [] if s.get("host") == host]},
                      indent=2, sort_keys=True) + "\n"


def _short(text, size=160):
    """One line of at most ``size`` characters, every terminal control shown as an escape
    (``_report.terminal_text``): a node's text (a tool's error) is printed on the operator's console."""
    text = _report.terminal_text(" ".join(str(text).split()))
    return text if len(text) <= size else text[:size - 3] + "..."


def _message(findings, spec, host=None, report_dir=None, limit=8):
    """The failing task's few lines: which rails fail, the figure, the threshold and the peer; the
    details stay in the report. Every field is made terminal-safe (``_short``)."""
    if isinstance(findings, dict):
        findings = [findings]
    lines = ["- %s %s: %s (expected %s)" % (_short(f.get("subject")), _short(f.get("check")), _short(f.get("actual")),
                                            _short(f.get("expected"), 60)) for f in findings[:limit]]
    if len(findings) > limit:
        lines.append("- and %d more" % (len(findings) - limit))
    head = "Fabric test failed%s: %d finding%s" % (" on %s" % _report.terminal_text(str(host)) if host else "", len(findings),
                                                   "" if len(findings) == 1 else "s")
    tail = "Report: %s/fabric_test.json" % _report.terminal_text(str(report_dir)) if report_dir else ""
    return "\n".join([head] + lines + ([tail] if tail else []))


def _forged(facts, spec):
    """The names of a node's facts that it may not set (its module output set them)."""
    return area.forged(list(facts or ()))


def _warnings(spec, spec_again=None):
    """The settings that are legal but turn a check off in effect (area.config_warnings)."""
    return area.config_warnings(spec["settings"])


STEPS = {"warnings": _warnings, "forged": _forged, "message": _message, "launcher": _launcher, "node": _node,
         "peers": _peers, "rounds": _rounds, "plan": _plan, "rows": _rows, "isolation": _isolation,
         "verdict": _verdict, "verdict_file": _verdict_file}


def fabric_test(value, step, spec, *args):
    """One step of the fabric test (``node``, ``peers``, ``rounds``, ``rows``, ``isolation``,
    ``verdict``, ``verdict_file``) on ``value`` with the role's spec."""
    if step not in STEPS:
        raise AnsibleFilterError("fabric_test: step %r is not one of %s" % (step, ", ".join(sorted(STEPS))))
    try:
        return STEPS[step](value, _spec(spec), *args)
    except (PlanError, ValueError) as exc:
        raise AnsibleFilterError("fabric_test %s: %s" % (step, exc))


class FilterModule(object):
    def filters(self):
        return {"fabric_test": fabric_test}
