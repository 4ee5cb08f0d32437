# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser and reader tests for rdma.fabric.sm_info on the real samples (sminfo.txt, saquery.txt)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _sm_info as smi
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError
from ansible_collections.rdma.fabric.tests.unit import samples

SMINFO = samples.load("sminfo.txt")
SAQUERY = samples.load("saquery.txt")


def body(sample):
    """Raw capture as a string (the '$ cmd' and '[rc=N]' lines stay: the parser skips them)."""
    return sample.raw


# ---------------------------------------------------------------- sminfo lines

@pytest.mark.parametrize("sample_id, lid, guid, act, prio, state", [
    ("SMINFO-SIM-MASTER", 1, "0x0000000000100001", 118, 10, "master"),
    ("SMINFO-SIM-MASTER-BYLID", 1, "0x0000000000100001", 119, 10, "master"),
    ("SMINFO-SIM-MASTER-V", 1, "0x0000000000100001", 120, 10, "master"),
    ("SMINFO-SIM-2SM-DEFAULT", 1, "0x0000000000100001", 190, 10, "master"),
    ("SMINFO-SIM-STANDBY", 5, "0x0000000000100007", 71, 5, "standby"),
])
def test_single_sminfo_samples(sample_id, lid, guid, act, prio, state):
    facts = smi.parse(body(SMINFO[sample_id]))
    assert len(facts["sm_ports"]) == 1
    entry = facts["sm_ports"][0]
    assert entry["lid"] == lid
    assert entry["guid"] == guid
    assert entry["activity_count"] == act
    assert entry["priority"] == prio
    assert entry["state"] == state
    assert entry["source"] == "sminfo"
    assert facts["errors"] == []
    if state == "master":
        assert facts["master"] == entry
        assert facts["master_count"] == 1
    else:
        assert facts["master"] is None
        assert facts["standby_count"] == 1


def test_real_hca_guid_not_padded_is_normalised():
    line = "sminfo: sm lid 83 sm guid 0x946dae0300cde72c, activity count 5 priority 15 state 3 SMINFO_MASTER"
    entry = smi.parse_sminfo_line(line)
    assert entry["guid"] == "0x946dae0300cde72c"
    assert entry["lid"] == 83
    assert entry["priority"] == 15


def test_out_of_range_state_prints_question_marks():
    entry = smi.parse_sminfo_line("sminfo: sm lid 3 sm guid 0xabc, activity count 0 priority 0 state 7 ???")
    assert entry["state"] == "unknown"
    assert entry["state_id"] == 7
    assert entry["guid"] == "0x0000000000000abc"


def test_other_states():
    assert smi.parse_sminfo_line(
        "sminfo: sm lid 3 sm guid 0x1, activity count 0 priority 0 state 1 SMINFO_DISCOVER")["state"] == "discovering"
    assert smi.parse_sminfo_line(
        "sminfo: sm lid 3 sm guid 0x1, activity count 0 priority 0 state 0 SMINFO_NOTACT")["state"] == "not_active"


def test_non_report_lines_are_ignored():
    assert smi.parse_sminfo_line("sminfo: iberror: failed: query") is None
    assert smi.parse_sminfo_line("") is None


@pytest.mark.parametrize("sample_id, lid", [("SMINFO-SIM-ERR-NOTSM", 4), ("SMINFO-SIM-ERR-BADLID", 99)])
def test_error_samples(sample_id, lid):
    facts = smi.parse(body(SMINFO[sample_id]))
    assert facts["sm_ports"] == []
    assert facts["master"] is None
    assert len(facts["errors"]) == 1
    assert facts["errors"][0]["lid"] == lid
    assert "iberror: failed: query" in facts["errors"][0]["error"]
    assert "dport (Lid %d)" % lid in facts["errors"][0]["error"]


def test_failover_gap_dead_master_and_live_standby():
    # master (lid 1) killed: bare sminfo fails at lid 1, the standby still says STANDBY
    facts = smi.parse(body(SMINFO["SMINFO-SIM-FAILOVER-GAP"]))
    assert facts["master"] is None
    assert facts["master_count"] == 0
    assert [(e["lid"], e["state"]) for e in facts["sm_ports"]] == [(5, "standby")]
    error = "ibwarn: [21714] mad_rpc: _do_madrpc failed; dport (Lid 1); sminfo: iberror: failed: query"
    assert facts["errors"] == [{"lid": 1, "error": error}]


def test_after_failover_last_answer_wins():
    facts = smi.parse(body(SMINFO["SMINFO-SIM-AFTER-FAILOVER"]))
    assert facts["master"]["lid"] == 5
    assert facts["master"]["guid"] == "0x0000000000100007"
    assert facts["master"]["activity_count"] == 163  # the later of the two answers
    assert facts["master"]["priority"] == 5
    assert facts["master_count"] == 1


