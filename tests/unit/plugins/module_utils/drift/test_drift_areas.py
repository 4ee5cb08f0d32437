# -*- coding: utf-8 -*-
"""The drift check's areas: requests from a role's inputs, records from the results."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A

CONF = "guid 0x0000000000100001\nsm_priority 14\nsm_key 0x00000000c0ffee01\n"
GUID = "0x0000000000100001"


def opensm_inputs(sm):
    """plan_inputs' opensm inputs: the area's plan (areas/opensm.py) and the fabric's SMs."""
    files = [{"path": "/etc/opensm/opensm.conf", "content": CONF, "mode": "0600"}]
    units = [{"name": "opensm.service", "enabled": True, "active": True}]
    plan = {"errors": [], "ports_needed": False, "sm_expected": {"guid": GUID, "role": "master", "priority": 14},
            "requests": [{"resource": "node_files", "name": "OpenSM files", "options": {"content": True},
                          "config": {"files": files, "units": units}}]}
    return {"area": "opensm", "errors": [], "plan": plan, "sm": sm}


def test_opensm_live_state_one_master_intended_state_and_priority():
    sm = {"master_count": 2, "sm_ports": [
        {"guid": GUID, "state": "standby", "priority": 13},
        {"guid": "0x0000000000100003", "state": "master", "priority": 15}]}
    judged, request = A.AREAS["opensm"](opensm_inputs(sm), "sm1")
    assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in judged["records"]] == [
        ("subnet", "masters", 1, 2), (GUID, "state", "master", "standby"), (GUID, "priority", 14, 13)]
    assert request["resource"] == "node_files" and request["options"] == {"content": True}
    assert request["area"] == "opensm"


def test_opensm_conf_key_by_key_and_the_key_never_printed():
    judged, request = A.AREAS["opensm"](opensm_inputs({"master_count": 1, "sm_ports": [
        {"guid": GUID, "state": "master", "priority": 14}]}), "sm1")
    assert judged["records"] == []
    edited = CONF.replace("sm_priority 14", "sm_priority 15").replace("c0ffee01", "00000001")
    result = {"before": {"files": {"/etc/opensm/opensm.conf": {"state": "present", "content": edited, "mode": "0600",
                                                               "owner": "root", "group": "root"}},
                         "units": {"opensm.service": {"enabled": True, "active": False}}},
              "after": {"files": {"/etc/opensm/opensm.conf": {"state": "present", "content": CONF, "mode": "0600",
                                                              "owner": "root", "group": "root"}},
                        "units": {"opensm.service": {"enabled": True, "active": True}}}}
    entry = {"area": "opensm", "resource": "node_files", "name": "OpenSM files", "failed": False, "result": result}
    records = A.judge("sm1", [request], [entry])
    assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in records] == [
        ("/etc/opensm/opensm.conf", "sm_key", "(hidden, differs)", "(hidden, differs)"),
        ("/etc/opensm/opensm.conf", "sm_priority", "14", "15"),
        ("opensm.service", "active", True, False)]
    assert "c0ffee" not in repr(records) and "00000001" not in repr(records)


def test_gpudirect_kernel_arguments_are_judged_by_the_area_object():
    """The drift check names a kernel argument as the role's verify does (areas/gpudirect.py
    records; test_area_gpudirect has every case)."""
    entry = {"area": "gpudirect", "resource": "kernel_cmdline", "name": "kernel arguments", "failed": False,
             "result": {"before": {"arguments": ["quiet", "iommu=off"]}, "after": {"arguments": ["quiet", "iommu=pt"]}}}
    assert A.judge("h", [{}], [entry]) == [
        A.record("h", "gpudirect", "boot configuration", "iommu", "iommu=pt", "iommu=off")]


def test_config_errors_are_records_not_silence():
    records = A.AREAS["roce_qos"]({"errors": ["roce_qos_lossless_priority=9: priority must be 0-7"]}, "h")
    assert records == [{"records": [A.record("h", "roce_qos", "", "config", "valid",
                                             "roce_qos_lossless_priority=9: priority must be 0-7")]}]


def test_a_config_error_on_the_drift_check_names_the_role_variable():
    """The drift check plans roce_qos without the role's filter: a bad roce_qos_tcbw is named as
    the variable the user set, as the role names it, not as the module's field (issue 26)."""
    from ansible_collections.rdma.fabric.tests.unit.bad_input.test_bad_input import _roce_settings
    settings = _roce_settings(tcbw=[50, 0, 0, 40, 0, 0, 0, 0])
    inputs = A.plan_inputs("roce_qos", {"settings": settings}, {"rdma": {}}, "h")
    assert inputs["errors"] and all("roce_qos (mlnx_qos)" not in e for e in inputs["errors"])
    assert any("roce_qos_tcbw" in e for e in inputs["errors"]), inputs["errors"]
