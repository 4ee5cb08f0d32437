# -*- coding: utf-8 -*-
"""lldptool layouts of every lldpad release: old/new APP, DSCP, CEE/CIN DCBX, errors.

Samples are in tests/unit/fixtures/samples/lldptool_layouts.txt (each names its source:
a public capture with repository, path and commit, or the openlldp printing code and
commit it was reconstructed from) and lldptool.txt (the shared samples).
"""
from __future__ import absolute_import, division, print_function

import random
import re

import pytest

import samples
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _lldptool as L
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError

try:
    from hypothesis import given, settings, strategies as st
    HAVE_HYPOTHESIS = True
except ImportError:
    HAVE_HYPOTHESIS = False

LAY = samples.load("lldptool_layouts.txt")
LL = samples.load("lldptool.txt")
KEYS = {"pfc", "ets_cfg", "ets_rec", "app", "dcbx"}


def raw(sample_id):
    return (LAY.get(sample_id) or LL[sample_id]).raw


def apps(*entries):
    out = [{"priority": p, "selector": s, "protocol": proto} for p, s, proto in entries]
    return sorted(out, key=lambda a: (a["selector"], a["protocol"], a["priority"]))


# ------------------------------------------------------------------ CEE / CIN DCBX
def test_cee_neighbor_brocade_real():
    # TAF-CEE-NEIGHBOR-BROCADE (taf3/taf lldptool_unittest.py @102c338a, lldptool_tni):
    # TAF's own test of this capture expects (2,1,35078) and (4,4,3260) too
    tlvs = L.parse_tlvs(raw("TAF-CEE-NEIGHBOR-BROCADE"))
    assert tlvs["dcbx"] == "cee"
    assert tlvs["pfc"] == {"enabled": [2, 3, 4, 6], "willing": False, "feature_enabled": True, "error": False}
    assert tlvs["app"] == apps((2, 1, 0x8906), (4, 4, 3260))
    assert tlvs["ets_cfg"] == {"willing": False, "up2tc": [0, 0, 3, 1, 2, 0, 4, 0],
                               "tcbw": [20, 10, 40, 20, 10, 0, 0, 0], "tsa": None}
    assert tlvs["ets_rec"] is None


def test_cee_local_real_pfc_none_three_apps():
    # TAF-CEE-LOCAL (taf3/taf lldptool_unittest.py @102c338a, lldptool_ti)
    tlvs = L.parse_tlvs(raw("TAF-CEE-LOCAL"))
    assert tlvs["dcbx"] == "cee"
    assert tlvs["pfc"] == {"enabled": [], "willing": True, "feature_enabled": True, "error": False}
    assert tlvs["app"] == apps((3, 1, 0x8906), (3, 1, 0x8914), (4, 4, 3260))
    assert tlvs["ets_cfg"]["up2tc"] == list(range(8))


def test_cee_roce_neighbor_reconstructed():
    # RECON-CEE-ROCE-NEIGHBOR (lldp_dcbx_clif.c print_dcbx_v2 @00b3c78f)
    tlvs = L.parse_tlvs(raw("RECON-CEE-ROCE-NEIGHBOR"))
    assert tlvs["dcbx"] == "cee"
    assert tlvs["pfc"]["enabled"] == [3] and tlvs["pfc"]["willing"] is False
    assert tlvs["app"] == [
        {"priority": 4, "selector": 1, "protocol": 0x8906, "oui": "0x00e04c"},
        {"priority": 3, "selector": 4, "protocol": 4791},
    ]
    assert tlvs["ets_cfg"]["up2tc"] == [0, 0, 0, 1, 0, 0, 15, 0]
    assert tlvs["ets_cfg"]["tcbw"] == [50, 50, 0, 0, 0, 0, 0, 0]


