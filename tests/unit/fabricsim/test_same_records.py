"""One drift, one record (issue 30): a drift injected on a node gives the same records from the
roce_qos role's verify (the modules in check mode with the area's plan, then the
rdma.fabric.area_records filter) and from the fleet drift check (state_check on the node with
the area's spec). Both run the real modules against fabricsim's tools and sysfs."""

import pytest

from ansible_collections.rdma.fabric.plugins.filter.area import area_plan, area_records
from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos
from ansible_collections.rdma.fabric.plugins.modules import dcqcn, lldp_dcb, mlnx_qos, rdma_facts, state_check
from ansible_collections.rdma.fabric.tests.unit import helpers

MODULES = {"mlnx_qos": mlnx_qos, "dcqcn": dcqcn, "lldp_dcb": lldp_dcb}


def _variables(**over):
    return helpers.role_defaults("roce_qos", **over)


_run = helpers.run_on_sim


def _role(monkeypatch, sim, spec, check_mode):
    """The role's tasks: rdma_facts, the plan, each module call of it; the verify's records."""
    facts = _run(monkeypatch, sim, rdma_facts.main, {"gather_subset": ["devices"]})["ansible_facts"]["rdma"]
    plan = area_plan(facts, "roce_qos", spec)
    results = {}
    for request in plan["requests"]:
        results[request["resource"]] = _run(monkeypatch, sim, MODULES[request["resource"]].main,
                                            {"state": request["state"], "config": request["config"]}, check_mode)
    return plan, area_records(results, "roce_qos", "gpu-01")


def _drift_check(monkeypatch, sim, spec):
    result = _run(monkeypatch, sim, state_check.main, {"areas": {"roce_qos": spec}, "host": "gpu-01"}, True)
    return result["drift_records"]


def _key(records):
    return sorted((r["object"], r["setting"], repr(r["expected"]), repr(r["actual"])) for r in records)


@pytest.mark.parametrize("lldp", [True, False])
def test_an_injected_drift_gives_the_same_records_from_the_role_and_the_drift_check(sim, monkeypatch, lldp):
    sim.init("hgx-h100-roce")
    if lldp:
        assert sim.cli("lldpad", "start") == 0
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    spec = roce_qos.spec(_variables(roce_qos_lldp=lldp, roce_qos_persist=False), lambda term: "")
    plan, _records = _role(monkeypatch, sim, spec, check_mode=False)        # converge
    ports = [p["netdev"] for p in plan["ports"]]
    assert len(ports) >= 2, ports
    assert _role(monkeypatch, sim, spec, check_mode=True)[1] == [] == _drift_check(monkeypatch, sim, spec)

    # the drift: PFC off on one port (the NIC and, with lldpad, its TLV), a DSCP moved, DCQCN
    # off on another port's lossless priority and its RDMA-CM default RoCE mode back to v1
    assert sim.run("mlnx_qos", "-i", ports[0], "--pfc", "0,0,0,0,0,0,0,0")[2] == 0
    assert sim.run("mlnx_qos", "-i", ports[0], "--dscp2prio", "set,26,1")[2] == 0
    if lldp:
        assert sim.run("lldptool", "-T", "-i", ports[0], "-V", "PFC", "enabled=none")[2] == 0
    device = plan["dcqcn"][1]["rdma_device"]
    sim.write_sysfs("class/net/%s/ecn/roce_np/enable/3" % ports[1], "0")
    assert sim.out("cma_roce_mode", "-d", device, "-p", str(plan["dcqcn"][1]["port"]), "-m", "1") == "IB/RoCE v1\n"

    _plan, role_records = _role(monkeypatch, sim, spec, check_mode=True)
    check_records = _drift_check(monkeypatch, sim, spec)
    assert _key(role_records) == _key(check_records)
    settings = set((r["object"], r["setting"]) for r in check_records)
    expected = set([(ports[0], "pfc"), (ports[0], "dscp2prio.26"), (ports[1], "np.enabled_priorities"),
                    (ports[1], "rdma_cm_roce_mode")])
    if lldp:
        expected.add((ports[0], "lldp.pfc.enabled"))
    assert settings == expected, (settings, device)
    assert [(r["expected"], r["actual"]) for r in check_records if r["setting"] == "rdma_cm_roce_mode"] == [("v2", "v1")]
