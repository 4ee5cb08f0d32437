# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Subnet Manager facts for rdma.fabric.sm_info.

Layout rules, read from the printing code: linux-rdma/rdma-core ``infiniband-diags/sminfo.c`` (the
one printf of main, STATESTR) and ``infiniband-diags/saquery.c`` (SMInfoRecord dump, ``-s``
PortInfoRecord dump), read at master commit 1d07d99b; samples
``tests/unit/fixtures/samples/{sminfo,saquery}.txt``: the sminfo line is the same in OFED 1.2 (a 2008
list post) and infiniband-diags 44.0 (ibsim, OpenSM 3.3.23), the saquery dumps are from 44.0;
property tests ``test_grammar_sm_info.py``:

* ``sminfo``: one line ``sminfo: sm lid N sm guid 0xHEX, activity count N priority N state N NAME``;
  the GUID is printed with ``PRIx64`` (no zero padding), the LID in decimal, NAME is
  ``SMINFO_NOTACT|SMINFO_DISCOVER|SMINFO_STANDBY|SMINFO_MASTER`` or ``???`` out of range.
  Failures exit 255 with ``sminfo: iberror: failed: query`` and an ``ibwarn:`` line on stderr.
* ``saquery SMIR``: ``SMInfoRecord dump:`` blocks of TAB-indented ``Key.....value`` lines
  (``LID``, ``GUID`` zero padded, ``SM_Key``, ``ActCount``, ``Priority``, ``SMState``).
* ``saquery -s``: an ``IsSM ports`` header, ``PortInfoRecord dump:`` blocks
  (``EndPortLid``, ``PortNum``, ``base_lid``, ``master_sm_base_lid``, ``capability_mask``),
  then an ``IsSMdisabled ports`` header and the same blocks for SM-disabled ports.

The reader (``gather``) is the only I/O seam. ``parse`` turns any concatenation of those
outputs (as ``gather`` returns it in ``running_config``, or pasted by hand) into facts, so
``state: parsed`` and unit tests need no fabric.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import (
    ToolError,
    find_tool,
    run_tool,
    umad_address,
)
from ansible_collections.rdma.fabric.plugins.module_utils.common._guid import normalize_guid

STATE_NAMES = {0: "not_active", 1: "discovering", 2: "standby", 3: "master"}

SMINFO_LINE = re.compile(
    r"^(?:\S*/)?sminfo: sm lid (?P<lid>\d+) sm guid 0x(?P<guid>[0-9a-fA-F]{1,16}), "
    r"activity count (?P<act>\d+) priority (?P<prio>\d+) state (?P<state>\d+)(?: (?P<name>\S+))?\s*\Z"
)
# 'Key.....value' with a dot leader; 'RID' and 'SMInfo dump:' lines have none.
DOT_FIELD = re.compile(r"^\s*(?P<key>[A-Za-z_0-9]+?)\.{2,}(?P<value>.*?)\s*\Z")
# A captured command line in running_config ('$ sminfo 5'); also what gather() writes.
COMMAND_LINE = re.compile(r"^\$ (?P<cmd>.*)\Z")
DPORT_LID = re.compile(r"dport \(Lid (?P<lid>\d+)\)")


def _state_name(state_id):
    return STATE_NAMES.get(state_id, "unknown")


def _sm_entry(lid, guid, priority, state_id, activity, source):
    return {
        "lid": lid,
        "guid": normalize_guid(guid),
        "priority": priority,
        "state": _state_name(state_id),
        "state_id": state_id,
        "activity_count": activity,
        "source": source,
    }


def parse_sminfo_line(line):
    """One sminfo report line -> SM entry dict, or None when the line is not one."""
    match = SMINFO_LINE.match(line.strip())
    if not match:
        return None
    return _sm_entry(int(match.group("lid")), "0x" + match.group("guid"), int(match.group("prio")),
                     int(match.group("state")), int(match.group("act")), "sminfo")


def _int(text):
    text = text.strip()
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def _blocks(lines, header):
    """Yield lists of (key, value) for each block that starts with ``header``."""
    current = None
    for line in lines:
        stripped = line.strip()
        if stripped == header:
            if current is not None:
                yield current
            current = []
            continue
        if current is None:
            continue
        if stripped.endswith("dump:") and stripped != "SMInfo dump:" and stripped != "PortInfo dump:":
            # Another record type starts: close this block.
            yield current
            current = None
            continue
        field = DOT_FIELD.match(line)
        if field:
            current.append((field.group("key"), field.group("value")))
        elif stripped and not stripped.startswith(("RID", "SMInfo dump", "PortInfo dump")):
            # Anything else (a '$ cmd' line, '[rc=0]', a section header) ends the block.
            yield current
            current = None
    if current is not None:
        yield current


def parse_smir(lines):
    """``saquery SMIR`` records -> list of SM entries (source 'saquery_smir')."""
    entries = []
    for block in _blocks(lines, "SMInfoRecord dump:"):
        fields = dict(block)
        try:
            entries.append(_sm_entry(_int(fields["LID"]), fields["GUID"], _int(fields["Priority"]),
                                     _int(fields["SMState"]), _int(fields["ActCount"]), "saquery_smir"))
        except KeyError:
            # A truncated record (simulator RMPP, paste cut short) is skipped, not guessed.
            continue
        except ValueError as exc:
            raise ValueError(_malformed(lines, block, exc))
    return entries


