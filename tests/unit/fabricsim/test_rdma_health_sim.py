# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.rdma_health main() against fabricsim in a scratch directory (SYSFS_PATH = the
simulated tree, every tool answered by fabricsim's shims): a healthy node gives no finding,
each fault gives exactly its (check, subject, severity), and a bundle of the faulty node
gives the same findings offline."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.modules import rdma_health
from ansible_collections.rdma.fabric.tests.unit import helpers


def _wire(sim, monkeypatch, tmp_path):
    from fabricsim import main as sim_main
    monkeypatch.setenv("SYSFS_PATH", sim.sys)

    def run_command(self, argv, **kwargs):
        out, err, rc = sim_main.run_tool(os.path.basename(argv[0]), [str(a) for a in argv[1:]])
        return rc, out, err

    def get_bin_path(self, name, *args, **kwargs):
        return "/usr/local/sbin/" + name if name in sim_main.TOOLS + sim_main.READ_ONLY_TOOLS else None

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", get_bin_path)
    return str(tmp_path / "health-state.json")


def run(monkeypatch, args):
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", helpers._exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", helpers._fail_json)
    from ansible_collections.rdma.fabric.tests.unit.helpers import patch_module_args
    with patch_module_args(args):
        try:
            rdma_health.main()
        except helpers.ExitJson as exc:
            return "exit", exc.args[0]
        except helpers.FailJson as exc:
            return "fail", exc.args[0]
    raise AssertionError("no exit_json")


def healthy(sim, profile):
    """A converged node: the profile plus what the gpudirect role does (peer memory loaded)
    and, where lldpad runs (small-roce), what roce_qos sets: PFC and ETS as the switch has them."""
    sim.init(profile)
    if profile != "small-roce":
        sim.out("modprobe", "nvidia_peermem")
    else:
        for netdev in ("ens1f0np0", "ens1f1np1"):
            sim.out("mlnx_qos", "-i", netdev, "--pfc", "0,0,0,1,0,0,0,0", "--prio_tc", "0,0,0,3,0,0,6,0",
                    "--tsa", "ets,strict,strict,ets,strict,strict,strict,strict", "--tcbw", "50,0,0,50,0,0,0,0")


def triples(result):
    return sorted((f["check"], f["subject"], f["severity"]) for f in result["findings"])


@pytest.mark.parametrize("profile", ["hgx-h100-roce", "dgx-h100-ib", "small-roce"])
def test_healthy_node_has_no_finding(sim, monkeypatch, tmp_path, profile):
    healthy(sim, profile)
    state_file = _wire(sim, monkeypatch, tmp_path)
    how, result = run(monkeypatch, {"interval": 0.2, "state_file": state_file, "host": "node1",
                                    "boot_grace": 0})
    assert how == "exit", result
    assert result["findings"] == [], [(f["check"], f["subject"], f["actual"]) for f in result["findings"]]
    assert result["changed"] is False
    with open(state_file) as handle:
        assert json.load(handle)["ports"]          # the flap baseline is kept


