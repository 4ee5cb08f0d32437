# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cumulus Linux: the nv set lines match the intent, each difference from NVIDIA's lossless
defaults (nv set qos roce: 150,000 / 1,501,500 bytes) is explained, and NVUE's refusals are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _render

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.switch.switch_qos_helpers import leaf


def _plan(**kwargs):
    return switch_qos.plan(leaf("cumulus", ports=[{"name": "swp1", "speed": 100, "host": "lab-hgx-01",
                                                   "host_interface": "eth0"}], **kwargs), "leaf-cumulus")


def test_the_lines_match_the_intent():
    plan = _plan()
    lines, intent = plan["rendered"], plan["intent"]
    for dscp, tc in intent["dscp_to_tc"].items():
        assert "nv set qos mapping default-global dscp %d switch-priority %d" % (dscp, tc) in lines
    assert "nv set qos pfc default-global switch-priority 3" in lines
    assert "nv set qos congestion-control rdma-fabric-100g traffic-class 3 min-threshold 200000" in lines
    assert "nv set qos congestion-control rdma-fabric-100g traffic-class 3 max-threshold 2000000" in lines
    assert "nv set qos congestion-control rdma-fabric-100g traffic-class 3 probability 100" in lines
    assert "nv set qos congestion-control rdma-fabric-100g traffic-class 3 ecn enable" in lines
    assert "nv set qos egress-scheduler default-global traffic-class 6 mode strict" in lines
    assert "nv set qos egress-scheduler default-global traffic-class 3 bw-percent 50" in lines
    assert "nv set qos pfc default-global cable-length 40" in lines
    assert "nv set interface swp1 link mtu 9216" in lines
    assert "nv set interface swp1 qos congestion-control profile rdma-fabric-100g" in lines
    # ECN only on the lossless class: no congestion-control line for another TC
    assert not [line for line in lines if line.startswith("nv set qos congestion-control") and "traffic-class 3 " not in line]
    assert _render.check_cumulus(lines) == []


def test_each_port_speed_has_its_own_ecn_profile():
    ports = [{"name": "swp1", "speed": 400, "host": "lab-hgx-01", "host_interface": "eth0"},
             {"name": "swp2", "speed": 100, "host": "lab-hgx-01", "host_interface": "eth1"}]
    lines = switch_qos.plan(leaf("cumulus", ports=ports), "leaf-cumulus")["rendered"]
    assert "nv set qos congestion-control rdma-fabric-400g traffic-class 3 min-threshold 800000" in lines
    assert "nv set qos congestion-control rdma-fabric-100g traffic-class 3 min-threshold 200000" in lines
    assert "nv set interface swp1 qos congestion-control profile rdma-fabric-400g" in lines
    assert "nv set interface swp2 qos congestion-control profile rdma-fabric-100g" in lines
    assert _render.check_cumulus(lines) == []


def test_each_difference_from_nvidia_defaults_is_explained():
    diffs = dict((d[0], d) for d in _render.nvue_differences(_plan()["intent"]))
    assert diffs["ecn thresholds"][1] == "200000/2000000 bytes at 100 Gb/s"
    assert diffs["ecn thresholds"][2] == "150000/1501500 bytes" and "bandwidth-delay product" in diffs["ecn thresholds"][3]
    assert set(diffs) == {"ecn thresholds", "ecn traffic classes", "trust"}
    assert all(d[3] for d in diffs.values())
    # NVIDIA's max is 1,501,500 bytes, not 1,500 KB: a 150/1,500 KB row is still a difference, named
    same = _plan(ecn_thresholds={100: {"min_kb": 150, "max_kb": 1500, "probability": 100}})
    assert dict((d[0], d) for d in _render.nvue_differences(same["intent"]))["ecn thresholds"][1] == (
        "150000/1500000 bytes at 100 Gb/s")


@pytest.mark.parametrize("line,needle", [
    ("nv set qos congestion-control rdma-fabric-100g traffic-class 3 min-threshold 0", "a threshold of 0 bytes"),
    ("nv set qos congestion-control rdma-fabric-100g traffic-class 3 probability 0", "probability is 1-100"),
    ("nv set qos pfc-watchdog polling-interval 50", "the polling interval is 100-5000 ms"),
    ("nv set qos pfc default-global switch-priority 8", "switch priorities are 0-7"),
])
def test_nvue_refusals(line, needle):
    lines = _plan()["rendered"] + [line]
    assert any(needle in r for r in _render.check_cumulus(lines))


def test_max_below_min_is_refused():
    lines = [line for line in _plan()["rendered"] if "max-threshold" not in line]
    lines.append("nv set qos congestion-control rdma-fabric-100g traffic-class 3 max-threshold 1000")
    assert _render.check_cumulus(lines) == ["rdma-fabric-100g traffic-class 3: max-threshold 1000 below min-threshold 200000 (NVUE)"]
