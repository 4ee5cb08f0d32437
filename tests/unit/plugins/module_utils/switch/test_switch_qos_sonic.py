# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Community SONiC: the CONFIG_DB tables the intent renders pass the sonic-yang-models
constraints (each check cites its YANG module), refuse what they refuse, and never bind the
default AZURE map; a running switch that keeps AZURE is named with both ends."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _agreement, _render

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.switch.switch_qos_helpers import leaf


@pytest.fixture(scope="module")
def plan():
    ports = [{"name": "Ethernet0", "speed": 100, "host": "lab-hgx-01", "host_interface": "eth0"},
             {"name": "Ethernet8", "speed": 400, "host": "lab-hgx-02", "host_interface": "eth0"}]
    return switch_qos.plan(leaf("sonic", ports=ports, hosts={"lab-hgx-01": {}, "lab-hgx-02": {}}), "leaf-sonic")


def test_config_db_passes_the_yang_checks(plan):
    db = plan["rendered"]
    assert _render.check_sonic(db) == []
    assert db["DSCP_TO_TC_MAP"]["RDMA_FABRIC"]["26"] == "3" and db["DSCP_TO_TC_MAP"]["RDMA_FABRIC"]["48"] == "6"
    assert len(db["DSCP_TO_TC_MAP"]["RDMA_FABRIC"]) == 64          # every DSCP, no default left to chance
    for port in ("Ethernet0", "Ethernet8"):
        entry = db["PORT_QOS_MAP"][port]
        assert entry["pfc_enable"] == "3" and entry["dscp_to_tc_map"] == "RDMA_FABRIC"
        assert _render.SONIC_DEFAULT_MAP not in entry.values()
    assert db["QUEUE"]["Ethernet0|3"]["wred_profile"] == "RDMA_FABRIC_ECN_100G"
    assert db["QUEUE"]["Ethernet8|3"]["wred_profile"] == "RDMA_FABRIC_ECN_400G"
    assert "wred_profile" not in db["QUEUE"]["Ethernet0|0"]
    assert db["WRED_PROFILE"]["RDMA_FABRIC_ECN_100G"]["green_min_threshold"] == "200000"
    assert db["WRED_PROFILE"]["RDMA_FABRIC_ECN_100G"]["green_max_threshold"] == "2000000"
    assert db["PFC_WD"]["Ethernet0"] == {"action": "drop", "detection_time": "200", "restoration_time": "200"}
    assert db["TC_TO_PRIORITY_GROUP_MAP"]["RDMA_FABRIC"]["3"] == "3"
    assert db["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"]["RDMA_FABRIC"] == {"3": "3"}
    assert db["PORT_QOS_MAP"]["Ethernet0"]["pfc_to_pg_map"] == "RDMA_FABRIC"
    assert db["CABLE_LENGTH"]["AZURE"]["Ethernet0"] == "40m"


