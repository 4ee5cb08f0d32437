# -*- coding: utf-8 -*-
"""Parser and compare of plugins/module_utils/resources/_mlnx_qos.py on the real samples.

Sample ids are from tests/unit/fixtures/samples/mlnx_qos.txt.
"""
from __future__ import absolute_import, division, print_function

import re

import pytest

import samples
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _mlnx_qos as Q
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError

MQ = samples.load("mlnx_qos.txt")


def tool_output(sample_id):
    """The tool's bytes: drop the ``[rc=N]`` annotation lines (not tool output)."""
    return "".join(ln for ln in MQ[sample_id].raw.splitlines(True) if not re.match(r"^\[rc=\d+\]", ln))


DEFAULT_PRIO_TC = [1, 0, 2, 3, 4, 5, 6, 7]   # mlx5 default: priority 0 on TC1, 1 on TC0


# ------------------------------------------------------------------ parser, every sample
def test_commit_b8c08c5_old_release_spaces_default_priority_max_buffer():
    # MQ-REAL-COMMIT-B8C08C5: tabs turned to spaces, 'default priority:' line, max_buffer_size=
    st = Q.parse_report(tool_output("MQ-REAL-COMMIT-B8C08C5"))
    assert st["dcbx"] == "os"
    assert st["trust"] == "pcp"
    assert st["dscp2prio"] is None
    assert st["buffer_size"] == [0, 187200, 0, 0, 0, 0, 0, 0]
    assert st["info"]["max_buffer_size"] == 2044224
    assert st["info"]["default_priority"] == []
    assert st["cable_len"] == 7
    assert st["pfc"] == []
    assert st["prio2buffer"] == [1] * 8
    assert st["prio_tc"] == DEFAULT_PRIO_TC
    assert st["tsa"] == ["vendor"] * 8
    assert st["tcbw"] == [0] * 8
    assert st["ratelimit"] == [0.0] * 8
    assert st["info"]["unparsed"] == []


def test_mock_a_firmware_dcbx_tabs_trailing_spaces():
    # MQ-MOCK-A-DEFAULT: byte-exact HEAD layout, FW DCBX, PFC rows with 3 trailing spaces
    st = Q.parse_report(tool_output("MQ-MOCK-A-DEFAULT"))
    assert st["dcbx"] == "fw"
    assert st["trust"] == "pcp"
    assert st["buffer_size"] == [0, 262016, 0, 0, 0, 0, 0, 0]
    assert st["info"]["max_buffer_size"] == 262016
    assert st["prio2buffer"] == [1] * 8
    assert st["prio_tc"] == DEFAULT_PRIO_TC
    assert st["info"]["unparsed"] == []


