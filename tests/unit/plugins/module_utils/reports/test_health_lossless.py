# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host/switch lossless agreement (_health_read.read_lossless / derive_lossless, _health._lossless).

Captured text only, each sample named by its id in tests/unit/fixtures/samples/ (the files
cite the source of every sample):
  * lldptool.txt TLV-ALL-NEIGHBOR (real lldpad 1.1 run: a neighbour without DCB TLVs),
    ERR-LLDPAD-NOT-RUNNING (real), RECON-PFC-TLV / RECON-ETSCFG-TLV / RECON-APP-TLV-DSCP
    (openlldp printf text: PFC on 3, priority 3 in an ETS 50% class, UDP 4791 and DSCP 26 -> 3);
  * lldptool_layouts.txt RECON-CEE-ROCE-NEIGHBOR (a CEE switch advertising RoCE on priority 3),
    TAF-CEE-NEIGHBOR-BROCADE (real CEE Brocade switch, PFC on 2, 3, 4, 6);
  * mlnx_qos.txt MQ-MOCK-B-ROCE (OS DCBX, PFC 3, ETS 50/50 tc0/tc3) and MQ-MOCK-A-DEFAULT
    (firmware DCBX, no PFC).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import samples
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _health_read
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _mlnx_qos

from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.reports import test_health as T

LL = samples.load("lldptool.txt")
LAY = samples.load("lldptool_layouts.txt")
MQ = samples.load("mlnx_qos.txt")


def _body(sample_id, table=LL):
    """The tool's text of a sample: without the '$ command' and '[rc=N]' lines."""
    return "".join(line for line in table[sample_id].raw.splitlines(True)
                   if not line.startswith("$ ") and not line.startswith("[rc="))


# a real neighbour header (TLV-ALL-NEIGHBOR) with the openlldp-printed DCB TLVs before its End TLV
HEADER = _body("TLV-ALL-NEIGHBOR").replace("End of LLDPDU TLV\n", "")
ETS = _body("RECON-ETSCFG-TLV")
PFC = _body("RECON-PFC-TLV")
APP = _body("RECON-APP-TLV-DSCP")
END = "End of LLDPDU TLV\n"
IEEE_SWITCH = HEADER + ETS + PFC + APP + END
CEE_SWITCH = _body("RECON-CEE-ROCE-NEIGHBOR", LAY)


def _qos(sample_id):
    state = _mlnx_qos.parse_report(_body(sample_id, MQ))
    return dict((k, state.get(k)) for k in _health_read.MLNX_QOS_KEYS)


QOS_ROCE = _qos("MQ-MOCK-B-ROCE")
QOS_FW = _qos("MQ-MOCK-A-DEFAULT")


def raw_lldp(peer=IEEE_SWITCH, local=IEEE_SWITCH, qos=None, admin="rxtx"):
    qos = QOS_ROCE if qos is None else qos
    return {"interfaces": {"eth0": {"peer": peer, "local": local, "admin_status": admin, "mlnx_qos": qos}}}


def judged(lldp, checks=None):
    obs = T.node()
    errors = []
    obs["lossless"] = _health_read.derive_lossless(lldp, errors)
    obs["facts"]["errors"] = errors
    return _health.judge(obs, checks), obs


def found(lldp, checks=None):
    return [(f["check"], f["subject"], f["severity"]) for f in judged(lldp, checks)[0]]


def test_ieee_switch_and_host_agree_gives_nothing():
    findings, obs = judged(raw_lldp())
    assert findings == []
    view = obs["lossless"]["eth0"]
    assert view["host"]["pfc"] == [3] and view["host"]["source"] == "mlnx_qos -i eth0"
    assert view["peer"]["dcbx"] == "ieee" and view["peer"]["pfc"]["enabled"] == [3]


# the real CEE local dump (TAF-CEE-LOCAL) with the RoCE entry, TCP/UDP port 4791 -> priority 3
CEE_LOCAL = _body("TAF-CEE-LOCAL", LAY).replace(
    "\t  Ethertype: 0x8906, Priority Map: 0x08\n\t  TCP/UDP Port: 0x0cbc, Priority Map: 0x10\n"
    "\t  Ethertype: 0x8914, Priority Map: 0x08\n", "\t  TCP/UDP Port: 0x12b7, Priority Map: 0x08\n")


def test_cee_switch_agreeing_with_the_host_gives_nothing():
    assert "0x12b7" in CEE_LOCAL
    findings, obs = judged(raw_lldp(peer=CEE_SWITCH, local=CEE_LOCAL))
    assert findings == []
    assert obs["lossless"]["eth0"]["host"]["app"] == [{"priority": 3, "selector": 4, "protocol": 4791}]
    # an IEEE host next to it: the DCBX version is the one finding (its UDP 4791 entry is CEE's TCP/UDP one)
    assert found(raw_lldp(peer=CEE_SWITCH, local=HEADER + APP + END)) == [
        ("lossless_agreement", "eth0 DCBX", "error")]


