# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch intent against the hosts: a lab host whose LLDP neighbour (its leaf port)
advertises PFC on 4 instead of 3 is one record naming both ends. The host's view is read by the
health check's own reader (_health_read.derive_lossless) from lldptool text built of the cited
samples (test_health_lossless.IEEE_SWITCH: a real neighbour header with openlldp-printed TLVs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _agreement

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.reports import test_health_lossless as L
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.switch.switch_qos_helpers import leaf

PORT = {"name": "Ethernet12", "speed": 400, "host": "lab-hgx-01", "host_interface": "eth0"}


def _view(peer_text):
    errors = []
    views = _health_read.derive_lossless(L.raw_lldp(peer=peer_text), errors)
    assert errors == []
    return views["eth0"]


def _intent():
    return switch_qos.intent(leaf("sonic", ports=[PORT]))


def test_a_leaf_that_agrees_gives_no_record():
    assert _agreement.port_records("leaf-sonic-01", _intent(), PORT, _view(L.IEEE_SWITCH)) == []


def test_pfc_on_4_instead_of_3_names_both_ends():
    peer = L.IEEE_SWITCH.replace("PFC enabled: 3 ", "PFC enabled: 4 ")
    assert peer != L.IEEE_SWITCH
    view = _view(peer)
    assert view["peer"]["pfc"]["enabled"] == [4] and view["host"]["pfc"] == [3]
    records = _agreement.port_records("leaf-sonic-01", _intent(), PORT, view)
    assert len(records) == 1, records
    rec = records[0]
    assert (rec["host"], rec["area"], rec["object"], rec["setting"], rec["expected"]) == (
        "leaf-sonic-01", "switch_qos", "Ethernet12", "lldp.pfc", "3")
    assert "port Ethernet12 advertises PFC on 4" in rec["actual"]
    assert "host lab-hgx-01 eth0, which has PFC on 3" in rec["actual"]


def test_the_host_end_differing_from_the_intent_is_named():
    view = _view(L.IEEE_SWITCH)
    view["host"]["pfc"] = [3, 4]
    records = _agreement.port_records("leaf-sonic-01", _intent(), PORT, view)
    # the switch port advertises what the intent says: only the host end is named
    assert [(r["setting"], r["expected"]) for r in records] == [("pfc", "3")]
    assert "host lab-hgx-01 eth0 has PFC on 3,4" in records[0]["actual"]


def test_the_host_ets_differing_from_the_intent_is_named():
    view = _view(L.IEEE_SWITCH)
    assert view["host"]["ets"]["tsa"][3] == "ets" and view["host"]["ets"]["tcbw"][3] == 50
    view["host"]["ets"] = dict(view["host"]["ets"], tcbw=[70, 0, 0, 30, 0, 0, 0, 0])
    records = _agreement.port_records("leaf-sonic-01", _intent(), PORT, view)
    assert [(r["setting"], r["expected"]) for r in records] == [("ets.priority_0", "ets 50%"),
                                                                ("ets.priority_3", "ets 50%")]
    assert "host lab-hgx-01 eth0 has priority 3 in TC 3: ets 30%" in records[1]["actual"]


def test_app_entries_for_another_priority_are_named():
    view = _view(L.IEEE_SWITCH)
    view["peer"]["app"] = [{"selector": 3, "protocol": 4791, "priority": 4},
                           {"selector": 5, "protocol": 26, "priority": 3}]
    records = _agreement.port_records("leaf-sonic-01", _intent(), PORT, view)
    assert [(r["setting"], r["expected"]) for r in records] == [("lldp.app.udp_4791", "priority 3")]
    assert "advertises UDP 4791 -> priority 4 (seen by host lab-hgx-01 eth0)" in records[0]["actual"]
    view["peer"]["app"] = []
    assert [r["setting"] for r in _agreement.port_records("leaf-sonic-01", _intent(), PORT, view)] == [
        "lldp.app.udp_4791", "lldp.app.dscp_26"]


def test_fleet_records_read_the_views_by_host_and_netdev():
    peer = L.IEEE_SWITCH.replace("PFC enabled: 3 ", "PFC enabled: 4 ")
    intent = _intent()
    assert _agreement.fleet_records("leaf", intent, {"lab-hgx-01": {"eth0": _view(peer)}})[0]["setting"] == "lldp.pfc"
    assert _agreement.fleet_records("leaf", intent, {"lab-hgx-01": {"eth9": _view(peer)}}) == []


def test_ecn_advice_from_the_counters():
    intent = switch_qos.intent(leaf("sonic", ports=[PORT]))
    port = intent["ports"][0]                 # 400 Gb/s: 800 KB min, BDP 1,000 KB
    low = dict(port, ecn={"min_kb": 200, "max_kb": 2000, "probability": 100})
    rec = _agreement.ecn_advice("leaf", low, {"cnp_sent": 10000.0})
    assert rec["setting"] == "ecn.min_kb" and "too low for the link speed" in rec["actual"]
    assert "10000 CNPs/s" in rec["actual"] and "1000 KB" in rec["expected"]
    high = dict(port, ecn={"min_kb": 5000, "max_kb": 20000, "probability": 100})
    rec = _agreement.ecn_advice("leaf", high, {"rx_pause": 12.0, "ecn_marked": 0})
    assert "too high for the link speed" in rec["actual"]
    # no surge: nothing to say; a surge with a min at or above the BDP is not the thresholds' doing
    assert _agreement.ecn_advice("leaf", port, {"cnp_sent": 10.0}) is None
    deep = dict(port, ecn={"min_kb": 1200, "max_kb": 12000, "probability": 100})
    assert _agreement.ecn_advice("leaf", deep, {"cnp_sent": 10000.0}) is None
    assert [r["object"] for r in _agreement.fleet_advice("leaf", dict(intent, ports=[low]), {"lab-hgx-01": {"eth0": {"cnp_sent": 5000.0}}})] == ["Ethernet12"]
