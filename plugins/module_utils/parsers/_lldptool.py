# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lldptool output: the parser and the reader of the IEEE DCBX TLVs (PFC, ETS-CFG, ETS-REC,
APP), of CEE / CIN DCBX mapped into the same shape, and of the neighbour's identity TLVs.
What to do with them (normalise the wanted TLVs, compare, plan and apply ``lldptool -T``) is
``_lldp_dcb``; this file knows how lldptool prints and nothing of the module.

Layout rules (samples/lldptool.txt; intel/openlldp printing code, HEAD 00b3c78f of 2025-02-13):
  * ``-t [-n] -i IF [-V TLV]`` prints TLV name lines (ending in ``TLV``) and value lines
    indented by a TAB (doc copies use spaces): a TLV not transmitted / a port without DCB
    prints nothing with rc 0. ``lldptool_cmds.c`` ``print_tlvs()`` hands each TLV to a
    module's ``print_tlv``; ``lldp_8021qaz_clif.c`` ``ieee8021qaz_print_tlv()`` prints
    ``"%s\\n\\t"`` (name, newline, TAB) and then the body, so a TLV with an empty body (an APP
    TLV without entries) leaves that TAB in front of the NEXT name line (``\\tIEEE 8021QAZ PFC
    TLV``): name lines are recognised by their text, not by their column.
  * ``-c ARG`` prints ``ARG=value``; ask ONE argument per call (two arguments trip a
    length bug: ``enabled=80`` / ``illing0=``). PFC ``enabled`` is a decimal bitmask cut to
    2 characters (255 prints ``25``), so the TLV view (``PFC enabled: 3 `` or ``none``)
    is preferred and the bitmask only used when it is unambiguous.
  * errors: rc 1 (255 when lldpad is down) and a stray trailing byte (``Device not capable b``).

IEEE 802.1Qaz bodies (``lldp_8021qaz_clif.c``, unchanged since d70a3f7 of 2011-06 but APP):
  * PFC: `` Willing: yes|no``, ``MACsec Bypass Capable: yes|no``, ``PFC capable traffic
    classes: N``, ``PFC enabled: `` + ``"%i "`` per priority (trailing space) or ``none``.
  * ETS-CFG: `` Willing:``, ``CBS:``, ``MAX_TCS:``, ``PRIO_MAP: p:tc`` x8 (tc is a nibble,
    0-15), ``TC Bandwidth: N%`` x8, ``TSA_MAP: tc:strict|cbshaper|ets|vendor|unknown`` x8;
    ETS-REC the same without the first three lines and with ``PRIO_MAP:`` + two spaces.
  * APP, two layouts:
      - d70a3f7 (v0.9.43, 2011) .. 706d0ee (2018-07), i.e. every release up to v1.0.1 (2015)
        and distro snapshots older than 2018-11: one multi-line block per entry, a blank line
        after each, later blocks indented by a TAB (``if (offset > 6) printf("\\t")``)::

            App#0:
            \\t Priority: 3
            \\t Sel: 3
            \\t UDP or DCCP Port: 4791
            <blank>

        Selector 5 (DSCP) has no case in that switch: ``Reserved Port: 26``.
      - 218a515 (2018-11-14, first release v1.1 of 2020-10) .. HEAD: one line per non-DSCP
        entry, ``"App# %3i \\t Prio %1i \\t Sel %1i \\t P-ID"`` + ``"\\t <label>: <n>"``, then
        DSCP entries grouped per priority ``"Prio:%i \\t dscp: "`` + ``" %02i,"`` per value +
        ``"\\b \\n"``: a literal backspace through a pipe, an erased comma on a terminal.
    Labels per selector (both layouts): 1 ``Ethertype: 0x%04x``, 2 ``{S}TCP Port``, 3 ``UDP or
    DCCP Port``, 4 ``TCP/STCP/UDP/DCCP Port`` (sic), else ``Reserved Port``; decimal but 1.
CEE / CIN DCBX (``lldp_dcbx_clif.c`` ``dcbx_print_tlv()``, ``print_dcbx_v2()`` / ``_v1()``):
  * name ``CEE DCBX TLV`` (CIN: ``CIN DCBX TLV``, before 56689b4 of 2012-10 ``PRE-CEE DCBX TLV``),
    then sub-TLVs: ``\\tControl TLV:`` / ``\\t  SeqNo: a, AckNo: b``; ``\\tPriority Groups TLV:``;
    ``\\tPriority Flow Control TLV:``; ``\\tApplication TLV:``; ``\\t{FCoE,LAN} Logical Link
    TLV:`` / ``\\t  Link is up|down``; ``\\tUnhandled DCBX BCN TLV``; ``\\tUnknown DCBX sub-TLV
    N: <hex>`` (no ``N`` before efda047 of 2011-12). There are no ``CEE Priority Groups``-style
    names in lldptool; those are dcbtool's ``Feature:`` lines, a different tool.
  * each feature sub-TLV starts ``\\t  [Not ]Enabled, [Not ]Willing, [No ]Error``.
  * PFC: ``\\t  PFC enabled priorities: 2, 3, 4, 6`` (``, `` joined) or ``none`` (spelt
    ``priorites`` before 50c4797 of 2011-06), CEE adds ``Number of TC's supported: N``.
  * CEE PG: ``PGID Priorities:  0:[0,1,5,7] 1:[3] 15:[6]`` (PGID 15 = strict) and ``PGID
    Percentages: 0:20% .. 7:0%``; CIN PG (``BWG Percentages`` / ``BWG Priorities`` wrapped
    every 4 entries onto ``\\t\\t\\t  `` lines) is not mapped.
  * CEE APP: per entry ``\\t  Ethertype: 0x8906, Priority Map: 0x08`` or ``TCP/UDP Port:
    0x12b7, ...`` (CEE OUI 00:1b:21 with selector 0 / 1), ``Reserved: 0x....`` (selector 2/3),
    or ``OUI: 0x..., Selector: N, Protocol ID: 0x...., Priority Map: 0x..``; the map is a
    priority bitmask. CIN APP: ``\\t  FCoE Priority Map: 0x08`` or ``Subtype: N Priority Map:``.