def test_help_sample_is_refused():
    # text holding nothing the parser recognises is an error, never an empty answer (issue 15)
    with pytest.raises(ValueError, match=r"running_config line \d+ '.*': no sminfo answer"):
        smi.parse(body(SMINFO["SMINFO-HELP"]))


# ---------------------------------------------------------------- saquery

def test_smir_single():
    facts = smi.parse(body(SAQUERY["SAQUERY-SIM-saquery_smir"]))
    assert facts["sm_ports"] == [{"lid": 1, "guid": "0x0000000000100001", "priority": 10, "state": "master",
                                  "state_id": 3, "activity_count": 121, "source": "saquery_smir"}]
    assert facts["master"]["lid"] == 1


def test_smir_two_sms():
    facts = smi.parse(body(SAQUERY["SAQUERY-SIM-saquery_smir_2sm"]))
    assert [(e["lid"], e["guid"], e["priority"], e["state"], e["activity_count"]) for e in facts["sm_ports"]] == [
        (1, "0x0000000000100001", 10, "master", 191),
        (5, "0x0000000000100007", 5, "standby", 70),
    ]
    assert facts["master_count"] == 1
    assert facts["standby_count"] == 1
    assert facts["master"]["guid"] == "0x0000000000100001"


def test_issm_single():
    facts = smi.parse(body(SAQUERY["SAQUERY-SIM-saquery_s"]))
    assert facts["issm_ports"] == [{"lid": 1, "port": 1, "master_sm_lid": 1, "capability_mask": "0x0050c04a",
                                    "sm_disabled": False}]
    assert facts["sm_ports"] == []


def test_issm_two():
    facts = smi.parse(body(SAQUERY["SAQUERY-SIM-saquery_s_2sm"]))
    assert [(p["lid"], p["master_sm_lid"], p["sm_disabled"]) for p in facts["issm_ports"]] == [(1, 1, False), (5, 1, False)]


def test_issm_disabled_section():
    text = ("IsSM ports\nPortInfoRecord dump:\n\t\tEndPortLid..............1\n\t\tPortNum.................1\n"
            "\t\tbase_lid................1\n\t\tmaster_sm_base_lid......1\n\t\tcapability_mask.........0x50C04A\n\n"
            "IsSMdisabled ports\nPortInfoRecord dump:\n\t\tEndPortLid..............7\n\t\tPortNum.................1\n"
            "\t\tbase_lid................7\n\t\tmaster_sm_base_lid......1\n\t\tcapability_mask.........0x50C448\n")
    ports = smi.parse(text)["issm_ports"]
    assert [(p["lid"], p["sm_disabled"]) for p in ports] == [(1, False), (7, True)]


@pytest.mark.parametrize("sample_id", ["SAQUERY-SIM-saquery", "SAQUERY-SIM-saquery_nr", "SAQUERY-SIM-saquery_lid",
                                       "SAQUERY-SIM-saquery_g", "SAQUERY-SIM-saquery_pir"])
def test_other_saquery_records_are_not_sms(sample_id):
    facts = smi.parse(body(SAQUERY[sample_id]))
    assert facts["sm_ports"] == []
    assert facts["issm_ports"] == []
    assert facts["master"] is None


def test_combined_capture_live_answer_wins_over_smir():
    text = "\n".join([body(SAQUERY["SAQUERY-SIM-saquery_smir_2sm"]), body(SAQUERY["SAQUERY-SIM-saquery_s_2sm"]),
                      body(SMINFO["SMINFO-SIM-STANDBY"])])
    facts = smi.parse(text)
    by_lid = dict((e["lid"], e) for e in facts["sm_ports"])
    assert by_lid[5]["source"] == "sminfo"
    assert by_lid[5]["activity_count"] == 71
    assert by_lid[1]["source"] == "saquery_smir"
    assert len(facts["issm_ports"]) == 2


def test_two_masters_are_counted():
    text = ("sminfo: sm lid 1 sm guid 0x100001, activity count 10 priority 10 state 3 SMINFO_MASTER\n"
            "sminfo: sm lid 5 sm guid 0x100007, activity count 20 priority 5 state 3 SMINFO_MASTER\n")
    facts = smi.parse(text)
    assert facts["master_count"] == 2


def test_sminfo_guid_is_normalised_and_17_digits_is_not_a_report_line():
    # GUID forms and refusals: test_guid.py (module_utils/common/_guid is the one normaliser).
    entry = smi.parse_sminfo_line("sminfo: sm lid 1 sm guid 0xA088C20300DA6342, activity count 1 priority 10 "
                                  "state 3 SMINFO_MASTER")
    assert entry["guid"] == "0xa088c20300da6342"
    assert smi.parse_sminfo_line("sminfo: sm lid 1 sm guid 0x10000000000000000, activity count 1 priority 10 "
                                 "state 3 SMINFO_MASTER") is None


