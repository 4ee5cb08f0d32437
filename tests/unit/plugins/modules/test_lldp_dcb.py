# -*- coding: utf-8 -*-
"""lldp_dcb: parsers on samples/lldptool.txt (sample ids named) and main() on a fake lldpad."""
from __future__ import absolute_import, division, print_function

import re

import pytest

import samples
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _lldp_dcb as L
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _lldptool as T
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.modules import lldp_dcb
from ansible_collections.rdma.fabric.tests.unit import helpers

LL = samples.load("lldptool.txt")


def out(sample_id):
    return "".join(ln for ln in LL[sample_id].raw.splitlines(True)
                   if not re.match(r"^(\[rc=\d+\]|\$ |#####)", ln))


# ------------------------------------------------------------------ parsers
def test_tlv_evb_med_ieee_neighbor_dump():
    # TLV-EVB-MED-IEEE: neighbour dump with ETS-CFG, 'PFC enabled: none', blank line after EVB
    tlvs = T.parse_tlvs(out("TLV-EVB-MED-IEEE"))
    assert tlvs["pfc"] == {"willing": True, "enabled": []}
    assert tlvs["ets_cfg"] == {"willing": True, "up2tc": [0] * 8, "tsa": ["strict"] * 8, "tcbw": [0] * 8}
    assert tlvs["ets_rec"] is None and tlvs["app"] is None


def test_irdma_doc_spaces_and_ltv_typo():
    # IRDMA-README-TI: space-indented doc copy, 'PFC enabled: 0' = priority 0
    tlvs = T.parse_tlvs(out("IRDMA-README-TI"))
    assert tlvs["pfc"] == {"willing": False, "enabled": [0]}
    assert tlvs["ets_cfg"]["tcbw"] == [100, 0, 0, 0, 0, 0, 0, 0]
    assert tlvs["ets_cfg"]["tsa"] == ["ets"] + ["strict"] * 7


def test_recon_pfc_etscfg_app():
    # RECON-PFC-TLV (trailing space), RECON-ETSCFG-TLV, RECON-APP-TLV-DSCP (backspace bytes)
    assert T.parse_tlvs(out("RECON-PFC-TLV"))["pfc"] == {"willing": False, "enabled": [3]}
    ets = T.parse_tlvs(out("RECON-ETSCFG-TLV"))["ets_cfg"]
    assert ets == {"willing": False, "up2tc": [0, 0, 0, 3, 0, 0, 6, 0],
                   "tsa": ["ets", "strict", "strict", "ets", "strict", "strict", "strict", "strict"],
                   "tcbw": [50, 0, 0, 50, 0, 0, 0, 0]}
    assert T.parse_tlvs(out("RECON-APP-TLV-DSCP"))["app"] == [
        {"priority": 3, "selector": 3, "protocol": 4791},
        {"priority": 3, "selector": 5, "protocol": 26},
        {"priority": 6, "selector": 5, "protocol": 48}]


def test_empty_dump_on_port_without_dcb():
    # PFC-TLV-EMPTY / TLV-ALL-LOCAL: nothing or no 8021QAZ TLVs, rc 0
    assert T.parse_tlvs(out("PFC-TLV-EMPTY")) == {"pfc": None, "ets_cfg": None, "ets_rec": None, "app": None,
                                                  "dcbx": None}
    assert T.parse_tlvs(out("TLV-ALL-LOCAL"))["pfc"] is None


def test_get_args():
    assert T.parse_arg(out("LLDP-GET-ADMIN-1"), "adminStatus") == "disabled"
    assert T.parse_arg(out("LLDP-GET-ADMIN-2"), "adminStatus") == "rxtx"
    assert T.parse_arg(out("PFC-C-ENABLED-UNSET"), "enabled") == ""
    assert T.parse_arg(out("PFC-C-ENABLETX-DEFAULT"), "enableTx") == "no"


