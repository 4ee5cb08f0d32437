"""state_check with ``apply`` (issue 30, a first converge in one node call per host): on a fresh
fabricsim node (firmware defaults) of each profile, one state_check call converges the roce_qos,
nccl_env and gpudirect areas with their roles' module calls (the area objects'
``apply_requests``): afterwards a plain check reports no drift (a kernel argument only pending
the reboot), each module run in check mode with the role's config changes nothing, a second
apply writes nothing (fabricsim's write log, and every file and sysfs attribute unchanged), and
the result's records and ``changed`` say what happened. A fault midway fails the call with what
was applied, the state read back and roce_qos' rollback; ``apply`` that is not a boolean is
refused naming the option. The real modules run against fabricsim's tools and sysfs; every
file the roles write goes under tmp."""
import grp
import hashlib
import os
import pwd

import pytest

from ansible_collections.rdma.fabric.plugins.filter.area import area_plan
from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.resources._kernel_module import loaded
from ansible_collections.rdma.fabric.plugins.module_utils.areas import gpudirect, nccl_env, roce_qos
from ansible_collections.rdma.fabric.plugins.modules import (
    dcqcn, gdr_readiness, kernel_cmdline, lldp_dcb, mlnx_qos, node_files, pcie_acs, rdma_facts, state_check)
from ansible_collections.rdma.fabric.tests.unit import helpers

GRUB = 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n'
CMDLINE = "BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro quiet\n"
AREAS = {"hgx-h100-roce": ("roce_qos", "nccl_env", "gpudirect"), "dgx-h100-ib": ("roce_qos", "nccl_env", "gpudirect"),
         "dgx-h100-ib-misplaced": ("gpudirect",),       # ACS redirect set on a GPU-NIC path
         "small-roce": ("roce_qos",)}      # no GPU: no NCCL, no GPUDirect


def run(monkeypatch, sim, main, args, check_mode=False):
    """A module's main() against fabricsim; ``true`` (the GRUB update command here) answers 0.
    Returns (exit | fail, result)."""
    def run_command(argv, **kwargs):
        if os.path.basename(argv[0]) == "true":
            return 0, "", ""
        out, err, rc = sim.run(os.path.basename(argv[0]), *[str(a) for a in argv[1:]])
        return rc, out, err
    return helpers.run_module(monkeypatch, main, args, check_mode=check_mode, run_command=run_command,
                              bin_dir="/usr/bin/")


@pytest.fixture
def node(sim, monkeypatch, tmp_path):
    """A fabricsim node whose files are under tmp (``make_node``)."""
    return make_node(sim, monkeypatch, tmp_path)


def make_node(sim, monkeypatch, tmp_path):
    """A fabricsim node whose files are under tmp: the drift specs' directory, the GRUB file,
    /proc/cmdline, modules-load.d, the boot appliers' files."""
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    monkeypatch.setenv("FABRICSIM_MODULES_LOAD_DIRS", str(tmp_path / "modules-load.d"))
    spec_dir = str(tmp_path / "spec")
    monkeypatch.setattr(_spec, "path", lambda area, spec_dir=spec_dir: "%s/%s.json" % (spec_dir, area))
    (tmp_path / "grub").write_text(GRUB)
    (tmp_path / "cmdline").write_text(CMDLINE)
    return tmp_path


def specs(tmp, areas, **over):
    """Each area's spec as the controller sends it (the roles' defaults), every path under tmp."""
    out = {}
    if "roce_qos" in areas:
        variables = helpers.role_defaults("roce_qos", roce_qos_persist_dir=str(tmp / "roce_qos"))
        variables.update(over.get("roce_qos") or {})
        spec = roce_qos.spec(variables, lambda term: "# %s\n" % term)
        spec["files"] = [dict(f, path=str(tmp) + f["path"]) for f in spec["files"]]
        out["roce_qos"] = spec
    if "nccl_env" in areas:
        variables = helpers.role_defaults("nccl_env", nccl_env_roce_dscp=26, inventory_hostname="gpu-01",
                                          nccl_env_conf_path=str(tmp / "etc" / "nccl.conf"),
                                          nccl_env_environment_file=str(tmp / "etc" / "default" / "nccl"),
                                          nccl_env_file_owner=pwd.getpwuid(os.getuid()).pw_name,
                                          nccl_env_file_group=grp.getgrgid(os.getgid()).gr_name)
        out["nccl_env"] = nccl_env.spec(variables, None)
    if "gpudirect" in areas:
        variables = helpers.role_defaults(
            "gpudirect", gpudirect_kernel_backend="grub", gpudirect_grub_file=str(tmp / "grub"),
            gpudirect_proc_cmdline=str(tmp / "cmdline"), gpudirect_grub_update_command=["true"],
            gpudirect_acs_script_path=str(tmp / "sbin" / "rdma-fabric-acs"), gpudirect_unit_dir=str(tmp / "systemd"),
            gpudirect_modules_load_dir=str(tmp / "modules-load.d"))
        out["gpudirect"] = gpudirect.spec(variables, lambda term, template_vars=None:
                                          "# %s\n@RDMA_FABRIC_ACS_BRIDGES@ @RDMA_FABRIC_ACS_MASK@\n" % term)
    return out


