# -*- coding: utf-8 -*-
"""rdma.fabric.mlnx_qos main() against a simulated mlnx_qos.

FakeMlnxQos keeps a NIC's QoS state, applies argv the way mlnx_qos HEAD + the upstream mlx5
driver do (netlink app table: first DSCP 'set' turns trust to dscp, deleting the last one
flips it to pcp, '--trust dscp' installs the 64 default entries, '--trust' with
'--dscp2prio' is refused) and prints the HEAD report layout of samples/mlnx_qos.txt.
"""
from __future__ import absolute_import, division, print_function

import json

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.modules import mlnx_qos
from ansible_collections.rdma.fabric.tests.unit import helpers

TSA_ORDER = ("strict", "ets", "vendor")


class FakeMlnxQos(object):
    def __init__(self, fail_on_call=None, fail_text="mlnx_qos: Error setting pfc"):
        self.dcbx = "os"
        self.app = []               # DSCP app entries [(dscp, prio)] in insertion order
        self.sysfs_trust = "pcp"
        self.pfc = set()
        self.prio_tc = [1, 0, 2, 3, 4, 5, 6, 7]
        self.tsa = ["vendor"] * 8
        self.tcbw = [100] * 8       # what mlx5 holds for vendor TCs (never printed)
        self.rate = [0] * 8
        self.sizes = [0, 262016, 0, 0, 0, 0, 0, 0]
        self.p2b = [1] * 8
        self.cable = 7
        self.calls = []
        self.writes = []
        self.fail_on_call = fail_on_call
        self.fail_text = fail_text

    @property
    def trust(self):
        return "dscp" if self.app else "pcp"

    def report(self):
        out = ["DCBX mode: %s controlled" % ("OS" if self.dcbx == "os" else "Firmware"),
               "Priority trust state: %s" % self.trust]
        if self.trust == "dscp":
            out.append("dscp2prio mapping:")
            for prio in range(8):
                vals = "".join("%02d," % d for d, p in self.app if p == prio)
                while len(vals) > 24:
                    out.append("\tprio:%d dscp:%s" % (prio, vals[:24]))
                    vals = vals[24:]
                if vals:
                    out.append("\tprio:%d dscp:%s" % (prio, vals))
        out.append("Receive buffer size (bytes): %s,max_buffer_size=262016" % ",".join(str(s) for s in self.sizes))
        out.append("Cable len: %d" % self.cable)
        out.append("PFC configuration:")
        out.append("\tpriority    0   1   2   3   4   5   6   7")
        out.append("\tenabled     " + "".join("%d   " % (1 if p in self.pfc else 0) for p in range(8)))
        out.append("\tbuffer      " + "".join("%d   " % b for b in self.p2b))
        for tc in range(8):
            rate = "unlimited" if not self.rate[tc] else "%.1f Gbps" % self.rate[tc]
            tsa = "ets, bw: %d%%" % self.tcbw[tc] if self.tsa[tc] == "ets" else self.tsa[tc]
            out.append("tc: %d ratelimit: %s, tsa: %s" % (tc, rate, tsa))
            for prio in range(8):
                if self.prio_tc[prio] == tc:
                    out.append("\t priority:  %d" % prio)
        return "\n".join(out) + "\n"

    def set_app(self, dscp, prio):
        self.app = [(d, p) for d, p in self.app if d != dscp]
        self.app.append((dscp, prio))

    def __call__(self, args):
        assert args[0] == "/usr/bin/mlnx_qos" and args[1] == "-i"
        self.calls.append(list(args))
        opts = args[3:]
        if opts == ["-a"]:
            return 0, self.report(), ""
        self.writes.append(list(args))
        if self.fail_on_call is not None and len(self.writes) == self.fail_on_call:
            return 1, self.fail_text + "\n", ""
        pairs = []
        i = 0
        while i < len(opts):
            pairs.append((opts[i], opts[i + 1]))
            i += 2
        keys = [k for k, v in pairs]
        if "--trust" in keys and "--dscp2prio" in keys:
            return 1, "trust and dscp2prio commands cannot be used at the same time.\n", ""
        for key, value in pairs:
            if key == "--dcbx":
                self.dcbx = value
            elif key == "--cable_len":
                self.cable = int(value)
            elif key == "--pfc":
                self.pfc = set(p for p, v in enumerate(value.split(",")) if v == "1")
            elif key == "--dscp2prio":
                action, dscp, prio = value.split(",")
                if action == "set":
                    self.set_app(int(dscp), int(prio))
                else:
                    self.app = [(d, p) for d, p in self.app if (d, p) != (int(dscp), int(prio))]
            elif key == "--trust":
                if value == "dscp" and not self.app:
                    self.app = [(d, d >> 3) for d in range(63, -1, -1)]
                elif value == "pcp":
                    self.app = []
            elif key == "--buffer_size":
                self.sizes = [int(v) for v in value.split(",")]
            elif key == "--prio2buffer":
                if "--buffer_size" not in keys:        # MLNX_OFED sysfs path
                    self.p2b = [int(v) for v in value.split(",")]
            elif key == "--ratelimit":
                self.rate = [int(v) for v in value.split(",")]
            elif key == "--tsa":
                self.tsa = value.split(",")
            elif key == "--tcbw":
                self.tcbw = [int(v) for v in value.split(",")]
            elif key == "--prio_tc":
                self.prio_tc = [int(v) for v in value.split(",")]
            else:
                raise AssertionError("unexpected option %s" % key)
        ets_set = set(keys) & set(("--tsa", "--tcbw", "--prio_tc"))
        if ets_set and any(self.tsa[t] != "ets" and self.tcbw[t] for t in range(8)):
            return 1, "[Errno 22] Invalid argument\n", ""
        return 0, self.report(), ""


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    (tmp_path / "class" / "net" / "eth2").mkdir(parents=True)
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))
    return tmp_path