def test_pfc_bitmask_and_truncation():
    # PFC-C-MASK8: 'enabled=8' = priority 3; PFC-C-MASK255: 'enabled=25' is 255 cut to 2 chars
    mask8 = out("PFC-C-MASK8").split("\n", maxsplit=1)[0]
    assert mask8 == "enabled=8"
    assert T.pfc_from_bitmask(T.parse_arg(mask8, "enabled")) == [3]
    assert T.pfc_from_bitmask("25") is None                              # 25 or 250-255: unknown
    assert T.pfc_from_bitmask("25", tlv_enabled=list(range(8))) == list(range(8))   # TLV view decides
    assert T.pfc_from_bitmask("", tlv_enabled=None) is None


@pytest.mark.parametrize("sample_id, words", [
    ("PFC-SET-NOTCAPABLE", "Device not capable"),
    ("ERR-NODEV-TLV", "Device not found or inactive"),
    ("ERR-LLDPAD-NOT-RUNNING", "Failed to connect to lldpad"),
])
def test_errors_drop_stray_byte(sample_id, words):
    text = out(sample_id)
    with pytest.raises(T.ToolError) as err:
        T._call(lambda argv: (1, text, ""), ["lldptool", "-T"])
    assert err.value.msg.endswith(words) or words in err.value.msg
    assert not err.value.msg.endswith(" b")


# ------------------------------------------------------------------ validation / plan
@pytest.mark.parametrize("config, words", [
    ({"pfc": {"enabled": [9]}}, "config.pfc.enabled[0]=9: priority must be 0-7"),
    ({"app": [{"priority": 3, "selector": 6, "protocol": 4791}]}, "config.app[0].selector=6"),
    ({"app": [{"priority": 3, "selector": 5, "protocol": 64}]}, "config.app[0].protocol=64: protocol must be 0-63"),
    ({"ets_cfg": {"tcbw": [50, 0, 0, 40, 0, 0, 0, 0]}}, "config.ets_cfg.tcbw=[50, 0, 0, 40, 0, 0, 0, 0]: shares sum to 90"),
    ({"ets_rec": {"up2tc": [0, 0]}}, "config.ets_rec.up2tc=[0, 0]: expected exactly 8 values"),
])
def test_bad_input(config, words):
    with pytest.raises(ValidationError) as err:
        L.normalize_want(config)
    assert words in err.value.msg


def test_plan_only_differences_one_call_per_tlv_app_adds_before_deletes():
    have = {"admin_status": "rxtx", "pfc": {"willing": True, "enabled": [3], "enable_tx": True},
            "app": [{"priority": 4, "selector": 3, "protocol": 4791}], "app_enable_tx": True}
    want = L.normalize_want({"admin_status": "rxtx", "pfc": {"willing": False, "enabled": [3], "enable_tx": True},
                             "app": [{"priority": 3, "selector": 3, "protocol": 4791}]})
    assert [" ".join(c) for c in L.plan_commands(want, have, "replaced", "eth2")] == [
        "lldptool -T -i eth2 -V PFC willing=no",
        "lldptool -T -i eth2 -V APP app=3,3,4791",
        "lldptool -T -i eth2 -V APP -d app=4,3,4791"]
    assert [" ".join(c) for c in L.plan_commands(want, have, "merged", "eth2")][-1] == \
        "lldptool -T -i eth2 -V APP app=3,3,4791"


def test_plan_ets_format():
    want = L.normalize_want({"ets_cfg": {"willing": False, "up2tc": [0, 0, 0, 3, 0, 0, 6, 0],
                                         "tsa": ["ets", "strict", "strict", "ets", "strict", "strict", "strict", "strict"],
                                         "tcbw": [50, 0, 0, 50, 0, 0, 0, 0], "enable_tx": True}})
    assert [" ".join(c) for c in L.plan_commands(want, None, "merged", "eth2")] == [
        "lldptool -T -i eth2 -V ETS-CFG willing=no up2tc=0:0,1:0,2:0,3:3,4:0,5:0,6:6,7:0 "
        "tsa=0:ets,1:strict,2:strict,3:ets,4:strict,5:strict,6:strict,7:strict tcbw=50,0,0,50,0,0,0,0 enableTx=yes"]