def test_mock_b_roce_profile():
    # MQ-MOCK-B-ROCE: dscp trust, ascending map, ETS 50/50, TC6 strict, 25 Gbps on TC0,
    # only TCs 0, 3, 6 printed (no -a)
    st = Q.parse_report(tool_output("MQ-MOCK-B-ROCE"))
    assert st["dcbx"] == "os"
    assert st["trust"] == "dscp"
    assert st["dscp2prio"] == dict((d, d >> 3) for d in range(64))
    assert st["pfc"] == [3]
    assert st["prio2buffer"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert st["buffer_size"] == [130944, 130944, 0, 0, 0, 0, 0, 0]
    assert st["prio_tc"] == [0, 0, 0, 3, 0, 0, 6, 0]
    assert st["tsa"] == ["ets", None, None, "ets", None, None, "strict", None]
    assert st["tcbw"] == [50, None, None, 50, None, None, 0, None]
    assert st["ratelimit"] == [25.0, None, None, 0.0, None, None, 0.0, None]
    assert Q.to_config(st)["dscp2prio"][26] == {"dscp": 26, "priority": 3}


def test_mock_d_no_ratelimit_bare_headers_trailing_comma():
    # MQ-MOCK-D-NORATE-VENDOR: 'Rate limit is not supported' first, TC headers are bare
    # 'vendor', buffer line ends in a bare comma (release before 2022-12)
    st = Q.parse_report(tool_output("MQ-MOCK-D-NORATE-VENDOR"))
    assert st["ratelimit"] is None
    assert "Rate limit is not supported on your system" in st["info"]["unsupported"]
    assert st["buffer_size"] == [32768, 229120, 0, 0, 0, 0, 0, 0]
    assert st["info"]["max_buffer_size"] is None
    assert st["pfc"] == [3]
    assert st["prio2buffer"] == [0, 1, 1, 1, 1, 1, 0, 0]
    assert st["prio_tc"] == DEFAULT_PRIO_TC
    assert st["tsa"] == ["vendor"] * 8


def test_doc_2792_collapsed_whitespace_descending_map_no_buffer():
    # MQ-DOC-COMMUNITY-2792: whitespace collapsed, blank lines, firmware-default descending
    # dscp order, PFC on 0,2,6,7, no buffer line (so no buffer row either)
    st = Q.parse_report(tool_output("MQ-DOC-COMMUNITY-2792"))
    assert st["trust"] == "dscp"
    assert st["dscp2prio"] == dict((d, d >> 3) for d in range(64))
    assert st["pfc"] == [0, 2, 6, 7]
    assert st["cable_len"] == 10
    assert st["buffer_size"] is None and st["prio2buffer"] is None
    assert st["prio_tc"] == DEFAULT_PRIO_TC
    assert st["tsa"] == ["ets"] * 6 + ["strict", "ets"]
    assert st["tcbw"] == [10, 10, 10, 10, 10, 10, 0, 40]
    assert st["info"]["unparsed"] == []


WRAPPED = """****** WARNING: lldpad service is running and may overwrite your settings ******

DCBX mode: OS controlled
Priority trust state: dscp
dscp2prio mapping:
\tprio:0 dscp:07,06,05,04,03,02,01,00,
\tprio:1 dscp:15,14,13,12,11,10,09,08,
\tprio:2 dscp:23,22,21,20,19,18,17,16,
\tprio:3 dscp:31,30,29,28,27,25,24,
\tprio:3 dscp:26,
\tprio:4 dscp:39,38,37,36,35,34,33,32,
\tprio:5 dscp:47,46,45,44,43,42,41,40,
\tprio:6 dscp:55,54,53,52,51,50,49,48,
\tprio:6 dscp:63,62,61,60,59,58,57,56,
default priority:
\tprio:0
Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=262016
Cable len: 7
PFC configuration:
\tpriority    0   1   2   3   4   5   6   7
\tenabled     0   0   0   1   0   0   0   0  \x20
\tbuffer      0   0   0   1   0   0   0   0  \x20
tc: 1 ratelimit: unlimited, tsa: vendor
\t priority:  0
tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%
\t priority:  1
\t priority:  2
\t priority:  4
\t priority:  5
\t priority:  7
tc: 3 ratelimit: 100.0 Gbps, tsa: ets, bw: 50%
\t priority:  3
tc: 6 ratelimit: unlimited, tsa: strict
\t priority:  6
"""


def test_layout_rules_wrapped_dscp_unsorted_tcs_total_size_default_priority():
    # Variant built from the header rules (no sample shows it): dscp list of 9 values wrapped
    # onto a repeated 'prio:N dscp:' line, 'prio:3' split over two lines, lldpad warning with
    # a blank line, default priority entry, total_size= suffix, TCs unsorted (before 2022-05)
    st = Q.parse_report(WRAPPED)
    assert st["info"]["warnings"] == ["lldpad service is running and may overwrite your settings"]
    assert st["dscp2prio"][26] == 3 and st["dscp2prio"][56] == 6 and st["dscp2prio"][63] == 6
    assert len(st["dscp2prio"]) == 64
    assert st["info"]["default_priority"] == [0]
    assert st["info"]["max_buffer_size"] == 262016
    assert st["prio_tc"] == [1, 0, 0, 3, 0, 0, 6, 0]
    assert st["tsa"][:2] == ["ets", "vendor"]
    assert st["ratelimit"][3] == 100.0
    assert st["info"]["unparsed"] == []


def test_bare_headers_fewer_than_eight_tcs_leave_tc_identity_unknown():
    text = tool_output("MQ-MOCK-D-NORATE-VENDOR").split("vendor\n\t priority:  2", maxsplit=1)[0]
    st = Q.parse_report(text)
    assert st["prio_tc"] is None and st["tsa"] is None


@pytest.mark.parametrize("sample_id, expect", [
    ("MQ-REAL-ERR-VLAN", "Priority trust state is not supported on your system"),
    ("MQ-LOCAL-NODCB", "ETS features are not supported on your system"),
    ("MQ-LOCAL-NOSUCHDEV", "Buffers commands are not supported"),
    ("MQ-LOCAL-LLDPAD-WARN", "Rate limit is not supported"),
    ("MQ-LOCAL-NOIF", "Interface name is required"),
    ("MQ-LOCAL-ARG-_dscp2prio_set_26_3_trust_dscp", "trust and dscp2prio commands cannot be used"),
])
def test_error_text_is_not_a_report(sample_id, expect):
    with pytest.raises(Q.MlnxQosError) as err:
        Q.parse_report(tool_output(sample_id))
    assert expect in err.value.msg
    assert "WARNING" not in err.value.msg


@pytest.mark.parametrize("sample_id, last_line", [
    ("MQ-LOCAL-NOLLDPAD-_pfc_0_0_0_1_0_0_0_0", "TypeError: can only concatenate str (not \"OSError\") to str"),
    ("MQ-LOCAL-NOLLDPAD-_P_3", "OSError: Netlink error: Operation not supported (95)"),
    ("MQ-LOCAL-NOLLDPAD-_dscp2prio_bogus", "AttributeError: 'ValueError' object has no attribute 'errno'"),
])
def test_traceback_is_a_clear_error(sample_id, last_line):
    with pytest.raises(Q.MlnxQosError) as err:
        Q.parse_report(tool_output(sample_id))
    assert err.value.msg == "mlnx_qos crashed with a Python traceback: " + last_line


def test_empty_output_is_an_error():
    with pytest.raises(Q.MlnxQosError) as err:
        Q.parse_report("")
    assert "no output" in err.value.msg


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("config, words", [
    ({"pfc": [3, 9]}, "config.pfc[1]=9: priority must be 0-7"),
    ({"dscp2prio": [{"dscp": 70, "priority": 3}]}, "config.dscp2prio[0].dscp=70: DSCP must be 0-63"),
    ({"dscp2prio": {26: 8}}, "config.dscp2prio[26].priority=8: priority must be 0-7"),
    ({"dscp2prio": [{"dscp": 26}]}, "config.dscp2prio[0]={'dscp': 26}"),
    ({"dscp2prio": [{"dscp": 26, "priority": 3}, {"dscp": 26, "priority": 4}]}, "DSCP 26 is mapped twice"),
    ({"prio_tc": [0, 0, 0, 3]}, "config.prio_tc=[0, 0, 0, 3]: expected exactly 8 values, got 4"),
    ({"prio_tc": [0, 0, 0, 8, 0, 0, 0, 0]}, "config.prio_tc[3]=8: TC must be 0-7"),
    ({"tsa": ["ets"] * 7 + ["wrr"]}, "config.tsa[7]='wrr': must be one of ets, strict, vendor"),
    ({"tsa": ["ets", "strict", "strict", "ets"] + ["strict"] * 4, "tcbw": [50, 0, 0, 40, 0, 0, 0, 0]},
     "config.tcbw=[50, 0, 0, 40, 0, 0, 0, 0]: the bandwidth of the ETS TCs [0, 3] sums to 90, must be 100"),
    ({"tsa": ["ets", "strict", "strict", "ets"] + ["strict"] * 4, "tcbw": [50, 10, 0, 40, 0, 0, 0, 0]},
     "config.tcbw[1]=10: TC 1 is strict"),
    ({"ratelimit": [2.5, 0, 0, 0, 0, 0, 0, 0]}, "config.ratelimit[0]=2.5: mlnx_qos takes whole Gbps"),
    ({"prio2buffer": [0, 0, 0, 9, 0, 0, 0, 0]}, "config.prio2buffer[3]=9: buffer must be 0-7"),
    ({"cable_len": 70000}, "config.cable_len=70000: cable length must be 0-65535"),
    ({"trust": "pcp", "dscp2prio": {26: 3}}, "config.dscp2prio is given with config.trust=pcp"),
])
def test_bad_input_names_field_and_value(config, words):
    with pytest.raises(ValidationError) as err:
        Q.normalize_want(config)
    assert words in err.value.msg


# ------------------------------------------------------------------ compare / plan
def have_of(sample_id):
    return Q.parse_report(tool_output(sample_id))


def strings(commands):
    return [Q.command_string(c) for c in commands]


def test_converged_roce_profile_plans_nothing():
    have = have_of("MQ-MOCK-B-ROCE")
    want = Q.normalize_want({"trust": "dscp", "pfc": [3], "dscp2prio": {26: 3, 48: 6},
                             "prio_tc": [0, 0, 0, 3, 0, 0, 6, 0], "cable_len": 7,
                             "prio2buffer": [0, 0, 0, 1, 0, 0, 0, 0]})
    assert Q.plan_commands(want, have, "merged", "eth2") == []
    assert Q.plan_commands(want, have, "replaced", "eth2") == []


def test_default_to_roce_trust_call_before_dscp2prio_call_and_no_del():
    have = have_of("MQ-MOCK-A-DEFAULT")    # pcp trust, no PFC, FW DCBX
    want = Q.normalize_want({"dcbx": "os", "trust": "dscp", "pfc": [3], "dscp2prio": {26: 3, 48: 6}})
    cmds = strings(Q.plan_commands(want, have, "merged", "eth2"))
    assert cmds == [
        "mlnx_qos -i eth2 --dcbx os --pfc 0,0,0,1,0,0,0,0 --trust dscp",
        "mlnx_qos -i eth2 --dscp2prio set,26,3 --dscp2prio set,48,6",
    ]
    # never combined, never a delete
    assert not any("--trust" in c and "--dscp2prio" in c for c in cmds)
    assert not any("del," in c or "flush" in c for c in cmds)


def test_replaced_dscp_map_moves_last_dscp_of_a_priority_with_set_only():
    # DSCPs 24-31 are the only DSCPs of priority 3. Replaced moves all of 24-31 away except 26,
    # and moves 48 (prio 6) to prio 3. A 'del' of the last prio-3 entries would flip trust to
    # pcp; the plan uses sets only (mlx5 drops the old entry of a moved DSCP itself).
    have = have_of("MQ-MOCK-B-ROCE")
    want = Q.normalize_want({"dscp2prio": {26: 3, 48: 3}})
    cmds = strings(Q.plan_commands(want, have, "replaced", "eth2"))
    assert cmds == ["mlnx_qos -i eth2 --dscp2prio set,48,3"]   # 24-31 already default d>>3
    want = Q.normalize_want({"dscp2prio": {26: 5}})
    cmds = strings(Q.plan_commands(want, have, "replaced", "eth2"))
    assert cmds == ["mlnx_qos -i eth2 --dscp2prio set,26,5"]
    assert "del" not in cmds[0] and "--trust" not in cmds[0]


def test_replaced_puts_unnamed_dscps_back_to_default_merged_leaves_them():
    have = have_of("MQ-MOCK-B-ROCE")
    have["dscp2prio"][10] = 5      # drift: DSCP 10 moved to priority 5
    have["dscp2prio"][11] = 0
    want = Q.normalize_want({"dscp2prio": [{"dscp": 26, "priority": 3}]})
    assert Q.plan_commands(want, have, "merged", "eth2") == []
    cmds = strings(Q.plan_commands(want, have, "replaced", "eth2"))
    assert cmds == ["mlnx_qos -i eth2 --dscp2prio set,10,1 --dscp2prio set,11,1"]


def test_pfc_merged_adds_replaced_is_exact():
    have = have_of("MQ-DOC-COMMUNITY-2792")     # PFC on 0, 2, 6, 7
    want = Q.normalize_want({"pfc": [3]})
    assert strings(Q.plan_commands(want, have, "merged", "eth2")) == ["mlnx_qos -i eth2 --pfc 1,0,1,1,0,0,1,1"]
    assert strings(Q.plan_commands(want, have, "replaced", "eth2")) == ["mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0"]
    want = Q.normalize_want({"pfc": [0, 2]})
    assert Q.plan_commands(want, have, "merged", "eth2") == []


def test_ets_all_in_one_call_with_full_tsa_and_tcbw():
    have = have_of("MQ-MOCK-A-DEFAULT")        # all vendor, default prio_tc
    want = Q.normalize_want({"prio_tc": [0, 0, 0, 3, 0, 0, 6, 0],
                             "tsa": ["ets", "strict", "strict", "ets", "strict", "strict", "strict", "strict"],
                             "tcbw": [50, 0, 0, 50, 0, 0, 0, 0],
                             "ratelimit": [25, 0, 0, 0, 0, 0, 0, 0], "cable_len": 10})
    assert strings(Q.plan_commands(want, have, "merged", "eth2")) == [
        "mlnx_qos -i eth2 --cable_len 10 --ratelimit 25,0,0,0,0,0,0,0 "
        "--tsa ets,strict,strict,ets,strict,strict,strict,strict --tcbw 50,0,0,50,0,0,0,0 "
        "--prio_tc 0,0,0,3,0,0,6,0"]


def test_tcbw_only_uses_device_tsa_and_checks_sum():
    have = have_of("MQ-DOC-COMMUNITY-2792")     # ets x6 10%, strict tc6, ets tc7 40%
    want = Q.normalize_want({"tcbw": [10, 10, 10, 10, 10, 20, 0, 30]})
    assert strings(Q.plan_commands(want, have, "merged", "eth2")) == [
        "mlnx_qos -i eth2 --tsa ets,ets,ets,ets,ets,ets,strict,ets --tcbw 10,10,10,10,10,20,0,30"]
    want = Q.normalize_want({"tcbw": [10, 10, 10, 10, 10, 10, 0, 30]})
    with pytest.raises(ValidationError) as err:
        Q.plan_commands(want, have, "merged", "eth2")
    assert "sums to 90" in err.value.msg


def test_tsa_change_zeroes_share_of_tcs_leaving_ets():
    have = have_of("MQ-DOC-COMMUNITY-2792")
    want = Q.normalize_want({"tsa": ["ets"] * 6 + ["strict", "strict"],
                             "tcbw": [20, 20, 20, 20, 10, 10, 0, 0]})
    cmd = strings(Q.plan_commands(want, have, "merged", "eth2"))[0]
    assert "--tsa ets,ets,ets,ets,ets,ets,strict,strict --tcbw 20,20,20,20,10,10,0,0" in cmd


def test_buffer_size_and_prio2buffer_split_sizes_first():
    have = have_of("MQ-MOCK-A-DEFAULT")
    want = Q.normalize_want({"buffer_size": [130944, 130944, 0, 0, 0, 0, 0, 0],
                             "prio2buffer": [0, 0, 0, 1, 0, 0, 0, 0], "pfc": [3]})
    assert strings(Q.plan_commands(want, have, "merged", "eth2")) == [
        "mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0 --buffer_size 130944,130944,0,0,0,0,0,0",
        "mlnx_qos -i eth2 --prio2buffer 0,0,0,1,0,0,0,0"]
    want = Q.normalize_want({"prio2buffer": [0, 0, 0, 1, 0, 0, 0, 0]})
    assert strings(Q.plan_commands(want, have, "merged", "eth2")) == [
        "mlnx_qos -i eth2 --prio2buffer 0,0,0,1,0,0,0,0"]


def test_dcbx_fw_goes_last():
    have = have_of("MQ-MOCK-B-ROCE")
    want = Q.normalize_want({"dcbx": "fw", "pfc": [4]})
    assert strings(Q.plan_commands(want, have, "replaced", "eth2")) == [
        "mlnx_qos -i eth2 --pfc 0,0,0,0,1,0,0,0", "mlnx_qos -i eth2 --dcbx fw"]


def test_trust_pcp_with_dscp_map_needs_trust_dscp():
    have = have_of("MQ-MOCK-A-DEFAULT")
    want = Q.normalize_want({"dscp2prio": {26: 3}})
    with pytest.raises(ValidationError) as err:
        Q.plan_commands(want, have, "merged", "eth2")
    assert "config.dscp2prio needs trust dscp but eth2 trusts pcp" in err.value.msg


def test_unsupported_features_are_refused_before_any_call():
    have = have_of("MQ-MOCK-D-NORATE-VENDOR")
    want = Q.normalize_want({"ratelimit": [1] * 8})
    with pytest.raises(ValidationError) as err:
        Q.plan_commands(want, have, "merged", "eth2")
    assert "config.ratelimit=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]: eth2 does not support rate limits" in err.value.msg
    have = have_of("MQ-DOC-COMMUNITY-2792")
    want = Q.normalize_want({"buffer_size": [1] * 8})
    with pytest.raises(ValidationError) as err:
        Q.plan_commands(want, have, "merged", "eth2")
    assert "does not support receive buffer commands" in err.value.msg


def test_rendered_from_scratch_renders_every_option_given():
    want = Q.normalize_want({"trust": "dscp", "pfc": [3], "dscp2prio": {26: 3}, "dcbx": "os"})
    assert strings(Q.plan_commands(want, None, "merged", "eth2")) == [
        "mlnx_qos -i eth2 --dcbx os --pfc 0,0,0,1,0,0,0,0 --trust dscp",
        "mlnx_qos -i eth2 --dscp2prio set,26,3"]


def test_ratelimit_float_equal_to_printed_value_is_converged():
    have = have_of("MQ-MOCK-B-ROCE")
    have["tsa"] = ["ets", "strict", "strict", "ets", "strict", "strict", "strict", "strict"]
    have["ratelimit"] = [25.0] + [0.0] * 7
    want = Q.normalize_want({"ratelimit": [25, 0, 0, 0, 0, 0, 0, 0]})
    assert Q.plan_commands(want, have, "merged", "eth2") == []