def run_many(monkeypatch, device, args, check_mode=False, diff=False):
    def run_command(argv, **kwargs):
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        return device(argv)

    return helpers.run_module(monkeypatch, mlnx_qos.main, args, check_mode=check_mode, diff=diff,
                              run_command=run_command, bin_dir="/usr/bin/")


def run(monkeypatch, device, args, check_mode=False, diff=False):
    """One interface (see helpers.run_one_object)."""
    return helpers.run_one_object(lambda a, **kw: run_many(monkeypatch, device, a, **kw), args, ("interface",),
                                  check_mode=check_mode, diff=diff)


ROCE = {"dcbx": "os", "trust": "dscp", "pfc": [3],
        "dscp2prio": [{"dscp": 26, "priority": 3}, {"dscp": 48, "priority": 6}],
        "prio_tc": [0, 0, 0, 3, 0, 0, 6, 0],
        "tsa": ["ets", "strict", "strict", "ets", "strict", "strict", "strict", "strict"],
        "tcbw": [50, 0, 0, 50, 0, 0, 0, 0],
        "buffer_size": [130944, 130944, 0, 0, 0, 0, 0, 0],
        "prio2buffer": [0, 0, 0, 1, 0, 0, 0, 0]}


def test_quartet_check_real_idempotent_idempotent_check(monkeypatch, sysfs):
    device = FakeMlnxQos()
    args = {"interface": "eth2", "config": ROCE, "state": "replaced"}
    kind, res = run(monkeypatch, device, args, check_mode=True, diff=True)
    assert kind == "exit" and res["changed"] is True
    assert device.writes == []
    assert res["after"]["pfc"] == [3] and res["after"]["trust"] == "dscp"
    assert res["diff"]["before"]["pfc"] == [] and res["diff"]["after"]["pfc"] == [3]
    planned = res["commands"]

    kind, res = run(monkeypatch, device, args)
    assert kind == "exit" and res["changed"] is True
    assert res["commands"] == planned
    assert [" ".join(w).replace("/usr/bin/", "") for w in device.writes] == planned
    assert len(device.writes) == 2      # main call + dscp2prio/prio2buffer call
    assert "--trust dscp" in planned[0] and "--dscp2prio" in planned[1]
    assert res["after"]["trust"] == "dscp"
    assert {"dscp": 26, "priority": 3} in res["after"]["dscp2prio"]
    assert {"dscp": 48, "priority": 6} in res["after"]["dscp2prio"]
    assert res["after"]["prio2buffer"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert res["after"]["tcbw"] == [50, 0, 0, 50, 0, 0, 0, 0]
    assert "diff" not in res

    writes = len(device.writes)
    kind, res = run(monkeypatch, device, args)
    assert kind == "exit" and res["changed"] is False and res["commands"] == []
    assert len(device.writes) == writes
    kind, res = run(monkeypatch, device, args, check_mode=True)
    assert kind == "exit" and res["changed"] is False and res["commands"] == []


def test_trust_flip_trap_never_happens_when_moving_all_dscps_of_a_priority(monkeypatch, sysfs):
    device = FakeMlnxQos()
    device.app = [(26, 3)]          # a partial netlink table: 26 is the only (last) entry
    args = {"interface": "eth2", "state": "merged",
            "config": {"trust": "dscp", "dscp2prio": {26: 5, 27: 3}}}
    kind, res = run(monkeypatch, device, args)
    assert kind == "exit", res
    assert res["commands"] == ["mlnx_qos -i eth2 --dscp2prio set,26,5 --dscp2prio set,27,3"]
    assert device.trust == "dscp"
    assert sorted(device.app) == [(26, 5), (27, 3)]


def test_gathered_returns_config_shape(monkeypatch, sysfs):
    device = FakeMlnxQos()
    kind, res = run(monkeypatch, device, {"interface": "eth2", "state": "gathered"})
    assert kind == "exit" and res["changed"] is False
    assert res["gathered"]["trust"] == "pcp" and res["gathered"]["dscp2prio"] is None
    assert res["gathered"]["prio_tc"] == [1, 0, 2, 3, 4, 5, 6, 7]
    assert res["gathered"]["buffer_size"] == [0, 262016, 0, 0, 0, 0, 0, 0]
    assert device.calls == [["/usr/bin/mlnx_qos", "-i", "eth2", "-a"]]


def test_rendered_needs_no_host(monkeypatch, sysfs):
    device = FakeMlnxQos()
    kind, res = run(monkeypatch, device, {"interface": "eth9", "state": "rendered",
                                          "config": {"trust": "dscp", "pfc": [3], "dscp2prio": {26: 3}}})
    assert kind == "exit" and device.calls == []
    assert res["rendered"] == ["mlnx_qos -i eth9 --pfc 0,0,0,1,0,0,0,0 --trust dscp",
                               "mlnx_qos -i eth9 --dscp2prio set,26,3"]


def test_parsed_round_trip_from_running_config(monkeypatch, sysfs):
    device = FakeMlnxQos()
    device.app = [(d, d >> 3) for d in range(64)]
    device.set_app(26, 3)
    text = device.report()
    kind, res = run(monkeypatch, FakeMlnxQos(), {"state": "parsed", "running_config": text})
    assert kind == "exit"
    assert res["parsed"]["trust"] == "dscp" and len(res["parsed"]["dscp2prio"]) == 64


def test_parsed_error_text(monkeypatch, sysfs):
    kind, res = run(monkeypatch, FakeMlnxQos(), {"state": "parsed",
                                                 "running_config": "Interface name is required\n"})
    assert kind == "fail" and "Interface name is required" in res["msg"]


def test_midway_failure_reports_applied_failed_not_attempted_and_readback(monkeypatch, sysfs):
    device = FakeMlnxQos(fail_on_call=2, fail_text="dscp2prio command failed")
    args = {"interface": "eth2", "state": "merged",
            "config": {"trust": "dscp", "pfc": [3], "dscp2prio": {26: 3}, "dcbx": "fw"}}
    kind, res = run(monkeypatch, device, args)
    assert kind == "fail"
    assert res["applied"] == ["mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0 --trust dscp"]
    assert res["failed_command"] == "mlnx_qos -i eth2 --dscp2prio set,26,3"
    assert res["not_attempted"] == ["mlnx_qos -i eth2 --dcbx fw"]
    assert res["changed"] is True
    assert "dscp2prio command failed" in res["msg"]
    assert "Applied: mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0 --trust dscp." in res["msg"]
    assert "Not attempted: mlnx_qos -i eth2 --dcbx fw." in res["msg"]
    assert res["after"]["pfc"] == [3] and res["after"]["trust"] == "dscp"   # read back, not assumed
    assert res["before"]["pfc"] == []


def test_traceback_on_first_write_is_a_clear_error(monkeypatch, sysfs):
    text = ("Traceback (most recent call last):\n  File \"mlnx_qos\", line 492, in <module>\n"
            "TypeError: can only concatenate str (not \"OSError\") to str\n")

    class Crashing(FakeMlnxQos):
        def __call__(self, args):
            if args[3:] != ["-a"]:
                self.writes.append(args)
                return 1, "", text
            return FakeMlnxQos.__call__(self, args)
    device = Crashing()
    kind, res = run(monkeypatch, device, {"interface": "eth2", "config": {"pfc": [3]}})
    assert kind == "fail"
    assert "TypeError: can only concatenate str" in res["msg"]
    assert res["applied"] == [] and res["changed"] is False


@pytest.mark.parametrize("config, words", [
    ({"pfc": [8]}, "config[0].pfc[0]=8: priority must be 0-7"),
    ({"dscp2prio": {64: 3}}, "DSCP must be 0-63"),
    ({"tcbw": [50, 0, 0, 40, 0, 0, 0, 0], "tsa": ["ets", "strict", "strict", "ets"] + ["strict"] * 4},
     "sums to 90"),
    ({"prio_tc": [0, 1]}, "config[0].prio_tc=[0, 1]: expected exactly 8 values"),
    ({"buffer_size": [0, 1000, 0, 0, 0, 0, 0, 0], "prio2buffer": [0] * 8, "pfc": [3]},
     "PFC priority 3 is mapped to receive buffer 0 (prio2buffer=[0, 0, 0, 0, 0, 0, 0, 0]), which has size 0"),
])
def test_bad_input_fails_before_any_call(monkeypatch, sysfs, config, words):
    device = FakeMlnxQos()
    kind, res = run(monkeypatch, device, {"interface": "eth2", "config": config})
    assert kind == "fail" and words in res["msg"]
    assert device.calls == []


def test_bad_input_needing_device_state_fails_before_any_write(monkeypatch, sysfs):
    device = FakeMlnxQos()      # trust pcp
    kind, res = run(monkeypatch, device, {"interface": "eth2", "config": {"dscp2prio": {26: 3}}})
    assert kind == "fail" and "config.dscp2prio needs trust dscp but eth2 trusts pcp" in res["msg"]
    assert device.writes == []


def test_unknown_interface(monkeypatch, sysfs):
    device = FakeMlnxQos()
    kind, res = run(monkeypatch, device, {"interface": "eth7", "config": {"pfc": [3]}})
    assert kind == "fail" and res["msg"].startswith("interface=eth7: no such network interface"), res["msg"]
    assert device.calls == []


def test_mlnx_qos_error_text_on_read(monkeypatch, sysfs):
    class NoDcb(FakeMlnxQos):
        def __call__(self, args):
            self.calls.append(args)
            return 1, ("****** WARNING: lldpad service is running and may overwrite your settings ******\n\n"
                       "Priority trust state is not supported on your system\n"
                       "ETS features are not supported on your system\n"), ""
    kind, res = run(monkeypatch, NoDcb(), {"interface": "eth2", "state": "gathered"})
    assert kind == "fail"
    assert "rc=1" in res["msg"] and "ETS features are not supported on your system" in res["msg"]
    assert "WARNING" not in res["msg"]


def test_device_not_keeping_a_value_warns(monkeypatch, sysfs):
    class NoRate(FakeMlnxQos):
        def __call__(self, args):
            rc, out, err = FakeMlnxQos.__call__(self, args)
            self.rate = [0] * 8       # silently not applied (mlnx_qos exits 0)
            return rc, out, err
    device = NoRate()
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, w: warnings.append(w))
    kind, res = run(monkeypatch, device, {"interface": "eth2", "config": {"ratelimit": [5, 0, 0, 0, 0, 0, 0, 0]}})
    # changed comes from before vs the read-back: the device kept nothing, so nothing changed
    assert kind == "exit" and res["changed"] is False and res["commands"] == ["mlnx_qos -i eth2 --ratelimit 5,0,0,0,0,0,0,0"]
    assert res["after"]["ratelimit"] == [0.0] * 8
    assert warnings and "--ratelimit 5,0,0,0,0,0,0,0" in warnings[0]