def _malformed(lines, block, exc):
    """'running_config line N '...': what is wrong' for a record field that does not parse."""
    for key, value in block:
        try:
            if key == "GUID":
                normalize_guid(value)
            elif key in ("LID", "Priority", "SMState", "ActCount", "EndPortLid", "PortNum"):
                _int(value)
            else:
                continue
        except ValueError as err:
            for number, line in enumerate(lines, 1):
                field = DOT_FIELD.match(line)
                if field and field.group("key") == key and field.group("value") == value:
                    return "running_config line %d '%s': %s" % (number, line.strip(), err)
    return "running_config: %s" % exc


def parse_issm(lines):
    """``saquery -s`` -> list of {lid, port, master_sm_lid, capability_mask, sm_disabled}."""
    ports = []
    disabled = None
    block_lines = []

    def flush():
        for block in _blocks(block_lines, "PortInfoRecord dump:"):
            fields = dict(block)
            try:
                ports.append({
                    "lid": _int(fields["EndPortLid"]),
                    "port": _int(fields.get("PortNum", "0")),
                    "master_sm_lid": _int(fields["master_sm_base_lid"]) if "master_sm_base_lid" in fields else None,
                    "capability_mask": "0x%08x" % _int(fields["capability_mask"]) if "capability_mask" in fields else None,
                    "sm_disabled": bool(disabled),
                })
            except (KeyError, ValueError):
                continue
        del block_lines[:]

    for line in lines:
        stripped = line.strip()
        if stripped in ("IsSM ports", "IsSMdisabled ports"):
            flush()
            disabled = stripped == "IsSMdisabled ports"
            continue
        if disabled is None:
            continue
        if COMMAND_LINE.match(stripped) or stripped.startswith("[rc="):
            flush()
            disabled = None
            continue
        block_lines.append(line)
    flush()
    return ports


def _sections(lines):
    """Split captured text at '$ command' lines -> list of (argv or None, lines)."""
    sections = [(None, [])]
    for line in lines:
        match = COMMAND_LINE.match(line.strip())
        if match:
            sections.append((match.group("cmd").split(), []))
        else:
            sections[-1][1].append(line)
    return [s for s in sections if s[0] is not None or s[1]]


def parse_errors(lines):
    """Failed queries in captured text -> list of {lid, error}, one per failed command.

    The LID is the command's LID argument, else the ``dport (Lid N)`` of the ibwarn line
    (a bare ``sminfo`` tried the local port's SMLid), else None.
    """
    errors = []
    for argv, body in _sections(lines):
        failed = [l.strip() for l in body if "iberror:" in l or "_do_madrpc failed" in l or "ibpanic:" in l]
        if not failed:
            continue
        lid = None
        if argv and argv[-1].isdigit():
            lid = int(argv[-1])
        else:
            for line in failed:
                match = DPORT_LID.search(line)
                if match:
                    lid = int(match.group("lid"))
                    break
        errors.append({"lid": lid, "error": "; ".join(failed)})
    return errors


def parse(text):
    """Captured sminfo / saquery SMIR / saquery -s text -> facts (see summarize)."""
    lines = (text or "").splitlines()
    sminfo_entries = []
    for number, line in enumerate(lines, 1):
        if "sminfo: sm lid" in line:
            entry = parse_sminfo_line(line)
            if entry is None:
                raise ValueError("running_config line %d '%s': not an sminfo answer ('sminfo: sm lid N sm guid "
                                 "0x<1-16 hex digits>, activity count N priority N state N')"
                                 % (number, line.strip()[:120]))
            sminfo_entries.append(entry)
    smir, issm, errors = parse_smir(lines), parse_issm(lines), parse_errors(lines)
    records = any(ln.strip().endswith("dump:") for ln in lines)   # saquery records of another kind
    if not (sminfo_entries or smir or issm or errors or records):
        first = [(n, ln.strip()) for n, ln in enumerate(lines, 1) if ln.strip()]
        if not first:
            raise ValueError("running_config: empty (expected captured sminfo / saquery SMIR / saquery -s output)")
        raise ValueError("running_config line %d '%s': no sminfo answer, SMInfoRecord or PortInfoRecord in the "
                         "text (expected captured sminfo / saquery output)" % (first[0][0], first[0][1][:80]))
    return summarize(sminfo_entries, smir, issm, errors)


