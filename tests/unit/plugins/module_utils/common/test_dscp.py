# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_dscp, the one home of DSCP / ToS / ECN arithmetic, against real values (samples nccl.txt
NCCL_IB_TC=106, mlnx_qos.txt's default dscp2prio map, cma_roce_mode.txt's ToS 106)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import _dscp
from ansible_collections.rdma.fabric.tests.unit import samples

NCCL = samples.load("nccl.txt")
MLNX_QOS = samples.load("mlnx_qos.txt")
CMA = samples.load("cma_roce_mode.txt")


def test_roce_profile_tos_is_dscp_26_with_ect0():
    tc = int(re.search(r"NCCL_IB_TC=(\d+)", NCCL["NCCL-REAL-ENV-ROCE-H100"].raw).group(1))
    assert tc == _dscp.tos(26, "ect(0)") == _dscp.tos(26, _dscp.ECN_ECT0)
    assert _dscp.dscp_of_tos(tc) == 26
    assert _dscp.ECN_NAMES[_dscp.ecn_of_tos(tc)] == "ECT(0)"
    assert _dscp.default_priority(_dscp.dscp_of_tos(tc)) == 3
    set_tos = int(CMA["CMA-RECON-TOS"].raw.strip().splitlines()[-1])
    assert _dscp.dscp_of_tos(set_tos) == 26


def test_default_priority_is_mlx5s_default_map():
    raw = MLNX_QOS["MQ-MOCK-B-ROCE"].raw
    table = {}
    for prio, dscps in re.findall(r"prio:(\d) dscp:([0-9,]+)", raw):
        for dscp in filter(None, dscps.split(",")):
            table[int(dscp)] = int(prio)
    assert sorted(table) == list(range(64))
    assert all(_dscp.default_priority(d) == p for d, p in table.items())


@pytest.mark.parametrize("dscp, ecn, tos", [
    (26, 0, 104), (26, 2, 106), (26, "ect0", 106), (26, "ECT(0)", 106), (26, True, 106), (26, False, 104),
    (26, "not-ect", 104), (26, "ect1", 105), (26, "ce", 107), (0, 0, 0), (63, 3, 255), (48, 0, 192),
    ("26", "2", 106), (" 26 ", 2, 106),
])
def test_tos_arithmetic(dscp, ecn, tos):
    assert _dscp.tos(dscp, ecn) == tos
    assert _dscp.dscp_of_tos(tos) == int(str(dscp).strip())
    assert _dscp.ecn_of_tos(tos) == _dscp.ecn_bits(ecn)


def test_cnp_dscp_48_is_priority_6():
    assert _dscp.default_priority(48) == 6


@pytest.mark.parametrize("call, message", [
    (lambda: _dscp.tos(64), "dscp must be an integer 0-63, got 64"),
    (lambda: _dscp.tos(-1), "dscp must be an integer 0-63, got -1"),
    (lambda: _dscp.tos(True), "dscp must be an integer 0-63, got True"),
    (lambda: _dscp.tos("26a"), "dscp must be an integer 0-63, got '26a'"),
    (lambda: _dscp.tos(None), "dscp must be an integer 0-63, got None"),
    (lambda: _dscp.tos(26.0), "dscp must be an integer 0-63, got 26.0"),
    (lambda: _dscp.tos(26, 4), "ecn must be 0-3, got 4"),
    (lambda: _dscp.tos(26, "7"), "ecn must be 0-3, got '7'"),
    (lambda: _dscp.tos(26, "ect2"), "ecn must be 0-3, true/false or one of ce, ect(0), ect(1), ect0, ect1, "
                                    "not-ect, not_ect, got 'ect2'"),
    (lambda: _dscp.dscp_of_tos(256), "tos must be an integer 0-255, got 256"),
    (lambda: _dscp.ecn_of_tos(-1), "tos must be an integer 0-255, got -1"),
    (lambda: _dscp.default_priority(64), "dscp must be an integer 0-63, got 64"),
    (lambda: _dscp.check_dscp(70, "roce_qos_roce_dscp"), "roce_qos_roce_dscp must be an integer 0-63, got 70"),
])
def test_refused_with_the_value_named(call, message):
    with pytest.raises(ValueError) as exc:
        call()
    assert str(exc.value) == message


def test_tos_mismatch():
    assert _dscp.tos_mismatch(106, 26) is None
    assert _dscp.tos_mismatch(104, 26) is None       # Not-ECT still carries DSCP 26
    message = _dscp.tos_mismatch(106, 24, "roce_qos_default_tos", "roce_qos_roce_dscp")
    assert message == ("roce_qos_default_tos 106 carries DSCP 26 (106 >> 2), but roce_qos_roce_dscp is 24; "
                       "the ToS for DSCP 24 is 96, or 98 with ECT(0)")
    with pytest.raises(ValueError, match="roce_qos_default_tos must be an integer 0-255, got 300"):
        _dscp.tos_mismatch(300, 26, "roce_qos_default_tos")
