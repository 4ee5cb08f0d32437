# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read, parse, compare and apply NIC QoS with ``mlnx_qos`` (Mellanox/mlnx-tools).

Layout: ``read_state`` is the only I/O seam (one ``mlnx_qos -i IF -a`` call);
``parse_report`` turns that text (or a pasted ``running_config``) into a state dict;
``plan_commands`` is a pure want-vs-have compare that yields argv lists; ``run_command``
runs one of them. ``MlnxQosResource`` plugs these into the resource engine (``_resource``),
which applies, reads back and reports exactly what was and was not applied.

The parser follows the printing code of github.com/Mellanox/mlnx-tools, ``pretty_print()``
and ``print_dscp2prio_sysfs()`` of ``ofed_scripts/utils/mlnx_qos`` (80fb22e, 2017-06) and
``python/mlnx_qos`` (to 8fbfd9c, 2026), with ``DcbAppTable.printAppSelector()`` /
``printDefaultPriority()`` of ``dcbnetlink.py``; samples: tests/unit/fixtures/samples/mlnx_qos.txt.
Every layout those releases print is read:

* 80fb22e (MLNX_OFED 4.0/4.1, python 2): only ``PFC configuration:`` (then a blank line) and
  the TCs; 5c00758 (2017-06) adds ``Priority trust mode: pcp|dscp|both|none`` first;
* d1b0709 (2017-09, OFED 4.2): ``DCBX mode: OS controlled|Firmware controlled``,
  ``Priority trust state: X``, ``dscp2prio mapping:`` + ``\tprio:N dscp:07,06,..,`` rows
  (wrapped every 8 values onto a repeated ``prio:N dscp:`` row), ``Cable len: N``;
* 1259c00 (2019-02, OFED 4.6): ``Receive buffer size (bytes): b0,..,b7,`` and a ``buffer``
  row under ``enabled``; a60252a (2021-05, OFED 5.x) adds ``default priority:`` (+ ``\tprio:N``
  rows) and ``total_size=N`` at the end of the buffer line, renamed ``max_buffer_size=N`` by
  b8c08c5 (2023-05); 374d9b5 (2024-11) drops ``default priority:``; before d477a17 (2022-05)
  python 3 prints the TCs in first-seen order (``tc: 1`` before ``tc: 0``);
* every release: ``tc: N ratelimit: unlimited|X.Y Gbps, tsa: ets, bw: N%|strict|vendor|unknown``
  and ``\t priority:  N`` rows; without rate-limit support the ``tc: N ratelimit: ..., tsa: ``
  prefix is lost and the header is the bare TSA; the ``... not supported on your system`` lines
  and the lldpad ``****** WARNING ...`` line (+ blank line) come before the report.

