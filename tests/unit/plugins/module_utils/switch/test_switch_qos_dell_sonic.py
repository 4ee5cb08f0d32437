# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Enterprise SONiC: the REAL dellemc.enterprise_sonic modules (the collection PyPI's ansible
package ships, in .venv) run with the switch_qos rendering, their REST call patched as that
collection's own unit tests do (tests/unit/modules/network/sonic/sonic_module.py: the facts'
and the config's ``edit_config`` patched, the switch empty), and the REST payloads they send
compared with what the intent says. And what the modules pass on though Enterprise SONiC
refuses it (their documented ranges) is refused by our check."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import importlib
from unittest import mock

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _render
from ansible_collections.rdma.fabric.tests.unit import helpers

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.switch.switch_qos_helpers import leaf

pytest.importorskip("ansible_collections.dellemc.enterprise_sonic.plugins.modules.sonic_qos_wred")

SONIC = "ansible_collections.dellemc.enterprise_sonic.plugins."
UTILS = SONIC + "module_utils.network.sonic."


def run_real_module(monkeypatch, step):
    """``(result, sent)``: the module of ``step`` run with its args against an empty switch;
    ``sent`` the REST requests its config class sent."""
    short = step["module"].rsplit(".", 1)[1]
    resource = short[len("sonic_"):]
    module = importlib.import_module(SONIC + "modules." + short)
    sent = []

    def facts(_module, commands):       # GET: the switch has nothing configured yet
        return [[404, {}] for _c in commands]

    def config(_module, commands):
        sent.extend(copy.deepcopy(commands))
        return [[204, {}] for _c in commands]
    # sonic_qos_buffer sends through edit_config_reboot (buffer init reboots the switch)
    send = "edit_config_reboot" if resource == "qos_buffer" else "edit_config"
    patches = [mock.patch(UTILS + "facts.%s.%s.edit_config" % (resource, resource), side_effect=facts),
               mock.patch(UTILS + "config.%s.%s.%s" % (resource, resource, send), side_effect=config),
               mock.patch(UTILS + "utils.utils.edit_config", side_effect=facts),
               mock.patch(UTILS + "utils.utils.get_device_interface_naming_mode", return_value="native")]
    for patch in patches:
        patch.start()
    try:
        outcome, result = helpers.run_module(monkeypatch, module.main, step["args"])
    finally:
        for patch in patches:
            patch.stop()
    assert outcome == "exit", result
    return result, sent


@pytest.fixture(scope="module")
def plan():
    return switch_qos.plan(leaf("dell_sonic", ports=[{"name": "Eth1/1", "speed": 100, "host": "lab-hgx-01",
                                                      "host_interface": "eth0"}]), "leaf-dell")


def steps(plan):
    return dict((s["module"].rsplit(".", 1)[1], s) for s in plan["rendered"])


def test_the_modules_accept_every_step_and_change_an_empty_switch(monkeypatch, plan):
    assert [s["module"] for s in plan["rendered"]] == [
        "dellemc.enterprise_sonic.sonic_qos_maps", "dellemc.enterprise_sonic.sonic_qos_wred",
        "dellemc.enterprise_sonic.sonic_qos_scheduler", "dellemc.enterprise_sonic.sonic_qos_pfc",
        "dellemc.enterprise_sonic.sonic_qos_buffer", "dellemc.enterprise_sonic.sonic_qos_interfaces",
        "dellemc.enterprise_sonic.sonic_dcbx"]
    assert not any("sonic_roce" in s["module"] for s in plan["rendered"])
    for step in plan["rendered"]:
        result, sent = run_real_module(monkeypatch, step)
        assert result["changed"] is True and sent, step["module"]


def test_wred_payload_holds_the_seed_thresholds_in_bytes(monkeypatch, plan):
    intent = plan["intent"]
    _result, sent = run_real_module(monkeypatch, steps(plan)["sonic_qos_wred"])
    ecn = intent["ports"][0]["ecn"]
    assert sent == [{"path": "/data/openconfig-qos:qos/wred-profiles/wred-profile", "method": "patch",
                     "data": {"openconfig-qos:wred-profile": [{"name": "RDMA_FABRIC_ECN_100G", "config": {
                         "name": "RDMA_FABRIC_ECN_100G", "ecn": "ECN_GREEN", "wred-green-enable": True,
                         "green-min-threshold": str(ecn["min_kb"] * 1000),
                         "green-max-threshold": str(ecn["max_kb"] * 1000),
                         "green-drop-probability": str(ecn["probability"])}}]}}]
    assert ecn == {"min_kb": 200, "max_kb": 2000, "probability": 100}


def test_dscp_map_payload_sends_26_to_3_and_48_to_6(monkeypatch, plan):
    _result, sent = run_real_module(monkeypatch, steps(plan)["sonic_qos_maps"])
    assert len(sent) == 1 and sent[0]["path"] == "/data/openconfig-qos:qos" and sent[0]["method"] == "patch"
    qos = sent[0]["data"]["openconfig-qos:qos"]
    dscp = qos["openconfig-qos-maps-ext:dscp-maps"]["dscp-map"][0]
    assert dscp["name"] == "RDMA_FABRIC"
    assert dict((e["dscp"], e["config"]["fwd-group"]) for e in dscp["dscp-map-entries"]["dscp-map-entry"]) == {
        26: "3", 48: "6"}
    pfc_pg = qos["openconfig-qos-maps-ext:pfc-priority-priority-group-maps"]["pfc-priority-priority-group-map"][0]
    assert [(e["dot1p"], e["config"]["priority-group-index"])
            for e in pfc_pg["pfc-priority-priority-group-map-entries"]["pfc-priority-priority-group-map-entry"]] == [(3, 3)]


