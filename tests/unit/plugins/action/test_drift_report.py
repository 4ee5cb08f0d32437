# -*- coding: utf-8 -*-
"""drift_report's collection of per-host results: unreachable and failed hosts are records."""
from __future__ import absolute_import, division, print_function

from ansible_collections.rdma.fabric.plugins.action.drift_report import collect, host_groups


def test_clean_drifted_unreachable_and_failed_hosts():
    results = {
        "a": {"drift_records": [], "checked": ["roce_qos"]},
        "b": {"drift_records": [{"host": "b", "area": "roce_qos", "object": "eth2", "setting": "pfc",
                                 "expected": [3], "actual": []}], "checked": ["roce_qos", "gpudirect"]},
        "c": None,
        "d": {"failed": True, "msg": "boom"},
        "e": {"skipped": True},
    }
    records, checked, unreachable = collect(["a", "b", "c", "d", "e"], ["a", "b", "d", "e"], results)
    assert checked == [("a", "roce_qos"), ("b", "roce_qos"), ("b", "gpudirect")]
    assert unreachable == ["c", "d"]
    assert [(r["host"], r["area"], r["actual"]) for r in records] == [
        ("b", "roce_qos", []), ("c", "host", "unreachable"), ("d", "host", "not checked: boom")]


def test_host_groups_name_what_each_host_needs_converged_in_play_order():
    """site.yml's one add_host task: a group per drifted area, drift_unchecked, and
    drift_apply_deferred for a host whose check call applied nothing; a clean host is not there."""
    results = {"a": {"drift_records": []}, "b": {"drift_records": [], "apply_deferred": "nic_firmware drifted: x"},
               "c": {"drift_records": []}, "d": {"failed": True}}
    areas = {"b": ["nic_firmware", "roce_qos"], "c": ["gpudirect"]}
    assert host_groups(["a", "b", "c", "d"], areas, ["d"], results) == [
        {"host": "b", "groups": ["drift_nic_firmware", "drift_roce_qos", "drift_apply_deferred"]},
        {"host": "c", "groups": ["drift_gpudirect"]},
        {"host": "d", "groups": ["drift_unchecked"]}]