def test_cee_flags_not_enabled_error():
    text = ("CEE DCBX TLV\n\tControl TLV:\n\t  SeqNo: 1, AckNo: 1\n\tPriority Flow Control TLV:\n"
            "\t  Not Enabled, Willing, Error\n\t  PFC enabled priorities: 0, 7\n\t  Number of TC's supported: 8\n")
    assert L.parse_tlvs(text)["pfc"] == {"enabled": [0, 7], "willing": True, "feature_enabled": False, "error": True}
    assert L.parse_tlvs(text)["app"] is None           # no Application sub-TLV: absent, not []


def test_cee_application_sub_tlv_without_entries_is_empty_list():
    text = "CEE DCBX TLV\n\tApplication TLV:\n\t  Enabled, Not Willing, No Error\n"
    assert L.parse_tlvs(text)["app"] == []


def test_cin_neighbor_reconstructed():
    # RECON-CIN-NEIGHBOR (lldp_dcbx_clif.c print_dcbx_v1 @00b3c78f): wrapped BWG lines are skipped
    tlvs = L.parse_tlvs(raw("RECON-CIN-NEIGHBOR"))
    assert tlvs["dcbx"] == "cin"
    assert tlvs["pfc"] == {"enabled": [3], "willing": True, "feature_enabled": True, "error": False}
    assert tlvs["app"] == apps((3, 1, 0x8906))
    assert tlvs["ets_cfg"] is None


def test_pre_2012_cin_name_and_priorites_spelling():
    # 'PRE-CEE DCBX TLV' before 56689b4 (2012-10), 'priorites' before 50c4797 (2011-06)
    text = ("PRE-CEE DCBX TLV\n\tPriority Flow Control TLV:\n\t  Enabled, Not Willing, No Error\n"
            "\t  PFC enabled priorites: 4\n")
    tlvs = L.parse_tlvs(text)
    assert tlvs["dcbx"] == "cin" and tlvs["pfc"]["enabled"] == [4]


def test_ieee_wins_over_cee_when_both_present():
    text = raw("RECON-APP-TLV-NO-ENTRIES").replace("\tEnd of LLDPDU TLV\n", "") + \
        raw("TAF-CEE-LOCAL").split("CEE DCBX TLV", 1)[1].join(["CEE DCBX TLV", ""])
    tlvs = L.parse_tlvs(text)
    assert tlvs["dcbx"] == "ieee" and tlvs["pfc"]["enabled"] == [3] and tlvs["app"] == []


# ------------------------------------------------------------------ IEEE APP layouts
def test_old_app_layout_real():
    # TAF-IEEE-OLD-APP (taf3/taf lldptool_unittest.py @102c338a, ieee_lldptool_ti_app)
    tlvs = L.parse_tlvs(raw("TAF-IEEE-OLD-APP"))
    assert tlvs["dcbx"] == "ieee"
    assert tlvs["app"] == apps((2, 2, 3260), (5, 1, 0x8906))
    assert tlvs["pfc"] == {"willing": False, "enabled": [1, 2, 5, 7]}
    assert tlvs["ets_rec"] == {"up2tc": [0, 0, 1, 1, 2, 2, 3, 3], "tcbw": [25, 25, 25, 25, 0, 0, 0, 0],
                               "tsa": ["ets"] * 4 + ["strict"] * 4}


def test_old_app_layout_reindented_paste():
    # TAF-IEEE-OLD-APP-REINDENTED: 7-space 'App#0:', '\tPriority:' without the space
    tlvs = L.parse_tlvs(raw("TAF-IEEE-OLD-APP-REINDENTED"))
    assert tlvs["app"] == apps((0, 1, 0x8906))
    assert tlvs["pfc"] == {"willing": True, "enabled": []}
    assert tlvs["ets_cfg"]["tcbw"] == [12, 12, 12, 12, 13, 13, 13, 13]


EVERY_SELECTOR = apps((3, 3, 4791), (3, 5, 5), (3, 5, 26), (6, 5, 48), (4, 1, 0x8906), (2, 2, 3260),
                      (5, 4, 445), (1, 0, 7))


