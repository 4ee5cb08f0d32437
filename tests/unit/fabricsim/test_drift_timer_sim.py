"""Continuous drift on the node (issue 31 C): the spec the roce_qos role leaves on the node
(its plan's ``drift_spec``) checked by the health timer's drift step (``_drift_timer``) against
fabricsim: 0 drifted settings on a converged node, the drift check's own records after a change
behind Ansible's back, an error series (never a crash) for a spec file it cannot use."""
import json
import os
import re


from ansible_collections.rdma.fabric.plugins.filter.area import area_plan
from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_timer
from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos
from ansible_collections.rdma.fabric.plugins.modules import dcqcn, mlnx_qos, rdma_facts, state_check
from ansible_collections.rdma.fabric.tests.unit import helpers

MODULES = {"mlnx_qos": mlnx_qos, "dcqcn": dcqcn}


def _variables(**over):
    return helpers.role_defaults("roce_qos", **over)


_run = helpers.run_on_sim


class SimModule(object):
    """The timer's module (NodeModule in check mode) with fabricsim's tools."""

    check_mode = True
    _diff = False

    def __init__(self, sim):
        self.sim = sim
        self.calls = []

    def get_bin_path(self, name, required=False, opt_dirs=None):
        return "/usr/bin/" + name

    def run_command(self, argv, environ_update=None, check_rc=False, **kwargs):
        self.calls.append(list(argv))
        out, err, rc = self.sim.run(os.path.basename(argv[0]), *[str(a) for a in argv[1:]])
        return rc, out, err

    def warn(self, msg):
        pass


def _converge(monkeypatch, sim, spec, spec_dir):
    """The role: rdma_facts, the plan, each module call; the drift spec left in ``spec_dir``."""
    facts = _run(monkeypatch, sim, rdma_facts.main, {"gather_subset": ["devices"]})["ansible_facts"]["rdma"]
    plan = area_plan(facts, "roce_qos", spec)
    for request in plan["requests"]:
        _run(monkeypatch, sim, MODULES[request["resource"]].main, {"state": request["state"], "config": request["config"]})
    (entry,) = plan["drift_spec"]["files"]
    assert entry["path"] == "/etc/rdma-fabric/spec/roce_qos.json" and entry["mode"] == "0600"
    with open(os.path.join(spec_dir, "roce_qos.json"), "w") as handle:
        handle.write(entry["content"])
    return plan


def _key(records):
    return sorted((r["area"], r["object"], r["setting"], repr(r["expected"]), repr(r["actual"])) for r in records)


def _series(text, name):
    return dict((tuple(sorted(re.findall(r'(\w+)="([^"]*)"', labels))), float(value))
                for labels, value in re.findall(r"^%s\{([^}]*)\} (\S+)$" % name, text, re.M))


def test_converged_is_zero_a_change_behind_ansibles_back_is_the_drift_checks_records(sim, monkeypatch, tmp_path):
    sim.init("hgx-h100-roce")
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    spec = roce_qos.spec(_variables(roce_qos_lldp=False, roce_qos_persist=False), lambda term: "")
    spec_dir = str(tmp_path)
    plan = _converge(monkeypatch, sim, spec, spec_dir)
    config = {"spec_dir": spec_dir}

    records, text = _drift_timer.run(config, SimModule(sim), host="gpu-01")
    assert records == []
    version = _spec.version(spec)
    assert _series(text, "rdma_fabric_node_drift_settings") == {(("area", "roce_qos"), ("host", "gpu-01")): 0}
    assert _series(text, "rdma_fabric_node_drift_spec_info") == {
        (("area", "roce_qos"), ("collection_version", _spec.COLLECTION_VERSION), ("host", "gpu-01"),
         ("spec_version", version)): 1}
    assert _series(text, "rdma_fabric_node_drift_check_errors") == {(("area", "roce_qos"), ("host", "gpu-01")): 0}
    assert "# TYPE rdma_fabric_node_drift_settings gauge" in text
    assert "rdma_fabric_node_drift_last_run_timestamp_seconds{host=\"gpu-01\"}" in text

    # behind Ansible's back: PFC off on one port, DCQCN off on another's lossless priority
    ports = [p["netdev"] for p in plan["ports"]]
    assert sim.run("mlnx_qos", "-i", ports[0], "--pfc", "0,0,0,0,0,0,0,0")[2] == 0
    sim.write_sysfs("class/net/%s/ecn/roce_np/enable/3" % ports[1], "0")
    before = sim.qos(ports[0])
    records, text = _drift_timer.run(config, SimModule(sim), host="gpu-01")
    assert _series(text, "rdma_fabric_node_drift_settings") == {(("area", "roce_qos"), ("host", "gpu-01")): len(records)}
    assert len(records) >= 2
    # nothing written: every resource in check mode
    assert sim.qos(ports[0]) == before and sim.sysfs("class/net/%s/ecn/roce_np/enable/3" % ports[1]).strip() == "0"
    # the controller's drift check (state_check with the same spec) names the same settings
    check = _run(monkeypatch, sim, state_check.main, {"areas": {"roce_qos": spec}, "host": "gpu-01"}, True)
    assert _key(records) == _key(check["drift_records"])


