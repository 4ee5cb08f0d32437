"""The role and state_check's apply make the same module calls (issue 30): for a node where
every task of the role runs (fabricsim: RoCE ports with lldpad and the boot applier; a GPU node
with ACS redirect set and the peer-memory module not loaded), the module calls the role's tasks
YAML makes on the node, in order, with their arguments templated from the role's plan
(``__AREA.<field>``) and their ``when`` conditions evaluated, are the area object's
``apply_requests`` of that same plan. Reads (rdma_facts, gdr_readiness), controller tasks, the
rescue (roce_qos' rollback, tested in test_state_check_apply.py) and the reboot (gpudirect's
reboot.yml, an include the converge leaves to the role) are not node calls of the apply."""
import os

import pytest
import yaml
from jinja2.nativetypes import NativeEnvironment

from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect, nccl_env, roce_qos
from ansible_collections.rdma.fabric.tests.unit import helpers
from test_state_check_apply import make_node, role_plan, specs

AREAS = {"roce_qos": roce_qos, "nccl_env": nccl_env, "gpudirect": gpudirect}
READS = ("rdma.fabric.rdma_facts", "rdma.fabric.gdr_readiness")
CONTROLLER = ("ansible.builtin.set_fact", "ansible.builtin.assert", "ansible.builtin.debug", "ansible.builtin.fail")
OMIT = object()
ENV = NativeEnvironment()
ENV.filters["bool"] = lambda value: value if isinstance(value, bool) else str(value).lower() in ("yes", "true", "1", "on")


def _module(task):
    return next(k for k in task if k.startswith(("rdma.fabric.", "ansible.builtin.")))


def _list(value):
    return value if isinstance(value, list) else ([] if value is None else [value])


def tasks(role, name, conditions=()):
    """``(task, conditions)`` of a tasks file, imports and blocks flattened (their ``when`` on
    each task); include_tasks (run-time includes: the reboot) and rescues left out."""
    with open(os.path.join(helpers.REPO, "roles", role, "tasks", name)) as handle:
        for task in yaml.safe_load(handle) or []:
            here = tuple(conditions) + tuple(_list(task.get("when")))
            if "block" in task:
                for inner in task["block"]:
                    yield inner, here
            elif "ansible.builtin.import_tasks" in task:
                yield from tasks(role, task["ansible.builtin.import_tasks"], here)
            elif (task.get("ansible.builtin.import_role") or {}).get("name") == "rdma.fabric.area_steps":
                # the step every area role shares (the internal role's tasks file)
                yield from tasks("area_steps", task["ansible.builtin.import_role"]["tasks_from"] + ".yml", here)
            elif "ansible.builtin.include_tasks" not in task:
                yield task, here


def render(value, context):
    if isinstance(value, dict):
        out = dict((k, render(v, context)) for k, v in value.items())
        return dict((k, v) for k, v in out.items() if v is not OMIT)
    if isinstance(value, list):
        return [render(v, context) for v in value]
    if isinstance(value, str) and value.strip().startswith("{{"):
        return ENV.compile_expression(value.strip()[2:-2])(**context)
    return value


def role_calls(role, variables, plan):
    """``[(module, arguments)]``: the role's node calls for this plan, in order."""
    context = dict(variables, omit=OMIT, **{"__" + role: plan})
    calls = []
    for task, conditions in tasks(role, "main.yml"):
        module = _module(task)
        if module in READS or module in CONTROLLER or task.get("run_once"):
            continue
        if all(ENV.compile_expression(str(c))(**context) for c in conditions + tuple(_list(task.get("when")))):
            calls.append((module, render(task[module], context)))
    return calls


def request_call(request):
    """An apply request as the module call the role's task makes (module defaults left out)."""
    config = request["config"]
    if request["resource"] in ("mlnx_qos", "dcqcn", "lldp_dcb"):
        return "rdma.fabric." + request["resource"], {"state": request["state"], "config": config}
    if request["resource"] == "kernel_module":
        return "ansible.builtin.command", {"argv": ["modprobe", config["name"]]}
    if request["resource"] == "pcie_acs":
        return "rdma.fabric.pcie_acs", dict((k, v) for k, v in config.items() if (k, v) != ("clear", "redirect"))
    if request["resource"] == "kernel_cmdline":
        return "rdma.fabric.kernel_cmdline", dict((k, v) for k, v in config.items() if v)
    return "rdma.fabric.node_files", dict(config)


@pytest.fixture
def node(sim, monkeypatch, tmp_path):
    return make_node(sim, monkeypatch, tmp_path)


def _normal(call):
    module, args = call
    if module == "rdma.fabric.node_files":
        args = dict(args, units=args.get("units") or [])
    if module == "rdma.fabric.kernel_cmdline":
        args = dict((k, v) for k, v in args.items() if v)
    return module, args


@pytest.mark.parametrize("profile, area", [("hgx-h100-roce", "roce_qos"), ("hgx-h100-roce", "nccl_env"),
                                           ("dgx-h100-ib-misplaced", "gpudirect")])
def test_the_role_makes_the_calls_of_apply_requests(sim, monkeypatch, node, profile, area):
    sim.init(profile)
    if area == "roce_qos":
        assert sim.cli("lldpad", "start") == 0
    spec = specs(node, (area,), roce_qos={"roce_qos_lldp": True})[area]
    variables = helpers.role_defaults(area, roce_qos_lldp=True) if area == "roce_qos" else helpers.role_defaults(area)
    plan = role_plan(monkeypatch, sim, area, spec)
    requests = AREAS[area].apply_requests(plan)
    role = [_normal(c) for c in role_calls(area, variables, plan)]
    assert [m for m, _a in role] == [request_call(r)[0] for r in requests]
    assert role == [_normal(request_call(r)) for r in requests]
    # every module of the area is there: the node needed each of the role's calls
    expected = {"roce_qos": ["mlnx_qos", "dcqcn", "lldp_dcb", "node_files", "node_files"],
                "nccl_env": ["node_files", "node_files"],
                "gpudirect": ["kernel_cmdline", "pcie_acs", "kernel_module", "node_files", "node_files"]}[area]
    assert [r["resource"] for r in requests] == expected


def test_a_role_call_the_list_lacks_is_found():
    """The comparison can fail: a plan that the role would apply with lldp_dcb, and a list without it."""
    plan = {"ports": [{"netdev": "eth2"}], "mlnx_qos": [{"interface": "eth2"}], "dcqcn": [{"interface": "eth2"}],
            "lldp": [{"interface": "eth2"}], "boot_applier": None, "drift_spec": {"files": [], "units": []},
            "requests": [{"resource": "mlnx_qos", "state": "replaced", "config": [{"interface": "eth2"}]},
                         {"resource": "dcqcn", "state": "replaced", "config": [{"interface": "eth2"}]}]}
    variables = helpers.role_defaults("roce_qos", roce_qos_lldp=True, roce_qos_persist=False)
    role = [m for m, _a in role_calls("roce_qos", variables, plan)]
    assert role == ["rdma.fabric.mlnx_qos", "rdma.fabric.dcqcn", "rdma.fabric.lldp_dcb", "rdma.fabric.node_files"]
    assert role != [request_call(r)[0] for r in roce_qos.apply_requests(plan)]
