# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health check's lossless agreement with the switch_qos intent as its value: ends that agree
with each other but not with the intent are a finding; with ``true`` it judges as before. Inputs:
the cited lldptool and mlnx_qos samples of test_health_lossless."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.reports import test_health_lossless as L
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.switch.switch_qos_helpers import leaf


def _intent(pfc):
    return {"pfc_priorities": pfc}


def test_ends_agreeing_with_each_other_and_the_intent_give_nothing():
    intent = switch_qos.intent(leaf("sonic"))
    assert L.found(L.raw_lldp(), {"lossless": {"pfc_priorities": intent["pfc_priorities"]}}) == []


def test_ends_agreeing_with_each_other_but_not_with_the_intent():
    findings, _obs = L.judged(L.raw_lldp(), {"lossless": _intent([4])})
    assert [(f["check"], f["subject"], f["expected"], f["actual"]) for f in findings] == [
        ("lossless_agreement", "eth0 PFC", "PFC on priorities 4 (switch_qos intent)", "host and switch: 3")]
    assert "playbooks/switch_qos.yml" in findings[0]["remedy"]
    # the host's view alone (true) cannot see it
    assert L.found(L.raw_lldp(), {"lossless": True}) == []


def test_ends_that_disagree_keep_the_host_view_finding():
    peer = L.IEEE_SWITCH.replace("PFC enabled: 3 ", "PFC enabled: 4 ")
    findings, _obs = L.judged(L.raw_lldp(peer=peer), {"lossless": _intent([3])})
    assert [(f["subject"], f["expected"], f["actual"]) for f in findings] == [
        ("eth0 PFC", "PFC on priorities 3 (host)", "switch: 4")]
