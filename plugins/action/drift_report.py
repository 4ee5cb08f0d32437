# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.drift_report: gather every host's drift records (Python over the play's
hosts, linear), add a record per host that could not be checked, print the table and write
drift.json, JUnit XML and a Prometheus textfile. Documentation in plugins/modules/drift_report.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import os
import time

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.rdma.fabric.plugins.module_utils import _report as R

display = Display()


def collect(hosts_all, hosts_alive, results):
    """``(records, checked, unreachable)`` from the registered drift_check result of each host."""
    records, checked, unreachable = [], [], []
    alive = set(hosts_alive)
    for host in hosts_all:
        result = results.get(host)
        if not isinstance(result, dict) or "drift_records" not in result:
            if host in alive and isinstance(result, dict) and result.get("skipped"):
                continue            # a host with no area to check
            why = "unreachable" if host not in alive or (result or {}).get("unreachable") else \
                "not checked: %s" % ((result or {}).get("msg") or "no result")
            records.append({"host": host, "area": "host", "object": "", "setting": "check", "expected": "checked",
                            "actual": why})
            unreachable.append(host)
            continue
        records.extend(result["drift_records"])
        checked.extend((host, area) for area in result.get("checked") or [])
    return records, checked, unreachable


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("report_dir", "result_var", "started_var", "fail_on_drift", "title"))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        report_dir = args.get("report_dir")
        if not report_dir:
            raise AnsibleError("drift_report: report_dir is required")
        result_var = args.get("result_var") or "drift_check_result"
        hostvars = task_vars.get("hostvars") or {}
        hosts_all = list(task_vars.get("ansible_play_hosts_all") or [])
        hosts_alive = list(task_vars.get("ansible_play_hosts") or [])
        # Hosts that failed in an earlier play of the same run (an onboarding gate) never
        # started this one: they were not checked, and are not "unreachable" here.
        marker = args.get("started_var") or "drift_check_started"
        started = [h for h in hosts_all if (hostvars.get(h) or {}).get(marker)]
        if started:
            hosts_all = started
        results = dict((h, (hostvars.get(h) or {}).get(result_var)) for h in hosts_all)
        records, checked, unreachable = collect(hosts_all, hosts_alive, results)
        records = R.sort_records(records)
        now = time.time()
        meta = {"time": datetime.datetime.fromtimestamp(now, datetime.timezone.utc).isoformat(),
                "inventory": ",".join(task_vars.get("ansible_inventory_sources") or []),
                "limit": task_vars.get("ansible_limit") or "",
                "collection_version": task_vars.get("rdma_fabric_version") or _version(),
                "hosts": len(set(h for h, _a in checked)), "unreachable": unreachable,
                "summary": R.summary(records, len(set(h for h, _a in checked)) + len(unreachable), len(unreachable))}
        try:
            os.makedirs(report_dir, exist_ok=True)
            R.write_atomic(os.path.join(report_dir, "drift.json"), R.to_json(records, meta))
            R.write_atomic(os.path.join(report_dir, "drift-junit.xml"), R.junit_xml(records, checked))
            R.write_atomic(os.path.join(report_dir, "rdma_fabric_drift.prom"),
                           R.prometheus(records, checked, unreachable, now,
                                        {"collection_version": meta["collection_version"],
                                         "inventory": meta["inventory"], "limit": meta["limit"]}))
        except (IOError, OSError) as exc:
            raise AnsibleError("drift_report: writing the reports to %s failed: %s" % (report_dir, exc))
        text = (R.table(records) + "\n" if records else "") + meta["summary"]
        display.display("\n%s\n%s\nreports: %s\n" % (args.get("title") or "rdma.fabric drift check", text, report_dir))
        areas = {}
        for record in records:
            if record["area"] != "host":
                areas.setdefault(record["host"], [])
                if record["area"] not in areas[record["host"]]:
                    areas[record["host"]].append(record["area"])
        result.update(changed=False, records=records, summary=meta["summary"], areas_by_host=areas,
                      unreachable=unreachable, report_dir=report_dir)
        if records and args.get("fail_on_drift", True):
            result.update(failed=True, msg=meta["summary"])
        else:
            result["msg"] = meta["summary"]
        return result


def _version():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "MANIFEST.json")
    try:
        import json
        with open(path) as handle:
            return json.load(handle)["collection_info"]["version"]
    except (IOError, OSError, ValueError, KeyError):
        pass
    galaxy = os.path.join(os.path.dirname(__file__), "..", "..", "galaxy.yml")
    try:
        with open(galaxy) as handle:
            for line in handle:
                if line.startswith("version:"):
                    return line.split(":", 1)[1].strip()
    except (IOError, OSError):
        pass
    return "unknown"
