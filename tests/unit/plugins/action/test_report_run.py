# -*- coding: utf-8 -*-
"""plugin_utils/_report_run: the steps drift_report and health_report share."""
from __future__ import absolute_import, division, print_function

import json
import os

import pytest
from ansible.errors import AnsibleError

from ansible_collections.rdma.fabric.plugins.plugin_utils import _report_run as RR

HOSTVARS = {"a": {"r": {"k": []}, "started": True}, "b": {"r": {"skipped": True}, "started": True},
            "c": {"r": {"failed": True, "msg": "boom"}, "started": True}, "d": {"r": {"unreachable": True}},
            "e": {}}
TASK_VARS = {"hostvars": HOSTVARS, "ansible_play_hosts_all": ["a", "b", "c", "d", "e"],
             "ansible_play_hosts": ["a", "b", "c"], "ansible_inventory_sources": ["x.yml", "y.yml"],
             "ansible_limit": "rail0"}


def test_play_results_started_var_keeps_only_started_hosts():
    hosts_all, alive, results = RR.play_results(TASK_VARS, "r", started_var="started")
    assert hosts_all == ["a", "b", "c"] and alive == ["a", "b", "c"] and sorted(results) == ["a", "b", "c"]
    hosts_all, _alive, results = RR.play_results(TASK_VARS, "r")
    assert hosts_all == ["a", "b", "c", "d", "e"] and results["e"] is None
    # no host carries the marker: every play host counts
    assert RR.play_results(TASK_VARS, "r", started_var="nobody")[0] == ["a", "b", "c", "d", "e"]


class RawHostVars(dict):
    """HostVars' two ways in: raw_get (no templating) and the templating get; counts both."""
    def __init__(self, data):
        super(RawHostVars, self).__init__(data)
        self.raw, self.templated = [], []

    def raw_get(self, host):
        self.raw.append(host)
        return dict.get(self, host, {})

    def get(self, host, default=None):
        self.templated.append(host)
        return dict.get(self, host, default)


def test_play_results_reads_each_host_once_without_templating():
    hostvars = RawHostVars(HOSTVARS)
    task_vars = dict(TASK_VARS, hostvars=hostvars)
    hosts_all, _alive, results = RR.play_results(task_vars, "r", started_var="started")
    assert hosts_all == ["a", "b", "c"] and results["c"] == {"failed": True, "msg": "boom"}
    assert hostvars.raw == ["a", "b", "c", "d", "e"] and hostvars.templated == []


def test_host_results_reasons_and_skipped():
    _all, alive, results = RR.play_results(TASK_VARS, "r")
    walk = [(h, why) for h, _r, why in RR.host_results(_all, alive, results, "k")]
    assert walk == [("a", None), ("b", "not checked: no result"), ("c", "not checked: boom"),
                    ("d", "unreachable"), ("e", "unreachable")]
    walk = [h for h, _r, _why in RR.host_results(_all, alive, results, "k", skip_skipped=True)]
    assert walk == ["a", "c", "d", "e"]


def test_meta_and_version():
    meta = RR.meta(TASK_VARS, 0.0)
    assert meta == {"time": "1970-01-01T00:00:00+00:00", "inventory": "x.yml,y.yml", "limit": "rail0"}
    assert RR.meta(dict(TASK_VARS, rdma_fabric_version="1.2.3"), 0.0, version=True)["collection_version"] == "1.2.3"
    with open("galaxy.yml") as handle:
        version = [line.split(":", 1)[1].strip() for line in handle if line.startswith("version:")][0]
    assert RR.meta({}, 0.0, version=True) == {"time": "1970-01-01T00:00:00+00:00", "inventory": "", "limit": "",
                                              "collection_version": version}


def test_report_dir_write_and_finish(tmp_path):
    with pytest.raises(AnsibleError, match="^health_report: report_dir is required$"):
        RR.report_dir("health_report", {"report_dir": ""})
    target = str(tmp_path / "new")
    RR.write_reports("drift_report", target, [("a.json", json.dumps({"x": 1})), ("b.prom", "m 1\n")])
    assert sorted(os.listdir(target)) == ["a.json", "b.prom"]
    assert open(os.path.join(target, "b.prom")).read() == "m 1\n"
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(AnsibleError, match="^drift_report: writing the reports to .*file/sub failed: "):
        RR.write_reports("drift_report", str(blocker / "sub"), [("a.json", "{}")])
    assert RR.finish({}, "s", []) == {"msg": "s"}
    assert RR.finish({}, "s", [1]) == {"msg": "s", "failed": True}