def test_old_layout_every_selector():
    # RECON-OLD-APP-ALL-SELECTORS (lldp_8021qaz_clif.c @706d0ee): DSCP as 'Sel: 5' + 'Reserved Port'
    got = L.parse_tlvs(raw("RECON-OLD-APP-ALL-SELECTORS"))["app"]
    assert got == apps((3, 3, 4791), (3, 5, 26), (6, 5, 48), (4, 1, 0x8906), (2, 2, 3260), (5, 4, 445), (1, 0, 7))


def test_new_layout_every_selector_with_backspaces():
    # RECON-NEW-APP-ALL-SELECTORS (lldp_8021qaz_clif.c @218a515): ' %02i,' DSCP values, '\b '
    assert "\b" in raw("RECON-NEW-APP-ALL-SELECTORS")
    assert L.parse_tlvs(raw("RECON-NEW-APP-ALL-SELECTORS"))["app"] == EVERY_SELECTOR


def test_new_layout_terminal_paste():
    # RECON-NEW-APP-TERMINAL-PASTE: spaces for TABs, the backspace already applied (no last comma)
    want = apps((3, 3, 4791), (3, 5, 5), (3, 5, 26), (6, 5, 48))
    assert L.parse_tlvs(raw("RECON-NEW-APP-TERMINAL-PASTE"))["app"] == want


def test_shared_sample_dscp_layout_still_parses():
    # RECON-APP-TLV-DSCP of samples/lldptool.txt
    assert L.parse_tlvs(raw("RECON-APP-TLV-DSCP"))["app"] == apps((3, 3, 4791), (3, 5, 26), (6, 5, 48))


def test_pasted_caret_h_for_backspace():
    text = "IEEE 8021QAZ APP TLV\n\tPrio:3 \t dscp:  26,^H \n"
    assert L.parse_tlvs(text)["app"] == apps((3, 5, 26))


def test_present_app_tlv_without_entries_is_empty_list():
    # RECON-APP-TLV-NO-ENTRIES: the name line's TAB lands before 'End of LLDPDU TLV'
    tlvs = L.parse_tlvs(raw("RECON-APP-TLV-NO-ENTRIES"))
    assert tlvs["app"] == [] and tlvs["pfc"] == {"willing": False, "enabled": [3]} and tlvs["dcbx"] == "ieee"


def test_absent_app_tlv_is_none():
    assert L.parse_tlvs(raw("RECON-PFC-TLV"))["app"] is None
    assert L.parse_tlvs("") == dict((k, None) for k in KEYS)


def test_parse_app_keeps_its_list_of_strings_signature():
    lines = ["App#   0 \t Prio 3 \t Sel 3 \t P-ID\t UDP or DCCP Port: 4791", "Prio:6 \t dscp:  48,\b "]
    assert L._parse_app(lines) == apps((3, 3, 4791), (6, 5, 48))
    assert L._parse_app([]) == []
    with pytest.raises(L.LldpParseError, match=r"^IEEE 8021QAZ APP TLV line 1 'garbage': "):
        L._parse_app(["garbage"])


def test_free_text_values_that_look_like_dcbx_are_values():
    text = "System Description TLV\n\tCEE DCBX switch, IEEE 8021QAZ capable\n" + raw("RECON-PFC-TLV")
    assert L.parse_tlvs(text)["pfc"] == {"willing": False, "enabled": [3]}


def test_stray_control_bytes_are_dropped():
    text = "IEEE 8021QAZ PFC TLV\n\t Willing: no\x1b\n\t PFC enabled: 3 \x08\n"
    assert L.parse_tlvs(text)["pfc"] == {"willing": False, "enabled": [3]}


# ------------------------------------------------------------------ errors
PFC_HEAD = "IEEE 8021QAZ PFC TLV\n\t Willing: no\n"
APP_HEAD = "IEEE 8021QAZ APP TLV\n"
ETS_OK = ("IEEE 8021QAZ ETS Configuration TLV\n\t Willing: no\n\t PRIO_MAP: 0:0 1:0 2:0 3:3 4:0 5:0 6:6 7:0 \n"
          "\t TC Bandwidth: 50% 0% 0% 50% 0% 0% 0% 0% \n\t TSA_MAP: 0:ets 1:strict 2:strict 3:ets 4:strict "
          "5:strict 6:strict 7:strict \n")