def test_a_spec_it_cannot_use_is_an_error_series_never_a_crash(sim, monkeypatch, tmp_path):
    sim.init("hgx-h100-roce")
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    spec = roce_qos.spec(_variables(roce_qos_lldp=False, roce_qos_persist=False), lambda term: "")
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    # garbled, edited by hand (the version no longer matches), a symlink; nccl_env has none
    (spec_dir / "roce_qos.json").write_text("{not json")
    edited = json.loads(_spec.content("gpudirect", {"settings": {}}))
    edited["spec"]["settings"]["x"] = 1
    (spec_dir / "gpudirect.json").write_text(json.dumps(edited))
    (tmp_path / "elsewhere.json").write_text(_spec.content("opensm", {"settings": {}}))
    os.symlink(str(tmp_path / "elsewhere.json"), str(spec_dir / "opensm.json"))
    records, text = _drift_timer.run({"spec_dir": str(spec_dir)}, SimModule(sim), host="gpu-01")
    assert _series(text, "rdma_fabric_node_drift_settings") == {}
    errors = _series(text, "rdma_fabric_node_drift_check_errors")
    assert errors == {(("area", area), ("host", "gpu-01")): 1 for area in ("gpudirect", "opensm", "roce_qos")}
    why = dict((r["area"], r["actual"]) for r in records)
    assert "not JSON" in why["roce_qos"] and "does not match" in why["gpudirect"] and "symlink" in why["opensm"]
    assert all(r["setting"] == "check" for r in records)

    # a reader that fails: every area with a spec is an error, no settings series (never "0: clean")
    (spec_dir / "roce_qos.json").write_text(_spec.content("roce_qos", spec))

    from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts

    def broken(module, subsets):
        raise OSError("sysfs unreadable")
    monkeypatch.setattr(_rdma_facts, "gather", broken)
    records, text = _drift_timer.run({"spec_dir": str(spec_dir)}, SimModule(sim), host="gpu-01")
    assert "rdma_fabric_node_drift_settings{" not in text
    assert _series(text, "rdma_fabric_node_drift_check_errors")[(("area", "roce_qos"), ("host", "gpu-01"))] == 1
    assert [r["area"] for r in records if "sysfs unreadable" in r["actual"]] == ["roce_qos"]


def test_the_health_timer_writes_the_drift_textfile_even_when_the_health_check_fails(monkeypatch, tmp_path):
    from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health_timer
    drift = tmp_path / "prom" / "rdma_fabric_node_drift.prom"
    config = tmp_path / "health.json"
    config.write_text(json.dumps({"host": "n1", "textfile": str(tmp_path / "prom" / "health.prom"),
                                  "drift": {"spec_dir": str(tmp_path / "none"), "textfile": str(drift)}}))

    def broken(config, module=None):
        raise OSError("health read failed")
    monkeypatch.setattr(_health_timer, "run", broken)
    assert _health_timer.main(["--config", str(config)]) == 1
    text = drift.read_text()
    assert "rdma_fabric_node_drift_last_run_timestamp_seconds{host=\"n1\"}" in text
    assert oct(os.stat(str(drift)).st_mode & 0o777) == "0o644"
