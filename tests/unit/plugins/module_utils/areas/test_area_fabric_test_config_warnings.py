# -*- coding: utf-8 -*-
"""areas.fabric_test.config_warnings: the legal thresholds that in effect turn a check off, named
(issue 40, low); config_errors still accepts them."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.areas import fabric_test as F


def test_config_warnings_names_the_thresholds_that_turn_a_check_off():
    thresholds = {"bw_fraction": 0.0001, "by_rate": {"400": {"bw_fraction": 0.01}}, "bw_min_gbps": 0.001,
                  "lat_max_us": 1e9}
    warnings = F.config_warnings({"thresholds": thresholds})
    assert [w.split(":", 1)[0] for w in warnings] == [
        "fabric_test_thresholds.bw_fraction=0.0001", "fabric_test_thresholds.bw_min_gbps=0.001",
        "fabric_test_thresholds.lat_max_us=1000000000.0", "fabric_test_thresholds.by_rate.400.bw_fraction=0.01"]


def test_config_warnings_none_for_sensible_or_absent_thresholds():
    assert F.config_warnings({"thresholds": {}}) == []
    assert F.config_warnings({"thresholds": None}) == []
    assert F.config_warnings({}) == []
    assert F.config_warnings({"thresholds": {"bw_fraction": 0.9, "lat_max_us": 3, "nccl_busbw_min_gbps": 300}}) == []
