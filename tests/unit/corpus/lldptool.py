# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the corpus test reads the samples of lldptool.txt with the collection's parser.

A sample may hold several commands (``$ lldptool ...`` lines, each followed by its output and
an ``[rc=N]`` annotation). Each is read the way the collection reads that command: a non-zero
rc through ``_lldptool._call`` (which makes it a ToolError: refused), ``-t`` dumps with
``parse_tlvs`` (+ ``parse_identity`` for ``-n``), ``-c app`` with ``parse_app_config``, other
``-c ARG`` / ``get-lldp ARG`` with ``parse_arg`` (and ``pfc_from_bitmask`` for ``-c enabled``),
``-T`` / ``set-lldp`` through ``_call`` only (the collection reads their rc, not their echo).
"""
from __future__ import absolute_import, division, print_function
__metaclass__ = type
import re
import shlex

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _lldptool
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError

TOOL = "lldptool"
PARSER = "_lldptool.parse_tlvs, parse_arg, parse_app_config, parse_identity"
VERSIONS = "openlldp/lldpad 0.9.4x (2011, TAF) .. 1.1+git20221028 (Debian 12); IEEE and CEE"
EXPECT_REFUSED = {
    "PFC-SET-NOTCAPABLE": "'Device not capable' rc 1: the set failed (the stray byte after it is dropped)",
    "PFC-SET-ENABLETX-NOTCAPABLE": "'Device not capable' rc 1: the set failed",
    "ETSCFG-SET-NOTCAPABLE": "'Device not capable' rc 1: the set failed",
    "ERR-NODEV-TLV": "'Device not found or inactive' rc 1: no such interface, not an empty dump",
    "ERR-NODEV-LLDP": "'Device not found or inactive' rc 1",
    "ERR-BAD-ARG": "'Command not applicable' rc 1",
    "ERR-LLDPAD-NOT-RUNNING": "lldpad is down (rc 255, 'Failed to connect to lldpad'): no dump at all",
    "ERR-LLDPAD-DOWN-OVIRT-BZ1487078": "lldpad is down (rc 255, 'Failed to connect to lldpad')",
}
SKIP = {
    "STATS": "'-S' statistics: the collection never runs it",
    "VERSION": "'-v': the collection never runs it",
    "HELP": "'-h' usage text: the collection never runs it",
    "RECON-SET-PFC-OK": "a -T echo without its command line: the collection reads only the rc of -T",
}

_ANNOTATION = re.compile(r"^\[(stdout|stderr|rc=(\d+))\]\s*$")


def _segments(raw):
    """[(argv or None, stdout, stderr, rc)] per ``$ `` command line of the sample."""
    out, cur = [], None
    for line in raw.splitlines(True):
        if line.startswith("$ "):
            cur = {"argv": shlex.split(line[2:]), "out": [], "err": [], "rc": 0, "to": "out"}
            out.append(cur)
            continue
        if line.startswith("#####"):
            continue                    # a note of the capture (lldpad.conf contents), not output
        if cur is None:
            cur = {"argv": None, "out": [], "err": [], "rc": 0, "to": "out"}
            out.append(cur)
        match = _ANNOTATION.match(line)
        if match:
            if match.group(2) is not None:
                cur["rc"] = int(match.group(2))
            else:
                cur["to"] = match.group(1).replace("stdout", "out").replace("stderr", "err")
            continue
        cur[cur["to"]].append(line)
    return [(s["argv"], "".join(s["out"]), "".join(s["err"]), s["rc"]) for s in out]


def _read_one(argv, out, err, rc):
    tool = argv[0] if argv else "lldptool"
    args = argv[1:] if argv else ["-t"]
    try:
        text = _lldptool._call(lambda _argv: (rc, out, err), [tool] + args)
    except ToolError as exc:
        raise ValueError(exc.msg)
    if "-r" in args:
        return {"not_read": "-r raw mode: the collection never asks for it"}
    if "-T" in args or "set-tlv" in args or "-L" in args or "set-lldp" in args:
        return {"ok": True}
    if "-c" in args:
        names = args[args.index("-c") + 1:]
        if names == ["app"]:
            return {"app": _lldptool.parse_app_config(text)}
        names = names or [ln.split("=", 1)[0] for ln in text.splitlines() if "=" in ln]
        values = dict((name, _lldptool.parse_arg(text, name)) for name in names)
        if names == ["enabled"]:
            values["enabled_priorities"] = _lldptool.pfc_from_bitmask(values["enabled"])
        return values
    if "-l" in args or "get-lldp" in args:
        names = [a for a in args if not a.startswith("-") and a not in ("get-lldp",) and a != args[args.index("-i") + 1]
                 and not (("-g" in args) and a == args[args.index("-g") + 1])]
        return dict((name, _lldptool.parse_arg(text, name)) for name in names)
    result = _lldptool.parse_tlvs(text)
    if "-n" in args:
        result.update(_lldptool.parse_identity(text))
    return result


def read(sample):
    results = []
    for argv, out, err, rc in _segments(sample.raw):
        results.append({"cmd": " ".join(argv) if argv else None, "read": _read_one(argv, out, err, rc)})
    return results