@pytest.mark.parametrize("mutate,needle", [
    (lambda db: db["WRED_PROFILE"]["RDMA_FABRIC_ECN_100G"].update(green_max_threshold="1000"),
     "green_max_threshold 1000 below green_min_threshold 200000 (sonic-yang-models yang-models/sonic-wred-profile.yang"),
    (lambda db: db["WRED_PROFILE"]["RDMA_FABRIC_ECN_100G"].update(ecn="ecn_blue"), "ecn 'ecn_blue'"),
    (lambda db: db["WRED_PROFILE"]["RDMA_FABRIC_ECN_100G"].update(green_drop_probability="101"),
     "green_drop_probability '101'"),
    (lambda db: db["PORT_QOS_MAP"]["Ethernet0"].update(dscp_to_tc_map="NOPE"),
     "dscp_to_tc_map='NOPE': no such DSCP_TO_TC_MAP (sonic-yang-models yang-models/sonic-port-qos-map.yang"),
    (lambda db: db["PORT_QOS_MAP"]["Ethernet0"].update(pfc_enable="3,8"), "pfc_enable='3,8'"),
    (lambda db: db["PORT_QOS_MAP"]["Ethernet0"].update(pfc_to_pg_map="AZURE"),
     "pfc_to_pg_map='AZURE': no such PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"),
    (lambda db: db["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"]["RDMA_FABRIC"].update({"3": "9"}), "3 -> '9'"),
    (lambda db: db["PFC_WD"]["Ethernet0"].update(detection_time="50"),
     "PFC_WD|Ethernet0 detection_time='50' (sonic-yang-models yang-models/sonic-pfcwd.yang"),
    (lambda db: db["PFC_WD"]["Ethernet0"].update(restoration_time="70000"), "restoration_time='70000'"),
    (lambda db: db["PFC_WD"]["Ethernet0"].update(action="reboot"), "action='reboot'"),
    (lambda db: db["PFC_WD"]["GLOBAL"].update(POLL_INTERVAL="5000"), "POLL_INTERVAL='5000'"),
    (lambda db: db["QUEUE"]["Ethernet0|3"].update(wred_profile="GONE"), "wred_profile='GONE': no such WRED_PROFILE"),
    (lambda db: db["CABLE_LENGTH"]["AZURE"].update(Ethernet0="40 meters"), "Ethernet0='40 meters'"),
    (lambda db: db["DSCP_TO_TC_MAP"]["RDMA_FABRIC"].update({"64": "0"}), "DSCP '64'"),
    (lambda db: db["SCHEDULER"]["RDMA_FABRIC_Q0"].update(weight="0"), "weight='0'"),
])
def test_each_yang_constraint_refuses(plan, mutate, needle):
    db = copy.deepcopy(plan["rendered"])
    mutate(db)
    refused = _render.check_sonic(db)
    assert any(needle in r for r in refused), refused


def test_a_watchdog_out_of_the_yang_range_is_refused_by_the_plan():
    with pytest.raises(PlanError) as exc:
        switch_qos.plan(leaf("sonic", watchdog_detect_ms=6000), "leaf-sonic")
    assert "PFC_WD|Ethernet0 detection_time='6000'" in str(exc.value)


# What a stock community SONiC leaf holds (sonic-buildimage files/build_templates/qos_config.j2):
# the AZURE DSCP map bound on the port, PFC on 3,4.
STOCK = {"DSCP_TO_TC_MAP": {"AZURE": dict((str(k), str(v)) for k, v in _render.SONIC_AZURE_DSCP_TO_TC.items())},
         "PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3,4"}}}


def test_a_switch_keeping_the_default_dscp_map_is_named(plan):
    assert STOCK["DSCP_TO_TC_MAP"]["AZURE"]["26"] == "1" and STOCK["DSCP_TO_TC_MAP"]["AZURE"]["3"] == "3"
    intent = dict(plan["intent"], ports=plan["intent"]["ports"][:1])
    records = _agreement.running_records("leaf-sonic", "sonic", STOCK, intent)
    by_setting = dict((r["setting"], r) for r in records)
    rec = by_setting["dscp_to_tc_map.26"]
    assert (rec["host"], rec["area"], rec["object"], rec["expected"]) == ("leaf-sonic", "switch_qos", "Ethernet0",
                                                                          "TC 3")
    assert "DSCP_TO_TC_MAP|AZURE sends DSCP 26 to TC 1 (lossy: no PFC)" in rec["actual"]
    assert "SONiC's default map" in rec["actual"] and "host lab-hgx-01 eth0 marks its RoCE data" in rec["actual"]
    assert by_setting["pfc_enable"]["actual"].startswith("PORT_QOS_MAP|Ethernet0 pfc_enable=3,4")
    # 48 -> 6 is right in AZURE: no record for the CNPs
    assert "dscp_to_tc_map.48" not in by_setting
    # the AZURE map bound but absent from the dump (a partial read): the known default is used
    partial = {"PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "AZURE"}}}
    assert [r["setting"] for r in _agreement.running_records("leaf-sonic", "sonic", partial, intent)] == [
        "dscp_to_tc_map.26"]


def test_the_rendering_applied_over_the_stock_switch_leaves_no_record(plan):
    merged = copy.deepcopy(STOCK)
    for table, entries in plan["rendered"].items():
        for key, value in entries.items():
            merged.setdefault(table, {}).setdefault(key, {}).update(value)     # CONFIG_DB merges fields
    assert _agreement.running_records("leaf-sonic", "sonic", merged, plan["intent"]) == []