def state_check_call(monkeypatch, sim, areas, apply=True, check_mode=False):
    args = {"areas": areas, "host": "gpu-01", "return_facts": False}
    if apply is not None:
        args["apply"] = apply
    return run(monkeypatch, sim, state_check.main, args, check_mode)


def snapshot(*roots):
    """Every file under ``roots`` (fabricsim's state and run dirs, the roles' files) with its
    content's digest and mode; fabricsim's call log excepted (reads are logged too)."""
    out = {}
    for root in roots:
        for directory, _dirs, files in os.walk(root):
            for name in files:
                path = os.path.join(directory, name)
                if name == "log.jsonl" or os.path.islink(path):
                    continue
                with open(path, "rb") as handle:
                    out[path] = (hashlib.sha256(handle.read()).hexdigest(), os.stat(path).st_mode)
    return out


MODULES = {"mlnx_qos": mlnx_qos, "dcqcn": dcqcn, "lldp_dcb": lldp_dcb, "node_files": node_files,
           "kernel_cmdline": kernel_cmdline, "pcie_acs": pcie_acs}


def module_args(request):
    """The module's own arguments for an apply request (what the role's task passes)."""
    config = request["config"]
    if request["resource"] in ("mlnx_qos", "dcqcn", "lldp_dcb"):
        return {"state": request["state"], "config": config}
    if request["resource"] == "node_files":
        return {"files": config["files"], "units": config.get("units") or []}
    return dict((k, v) for k, v in config.items() if v is not None)


@pytest.mark.parametrize("profile", sorted(AREAS))
def test_one_call_converges_a_fresh_node_and_a_second_writes_nothing(sim, monkeypatch, node, profile):
    sim.init(profile)
    lldp = profile == "hgx-h100-roce"
    if lldp:
        assert sim.cli("lldpad", "start") == 0
    areas = specs(node, AREAS[profile], roce_qos={"roce_qos_lldp": lldp})
    sim.cli("log", "--clear")

    kind, first = state_check_call(monkeypatch, sim, areas)
    assert kind == "exit", first.get("msg")
    assert first["changed"] is True and first["drift_records"] != []
    assert set(first["applied"]) == set(r["area"] for r in first["drift_records"]) == set(AREAS[profile])
    for area, entries in first["applied"].items():
        assert not any(e["failed"] for e in entries), entries
        assert entries[-1]["name"] == "drift spec" and entries[-1]["result"]["changed"] is True
    assert sim.log(writes=True) != []
    # afterwards: only the kernel argument set and not booted (the reboot is the role's)
    gpu = "gpudirect" in areas
    pending = [r for r in first["drift_records_after"] if r["object"] == "/proc/cmdline"]
    assert first["drift_records_after"] == pending and [r["setting"] for r in pending] == (["iommu"] if gpu else [])
    assert ("iommu=pt" in (node / "grub").read_text()) is gpu
    # what site.yml's steps after the call read: nccl_env's plan for the fleet check, gpudirect's
    # readiness from the facts read after the apply, and the reboot the kernel argument needs
    plans = first["plans"]
    assert sorted(plans) == sorted(a for a in ("nccl_env", "gpudirect") if a in areas)
    if "nccl_env" in areas:
        assert plans["nccl_env"]["active"] is True and plans["nccl_env"]["errors"] == []
        assert plans["nccl_env"]["settings"]["NCCL_IB_HCA"] and set(plans["nccl_env"]["fleet"]) >= {"groups"}
    if gpu:
        assert plans["gpudirect"]["reboot_required"] is True
        assert plans["gpudirect"]["pending_arguments"] == [{"name": "iommu"}]
        # the misplaced node's GPU and NIC are too far apart however the node is set: not ready
        ready = profile != "dgx-h100-ib-misplaced"
        assert plans["gpudirect"]["ready"] is ready and bool(plans["gpudirect"]["not_ready"]) is not ready
        assert len(plans["gpudirect"]["ready_gpus"]) + len(plans["gpudirect"]["not_ready"]) == len(plans["gpudirect"]["summary"])
        assert plans["gpudirect"]["kernel_cmdline"]["grub_file"] == str(node / "grub")

    # the same converged node: a second apply runs the drifted area's reads only (gpudirect,
    # pending the reboot), or nothing
    before = snapshot(sim.state_dir, sim.run_dir, str(node))
    sim.cli("log", "--clear")
    kind, second = state_check_call(monkeypatch, sim, areas)
    assert kind == "exit" and second["changed"] is False, second.get("msg")
    assert list(second["applied"]) == (["gpudirect"] if gpu else [])
    assert all(e["result"]["commands"] == [] for e in second["applied"].get("gpudirect", []))
    assert sim.log(writes=True) == [] and snapshot(sim.state_dir, sim.run_dir, str(node)) == before

    # the reboot: the kernel runs with the argument; a plain check finds nothing, apply runs nothing
    (node / "cmdline").write_text(CMDLINE.replace("ro ", "ro iommu=pt "))
    before = snapshot(sim.state_dir, sim.run_dir, str(node))
    kind, checked = state_check_call(monkeypatch, sim, areas, apply=None, check_mode=True)
    assert kind == "exit" and checked["drift_records"] == [] and "applied" not in checked
    sim.cli("log", "--clear")
    kind, third = state_check_call(monkeypatch, sim, areas)
    assert kind == "exit" and (third["changed"], third["applied"], third["drift_records_after"]) == (False, {}, [])
    if gpu:
        assert third["plans"]["gpudirect"]["reboot_required"] is False and third["plans"]["gpudirect"]["pending_arguments"] == []
    assert sim.log(writes=True) == [] and snapshot(sim.state_dir, sim.run_dir, str(node)) == before

    # each module, in check mode with the role's config (its plan from the role's reads), changes nothing
    for area in AREAS[profile]:
        plan = role_plan(monkeypatch, sim, area, areas[area])
        assert plan.get("modprobe") is None and plan.get("pcie_acs") is None
        requests = AREA_OBJECTS[area].apply_requests(plan)
        # the same calls as the first apply, but those the node's read no longer needs
        assert [r.get("name") or r["resource"] for r in requests] == [
            e["name"] for e in first["applied"][area] if e["name"] not in ("ACS redirect", "peer memory module")]
        for request in requests:
            kind, result = run(monkeypatch, sim, MODULES[request["resource"]].main, module_args(request), True)
            assert kind == "exit" and result["changed"] is False and result["commands"] == [], (area, request["name"])
    if gpu:
        assert [e["name"] for e in first["applied"]["gpudirect"]] == ["kernel arguments"] + (
            ["ACS redirect"] if profile == "dgx-h100-ib-misplaced" else []) + [
            "peer memory module", "ACS boot unit", "drift spec"]
        assert loaded("nvidia_peermem")