What ``parse_tlvs`` makes of it (decisions):
  * ``{pfc, ets_cfg, ets_rec, app, dcbx}``; a TLV that is absent is None; ``dcbx`` is
    ``"ieee"`` (any IEEE 8021QAZ TLV), else ``"cee"`` / ``"cin"``, else None. When IEEE and
    CEE TLVs both appear the IEEE ones win (lldpad's own auto mode picks IEEE).
  * CEE/CIN are mapped into the same shape: PFC ``{enabled, willing}`` plus ``feature_enabled``
    and ``error`` (the sub-TLV flags); APP one entry per bit of the priority map, CEE selector
    0 (Ethertype) -> IEEE 1, 1 (TCP/UDP port) -> IEEE 4 (TCP/SCTP/UDP/DCCP), other OUIs keep
    ``oui``; CEE PG -> ``ets_cfg`` ``{willing, up2tc: PGID per priority (15 = strict),
    tcbw: PG percentages, tsa: None}``. CIN FCoE -> ethertype 0x8906.
  * a present APP TLV with no body lines is ``[]`` (no entries, what lldptool prints for an
    empty table); a body line that is not an APP entry is an error, so a body none of whose
    lines parse is an error, never ``[]``. PFC/ETS need their value lines; a ``Key: value``
    line their printer never prints is an error (``_TLV_KEYS``), and so are bad numbers,
    counts or words (MACsec yes|no, PFC capable TCs 0-15, CBS [not ]supported, MAX_TCS 1-8).
    Every error is ``LldpParseError``: ``"<TLV name> line N '<line>': <problem>"``.
  * value lines may be indented by TABs or spaces; backspaces (raw or pasted as ``^H``) and
    other control bytes are dropped; text before the first TLV name line is an error.

``parse_app_config`` reads ``-V APP -c app`` (the entries lldpad holds, also when the APP TLV
is not transmitted and ``-t`` prints none; both layouts of ``get_arg_app()``).

``parse_identity`` reads the neighbour's Chassis ID / Port ID / System Name TLVs of a ``-t -n``
dump; ``parse_arg`` one ``ARG=value`` line; ``pfc_from_bitmask`` the cut ``-c enabled`` bitmask.

``read_state`` (through ``_call``) is the only I/O seam: it takes a ``run(argv) -> (rc, out,
err)``; every other function is pure, text in and data out.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError
from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re

TOOL = "lldptool"
TLV_NAMES = {
    "IEEE 8021QAZ PFC TLV": "pfc",
    "IEEE 8021QAZ ETS Configuration TLV": "ets_cfg",
    "IEEE 8021QAZ ETS Recommendation TLV": "ets_rec",
    "IEEE 8021QAZ APP TLV": "app",
}
DCBX_TLV_NAMES = {"CEE DCBX TLV": "cee", "CIN DCBX TLV": "cin", "PRE-CEE DCBX TLV": "cin"}
TLV_IDS = {"pfc": "PFC", "ets_cfg": "ETS-CFG", "ets_rec": "ETS-REC", "app": "APP"}
# lldp_8021qaz_clif.c ieee8021qaz_print_app_tlv(): protocol label per selector (both layouts)
APP_LABELS = {"ethertype": 1, "{s}tcp port": 2, "udp or dccp port": 3, "tcp/stcp/udp/dccp port": 4,
              "reserved port": None}
TSA_NAMES = ("strict", "cbshaper", "ets", "vendor", "unknown")
CEE_SELECTORS = {0: 1, 1: 4}          # CEE app selector -> IEEE selector
FCOE_ETHERTYPE = 0x8906


class LldpParseError(ToolError, ValueError):
    """lldptool printed a TLV that is there but cannot be read (a ValueError; a ToolError
    too, so a reader that turns ToolError into fail_json reports it without a traceback)."""

    def __init__(self, tlv, lineno, line, problem, text=""):
        msg = "%s line %s '%s': %s" % (tlv, lineno, line, problem)
        super(LldpParseError, self).__init__(msg, stdout=text)
        self.tlv, self.lineno, self.line, self.problem = tlv, lineno, line, problem


def _yes(text):
    text = (text or "").strip().lower()
    if text in ("yes", "true", "1"):
        return True
    if text in ("no", "false", "0"):
        return False
    return None


_CONTROL = _lazy_re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _clean(text):
    """Drop the stray bytes lldptool leaves after an error word and backspaces."""
    return _CONTROL.sub("", (text or "").replace("^H", "")).strip()


def _is_tlv_name(line):
    """A TLV name line (any module's), told apart from DCBX body lines that end in TLV."""
    if line in TLV_NAMES or line in DCBX_TLV_NAMES:
        return True
    return (line.endswith(" TLV") or line.endswith(" LTV")) and not line.startswith("Unhandled DCBX")


class _Body(object):
    """The numbered value lines of one TLV; ``fail`` raises LldpParseError for one of them."""

    def __init__(self, name, lineno, lines, text):
        self.name, self.lineno, self.lines, self.text = name, lineno, lines, text

    def fail(self, lineno, line, problem):
        raise LldpParseError(self.name, lineno, line, problem, self.text)

    def fail_header(self, problem):
        self.fail(self.lineno, self.name, problem)


def _int(body, lineno, line, value, low, high, what, base=10):
    """A whole-string integer in [low, high]; anything else is an LldpParseError."""
    value = (value or "").strip()
    pattern = r"0[xX][0-9a-fA-F]+\Z" if base == 16 else r"[0-9]+\Z"
    if not re.match(pattern, value):
        body.fail(lineno, line, "%s %r is not a %s number" % (what, value, "hex" if base == 16 else "decimal"))
    number = int(value, base)
    if not low <= number <= high:
        body.fail(lineno, line, "%s %d is out of range %d-%d" % (what, number, low, high))
    return number


def _yes_no(body, lineno, line, value):
    word = (value or "").strip().lower()
    if word not in ("yes", "no"):
        body.fail(lineno, line, "expected yes or no, got %r" % value.strip())
    return word == "yes"


def _fields(body):
    """``Key: value`` lines -> {key lower: (lineno, line, value)}; a line without ':' is an error."""
    fields = {}
    for lineno, line in body.lines:
        if ":" not in line:
            body.fail(lineno, line, "expected a 'Name: value' line")
        key, value = line.split(":", 1)
        key = key.strip().lower()
        if key in fields:
            body.fail(lineno, line, "%s printed twice" % key)
        fields[key] = (lineno, line, value.strip())
    return fields


def _need(body, fields, key):
    if key not in fields:
        body.fail_header("no '%s:' line" % key)
    return fields[key]


# lldp_8021qaz_clif.c prints exactly these 'Name: value' lines per TLV (a line none of them is an error)
_TLV_KEYS = {
    "pfc": ("willing", "macsec bypass capable", "pfc capable traffic classes", "pfc enabled"),
    "ets_cfg": ("willing", "cbs", "max_tcs", "prio_map", "tc bandwidth", "tsa_map"),
    "ets_rec": ("prio_map", "tc bandwidth", "tsa_map"),
}


def _check_keys(body, fields, kind):
    for key, (lineno, line, value) in sorted(fields.items(), key=lambda item: item[1][0]):
        if key not in _TLV_KEYS[kind]:
            body.fail(lineno, line, "not a line lldptool prints in this TLV (expected %s)"
                      % ", ".join(k for k in _TLV_KEYS[kind]))
        if key == "macsec bypass capable":
            _yes_no(body, lineno, line, value)
        elif key == "pfc capable traffic classes":
            _int(body, lineno, line, value, 0, 15, "number of traffic classes")
        elif key == "cbs" and value.lower() not in ("supported", "not supported"):
            body.fail(lineno, line, "expected 'supported' or 'not supported', got %r" % value)
        elif key == "max_tcs":
            _int(body, lineno, line, value, 1, 8, "MAX_TCS")


def _parse_pfc(body):
    fields = _fields(body)
    _check_keys(body, fields, "pfc")
    lineno, line, willing = _need(body, fields, "willing")
    entry = {"willing": _yes_no(body, lineno, line, willing)}
    lineno, line, enabled = _need(body, fields, "pfc enabled")
    entry["enabled"] = _priority_list(body, lineno, line, enabled, r"[\s]+")
    return entry


def _priority_list(body, lineno, line, value, sep):
    """``none`` or priorities 0-7 separated by ``sep`` -> sorted list."""
    if value.lower() == "none":
        return []
    tokens = [tok for tok in re.split(sep, value) if tok.strip()]
    if not tokens:
        body.fail(lineno, line, "no priorities and not 'none'")
    prios = [_int(body, lineno, line, tok, 0, 7, "priority") for tok in tokens]
    if len(set(prios)) != len(prios):
        body.fail(lineno, line, "a priority is listed twice")
    return sorted(prios)


def _index_map(body, lineno, line, value, check):
    """``i:x`` tokens for i = 0..7 exactly once each -> [x0..x7] (``check`` converts x)."""
    out = {}
    tokens = value.split()
    for tok in tokens:
        match = re.match(r"([0-9]+):(\S+)\Z", tok)
        if not match:
            body.fail(lineno, line, "%r is not 'index:value'" % tok)
        index = _int(body, lineno, line, match.group(1), 0, 7, "index")
        if index in out:
            body.fail(lineno, line, "index %d printed twice" % index)
        out[index] = check(match.group(2))
    if len(out) != 8:
        body.fail(lineno, line, "%d entries, expected 8" % len(out))
    return [out[i] for i in range(8)]


def _parse_ets(body, with_willing):
    fields = _fields(body)
    _check_keys(body, fields, "ets_cfg" if with_willing else "ets_rec")
    entry = {}
    if with_willing:
        lineno, line, willing = _need(body, fields, "willing")
        entry["willing"] = _yes_no(body, lineno, line, willing)
    lineno, line, value = _need(body, fields, "prio_map")
    entry["up2tc"] = _index_map(body, lineno, line, value,
                                lambda v: _int(body, lineno, line, v, 0, 15, "traffic class"))

    def tsa(name):
        if name not in TSA_NAMES:
            body.fail(lineno, line, "TSA %r is not one of %s" % (name, ", ".join(TSA_NAMES)))
        return name
    lineno, line, value = _need(body, fields, "tsa_map")
    entry["tsa"] = _index_map(body, lineno, line, value, tsa)
    lineno, line, value = _need(body, fields, "tc bandwidth")
    shares = []
    for tok in value.split():
        if not tok.endswith("%"):
            body.fail(lineno, line, "%r is not a percentage" % tok)
        shares.append(_int(body, lineno, line, tok[:-1], 0, 255, "bandwidth"))
    if len(shares) != 8:
        body.fail(lineno, line, "%d shares, expected 8" % len(shares))
    entry["tcbw"] = shares
    return entry


_APP_LINE = _lazy_re.compile(r"App#\s*([0-9]+)\s+Prio\s+(\S+)\s+Sel\s+(\S+)\s+P-ID\s+([^:]+):\s*(\S*)\Z")
_APP_DSCP = _lazy_re.compile(r"Prio:\s*(\S+)\s+dscp:\s*(.*)\Z")
_APP_OLD_HEAD = _lazy_re.compile(r"App#\s*([0-9]+):\Z", re.I)
_APP_OLD_FIELD = _lazy_re.compile(r"(Priority|Sel|[^:]+?):\s*(\S*)\Z", re.I)


def _app_entry(body, lineno, line, prio, sel, label, proto):
    """One APP entry from its printed parts, label checked against the selector."""
    prio = _int(body, lineno, line, prio, 0, 7, "priority")
    sel = _int(body, lineno, line, sel, 0, 7, "selector")
    key = label.strip().lower()
    if key not in APP_LABELS:
        body.fail(lineno, line, "unknown protocol label %r" % label.strip())
    expected = sel if sel in (1, 2, 3, 4) else None
    if APP_LABELS[key] != expected:
        body.fail(lineno, line, "label %r does not belong to selector %d" % (label.strip(), sel))
    if sel == 1:
        proto = _int(body, lineno, line, proto, 0, 0xFFFF, "ethertype", base=16)
    else:
        proto = _int(body, lineno, line, proto, 0, 63 if sel == 5 else 0xFFFF,
                     "DSCP" if sel == 5 else "protocol")
    return {"priority": prio, "selector": sel, "protocol": proto}


def _parse_app_body(body):
    apps = []
    old = None                    # the multi-line App#N: entry being read: {lineno, line, fields}

    def close_old():
        if old is None:
            return
        missing = [k for k in ("priority", "sel", "label") if k not in old["fields"]]
        if missing:
            body.fail(old["lineno"], old["line"], "App entry without its %s line" % " / ".join(missing))
        f = old["fields"]
        lineno, line, proto, label = f["label"]
        apps.append(_app_entry(body, lineno, line, str(f["priority"]), str(f["sel"]), label, proto))

    for lineno, line in body.lines:
        match = _APP_LINE.match(line)
        if match:
            close_old()
            old = None
            apps.append(_app_entry(body, lineno, line, match.group(2), match.group(3), match.group(4),
                                   match.group(5)))
            continue
        match = _APP_DSCP.match(line)
        if match:
            close_old()
            old = None
            prio = _int(body, lineno, line, match.group(1), 0, 7, "priority")
            tokens = [tok for tok in re.split(r"[\s,]+", match.group(2)) if tok]
            if not tokens:
                body.fail(lineno, line, "no DSCP values")
            for tok in tokens:
                apps.append({"priority": prio, "selector": 5, "protocol": _int(body, lineno, line, tok, 0, 63, "DSCP")})
            continue
        match = _APP_OLD_HEAD.match(line)
        if match:
            close_old()
            old = {"lineno": lineno, "line": line, "fields": {}}
            continue
        match = _APP_OLD_FIELD.match(line)
        if match and old is not None:
            name = match.group(1).strip().lower()
            key = name if name in ("priority", "sel") else "label"
            if key in old["fields"]:
                body.fail(lineno, line, "second %s line in one App entry" % name)
            if key == "label" and ("priority" not in old["fields"] or "sel" not in old["fields"]):
                body.fail(lineno, line, "protocol line before the Priority and Sel lines")
            if key == "label":
                old["fields"][key] = (lineno, line, match.group(2), match.group(1))
            else:
                old["fields"][key] = _int(body, lineno, line, match.group(2), 0, 7,
                                          "priority" if key == "priority" else "selector")
            continue
        if match:
            body.fail(lineno, line, "APP field outside an 'App#N:' entry")
        body.fail(lineno, line, "not an APP entry line")
    close_old()
    return sorted(apps, key=lambda a: (a["selector"], a["protocol"], a["priority"]))


def _parse_app(lines, tlv="IEEE 8021QAZ APP TLV"):
    """APP TLV value lines -> sorted entries (also takes (lineno, line) pairs)."""
    numbered = [item if isinstance(item, tuple) else (index + 1, _clean(item))
                for index, item in enumerate(lines)]
    numbered = [(n, line) for n, line in numbered if line]
    return _parse_app_body(_Body(tlv, 0, numbered, ""))


_CEE_SUBS = {
    "control tlv:": "control", "priority groups tlv:": "pg", "priority flow control tlv:": "pfc",
    "application tlv:": "app", "fcoe logical link tlv:": "llink", "lan logical link tlv:": "llink",
}
_CEE_FLAGS = _lazy_re.compile(r"(Not )?Enabled, (Not )?Willing, (No )?Error\Z")
_CEE_APP = _lazy_re.compile(r"(Ethertype|TCP/UDP Port|Reserved):\s*(\S+?),\s*Priority Map:\s*(\S+)\Z")
_CEE_APP_OUI = _lazy_re.compile(r"OUI:\s*(\S+?),\s*Selector:\s*(\S+?),\s*Protocol ID:\s*(\S+?),\s*Priority Map:\s*(\S+)\Z")
_CIN_APP = _lazy_re.compile(r"(?:FCoE|Subtype:\s*(\S+))\s+Priority Map:\s*(\S+)\Z")


def _parse_dcbx(body, flavour):
    """CEE (``print_dcbx_v2``) or CIN (``print_dcbx_v1``) DCBX TLV -> {pfc, app, ets_cfg}."""
    subs = {}
    sub = None
    for lineno, line in body.lines:
        key = line.lower()
        if key in _CEE_SUBS:
            sub = _CEE_SUBS[key]
            if sub in subs and sub != "llink":
                body.fail(lineno, line, "sub-TLV printed twice")
            subs[sub] = {"lineno": lineno, "line": line}
            continue
        if line == "Unhandled DCBX BCN TLV" or re.match(r"Unknown DCBX sub-TLV( [0-9]+)?:", line):
            sub = None
            continue
        if sub is None:
            body.fail(lineno, line, "not inside a known DCBX sub-TLV")
        record = subs[sub]
        match = _CEE_FLAGS.match(line)
        if match:
            if "flags" in record:
                body.fail(lineno, line, "second flags line in one sub-TLV")
            record["flags"] = {"feature_enabled": not match.group(1), "willing": not match.group(2),
                               "error": not match.group(3)}
            continue
        if sub == "control":
            if not re.match(r"SeqNo:\s*-?[0-9]+,\s*AckNo:\s*-?[0-9]+\Z", line):
                body.fail(lineno, line, "expected 'SeqNo: N, AckNo: N'")
        elif sub == "llink":
            if line not in ("Link is up", "Link is down"):
                body.fail(lineno, line, "expected 'Link is up|down'")
        elif sub == "pfc":
            _dcbx_pfc_line(body, lineno, line, record)
        elif sub == "app":
            record.setdefault("apps", []).extend(_dcbx_app_line(body, lineno, line, flavour))
        elif sub == "pg" and flavour == "cee":
            _cee_pg_line(body, lineno, line, record)
        # CIN priority groups (BWG lines, wrapped) are not mapped
    result = {"pfc": None, "app": None, "ets_cfg": None}
    for name, record in subs.items():
        if name in ("control", "llink"):
            continue
        if "flags" not in record:
            body.fail(record["lineno"], record["line"], "no 'Enabled, Willing, Error' line")
        flags = record["flags"]
        if name == "pfc":
            if "enabled" not in record:
                body.fail(record["lineno"], record["line"], "no 'PFC enabled priorities:' line")
            result["pfc"] = {"enabled": record["enabled"], "willing": flags["willing"],
                             "feature_enabled": flags["feature_enabled"], "error": flags["error"]}
        elif name == "app":
            result["app"] = sorted(record.get("apps", []), key=lambda a: (a["selector"], a["protocol"], a["priority"]))
        elif name == "pg" and flavour == "cee":
            for need in ("up2tc", "tcbw"):
                if need not in record:
                    body.fail(record["lineno"], record["line"], "no PGID %s line"
                              % ("Priorities" if need == "up2tc" else "Percentages"))
            result["ets_cfg"] = {"willing": flags["willing"], "up2tc": record["up2tc"],
                                 "tcbw": record["tcbw"], "tsa": None}
    return result


def _dcbx_pfc_line(body, lineno, line, record):
    match = re.match(r"PFC enabled priorit(?:ies|es):\s*(.*)\Z", line)
    if match:
        if "enabled" in record:
            body.fail(lineno, line, "second PFC enabled line")
        record["enabled"] = _priority_list(body, lineno, line, match.group(1).strip(), r"\s*,\s*")
        return
    match = re.match(r"Number of TC's supported:\s*(\S*)\Z", line)
    if match:
        _int(body, lineno, line, match.group(1), 0, 255, "number of TCs")
        return
    body.fail(lineno, line, "not a DCBX PFC line")


def _bits(body, lineno, line, value):
    mask = _int(body, lineno, line, value, 0, 0xFF, "priority map", base=16)
    return [p for p in range(8) if mask >> p & 1]


def _dcbx_app_line(body, lineno, line, flavour):
    if flavour == "cin":
        match = _CIN_APP.match(line)
        if not match:
            body.fail(lineno, line, "not a CIN application line")
        if match.group(1) is not None:
            body.fail(lineno, line, "CIN application subtype %s has no protocol id to map" % match.group(1))
        return [{"priority": p, "selector": 1, "protocol": FCOE_ETHERTYPE}
                for p in _bits(body, lineno, line, match.group(2))]
    match = _CEE_APP.match(line)
    extra = {}
    if match:
        kind, proto, prio_map = match.groups()
        if kind == "Reserved":
            body.fail(lineno, line, "reserved CEE selector: no IEEE selector to map it to")
        cee_sel = 0 if kind == "Ethertype" else 1
    else:
        match = _CEE_APP_OUI.match(line)
        if not match:
            body.fail(lineno, line, "not a CEE application line")
        oui, cee_sel, proto, prio_map = match.groups()
        _int(body, lineno, line, oui, 0, 0xFFFFFF, "OUI", base=16)
        cee_sel = _int(body, lineno, line, cee_sel, 0, 3, "selector")
        if cee_sel not in CEE_SELECTORS:
            body.fail(lineno, line, "reserved CEE selector %d: no IEEE selector to map it to" % cee_sel)
        extra["oui"] = oui.lower()
    proto = _int(body, lineno, line, proto, 0, 0xFFFF, "protocol id", base=16)
    out = []
    for prio in _bits(body, lineno, line, prio_map):
        entry = {"priority": prio, "selector": CEE_SELECTORS[cee_sel], "protocol": proto}
        entry.update(extra)
        out.append(entry)
    return out


def _cee_pg_line(body, lineno, line, record):
    match = re.match(r"PGID Priorities:\s*(.*)\Z", line)
    if match:
        up2tc = [None] * 8
        groups = match.group(1).split()
        if not groups:
            body.fail(lineno, line, "no PGID groups")
        for group in groups:
            part = re.match(r"([0-9]+):\[([0-9,]*)\]\Z", group)
            if not part:
                body.fail(lineno, line, "%r is not 'PGID:[priorities]'" % group)
            pgid = _int(body, lineno, line, part.group(1), 0, 15, "PGID")
            for tok in part.group(2).split(","):
                prio = _int(body, lineno, line, tok, 0, 7, "priority")
                if up2tc[prio] is not None:
                    body.fail(lineno, line, "priority %d is in two groups" % prio)
                up2tc[prio] = pgid
        if None in up2tc:
            body.fail(lineno, line, "priority %d is in no group" % up2tc.index(None))
        record["up2tc"] = up2tc
        return
    match = re.match(r"PGID Percentages:\s*(.*)\Z", line)
    if match:
        def pct(value):
            if not value.endswith("%"):
                body.fail(lineno, line, "%r is not a percentage" % value)
            return _int(body, lineno, line, value[:-1], 0, 255, "percentage")
        record["tcbw"] = _index_map(body, lineno, line, match.group(1), pct)
        return
    match = re.match(r"Number of TC's supported:\s*(\S*)\Z", line)
    if match:
        _int(body, lineno, line, match.group(1), 0, 255, "number of TCs")
        return
    body.fail(lineno, line, "not a CEE priority group line")


# a garbled DCB TLV name would hide its TLV: "IEEE 8021QAZ APP TL", "CEE DCBX TV" (a switch's
# free-text System Description "CEE DCBX switch" must not match)
_DCB_NAME_LIKE = _lazy_re.compile(r"IEEE 8021QAZ |((PRE-)?CEE|CIN) DCBX T")


def parse_tlvs(text):
    """TLV dump (``lldptool -t [-n] -i IF``) -> {pfc, ets_cfg, ets_rec, app, dcbx}
    (a TLV is None when absent); raises LldpParseError for a TLV it cannot read."""
    text = text or ""
    blocks, current, seen_name = [], None, False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _clean(raw)
        if not line:
            continue
        if _is_tlv_name(line):
            seen_name = True
            key = TLV_NAMES.get(line) or DCBX_TLV_NAMES.get(line)
            current = _Body(line, lineno, [], text) if key else None
            if current:
                if any(b.name == line or (key in ("cee", "cin") and DCBX_TLV_NAMES.get(b.name) == key)
                       for b in blocks):
                    current.fail_header("TLV printed twice")
                blocks.append(current)
            continue
        if not seen_name:
            raise LldpParseError("TLV dump", lineno, line, "text before the first TLV name line "
                                 "(not 'lldptool -t' output?)", text)
        if _DCB_NAME_LIKE.match(line):
            raise LldpParseError("TLV dump", lineno, line, "looks like a DCB TLV name but is none", text)
        if current:
            current.lines.append((lineno, line))
    result = dict((key, None) for key in TLV_IDS)
    result["dcbx"] = None
    dcbx = {}
    for body in blocks:
        key = TLV_NAMES.get(body.name)
        if key == "app":
            result["app"] = _parse_app_body(body)
        elif key == "pfc":
            result["pfc"] = _parse_pfc(body)
        elif key in ("ets_cfg", "ets_rec"):
            result[key] = _parse_ets(body, key == "ets_cfg")
        else:
            flavour = DCBX_TLV_NAMES[body.name]
            dcbx[flavour] = _parse_dcbx(body, flavour)
    if any(result[key] is not None for key in TLV_IDS):
        result["dcbx"] = "ieee"
    else:
        for flavour in ("cee", "cin"):
            if flavour in dcbx:
                result.update(dcbx[flavour])
                result["dcbx"] = flavour
                break
    return result


_APP_CONFIG = _lazy_re.compile(r"([0-9]+):\(([^,()]*),([^,()]*),([^,()]*)\)\s+(local|peer)\s+(?:hw\s+)?\(([a-z ]+)\)\Z")


def parse_app_config(text):
    """``-t -i IF -V APP -c app`` -> {"local": [...], "peer": [...]}: the APP entries lldpad
    holds whether or not the APP TLV is transmitted (``-t`` prints no APP TLV with
    ``enableTx=no``). lldp_8021qaz_cmds.c ``get_arg_app()``: ``app=(prio,sel,proto)``, then
    one line per entry; since 0313734 (2013-07, v1.0.1+) ``i:(p,s,proto) local hw (set)``
    from lldpad.conf (`` hw (unknown)`` with two spaces when not in the NIC) and the peer's
    entries as ``32:(...) peer hw (...)``; before, ``i:(p,s,0x....) local (set)`` (no ``hw``
    for selector 1). None when there is no ``app=`` line; a bad entry is an LldpParseError."""
    lines = (text or "").splitlines()
    start = None
    for index, raw in enumerate(lines):
        if _clean(raw).startswith("app="):
            start = index
            break
    if start is None:
        return None
    body = _Body("APP -c app", start + 1, [], text)
    head = _clean(lines[start])
    if head not in ("app=", "app=(prio,sel,proto)"):
        body.fail(start + 1, head, "expected 'app=(prio,sel,proto)'")
    out = {"local": [], "peer": []}
    for lineno, raw in enumerate(lines[start + 1:], start + 2):
        line = _clean(raw)
        if not line:
            continue
        if re.match(r"[A-Za-z_]+=", line):          # the next argument of a multi-argument -c
            break
        match = _APP_CONFIG.match(line)
        if not match:
            body.fail(lineno, line, "not an 'i:(prio,sel,proto) local|peer hw (state)' entry")
        prio = _int(body, lineno, line, match.group(2), 0, 7, "priority")
        sel = _int(body, lineno, line, match.group(3), 0, 7, "selector")
        proto = match.group(4).strip()
        proto = _int(body, lineno, line, proto, 0, 63 if sel == 5 else 0xFFFF, "protocol",
                     base=16 if proto.lower().startswith("0x") else 10)
        if match.group(6) not in ("set", "pending set", "pending delete", "unknown"):
            body.fail(lineno, line, "unknown hw state %r" % match.group(6))
        out[match.group(5)].append({"priority": prio, "selector": sel, "protocol": proto})
    for side in out:
        out[side].sort(key=lambda a: (a["selector"], a["protocol"], a["priority"]))
    return out


def parse_arg(text, arg):
    """``ARG=value`` (get-lldp, ``-c``) -> value text; None when the line is missing."""
    for line in (text or "").splitlines():
        line = _clean(line)
        if line.startswith(arg + "="):
            return line[len(arg) + 1:].strip()
    return None


def pfc_from_bitmask(text, tlv_enabled=None):
    """``-c enabled`` decimal bitmask -> priorities. lldptool cuts the value to 2
    characters, so a 2-character value may be the start of a 3-digit mask: then the TLV
    view (when transmitted) decides, else None (unknown). A value that is no bitmask
    (``x``, ``300``) is an LldpParseError."""
    if text is None or text == "":
        return tlv_enabled
    text = _clean(text)
    if not re.match(r"[0-9]{1,3}\Z", text) or int(text) > 255:
        raise LldpParseError("PFC -c enabled", 1, "enabled=%s" % text, "not a decimal bitmask 0-255")
    mask = int(text)
    candidates = [mask] + ([mask * 10 + d for d in range(10) if mask * 10 + d <= 255] if len(text) == 2 else [])
    if tlv_enabled is not None:
        tlv_mask = sum(1 << p for p in tlv_enabled)
        if tlv_mask in candidates:
            return tlv_enabled
    if len(candidates) > 1:
        return None
    return [p for p in range(8) if mask >> p & 1]


_IDENTITY_TLVS = {"Chassis ID TLV": "chassis_id", "Port ID TLV": "port_id", "System Name TLV": "system_name"}
# lldp_mand_clif.c print_chassis_id() / print_port_id(): the subtype label before the value
_SUBTYPED = _lazy_re.compile(r"(MAC|IPv4|IPv6|Bad IPv4|Bad IPv6|Network Address Type [0-9]+|Chassis Component|IfAlias|"
                             r"Interface Alias|Port Component|Ifname|Local|Agent Circuit ID|Bad Chassis ID|Bad Port ID):\s*(\S.*)\Z")


def parse_identity(text):
    """Who the neighbour is, from a ``lldptool -t -n`` dump: ``chassis_id``, ``port_id`` (the value
    after its subtype label, ``Ifname: swp1`` -> ``swp1``, ``IPv4: 10.0.0.150`` -> ``10.0.0.150``; the label
    in ``port_id_subtype``) and ``system_name``; None for a TLV the dump lacks (openlldp lldp_basman_clif.c /
    lldp_mand_clif.c, whose labels are MAC, IPv4, IPv6, Chassis/Port Component, IfAlias / Interface Alias,
    Ifname, Local, Agent Circuit ID, Network Address Type N and the Bad ... forms)."""
    out = {"chassis_id": None, "port_id": None, "port_id_subtype": None, "system_name": None}
    current = None
    for raw in (text or "").splitlines():
        line = _clean(raw)
        if not line:
            continue
        if _is_tlv_name(line) or line in _IDENTITY_TLVS:
            current = _IDENTITY_TLVS.get(line)
            continue
        if current is None or out[current] is not None:
            continue
        value = line.strip()
        match = _SUBTYPED.match(value) if current != "system_name" else None
        if match:
            value = match.group(2).strip()
            if current == "port_id":
                out["port_id_subtype"] = match.group(1)
        out[current] = value
    return out


# --------------------------------------------------------------------------- reader
def _call(run, argv, allow_empty=True):
    rc, out, err = run(argv)
    if rc != 0:
        words = _clean(err) or _clean(out)
        words = re.sub(r"\s+\S$", "", words)    # the stray byte after the message
        raise ToolError("%s failed (rc=%s): %s" % (" ".join(argv), rc, words or "(no output)"),
                        argv=argv, rc=rc, stdout=out, stderr=err)
    return out or ""


def read_state(run, tool, interface, tlvs, neighbor=False):
    """The only I/O seam. ``run(argv)`` runs one command; ``tlvs`` the TLV keys to read."""
    have = {"admin_status": parse_arg(_call(run, [tool, "get-lldp", "-i", interface, "adminStatus"]), "adminStatus")}
    dump = parse_tlvs(_call(run, [tool, "-t", "-i", interface]))
    for key in tlvs:
        tlv = TLV_IDS[key]
        entry = dict(dump[key] or {}) if key != "app" else {}
        entry["enable_tx"] = _yes(parse_arg(_call(run, [tool, "-t", "-i", interface, "-V", tlv, "-c", "enableTx"]),
                                            "enableTx"))
        if key in ("pfc", "ets_cfg"):
            willing = parse_arg(_call(run, [tool, "-t", "-i", interface, "-V", tlv, "-c", "willing"]), "willing")
            entry["willing"] = _yes(willing) if willing else entry.get("willing")
        if key == "pfc":
            mask = parse_arg(_call(run, [tool, "-t", "-i", interface, "-V", "PFC", "-c", "enabled"]), "enabled")
            entry["enabled"] = pfc_from_bitmask(mask, entry.get("enabled"))
        if key == "app":
            apps = dump["app"]
            if apps is None:
                # No APP TLV is printed while enableTx=no, though lldpad holds the entries:
                # ask for them, or merged would re-add them on every run.
                held = parse_app_config(_call(run, [tool, "-t", "-i", interface, "-V", "APP", "-c", "app"]))
                apps = sorted(((held or {}).get("local") or []),
                              key=lambda a: (a["selector"], a["protocol"], a["priority"]))
            have["app"] = apps
            have["app_enable_tx"] = entry["enable_tx"]
            continue
        for field in ("up2tc", "tsa", "tcbw"):
            if key != "pfc":
                entry.setdefault(field, None)
        have[key] = entry
    if neighbor:
        dump = _call(run, [tool, "-t", "-n", "-i", interface])
        have["neighbor"] = parse_tlvs(dump)
        have["neighbor"].update(parse_identity(dump))
    return have
