"""roce_qos_rollback_on_failure against fabricsim's mlnx_qos (issue 15): the tool fails on the
2nd write after applying part of it (`fabricsim fault fail-after mlnx_qos 2`); the rollback the
roce_qos filter computes, run through the same module, puts the port back to the report it
printed before the run, byte for byte."""
import os

from ansible_collections.rdma.fabric.plugins.filter.roce_qos import roce_qos_rollback
from ansible_collections.rdma.fabric.plugins.module_utils.areas.roce_qos import mlnx_qos_config
from ansible_collections.rdma.fabric.plugins.modules import mlnx_qos
from ansible_collections.rdma.fabric.tests.unit import helpers
from ansible_collections.rdma.fabric.tests.unit.bad_input.test_bad_input import _roce_settings

IF = "enp24s0np0"          # hgx-h100-roce rail 0


def _module(monkeypatch, sim, args):
    def run_command(argv, **kwargs):
        out, err, rc = sim.run(os.path.basename(argv[0]), *argv[1:])
        return rc, out, err
    return helpers.run_module(monkeypatch, mlnx_qos.main, args, run_command=run_command, bin_dir="/usr/bin/")


def test_rollback_after_mlnx_qos_fails_midway_restores_the_report(sim, monkeypatch):
    sim.init("hgx-h100-roce")
    monkeypatch.setenv("SYSFS_PATH", sim.sys)
    before = sim.out("mlnx_qos", "-i", IF)
    assert sim.cli("fault", "fail-after", "mlnx_qos", "2") == 0
    config = [dict(mlnx_qos_config(_roce_settings()), interface=IF)]
    kind, failed = _module(monkeypatch, sim, {"state": "replaced", "config": config})
    assert kind == "fail" and failed["changed"] is True, failed
    assert failed["failed_on"] == {"interface": IF} and len(failed["applied"]) == 1
    assert sim.out("mlnx_qos", "-i", IF) != before                         # half applied
    rollback = roce_qos_rollback({"mlnx_qos": failed, "dcqcn": {}, "lldp_dcb": {}}, failed)
    assert [e["interface"] for e in rollback["mlnx_qos"]] == [IF]
    kind, restored = _module(monkeypatch, sim, {"state": "replaced", "config": rollback["mlnx_qos"]})
    assert kind == "exit", restored
    assert restored["after"] == failed["before"]
    assert sim.out("mlnx_qos", "-i", IF) == before