def test_interface_payload_binds_the_maps_pfc_watchdog_and_wred(monkeypatch, plan):
    _result, sent = run_real_module(monkeypatch, steps(plan)["sonic_qos_interfaces"])
    by_path = dict((r["path"], r) for r in sent)
    queues = by_path["/data/openconfig-qos:qos/queues"]["data"]["openconfig-qos:queues"]["queue"]
    assert queues == [{"name": "Eth1/1:3", "config": {"name": "Eth1/1:3"},
                       "wred": {"config": {"wred-profile": "RDMA_FABRIC_ECN_100G"}}}]
    intf = by_path["/data/openconfig-qos:qos/interfaces"]["data"]["openconfig-qos:interfaces"]["interface"][0]
    assert intf["interface-id"] == "Eth1/1"
    assert intf["pfc"]["pfc-priorities"]["pfc-priority"] == [{"dot1p": 3, "config": {"dot1p": 3, "enable": True}}]
    assert intf["pfc"]["watchdog"]["config"] == {"action": "DROP", "detection-time": 200, "restoration-time": 200}
    assert intf["openconfig-qos-buffer:cable-length"]["config"]["length"] == "40m"
    assert intf["openconfig-qos-maps-ext:interface-maps"]["config"]["dscp-to-forwarding-group"] == "RDMA_FABRIC"
    assert intf["output"]["scheduler-policy"]["config"]["name"] == "RDMA_FABRIC"


def test_scheduler_payload_has_a_strict_cnp_class(monkeypatch, plan):
    _result, sent = run_real_module(monkeypatch, steps(plan)["sonic_qos_scheduler"])
    policy = sent[0]["data"]["openconfig-qos:scheduler-policies"]["scheduler-policy"][0]
    assert [(s["sequence"], s["config"]["priority"], s["config"].get("weight"))
            for s in policy["schedulers"]["scheduler"]] == [(0, "DWRR", 50), (3, "DWRR", 50), (6, "STRICT", None)]


def test_buffer_init_is_marked_as_a_reboot(monkeypatch, plan):
    step = steps(plan)["sonic_qos_buffer"]
    assert step.get("reboots") is True
    _result, sent = run_real_module(monkeypatch, step)
    assert sent == [{"path": "/operations/openconfig-qos-private:qos-buffer-config", "method": "post",
                     "data": {"openconfig-qos-private:input": {"operation": "INIT"}}}]


def test_the_module_passes_on_a_threshold_the_switch_refuses_and_we_refuse_it(monkeypatch, plan):
    """The trap: sonic_qos_wred documents 1000-12480000 bytes and sends 0 as no threshold at all
    and any max; the rendering check refuses both."""
    step = copy.deepcopy(steps(plan)["sonic_qos_wred"])
    green = step["args"]["config"][0]["green"]
    green.update(min_threshold=0, max_threshold=20000000)
    result, sent = run_real_module(monkeypatch, step)
    assert result["changed"] is True
    config = sent[0]["data"]["openconfig-qos:wred-profile"][0]["config"]
    assert "green-min-threshold" not in config and config["green-max-threshold"] == "20000000"
    refused = _render.check_dell_sonic([step])
    assert any("min_threshold=0: out of the range 1000-12480000" in r for r in refused), refused
    assert any("max_threshold=20000000: out of the range 1000-12480000" in r for r in refused), refused


def test_a_threshold_beyond_the_range_is_refused_by_the_plan():
    settings = leaf("dell_sonic", ecn_thresholds={100: {"min_kb": 200, "max_kb": 20000, "probability": 100}})
    assert switch_qos.config_errors(settings) == []
    with pytest.raises(PlanError) as exc:
        switch_qos.plan(settings, "leaf-dell")
    assert "max_threshold=20000000: out of the range 1000-12480000" in str(exc.value)


def test_a_cable_longer_than_300m_and_a_watchdog_out_of_range_are_refused():
    with pytest.raises(PlanError) as exc:
        switch_qos.plan(leaf("dell_sonic", cable_length_m=500, watchdog_detect_ms=50), "leaf-dell")
    assert "cable_length=None" in str(exc.value) and "watchdog_detect_time=50" in str(exc.value)


def test_the_apply_tasks_run_every_step_with_its_module(plan):
    """roles/switch_qos/tasks/apply_dell_sonic.yml: one task per rendered step, the module the step
    names, its config from that step; the rebooting step only with switch_qos_allow_reboot."""
    import os
    import yaml
    from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.switch.switch_qos_helpers import REPO
    with open(os.path.join(REPO, "roles", "switch_qos", "tasks", "apply_dell_sonic.yml")) as handle:
        tasks = yaml.safe_load(handle)
    rendered = steps(plan)
    seen = []
    for task in tasks:
        module = [k for k in task if k.startswith("dellemc.enterprise_sonic.")][0]
        short = module.rsplit(".", 1)[1]
        assert task[module]["config"] == "{{ __switch_qos_plan.steps.%s.args.config }}" % short
        assert task[module]["state"] == rendered[short]["args"]["state"]
        assert ("switch_qos_allow_reboot" in str(task.get("when"))) == bool(rendered[short].get("reboots"))
        seen.append(module)
    assert seen == [s["module"] for s in plan["rendered"]]