# ------------------------------------------------------------------ main() on a fake lldpad
class FakeLldpad(object):
    def __init__(self, dcbx="Firmware"):
        self.admin = "disabled"
        self.pfc = {"willing": "yes", "enabled": 0, "enableTx": "no"}
        self.apps = []
        self.app_tx = "no"
        self.peer = "IEEE 8021QAZ PFC TLV\n\t Willing: yes\n\t PFC enabled: 3 4 \n"
        self.dcbx = dcbx
        self.writes = []

    def dump(self):
        text = "Chassis ID TLV\n\tMAC: 82:42:cf:f5:12:16\n"
        if self.pfc["enableTx"] == "yes":
            prios = " ".join(str(p) for p in range(8) if self.pfc["enabled"] >> p & 1)
            text += "IEEE 8021QAZ PFC TLV\n\t Willing: %s\n\t PFC enabled: %s \n" % (self.pfc["willing"], prios or "none")
        if self.apps:
            text += "IEEE 8021QAZ APP TLV\n" + "".join(
                "\tApp#%4d \t Prio %d \t Sel %d \t P-ID\t UDP or DCCP Port: %d\n" % (i, a[0], a[1], a[2])
                for i, a in enumerate(self.apps))
        return text + "End of LLDPDU TLV\n"

    def __call__(self, argv):
        name = argv[0].rsplit("/", 1)[-1]
        if name == "mlnx_qos":
            if "--dcbx" in argv:
                self.writes.append(argv)
                self.dcbx = "OS"
            return 0, ("DCBX mode: %s controlled\nPriority trust state: pcp\nCable len: 7\nPFC configuration:\n"
                       "\tpriority    0   1   2   3   4   5   6   7\n\tenabled     0   0   0   0   0   0   0   0   \n"
                       "tc: 0 ratelimit: unlimited, tsa: vendor\n" % self.dcbx
                       + "".join("\t priority:  %d\n" % p for p in range(8))), ""
        args = argv[1:]
        if args[:1] == ["get-lldp"]:
            return 0, "adminStatus=%s\n" % self.admin, ""
        if args[:1] == ["set-lldp"]:
            self.writes.append(argv)
            self.admin = args[-1].split("=")[1]
            return 0, "adminStatus = %s\n" % self.admin, ""
        if args == ["-t", "-i", "eth2"]:
            return 0, self.dump(), ""
        if args == ["-t", "-n", "-i", "eth2"]:
            return 0, self.peer, ""
        if args[:1] == ["-t"] and "-c" in args:
            tlv, arg = args[args.index("-V") + 1], args[-1]
            if tlv == "PFC":
                value = self.pfc[arg]
                # lldptool cuts the 'enabled' bitmask to 2 characters (PFC-C-MASK255)
                return 0, "%s=%s\n" % (arg, str(value)[:2] if arg == "enabled" else value), ""
            if tlv == "APP" and arg == "enableTx":
                return 0, "enableTx=%s\n" % self.app_tx, ""
            return 0, "%s=\n" % arg, ""      # ETS-*: nothing stored (PFC-C-ENABLED-UNSET style)
        if args[:1] == ["-T"]:
            self.writes.append(argv)
            tlv = args[args.index("-V") + 1]
            rest = args[args.index("-V") + 2:]
            if tlv == "APP":
                if rest[0] == "-d":
                    self.apps.remove(tuple(int(x) for x in rest[1].split("=")[1].split(",")))
                elif rest[0].startswith("app="):
                    self.apps.append(tuple(int(x) for x in rest[0].split("=")[1].split(",")))
                else:
                    self.app_tx = rest[0].split("=")[1]
                return 0, "", ""
            for item in rest:
                key, value = item.split("=")
                if key == "enabled":
                    value = 0 if value == "none" else sum(1 << int(p) for p in value.split(","))
                self.pfc[key] = value
            return 0, "", ""
        raise AssertionError(argv)


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    (tmp_path / "class" / "net" / "eth2").mkdir(parents=True)
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))


