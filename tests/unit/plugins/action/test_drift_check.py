# -*- coding: utf-8 -*-
"""drift_check action: one state_check call per host with the areas' specs; the node's records
come back as they are; a failed or unreachable call is never "no drift". The judging the node
does (requests from inputs, records from results) is tested here on the same functions."""
from __future__ import absolute_import, division, print_function

from unittest import mock

import pytest
import yaml
from ansible.errors import AnsibleError

from ansible_collections.rdma.fabric.plugins.action.drift_check import ActionModule
from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A

FACTS = {"device_names": ["mlx5_0"], "devices": {
    "mlx5_0": {"ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "eth2"}]}}}


def settings():
    with open("roles/roce_qos/defaults/main.yml") as handle:
        defaults = yaml.safe_load(handle)
    out = dict((k[len("roce_qos_"):], v) for k, v in defaults.items())
    out["nccl_roce_dscp"] = None
    return out


SPEC = {"settings": dict(settings(), lldp=False, persist=False)}


def action(responses, args):
    task = mock.MagicMock()
    task.args = args
    task.async_val = 0
    plugin = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    calls = []

    def execute(module_name, module_args=None, task_vars=None, **kwargs):
        calls.append((module_name, module_args))
        return responses.pop(0)
    plugin._execute_module = execute
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        result = plugin.run(task_vars={"inventory_hostname": "gpu 1"})
    return result, calls


def test_a_failed_call_is_a_host_record_and_unreachable_passes_through():
    result, calls = action([{"failed": True, "msg": "MODULE FAILURE"}], {"areas": {"roce_qos": SPEC}})
    assert len(calls) == 1
    assert result["drift_records"] == [{"host": "gpu 1", "area": "host", "object": "", "setting": "check",
                                        "expected": "checked", "actual": "state_check failed: MODULE FAILURE"}]
    assert result["checked"] == ["roce_qos"]
    result, calls = action([{"unreachable": True, "msg": "gone"}], {"areas": {"roce_qos": SPEC}})
    assert result == {"unreachable": True, "msg": "gone"}


def test_no_area_no_call():
    result, calls = action([], {"areas": {"roce_qos": None, "nccl_env": None}})
    assert calls == [] and result["drift_records"] == [] and result["checked"] == []


@pytest.mark.parametrize("areas, words", [
    ({"rails": {"x": 1}}, "rails not one of opensm, roce_qos, nccl_env, gpudirect"),
    ({"roce_qos": "yes"}, "areas.roce_qos: expected the role's spec (a dict), got 'yes'"),
    (["roce_qos"], "areas: expected a dict of area: spec"),
])
def test_bad_areas_are_refused_naming_them_before_any_call(areas, words):
    with pytest.raises(AnsibleError) as error:
        action([], {"areas": areas})
    assert words in str(error.value)


def test_records_per_setting_and_a_failed_read_is_a_record():
    inputs = A.plan_inputs("roce_qos", SPEC, {"rdma": FACTS}, "gpu 1")
    requests, records = A.requests_of([inputs], "gpu 1")
    assert records == [] and [r["resource"] for r in requests] == ["mlnx_qos", "dcqcn"]
    before = [{"interface": "eth2", "pfc": [], "trust": "dscp"}]
    after = [{"interface": "eth2", "pfc": [3], "trust": "dscp"}]
    entries = [{"area": "roce_qos", "resource": "mlnx_qos", "name": "mlnx_qos", "failed": False,
                "result": {"before": before, "after": after, "commands": ["x"]}},
               {"area": "roce_qos", "resource": "dcqcn", "name": "dcqcn", "failed": True,
                "result": {"msg": "interface=eth2: no ecn directory"}}]
    assert A.judge("gpu 1", requests, entries) == [
        {"host": "gpu 1", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []},
        {"host": "gpu 1", "area": "roce_qos", "object": "dcqcn", "setting": "read", "expected": "readable",
         "actual": "interface=eth2: no ecn directory"}]


def test_an_area_judges_files_key_by_key_and_a_missing_file_drifts_every_key():
    text = "NCCL_IB_HCA==mlx5_0\nNCCL_IB_GID_INDEX=3\n"
    paths = ["/etc/nccl.conf", "/etc/nccl.env"]
    files = [{"path": p, "content": text, "mode": "0644", "owner": "root", "group": "root"} for p in paths]
    nccl = {"area": "nccl_env", "errors": [], "plan": {"errors": [], "requests": [
        {"resource": "node_files", "name": "NCCL files", "options": {"content": True},
         "config": {"files": files, "units": []}}]}}
    requests, records = A.requests_of([nccl], "gpu 1")
    assert records == [] and requests[0]["options"] == {"content": True}
    after = {"units": {}, "files": dict((p, {"state": "present", "mode": "0644", "owner": "root", "group": "root",
                                             "content": text}) for p in paths)}
    entries = [{"area": "nccl_env", "resource": "node_files", "name": "NCCL files", "failed": False,
                "result": {"after": after, "before": {"units": {}, "files": {
                    "/etc/nccl.conf": {"state": "present", "mode": "0644", "owner": "root", "group": "root",
                                       "content": "NCCL_IB_HCA==mlx5_0\nNCCL_IB_GID_INDEX=5\n"},
                    "/etc/nccl.env": {"state": "absent"}}}}}]
    assert [(r["object"], r["setting"], r["expected"], r["actual"]) for r in A.judge("gpu 1", requests, entries)] == [
        ("/etc/nccl.conf", "NCCL_IB_GID_INDEX", "3", "5"),
        ("/etc/nccl.env", "NCCL_IB_GID_INDEX", "3", None), ("/etc/nccl.env", "NCCL_IB_HCA", "=mlx5_0", None)]


APPLY_RECORD = {"host": "gpu 1", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []}
APPLIED = {"roce_qos": [{"name": "mlnx_qos", "resource": "mlnx_qos", "failed": False, "result": {"changed": True}}]}


def test_drift_check_apply_passes_the_option_and_returns_what_was_applied():
    answer = {"changed": True, "drift_records": [APPLY_RECORD], "checked": ["roce_qos"], "applied": APPLIED,
              "drift_records_after": [], "plans": {"gpudirect": {"reboot_required": True}}}
    result, calls = action([dict(answer)], {"areas": {"roce_qos": {"settings": {}}}, "apply": "yes"})
    assert calls[0][1]["apply"] is True
    assert (result["drift_records"], result["applied"], result["changed"], result["drift_records_after"]) == (
        [APPLY_RECORD], APPLIED, True, []) and not result.get("failed")
    assert result["plans"] == {"gpudirect": {"reboot_required": True}}
    # an area failed: the task fails with the node's message, the lists kept
    result, calls = action([dict(answer, failed=True, msg="gpu 1: roce_qos: mlnx_qos (mlnx_qos) failed: x")],
                           {"areas": {"roce_qos": {"settings": {}}}, "apply": True})
    assert result["failed"] is True and result["msg"].startswith("gpu 1: roce_qos: mlnx_qos")
    assert result["applied"] == APPLIED and result["drift_records"] == [APPLY_RECORD]
    # state_check itself failed: the host record, and the converge failed
    result, calls = action([{"failed": True, "msg": "MODULE FAILURE"}], {"areas": {"roce_qos": {"settings": {}}},
                                                                         "apply": True})
    assert result["failed"] is True and result["msg"] == "gpu 1: state_check failed: MODULE FAILURE"
    assert [r["area"] for r in result["drift_records_after"]] == ["host"]
    # without apply: the check as before, no apply sent, no apply keys
    result, calls = action([dict(answer, applied=None)], {"areas": {"roce_qos": {"settings": {}}}})
    assert "apply" not in calls[0][1] and "applied" not in result and result["changed"] is False


@pytest.mark.parametrize("value", ["maybe", [True], 2])
def test_drift_check_apply_that_is_not_a_boolean_is_refused_naming_it(value):
    with pytest.raises(AnsibleError) as error:
        action([], {"areas": {"roce_qos": {"settings": {}}}, "apply": value})
    assert "drift_check: apply=%r: expected true or false" % (value,) in str(error.value)


def test_apply_defer_reports_a_failed_check_as_the_check_does_and_passes_a_deferral_through():
    """site.yml's check call (apply with apply_defer): a node that could not be checked is a host
    record, not a failed task (site.yml converges it later, every area); a deferral the node
    made (apply_unless_drifted) comes back as it is."""
    areas = {"roce_qos": {"settings": {}}}
    result, calls = action([{"failed": True, "msg": "MODULE FAILURE"}], {"areas": areas, "apply": True, "apply_defer": True})
    assert not result.get("failed")
    assert [r["actual"] for r in result["drift_records"]] == ["state_check failed: MODULE FAILURE"]
    assert result["apply_deferred"] == "not checked: state_check failed"
    answer = {"changed": False, "drift_records": [APPLY_RECORD], "checked": ["roce_qos"], "applied": {},
              "drift_records_after": [APPLY_RECORD], "plans": {}, "apply_deferred": "nic_firmware drifted: ..."}
    result, calls = action([dict(answer)], {"areas": areas, "apply": True, "apply_defer": True})
    assert result["apply_deferred"] == "nic_firmware drifted: ..." and "apply_unless_drifted" not in calls[0][1]


@pytest.mark.parametrize("reboot, sent", [("if_required", ["nic_firmware"]), ("never", None)])
def test_apply_defer_defers_a_host_its_firmware_play_may_reboot(reboot, sent):
    """Only a host checked for nic_firmware whose nic_firmware_reboot is if_required is applied
    unless its firmware drifted; the value is checked against the role's argument spec."""
    task = mock.MagicMock()
    task.args = {"areas": {"roce_qos": {"settings": {}}, "nic_firmware": {"settings": {}}}, "apply": True,
                 "apply_defer": True}
    plugin = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    calls = []
    plugin._execute_module = lambda module_name, module_args=None, **kw: calls.append(module_args) or {
        "drift_records": [], "checked": [], "applied": {}}

    def get(name, *default):
        return {"nic_firmware_reboot": reboot}[name]
    get.is_getter = True
    plugin._getter = lambda task_vars: get
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        plugin.run(task_vars={"inventory_hostname": "gpu 1"})
    assert calls[0].get("apply_unless_drifted") == sent
    reboot = "sometimes"      # what get() reads from now on
    with pytest.raises(AnsibleError) as error, mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        plugin.run(task_vars={"inventory_hostname": "gpu 1"})
    assert "nic_firmware_reboot" in str(error.value) and "sometimes" in str(error.value)


def test_the_argument_specs_are_read_when_the_plugin_is_imported():
    # the main process imports the plugin before it forks a worker per host: the workers find
    # every node area's argument spec read, and the lookup that renders the templates imported
    import importlib
    import sys
    from ansible_collections.rdma.fabric.plugins.action import drift_check
    from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs
    _role_specs._OPTIONS.clear()
    importlib.reload(drift_check)
    assert set(A.NODE_AREAS) <= set(_role_specs._OPTIONS)
    assert _role_specs._OPTIONS["roce_qos"]["roce_qos_pfc_priorities"]["type"] == "list"
    assert "ansible_collections.rdma.fabric.plugins.lookup.role_template" in sys.modules


class _Templar(object):
    """What the task's templar returns for a template (records what it was asked)."""

    def __init__(self, answers):
        self.answers, self.asked = answers, []

    def template(self, value):
        self.asked.append(value)
        return self.answers[value]


def run_with(args, task_vars, templar=None, environment=None, responses=None):
    task = mock.MagicMock()
    task.args, task.async_val, task.environment = args, 0, environment
    # the class as the module is now (a test above reloads it)
    from ansible_collections.rdma.fabric.plugins.action import drift_check
    plugin = drift_check.ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=templar,
                                      shared_loader_obj=None)
    calls = []
    answers = list(responses or [{"drift_records": [], "checked": ["roce_qos"], "applied": {}}])
    plugin._execute_module = lambda module_name, module_args=None, **kw: calls.append(module_args) or answers.pop(0)
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        result = plugin.run(task_vars=dict({"inventory_hostname": "gpu 1"}, **task_vars))
    return result, calls, task


def test_apply_var_reads_the_variable_templating_only_a_template():
    """playbooks/tasks/drift_check.yml names __drift_check_apply: undefined is false, a plain value is
    taken as it is (no templating: no Jinja compile per host), a template is templated."""
    areas = {"roce_qos": {"settings": {}}}
    templar = _Templar({"{{ mode == 'node' }}": True})
    _result, calls, _task = run_with({"areas": areas, "apply_var": "__drift_check_apply"}, {}, templar)
    assert "apply" not in calls[0] and templar.asked == []
    _result, calls, _task = run_with({"areas": areas, "apply_var": "__drift_check_apply"},
                                     {"__drift_check_apply": "yes"}, templar)
    assert calls[0]["apply"] is True and templar.asked == []
    _result, calls, _task = run_with({"areas": areas, "apply_var": "__drift_check_apply"},
                                     {"__drift_check_apply": "{{ mode == 'node' }}"}, templar)
    assert calls[0]["apply"] is True and templar.asked == ["{{ mode == 'node' }}"]


@pytest.mark.parametrize("args, task_vars, words", [
    ({"apply_var": "__drift_check_apply"}, {"__drift_check_apply": "maybe"},
     "drift_check: __drift_check_apply='maybe': expected true or false"),
    ({"settings_var": "__drift_check_settings"}, {"__drift_check_settings": "gpudirect_reboot"},
     "drift_check: __drift_check_settings: expected a list of the roles' variable names, got 'gpudirect_reboot'"),
    ({"settings_var": "__s"}, {"__s": ["no_such_variable"]}, "no_such_variable not a variable of the roles"),
    ({"apply_var": "__a", "apply": True}, {}, "drift_check: apply and apply_var: expected one of them"),
    ({"apply_var": ["__a"]}, {}, "drift_check: apply_var=['__a']: expected the name of a variable"),
    ({"environment_var": "rdma_fabric_environment"}, {"rdma_fabric_environment": ["SYSFS_PATH=/x"]},
     "drift_check: rdma_fabric_environment=['SYSFS_PATH=/x']: expected a mapping of environment variable names"),
])
def test_a_bad_value_read_from_a_variable_is_refused_naming_the_variable_before_any_call(args, task_vars, words):
    with pytest.raises(AnsibleError) as error:
        run_with(dict({"areas": {"roce_qos": {"settings": {}}}}, **args), task_vars, _Templar({}))
    assert words in str(error.value)


def test_settings_var_returns_the_settings_the_variable_names():
    task_vars = {"__drift_check_settings": ["gpudirect_reboot"], "gpudirect_reboot": "never"}
    with mock.patch("ansible_collections.rdma.fabric.plugins.plugin_utils._core_compat.templar_with",
                    lambda templar, variables: templar):
        result, _calls, _task = run_with({"areas": {"roce_qos": {"settings": {}}}, "settings_var": "__drift_check_settings"},
                                         task_vars, _Templar({}))
    assert result["settings"] == {"gpudirect_reboot": "never"}


@pytest.mark.parametrize("own, value, expected", [
    (None, {"SYSFS_PATH": "/run/fabricsim/sys"}, [{"SYSFS_PATH": "/run/fabricsim/sys"}]),
    # the task's own environment keyword comes last: ActionBase merges first to last, so it wins
    ([{"SYSFS_PATH": "/sys", "A": "1"}], {"SYSFS_PATH": "/run/fabricsim/sys"},
     [{"SYSFS_PATH": "/run/fabricsim/sys"}, {"SYSFS_PATH": "/sys", "A": "1"}]),
    ([], {}, []),
    ([], None, []),
])
def test_environment_var_gives_the_node_call_the_variables_environment(own, value, expected):
    task_vars = {} if value is None else {"rdma_fabric_environment": value}
    _result, calls, task = run_with({"areas": {"roce_qos": {"settings": {}}}, "environment_var": "rdma_fabric_environment"},
                                    task_vars, _Templar({}), environment=own)
    assert len(calls) == 1
    assert (task.environment or []) == expected


def test_environment_var_is_merged_as_the_play_keyword_was():
    """What the node call's environment string holds: ActionBase's own merge of the task's list."""
    from ansible.plugins.action import ActionBase
    task = mock.MagicMock()
    task.environment = [{"A": "var", "SYSFS_PATH": "/run/fabricsim/sys"}, {"A": "own"}]
    base = mock.MagicMock()
    base._task, base._templar = task, _TemplarIdentity()
    out = {}
    ActionBase._compute_environment_string(base, out)
    assert out == {"A": "own", "SYSFS_PATH": "/run/fabricsim/sys"}


class _TemplarIdentity(object):
    def template(self, value):
        return value


def test_the_drift_check_play_passes_the_environment_through_the_action():
    """playbooks/drift_check.yml: no environment keyword on the check's play (a compile per host),
    the check's task names rdma_fabric_environment, and the scheduler gate keeps its environment."""
    with open("playbooks/drift_check.yml") as handle:
        plays = yaml.safe_load(handle)
    with open("playbooks/tasks/drift_check.yml") as handle:
        task = yaml.safe_load(handle)[0]["rdma.fabric.drift_check"]
    assert "environment" not in plays[0]
    assert task["environment_var"] == "rdma_fabric_environment"
    assert (task["apply_var"], task["settings_var"]) == ("__drift_check_apply", "__drift_check_settings")
    gate = plays[0]["tasks"][0]["always"][0]
    assert gate["environment"] == "{{ rdma_fabric_environment | default({}) }}"
    assert gate["block"][0]["ansible.builtin.include_role"]["tasks_from"] == "scheduler_gate"