def test_link_down_and_pcie_downgrade(sim, monkeypatch, tmp_path):
    healthy(sim, "hgx-h100-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    assert sim.cli("fault", "link-down", "mlx5_1") == 0
    how, result = run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1"})
    assert how == "exit", result
    assert [t for t in triples(result) if t[0] == "link"] == [("link", "mlx5_1 port 1 (enp64s0np0)", "error")]
    assert all(f["host"] == "node1" and f["diagnosis"] and f["remedy"] for f in result["findings"])


def test_bundle_gives_the_same_findings(sim, monkeypatch, tmp_path):
    healthy(sim, "hgx-h100-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    assert sim.cli("fault", "link-down", "mlx5_1") == 0
    how, online = run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1", "return_raw": True})
    assert how == "exit", online
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "health-raw.json").write_text(json.dumps(online["raw"]))
    sim.cli("clear")
    how, offline = run(monkeypatch, {"bundle": str(bundle), "host": "node1"})
    assert how == "exit", offline
    assert offline["source"] == "bundle"
    assert offline["findings"] == online["findings"] and online["findings"]


def _ticking_sleep(monkeypatch):
    """In a container fabricsim-sysfsd rewrites growing sysfs counters while the module sleeps;
    here the sleep does it."""
    import time
    from fabricsim import health_faults
    from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
    real = time.sleep

    now = time.time

    class Clock(object):
        @staticmethod
        def sleep(seconds):
            real(seconds)
            health_faults.tick()

    Clock.time = staticmethod(now)

    monkeypatch.setattr(_health_read, "time", Clock)


# (profile, fault argv, expected (check, subject, severity) findings)
FAULTS = [
    ("hgx-h100-roce", ["pause-storm", "enp24s0np0"], [("pfc_storm", "mlx5_0 port 1 (enp24s0np0)", "error")]),
    ("hgx-h100-roce", ["cnp-surge", "mlx5_3"], [("ecn", "mlx5_3 port 1 (enp94s0np0)", "warning")]),
    ("hgx-h100-roce", ["gid-full", "mlx5_2"], [("gid_table", "mlx5_2 port 1 (enp79s0np0)", "error")]),
    ("hgx-h100-roce", ["flap", "mlx5_4", "0.1"], [("flap", "mlx5_4 port 1 (enp154s0np0)", "error")]),
    ("hgx-h100-roce", ["pcie-degrade", "0000:18:00.0", "16GT/s", "16"], [("pcie", "NIC mlx5_0 (0000:18:00.0)", "error")]),
    ("hgx-h100-roce", ["peermem-absent"], [("gdr", "peer memory", "error")]),
    # ip shows an address on the netdev that has no GID: exactly that finding (the table is not full)
    ("hgx-h100-roce", ["addr-no-gid", "enp64s0np0", "10.10.1.99/24"],
     [("gid_ipv4", "mlx5_1 port 1 (enp64s0np0)", "error")]),
    ("dgx-h100-ib", ["sm-gone"], "every IB port"),
]


def ib_ports(sim):
    from fabricsim import state
    return [("sm", "%s port %d (%s)" % (nic["dev"], port["port"], port["netdev"]), "error")
            for nic in state.load_profile().nics for port in nic["ports"] if port["link_layer"] == "InfiniBand"]


@pytest.mark.parametrize("profile, fault, expected", FAULTS, ids=[f[1][0] for f in FAULTS])
def test_each_fault_gives_exactly_its_finding(sim, monkeypatch, tmp_path, profile, fault, expected):
    healthy(sim, profile)
    state_file = _wire(sim, monkeypatch, tmp_path)
    _ticking_sleep(monkeypatch)
    assert sim.cli("fault", *fault) == 0
    how, result = run(monkeypatch, {"interval": 0.5, "state_file": state_file, "host": "node1", "boot_grace": 0})
    assert how == "exit", result
    if expected == "every IB port":
        expected = ib_ports(sim)
        assert len(expected) == 8
    assert triples(result) == sorted(expected), [(f["check"], f["subject"], f["actual"]) for f in result["findings"]]
    if fault[0] == "addr-no-gid":
        assert result["findings"][0]["actual"] == "none for 10.10.1.99"
        assert result["ports"]["mlx5_1/1"]["gid_table"]["ipv4_addresses"] == ["10.10.1.11", "10.10.1.99"]
        assert result["ports"]["mlx5_1/1"]["gid_table"]["roce_v2_ipv4"] == ["10.10.1.11"]
    assert [s["check"] for s in result["skipped_checks"]] == ["lossless_agreement"]     # no lldpad: said, not judged


def test_flap_counted_over_runs_and_not_within_the_boot_grace(sim, monkeypatch, tmp_path):
    healthy(sim, "dgx-h100-ib")
    state_file = _wire(sim, monkeypatch, tmp_path)
    args = {"interval": 0, "state_file": state_file, "host": "node1", "boot_grace": 0}
    assert run(monkeypatch, args)[1]["findings"] == []          # the baseline
    assert sim.cli("fault", "counters", "mlx5_1", "link_downed=3") == 0
    how, result = run(monkeypatch, args)
    assert triples(result) == [("flap", "mlx5_1 port 1 (ibp64s0)", "error")]
    assert result["ports"]["mlx5_1/1"]["flaps"]["count"] == 3
    how, result = run(monkeypatch, dict(args, boot_grace=10 ** 9))   # just booted: not counted
    assert result["findings"] == []


class SimNode(object):
    """_health_timer.NodeModule with every tool answered by fabricsim."""

    check_mode = False

    def get_bin_path(self, name, required=False, opt_dirs=None):
        from fabricsim import main as sim_main
        return "/usr/local/sbin/" + name if name in sim_main.TOOLS + sim_main.READ_ONLY_TOOLS else None

    def run_command(self, argv, environ_update=None, check_rc=False):
        from fabricsim import main as sim_main
        out, err, rc = sim_main.run_tool(os.path.basename(argv[0]), [str(a) for a in argv[1:]])
        return rc, out, err

    def warn(self, msg):
        pass


def test_periodic_check_gives_the_module_findings_as_metrics(sim, monkeypatch, tmp_path):
    from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health_timer
    healthy(sim, "hgx-h100-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    _ticking_sleep(monkeypatch)
    assert sim.cli("fault", "pause-storm", "enp24s0np0") == 0
    assert sim.cli("fault", "peermem-absent") == 0
    config = {"host": "node1", "interval": 0.5, "state_file": state_file, "boot_grace": 0, "period_seconds": 300.0}
    findings, text = _health_timer.run(config, SimNode())
    how, result = run(monkeypatch, {"interval": 0.5, "state_file": state_file, "host": "node1", "boot_grace": 0})
    assert sorted((f["check"], f["subject"], f["severity"]) for f in findings) == triples(result) == [
        ("gdr", "peer memory", "error"), ("pfc_storm", "mlx5_0 port 1 (enp24s0np0)", "error")]
    lines = text.splitlines()
    assert 'rdma_fabric_health_findings{host="node1",check="pfc_storm",severity="error"} 1' in lines
    assert 'rdma_fabric_health_findings{host="node1",check="gdr",severity="error"} 1' in lines
    assert 'rdma_fabric_health_findings{host="node1",check="ecn",severity="warning"} 0' in lines
    assert 'rdma_fabric_health_port_findings{host="node1",port="mlx5_0/1",check="pfc_storm"} 1' in lines
    assert 'rdma_fabric_health_check_failing{host="node1",check="pfc_storm",subject="mlx5_0 port 1",device="mlx5_0",' \
        'port="1",severity="error"} 1' in lines
    # the raw counters for Prometheus to rate: the storm's priority-3 pause frames on mlx5_0 port 1
    pause = [l for l in lines if l.startswith('rdma_fabric_port_pause_frames_total{host="node1",device="mlx5_0",port="1",'
                                              'priority="3",direction="rx"}')]
    assert pause and float(pause[0].split()[-1]) > 1000
    assert any(l.startswith('rdma_fabric_health_timer_last_success_timestamp_seconds{host="node1"} ') for l in lines)
    # its period, for the staleness alerts (2.5 periods)
    assert 'rdma_fabric_health_timer_period_seconds{host="node1"} 300.0' in lines


def test_bundle_files_and_nothing_secret(sim, monkeypatch, tmp_path):
    from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
    healthy(sim, "hgx-h100-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    how, result = run(monkeypatch, {"interval": 0.2, "state_file": state_file, "host": "node1", "return_raw": True,
                                    "nccl_log_text": "NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB e:1<0>\n"
                                                     "sm_key 0x0000000000000001\n"})
    assert how == "exit", result
    files = dict((f["name"], f["content"]) for f in _health_read.bundle_files(result["raw"]))
    assert "health-raw.json" in files and "nccl.log" in files and "ibv_devinfo-v.txt" in files
    assert any(name.startswith("ethtool-S.mlx5_0_1.sample1") for name in files)
    assert "0x0000000000000001" not in "".join(files.values())
    assert "sm_key <redacted>" in files["nccl.log"]
    with pytest.raises(ValueError):
        _health_read.bundle_files({"version": 0})


def _neighbour(**changes):
    from fabricsim import state
    data = state.profile_data()
    data["lldp_neighbour"].update(changes)
    state.save_profile_data(data)


def test_lossless_agreement_against_the_simulated_switch(sim, monkeypatch, tmp_path):
    healthy(sim, "small-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    args = {"interval": 0, "state_file": state_file, "host": "node1", "boot_grace": 0}
    _neighbour(dcbx="cee")                         # a CEE switch with the same PFC / ETS: agreement
    how, result = run(monkeypatch, args)
    assert how == "exit" and result["findings"] == [], triples(result)
    assert result["lossless"]["ens1f0np0"]["peer"]["dcbx"] == "cee"
    _neighbour(dcbx="ieee", pfc=[3, 4])            # the switch enables PFC on 4 too
    how, result = run(monkeypatch, args)
    assert triples(result) == [("lossless_agreement", "ens1f0np0 PFC", "error"),
                               ("lossless_agreement", "ens1f1np1 PFC", "error")]
    assert result["findings"][0]["diagnosis"] == "lldptool -t -n -i ens1f0np0 -V PFC; mlnx_qos -i ens1f0np0"
    assert result["skipped_checks"] == []


def test_lossless_without_lldpad_or_with_firmware_dcbx(sim, monkeypatch, tmp_path):
    healthy(sim, "small-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    args = {"interval": 0, "state_file": state_file, "host": "node1", "boot_grace": 0}
    sim.out("mlnx_qos", "-i", "ens1f0np0", "--dcbx", "fw")
    how, result = run(monkeypatch, args)
    # the firmware answers the switch: lldpad sees no DCB TLV on that port, and says why
    assert triples(result) == [("lossless_unverified", "ens1f0np0 DCBX", "warning")]
    assert "firmware-controlled" in result["findings"][0]["actual"]
    assert sim.cli("lldpad", "stop") == 0
    how, result = run(monkeypatch, args)
    assert how == "exit" and result["findings"] == []
    assert [s["check"] for s in result["skipped_checks"]] == ["lossless_agreement"]
    assert "lldpad is not running" in result["skipped_checks"][0]["reason"]
    assert result["lossless"] == {"skipped": result["skipped_checks"][0]["reason"]}


# ---------------------------------------------------------------- rdma_facts / gdr_readiness offline

def _main(monkeypatch, main, args):
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", helpers._exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", helpers._fail_json)
    from ansible_collections.rdma.fabric.tests.unit.helpers import patch_module_args
    with patch_module_args(args):
        try:
            main()
        except helpers.ExitJson as exc:
            return "exit", exc.args[0]
        except helpers.FailJson as exc:
            return "fail", exc.args[0]
    raise AssertionError("no exit_json")


def _collect(sim, monkeypatch, tmp_path, name="node1"):
    """What playbooks/collect.yml writes: COLLECT_DIR/HOST/<bundle files> and HOST.tar.gz."""
    import tarfile
    from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
    how, result = run(monkeypatch, {"interval": 0, "state_file": "", "host": name, "return_raw": True})
    assert how == "exit", result
    node = tmp_path / "bundles" / name
    node.mkdir(parents=True)
    for entry in _health_read.bundle_files(result["raw"]):
        (node / entry["name"]).write_text(entry["content"])
    archive = tmp_path / "bundles" / ("%s.tar.gz" % name)
    with tarfile.open(str(archive), "w:gz") as handle:
        handle.add(str(node), arcname=name)
    return node, archive


@pytest.mark.parametrize("profile,faults", [
    ("hgx-h100-roce", [["link-down", "mlx5_1"], ["pcie-degrade", "0000:18:00.0", "16GT/s", "16"]]),
    ("dgx-h100-ib-misplaced", [["sm-gone"]]),
    ("small-roce", []),
])
def test_rdma_facts_offline_equals_online(sim, monkeypatch, tmp_path, profile, faults):
    from ansible_collections.rdma.fabric.plugins.modules import rdma_facts
    healthy(sim, profile)
    _wire(sim, monkeypatch, tmp_path)
    for fault in faults:
        assert sim.cli("fault", *fault) == 0
    node, archive = _collect(sim, monkeypatch, tmp_path)
    for subset in (["all"], ["devices", "gids"], ["devices", "pci", "counters"], ["gpus"]):
        how, online = _main(monkeypatch, rdma_facts.main, {"gather_subset": subset})
        assert how == "exit", online
        online = json.loads(json.dumps(online["ansible_facts"]["rdma"]))
        if "counters" in subset:       # counters move between two reads: compare the names
            for device in online["devices"].values():
                for port in device["ports"]:
                    port["counters"] = sorted(port["counters"])
        for source in (node, node / "health-raw.json", archive):
            how, offline = _main(monkeypatch, rdma_facts.main, {"gather_subset": subset, "bundle": str(source)})
            assert how == "exit", offline
            offline = offline["ansible_facts"]["rdma"]
            assert offline.pop("source") == "bundle" and online["source"] == "host"
            if "counters" in subset:
                for device in offline["devices"].values():
                    for port in device["ports"]:
                        port["counters"] = sorted(port["counters"])
            for name in online["devices"]:
                assert offline["devices"][name] == online["devices"][name], (subset, name)
            assert offline == dict((k, v) for k, v in online.items() if k != "source"), subset
    # the faults show in the offline facts as they did online
    how, offline = _main(monkeypatch, rdma_facts.main, {"bundle": str(archive)})
    ports = dict((n, d["ports"][0]) for n, d in offline["ansible_facts"]["rdma"]["devices"].items())
    if profile == "hgx-h100-roce":
        assert ports["mlx5_1"]["state"] == "DOWN" and ports["mlx5_0"]["state"] == "ACTIVE"
        assert ports["mlx5_0"]["rate_gbps"] == 400
        assert offline["ansible_facts"]["rdma"]["devices"]["mlx5_0"]["pcie"]["downgraded"] is True
    elif profile == "dgx-h100-ib-misplaced":
        assert ports["mlx5_0"]["sm_lid"] == 0 and ports["mlx5_0"]["link_layer"] == "InfiniBand"


@pytest.mark.parametrize("profile", ["hgx-h100-roce", "dgx-h100-ib-misplaced", "small-roce"])
def test_gdr_readiness_offline_equals_online(sim, monkeypatch, tmp_path, profile):
    from ansible_collections.rdma.fabric.plugins.modules import gdr_readiness
    healthy(sim, profile)
    _wire(sim, monkeypatch, tmp_path)
    if profile == "hgx-h100-roce":
        assert sim.cli("fault", "peermem-absent") == 0
    node, archive = _collect(sim, monkeypatch, tmp_path)
    for level in ("PXB", "SYS"):
        how, online = _main(monkeypatch, gdr_readiness.main, {"gdr_level": level})
        if how == "fail":       # e.g. no /proc/modules and no sysfs module/ here: the bundle says so too
            assert profile == "small-roce" and "proc_root" in online["msg"]
            how, offline = _main(monkeypatch, gdr_readiness.main, {"bundle": str(archive)})
            assert how == "fail" and "no gdr_readiness record (%s)" % online["msg"] in offline["msg"], offline
            return
        assert how == "exit", online
        online = json.loads(json.dumps(online["ansible_facts"]["gdr"]))
        for source in (node, archive):
            how, offline = _main(monkeypatch, gdr_readiness.main, {"gdr_level": level, "bundle": str(source)})
            assert how == "exit", offline
            offline = offline["ansible_facts"]["gdr"]
            assert offline["source"] == "bundle" and online["source"] == "host"
            assert dict(offline, source="host") == online
    if profile == "hgx-h100-roce":
        assert offline["peer_memory"]["method"] is None and offline["gpu_count"] == 8 and not offline["ready"]
    elif profile == "dgx-h100-ib-misplaced":
        redirect = [g["gpu"] for g in offline["gpus"] if g["acs_redirect"]]
        assert redirect and "0000:5d:00.0" in offline["acs"]["targets_redirect_enabled"]
    else:
        assert offline["gpu_count"] == 0 and offline["summary"][0].startswith("no GPU found")


def test_bundle_option_refuses_what_is_no_bundle(sim, monkeypatch, tmp_path):
    from ansible_collections.rdma.fabric.plugins.modules import gdr_readiness, rdma_facts
    (tmp_path / "empty").mkdir()
    (tmp_path / "other.json").write_text('{"version": 1}')
    (tmp_path / "junk.tar.gz").write_bytes(b"\x1f\x8b not gzip")
    for main in (rdma_facts.main, gdr_readiness.main):
        for path, words in ((tmp_path / "empty", "no health-raw.json"), (tmp_path / "other.json", "not an rdma_health"),
                            (tmp_path / "junk.tar.gz", "bundle=")):
            how, result = _main(monkeypatch, main, {"bundle": str(path)})
            assert how == "fail" and words in result["msg"] and str(path) in result["msg"], result
        how, result = _main(monkeypatch, main, {"bundle": str(tmp_path / "empty"), "captured": {"ibstat": "x"}})
        assert how == "fail" and "mutually exclusive" in result["msg"]


def test_lossless_case_of_the_molecule_scenario(sim, monkeypatch, tmp_path):
    """hgx-h100-roce as molecule/health makes it: lldpad running, every rail's PFC/ETS as the switch
    sends them; then the switch port of enp64s0np0 enables PFC on 4 too (fault switch-pfc) and
    mlx5_5 runs DCBX in firmware: exactly one agreement error and one unverified warning."""
    healthy(sim, "hgx-h100-roce")
    state_file = _wire(sim, monkeypatch, tmp_path)
    args = {"interval": 0, "state_file": state_file, "host": "node1", "boot_grace": 0}
    assert sim.cli("lldpad", "start") == 0
    from fabricsim import state
    for netdev in state.load_profile().roce_netdevs():
        sim.out("mlnx_qos", "-i", netdev, "--pfc", "0,0,0,1,0,0,0,0", "--prio_tc", "0,0,0,3,0,0,6,0",
                "--tsa", "ets,strict,strict,ets,strict,strict,strict,strict", "--tcbw", "50,0,0,50,0,0,0,0")
    how, result = run(monkeypatch, args)
    assert how == "exit" and result["findings"] == [], triples(result)
    assert [s["check"] for s in result["skipped_checks"]] == []
    assert sim.cli("fault", "switch-pfc", "enp64s0np0", "3,4") == 0
    assert sim.cli("fault", "switch-pfc", "enp64s0np0", "8") != 0
    sim.out("mlnx_qos", "-i", "enp192s0np0", "--dcbx", "fw")
    how, result = run(monkeypatch, args)
    assert triples(result) == [("lossless_agreement", "enp64s0np0 PFC", "error"),
                               ("lossless_unverified", "enp192s0np0 DCBX", "warning")]
    by_check = dict((f["check"], f) for f in result["findings"])
    assert by_check["lossless_agreement"]["expected"] == "PFC on priorities 3 (host)"
    assert by_check["lossless_agreement"]["actual"] == "switch: 3, 4"
    assert "firmware-controlled" in by_check["lossless_unverified"]["actual"]