def run_many(monkeypatch, device, args, check_mode=False, diff=False):
    return helpers.run_module(monkeypatch, lldp_dcb.main, args, check_mode=check_mode, diff=diff,
                              run_command=lambda argv, **kw: device(argv), bin_dir="/usr/sbin/")


def run(monkeypatch, device, args, check_mode=False, diff=False):
    """One interface (see helpers.run_one_object)."""
    return helpers.run_one_object(lambda a, **kw: run_many(monkeypatch, device, a, **kw), args, ("interface",),
                                  check_mode=check_mode, diff=diff)


ROCE = {"admin_status": "rxtx", "pfc": {"willing": False, "enabled": [3], "enable_tx": True},
        "app": [{"priority": 3, "selector": 3, "protocol": 4791}], "app_enable_tx": True}


def test_firmware_dcbx_fails_clearly_without_switch(monkeypatch, sysfs):
    device = FakeLldpad(dcbx="Firmware")
    kind, res = run(monkeypatch, device, {"interface": "eth2", "config": ROCE})
    assert kind == "fail" and "DCBX is firmware controlled" in res["msg"] and "switch_dcbx_to_os" in res["msg"]
    assert device.writes == []


def test_switch_dcbx_then_converge_then_idempotent(monkeypatch, sysfs):
    device = FakeLldpad(dcbx="Firmware")
    args = {"interface": "eth2", "config": ROCE, "switch_dcbx_to_os": True, "state": "replaced"}
    kind, res = run(monkeypatch, device, args, check_mode=True, diff=True)
    assert kind == "exit" and res["changed"] and device.writes == []
    assert res["after"]["pfc"]["enabled"] == [3] and res["after"]["app"] == [{"priority": 3, "selector": 3, "protocol": 4791}]
    assert res["diff"]["before_header"] == "lldptool -i eth2 (before)"
    kind, res = run(monkeypatch, device, args)
    assert kind == "exit", res
    assert res["commands"] == ["mlnx_qos -i eth2 --dcbx os",
                               "lldptool set-lldp -i eth2 adminStatus=rxtx",
                               "lldptool -T -i eth2 -V PFC willing=no enabled=3 enableTx=yes",
                               "lldptool -T -i eth2 -V APP app=3,3,4791",
                               "lldptool -T -i eth2 -V APP enableTx=yes"]
    assert res["after"]["pfc"] == {"willing": False, "enabled": [3], "enable_tx": True}
    assert res["after"]["app"] == [{"priority": 3, "selector": 3, "protocol": 4791}]
    writes = len(device.writes)
    kind, res = run(monkeypatch, device, args)
    assert kind == "exit" and res["changed"] is False and res["commands"] == []
    assert len(device.writes) == writes


def test_gathered_reports_neighbor_mismatch(monkeypatch, sysfs):
    device = FakeLldpad(dcbx="OS")
    device.pfc = {"willing": "no", "enabled": 8, "enableTx": "yes"}
    device.apps = [(3, 3, 4791)]
    kind, res = run(monkeypatch, device, {"interface": "eth2", "state": "gathered"})
    assert kind == "exit"
    assert res["gathered"]["pfc"]["enabled"] == [3]
    assert res["gathered"]["neighbor"]["pfc"]["enabled"] == [3, 4]
    assert res["gathered"]["neighbor_mismatch"] == ["PFC enabled priorities: local [3], neighbor [3, 4]",
                                                    "neighbor sends no APP TLV"]