AREA_OBJECTS = {"roce_qos": roce_qos, "nccl_env": nccl_env, "gpudirect": gpudirect}


def role_plan(monkeypatch, sim, area, spec):
    """The area's plan as its role makes it: its reads (rdma_facts, gdr_readiness), then area_plan."""
    def facts(main, args):
        kind, result = run(monkeypatch, sim, main, args)
        assert kind == "exit", result
        return result["ansible_facts"]
    if area == "roce_qos":
        return area_plan(facts(rdma_facts.main, {"gather_subset": ["devices"]})["rdma"], area, spec)
    if area == "nccl_env":
        return area_plan({"rdma": facts(rdma_facts.main, {"gather_subset": ["all"]})["rdma"],
                          "gdr": facts(gdr_readiness.main, {})["gdr"]}, area, spec)
    return area_plan(facts(gdr_readiness.main, {"gdr_level": spec["settings"]["gdr_level"]})["gdr"], area, spec)


def test_check_mode_predicts_and_writes_nothing(sim, monkeypatch, node):
    sim.init("hgx-h100-roce")
    areas = specs(node, AREAS["hgx-h100-roce"])
    before = snapshot(sim.state_dir, sim.run_dir, str(node))
    sim.cli("log", "--clear")
    kind, result = state_check_call(monkeypatch, sim, areas, check_mode=True)
    assert kind == "exit" and result["changed"] is True
    assert set(result["applied"]) == {"roce_qos", "nccl_env", "gpudirect"}
    assert result["drift_records_after"] == result["drift_records"] != []
    mlnx = result["applied"]["roce_qos"][0]["result"]
    assert mlnx["commands"] and mlnx["before"] != mlnx["after"]             # predicted
    assert sim.log(writes=True) == [] and snapshot(sim.state_dir, sim.run_dir, str(node)) == before


