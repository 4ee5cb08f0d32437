# -*- coding: utf-8 -*-
"""The nic_firmware area object (plugins/module_utils/areas/nic_firmware.py): settings from the
role's defaults, every error naming its variable and value, the profiles per link layer and per
function of a dual-port adapter, the records of an mlxconfig result, the fleet's firmware versions."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.filter.area import area_errors, area_plan, area_records
from ansible_collections.rdma.fabric.plugins.module_utils.areas import nic_firmware

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))


def _defaults(**over):
    with open(os.path.join(REPO, "roles", "nic_firmware", "defaults", "main.yml")) as handle:
        variables = yaml.safe_load(handle)
    variables.update(("nic_firmware_" + k, v) for k, v in over.items())
    return nic_firmware.spec(variables)


def _facts(*devices):
    """rdma_facts devices: (name, pci address, link layer)."""
    return {"devices": dict((name, {"name": name, "pci_address": bdf, "ports": [{"port": 1, "link_layer": layer}]})
                            for name, bdf, layer in devices)}


def test_the_defaults_match_the_argument_spec_and_roce_qos():
    with open(os.path.join(REPO, "roles", "nic_firmware", "meta", "argument_specs.yml")) as handle:
        options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    spec = _defaults()
    assert sorted("nic_firmware_" + k for k in spec["settings"]) == sorted(options)
    assert area_errors(spec, "nic_firmware") == []
    with open(os.path.join(REPO, "roles", "roce_qos", "defaults", "main.yml")) as handle:
        roce = yaml.safe_load(handle)
    # the NV CNP marking and CC priorities are the ones roce_qos sets at runtime
    assert spec["settings"]["cnp_dscp"] == roce["roce_qos_cnp_dscp"]
    assert spec["settings"]["cnp_priority"] == roce["roce_qos_cnp_priority"]
    assert spec["settings"]["cc_priorities"] == roce["roce_qos_dcqcn_priorities"]


def test_auto_profile_follows_each_ports_link_layer():
    plan = area_plan(_facts(("mlx5_0", "0000:18:00.0", "Ethernet"), ("mlx5_1", "0000:2a:00.0", "InfiniBand")),
                     "nic_firmware", _defaults())
    config = dict((c["device"], c["params"]) for c in plan["config"])
    assert config["mlx5_0"] == {"LINK_TYPE_P1": "ETH", "ROCE_CC_PRIO_MASK_P1": 8, "CNP_DSCP_P1": 48, "CNP_802P_PRIO_P1": 6,
                                "PCI_WR_ORDERING": "force_relax", "ADVANCED_PCI_SETTINGS": True, "ATS_ENABLED": False}
    assert config["mlx5_1"] == {"LINK_TYPE_P1": "IB", "PCI_WR_ORDERING": "force_relax", "ADVANCED_PCI_SETTINGS": True,
                                "ATS_ENABLED": False}
    assert plan["errors"] == [] and [r["resource"] for r in plan["requests"]] == ["mlxconfig"]
    # the role's boot record goes with the read (the drift check reads the record the role keeps)
    assert plan["requests"][0]["options"] == {"firmware": True, "boot_record": "/var/lib/rdma-fabric/mlxconfig-boot.json"}


def test_a_dual_port_adapter_gets_each_ports_parameters_on_its_own_function():
    plan = area_plan(_facts(("mlx5_0", "0000:3b:00.0", "Ethernet"), ("mlx5_1", "0000:3b:00.1", "Ethernet")),
                     "nic_firmware", _defaults(profile="roce", gpudirect=False, cc_priorities=[3, 4]))
    config = dict((c["device"], c["params"]) for c in plan["config"])
    assert config["mlx5_0"] == {"LINK_TYPE_P1": "ETH", "ROCE_CC_PRIO_MASK_P1": 24, "CNP_DSCP_P1": 48, "CNP_802P_PRIO_P1": 6}
    assert config["mlx5_1"] == {"LINK_TYPE_P2": "ETH", "ROCE_CC_PRIO_MASK_P2": 24, "CNP_DSCP_P2": 48, "CNP_802P_PRIO_P2": 6}


def test_host_parameters_add_override_and_remove():
    spec = _defaults(profile="ib", params={"SRIOV_EN": False, "ATS_ENABLED": None, "LINK_TYPE_P1": "VPI", "NUM_OF_VFS": 0},
                     max_acc_out_read=44)
    plan = area_plan(_facts(("mlx5_0", "0000:18:00.0", "InfiniBand")), "nic_firmware", spec)
    assert plan["config"] == [{"device": "mlx5_0", "params": {
        "LINK_TYPE_P1": "VPI", "PCI_WR_ORDERING": "force_relax", "ADVANCED_PCI_SETTINGS": True, "MAX_ACC_OUT_READ": 44,
        "SRIOV_EN": False, "NUM_OF_VFS": 0}}]


def test_profile_none_without_params_plans_no_call_and_devices_limit_the_plan():
    assert area_plan(_facts(("mlx5_0", "0000:18:00.0", "Ethernet")), "nic_firmware", _defaults(profile="none"))["requests"] == []
    plan = area_plan(_facts(("mlx5_0", "0000:18:00.0", "Ethernet"), ("mlx5_1", "0000:2a:00.0", "Ethernet")),
                     "nic_firmware", _defaults(devices=["0000:2a:00.0"]))
    assert [c["device"] for c in plan["config"]] == ["mlx5_1"]
    plan = area_plan(_facts(("mlx5_0", "0000:18:00.0", "Ethernet")), "nic_firmware", _defaults(devices=["mlx5_9"]))
    assert plan["errors"] == ["nic_firmware_devices: mlx5_9 not on this host (its RDMA devices: mlx5_0)"]


@pytest.mark.parametrize("name, value, message", [
    ("profile", "eth", "nic_firmware_profile='eth': one of auto, roce, ib, none"),
    ("cc_priorities", [3, 9], "nic_firmware_cc_priorities=[3, 9]: expected a non-empty list of priorities 0-7"),
    ("cc_priorities", [], "nic_firmware_cc_priorities=[]: expected a non-empty list of priorities 0-7"),
    ("cnp_dscp", 64, "nic_firmware_cnp_dscp=64: expected a DSCP 0-63"),
    ("cnp_priority", "high", "nic_firmware_cnp_priority='high': expected a priority 0-7"),
    ("max_acc_out_read", 300, "nic_firmware_max_acc_out_read=300: expected 0-255 or null (not managed)"),
    ("params", {"sriov_en": 1}, "nic_firmware_params: 'sriov_en' is not an mlxconfig parameter name"),
    ("params", {"SRIOV_EN": "yes please"}, "nic_firmware_params.SRIOV_EN='yes please': expected a number, a label"),
    ("params", {"NUM_OF_VFS": -1}, "nic_firmware_params.NUM_OF_VFS=-1: expected a number, a label"),
    ("devices", "mlx5_0", "nic_firmware_devices='mlx5_0': expected a list"),
    ("versions", {"MT_0000000838": "28.39"}, "nic_firmware_versions.MT_0000000838='28.39': expected a version"),
    ("reboot", "always", "nic_firmware_reboot='always': one of never, if_required"),
    ("reboot_timeout", 5, "nic_firmware_reboot_timeout=5: expected seconds, 60-86400"),
    ("boot_record", "state.json", "nic_firmware_boot_record='state.json': expected an absolute path"),
])
def test_every_error_names_the_variable_and_the_value(name, value, message):
    errors = area_errors(_defaults(**{name: value}), "nic_firmware")
    assert len(errors) == 1 and errors[0].startswith(message), errors
    # and the plan plans nothing for such settings
    plan = nic_firmware.plan(_facts(("mlx5_0", "0000:18:00.0", "Ethernet")), _defaults(**{name: value}))
    assert plan["requests"] == [] and plan["errors"] == errors


def _result(before, after, pending=None, not_taken=None, firmware=None):
    def dev(params, pend):
        return {"device": "mlx5_0", "pci_address": "0000:18:00.0", "params": params, "pending": pend}
    return {"before": [dev(before, sorted(pending or []))], "after": [dev(after, [])], "not_taken": not_taken or {},
            "firmware": firmware or {}, "changed": before != after}


def test_records_name_next_boot_drift_pending_not_taken_and_versions():
    value = {"default": "IB(1)", "current": "IB(1)", "next_boot": "IB(1)"}
    eth = dict(value, next_boot="ETH(2)")
    ats = {"default": "True(1)", "current": "True(1)", "next_boot": "False(0)"}
    result = _result({"LINK_TYPE_P1": value, "ATS_ENABLED": ats, "CNP_DSCP_P1": dict(value, current="48", next_boot="26")},
                     {"LINK_TYPE_P1": eth, "ATS_ENABLED": ats, "CNP_DSCP_P1": dict(value, current="48", next_boot="26")},
                     pending=["ATS_ENABLED", "CNP_DSCP_P1"],
                     not_taken={"mlx5_0": {"ATS_ENABLED": {"wanted": "False", "current": "True(1)", "next_boot": "False(0)"}}},
                     firmware={"mlx5_0": {"fw_version": "28.36.1010", "psid": "MT_0000000838"},
                               "mlx5_1": {"error": "flint failed"}})
    plan = {"errors": [], "versions": {"MT_0000000838": "28.39.1002"}}
    records = area_records({"plan": plan, "mlxconfig": result}, "nic_firmware", "gpu-01")
    assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in records] == [
        ("mlx5_0", "nv.LINK_TYPE_P1", "ETH(2)", "IB(1)"),
        ("mlx5_0 (current)", "nv.ATS_ENABLED", "False(0)", "True(1): the firmware did not take it after a reset"),
        ("mlx5_0 (current)", "nv.CNP_DSCP_P1", "26", "48: pending reset"),
        ("mlx5_0", "firmware.version", "28.39.1002 (pinned for MT_0000000838)", "28.36.1010"),
        ("mlx5_1", "firmware.read", "readable", "flint failed"),
    ]
    assert all(r["area"] == "nic_firmware" and r["host"] == "gpu-01" for r in records)


def test_fleet_names_the_nics_off_the_common_version_of_their_psid():
    firmware = {"a": {"mlx5_0": {"psid": "P1", "fw_version": "1.2.3"}, "mlx5_1": {"psid": "P2", "fw_version": "9.9.9"}},
                "b": {"mlx5_0": {"psid": "P1", "fw_version": "1.2.3"}},
                "c": {"mlx5_0": {"psid": "P1", "fw_version": "1.2.4"}, "mlx5_1": {"psid": "P2", "fw_version": "9.9.9"}},
                "d": {"mlx5_0": {"error": "flint failed"}}}
    plans = [{"host": h, "plan": {"firmware": f}} for h, f in firmware.items()]
    assert [(r["host"], r["object"], r["expected"], r["actual"]) for r in nic_firmware.fleet(plans)] == [
        ("c", "mlx5_0", "1.2.3 (2 of 3 P1 NICs run it)", "1.2.4")]
    assert nic_firmware.fleet([]) == []


# ---------------------------------------------------------------- issue 40: the port follows the PCI function

def _dev(name, bdf, layer, ports=(1,), **more):
    return dict({"name": name, "pci_address": bdf, "ports": [{"port": p, "link_layer": layer} for p in ports]}, **more)


def _plan(found, **over):
    return area_plan({"devices": dict((d["name"], d) for d in found)}, "nic_firmware", _defaults(**over))


def _config(plan):
    return dict((c["device"], c["params"]) for c in plan["config"])


@pytest.mark.parametrize("devices, over", [
    # function .0 left out by nic_firmware_devices (it is on the other fabric)
    ([_dev("mlx5_0", "0000:3b:00.0", "InfiniBand"), _dev("mlx5_1", "0000:3b:00.1", "Ethernet")], {"devices": ["mlx5_1"]}),
    # ... by its PCI address, in lspci's short spelling
    ([_dev("mlx5_0", "0000:3b:00.0", "InfiniBand"), _dev("mlx5_1", "0000:3b:00.1", "Ethernet")], {"devices": ["3b:00.1"]}),
    # function .0 is not an RDMA device at all (not in rdma_facts)
    ([_dev("mlx5_1", "0000:3b:00.1", "Ethernet")], {}),
])
def test_function_1_gets_port_2_parameters_when_function_0_is_left_out(devices, over):
    plan = _plan(devices, gpudirect=False, **over)
    assert plan["errors"] == []
    assert _config(plan) == {"mlx5_1": {"LINK_TYPE_P2": "ETH", "ROCE_CC_PRIO_MASK_P2": 8, "CNP_DSCP_P2": 48,
                                        "CNP_802P_PRIO_P2": 6}}
    assert not any(name.endswith("_P1") for params in _config(plan).values() for name in params)


def test_the_drift_plan_numbers_ports_as_the_role_does():
    from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas
    facts = {"rdma": {"devices": {"mlx5_1": _dev("mlx5_1", "0000:3b:00.1", "Ethernet")}}}
    inputs = _drift_areas.plan_inputs("nic_firmware", _defaults(gpudirect=False), facts, "gpu-01")
    requests, records = _drift_areas.requests_of([inputs], "gpu-01")
    assert records == [] and [sorted(c["params"]) for c in requests[0]["config"]] == [
        ["CNP_802P_PRIO_P2", "CNP_DSCP_P2", "LINK_TYPE_P2", "ROCE_CC_PRIO_MASK_P2"]]


def test_virtual_functions_are_never_configured():
    devices = [_dev("mlx5_0", "0000:3b:00.0", "Ethernet"), _dev("mlx5_1", "0000:3b:00.1", "Ethernet"),
               # VFs of the same bus and device (ARI numbering), and one on the next device number
               _dev("mlx5_2", "0000:3b:00.2", "Ethernet", physfn="0000:3b:00.0"),
               _dev("mlx5_3", "0000:3b:00.3", "Ethernet"),
               _dev("mlx5_4", "0000:3b:01.0", "Ethernet", physfn="0000:3b:00.0")]
    plan = _plan(devices, gpudirect=False)
    assert plan["errors"] == [] and sorted(_config(plan)) == ["mlx5_0", "mlx5_1"]
    assert sorted(_config(plan)["mlx5_0"]) == ["CNP_802P_PRIO_P1", "CNP_DSCP_P1", "LINK_TYPE_P1", "ROCE_CC_PRIO_MASK_P1"]
    assert sorted(_config(plan)["mlx5_1"]) == ["CNP_802P_PRIO_P2", "CNP_DSCP_P2", "LINK_TYPE_P2", "ROCE_CC_PRIO_MASK_P2"]
    assert plan["devices"] == ["mlx5_0", "mlx5_1"]
    # a VF named is refused by name (its NV parameters are its physical function's)
    plan = _plan(devices, devices=["mlx5_4"])
    assert plan["requests"] == [] and len(plan["errors"]) == 1
    assert plan["errors"][0].startswith("nic_firmware_devices: mlx5_4 (0000:3b:01.0) is a virtual function of 0000:3b:00.0")


@pytest.mark.parametrize("device, why", [
    (_dev("mlx5_1", "0000:3b:00.1", "Ethernet", ports=(1, 2)), "function 1 holds ports 1, 2"),
    (_dev("mlx5_0", "0000:3b:00.0", "Ethernet", ports=(2,)), "function 0 has port 2"),
    (_dev("mlx5_0", "not-a-bdf", "Ethernet"), "its PCI address 'not-a-bdf' is not one"),
])
def test_a_device_whose_port_cannot_be_told_is_refused_by_name(device, why):
    plan = _plan([device, _dev("mlx5_5", "0000:5e:00.0", "Ethernet")], devices=[device["name"], "mlx5_5"]
                 if device["pci_address"] == "not-a-bdf" else [])
    assert plan["requests"] == [] and plan["config"] == []
    assert any(e.startswith("nic_firmware") and device["name"] in e and why in e for e in plan["errors"]), plan["errors"]


def test_a_function_holding_both_ports_gets_both_ports_parameters():
    plan = _plan([_dev("mlx4_0", "0000:04:00.0", "InfiniBand", ports=(1, 2))], gpudirect=False, profile="ib")
    assert plan["errors"] == [] and _config(plan) == {"mlx4_0": {"LINK_TYPE_P1": "IB", "LINK_TYPE_P2": "IB"}}


# ---------------------------------------------------------------- issue 40: bad inputs

@pytest.mark.parametrize("wanted", [["mlx5_0", "0000:3b:00.0"], ["0000:3b:00.0", "3b:00.0"]])
def test_the_same_device_twice_under_two_names_is_refused_by_name(wanted):
    plan = _plan([_dev("mlx5_0", "0000:3b:00.0", "Ethernet")], devices=wanted)
    assert plan["requests"] == [] and plan["errors"]
    assert all("same device" in e and wanted[0] in e and wanted[1] in e for e in plan["errors"]), plan["errors"]


@pytest.mark.parametrize("params, message", [
    ({"CNP_DSCP_P1": 64}, "nic_firmware_params.CNP_DSCP_P1='64': CNP_DSCP_P1 is a 6-bit field, 0-63"),
    ({"CNP_802P_PRIO_P2": 8}, "nic_firmware_params.CNP_802P_PRIO_P2='8': CNP_802P_PRIO_P2 is a 3-bit field, 0-7"),
    ({"ROCE_CC_PRIO_MASK_P1": 256}, "nic_firmware_params.ROCE_CC_PRIO_MASK_P1='256': ROCE_CC_PRIO_MASK_P1 is a 8-bit field"),
    ({"MAX_ACC_OUT_READ": 300}, "nic_firmware_params.MAX_ACC_OUT_READ='300': MAX_ACC_OUT_READ is a 8-bit field"),
    ({"LINK_TYPE_P1": 7}, "nic_firmware_params.LINK_TYPE_P1='7': LINK_TYPE_P1 takes one of IB(1), ETH(2), VPI(3)"),
    ({"LINK_TYPE_P2": "ETHERNET"}, "nic_firmware_params.LINK_TYPE_P2='ETHERNET': LINK_TYPE_P2 takes one of"),
    ({"ATS_ENABLED": 2}, "nic_firmware_params.ATS_ENABLED='2': ATS_ENABLED takes one of False(0), True(1)"),
    ({"LINK_TYPE_P3": "ETH"}, "nic_firmware_params.LINK_TYPE_P3='ETH': LINK_TYPE_P3 names port 3"),
])
def test_raw_parameters_get_the_typed_checks_of_the_same_setting(params, message):
    errors = area_errors(_defaults(params=params), "nic_firmware")
    assert len(errors) == 1 and errors[0].startswith(message), errors


@pytest.mark.parametrize("record", ["/var/lib/../../etc/cron.d/x", "/var/lib/rdma-fabric/../x.json", "/.."])
def test_a_boot_record_path_with_dot_dot_is_refused(record):
    errors = area_errors(_defaults(boot_record=record), "nic_firmware")
    assert errors == ["nic_firmware_boot_record=%r: expected an absolute path without '..' (or empty)" % record]