def test_midway_failure(monkeypatch, sysfs):
    device = FakeLldpad(dcbx="OS")
    real = device.__call__

    def failing(argv):
        if "-V" in argv and argv[argv.index("-V") + 1] == "PFC" and argv[1] == "-T":
            return 1, "Device not capable b\n", ""
        return real(argv)
    kind, res = run(monkeypatch, failing, {"interface": "eth2", "config": ROCE})
    assert kind == "fail"
    assert res["applied"] == ["lldptool set-lldp -i eth2 adminStatus=rxtx"]
    assert res["failed_command"] == "lldptool -T -i eth2 -V PFC willing=no enabled=3 enableTx=yes"
    assert "Device not capable" in res["msg"] and not res["msg"].count("capable b")
    assert res["not_attempted"] == ["lldptool -T -i eth2 -V APP app=3,3,4791", "lldptool -T -i eth2 -V APP enableTx=yes"]
    # the state is read back after the failure, and changed follows it
    assert res["after"]["admin_status"] == "rxtx" and res["before"]["admin_status"] != "rxtx"
    assert res["changed"] is True


def test_documentation_matches_argspec():
    helpers.assert_doc_matches_argspec(lldp_dcb)


def test_truncated_bitmask_all_priorities_is_converged_via_tlv_view(monkeypatch, sysfs):
    # PFC-C-MASK255 trap: '-c enabled' prints '25' for 255; the TLV view lists 0..7
    device = FakeLldpad(dcbx="OS")
    device.admin = "rxtx"
    device.pfc = {"willing": "no", "enabled": 255, "enableTx": "yes"}
    kind, res = run(monkeypatch, device, {"interface": "eth2",
                                          "config": {"pfc": {"enabled": list(range(8)), "willing": False}}})
    assert kind == "exit" and res["commands"] == [] and res["changed"] is False
    assert res["before"]["pfc"]["enabled"] == list(range(8))


def test_the_same_protocol_twice_in_app_is_refused(monkeypatch, sysfs):
    device = FakeLldpad(dcbx="OS")
    config = dict(ROCE, app=[{"priority": 3, "selector": 5, "protocol": 26}, {"priority": 4, "selector": 5, "protocol": 26}])
    kind, res = run(monkeypatch, device, {"interface": "eth2", "config": config})
    assert kind == "fail" and "config[0].app[1]: selector 5 protocol 26 is given twice (priorities 3 and 4)" in res["msg"]
    assert device.writes == []


def test_parsed_text_without_tlvs_is_an_error(monkeypatch):
    kind, res = run_many(monkeypatch, None, {"state": "parsed", "running_config": "lldpad is not running\n"})
    assert kind == "fail" and res["msg"].startswith("running_config: TLV dump line 1 'lldpad is not running'"), res
    kind, res = run_many(monkeypatch, None, {"state": "parsed", "running_config": "\n"})
    assert kind == "fail" and res["msg"] == "running_config: holds no IEEE DCBX TLV that lldptool -t prints (PFC, ETS, APP): '\\n'", res


def test_neighbor_identity_system_name_and_port():
    # TLV-ALL-NEIGHBOR (a real veth peer: MAC port id, no System Name) and a switch's dump
    ident = T.parse_identity(out("TLV-ALL-NEIGHBOR"))
    assert ident == {"chassis_id": "92:01:a5:b5:db:65", "port_id": "92:01:a5:b5:db:65", "port_id_subtype": "MAC",
                     "system_name": None}
    switch = ("Chassis ID TLV\n\tMAC: b8:ce:f6:00:00:01\nPort ID TLV\n\tIfname: swp7\nTime to Live TLV\n\t120\n"
              "System Name TLV\n\trail1-leaf0\nIEEE 8021QAZ PFC TLV\n\t Willing: no\n\t MACsec Bypass Capable: no\n"
              "\t PFC capable traffic classes: 8\n\t PFC enabled: 3\nEnd of LLDPDU TLV\n")
    assert T.parse_identity(switch) == {"chassis_id": "b8:ce:f6:00:00:01", "port_id": "swp7",
                                        "port_id_subtype": "Ifname", "system_name": "rail1-leaf0"}
    assert T.parse_identity("") == {"chassis_id": None, "port_id": None, "port_id_subtype": None, "system_name": None}
