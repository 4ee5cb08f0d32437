# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arista EOS: pyavd (the AVD project's own library, requirements.txt) validates the AVD
structured config the switch_qos intent renders, and its EOS CLI holds PFC no-drop on 3, DSCP 26
to TC 3 and ECN from 200 to 2,000 KB; what EOS refuses is refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _render

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.switch.switch_qos_helpers import leaf

pyavd = pytest.importorskip("pyavd")


@pytest.fixture(scope="module")
def plan():
    return switch_qos.plan(leaf("eos", ports=[{"name": "Ethernet1", "speed": 100, "host": "lab-hgx-01",
                                               "host_interface": "eth0"}]), "leaf-eos")


def test_pyavd_accepts_the_structured_config_and_its_cli_holds_the_three_lines(plan):
    violations, cli = _render.validate_eos_with_pyavd(plan["rendered"])
    assert violations == []
    lines = [line.strip() for line in cli.splitlines()]
    assert "priority-flow-control priority 3 no-drop" in lines
    assert "qos map dscp 26 to traffic-class 3" in lines
    assert ("random-detect ecn minimum-threshold 200 kbytes maximum-threshold 2000 kbytes max-mark-probability 100"
            in lines)
    assert "qos map dscp 48 to traffic-class 6" in lines
    assert "service-profile RDMA-FABRIC-ROCE-100G" in lines and "mtu 9216" in lines
    # the CNP class is strict, the watchdog drops after 200 ms
    assert "priority-flow-control pause watchdog port action drop" in lines
    assert "priority-flow-control pause watchdog port timer timeout 0.2 polling-interval 0.1 recovery-time 0.2" in lines


def test_pyavd_refuses_what_eos_refuses(plan):
    bad = copy.deepcopy(plan["rendered"])
    queue = [q for q in bad["qos_profiles"][0]["tx_queues"] if "random_detect" in q][0]
    queue["random_detect"]["ecn"]["threshold"]["min"] = 0
    violations, cli = _render.validate_eos_with_pyavd(bad)
    assert cli is None and any("min" in v and "below the minimum" in v for v in violations), violations
    # and our own check, before pyavd (which does not compare max with min)
    assert any("min=0" in e for e in _render.check_eos(bad))
    queue["random_detect"]["ecn"]["threshold"].update(min=2000, max=200)
    assert _render.validate_eos_with_pyavd(bad)[0] == []
    assert any("maximum-threshold 200 below minimum-threshold 2000" in e for e in _render.check_eos(bad))


def test_a_watchdog_action_eos_lacks_is_refused_by_the_plan():
    with pytest.raises(PlanError) as exc:
        switch_qos.plan(leaf("eos", watchdog_action="forward"), "leaf-eos")
    assert "PFC watchdog action 'forward': EOS takes drop or notify-only" in str(exc.value)


def test_a_400g_port_gets_the_scaled_row():
    plan = switch_qos.plan(leaf("eos", speed=400), "leaf-eos")
    _v, cli = _render.validate_eos_with_pyavd(plan["rendered"])
    assert "random-detect ecn minimum-threshold 800 kbytes maximum-threshold 8000 kbytes" in cli