def test_pfc_disagreement_is_exactly_its_finding():
    peer = IEEE_SWITCH.replace("PFC enabled: 3 ", "PFC enabled: 3 4 ")
    findings, _obs = judged(raw_lldp(peer=peer))
    assert [(f["check"], f["subject"], f["severity"]) for f in findings] == [
        ("lossless_agreement", "eth0 PFC", "error")]
    assert findings[0]["expected"] == "PFC on priorities 3 (host)"
    assert findings[0]["actual"] == "switch: 3, 4"
    assert findings[0]["diagnosis"] == "lldptool -t -n -i eth0 -V PFC; mlnx_qos -i eth0"
    assert "priorities 3" in findings[0]["remedy"]


def test_switch_without_a_pfc_tlv():
    findings, _obs = judged(raw_lldp(peer=HEADER + ETS + APP + END))
    assert [(f["subject"], f["actual"]) for f in findings] == [("eth0 PFC", "the switch sends no PFC TLV")]


def test_ets_of_the_lossless_priority_disagrees():
    peer = IEEE_SWITCH.replace("TC Bandwidth: 50% 0% 0% 50%", "TC Bandwidth: 70% 0% 0% 30%")
    findings, _obs = judged(raw_lldp(peer=peer))
    assert [(f["check"], f["subject"], f["expected"], f["actual"]) for f in findings] == [
        ("lossless_agreement", "eth0 ETS priority 3", "ets 50% (host)", "switch: ets 30%")]
    assert findings[0]["diagnosis"].startswith("lldptool -t -n -i eth0 -V ETS-CFG")
    strict = IEEE_SWITCH.replace("3:ets 4:strict", "3:strict 4:strict")
    assert [(f["subject"], f["actual"]) for f in judged(raw_lldp(peer=strict))[0]] == [
        ("eth0 ETS priority 3", "switch: strict")]


def test_cee_priority_groups_judged_strict_pgid_15():
    # priority 3 in PGID 15 (strict) on the switch, ETS 50% on the host
    peer = CEE_SWITCH.replace("0:[0,1,2,4,5,7] 1:[3] 15:[6]", "0:[0,1,2,4,5,7] 15:[3,6]")
    findings, _obs = judged(raw_lldp(peer=peer, local=HEADER + END))
    assert [(f["subject"], f["actual"], f["diagnosis"]) for f in findings] == [
        ("eth0 ETS priority 3", "switch: strict", "lldptool -t -n -i eth0; mlnx_qos -i eth0")]


def test_app_entry_disagreements():
    moved = IEEE_SWITCH.replace("Prio:3 \t dscp:  26,", "Prio:0 \t dscp:  26,")
    assert [(f["subject"], f["actual"]) for f in judged(raw_lldp(peer=moved))[0]] == [
        ("eth0 APP DSCP 26", "switch: priority 0")]
    gone = IEEE_SWITCH.replace("\tApp#   0 \t Prio 3 \t Sel 3 \t P-ID\t UDP or DCCP Port: 4791\n", "")
    assert [(f["subject"], f["actual"]) for f in judged(raw_lldp(peer=gone))[0]] == [
        ("eth0 APP UDP port 4791", "switch: no entry")]
    assert [(f["subject"], f["actual"]) for f in judged(raw_lldp(peer=HEADER + ETS + PFC + END))[0]] == [
        ("eth0 APP UDP port 4791", "the switch sends no APP TLV")]
    # a switch entry the host does not hold is the switch's business
    extra = IEEE_SWITCH.replace("\tPrio:6 ", "\tApp#   1 \t Prio 5 \t Sel 1 \t P-ID\t Ethertype: 0x8906\n\tPrio:6 ")
    assert found(raw_lldp(peer=extra)) == []


def test_real_brocade_cee_switch_disagrees_on_pfc_and_ets():
    peer = _body("TAF-CEE-NEIGHBOR-BROCADE", LAY)
    findings, _obs = judged(raw_lldp(peer=peer, local=HEADER + END))
    assert [(f["subject"], f["actual"]) for f in findings] == [
        ("eth0 PFC", "switch: 2, 3, 4, 6"), ("eth0 ETS priority 3", "switch: ets 10%")]


def test_dcbx_version_mismatch():
    local_cee = _body("TAF-CEE-LOCAL", LAY)
    findings, _obs = judged(raw_lldp(local=local_cee))
    triples = [(f["check"], f["subject"], f["severity"]) for f in findings]
    assert ("lossless_agreement", "eth0 DCBX", "error") in triples
    assert [f["actual"] for f in findings if f["subject"] == "eth0 DCBX"] == ["host CEE, switch IEEE"]


def test_firmware_dcbx_is_said_not_taken_for_a_silent_switch():
    findings, _obs = judged(raw_lldp(peer=_body("TLV-ALL-NEIGHBOR"), local=_body("TLV-ALL-LOCAL"), qos=QOS_FW))
    assert [(f["check"], f["subject"], f["severity"]) for f in findings] == [
        ("lossless_unverified", "eth0 DCBX", "warning")]
    assert "firmware-controlled" in findings[0]["actual"] and "sends" not in findings[0]["actual"]
    assert "mlnx_qos -i eth0 --dcbx os" in findings[0]["remedy"]


