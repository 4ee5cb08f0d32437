# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch_qos area: the intent derived from the hosts' roce_qos settings, and bad input named
by variable and value (a threshold of 0, max below min, a priority the hosts do not use, an
unknown switch OS, a speed with no ECN row, a leaf serving two groups of hosts)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _render

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.switch.switch_qos_helpers import ROCE_DEFAULTS, leaf


def test_intent_follows_the_hosts_roce_qos_defaults():
    want = switch_qos.intent(leaf("sonic"))
    assert want["roce_priority"] == ROCE_DEFAULTS["roce_qos_lossless_priority"] == 3
    assert want["dscp_to_tc"] == {26: 3, 48: 6}
    assert want["pfc_priorities"] == ROCE_DEFAULTS["roce_qos_pfc_priorities"]
    assert want["scheduler"] == [{"tc": 0, "type": "dwrr", "weight": 50}, {"tc": 3, "type": "dwrr", "weight": 50},
                                 {"tc": 6, "type": "strict"}]
    assert want["ports"][0]["ecn"] == {"min_kb": 200, "max_kb": 2000, "probability": 100}
    assert want["watchdog"] == {"detect_ms": 200, "restore_ms": 200, "action": "drop"}
    assert (want["cable_length_m"], want["mtu"]) == (40, 9216)


def test_intent_moves_with_the_hosts_settings():
    want = switch_qos.intent(leaf("sonic", hosts={"lab-hgx-01": {
        "roce_qos_roce_dscp": 24, "roce_qos_lossless_priority": 4, "roce_qos_pfc_priorities": [4],
        "roce_qos_dcqcn_priorities": [4], "roce_qos_prio_tc": [0, 0, 0, 0, 4, 0, 6, 0],
        "roce_qos_tsa": ["ets", "strict", "strict", "strict", "ets", "strict", "strict", "strict"],
        "roce_qos_tcbw": [40, 0, 0, 0, 60, 0, 0, 0], "roce_qos_cable_len": 100}}))
    assert want["dscp_to_tc"] == {24: 4, 48: 6} and want["pfc_priorities"] == [4]
    assert {"tc": 4, "type": "dwrr", "weight": 60} in want["scheduler"]
    assert want["cable_length_m"] == 100


def test_ecn_table_scales_the_seed_by_the_bandwidth_delay_product():
    table = switch_qos.default_ecn_table()
    assert table[100] == {"min_kb": 200, "max_kb": 2000, "probability": 100}
    assert table[400] == {"min_kb": 800, "max_kb": 8000, "probability": 100}
    assert table[25] == {"min_kb": 50, "max_kb": 500, "probability": 100}
    for speed, row in table.items():    # the seed's ratio to the BDP at every speed: 0.8 BDP
        assert row["min_kb"] == pytest.approx(0.8 * switch_qos.bdp_kb(speed), abs=1)


@pytest.mark.parametrize("variables,needle", [
    ({"ecn_thresholds": {100: {"min_kb": 0, "max_kb": 2000}}}, "switch_qos_ecn_thresholds.100.min_kb=0"),
    ({"ecn_thresholds": {100: {"min_kb": 2000, "max_kb": 200}}},
     "switch_qos_ecn_thresholds.100.max_kb=200 is below switch_qos_ecn_thresholds.100.min_kb=2000"),
    ({"ecn_thresholds": {100: {"min_kb": 200, "max_kb": 2000, "probability": 0}}},
     "switch_qos_ecn_thresholds.100.probability=0"),
    ({"pfc_priorities": [3, 4]}, "switch_qos_pfc_priorities=[3, 4]: priority 4 is not one the hosts use"),
    ({"pfc_priorities": []}, "no PFC on the RoCE priority 3 of lab-hgx-01"),
    ({"os": "junos"}, "switch_qos_os='junos': unknown switch OS"),
    ({"ports": [{"name": "Ethernet0", "speed": 800, "host": "lab-hgx-01"}]},
     "switch_qos_ports[0].speed=800: no ECN row for 800 Gb/s"),
    ({"ports": [{"name": "Ethernet0", "speed": 100, "host": "nohost"}]}, "switch_qos_ports[0].host='nohost'"),
    ({"watchdog_action": "explode"}, "switch_qos_watchdog_action='explode'"),
    ({"mtu": 9500}, "switch_qos_mtu=9500"),
])
def test_bad_input_names_the_variable_and_the_value(variables, needle):
    os_name = variables.pop("os", "sonic")
    settings = leaf(os_name, **variables)
    errors = switch_qos.config_errors(settings)
    assert any(needle in e for e in errors), errors
    with pytest.raises(PlanError) as exc:
        switch_qos.plan(settings, "leaf-1")
    assert needle in str(exc.value) and "leaf-1" in str(exc.value)


