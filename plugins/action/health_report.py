# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.health_report: gather every host's rdma_health findings (Python over the
play's hosts, linear), add a finding for every host that could not be checked, print the
table and write health.json, JUnit XML and a Prometheus textfile through the drift check's
writers (module_utils/reports/_report.py; the run's steps in plugin_utils/_report_run.py).
Documentation in plugins/modules/health_report.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R
from ansible_collections.rdma.fabric.plugins.plugin_utils import _report_run as RR

FAIL_ON = ("error", "warning", "never")


def collect_skipped(checked, results):
    """The checks each checked host could not run (rdma_health ``skipped_checks``), as records
    ``{host, check, subject, reason}``."""
    out = []
    for host in checked:
        for skip in (results.get(host) or {}).get("skipped_checks") or []:
            out.append({"host": host, "check": skip.get("check"), "subject": skip.get("subject") or "",
                        "reason": skip.get("reason")})
    return out


def collect(hosts_all, hosts_alive, results):
    """``(findings, checked hosts, unreachable hosts, ports by host)`` from each host's result."""
    findings, checked, unreachable, ports = [], [], [], {}
    for host, result, why in RR.host_results(hosts_all, hosts_alive, results, "findings"):
        if why:
            findings.append({"host": host, "check": "host", "subject": host, "severity": "error",
                             "expected": "checked", "actual": why, "diagnosis": "ansible -m ping HOST",
                             "remedy": "make the host reachable and run the health check again"})
            unreachable.append(host)
            continue
        for finding in result["findings"]:
            finding = dict(finding)
            finding["host"] = host
            findings.append(finding)
        checked.append(host)
        ports[host] = result.get("ports") or {}
    return findings, checked, unreachable, ports


def summary(findings, checked, unreachable, skipped=()):
    errors = [f for f in findings if f["severity"] == "error" and f["check"] != "host"]
    warnings = [f for f in findings if f["severity"] == "warning"]
    sick = len(set(f["host"] for f in findings if f["check"] != "host"))
    text = "%d of %d hosts with findings, %d error(s), %d warning(s); %d unreachable" % (
        sick, len(checked) + len(unreachable), len(errors), len(warnings), len(unreachable))
    if skipped:
        text += "; %d check(s) skipped on %d host(s)" % (len(skipped), len(set(s["host"] for s in skipped)))
    return text


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("report_dir", "report_mode", "result_var", "fail_on", "title"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        report_dir = RR.report_dir("health_report", args)
        mode = RR.report_mode("health_report", args, task_vars)
        fail_on = args.get("fail_on", "error")
        if fail_on not in FAIL_ON:
            raise AnsibleError("health_report: fail_on=%r: one of %s" % (fail_on, ", ".join(FAIL_ON)))
        hosts_all, hosts_alive, results = RR.play_results(
            task_vars, RR.variable_name("health_report", "result_var", args.get("result_var") or "health_result"))
        findings, checked, unreachable, ports = collect(hosts_all, hosts_alive, results)
        findings = R.sort_findings(findings)
        skipped = R.sort_records(collect_skipped(checked, results), R.SKIP_KEYS)
        now = time.time()
        meta = RR.meta(task_vars, now)
        meta.update(hosts=len(checked), unreachable=unreachable, skipped=len(skipped),
                    summary=summary(findings, checked, unreachable, skipped))
        checks = sorted(_health.CHECKS)
        RR.write_reports("health_report", report_dir, [
            ("health.json", R.to_json(findings, meta, R.FINDING_KEYS, skipped)),
            ("health-junit.xml",
             R.junit_xml(findings, [(h, c) for h in checked for c in checks], suite="rdma.fabric health",
                         case_key="check", message=R.finding_message, failure_type="health", keys=R.FINDING_KEYS,
                         skipped=skipped)),
            ("rdma_fabric_health.prom",
             R.prometheus_health(findings, checked, unreachable, now,
                                 {"inventory": meta["inventory"], "limit": meta["limit"]}, checks, ports))], mode)
        table = R.table(findings, R.FINDING_TABLE, keys=R.FINDING_KEYS) if findings else ""
        if skipped:
            table = (table + "\n" if table else "") + R.skipped_table(skipped)
        RR.show(args.get("title") or "rdma.fabric fabric health", table, meta["summary"], report_dir)
        # not "unreachable": ansible-core reads a true "unreachable" in a result as the task's own host
        # being unreachable (this run_once task's, so every host's)
        result.update(changed=False, findings=findings, skipped_checks=skipped, summary=meta["summary"],
                      unreachable_hosts=unreachable, report_dir=report_dir)
        failing = [f for f in findings if fail_on != "never" and (f["severity"] == "error" or fail_on == "warning")]
        return RR.finish(result, meta["summary"], failing)