@pytest.mark.parametrize("rollback", [True, False])
def test_a_fault_midway_fails_with_what_was_applied_and_roce_qos_rolls_back(sim, monkeypatch, node, rollback):
    sim.init("hgx-h100-roce")
    areas = specs(node, AREAS["hgx-h100-roce"], roce_qos={"roce_qos_rollback_on_failure": rollback})
    ports = [p["netdev"] for p in role_plan(monkeypatch, sim, "roce_qos", areas["roce_qos"])["ports"]]
    reports = dict((port, sim.out("mlnx_qos", "-i", port)) for port in ports)
    assert sim.cli("fault", "fail-after", "mlnx_qos", "2") == 0   # the 2nd write: midway on the first port
    kind, result = state_check_call(monkeypatch, sim, areas)
    assert kind == "fail", result
    entries = result["applied"]["roce_qos"]
    assert [e["name"] for e in entries] == ["mlnx_qos"] + (["restore mlnx_qos"] if rollback else [])
    failed = entries[0]
    assert failed["failed"] is True and failed["result"]["failed_on"] == {"interface": ports[0]}
    assert len(failed["result"]["applied"]) == 1 and failed["result"]["not_attempted"]
    msg = result["msg"]
    assert msg.startswith("gpu-01: roce_qos: mlnx_qos (mlnx_qos) failed: mlnx_qos failed midway on %s" % ports[0])
    assert "Applied before it in roce_qos: none." in msg and "State read back:" in msg
    if rollback:
        assert entries[1]["failed"] is False and "Rolled back %s" % ports[0] in msg
        assert entries[1]["result"]["after"] == [dict(failed["result"]["before"][0])]
        assert sim.out("mlnx_qos", "-i", ports[0]) == reports[ports[0]]          # as before the run
    else:
        assert "Rollback: none (roce_qos_rollback_on_failure is false)" in msg
        assert sim.out("mlnx_qos", "-i", ports[0]) != reports[ports[0]]          # half applied, left
    assert all(sim.out("mlnx_qos", "-i", port) == reports[port] for port in ports[1:])   # not attempted
    # the other areas still ran, and the records after say what is left
    assert not any(e["failed"] for area in ("nccl_env", "gpudirect") for e in result["applied"][area])
    assert result["changed"] is True
    assert set(r["area"] for r in result["drift_records_after"]) == {"roce_qos", "gpudirect"}


def test_an_area_its_role_would_stop_is_not_applied(sim, monkeypatch, node):
    sim.init("dgx-h100-ib")
    assert sim.cli("fault", "peermem-absent") == 0              # no nvidia_peermem: the role stops the host
    areas = specs(node, ("gpudirect",))
    sim.cli("log", "--clear")
    kind, result = state_check_call(monkeypatch, sim, areas)
    assert kind == "fail" and result["applied"] == {"gpudirect": []}
    assert result["msg"].startswith("gpu-01: gpudirect: not applied, its role would stop the host: ")
    assert "nvidia_peermem" in result["msg"] and sim.log(writes=True) == []


@pytest.mark.parametrize("value", ["maybe", [True], 2])
def test_apply_that_is_not_a_boolean_is_refused_naming_it(sim, monkeypatch, node, value):
    sim.init("small-roce")
    kind, result = state_check_call(monkeypatch, sim, specs(node, ("roce_qos",)), apply=value)
    assert kind == "fail" and "'apply'" in result["msg"] and ("list" if value == [True] else str(value)) in result["msg"]
    assert "applied" not in result and sim.log(writes=True) == []


def test_apply_unless_an_area_drifted_writes_nothing_and_says_why(sim, monkeypatch, node):
    """site.yml's check call on a host its firmware play may reboot (apply_unless_drifted:
    [nic_firmware]): that area drifted, so nothing is applied, the records say what differs and
    apply_deferred says why; the same call without it converges the node."""
    sim.init("hgx-h100-roce")
    areas = specs(node, AREAS["hgx-h100-roce"])
    before = snapshot(sim.state_dir, sim.run_dir, str(node))
    sim.cli("log", "--clear")
    args = {"areas": areas, "host": "gpu-01", "return_facts": False, "apply": True,
            "apply_unless_drifted": ["roce_qos"]}
    kind, result = run(monkeypatch, sim, state_check.main, args)
    assert kind == "exit" and result["changed"] is False and result["applied"] == {}
    assert result["apply_deferred"] == "roce_qos drifted: the other areas are applied after it"
    assert result["drift_records"] and result["drift_records_after"] == result["drift_records"]
    assert "gpudirect" in result["plans"]
    assert sim.log(writes=True) == [] and snapshot(sim.state_dir, sim.run_dir, str(node)) == before
    # an area that did not drift defers nothing
    kind, result = run(monkeypatch, sim, state_check.main, dict(args, apply_unless_drifted=["opensm"]))
    assert kind == "exit" and result["changed"] is True and "apply_deferred" not in result
    assert set(result["applied"]) == {"roce_qos", "nccl_env", "gpudirect"}