def test_result_is_json_serialisable(monkeypatch, sysfs):
    kind, res = run(monkeypatch, FakeMlnxQos(), {"interface": "eth2", "config": ROCE})
    json.dumps(res)


def test_tsa_only_change_sends_zero_share_for_non_ets_tcs(monkeypatch, sysfs):
    # mlx5 keeps 100 % on vendor TCs without printing it; sending --tsa alone would make the
    # kernel refuse the ETS set (non-ETS TC with a share). The module always sends --tcbw too.
    device = FakeMlnxQos()
    kind, res = run(monkeypatch, device, {"interface": "eth2", "config": {"tsa": ["strict"] * 8}})
    assert kind == "exit", res
    assert res["commands"] == ["mlnx_qos -i eth2 --tsa strict,strict,strict,strict,strict,strict,strict,strict "
                               "--tcbw 0,0,0,0,0,0,0,0"]
    assert res["after"]["tsa"] == ["strict"] * 8


def test_documentation_is_valid_yaml_and_matches_argspec():
    doc = helpers.assert_doc_matches_argspec(mlnx_qos)
    assert doc["module"] == "mlnx_qos" and doc["version_added"] == "0.1.0"
    assert set(doc["attributes"]) == {"action_group", "check_mode", "diff_mode", "platform"}