def test_why_the_switch_tlvs_are_not_seen():
    no_dcb = _body("TLV-ALL-NEIGHBOR")
    silent = judged(raw_lldp(peer=no_dcb, local=_body("TLV-ALL-LOCAL")))[0]
    assert [(f["check"], f["subject"]) for f in silent] == [("lossless_unverified", "eth0 DCBX")]
    assert "sends LLDP without DCBX TLVs" in silent[0]["actual"]
    tx_only = judged(raw_lldp(peer="", admin="tx"))[0]
    assert [(f["subject"], f["remedy"]) for f in tx_only] == [
        ("eth0 LLDP", "lldptool set-lldp -i eth0 adminStatus=rxtx")]
    nobody = judged(raw_lldp(peer=""))[0]
    assert [(f["subject"], f["actual"]) for f in nobody] == [("eth0 LLDP", "none seen by lldpad")]


def test_no_lldpad_is_skipped_with_its_reason_never_healthy():
    lldp = {"skipped": "lldpad is not running (...)"}
    findings, obs = judged(lldp)
    assert findings == []
    assert _health.skipped(obs) == [{"check": "lossless_agreement", "reason": "lldpad is not running (...)"}]
    assert _health.skipped(obs, {"lossless": False}) == []
    assert _health.skipped(judged(raw_lldp())[1]) == []


def test_switched_off_down_and_ignored_ports_are_not_judged():
    peer = IEEE_SWITCH.replace("PFC enabled: 3 ", "PFC enabled: none")
    assert found(raw_lldp(peer=peer), {"lossless": False}) == []
    assert found(raw_lldp(peer=peer), {"ignore_devices": ["mlx5_0"]}) == []
    obs = T.node()
    obs["facts"]["devices"]["mlx5_0"]["ports"][0]["state"] = "DOWN"
    obs["lossless"] = _health_read.derive_lossless(raw_lldp(peer=peer), [])
    assert [f["check"] for f in _health.judge(obs)] == ["link"]


def test_unparseable_or_failed_lldptool_is_a_facts_finding_not_a_verdict():
    bad = HEADER + "IEEE 8021QAZ PFC TLV\n\t Willing: maybe\n\t PFC enabled: 3\n" + END
    findings = judged(raw_lldp(peer=bad))[0]
    assert [(f["check"], f["subject"]) for f in findings] == [("facts", "lldptool")]
    assert "Willing" in findings[0]["actual"]
    failed = judged(raw_lldp(peer={"rc": 1, "error": "Device not found or inactive"}))[0]
    assert [(f["check"], f["subject"]) for f in failed] == [("facts", "lldptool")]


class FakeModule(object):
    def __init__(self, outputs, tools=("lldptool", "mlnx_qos")):
        self.outputs, self.tools, self.calls = outputs, tools, []

    def get_bin_path(self, name, required=False, opt_dirs=None):
        return "/usr/sbin/" + name if name in self.tools else None

    def run_command(self, argv, **kwargs):
        self.calls.append(list(argv))
        key = " ".join(argv[1:])
        for prefix, answer in self.outputs:
            if key.startswith(prefix):
                return answer
        return 0, "", ""


def test_read_lossless_one_call_per_interface_and_tool():
    devices = copy.deepcopy(T.node()["facts"]["devices"])
    module = FakeModule([("-t -n -i", (0, IEEE_SWITCH, "")), ("get-lldp", (0, "adminStatus=rxtx\n", "")),
                         ("-t -i", (0, IEEE_SWITCH, "")), ("-i", (0, _body("MQ-MOCK-B-ROCE", MQ), ""))])
    lldp = _health_read.read_lossless(module, devices)
    assert sorted(lldp["interfaces"]) == ["eth0", "eth1"]
    assert [c[1:] for c in module.calls if c[1:3] == ["-t", "-n"]] == [
        ["-t", "-n", "-i", "eth0"], ["-t", "-n", "-i", "eth1"]]
    assert len(module.calls) == 8
    assert lldp["interfaces"]["eth0"]["mlnx_qos"] == QOS_ROCE
    assert found(lldp) == []


def test_read_lossless_without_lldpad_or_lldptool_or_roce():
    down = _body("ERR-LLDPAD-NOT-RUNNING")
    module = FakeModule([("-t -n -i", (255, "", down))])
    lldp = _health_read.read_lossless(module, T.node()["facts"]["devices"])
    assert lldp["skipped"].startswith("lldpad is not running (lldptool -t -n -i eth0: connect: Connection refused")
    # lldptool's two error lines make one line of the reason (one table cell, issue #31)
    assert "\n" not in lldp["skipped"] and "Connection refused; Failed to connect to lldpad" in lldp["skipped"]
    assert len(module.calls) == 1
    lldp = _health_read.read_lossless(FakeModule([], tools=()), T.node()["facts"]["devices"])
    assert "not installed" in lldp["skipped"]
    assert _health_read.read_lossless(FakeModule([]), T.node("InfiniBand")["facts"]["devices"]) is None