Refused (MlnxQosError, a ValueError): a line none of these releases prints, named as
``SOURCE line N '...': what is wrong`` (so a release with a new line fails loudly instead of
losing a setting), a malformed number or TSA inside a known line, a Python traceback, and
text holding no report (error messages, ``--help``, an empty output). Tabs may have become
spaces and whitespace runs may be collapsed (pastes, vendor doc pages); prompt lines of a
pasted session (``$ mlnx_qos ...``, ``root@host:~# mlnx_qos ...``) are skipped.

State dict (``have``), one interface, every key None when unknown / not printed::

    dcbx        'os' | 'fw'
    trust       'pcp' | 'dscp' | 'none' (no trust support) | 'both' (5c00758 only)
    pfc         sorted list of PFC-enabled priorities
    dscp2prio   {dscp: priority} as printed (only in dscp trust)
    prio_tc     8 TC numbers, one per priority
    tsa         8 of 'ets' | 'strict' | 'vendor' | 'unknown' (None for a TC not printed)
    tcbw        8 percentages (0 for non-ETS TCs, as mlnx_qos prints no share for them)
    ratelimit   8 Gbps floats, 0.0 = unlimited; None when rate limiting is unsupported
    buffer_size 8 receive buffer sizes in bytes; None when buffers are unsupported
    prio2buffer 8 buffer numbers, one per priority
    cable_len   int
    info        read-only extras: max_buffer_size, default_priority, warnings,
                unsupported (the tool's "... not supported" lines), unparsed (always [] now:
                a line the parser does not know is an error)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import (
    ToolError, check_name, find_tool, run_tool, sysfs_path,
)
from ansible_collections.rdma.fabric.plugins.module_utils.common._dscp import default_priority
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import Resource
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _qos_validate as V
from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re

TOOL = "mlnx_qos"
CONFIG_KEYS = ("dcbx", "trust", "pfc", "dscp2prio", "prio_tc", "tsa", "tcbw", "ratelimit",
               "buffer_size", "prio2buffer", "cable_len")
LIST8_KEYS = ("prio_tc", "tsa", "tcbw", "ratelimit", "buffer_size", "prio2buffer")
TSA_CHOICES = ("ets", "strict", "vendor")


class MlnxQosError(ValueError):
    """mlnx_qos output that is not a QoS report (error text, traceback, garbage)."""

    def __init__(self, msg, text=""):
        super(MlnxQosError, self).__init__(msg)
        self.msg = msg
        self.text = text


# --------------------------------------------------------------------------- parser
# Lines are matched after strip(): tabs may have become spaces (pastes), the PFC rows end
# in three spaces, and vendor doc pages collapse every whitespace run.
_RE = {
    # a pasted session's prompt: "$ mlnx_qos", "root@host:~# mlnx_qos", "[u@h dir]$ sudo mlnx_qos"
    "prompt": _lazy_re.compile(r"^(?:\[[^\]]*\]|[^\s$#]*)[$#]\s*(?:sudo\s+)?(\S*/)?mlnx_qos\b"),
    "warning": _lazy_re.compile(r"^\*+\s*WARNING:\s*(.*?)\s*\**\Z"),
    "unsupported": _lazy_re.compile(r"^(.*\bnot supported on your system)!?\Z"),
    "dcbx": _lazy_re.compile(r"^DCBX mode:\s*(OS|Firmware) controlled\Z"),
    # "Priority trust mode:" is 5c00758 (2017-06) only
    "trust": _lazy_re.compile(r"^Priority trust (?:state|mode):\s*(\S+)\Z"),
    "dscp_head": _lazy_re.compile(r"^dscp2prio mapping:\Z"),
    "dscp_row": _lazy_re.compile(r"^prio:\s*(\d+)\s+dscp:\s*([\d,\s]*)\Z"),
    "deflt_head": _lazy_re.compile(r"^default priority:\Z"),
    "deflt_row": _lazy_re.compile(r"^prio:\s*(\d+)\Z"),
    "buffer": _lazy_re.compile(r"^Receive buffer size \(bytes\):\s*(.*)\Z"),
    "cable": _lazy_re.compile(r"^Cable len:\s*(\d+)\Z"),
    "pfc_head": _lazy_re.compile(r"^PFC configuration:\Z"),
    "pfc_prio": _lazy_re.compile(r"^priority((?:\s+\d){8})\Z"),
    "pfc_enabled": _lazy_re.compile(r"^enabled((?:\s+[01]){8})\Z"),
    "pfc_buffer": _lazy_re.compile(r"^buffer((?:\s+\d){8})\Z"),
    "tc_head": _lazy_re.compile(r"^tc:\s*(\d+)\s+ratelimit:\s*(unlimited|([0-9.]+)\s*Gbps)\s*,\s*tsa:\s*(.*)\Z"),
    # Without rate-limit support the "tc: N ratelimit: ..., tsa: " prefix is not printed.
    "tsa": _lazy_re.compile(r"^(?:(ets),\s*bw:\s*(\d+)\s*%|(strict|vendor|unknown))\Z"),
    "tc_member": _lazy_re.compile(r"^priority:\s*(\d)\Z"),
    "traceback": _lazy_re.compile(r"^Traceback \(most recent call last\):"),
}


def empty_state():
    state = dict((key, None) for key in CONFIG_KEYS)
    state["info"] = {"max_buffer_size": None, "default_priority": [], "warnings": [],
                     "unsupported": [], "unparsed": []}
    return state


def _ints(text):
    return [int(tok) for tok in text.split()]


def _check_not_error(text):
    """Raise MlnxQosError for a traceback or for text that holds no QoS report."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in lines:
        if _RE["traceback"].match(line):
            # The last line of a traceback names the exception; that is what to show.
            raise MlnxQosError("mlnx_qos crashed with a Python traceback: %s" % lines[-1], text)
    if not any(_RE["pfc_head"].match(ln) or _RE["trust"].match(ln) for ln in lines):
        words = [ln for ln in lines if not _RE["warning"].match(ln) and not _RE["prompt"].match(ln)]
        raise MlnxQosError("mlnx_qos printed no QoS report: %s" % ("; ".join(words) or "(no output)"), text)


def _known_elsewhere(line):
    keys = ("dscp_row", "deflt_row", "pfc_prio", "pfc_enabled", "pfc_buffer", "tsa", "tc_member")
    return any(_RE[key].match(line) for key in keys)


def _where(section):
    return {None: "outside its section", "dscp": "inside dscp2prio mapping", "default": "inside default priority",
            "pfc": "inside PFC configuration", "tc": "inside a TC"}.get(section, section)


def parse_report(text, source="mlnx_qos output"):
    """Parse the report ``mlnx_qos -i IF [-a]`` prints, any release (see samples/mlnx_qos.txt).

    Handles every layout of the module docstring: lldpad warning + blank line first,
    ``Priority trust mode:`` (2017), ``default priority:`` (2021-05 .. 2024-11), the buffer
    line ending in ``max_buffer_size=N`` / ``total_size=N`` / a bare comma, dscp lists
    wrapped every 8 values on repeated ``prio:N dscp:`` lines, TCs in any order, TC headers
    without the ``tc: N ratelimit: ..., tsa:`` prefix, trailing spaces and tabs turned into
    spaces. Raises MlnxQosError on error text or a traceback, on a line mlnx_qos cannot
    print and on a malformed number or TSA inside a known line, as
    ``SOURCE line N '...': what is wrong``.
    """
    text = text or ""
    _check_not_error(text)
    lines = text.splitlines()
    number = [0]

    def bad(line, what):
        return MlnxQosError("%s line %d '%s': %s" % (source, number[0], line, what), text)

    def num(line, tok, kind=int, what="an integer"):
        try:
            value = kind(tok)
        except (TypeError, ValueError):
            raise bad(line, "%r is not %s" % (tok, what))
        if kind is float and (math.isnan(value) or math.isinf(value)):
            raise bad(line, "%r is not a finite number" % (tok,))
        return value
    state = empty_state()
    info = state["info"]
    section = None
    dscp2prio = {}
    tcs = []            # [{"tc": int|None, "tsa":, "bw":, "rate":, "prios": []}]
    bare_headers = False

    for number[0], raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or _RE["prompt"].match(line):
            continue
        match = _RE["warning"].match(line)
        if match:
            info["warnings"].append(match.group(1))
            continue
        match = _RE["unsupported"].match(line)
        if match:
            info["unsupported"].append(match.group(1))
            continue
        match = _RE["dcbx"].match(line)
        if match:
            state["dcbx"] = "os" if match.group(1) == "OS" else "fw"
            continue
        match = _RE["trust"].match(line)
        if match:
            state["trust"] = match.group(1)
            continue
        if _RE["dscp_head"].match(line):
            section = "dscp"
            continue
        if _RE["deflt_head"].match(line):
            section = "default"
            continue
        match = _RE["dscp_row"].match(line)
        if match and section == "dscp":
            prio = int(match.group(1))
            for tok in match.group(2).split(","):
                if tok.strip():
                    dscp2prio[num(line, tok.strip())] = prio
            continue
        match = _RE["deflt_row"].match(line)
        if match and section == "default":
            info["default_priority"].append(int(match.group(1)))
            continue
        match = _RE["buffer"].match(line)
        if match:
            section = None
            sizes = []
            for tok in match.group(1).split(","):
                tok = tok.strip()
                if not tok:
                    continue      # before a60252a (2021-05), or with no total size, the line ends in a bare comma
                if "=" in tok:    # max_buffer_size=N (b8c08c5, 2023-05+) or total_size=N (a60252a 2021-05 .. 2023-05)
                    info["max_buffer_size"] = num(line, tok.split("=", 1)[1].strip(), what="a buffer size")
                else:
                    sizes.append(num(line, tok, what="a buffer size in bytes"))
            state["buffer_size"] = sizes if len(sizes) == 8 else None
            continue
        match = _RE["cable"].match(line)
        if match:
            section = None
            state["cable_len"] = int(match.group(1))
            continue
        if _RE["pfc_head"].match(line):
            section = "pfc"
            continue
        if section == "pfc" and _RE["pfc_prio"].match(line):
            continue
        if section == "pfc" and line.split(None, 1)[0] in ("enabled", "buffer") \
                and not (_RE["pfc_enabled"].match(line) or _RE["pfc_buffer"].match(line)):
            raise bad(line, "expected '%s' and 8 values (%s)" % (
                line.split(None, 1)[0], "0 or 1" if line.startswith("enabled") else "buffer numbers"))
        match = _RE["pfc_enabled"].match(line)
        if match and section == "pfc":
            bits = _ints(match.group(1))
            state["pfc"] = [prio for prio in range(8) if bits[prio]]
            continue
        match = _RE["pfc_buffer"].match(line)
        if match and section == "pfc":
            state["prio2buffer"] = _ints(match.group(1))
            continue
        match = _RE["tc_head"].match(line)
        tsa_text = None
        if match:
            rate = 0.0 if match.group(2) == "unlimited" else num(line, match.group(3), float, "a rate in Gbps")
            tc = {"tc": int(match.group(1)), "prios": [], "rate": rate}
            tsa_text = match.group(4).strip()
        elif section in ("pfc", "tc") and _RE["tsa"].match(line):
            tc = {"tc": None, "prios": [], "rate": None}
            tsa_text = line
            bare_headers = True
        if tsa_text is not None:
            section = "tc"
            tsa_match = _RE["tsa"].match(tsa_text)
            if not tsa_match:
                # pretty_print() prints 'ets, bw: N%', 'strict', 'vendor' or 'unknown' (CBS too)
                raise bad(line, "TSA %r is not 'ets, bw: N%%', strict, vendor or unknown" % tsa_text)
            if tsa_match.group(1):
                tc["tsa"] = "ets"
                tc["bw"] = int(tsa_match.group(2))
            else:
                tc["tsa"] = tsa_match.group(3)
                tc["bw"] = 0
            tcs.append(tc)
            continue
        match = _RE["tc_member"].match(line)
        if match and section == "tc" and tcs:
            tcs[-1]["prios"].append(int(match.group(1)))
            continue
        raise bad(line, "not a line mlnx_qos prints%s" % (
            " here (%s)" % _where(section) if _known_elsewhere(line) else ""))

    if state["trust"] == "dscp":
        state["dscp2prio"] = dscp2prio
    if state["buffer_size"] is None:
        state["prio2buffer"] = None     # the buffer row is only printed with buffer support

    if bare_headers:
        # No TC numbers printed. With -a (our reader) or a sorted release and all 8 TCs
        # present, the n-th header is TC n; otherwise which TC is which is unknown.
        if len(tcs) == 8:
            for number, tc in enumerate(tcs):
                tc["tc"] = number
        else:
            tcs = []
    if tcs:
        prio_tc = [None] * 8
        tsa = [None] * 8
        tcbw = [None] * 8
        rate = [None] * 8
        for tc in tcs:
            if tc["tc"] > 7:
                continue
            tsa[tc["tc"]] = tc["tsa"]
            tcbw[tc["tc"]] = tc["bw"]
            rate[tc["tc"]] = tc["rate"]
            for prio in tc["prios"]:
                if prio < 8:
                    prio_tc[prio] = tc["tc"]
        state["prio_tc"] = prio_tc if None not in prio_tc else None
        state["tsa"] = tsa
        # A TC not printed (no -a, no priority on it) has an unknown TSA: give it bw None
        # so a compare never mistakes it for 0 %.
        state["tcbw"] = [0 if (tsa[i] is not None and tsa[i] != "ets") else tcbw[i] for i in range(8)]
        state["ratelimit"] = None if bare_headers else rate
    return state


def to_config(state):
    """A state as the module returns it (before/after/gathered/parsed): the config keys,
    ``dscp2prio`` as a list of {dscp, priority} sorted by DSCP."""
    if state is None:
        return None
    out = {}
    for key in CONFIG_KEYS:
        value = state.get(key)
        if key == "dscp2prio" and value is not None:
            value = [{"dscp": d, "priority": value[d]} for d in sorted(value)]
        elif isinstance(value, list):
            value = list(value)
        out[key] = value
    return out


# --------------------------------------------------------------------------- reader
def interface_exists(interface):
    """False only when sysfs lists network interfaces and ``interface`` is not among them."""
    net = sysfs_path("class", "net")
    if not os.path.isdir(net):
        return True     # no sysfs to ask (a container without /sys/class/net): let mlnx_qos answer
    return os.path.exists(os.path.join(net, interface))


def read_state(module, tool_path, interface):
    """The only I/O seam: one ``mlnx_qos -i IF -a`` call (-a prints every TC, so TSA,
    share and rate of TCs without priorities are known too)."""
    argv = [tool_path, "-i", interface, "-a"]
    rc, out, err = run_tool(module, argv, check_rc=False)
    text = out or ""
    if rc != 0:
        words = "; ".join(ln.strip() for ln in ((out or "") + "\n" + (err or "")).splitlines()
                          if ln.strip() and not _RE["warning"].match(ln.strip()))
        if "Traceback (most recent call last)" in (err or "") + (out or ""):
            tail = [ln.strip() for ln in ((err or "") + "\n" + (out or "")).splitlines() if ln.strip()]
            words = "Python traceback ending in: %s" % tail[-1]
        raise ToolError("%s failed (rc=%s) on %s: %s" % (" ".join(argv), rc, interface, words or "(no output)"),
                        argv=argv, rc=rc, stdout=out, stderr=err)
    try:
        return parse_report(text + ("\n" + err if err and "Traceback" in err else ""))
    except MlnxQosError as exc:
        raise ToolError("%s on %s: %s" % (" ".join(argv), interface, exc.msg), argv=argv, rc=rc,
                        stdout=out, stderr=err)


# --------------------------------------------------------------------------- want
def normalize_want(config, field="config"):
    """Validate the module's ``config`` and return it with ints/strs normalised.

    Raises ValidationError naming the field and the value. Only input-only rules here;
    rules that need the device state (ETS shares after merging) are in plan_commands.
    """
    config = config or {}
    unknown = sorted(set(config) - set(CONFIG_KEYS) - set(("interface",)))
    if unknown:
        raise V.ValidationError("%s: unknown option(s) %s; known: %s" % (field, ", ".join(unknown), ", ".join(CONFIG_KEYS)))
    want = dict((key, config.get(key)) for key in CONFIG_KEYS)
    want["pfc"] = V.priority_list(field + ".pfc", want["pfc"])
    want["prio_tc"] = V.list_of_8(field + ".prio_tc", want["prio_tc"],
                                  lambda f, v: V.int_in_range(f, v, 0, 7, "TC"))

    def tsa_check(field, value):
        if value not in TSA_CHOICES:
            raise V.ValidationError("%s=%r: must be one of %s" % (field, value, ", ".join(TSA_CHOICES)))
        return value
    want["tsa"] = V.list_of_8(field + ".tsa", want["tsa"], tsa_check)
    want["tcbw"] = V.list_of_8(field + ".tcbw", want["tcbw"],
                               lambda f, v: V.int_in_range(f, v, 0, 100, "percentage"))

    def rate_check(field, value):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise V.ValidationError("%s=%r: expected a number of Gbps" % (field, value))
        if isinstance(value, bool) or math.isnan(number) or math.isinf(number):
            raise V.ValidationError("%s=%r: expected a finite number of Gbps" % (field, value))
        if number < 0 or number > 1000000:
            raise V.ValidationError("%s=%r: rate must be 0 (unlimited) to 1000000 Gbps" % (field, value))
        if number != int(number):
            # mlnx_qos parses each rate with int(): "2.5" makes it fail.
            raise V.ValidationError("%s=%r: mlnx_qos takes whole Gbps" % (field, value))
        return float(number)
    want["ratelimit"] = V.list_of_8(field + ".ratelimit", want["ratelimit"], rate_check)
    want["buffer_size"] = V.list_of_8(field + ".buffer_size", want["buffer_size"],
                                      lambda f, v: V.int_in_range(f, v, 0, 2 ** 32 - 1, "size"))
    want["prio2buffer"] = V.list_of_8(field + ".prio2buffer", want["prio2buffer"],
                                      lambda f, v: V.int_in_range(f, v, 0, 7, "buffer"))
    if want["cable_len"] is not None:
        want["cable_len"] = V.int_in_range(field + ".cable_len", want["cable_len"], 0, 65535, "cable length")
    want["dscp2prio"] = _normalize_dscp2prio(want["dscp2prio"], field)
    if want["tsa"] is not None and want["tcbw"] is not None:
        V.ets_bandwidth(field + ".tsa", want["tsa"], field + ".tcbw", want["tcbw"])
    if want["pfc"] is not None and want["prio2buffer"] is not None:
        check_pfc_buffers(want, want)
    if want["dscp2prio"] is not None and want["trust"] == "pcp":
        raise V.ValidationError(field + ".dscp2prio is given with " + field + ".trust=pcp: the DSCP map "
                                "only applies (and mlnx_qos only shows it) with trust dscp")
    return want


def _normalize_dscp2prio(value, field_base="config"):
    """list of {dscp, priority} or a {dscp: priority} dict -> {int: int}."""
    if value is None:
        return None
    pairs = []
    if isinstance(value, dict):
        pairs = [("%s.dscp2prio[%s]" % (field_base, k), k, v) for k, v in value.items()]
    elif isinstance(value, list):
        for index, item in enumerate(value):
            field = "%s.dscp2prio[%d]" % (field_base, index)
            if not isinstance(item, dict) or set(item) != set(("dscp", "priority")):
                raise V.ValidationError("%s=%r: expected {dscp: 0-63, priority: 0-7}" % (field, item))
            pairs.append((field, item["dscp"], item["priority"]))
    else:
        raise V.ValidationError("%s.dscp2prio=%r: expected a list of {dscp, priority} or a "
                                "dict dscp: priority" % (field_base, value))
    result, where = {}, {}
    for field, dscp, prio in pairs:
        dscp = V.dscp(field + ".dscp", dscp)
        prio = V.priority(field + ".priority", prio)
        if dscp in result and result[dscp] != prio:
            raise V.ValidationError("%s: DSCP %d is mapped twice (priority %d and %d)"
                                    % (field, dscp, result[dscp], prio))
        if dscp in result:
            raise V.ValidationError("%s: DSCP %d -> priority %d is given twice (also %s); give each DSCP once"
                                    % (field, dscp, prio, where[dscp]))
        result[dscp], where[dscp] = prio, field
    return result


# --------------------------------------------------------------------------- compare
def _csv(values, fmt="%d"):
    return ",".join(fmt % v for v in values)


def _differs(want, have):
    if want is None:
        return False
    return want != have


def desired_state(want, have, state):
    """The state the interface should end in: ``have`` with ``want`` laid over it.

    merged: pfc adds the listed priorities, dscp2prio moves only the DSCPs given.
    replaced: pfc is exactly the list, dscp2prio is the whole 64-entry table (DSCPs not
    given go back to the firmware default dscp >> 3). Lists of 8 are whole in both.
    Options left out are not touched in either state (device defaults are unknown).
    """
    have = have or empty_state()
    result = dict((key, have.get(key)) for key in CONFIG_KEYS)
    for key in CONFIG_KEYS:
        if want.get(key) is not None and key not in ("pfc", "dscp2prio"):
            result[key] = want[key]
    if want.get("pfc") is not None:
        if state == "merged" and have.get("pfc") is not None:
            result["pfc"] = sorted(set(have["pfc"]) | set(want["pfc"]))
        else:
            result["pfc"] = list(want["pfc"])
    if want.get("dscp2prio") is not None:
        if state == "replaced":
            table = dict((d, default_priority(d)) for d in range(64))
        else:
            table = dict(have.get("dscp2prio") or {})
        table.update(want["dscp2prio"])
        result["dscp2prio"] = table
    if want.get("tsa") is not None or want.get("tcbw") is not None:
        tsa = result["tsa"] or [None] * 8
        bw = want.get("tcbw") or have.get("tcbw") or [None] * 8
        result["tcbw"] = [0 if tsa[tc] not in ("ets", None) else bw[tc] for tc in range(8)]
    return result


def plan_commands(want, have, state, interface):
    """Pure compare: the argv lists (argv[0] = 'mlnx_qos') that take ``have`` to ``want``.

    ``have`` None means unknown (state rendered): every option given is rendered.
    Raises ValidationError when the result would break a rule mlnx_qos or the kernel
    enforces (ETS shares, dscp2prio without dscp trust, unsupported features).

    Fewest calls. mlnx_qos handles, in this order, within ONE call: --dcbx, --cable_len,
    --pfc, --dscp2prio, --trust, --prio2buffer/--buffer_size, --ratelimit, then
    --tsa/--tcbw/--prio_tc (one ETS set). Constraints:
      * --trust and --dscp2prio are refused together -> dscp2prio gets a second call.
      * With the MLNX_OFED sysfs buffer files, a call with --buffer_size ignores
        --prio2buffer -> when both change, prio2buffer goes in the second call (sizes
        first, so a buffer is big enough before a lossless priority is mapped to it).
      * --dcbx fw must be last: mlx5 switches DCBX back to OS mode on any DCB write.
    dscp2prio ordering (the trap): deleting the last DSCP app entry (or 'flush') makes the
    driver flip trust to pcp, and mlx5 resets a deleted DSCP to priority 0, not dscp>>3.
    So this plan never emits 'del' at all: a move is one 'set' (mlx5 drops the DSCP's old
    entry itself), and replaced puts unnamed DSCPs back with 'set,D,D>>3'. The trust call
    goes FIRST (call 1) and dscp2prio second: '--trust dscp' on the netlink path installs
    all 64 default entries, so the sets that follow never change the entry count; the
    reverse order would let the first 'set' flip trust to dscp with a partial table and
    make the later '--trust dscp' a no-op. On the MLNX_OFED sysfs path trust and the map
    are independent, so the order is harmless there. Sets are computed against the map
    as read; when trust is switching to dscp that map is not printed yet, so every wanted
    entry is set (redundant but correct on both paths).
    """
    result = desired_state(want, have, state)
    have = have or empty_state()
    info = have.get("info") or {}

    if want.get("trust") is not None and have.get("trust") == "none":
        raise V.ValidationError("config.trust=%s: %s does not support a trust state (mlnx_qos: %s)"
                                % (want["trust"], interface, "; ".join(info.get("unsupported") or [])))
    if want.get("dscp2prio") is not None and result.get("trust") != "dscp" and have.get("trust") is not None:
        raise V.ValidationError("config.dscp2prio needs trust dscp but %s trusts %s: add config.trust: dscp"
                                % (interface, result.get("trust")))
    if want.get("ratelimit") is not None and have.get("ratelimit") is None and have.get("tsa") is not None:
        raise V.ValidationError("config.ratelimit=%s: %s does not support rate limits (mlnx_qos: "
                                "Rate limit is not supported on your system)" % (want["ratelimit"], interface))
    for key in ("buffer_size", "prio2buffer"):
        if (want.get(key) is not None and have.get("buffer_size") is None and have.get("pfc") is not None):
            raise V.ValidationError("config.%s=%s: %s does not support receive buffer commands"
                                    % (key, want[key], interface))

    ets_change = _differs(want.get("tsa"), have.get("tsa")) or _differs(want.get("tcbw"), have.get("tcbw"))
    if ets_change:
        tsa, bw = result["tsa"], result["tcbw"]
        for tc in range(8):
            if tsa is None or tsa[tc] is None:
                raise V.ValidationError("config.tcbw: the TSA of TC %d on %s is unknown; give config.tsa" % (tc, interface))
            if bw[tc] is None:
                raise V.ValidationError("config.tsa: TC %d becomes ets but its share is unknown; give config.tcbw"
                                        % tc)
        V.ets_bandwidth("config.tsa", tsa, "config.tcbw", bw)

    check_pfc_buffers(want, result, interface)

    base = [TOOL, "-i", interface]
    first, second, last = [], [], []
    if want.get("dcbx") == "os" and _differs("os", have.get("dcbx")):
        first += ["--dcbx", "os"]
    if want.get("dcbx") == "fw" and _differs("fw", have.get("dcbx")):
        last += ["--dcbx", "fw"]
    if _differs(want.get("cable_len"), have.get("cable_len")):
        first += ["--cable_len", str(want["cable_len"])]
    if want.get("pfc") is not None and result["pfc"] != have.get("pfc"):
        first += ["--pfc", _csv([1 if p in result["pfc"] else 0 for p in range(8)])]
    if _differs(want.get("trust"), have.get("trust")):
        first += ["--trust", want["trust"]]
    sizes_change = _differs(want.get("buffer_size"), have.get("buffer_size"))
    map_change = _differs(want.get("prio2buffer"), have.get("prio2buffer"))
    if sizes_change:
        first += ["--buffer_size", _csv(want["buffer_size"])]
    if map_change:
        (second if sizes_change else first).extend(["--prio2buffer", _csv(want["prio2buffer"])])
    if want.get("ratelimit") is not None and want["ratelimit"] != have.get("ratelimit"):
        first += ["--ratelimit", _csv(want["ratelimit"], "%.0f")]
    if ets_change:
        first += ["--tsa", ",".join(result["tsa"]), "--tcbw", _csv(result["tcbw"])]
    if _differs(want.get("prio_tc"), have.get("prio_tc")):
        first += ["--prio_tc", _csv(want["prio_tc"])]
    if want.get("dscp2prio") is not None:
        current = have.get("dscp2prio") or {}
        for dscp in sorted(result["dscp2prio"]):
            prio = result["dscp2prio"][dscp]
            if current.get(dscp) != prio:
                second += ["--dscp2prio", "set,%d,%d" % (dscp, prio)]
    return [base + args for args in (first, second, last) if args]


def check_pfc_buffers(want, result, interface=None):
    """Every PFC priority needs a receive buffer with room in it (a lossless priority mapped
    to a 0-byte buffer drops instead of pausing). Judged when the sizes are managed
    (``buffer_size`` given), on the state the plan leads to; raises ValidationError."""
    if want.get("buffer_size") is None:
        return
    pfc, p2b, sizes = result.get("pfc"), result.get("prio2buffer"), result.get("buffer_size")
    if pfc is None or p2b is None or sizes is None:
        return
    for prio in pfc:
        if not sizes[p2b[prio]]:
            raise V.ValidationError(
                "config.buffer_size=%s: PFC priority %d%s is mapped to receive buffer %d (prio2buffer=%s), "
                "which has size 0; give that buffer a size or map the priority to a sized buffer"
                % (list(sizes), prio, " on %s" % interface if interface else "", p2b[prio], list(p2b)))


def command_string(argv):
    """Commands are reported as argv joined by single spaces (no argument holds a space,
    so ``str.split()`` gives the argv back); argv[0] is the bare tool name."""
    return " ".join(argv)


# --------------------------------------------------------------------------- apply
def run_command(module, tool_path, argv):
    """Run one planned argv (argv[0] replaced by the resolved tool path). mlnx_qos prints
    its errors on stdout and may exit 0 after a traceback: both raise ToolError."""
    real = [tool_path] + list(argv[1:])
    rc, out, err = run_tool(module, real, check_rc=False)
    if rc != 0 or "Traceback (most recent call last)" in (err or "") + (out or ""):
        lines = [ln.strip() for ln in ((out or "") + "\n" + (err or "")).splitlines()
                 if ln.strip() and not _RE["warning"].match(ln.strip())]
        raise ToolError("rc=%s: %s" % (rc, lines[-1] if any("Traceback" in ln for ln in lines)
                                       else "; ".join(lines) or "(no output)"),
                        argv=real, rc=rc, stdout=out, stderr=err)


class MlnxQosResource(Resource):
    """mlnx_qos on the engine: one object per interface."""

    name = TOOL
    key_field = "interface"

    def __init__(self, module):
        super(MlnxQosResource, self).__init__(module)
        self._tool = None

    def tool(self):
        if self._tool is None:
            self._tool = find_tool(self.module, TOOL)
        return self._tool

    def check_key(self, field, value):
        return check_name(field, value)

    def normalize(self, entry, field):
        return normalize_want(entry, field)

    def read(self, key, want):
        if not interface_exists(key):
            raise ToolError("no such network interface (%s has no entry for it)" % sysfs_path("class", "net"))
        return read_state(self.module, self.tool(), key)

    def parse(self, text):
        return to_config(parse_report(text, "running_config"))

    def export(self, key, have):
        return to_config(have)

    def plan(self, key, want, have, state):
        return plan_commands(want, have, state, key)

    def predict(self, key, want, have, state):
        return desired_state(want, have, state)

    def apply(self, key, command):
        run_command(self.module, self.tool(), command)

    def render(self, command):
        return command_string(command)

    def header(self, key):
        return "mlnx_qos -i %s" % key