def test_interface_names_are_checked_by_the_kernel_rules(monkeypatch, sysfs):
    for name, words in (("..", "not a interface name"), ("eth/2", "cannot contain '/'"),
                        ("a" * 16, "at most 15 characters"), ("-a", "cannot start with '-'"),
                        ("eth2\n", "cannot contain '\\n'")):
        device = FakeMlnxQos()
        kind, res = run(monkeypatch, device, {"interface": name, "config": {"pfc": [3]}})
        assert kind == "fail" and "config[0].interface=%r" % name in res["msg"] and words in res["msg"], res["msg"]
        assert device.calls == []


class TwoPorts(object):
    """Two simulated NICs behind one mlnx_qos: argv[2] picks the interface."""

    def __init__(self, **kwargs):
        self.ports = {"eth2": FakeMlnxQos(), "eth3": FakeMlnxQos(**kwargs)}
        self.order = []

    def __call__(self, args):
        self.order.append((args[2], args[3:]))
        return self.ports[args[2]](args)


@pytest.fixture
def sysfs2(sysfs):
    (sysfs / "class" / "net" / "eth3").mkdir(parents=True)
    return sysfs


def test_many_interfaces_in_one_call_and_converged_reads_only(monkeypatch, sysfs2):
    device = TwoPorts()
    args = {"state": "replaced", "config": [dict(ROCE, interface="eth2"), dict(ROCE, interface="eth3")]}
    kind, res = run_many(monkeypatch, device, args, diff=True)
    assert kind == "exit" and res["changed"] is True
    assert [b["interface"] for b in res["before"]] == ["eth2", "eth3"]
    assert [a["pfc"] for a in res["after"]] == [[3], [3]]
    assert len(res["commands"]) == 4 and [c.split()[2] for c in res["commands"]] == ["eth2", "eth2", "eth3", "eth3"]
    assert [d["before_header"] for d in res["diff"]] == ["mlnx_qos -i eth2 (before)", "mlnx_qos -i eth3 (before)"]
    for port in device.ports.values():
        assert len(port.writes) == 2
    device.order = []
    kind, res = run_many(monkeypatch, device, args)
    assert kind == "exit" and res["changed"] is False and res["commands"] == []
    assert device.order == [("eth2", ["-a"]), ("eth3", ["-a"])]      # one read each, no write


