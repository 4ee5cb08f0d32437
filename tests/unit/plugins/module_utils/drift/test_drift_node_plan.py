# -*- coding: utf-8 -*-
"""The drift check planned on the node: an area's spec (from its role's vars) and the node's
facts give the same plan as the role's filters; ACS files rendered with slots are filled to
the same text as the role renders; the state_check side and the action's one call."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from unittest import mock

import jinja2
import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_areas as A
from ansible_collections.rdma.fabric.plugins.module_utils.drift import _state_check
from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs as role_specs

FACTS = {"device_names": ["mlx5_0"], "devices": {
    "mlx5_0": {"ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "eth2"}]}}}


def _yaml(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def roce_settings(**override):
    defaults = _yaml("roles/roce_qos/defaults/main.yml")
    out = dict((k[len("roce_qos_"):], v) for k, v in defaults.items())
    out["nccl_roce_dscp"] = None
    out.update(override)
    return out


def roce_spec(**override):
    override.setdefault("persist_dir", "/var/lib/rdma-fabric/roce-qos")
    return {"settings": roce_settings(**override),
            "files": [{"path": "/usr/local/sbin/x", "content": "#!/bin/sh\n", "mode": "0755"}],
            "units": [{"name": "rdma-fabric-roce-qos.service", "enabled": True}]}


def test_roce_qos_planned_on_the_node_is_the_role_filter_plan():
    from ansible_collections.rdma.fabric.plugins.filter.area import area_plan
    inputs = A.plan_inputs("roce_qos", roce_spec(), {"rdma": FACTS}, "n1")
    assert inputs["errors"] == []
    assert inputs["plan"] == area_plan(FACTS, "roce_qos", roce_spec())
    requests, records = A.requests_of([inputs], "n1")
    assert records == []
    assert [r["resource"] for r in requests] == ["mlnx_qos", "dcqcn", "node_files"]
    assert [dict((k, v) for k, v in r.items() if k != "area") for r in requests] == inputs["plan"]["requests"]
    files = requests[2]["config"]["files"]
    assert files[0] == {"path": "/var/lib/rdma-fabric/roce-qos/desired.conf", "content": inputs["plan"]["state_file"],
                        "mode": "0644"}


def test_a_plan_error_on_the_node_is_the_areas_config_record_naming_the_variable():
    inputs = A.plan_inputs("roce_qos", roce_spec(interfaces=["eth9"]), {"rdma": FACTS}, "n1")
    requests, records = A.requests_of([inputs], "n1")
    assert requests == []
    assert len(records) == 1 and records[0]["area"] == "roce_qos" and records[0]["setting"] == "config"
    assert "roce_qos_interfaces" in records[0]["actual"] and "eth9" in records[0]["actual"]


def test_bad_variables_are_config_records_before_any_read():
    inputs = A.plan_inputs("roce_qos", roce_spec(lossless_priority=9), {"rdma": FACTS}, "n1")
    requests, records = A.requests_of([inputs], "n1")
    assert requests == [] and records and all(r["setting"] == "config" for r in records)
    assert any("9" in r["actual"] for r in records)


def _acs_render(plan):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader("roles/gpudirect/templates"), keep_trailing_newline=True)
    return env.get_template("rdma-fabric-acs.sh.j2").render(__gpudirect_plan=plan, ansible_managed="managed")


def test_acs_script_rendered_with_slots_and_filled_on_the_node_is_the_roles_text():
    from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect
    real = {"acs_mask": "0034", "acs_bridges": ["0000:17:00.0", "0000:18:02.0"]}
    filled = gpudirect.fill_slots(_acs_render(gpudirect.SLOT_PLAN), real)
    assert filled == _acs_render(real)
    assert "0000:17:00.0 0000:18:02.0" in filled and "@RDMA_FABRIC" not in filled


def test_every_plan_value_the_acs_templates_use_has_a_slot():
    from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect
    slots, slot_plan = gpudirect.SLOTS, gpudirect.SLOT_PLAN
    used = set()
    for name in ("rdma-fabric-acs.sh.j2", "rdma-fabric-acs.service.j2"):
        with open("roles/gpudirect/templates/" + name) as handle:
            used |= set(re.findall(r"__gpudirect_plan\.(\w+)", handle.read()))
    assert used and used <= set(slots.values()) and used <= set(slot_plan)
    for slot, key in slots.items():
        value = slot_plan[key]
        assert slot in (value if isinstance(value, list) else [value])


def test_readers_follow_the_areas():
    assert A.readers({"roce_qos": {}}) == {"rdma_facts": {"gather_subset": ["devices"]}}
    wanted = A.readers({"nccl_env": {}, "gpudirect": {"settings": {"gdr_level": "PIX"}}})
    assert wanted == {"rdma_facts": {"gather_subset": ["devices", "gids", "gpus"]},
                      "gdr_readiness": {"gdr_level": "PIX"}}


def test_check_areas_a_failed_reader_is_a_host_record_never_no_drift():
    out = _state_check.check_areas(None, "n1", {"roce_qos": roce_spec()}, {}, {"rdma_facts": "ToolError: ibstat"})
    assert out["drift_records"] == [A.host_record("n1", "gather failed: rdma_facts: ToolError: ibstat")]
    # a reader no area needs does not count
    with mock.patch.object(_state_check, "check_all", return_value=[]):
        out = _state_check.check_areas(None, "n1", {"roce_qos": roce_spec(persist=False)},
                                       {"rdma": {"device_names": [], "devices": {}}}, {"sm_info": "x"})
    assert out == {"drift_records": [], "checked": ["roce_qos"]}


def test_check_areas_judges_the_results_on_the_node():
    before = [{"interface": "eth2", "pfc": [], "trust": "dscp"}]
    after = [{"interface": "eth2", "pfc": [3], "trust": "dscp"}]
    entries = [{"area": "roce_qos", "resource": "mlnx_qos", "name": "mlnx_qos", "failed": False,
                "result": {"before": before, "after": after}},
               {"area": "roce_qos", "resource": "dcqcn", "name": "dcqcn", "failed": False,
                "result": {"before": [], "after": []}}]
    with mock.patch.object(_state_check, "check_all", return_value=entries) as check_all:
        out = _state_check.check_areas(None, "n1", {"roce_qos": roce_spec(persist=False)}, {"rdma": FACTS}, {})
    sent = check_all.call_args[0][1]
    assert [r["resource"] for r in sent] == ["mlnx_qos", "dcqcn"]
    assert all(set(r) <= set(A.MODULE_FIELDS) for r in sent)
    assert out == {"checked": ["roce_qos"], "drift_records": [
        {"host": "n1", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []}]}


def test_the_action_makes_one_call_with_the_specs_and_keeps_the_nodes_records():
    from ansible_collections.rdma.fabric.plugins.action.drift_check import ActionModule
    task = mock.MagicMock()
    task.args = {"areas": {"roce_qos": roce_spec(), "nccl_env": None}}
    task.async_val = 0
    plugin = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    calls = []
    record = {"host": "gpu 1", "area": "roce_qos", "object": "eth2", "setting": "pfc", "expected": [3], "actual": []}

    def execute(module_name, module_args=None, task_vars=None, **kwargs):
        calls.append((module_name, module_args))
        return {"results": [], "drift_records": [record], "checked": ["roce_qos"]}
    plugin._execute_module = execute
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        result = plugin.run(task_vars={"inventory_hostname": "gpu 1"})
    assert len(calls) == 1 and calls[0][0] == "rdma.fabric.state_check"
    args = calls[0][1]
    assert args["areas"] == {"roce_qos": roce_spec()} and args["host"] == "gpu 1" and args["return_facts"] is False
    assert result["drift_records"] == [record] and result["checked"] == ["roce_qos"]


IBSTAT_PORTS = [
    {"ca": "mlx5_0", "port": 1, "link_layer": "Ethernet", "physical_state": "LinkUp", "port_guid": "0x0000000000000009"},
    {"ca": "mlx5_1", "port": 1, "link_layer": "InfiniBand", "physical_state": "LinkUp",
     "port_guid": "0x0000000000100001"}]


def opensm_spec(**override):
    """The opensm area's spec (areas/opensm.py), the role's templates rendered with its slots."""
    from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.areas.test_area_opensm import spec
    return spec(**dict({"query_environment": {"SIM_HOST": "Hca2"}}, **override))


def markers(*present):
    return {"files": dict((path, {"state": "present" if path in present else "absent"})
                          for path in ("/etc/debian_version", "/etc/redhat-release"))}


def test_opensm_planned_on_the_node_family_port_and_slots_filled():
    sm = {"master_count": 1, "sm_ports": [{"guid": "0x0000000000100001", "state": "master", "priority": 14}]}
    facts = {"opensm": {"markers": markers("/etc/debian_version"), "ports": IBSTAT_PORTS}, "sm": sm}
    inputs = A.plan_inputs("opensm", opensm_spec(), facts, "sm1")
    plan = inputs["plan"]
    assert plan["guid"] == "0x0000000000100001" and plan["config_file"] == "/etc/opensm/opensm.conf"
    files = dict((f["path"], f) for f in plan["files"])
    conf = files["/etc/opensm/opensm.conf"]["content"]
    assert "guid 0x0000000000100001\nsm_priority 14\n" in conf
    assert "partition_config_file /etc/opensm/partitions.conf\n" in conf and "@RDMA_FABRIC" not in conf
    assert files["/etc/opensm/opensm.conf"]["mode"] == "0600"
    assert files["/etc/default/opensm"]["content"].endswith('PORTS="0x0000000000100001"\n')
    assert "ExecStart=\nExecStart=/usr/sbin/opensm" in files["/etc/systemd/system/opensm@.service.d/10-rdma-fabric.conf"]["content"]
    assert plan["units"] == [{"name": "opensm.service", "enabled": True, "active": True}]
    judged, request = A.AREAS["opensm"](inputs, "sm1")
    assert judged["records"] == [] and request["resource"] == "node_files"


def test_opensm_on_a_redhat_node_with_a_bound_guid_reads_no_ports():
    spec = opensm_spec(guid="0x0000000000100007")
    assert A.readers({"opensm": spec}) == {"opensm": {"ibstat": False}, "sm_info": {"environment": {"SIM_HOST": "Hca2"}}}
    inputs = A.plan_inputs("opensm", spec, {"opensm": {"markers": markers("/etc/redhat-release")}, "sm": None}, "sm1")
    paths = [f["path"] for f in inputs["plan"]["files"]]
    assert paths == ["/etc/rdma/opensm.conf", "/etc/rdma/partitions.conf",
                     "/etc/systemd/system/opensm.service.d/10-rdma-fabric.conf"]
    assert "guid 0x0000000000100007\n" in inputs["plan"]["files"][0]["content"]
    assert "partition_config_file /etc/rdma/partitions.conf\n" in inputs["plan"]["files"][0]["content"]


@pytest.mark.parametrize("facts, words", [
    ({"opensm": {"markers": markers(), "ports": IBSTAT_PORTS}}, "cannot tell the OS family"),
    ({"opensm": {"markers": markers("/etc/debian_version"), "ports": IBSTAT_PORTS[:1]}},
     "no InfiniBand port with the physical link up"),
    ({"opensm": {"markers": markers("/etc/debian_version")}}, "ibstat was not read"),
])
def test_opensm_that_cannot_be_planned_is_a_config_record(facts, words):
    inputs = A.plan_inputs("opensm", opensm_spec(), facts, "sm1")
    requests, records = A.requests_of([inputs], "sm1")
    assert requests == [] and len(records) == 1 and records[0]["setting"] == "config" and words in records[0]["actual"]


def test_opensm_settings_the_role_refuses_are_config_records_on_the_node():
    inputs = A.plan_inputs("opensm", opensm_spec(log_flags="0x03\nsm_key 0x1"),
                           {"opensm": {"markers": markers("/etc/debian_version"), "ports": IBSTAT_PORTS}}, "sm1")
    requests, records = A.requests_of([inputs], "sm1")
    assert requests == [] and records and "opensm_log_flags" in records[0]["actual"]


def test_sminfo_gets_its_own_environment_and_the_other_readers_the_tasks():
    seen = []

    class Module(object):
        def run_command(self, args, **kwargs):
            seen.append((args, kwargs.get("environ_update")))
            return 0, "", ""
    module = _state_check._WithEnvironment(Module(), {"SIM_HOST": "Hca2"})
    module.run_command(["sminfo"], environ_update={"LC_ALL": "C"})
    Module().run_command(["ibstat"], environ_update={"LC_ALL": "C"})
    assert seen == [(["sminfo"], {"LC_ALL": "C", "SIM_HOST": "Hca2"}), (["ibstat"], {"LC_ALL": "C"})]


def test_a_spec_of_the_wrong_shape_is_the_areas_config_record_not_a_traceback():
    with mock.patch.object(_state_check, "check_all", return_value=[]):
        out = _state_check.check_areas(None, "n1", {"roce_qos": {"lldp": False}, "nccl_env": {"config": {}}},
                                       {"rdma": FACTS, "gdr": {}}, {})
    roce = [r for r in out["drift_records"] if r["area"] == "roce_qos"]
    assert len(roce) == 1 and roce[0]["setting"] == "config" and "areas.roce_qos: KeyError" in roce[0]["actual"]


def _action(args, templated=None):
    from ansible_collections.rdma.fabric.plugins.action.drift_check import ActionModule
    task = mock.MagicMock()
    task.args = args
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value: dict(value, templated=True)
    # the action templates over the host's variables and the roles' defaults: a copy of the templar
    templar.copy_with_new_env.return_value = templar
    return ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=templar, shared_loader_obj=None)


@pytest.mark.parametrize("args", [{}, {"areas": {}, "area_groups": {}}])
def test_the_action_takes_one_of_areas_and_area_groups(args):
    from ansible.errors import AnsibleError
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}):
        with pytest.raises(AnsibleError, match="expected one of areas .* and area_groups"):
            _action(args).run(task_vars={"inventory_hostname": "gpu 1"})


GROUP_VARS = {"inventory_hostname": "gpu1", "groups": {"roce_nodes": ["gpu1", "gpu2"], "sm_nodes": ["sm1"]},
              "__roce_qos_spec": {"lldp": False}, "__opensm_spec": {"role": "master"}}


def test_area_groups_template_only_the_hosts_own_areas():
    plugin = _action({"area_groups": {"roce_qos": "roce_nodes", "opensm": "sm_nodes", "gpudirect": "gpu_nodes"}})
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}), \
            mock.patch.object(plugin, "_execute_module", return_value={"drift_records": [], "checked": ["roce_qos"]}) as run:
        out = plugin.run(task_vars=GROUP_VARS)
    assert out["checked"] == ["roce_qos"] and out["drift_records"] == []
    sent = run.call_args.kwargs["module_args"]
    assert sent["areas"] == {"roce_qos": {"lldp": False, "templated": True}} and sent["host"] == "gpu1"
    # the SM node's spec was never templated, nor the gpudirect one (no such group)
    assert [c.args[0] for c in plugin._templar.template.call_args_list] == [{"lldp": False}]


def test_area_groups_build_a_role_spec_lookup_directly_with_one_getter():
    plugin = _action({"area_groups": {"roce_qos": "roce_nodes", "nccl_env": "roce_nodes"}})
    task_vars = dict(GROUP_VARS, __roce_qos_spec="{{ lookup('rdma.fabric.role_spec', 'roce_qos') }}",
                     __nccl_env_spec=" {{ lookup('rdma.fabric.role_spec', 'nccl_env') }}\n")
    built = []
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}), \
            mock.patch.object(plugin, "_execute_module", return_value={"drift_records": [], "checked": []}) as run, \
            mock.patch.object(role_specs, "renderer", return_value="render"), \
            mock.patch.object(role_specs, "build", side_effect=lambda name, get, render: built.append((name, get, render)) or {name: 1}):
        plugin.run(task_vars=task_vars)
    sent = run.call_args.kwargs["module_args"]["areas"]
    assert sent == {"roce_qos": {"roce_qos": 1}, "nccl_env": {"nccl_env": 1}}
    assert sorted(name for name, _get, _render in built) == ["nccl_env", "roce_qos"]
    assert built[0][1] is built[1][1] and built[0][2] == "render"      # one getter for both
    assert not plugin._templar.template.called


@pytest.mark.parametrize("host, hidden", [("sm1", True), ("gpu1", False)])
def test_the_result_of_a_host_checked_for_opensm_is_hidden_as_no_log(host, hidden):
    """opensm.conf holds the SM_Key: the task needs no no_log expression per host."""
    plugin = _action({"area_groups": {"roce_qos": "roce_nodes", "opensm": "sm_nodes"}})
    for probe in ({"drift_records": [], "checked": ["opensm"]}, {"unreachable": True, "msg": "no route"}):
        with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}), \
                mock.patch.object(plugin, "_execute_module", return_value=dict(probe)):
            out = plugin.run(task_vars=dict(GROUP_VARS, inventory_hostname=host))
        assert out.get("_ansible_no_log", False) is hidden, (probe, out)


def test_area_groups_of_a_host_in_no_group_check_nothing():
    plugin = _action({"area_groups": {"roce_qos": "roce_nodes"}})
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}), \
            mock.patch.object(plugin, "_execute_module") as run:
        out = plugin.run(task_vars=dict(GROUP_VARS, inventory_hostname="login1"))
    assert out == {"changed": False, "drift_records": [], "checked": []} and not run.called


@pytest.mark.parametrize("area_groups, message", [
    ("roce_nodes", "area_groups: expected a dict of area: inventory group, got 'roce_nodes'"),
    ({"qos": "roce_nodes"}, "area_groups: 'qos' not one of opensm, roce_qos, nccl_env, gpudirect"),
    ({"roce_qos": ["roce_nodes"]}, r"area_groups.roce_qos: expected an inventory group name, got \['roce_nodes'\]"),
])
def test_bad_area_groups_are_errors_naming_the_field_and_value(area_groups, message):
    from ansible.errors import AnsibleError
    plugin = _action({"area_groups": area_groups})
    with mock.patch("ansible.plugins.action.ActionBase.run", return_value={}), \
            mock.patch.object(plugin, "_execute_module") as run:
        with pytest.raises(AnsibleError, match=message):
            plugin.run(task_vars=GROUP_VARS)
    assert not run.called
