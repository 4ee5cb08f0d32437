# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet consistency of NCCL settings and nccl.conf read-back (the official example file of
samples/nccl.txt for the NCCL parsing rules)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.nccl._nccl import NcclError, render_conf
from ansible_collections.rdma.fabric.plugins.module_utils.nccl._nccl_consistency import (
    PER_NODE_DEFAULT, as_text, conf_diff, fleet_diff, outlier_messages)

ROCE = {"NCCL_IB_HCA": "=mlx5_0,mlx5_1,mlx5_2,mlx5_3", "NCCL_IB_GID_INDEX": 3, "NCCL_IB_TC": 106,
        "NCCL_NET_GDR_LEVEL": "PIX", "NCCL_CROSS_NIC": 0}
IB = {"NCCL_IB_HCA": "=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7", "NCCL_IB_SL": 0,
      "NCCL_NET_GDR_LEVEL": "PIX", "NCCL_CROSS_NIC": 0}


def entry(host, settings, fabric="roce", groups=None, **changes):
    merged = dict(settings)
    merged.update(changes)
    return {"host": host, "settings": merged, "fabric": fabric, "groups": groups or []}


def test_identical_fleet_is_consistent_and_per_node_values_may_differ():
    report = fleet_diff([
        entry("n1", ROCE),
        entry("n2", ROCE, NCCL_IB_HCA="=mlx5_4,mlx5_5,mlx5_6,mlx5_7", NCCL_IB_GID_INDEX=5),
        entry("n3", ROCE, NCCL_IB_TC="106"),  # string and int are the same text in nccl.conf
    ])
    assert report["consistent"] is True
    assert report["outliers"] == {} and report["summary"] == [] and report["messages"] == {}
    assert report["compared"] == [{"scope": "fabric roce", "hosts": ["n1", "n2", "n3"], "differences": []}]


def test_one_host_differs_is_named_with_setting_and_majority():
    report = fleet_diff([entry("n1", ROCE), entry("n2", ROCE, NCCL_IB_TC=104), entry("n3", ROCE)])
    assert report["consistent"] is False
    assert report["outliers"] == {"n2": [{"scope": "fabric roce", "setting": "NCCL_IB_TC", "value": "104",
                                          "majority": "106", "has_majority": True, "per_node": False}]}
    assert report["messages"] == {"n2": ["fabric roce: NCCL_IB_TC = 104, most hosts have 106"]}
    assert report["summary"] == ["fabric roce: NCCL_IB_TC differs on n2 (most hosts: 106) [106 on n1, n3; 104 on n2]"]
    difference = report["compared"][0]["differences"][0]
    assert difference["values"] == [{"value": "106", "hosts": ["n1", "n3"]}, {"value": "104", "hosts": ["n2"]}]


def test_missing_and_extra_settings_are_differences():
    without_gdr = dict(ROCE)
    del without_gdr["NCCL_NET_GDR_LEVEL"]
    report = fleet_diff([entry("a", ROCE), entry("b", ROCE), entry("c", without_gdr, NCCL_IB_TIMEOUT=22)])
    assert sorted(report["outliers"]) == ["c"]
    assert [(o["setting"], o["value"], o["majority"]) for o in report["outliers"]["c"]] == [
        ("NCCL_IB_TIMEOUT", "22", None), ("NCCL_NET_GDR_LEVEL", None, "PIX")]
    assert report["messages"]["c"] == ["fabric roce: NCCL_IB_TIMEOUT = 22, most hosts have (unset)",
                                       "fabric roce: NCCL_NET_GDR_LEVEL = (unset), most hosts have PIX"]


def test_null_value_is_the_same_as_absent():
    report = fleet_diff([entry("a", ROCE, NCCL_IB_TIMEOUT=None), entry("b", ROCE)])
    assert report["consistent"] is True


