"""One drift, one record (issue 30), for nccl_env: a line of the written nccl.conf changed on a
fabricsim node gives the same records from the role's verify (rdma_facts, the area's plan,
node_files in check mode and diff mode, then the rdma.fabric.area_records filter against the
plan's state) and from the fleet drift check (state_check on the node with the area's spec).
Both run the real modules against fabricsim's tools and sysfs; the files are under tmp
(nccl_env_conf_path, nccl_env_environment_file)."""
import grp
import os
import pwd


from ansible_collections.rdma.fabric.plugins.filter.area import area_plan, area_records
from ansible_collections.rdma.fabric.plugins.module_utils.areas import nccl_env
from ansible_collections.rdma.fabric.plugins.modules import gdr_readiness, node_files, rdma_facts, state_check
from ansible_collections.rdma.fabric.tests.unit import helpers


def _variables(**over):
    variables = helpers.role_defaults("nccl_env")
    variables.update(nccl_env_roce_dscp=26, inventory_hostname="gpu-01")   # the default's template, resolved
    variables.update(over)
    return variables


_run = helpers.run_on_sim


def _role(monkeypatch, sim, spec, check_mode):
    """The role's tasks: rdma_facts, gdr_readiness, the plan, node_files; the verify's records
    (in check mode nothing is written: the files are what node_files read before)."""
    facts = {"rdma": _run(monkeypatch, sim, rdma_facts.main, {"gather_subset": ["all"]})["ansible_facts"]["rdma"],
             "gdr": _run(monkeypatch, sim, gdr_readiness.main, {})["ansible_facts"]["gdr"]}
    plan = area_plan(facts, "nccl_env", spec)
    assert plan["errors"] == [] and plan["requests"], plan["errors"]
    result = _run(monkeypatch, sim, node_files.main, {"files": plan["files"]}, check_mode, diff=check_mode)
    actual = result["before" if check_mode else "after"]
    return plan, area_records({"node_files": {"before": actual, "after": plan["state"]}}, "nccl_env", "gpu-01")


def _drift_check(monkeypatch, sim, spec):
    result = _run(monkeypatch, sim, state_check.main, {"areas": {"nccl_env": spec}, "host": "gpu-01"}, True)
    return result["drift_records"]


def _key(records):
    return sorted((r["object"], r["setting"], repr(r["expected"]), repr(r["actual"])) for r in records)


def test_an_injected_nccl_conf_drift_gives_the_same_records_from_the_role_and_the_drift_check(sim, monkeypatch,
                                                                                              tmp_path):
    sim.init("hgx-h100-roce")
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    conf, env = str(tmp_path / "etc" / "nccl.conf"), str(tmp_path / "etc" / "default" / "nccl")
    owner, group = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name
    spec = nccl_env.spec(_variables(nccl_env_conf_path=conf, nccl_env_environment_file=env,
                                    nccl_env_file_owner=owner, nccl_env_file_group=group,
                                    nccl_env_dmabuf_enable="auto"), None)
    assert _drift_check(monkeypatch, sim, spec) != []                       # nothing written yet
    plan, records = _role(monkeypatch, sim, spec, check_mode=False)         # converge
    assert records == []
    with open(conf) as handle:
        assert handle.read() == plan["text"]
    assert _role(monkeypatch, sim, spec, check_mode=True)[1] == [] == _drift_check(monkeypatch, sim, spec)

    # the drift: a line of nccl.conf changed and one added, the environment file's mode
    text = plan["text"]
    index = plan["settings"]["NCCL_IB_GID_INDEX"]
    with open(conf, "w") as handle:
        handle.write(text.replace("NCCL_IB_GID_INDEX=%s\n" % index, "NCCL_IB_GID_INDEX=7\n") + "NCCL_DEBUG=INFO\n")
    os.chmod(env, 0o600)

    role_records = _role(monkeypatch, sim, spec, check_mode=True)[1]
    check_records = _drift_check(monkeypatch, sim, spec)
    assert _key(role_records) == _key(check_records)
    assert sorted((r["object"], r["setting"], r["expected"], r["actual"]) for r in check_records) == sorted([
        (conf, "NCCL_DEBUG", None, "INFO"), (conf, "NCCL_IB_GID_INDEX", str(index), "7"), (env, "mode", "0644", "0600")])
    assert set(r["area"] for r in check_records) == {"nccl_env"}