# ---------------------------------------------------------------- reader (fake run_command)

class FakeModule(object):
    """Answers run_command from a dict keyed by the argv tail (after the tool path)."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    def get_bin_path(self, name, required=False):
        return "/usr/sbin/%s" % name

    def run_command(self, argv, environ_update=None):
        self.calls.append(list(argv))
        key = " ".join([argv[0].rsplit("/", 1)[-1]] + argv[1:])
        return self.answers.get(key, (255, "sminfo: iberror: failed: query\n",
                                      "ibwarn: [1] mad_rpc: _do_madrpc failed; dport (Lid %s)\n" % argv[-1]))


def _out(sample):
    """stdout of a sample: the lines between '$ cmd' and '[rc=N]'."""
    lines = [l for l in sample.raw.splitlines(True) if not l.startswith(("$ ", "[rc="))]
    return "".join(lines)


HEALTHY = {
    "sminfo": (0, _out(SMINFO["SMINFO-SIM-2SM-DEFAULT"]), ""),
    "saquery SMIR": (0, _out(SAQUERY["SAQUERY-SIM-saquery_smir_2sm"]), ""),
    "saquery -s": (0, _out(SAQUERY["SAQUERY-SIM-saquery_s_2sm"]), ""),
    "sminfo 1": (0, _out(SMINFO["SMINFO-SIM-MASTER-BYLID"]), ""),
    "sminfo 5": (0, _out(SMINFO["SMINFO-SIM-STANDBY"]), ""),
}


def test_gather_healthy_pair():
    module = FakeModule(HEALTHY)
    facts, raw = smi.gather(module)
    assert [c[1:] for c in module.calls] == [[], ["SMIR"], ["-s"], ["1"], ["5"]]
    assert facts["master"]["lid"] == 1
    assert facts["master"]["activity_count"] == 119  # the direct 'sminfo 1' answer
    assert facts["master_count"] == 1
    assert [(e["lid"], e["state"], e["source"]) for e in facts["sm_ports"]] == [
        (1, "master", "sminfo"), (5, "standby", "sminfo")]
    assert facts["errors"] == []
    # round trip: the captured text parses to the same SM ports
    assert smi.parse(raw)["sm_ports"] == facts["sm_ports"]
    assert "$ sminfo 5\n" in raw


def test_gather_passes_ca_port_timeout():
    answers = dict((k.replace("sminfo", "sminfo -C mlx5_0 -P 1 -t 500", 1).replace(
        "saquery", "saquery -C mlx5_0 -P 1 -t 500", 1), v) for k, v in HEALTHY.items())
    module = FakeModule(answers)
    facts, _raw = smi.gather(module, ca="mlx5_0", port=1, timeout=500)
    assert module.calls[0] == ["/usr/sbin/sminfo", "-C", "mlx5_0", "-P", "1", "-t", "500"]
    assert module.calls[3] == ["/usr/sbin/sminfo", "-C", "mlx5_0", "-P", "1", "-t", "500", "1"]
    assert facts["master"]["guid"] == "0x0000000000100001"


def test_gather_master_dead_with_known_standby_lid():
    answers = {"sminfo 5": (0, _out(SMINFO["SMINFO-SIM-STANDBY"]), "")}
    module = FakeModule(answers)
    facts, _raw = smi.gather(module, lids=[5])
    # the SA is not asked when no master answered
    assert [c[1:] for c in module.calls] == [[], ["5"]]
    assert facts["master"] is None
    assert facts["standby_count"] == 1
    assert facts["errors"][0]["lid"] is None
    assert "rc=255" in facts["errors"][0]["error"]


def test_gather_nothing_answers_raises_clear_error():
    module = FakeModule({})
    with pytest.raises(ToolError) as exc:
        smi.gather(module)
    assert "no subnet manager answered" in exc.value.msg
    assert "iberror: failed: query" in exc.value.msg
    assert exc.value.rc == 255


def test_gather_unreachable_sm_reported():
    answers = dict(HEALTHY)
    del answers["sminfo 5"]
    facts, _raw = smi.gather(FakeModule(answers))
    # lid 5 falls back to the SA's record, and the failed query is listed
    by_lid = dict((e["lid"], e) for e in facts["sm_ports"])
    assert by_lid[5]["source"] == "saquery_smir"
    assert [e["lid"] for e in facts["errors"]] == [5]


def test_gather_without_discover():
    module = FakeModule(HEALTHY)
    facts, _raw = smi.gather(module, discover=False)
    assert [c[1:] for c in module.calls] == [[], ["1"]]
    assert facts["master"]["lid"] == 1
    assert facts["issm_ports"] == []