def test_tie_has_no_majority_and_reports_every_host():
    report = fleet_diff([entry("a", ROCE), entry("b", ROCE, NCCL_CROSS_NIC=1)])
    assert sorted(report["outliers"]) == ["a", "b"]
    assert (report["outliers"]["a"][0]["majority"], report["outliers"]["a"][0]["has_majority"]) == (None, False)
    assert report["messages"]["b"] == ["fabric roce: NCCL_CROSS_NIC = 1, and no value is shared by most hosts"]
    assert report["summary"] == ["fabric roce: NCCL_CROSS_NIC has no majority value [0 on a; 1 on b]"]


def test_hca_count_is_compared_for_per_node_settings():
    seven = "=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6"
    report = fleet_diff([entry("d1", IB, "ib"), entry("d2", IB, "ib"), entry("d3", IB, "ib", NCCL_IB_HCA=seven)])
    assert report["outliers"] == {"d3": [{"scope": "fabric ib", "setting": "NCCL_IB_HCA", "value": "7 items",
                                          "majority": "8 items", "has_majority": True, "per_node": True}]}
    assert report["messages"]["d3"] == ["fabric ib: NCCL_IB_HCA (count) = 7 items, most hosts have 8 items"]


def test_gid_index_presence_is_compared_but_not_its_value():
    no_gid = dict(ROCE)
    del no_gid["NCCL_IB_GID_INDEX"]
    report = fleet_diff([entry("a", ROCE), entry("b", ROCE, NCCL_IB_GID_INDEX=7), entry("c", no_gid)])
    assert [(o["setting"], o["value"], o["majority"]) for o in report["outliers"]["c"]] == [
        ("NCCL_IB_GID_INDEX", None, "set")]
    assert "a" not in report["outliers"] and "b" not in report["outliers"]


def test_fabrics_are_compared_separately_by_default():
    report = fleet_diff([entry("r1", ROCE), entry("r2", ROCE), entry("d1", IB, "ib"), entry("d2", IB, "ib")])
    assert report["consistent"] is True
    assert [(c["scope"], c["hosts"]) for c in report["compared"]] == [
        ("fabric ib", ["d1", "d2"]), ("fabric roce", ["r1", "r2"])]


def test_everything_compared_together_shows_fabric_mix():
    report = fleet_diff({"r1": ROCE, "d1": IB, "d2": IB})
    assert report["compared"][0]["scope"] == "fabric any"
    assert sorted(report["outliers"]) == ["r1"]
    assert sorted(o["setting"] for o in report["outliers"]["r1"]) == [
        "NCCL_IB_GID_INDEX", "NCCL_IB_HCA", "NCCL_IB_SL", "NCCL_IB_TC"]


def test_named_groups_and_unchecked_hosts():
    report = fleet_diff([
        entry("a1", ROCE, groups=["rack_a", "gpu_nodes"]),
        entry("a2", ROCE, groups=["rack_a"], NCCL_IB_TC=104),
        entry("a3", ROCE, groups=["rack_a"]),
        entry("b1", ROCE, groups=["rack_b"], NCCL_IB_TC=104),
        entry("b2", ROCE, groups=["rack_b"], NCCL_IB_TC=104),
        entry("x", ROCE, groups=["other"], NCCL_IB_TC=0),
    ], groups=["rack_a", "rack_b"])
    assert report["unchecked"] == ["x"]
    assert sorted(report["outliers"]) == ["a2"]  # rack_b agrees with itself on 104
    assert report["outliers"]["a2"][0]["scope"] == "group rack_a"


def test_host_in_two_groups_is_compared_in_each():
    report = fleet_diff([
        entry("a", ROCE, groups=["g1", "g2"]), entry("b", ROCE, groups=["g1"]),
        entry("c", ROCE, groups=["g1"], NCCL_CROSS_NIC=1), entry("d", ROCE, groups=["g2"], NCCL_CROSS_NIC=1),
        entry("e", ROCE, groups=["g2"], NCCL_CROSS_NIC=1)], groups=["g1", "g2"])
    assert sorted(report["outliers"]) == ["a", "c"]
    assert report["outliers"]["a"][0]["scope"] == "group g2"
    assert report["outliers"]["c"][0]["scope"] == "group g1"


