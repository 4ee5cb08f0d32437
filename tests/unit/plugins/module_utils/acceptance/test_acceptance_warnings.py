# -*- coding: utf-8 -*-
"""fabric_test_thresholds values that are legal but in effect turn a check off are warned about by
name (issue 40, low: "a value that would silently disable a check is refused, or warned about by
name where it is legal")."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _acceptance as A


@pytest.mark.parametrize("settings, name, value", [
    ({"bw_fraction": 0.0001}, "fabric_test_thresholds.bw_fraction", "0.0001"),
    ({"bw_fraction": 0.49}, "fabric_test_thresholds.bw_fraction", "0.49"),
    ({"by_rate": {"400": {"bw_fraction": 0.01}}}, "fabric_test_thresholds.by_rate.400.bw_fraction", "0.01"),
    ({"by_rate": {400: {"bw_fraction": "0.2"}}}, "fabric_test_thresholds.by_rate.400.bw_fraction", "'0.2'"),
    ({"by_node_type": {"gpu-h100": {"bw_fraction": 0.1}}}, "fabric_test_thresholds.by_node_type.gpu-h100.bw_fraction",
     "0.1"),
    ({"loopback": {"bw_fraction": 0.3}}, "fabric_test_thresholds.loopback.bw_fraction", "0.3"),
    ({"bw_min_gbps": 0.001}, "fabric_test_thresholds.bw_min_gbps", "0.001"),
    ({"loopback": {"bw_min_gbps": 0.5}}, "fabric_test_thresholds.loopback.bw_min_gbps", "0.5"),
    ({"by_rate": {"200": {"bw_min_gbps": 0.9}}}, "fabric_test_thresholds.by_rate.200.bw_min_gbps", "0.9"),
    ({"lat_max_us": 1e9}, "fabric_test_thresholds.lat_max_us", "1000000000.0"),
    ({"lat_max_us": 100.5}, "fabric_test_thresholds.lat_max_us", "100.5"),
    ({"loopback": {"lat_max_us": 500}}, "fabric_test_thresholds.loopback.lat_max_us", "500"),
    ({"by_node_type": {"t": {"lat_max_us": 1000}}}, "fabric_test_thresholds.by_node_type.t.lat_max_us", "1000"),
    ({"nccl_busbw_min_gbps": 0.5}, "fabric_test_thresholds.nccl_busbw_min_gbps", "0.5"),
    ({"by_node_type": {"BM.GPU.H100.8": {"nccl_busbw_min_gbps": 0.01}}},
     "fabric_test_thresholds.by_node_type.BM.GPU.H100.8.nccl_busbw_min_gbps", "0.01"),
])
def test_a_value_that_turns_a_check_off_is_warned_about_by_name(settings, name, value):
    assert A.check_settings(settings) == []               # legal: not an error
    warnings = A.check_warnings(settings)
    assert len(warnings) == 1 and warnings[0].startswith("%s=%s: " % (name, value)), warnings
    assert "in effect off" in warnings[0]


@pytest.mark.parametrize("settings", [
    None, {}, {"bw_fraction": 0.5}, {"bw_fraction": 0.9, "bw_min_gbps": 1, "lat_max_us": 100, "nccl_busbw_min_gbps": 1},
    {"by_rate": {"400": {"bw_fraction": 0.95}}, "by_node_type": {"x": {"nccl_busbw_min_gbps": 350, "lat_max_us": 3}},
     "loopback": {"bw_fraction": 0.8, "bw_min_gbps": 300, "lat_max_us": 4}},
    # refused values are check_settings' to name, not warned about twice
    {"bw_fraction": 0}, {"bw_fraction": -1}, {"bw_min_gbps": "fast"}, {"lat_max_us": True}, {"by_rate": [1]},
    {"loopback": "x"}, {"by_node_type": {"x": 5}}, "not a dict", {"bw_fraction": None},
])
def test_sensible_or_refused_values_are_not_warned_about(settings):
    assert A.check_warnings(settings) == []


def test_every_weak_value_of_every_layer_is_named_once():
    settings = {"bw_fraction": 0.0001, "bw_min_gbps": 0.001, "lat_max_us": 1e9, "nccl_busbw_min_gbps": 0.1,
                "by_rate": {"400": {"bw_fraction": 0.01}, "100": {"bw_fraction": 0.9}},
                "by_node_type": {"a": {"lat_max_us": 101}}, "loopback": {"bw_min_gbps": 0.2}}
    assert A.check_settings(settings) == []
    names = [w.split("=", 1)[0] for w in A.check_warnings(settings)]
    assert sorted(names) == sorted([
        "fabric_test_thresholds.bw_fraction", "fabric_test_thresholds.bw_min_gbps", "fabric_test_thresholds.lat_max_us",
        "fabric_test_thresholds.nccl_busbw_min_gbps", "fabric_test_thresholds.by_rate.400.bw_fraction",
        "fabric_test_thresholds.by_node_type.a.lat_max_us", "fabric_test_thresholds.loopback.bw_min_gbps"])
