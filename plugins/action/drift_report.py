# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.drift_report: gather every host's drift records (Python over the play's
hosts, linear), add a record per host that could not be checked, print the table and write
drift.json, JUnit XML and a Prometheus textfile (the run's steps in plugin_utils/_report_run.py).
Documentation in plugins/modules/drift_report.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.errors import AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils.reports import _report as R
from ansible_collections.rdma.fabric.plugins.plugin_utils import _report_run as RR


def collect(hosts_all, hosts_alive, results):
    """``(records, checked, unreachable)`` from the registered drift_check result of each host."""
    records, checked, unreachable = [], [], []
    for host, result, why in RR.host_results(hosts_all, hosts_alive, results, "drift_records", skip_skipped=True):
        if why:     # a host with no area to check was skipped and is not here
            records.append({"host": host, "area": "host", "object": "", "setting": "check", "expected": "checked",
                            "actual": why})
            unreachable.append(host)
            continue
        records.extend(result["drift_records"])
        checked.extend((host, area) for area in result.get("checked") or [])
    return records, checked, unreachable


def host_groups(hosts_all, areas, unchecked, results):
    """``[{host, groups}]``, in the play's order, for each host with something to converge: a
    group per drifted area, drift_unchecked, and drift_apply_deferred (checked with apply, nothing
    applied in that call: site.yml converges it later)."""
    unchecked = set(unchecked)
    out = []
    for host in hosts_all:
        groups = ["drift_%s" % area for area in areas.get(host, [])]
        if host in unchecked:
            groups.append("drift_unchecked")
        result = results.get(host)
        if isinstance(result, dict) and result.get("apply_deferred"):
            groups.append("drift_apply_deferred")
        if groups:
            out.append({"host": host, "groups": groups})
    return out


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("report_dir", "report_mode", "result_var", "started_var", "fail_on_drift", "title",
                             "return_records"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        report_dir = RR.report_dir("drift_report", args)
        mode = RR.report_mode("drift_report", args, task_vars)
        fail_on_drift = args.get("fail_on_drift", True)
        try:
            fail_on_drift = boolean(fail_on_drift, strict=True)
        except TypeError:
            raise AnsibleError("drift_report: fail_on_drift=%r: expected a boolean" % (fail_on_drift,))
        return_records = args.get("return_records", True)
        try:
            return_records = boolean(return_records, strict=True)
        except TypeError:
            raise AnsibleError("drift_report: return_records=%r: expected a boolean" % (return_records,))
        results = RR.play_results(
            task_vars, RR.variable_name("drift_report", "result_var", args.get("result_var") or "drift_check_result"),
            started_var=RR.variable_name("drift_report", "started_var", args.get("started_var") or "drift_check_started"))
        hosts_all, _alive, host_result = results
        records, checked, unreachable = collect(*results)
        records = R.sort_records(records)
        now = time.time()
        hosts = len(set(h for h, _a in checked))
        meta = RR.meta(task_vars, now, version=True)
        meta.update(hosts=hosts, unreachable=unreachable,
                    summary=R.summary(records, hosts + len(unreachable), len(unreachable)))
        info = {"collection_version": meta["collection_version"], "inventory": meta["inventory"],
                "limit": meta["limit"]}
        RR.write_reports("drift_report", report_dir, [
            ("drift.json", R.to_json(records, meta)),
            ("drift-junit.xml", R.junit_xml(records, checked)),
            ("rdma_fabric_drift.prom", R.prometheus(records, checked, unreachable, now, info))], mode)
        RR.show(args.get("title") or "rdma.fabric drift check", R.table(records) if records else "", meta["summary"],
                report_dir)
        areas = {}
        for record in records:
            if record["area"] != "host":
                areas.setdefault(record["host"], [])
                if record["area"] not in areas[record["host"]]:
                    areas[record["host"]].append(record["area"])
        # not "unreachable": ansible-core reads a true "unreachable" in a result as the task's own
        # host being unreachable (this run_once task's, so every host's, and the run stops there)
        unchecked = sorted(set(r["host"] for r in records if r["area"] == "host" and r["actual"] != "unreachable"))
        result.update(changed=False, summary=meta["summary"], areas_by_host=areas, unchecked_hosts=unchecked,
                      unreachable_hosts=unreachable, report_dir=report_dir,
                      host_groups=host_groups(hosts_all, areas, unchecked, host_result))
        if return_records:
            result["records"] = records
        return RR.finish(result, meta["summary"], records and fail_on_drift)