def test_custom_per_node_list():
    report = fleet_diff([entry("a", ROCE, NCCL_SOCKET_IFNAME="=eth0"), entry("b", ROCE, NCCL_SOCKET_IFNAME="=eth1"),
                         entry("c", ROCE, NCCL_SOCKET_IFNAME="=eth2")],
                        per_node=list(PER_NODE_DEFAULT) + ["NCCL_SOCKET_IFNAME"])
    assert report["consistent"] is True
    report = fleet_diff([entry("a", ROCE, NCCL_SOCKET_IFNAME="=eth0"), entry("b", ROCE, NCCL_SOCKET_IFNAME="=eth1")])
    assert sorted(report["outliers"]) == ["a", "b"]


def test_single_host_set_has_nothing_to_compare():
    report = fleet_diff([entry("only", ROCE)])
    assert report["consistent"] is True and report["compared"][0]["differences"] == []


@pytest.mark.parametrize("entries, groups, message", [
    ("n1", None, "expected a list"),
    ([{"settings": {}}], None, "entries[0]: expected a dict with 'host'"),
    ([{"host": "a", "settings": "NCCL_IB_TC=106"}], None, "entries[0] (a): settings must be a dict"),
    ([{"host": "a"}, {"host": "a"}], None, "host a is listed twice"),
    ([{"host": "a"}], "rack_a", "groups must be a list"),
])
def test_bad_input(entries, groups, message):
    with pytest.raises(NcclError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        fleet_diff(entries, groups=groups)


def test_outlier_messages_for_unknown_host_is_empty():
    assert outlier_messages(fleet_diff([entry("a", ROCE)]), "zzz") == []
    assert outlier_messages(None, "a") == []


def test_as_text():
    assert [as_text(v) for v in (None, True, False, 106, "PIX")] == [None, "1", "0", "106", "PIX"]


# ------------------------------------------------------------------ conf_diff

def test_conf_diff_round_trip_of_rendered_file():
    text = render_conf(ROCE, header="Managed by Ansible\nrails: GPU0 mlx5_0 PIX")
    assert conf_diff(text, ROCE) == []
    assert conf_diff(text, dict(ROCE, NCCL_IB_TIMEOUT=None)) == []


def test_conf_diff_reports_missing_different_and_extra():
    text = "# header\nNCCL_IB_TC=104\nNCCL_IB_HCAS==mlx5_0\nNCCL_NET_GDR_LEVEL=PIX\n"
    assert conf_diff(text, {"NCCL_IB_TC": 106, "NCCL_NET_GDR_LEVEL": "PIX", "NCCL_IB_HCA": "=mlx5_0"}) == [
        "NCCL_IB_HCA is missing (intended =mlx5_0)",
        "NCCL_IB_HCAS==mlx5_0 is in the file but not intended",
        "NCCL_IB_TC is '104' in the file, intended '106'",
    ]


def test_conf_diff_reads_like_nccl():
    # First '=' splits (the official example's exact-match IFNAME), values are not trimmed,
    # the first duplicate wins, CRLF endings are stripped.
    text = "NCCL_SOCKET_IFNAME==ens1f0\r\nNCCL_IB_TC=106 \nNCCL_CROSS_NIC=1\nNCCL_CROSS_NIC=0\n"
    assert conf_diff(text, {"NCCL_SOCKET_IFNAME": "=ens1f0", "NCCL_IB_TC": 106, "NCCL_CROSS_NIC": True}) == [
        "NCCL_IB_TC is '106 ' in the file, intended '106'"]


def test_conf_diff_bad_settings():
    with pytest.raises(NcclError, match="settings must be a dict"):
        conf_diff("", ["NCCL_IB_TC"])