def test_failure_on_the_second_interface_reports_both(monkeypatch, sysfs2):
    device = TwoPorts(fail_on_call=1, fail_text="Error: Invalid argument")
    args = {"state": "replaced", "config": [dict(ROCE, interface="eth2"), dict(ROCE, interface="eth3")]}
    kind, res = run_many(monkeypatch, device, args)
    assert kind == "fail"
    assert "failed midway on eth3" in res["msg"]
    assert len(res["applied"]) == 2 and all(" eth2 " in c for c in res["applied"])
    assert res["failed_command"].startswith("mlnx_qos -i eth3 ")
    assert len(res["not_attempted"]) == 1 and " eth3 " in res["not_attempted"][0]
    assert res["changed"] is True                               # eth2 changed, read back
    assert res["after"][0]["pfc"] == [3] and res["after"][1]["pfc"] == []


def test_a_planning_error_on_any_interface_stops_before_the_first_write(monkeypatch, sysfs2):
    device = TwoPorts()
    args = {"state": "replaced", "config": [dict(ROCE, interface="eth2"),
                                            {"interface": "eth3", "dscp2prio": {26: 3}}]}
    kind, res = run_many(monkeypatch, device, args)
    assert kind == "fail" and "eth3 trusts pcp" in res["msg"]
    assert device.ports["eth2"].writes == [] and device.ports["eth3"].writes == []


def test_an_interface_given_twice_is_refused(monkeypatch, sysfs2):
    device = TwoPorts()
    kind, res = run_many(monkeypatch, device, {"config": [{"interface": "eth2", "pfc": [3]},
                                                          {"interface": "eth2", "pfc": [4]}]})
    assert kind == "fail" and "config[1]: interface=eth2 is given twice (also in config[0])" in res["msg"]
    assert device.order == []