def summarize(sminfo_entries, smir_entries, issm_ports, errors, default_sminfo=None):
    """Merge the views into one answer.

    A live ``sminfo LID`` answer wins over the SA's SMInfoRecord of the same LID (the SA
    record is the master's last poll); among several answers for a LID the last one wins,
    so a capture taken over time reports the latest state.
    """
    by_lid = {}
    for entry in smir_entries:
        by_lid[entry["lid"]] = entry
    for entry in sminfo_entries:
        by_lid[entry["lid"]] = entry
    sm_ports = [by_lid[lid] for lid in sorted(by_lid)]
    masters = [entry for entry in sm_ports if entry["state"] == "master"]
    master = None
    if default_sminfo is not None:
        master = default_sminfo
    elif len(masters) == 1:
        master = masters[0]
    elif masters:
        # Several MASTER answers: report the one the local port's SMLid would be (highest
        # activity is the live one in a capture over time); master_count says it is ambiguous.
        master = sorted(masters, key=lambda e: e["activity_count"])[-1]
    standbys = [entry for entry in sm_ports if entry["state"] == "standby"]
    return {
        "master": master,
        "sm_ports": sm_ports,
        "master_count": len(masters),
        "standby_count": len(standbys),
        "issm_ports": sorted(issm_ports, key=lambda p: (p["lid"], p["port"])),
        "errors": errors,
    }


def build_commands(sminfo, saquery, ca=None, port=None, timeout=None, discover=True):
    """The read commands gather() starts with (argv lists); per-LID sminfo calls follow."""
    address = umad_address(ca, port, timeout)
    commands = [[sminfo] + address]
    if discover and saquery:
        commands.append([saquery] + address + ["SMIR"])
        commands.append([saquery] + address + ["-s"])
    return commands


def _capture(argv, rc, out, err):
    text = "$ %s\n%s" % (" ".join([os.path.basename(argv[0])] + argv[1:]), out or "")
    if not text.endswith("\n"):
        text += "\n"
    text += "[rc=%s]\n" % rc
    if err and err.strip():
        text += "# stderr:\n%s" % err if err.endswith("\n") else "# stderr:\n%s\n" % err
    return text


def _tool_words(out, err):
    words = [w.strip() for w in ((err or "") + "\n" + (out or "")).splitlines() if w.strip()]
    return "; ".join(words) or "no output"


def gather(module, ca=None, port=None, timeout=None, lids=None, discover=True):
    """Query the fabric: the master via the local port, the SA's SM lists, then each SM LID.

    Returns (facts, running_config). Raises ToolError when no SM answered at all.
    """
    sminfo = find_tool(module, "sminfo")
    saquery = find_tool(module, "saquery", required=False) if discover else None
    address = umad_address(ca, port, timeout)
    captured = []
    errors = []

    def run(argv):
        rc, out, err = run_tool(module, argv, check_rc=False)
        captured.append(_capture(argv, rc, out, err))
        return rc, out, err

    # 1. The master as the local port sees it (PortInfo SMLid).
    rc, out, err = run([sminfo] + address)
    default_entry = None
    if rc == 0:
        default_entry = next((e for e in (parse_sminfo_line(l) for l in out.splitlines()) if e), None)
    if default_entry is None:
        errors.append({"lid": None, "error": "sminfo (local port's SM LID) failed (rc=%s): %s"
                       % (rc, _tool_words(out, err))})

    # 2. What the SA knows: SMInfoRecords and IsSM ports. Needs a live master.
    smir_entries, issm_ports = [], []
    if discover and saquery and default_entry is not None:
        rc, out, err = run([saquery] + address + ["SMIR"])
        if rc == 0:
            smir_entries = parse_smir(out.splitlines())
        else:
            errors.append({"lid": None, "error": "saquery SMIR failed (rc=%s): %s" % (rc, _tool_words(out, err))})
        rc, out, err = run([saquery] + address + ["-s"])
        if rc == 0:
            issm_ports = parse_issm(out.splitlines())
        else:
            errors.append({"lid": None, "error": "saquery -s failed (rc=%s): %s" % (rc, _tool_words(out, err))})

    # 3. Ask every SM port directly: the live state, not the master's last poll.
    targets = set(lids or [])
    targets.update(entry["lid"] for entry in smir_entries)
    targets.update(p["lid"] for p in issm_ports if not p["sm_disabled"])
    if default_entry is not None:
        targets.add(default_entry["lid"])
    live = []
    for lid in sorted(targets):
        rc, out, err = run([sminfo] + address + [str(lid)])
        entry = next((e for e in (parse_sminfo_line(l) for l in out.splitlines()) if e), None) if rc == 0 else None
        if entry is None:
            errors.append({"lid": lid, "error": "sminfo %s failed (rc=%s): %s" % (lid, rc, _tool_words(out, err))})
        else:
            live.append(entry)

    # The default query's master wins only if its port still says MASTER when asked directly.
    master = None
    if default_entry is not None:
        master = next((e for e in live if e["lid"] == default_entry["lid"]), default_entry)
        if master["state"] != "master":
            master = None
    facts = summarize(live, smir_entries, issm_ports, errors, default_sminfo=master)
    if not live and default_entry is None:
        raise ToolError("no subnet manager answered: %s. The local port may have no SM yet (SM lid 0), "
                        "or the master just died and no standby has taken over; pass lids to ask known "
                        "SM ports directly" % "; ".join(e["error"] for e in errors),
                        argv=[sminfo] + address, rc=255, stdout="".join(captured))
    return facts, "".join(captured)
