# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_fleet_diff, nccl_parse_conf, nccl_conf_diff filters: names, results, errors as filter errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.nccl_fleet import FilterModule

FILTERS = FilterModule().filters()


def test_filter_names():
    assert sorted(FILTERS) == ["nccl_conf_diff", "nccl_fleet_diff", "nccl_parse_conf"]


def test_fleet_diff_filter():
    entries = [{"host": h, "settings": {"NCCL_IB_TC": tc}, "fabric": "roce"} for h, tc in (("a", 106), ("b", 106), ("c", 104))]
    report = FILTERS["nccl_fleet_diff"](entries)
    assert report["messages"] == {"c": ["fabric roce: NCCL_IB_TC = 104, most hosts have 106"]}
    report = FILTERS["nccl_fleet_diff"](entries, per_node=["NCCL_IB_TC"])
    assert report["consistent"] is True


def test_parse_conf_filter_official_example():
    # samples/nccl.txt: the official example file, exact-match IFNAME through the first '='.
    assert FILTERS["nccl_parse_conf"]("NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME==ens1f0\n") == {
        "NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "=ens1f0"}


def test_conf_diff_filter():
    assert FILTERS["nccl_conf_diff"]("NCCL_IB_TC=106\n", {"NCCL_IB_TC": 106}) == []
    assert FILTERS["nccl_conf_diff"]("", {"NCCL_IB_TC": 106}) == ["NCCL_IB_TC is missing (intended 106)"]


@pytest.mark.parametrize("name, args", [
    ("nccl_fleet_diff", ("not entries",)),
    ("nccl_parse_conf", (None,)),
    ("nccl_conf_diff", (b"NCCL_IB_TC=106", {})),
    ("nccl_conf_diff", ("", "NCCL_IB_TC")),
])
def test_errors_are_filter_errors_naming_the_filter(name, args):
    with pytest.raises(AnsibleFilterError, match="^%s: " % name):
        FILTERS[name](*args)
