# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.fabric_test_report: the fabric test's verdict (the fabric_test filter's
``verdict`` step) as a table, JSON, JUnit XML and a Prometheus textfile, through the writers
the drift check and health use (module_utils/reports/_report.py). Documentation in
plugins/modules/fabric_test_report.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R
from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _kinds as K
from ansible_collections.rdma.fabric.plugins.plugin_utils import _report_run as RR

ACTION = "fabric_test_report"
# the checks of the kinds run by default (acceptance/_kinds.py); an opt-in kind's checks come with the
# verdict's ``checks`` (the checks that ran), so that a kind not run is never a passed testcase
CHECKS = sorted(set(K.CHECKS[k] for k in K.DEFAULT) | set(K.LOOPBACK_CHECKS[k] for k in K.DEFAULT if k in K.LOOPBACK_CHECKS)
                | set(("fabric_test.node",)))
# the recap's table of every judged node (the verdict's ``nodes``)
NODE_COLUMNS = ["host", "group", "address", "rails", "bw_gbps", "lat_us", "loopback_bw_gbps", "peers", "owed",
                "gpu_memory", "pinning", "verdict"]


def summary(verdict):
    failed = verdict.get("failed") or {}
    judged = len(verdict.get("passed") or []) + len(failed)
    text = "%d of %d hosts failed the fabric test, %d finding(s)" % (len(failed), judged,
                                                                     len(verdict.get("findings") or []))
    provisional = verdict.get("provisional") or {}
    if provisional:
        text += "; %d passed provisionally (pair tests owed: %s)" % (len(provisional), ", ".join(sorted(provisional)))
    skipped = verdict.get("skipped") or []
    if skipped:
        text += "; %d check(s) skipped on %d host(s)" % (len(skipped), len(set(s["host"] for s in skipped)))
    return text


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("report_dir", "report_mode", "verdict", "title", "fail_on", "report_name"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        report_dir = RR.report_dir(ACTION, args)
        mode = RR.report_mode(ACTION, args, task_vars)
        verdict = args.get("verdict")
        if not isinstance(verdict, dict) or not isinstance(verdict.get("findings"), list):
            shown = repr(verdict)
            raise AnsibleError("%s: verdict=%s: expected the fabric_test filter's verdict (a dict with findings)"
                               % (ACTION, shown if len(shown) <= 200 else shown[:200] + "..."))
        fail_on = args.get("fail_on", "never")
        if fail_on not in ("error", "never"):
            raise AnsibleError("%s: fail_on=%r: one of error, never" % (ACTION, fail_on))
        name = args.get("report_name") or "fabric_test"
        if not isinstance(name, str) or not re.match(r"^[a-z][a-z0-9_]{0,39}$", name):
            raise AnsibleError("%s: report_name=%r: lower-case letters, digits and _, starting with a letter" % (ACTION, name))
        # records of the modules (object) read as findings (subject): rdma.fabric.ib_fabric's
        findings = R.sort_findings([dict(dict((k, v) for k, v in f.items() if k != "object"),
                                         subject=f.get("subject", f.get("object")) or "",
                                         severity=f.get("severity") or "error", diagnosis=f.get("diagnosis") or "",
                                         remedy=f.get("remedy") or "")
                                    for f in verdict["findings"]])
        checks = sorted(set(CHECKS if name == "fabric_test" else ()) | set(f["check"] for f in findings)
                        | set(verdict.get("checks") or ()))
        skipped = R.sort_records(list(verdict.get("skipped") or []), R.SKIP_KEYS)
        checked = sorted(set(verdict.get("passed") or []) | set(verdict.get("failed") or {}))
        now = time.time()
        meta = RR.meta(task_vars, now)
        meta.update(hosts=len(checked), passed=sorted(verdict.get("passed") or []),
                    failed=sorted(verdict.get("failed") or {}), skipped=len(skipped), summary=summary(verdict))
        nodes = [n for n in verdict.get("nodes") or [] if isinstance(n, dict)]
        if nodes:
            meta["nodes"] = nodes
            meta["provisional"] = sorted(verdict.get("provisional") or {})
        RR.write_reports(ACTION, report_dir, [
            ("%s.json" % name, R.to_json(findings, meta, R.FINDING_KEYS, skipped)),
            ("%s-junit.xml" % name,
             R.junit_xml(findings, [(h, c) for h in checked for c in checks], suite="rdma.fabric %s" % name,
                         case_key="check", message=R.finding_message, failure_type="fabric_test",
                         keys=R.FINDING_KEYS, skipped=skipped)),
            ("rdma_fabric_%s.prom" % name,
             R.prometheus_health(findings, checked, [], now, {"inventory": meta["inventory"], "limit": meta["limit"]},
                                 checks, prefix="rdma_fabric_%s" % name))], mode)
        table = R.table(findings, R.FINDING_TABLE, keys=R.FINDING_KEYS) if findings else ""
        if nodes:
            table = R.table(nodes, NODE_COLUMNS, width=40, keys=["host"]) + ("\n" + table if table else "")
        if skipped:
            table = (table + "\n" if table else "") + R.skipped_table(skipped)
        RR.show(args.get("title") or "rdma.fabric fabric test", table, meta["summary"], report_dir)
        result.update(changed=False, findings=findings, skipped_checks=skipped, summary=meta["summary"],
                      passed=meta["passed"], failed_hosts=meta["failed"], report_dir=report_dir)
        return RR.finish(result, meta["summary"],
                         [f for f in findings if f["severity"] == "error"] if fail_on == "error" else [])