CEE_PFC = "CEE DCBX TLV\n\tPriority Flow Control TLV:\n\t  Enabled, Not Willing, No Error\n"
BAD = [
    ("pfc-enabled-x", PFC_HEAD + "\t PFC enabled: x\n", "IEEE 8021QAZ PFC TLV", 3, "'x' is not a decimal"),
    ("pfc-enabled-9", PFC_HEAD + "\t PFC enabled: 3 9\n", "IEEE 8021QAZ PFC TLV", 3, "out of range 0-7"),
    ("pfc-enabled-empty", PFC_HEAD + "\t PFC enabled: \n", "IEEE 8021QAZ PFC TLV", 3, "not 'none'"),
    ("pfc-no-enabled-line", PFC_HEAD, "IEEE 8021QAZ PFC TLV", 1, "no 'pfc enabled:' line"),
    ("pfc-willing-maybe", "IEEE 8021QAZ PFC TLV\n\t Willing: maybe\n\t PFC enabled: 3\n",
     "IEEE 8021QAZ PFC TLV", 2, "expected yes or no"),
    ("pfc-no-colon", PFC_HEAD + "\t PFC enabled 3\n", "IEEE 8021QAZ PFC TLV", 3, "'Name: value'"),
    ("app-prio-9x", APP_HEAD + "\tApp#   1 \t Prio 9x \t Sel 3 \t P-ID\t UDP or DCCP Port: 4791\n",
     "IEEE 8021QAZ APP TLV", 2, "priority '9x' is not a decimal"),
    ("app-prio-9", APP_HEAD + "\tApp#   1 \t Prio 9 \t Sel 3 \t P-ID\t UDP or DCCP Port: 4791\n",
     "IEEE 8021QAZ APP TLV", 2, "out of range 0-7"),
    ("app-port-big", APP_HEAD + "\tApp#   1 \t Prio 3 \t Sel 3 \t P-ID\t UDP or DCCP Port: 65536\n",
     "IEEE 8021QAZ APP TLV", 2, "out of range 0-65535"),
    ("app-label-mismatch", APP_HEAD + "\tApp#   1 \t Prio 3 \t Sel 3 \t P-ID\t Ethertype: 0x8906\n",
     "IEEE 8021QAZ APP TLV", 2, "does not belong to selector 3"),
    ("app-label-unknown", APP_HEAD + "\tApp#   1 \t Prio 3 \t Sel 3 \t P-ID\t Carrier pigeon: 1\n",
     "IEEE 8021QAZ APP TLV", 2, "unknown protocol label"),
    ("app-ethertype-decimal", APP_HEAD + "\tApp#   1 \t Prio 3 \t Sel 1 \t P-ID\t Ethertype: 8906\n",
     "IEEE 8021QAZ APP TLV", 2, "not a hex number"),
    ("app-garbage-only", APP_HEAD + "\tsomething else\n\tand more\n", "IEEE 8021QAZ APP TLV", 2,
     "not an APP entry line"),
    ("app-garbage-after-entry", APP_HEAD + "\tApp#   0 \t Prio 3 \t Sel 3 \t P-ID\t UDP or DCCP Port: 4791\n"
     "\tApp#   1 \t Prio 3 \t Sel\n", "IEEE 8021QAZ APP TLV", 3, "not an APP entry line"),
    ("dscp-64", APP_HEAD + "\tPrio:3 \t dscp:  64,\b \n", "IEEE 8021QAZ APP TLV", 2, "out of range 0-63"),
    ("dscp-none", APP_HEAD + "\tPrio:3 \t dscp: \n", "IEEE 8021QAZ APP TLV", 2, "no DSCP values"),
    ("dscp-word", APP_HEAD + "\tPrio:3 \t dscp:  2b,\b \n", "IEEE 8021QAZ APP TLV", 2, "'2b' is not a decimal"),
    ("old-missing-sel", APP_HEAD + "\tApp#0:\n\t Priority: 3\n\t UDP or DCCP Port: 4791\n\n",
     "IEEE 8021QAZ APP TLV", 4, "before the Priority and Sel lines"),
    ("old-truncated", APP_HEAD + "\tApp#0:\n\t Priority: 3\n\t Sel: 3\n", "IEEE 8021QAZ APP TLV", 2,
     "without its label line"),
    ("old-priority-x", APP_HEAD + "\tApp#0:\n\t Priority: x\n", "IEEE 8021QAZ APP TLV", 3, "priority 'x'"),
    ("old-field-outside", APP_HEAD + "\t Priority: 3\n", "IEEE 8021QAZ APP TLV", 2, "outside an 'App#N:' entry"),
    ("old-sel-twice", APP_HEAD + "\tApp#0:\n\t Priority: 3\n\t Sel: 3\n\t Sel: 3\n", "IEEE 8021QAZ APP TLV", 5,
     "second sel line"),
    ("ets-7-entries", ETS_OK.replace(" 7:0 ", " "), "IEEE 8021QAZ ETS Configuration TLV", 3, "7 entries, expected 8"),
    ("ets-tsa-bogus", ETS_OK.replace("3:ets", "3:fast"), "IEEE 8021QAZ ETS Configuration TLV", 5, "TSA 'fast'"),
    ("ets-bw-no-percent", ETS_OK.replace("50% 0% 0% 50%", "50 0% 0% 50%"), "IEEE 8021QAZ ETS Configuration TLV", 4,
     "'50' is not a percentage"),
    ("ets-index-twice", ETS_OK.replace("7:0 ", "6:0 "), "IEEE 8021QAZ ETS Configuration TLV", 3,
     "index 6 printed twice"),
    ("cee-pfc-9", CEE_PFC + "\t  PFC enabled priorities: 3, 9\n", "CEE DCBX TLV", 4, "out of range 0-7"),
    ("cee-pfc-no-enabled", CEE_PFC, "CEE DCBX TLV", 2, "no 'PFC enabled priorities:' line"),
    ("cee-no-flags", "CEE DCBX TLV\n\tPriority Flow Control TLV:\n\t  PFC enabled priorities: 3\n",
     "CEE DCBX TLV", 2, "no 'Enabled, Willing, Error' line"),
    ("cee-app-reserved", "CEE DCBX TLV\n\tApplication TLV:\n\t  Enabled, Not Willing, No Error\n"
     "\t  Reserved: 0x0001, Priority Map: 0x08\n", "CEE DCBX TLV", 4, "reserved CEE selector"),
    ("cee-app-map-zz", "CEE DCBX TLV\n\tApplication TLV:\n\t  Enabled, Not Willing, No Error\n"
     "\t  TCP/UDP Port: 0x12b7, Priority Map: 0xzz\n", "CEE DCBX TLV", 4, "not a hex number"),
    ("cee-outside-sub", "CEE DCBX TLV\n\t  Enabled, Not Willing, No Error\n", "CEE DCBX TLV", 2,
     "not inside a known DCBX sub-TLV"),
    ("cee-pg-twice", "CEE DCBX TLV\n\tPriority Groups TLV:\n\t  Enabled, Not Willing, No Error\n"
     "\t  PGID Priorities:  0:[0,1,2,3] 1:[3,4,5,6,7]\n", "CEE DCBX TLV", 4, "priority 3 is in two groups"),
    ("cee-pg-missing", "CEE DCBX TLV\n\tPriority Groups TLV:\n\t  Enabled, Not Willing, No Error\n"
     "\t  PGID Priorities:  0:[0,1,2,3] 1:[4,5,6]\n", "CEE DCBX TLV", 4, "priority 7 is in no group"),
    ("cin-subtype", "CIN DCBX TLV\n\tApplication TLV:\n\t  Enabled, Not Willing, No Error\n"
     "\t  Subtype: 1 Priority Map: 0x08\n", "CIN DCBX TLV", 4, "subtype 1 has no protocol id"),
    ("not-a-dump", "Device not capable b\n", "TLV dump", 1, "text before the first TLV name line"),
    ("garbled-name", PFC_HEAD + "\t PFC enabled: 3\nIEEE 8021QAZ APP TL\n\tPrio:3 \t dscp:  26,\n", "TLV dump", 4,
     "looks like a DCB TLV name"),
    ("tlv-twice", PFC_HEAD + "\t PFC enabled: 3\n" + PFC_HEAD + "\t PFC enabled: 3\n", "IEEE 8021QAZ PFC TLV", 4,
     "TLV printed twice"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_unreadable_tlv_is_a_clear_error(case):
    text, tlv, lineno, problem = case[1:]
    with pytest.raises(L.LldpParseError) as info:
        L.parse_tlvs(text)
    exc = info.value
    assert isinstance(exc, ValueError) and isinstance(exc, ToolError)
    line = _line(text, lineno)
    assert str(exc).startswith("%s line %d '%s': " % (tlv, lineno, line)), str(exc)
    assert problem in str(exc)
    assert exc.msg == str(exc) and exc.stdout == text      # fail_json(**exc.as_result()) shows the dump


def _line(text, lineno):
    return L._clean(text.splitlines()[lineno - 1])


@pytest.mark.parametrize("value", ["x", "300", "2x", "-1", "\u00b2", "1.5"])
def test_pfc_bitmask_garbage_is_an_error(value):
    with pytest.raises(L.LldpParseError, match=r"^PFC -c enabled line 1 'enabled=.*': not a decimal bitmask"):
        L.pfc_from_bitmask(value, tlv_enabled=[3])


def test_pfc_bitmask_values_still_decoded():
    assert L.pfc_from_bitmask("8") == [3]
    assert L.pfc_from_bitmask("255") == list(range(8))
    assert L.pfc_from_bitmask("25") is None
    assert L.pfc_from_bitmask(None, [3]) == [3] and L.pfc_from_bitmask("", None) is None


# ------------------------------------------------------------------ any text: parse or LldpParseError
ALPHABET = "0123456789 \t\n:,%#x\b[]-TLVAppPrioSelIEEEyesnone"


def _check_any(text):
    try:
        result = L.parse_tlvs(text)
    except L.LldpParseError as exc:
        assert re.match(r"^.+ line \d+ '.*': .+", str(exc), re.S), str(exc)
        return "error"
    assert set(result) == KEYS
    for key in ("app",):
        assert result[key] is None or isinstance(result[key], list)
    return "ok"


def _mutate(rng, text):
    ops = rng.randint(1, 4)
    for dummy in range(ops):
        kind = rng.randint(0, 5)
        pos = rng.randint(0, len(text)) if text else 0
        if kind == 0 and text:
            text = text[:pos] + text[pos + 1:]
        elif kind == 1:
            text = text[:pos] + rng.choice(ALPHABET) + text[pos:]
        elif kind == 2:
            lines = text.splitlines(True)
            if lines:
                i = rng.randrange(len(lines))
                if rng.random() < 0.5:
                    lines.insert(i, lines[i])
                else:
                    lines.pop(i)
                text = "".join(lines)
        elif kind == 3:
            text = re.sub(r"[0-9]", lambda m: rng.choice("0123456789x"), text, count=rng.randint(1, 3))
        elif kind == 4 and text:
            text = text[:pos] + chr(rng.randint(0, 0x2FF)) + text[pos:]
        else:
            text = text[:pos]
    return text


def test_mutated_real_samples_parse_or_raise_lldp_parse_error():
    """Property test without hypothesis (not installed in the venv): seeded random
    mutations of every sample either parse to the full shape or raise LldpParseError."""
    rng = random.Random(20261201)
    outcome = {"ok": 0, "error": 0}
    bodies = [s.raw for s in LAY.values()] + [LL[k].raw for k in LL if k.startswith(("RECON", "TLV", "IRDMA"))]
    for text in bodies:
        for dummy in range(150):
            outcome[_check_any(_mutate(rng, text))] += 1
    assert outcome["ok"] > 100 and outcome["error"] > 100, outcome        # both paths exercised
    config = "app=(prio,sel,proto)\n0:(3,3,4791) local hw (set)\n1:(4,1,0x8906) local  hw (unknown)\n"
    for dummy in range(300):
        try:
            got = L.parse_app_config(_mutate(rng, config))
        except L.LldpParseError:
            continue
        assert got is None or set(got) == {"local", "peer"}


@pytest.mark.skipif(not HAVE_HYPOTHESIS, reason="hypothesis is not installed in this venv")
def test_hypothesis_any_text_parses_or_raises():
    lines = st.sampled_from([s.raw for s in LAY.values()]).map(lambda t: t.splitlines()) | \
        st.lists(st.text(alphabet=ALPHABET, max_size=60), max_size=20)

    @settings(max_examples=300, deadline=None)
    @given(lines, st.randoms())
    def check(sample_lines, rnd):
        text = "\n".join(sample_lines)
        _check_any(text)
        _check_any(_mutate(rnd, text))
    check()


# ------------------------------------------------------------------ -c app (configured entries)
def test_c_app_current_layout():
    # reconstructed from lldp_8021qaz_cmds.c get_arg_app() @00b3c78f (since 0313734, 2013-07): lldpad.conf
    # entries ' hw (unknown)' when not in the NIC (two spaces), peer entries numbered MAX_APP_ENTRIES (32)
    text = ("app=(prio,sel,proto)\n0:(3,3,4791) local hw (set)\n1:(3,5,26) local hw (pending set)\n"
            "2:(4,1,0x8906) local  hw (unknown)\n32:(3,3,4791) peer hw (set)\n\n")
    got = L.parse_app_config(text)
    assert got == {"local": apps((3, 3, 4791), (3, 5, 26), (4, 1, 0x8906)), "peer": apps((3, 3, 4791))}


def test_c_app_before_2013_layout():
    # reconstructed from get_arg_app() @v0.9.46 (508db15f): '%i:(%i,%i,0x%04x) %s (%s)' for selector 1 (no 'hw')
    text = "app=(prio,sel,proto)\n0:(4,1,0x8906) local (set)\n1:(3,3,4791) peer hw (unknown)\n\n"
    assert L.parse_app_config(text) == {"local": apps((4, 1, 0x8906)), "peer": apps((3, 3, 4791))}


def test_c_app_empty_missing_and_next_argument():
    assert L.parse_app_config("app=(prio,sel,proto)\n\n") == {"local": [], "peer": []}
    assert L.parse_app_config("Command not applicable c\n") is None
    assert L.parse_app_config("app=(prio,sel,proto)\n0:(3,3,4791) local hw (set)\nenableTx=yes\n")["local"] == \
        apps((3, 3, 4791))


@pytest.mark.parametrize("line, problem", [
    ("0:(9,3,4791) local hw (set)", "priority 9 is out of range"),
    ("0:(3,3,47x1) local hw (set)", "'47x1' is not a decimal"),
    ("0:(3,5,64) local hw (set)", "out of range 0-63"),
    ("0:(3,3,4791) remote hw (set)", "not an 'i:(prio,sel,proto)"),
    ("0:(3,3,4791) local hw (gone)", "unknown hw state 'gone'"),
    ("(3,3,4791)", "not an 'i:(prio,sel,proto)"),
])
def test_c_app_bad_entry_is_an_error(line, problem):
    with pytest.raises(L.LldpParseError) as info:
        L.parse_app_config("app=(prio,sel,proto)\n%s\n" % line)
    assert str(info.value).startswith("APP -c app line 2 '%s': " % line) and problem in str(info.value)
