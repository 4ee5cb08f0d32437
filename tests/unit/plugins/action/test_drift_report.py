# -*- coding: utf-8 -*-
"""drift_report's collection of per-host results: unreachable and failed hosts are records."""
from __future__ import absolute_import, division, print_function

from ansible_collections.rdma.fabric.plugins.action.drift_report import collect


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