def test_a_port_host_missing_from_the_inventory_is_refused_not_defaulted():
    ports = [{"name": "Ethernet0", "speed": 100, "host": "lab-hgx-09", "host_interface": "eth0"}]
    errors = switch_qos.config_errors(leaf("sonic", ports=ports, hosts={}))
    assert errors == ["switch_qos_ports[0].host='lab-hgx-09': not a host of the inventory's RoCE hosts (none)"]


def test_good_input_has_no_error_on_every_os():
    for os_name in _render.OSES:
        assert switch_qos.config_errors(leaf(os_name)) == []


def test_a_leaf_serving_two_groups_of_hosts_is_an_error():
    ports = [{"name": "Ethernet0", "speed": 100, "host": "a", "host_interface": "eth0"},
             {"name": "Ethernet4", "speed": 100, "host": "b", "host_interface": "eth0"}]
    errors = switch_qos.config_errors(leaf("sonic", ports=ports, hosts={"a": {}, "b": {"roce_qos_roce_dscp": 24}}))
    assert len(errors) == 1 and "roce_qos_roce_dscp=26 on a, 24 on b" in errors[0], errors
    # the same settings on both: one group
    assert switch_qos.config_errors(leaf("sonic", ports=ports, hosts={"a": {}, "b": {}})) == []


def test_a_cnp_class_that_is_not_strict_is_refused():
    settings = leaf("sonic", hosts={"lab-hgx-01": {
        "roce_qos_tsa": ["ets", "strict", "strict", "ets", "strict", "strict", "ets", "strict"],
        "roce_qos_tcbw": [40, 0, 0, 40, 0, 0, 20, 0]}})
    errors = switch_qos.intent_errors(settings)
    assert any("TC6 of the CNP priority 6 is ets" in e and e.startswith("roce_qos_tsa=") for e in errors), errors


def test_a_host_roce_qos_error_is_named_with_the_host():
    errors = switch_qos.config_errors(leaf("sonic", hosts={"lab-hgx-01": {"roce_qos_pfc_priorities": [4]}}))
    assert any(e.startswith("lab-hgx-01: roce_qos_lossless_priority=3 has no PFC") for e in errors), errors


def test_records_have_the_drift_shape():
    rec = switch_qos.records("leaf-1", [("Ethernet0", "pfc", "3", "host x eth0 has 4")])
    assert rec == [{"host": "leaf-1", "area": "switch_qos", "object": "Ethernet0", "setting": "pfc",
                    "expected": "3", "actual": "host x eth0 has 4"}]


def test_the_argument_spec_choices_are_the_table_of_switch_oses():
    import os
    import yaml
    from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.switch.switch_qos_helpers import REPO
    with open(os.path.join(REPO, "roles", "switch_qos", "meta", "argument_specs.yml")) as handle:
        options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    assert sorted(options["switch_qos_os"]["choices"]) == sorted(_render.OSES)
    assert sorted(options["switch_qos_watchdog_action"]["choices"]) == sorted(switch_qos.WATCHDOG_ACTIONS)
