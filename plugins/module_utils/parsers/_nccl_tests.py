# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what nccl-tests' ``all_reduce_perf`` (and the other ``*_perf`` binaries, same code)
prints, and the JSON file it writes with ``-J FILE.json``.

Followed (read, not copied): NVIDIA/nccl-tests at 2.19.6 (HEAD a0b82b2) and the tags back to
v1.0.0 where the layout changed:

* ``src/util.cu`` (2.17+; before that the same code sat in ``src/common.cu`` and each test's
  ``print_header``): ``writeDeviceReport`` (``# nccl-tests version``, ``# Collective test
  starting``, ``# nThread .. nGpus ..``, ``# Using devices``, one ``#  Rank %2d Group %2d Pid
  %6d on %10s device %2d [BUS] NAME`` per rank), ``writeResultHeader`` (the three ``#`` table
  header lines; per-iteration and timestamp variants), ``writeBenchmarkLinePreamble`` /
  ``writeBenchmarkLineBody`` (``%12li  %12li  %8s  %6s  %6s`` then ``  %7s  %6s  %6s  %6g`` or
  ``N/A`` per placement), ``writeResultFooter`` (``# Out of bounds values : N OK|FAILED``,
  ``# Avg bus bandwidth    : %g [OK|FAILED]``, ``# Collective test concluded``),
  ``jsonOutputInit`` and the ``json*`` writers (``-J``, JSON_FILE_VERSION 3).
* ``src/common.h``: ``CUDACHECK`` / ``NCCLCHECK`` / ``TESTCHECK`` failure lines.
* Layout history: 1.x (no ``#`` before ``nThread``, ``bytes N type op .. res`` columns, time
  in ms); 2.0-2.11 (``#   Rank %2d Pid``, ``error`` columns holding the max delta ``%5.0le``,
  no root column in all_reduce); 2.13 (``agg iters``/``graph``, ``redop``/``root``/``#wrong``);
  2.13.4 (``Group``); 2.14.1 (bus id ``%04x:%02x:%02x``); 2.16.7 (``# Collective test``);
  2.17.4 (version banner); 2.18.2 (``unalign``); 2.18.5 (``-J`` JSON).

Under a launcher (``mpirun``/``srun``), stdout and stderr of every rank are merged: per-line
prefixes (Open MPI ``--tag-output`` ``[1,R]<stdout|stderr>:``, srun ``--label`` ``R: ``, MPICH
``[R] ``, timestamps) are split off and name the stream a line came from. The table is read by its
own grammar: a row is a line of the stream that printed the table header, shaped like
``writeBenchmarkLinePreamble`` (``%12li  %12li  %8s`` ...), before the ``# Out of bounds`` footer;
it must then fit the header's columns (else ``ValueError``). Every other line nccl-tests cannot
print (Open MPI help/MCA messages and their dash boxes, ``N more processes have sent help message``,
``Set MCA parameter "orte_base_help_aggregate" to 0 ...``, ssh ``Warning: Permanently added ...``,
srun/slurmstepd lines, another rank's or stderr's text, a row-shaped line of another stream) is
kept verbatim in ``noise`` and never read as a row; a ``#`` line of the main stream that fits none
of nccl-tests' formats is still refused. The table belongs to the stream that printed its first
header (rank 0's stdout under ``--tag-output``, the unprefixed stream otherwise): a header of
another stream is noise, and so are the footers (``# Out of bounds values``, ``# Avg bus
bandwidth``) of another stream, so no other rank can rewrite the figures (issue 40). Failure lines
(``Test NCCL failure``, ``Test failure``), and a failure any stream reports in a footer (``N``
out-of-bounds values > 0, ``FAILED``) or in a row-shaped line that fits the table (an integer
``#wrong`` > 0), go to ``errors`` whatever the stream, so a failed run is never passed; NCCL
``WARN`` lines go to ``warnings`` (NCCL prints them in good runs too, e.g. a missing libibverbs
with sockets chosen), ``ABORT`` lines to ``errors``.

Columns are read from the header line, so old and new tables, ``cputime`` (``-C``),
per-iteration statistics (``-I 1``) and timestamps (``-T``) all parse. NCCL's own log lines
(``HOST:PID:TID [DEV] NCCL INFO|WARN ..``, ``NCCL version X``) are accepted; the test's failure
lines go to ``errors``. Text with no nccl-tests line at all raises ``ValueError``.

Besides the keys of the shared design, the result carries ``nccl_tests_version`` (banner, 2.17.4+),
``avg_busbw_ok`` (True/False when ``NCCL_TESTS_MIN_BW``/``-m`` checked it, else None), ``group``
in each rank, and ``timestamp`` / ``i_*`` figures in rows when printed. Times are in us (1.x
printed ms and is converted), bandwidths in GB/s as printed.

Samples: tests/unit/fixtures/samples/nccl_tests.txt (nccl-tests 1.x to 2.17), pinned by
tests/unit/test_corpus.py; the grammar tests are test_grammar_nccl_tests.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.rdma.fabric.plugins.module_utils.parsers._perftest import _MPI_TAG, _RANK_LABEL, _TIMESTAMP

_VERSION_BANNER = re.compile(r"^# nccl-tests version (?P<v>\S+) nccl-headers=(?P<h>\d+) nccl-library=(?P<l>\d+)\s*$")
_COLLECTIVE = re.compile(r"^# Collective test (?:starting|concluded): (?P<name>\S+)\s*$")
_PARAMS = re.compile(
    r"^(?:# )?nThread \d+ nGpus \d+ minBytes \d+ maxBytes \d+ step: \d+\((?:factor|bytes)\) warmup iters: \d+ iters: \d+ "
    r"(?:agg iters: \d+ )?validation: \d+(?: graph: \d+)?(?: unalign: \d+)?\s*$")
_COMPILED = re.compile(r"^# NCCL Tests compiled with NCCL (?P<v>\S+)\s*$")
_NOTES = re.compile(
    r"^(?:# )?(?:Blocking Enabled|Parallel Init Enabled|Swap Comms Enabled|Per-Iteration Report|Reducing maxBytes to \d+"
    r"|Writing JSON output to |skipping json output|GPU memory usage|Errors with asterisks)")
_HASH = re.compile(r"^#\s*$")
_USING = re.compile(r"^# Using devices\s*$")
_RANK = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+)(?:\s+Group\s+(?P<group>\d+))?(?:\s+Pid\s+(?P<pid>\d+))?\s+on\s+(?P<host>\S+)"
    r"\s+device\s+(?P<dev>\d+)\s+\[(?P<bus>0x[0-9a-fA-F]+|[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})\]\s+(?P<gpu>.*?)\s*$")
_TITLE = re.compile(r"^#\s+out-of-place(?: \(\+ per-iteration\))?\s+in-place(?: \(\+ per-iteration\))?\s*$")
_UNITS = re.compile(r"^#\s+\((?:B)\)\s+\(elements\)")
_UNIT_TOKENS = {"(B)", "(elements)", "(us)", "(GB/s)", "(%)", "%Y-%m-%d", "%H:%M:%S"}
_OOB = re.compile(r"^(?:#)? ?Out of bounds values\s*:\s*(?P<n>\d+) (?P<s>OK|FAILED)\s*$")
_AVG = re.compile(r"^(?:#)? ?Avg bus bandwidth\s*:\s*(?P<bw>[-+0-9.eE]+|inf|nan)(?: (?P<s>OK|FAILED))?\s*$")
_ERROR_NOTE = re.compile(r"^# error: (?P<e>.*)$")
# NCCL debug.cc: "%s:%d:%d [%d] NCCL INFO|WARN .."; WARN lines of NCCL < 2.12 carry "file.cc:line "
# before "NCCL WARN" (NCCL_DEBUG_SUBSYS-style source location).
_NCCL_LOG = re.compile(r"^\S+:\d+:\d+ \[\d+\] (?:[\w/.-]+:\d+ )?NCCL (?P<lvl>INFO|WARN|TRACE|ABORT)\b(?P<msg>.*)$")
_NCCL_VERSION = re.compile(r"(?:^|NCCL INFO )NCCL version (?P<v>\d+\.\d+\.\d+)(?:\+\S+)?\s*$")
_FAILURES = re.compile(
    r"^(?:\S+: Test (?:NCCL|CUDA) failure \S+:\d+ .*|\s?\.\. \S+ pid \d+: Test failure \S+:\d+\s*|NCCL failure \S+:\d+ .*"
    r"|\S+: Test timeout \(\d+s\) .*|Invalid number of GPUs: .*|Please check the number of processes and GPUs per process\."
    r"|Incompatible NCCL versions\..*|Device implementation \d+ is not supported.*|invalid option .*|Option -\w .*"
    r"|invalid (?:size|sizes|type|op) .*|Unknown reduction .*|per-iteration .*|blocking mode .*)$")

_PREAMBLE = {"size": "size", "bytes": "size", "count": "count", "N": "count", "type": "type", "redop": "redop",
             "op": "redop", "root": "root"}
_BODY = {"time": "time", "cputime": "time", "algbw": "algbw", "busbw": "busbw", "#wrong": "wrong", "error": "wrong",
         "res": "wrong", "i_min": "i_min", "i_max": "i_max", "i_p99": "i_p99", "i_cv%": "i_cv"}
_FLOAT = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^[-+]?(?:inf|nan)$")


def version_string(code):
    """NCCL_VERSION_CODE -> 'major.minor.patch' (2.9+: X*10000 + Y*100 + Z, before: X*1000 + Y*100 + Z)."""
    code = int(code)
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, (code % 10000) // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, (code % 1000) // 100, code % 100)


def _empty():
    return {"test": None, "nccl_version": None, "nccl_tests_version": None, "ranks": [], "rows": [], "avg_busbw": None,
            "avg_busbw_ok": None, "out_of_bounds": None, "errors": [], "warnings": [], "noise": []}


def _split(line):
    """(source, body): the launcher's per-line prefixes removed. ``source`` names the stream the
    line came from (``[1,0]<stdout>:``, srun ``0: ``, ``[0] ``), timestamps dropped; '' when none."""
    source = []
    for _attempt in range(3):
        m = _TIMESTAMP.match(line)
        if m:
            line = line[m.end():]
            continue
        m = _MPI_TAG.match(line) or _RANK_LABEL.match(line)
        if m:
            source.append(m.group(0).strip())
            line = line[m.end():]
            continue
        break
    return " ".join(source), line


# writeBenchmarkLinePreamble: "%12li  %12li  %8s  %6s  %6s" (size, count, type, redop, root); 1.x
# printed "bytes N type op" the same way: two integers and a type name open every row.
_ROW_SHAPE = re.compile(r"^\s*\d+\s+\d\S*\s+[A-Za-z]\w*(?:\s|$)")


def _noise(res, line):
    res["noise"].append(line)
    return None


def _refuse(line, why):
    raise ValueError("nccl-tests cannot print this line (%s): %r" % (why, line))


def _columns(line):
    """Column names of the table header line, or None when the line is not one."""
    tokens = line[1:].split()
    if len(tokens) < 8 or tokens[0] not in ("size", "bytes"):
        return None
    cols = []
    for tok in tokens:
        if tok in _PREAMBLE and not any(c[0] == "body" for c in cols):
            cols.append(("pre", _PREAMBLE[tok]))
        elif tok in _BODY:
            cols.append(("body", _BODY[tok]))
        elif tok == "timestamp" and tok == tokens[-1]:
            cols.append(("ts", "timestamp"))
        else:
            _refuse(line, "unknown column %r" % tok)
    names = [c[1] for c in cols if c[0] == "pre"]
    if names[:3] != ["size", "count", "type"]:
        _refuse(line, "the table starts with size, count, type")
    ms = "ms" if tokens[0] == "bytes" else "us"  # nccl-tests 1.x printed the time in ms
    return cols, ms


def _number(tok, line, name):
    if not _FLOAT.match(tok):
        _refuse(line, "%s %r is not a number" % (name, tok))
    value = float(tok)
    return int(value) if value.is_integer() and "." not in tok and "e" not in tok.lower() else value


def _row(line, cols, ms):
    tokens = line.split()
    if cols[-1][0] == "ts":
        if len(tokens) < 2:
            _refuse(line, "no timestamp")
        tokens = tokens[:-2] + [" ".join(tokens[-2:])]
    if len(tokens) != len(cols):
        _refuse(line, "%d fields under a %d-column table" % (len(tokens), len(cols)))
    row = {"size": None, "count": None, "type": None, "redop": None, "root": None, "oop": {}, "ip": {}}
    place = None
    for (kind, name), tok in zip(cols, tokens):
        if kind == "pre":
            if name in ("size", "count"):
                if not tok.isdigit():
                    _refuse(line, "%s %r is not an unsigned integer" % (name, tok))
                row[name] = int(tok)
            elif name == "root":
                if not re.match(r"^-?\d+$", tok):
                    _refuse(line, "root %r is not an integer" % tok)
                row[name] = int(tok)
            else:
                if not re.match(r"^\w+$", tok):
                    _refuse(line, "%s %r is not a name" % (name, tok))
                row[name] = tok
        elif kind == "ts":
            if not re.match(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$", tok):
                _refuse(line, "timestamp %r" % tok)
            row["timestamp"] = tok
        else:
            if name == "time":
                place = "oop" if place is None else "ip"
            target = row[place or "oop"]
            if name == "wrong" and tok == "N/A":
                target[name] = None
                continue
            value = _number(tok, line, name) if name == "wrong" else float(_number(tok, line, name))
            if name == "time" and ms == "ms":
                value = value * 1000.0
            target[name] = value
    for place in ("oop", "ip"):
        for key in ("time", "algbw", "busbw", "wrong"):
            row[place].setdefault(key, None)
    return row


def _foreign_failure(res, raw, source, why):
    """A failure reported by a stream that does not own the table: the line is noise (its figures
    are not read) but the run fails (a stream can fail a run, never pass or rewrite it)."""
    res["errors"].append("%s (reported by another stream than the table's, %s): %s"
                         % (why, source or "unprefixed", raw.strip()))
    _noise(res, raw)


def _foreign_row(res, raw, line, source, columns):
    """A row-shaped line of another stream: noise; when it fits the table and counts wrong results
    (an integer ``#wrong`` > 0), the run fails too."""
    wrong = 0
    if columns is not None:
        try:
            row = _row(line, columns[0], columns[1])
        except ValueError:
            row = None
        if row is not None:
            wrong = sum(side.get("wrong") for side in (row["oop"], row["ip"])
                        if isinstance(side.get("wrong"), int) and not isinstance(side.get("wrong"), bool))
    if wrong > 0:
        _foreign_failure(res, raw, source, "%d wrong results" % wrong)
    else:
        _noise(res, raw)


def parse(text):
    """nccl-tests printed output (launcher-wrapped or not) -> dict, see the module doc."""
    if not isinstance(text, str):
        raise ValueError("nccl-tests output must be text, got %s" % type(text).__name__)
    res = _empty()
    table = None
    table_source = None     # the stream of the first table header: it owns the table and the footers
    columns = None          # the last header's columns (a foreign row is checked against them)
    main_source = None
    last_source = None
    seen = False
    for raw in text.splitlines():
        source, line = _split(raw.rstrip("\r\n"))
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        if main_source is None and seen:
            main_source = last_source
        last_source = source
        m = _VERSION_BANNER.match(line)
        if m:
            res["nccl_tests_version"] = m.group("v")
            res["nccl_version"] = version_string(m.group("l"))
            seen = True
            continue
        m = _COLLECTIVE.match(line)
        if m:
            res["test"] = m.group("name")
            seen = True
            continue
        if _PARAMS.match(line) or _NOTES.match(line) or _HASH.match(line) or _USING.match(line) or _TITLE.match(line):
            seen = True
            continue
        if line.lstrip("# ").startswith("nThread"):
            _refuse(line, "not the parameter line of writeDeviceReport")
        m = _COMPILED.match(line)
        if m:
            seen = True
            continue
        m = _RANK.match(line)
        if m:
            res["ranks"].append({
                "rank": int(m.group("rank")), "group": int(m.group("group")) if m.group("group") else None,
                "pid": int(m.group("pid")) if m.group("pid") else None, "host": m.group("host"),
                "device": int(m.group("dev")), "bus_id": m.group("bus"), "gpu": m.group("gpu")})
            seen = True
            continue
        if re.match(r"^#\s+Rank\b", line):
            _refuse(line, "not a device line of writeDeviceReport")
        if line.startswith("#") and re.match(r"^#\s+(?:size|bytes)\b", line):
            if table_source is not None and source != table_source:
                _noise(res, raw)     # another stream's header cannot take the table over
                continue
            table = _columns(line)
            if table is None:
                _refuse(line, "not a table header")
            table_source, columns = source, table
            seen = True
            continue
        if _UNITS.match(line):
            bad = [t for t in line[1:].split() if t not in _UNIT_TOKENS]
            if bad:
                _refuse(line, "unknown unit %r" % bad[0])
            seen = True
            continue
        # the footers are read from the table's stream only (before any header: the main stream)
        owner = table_source if table_source is not None else main_source
        own = owner is None or source == owner
        m = _OOB.match(line)
        if m and not own:
            if int(m.group("n")) > 0 or m.group("s") == "FAILED":
                _foreign_failure(res, raw, source, "Out of bounds values: %s %s" % (m.group("n"), m.group("s")))
            else:
                _noise(res, raw)
            continue
        if m:
            res["out_of_bounds"] = int(m.group("n"))
            table = None     # the footer closes the table: nothing after it is a row
            seen = True
            continue
        m = _AVG.match(line)
        if m and not own:
            if m.group("s") == "FAILED":
                _foreign_failure(res, raw, source, "Avg bus bandwidth FAILED")
            else:
                _noise(res, raw)
            continue
        if m:
            res["avg_busbw"] = float(m.group("bw"))
            res["avg_busbw_ok"] = {"OK": True, "FAILED": False}.get(m.group("s"))
            seen = True
            continue
        if re.match(r"^#? ?(?:Out of bounds|Avg bus)", line):
            _refuse(line, "not a footer line of writeResultFooter")
        m = _ERROR_NOTE.match(line)
        if m:
            res["errors"].append(m.group("e"))
            seen = True
            continue
        m = _NCCL_VERSION.search(line)
        if m and (line.startswith("NCCL version") or _NCCL_LOG.match(line)):
            res["nccl_version"] = res["nccl_version"] or m.group("v")
            seen = True
            continue
        m = _NCCL_LOG.match(line)
        if m:
            if m.group("lvl") == "ABORT":
                res["errors"].append(line.strip())
            elif m.group("lvl") == "WARN":
                res["warnings"].append(line.strip())
            seen = True
            continue
        if _FAILURES.match(line):
            res["errors"].append(line.strip())
            seen = True
            continue
        mine = source == (main_source if main_source is not None else source)
        if _ROW_SHAPE.match(line) and (source == table_source if table is not None else mine):
            if table is None:
                _refuse(line, "a result row before the table header")
            res["rows"].append(_row(line, table[0], table[1]))   # nccl-tests' own row: it must fit
            continue
        if line.startswith("#") and mine:
            _refuse(line, "no nccl-tests format matches")
        if _ROW_SHAPE.match(line):
            _foreign_row(res, raw, line, source, columns)
            continue
        # anything else is a foreign line the launcher merged in (MPI/ssh/srun messages, another
        # rank's or stderr's text, NCCL's tuning table ...): kept, never read as a row
        _noise(res, raw)
    if not seen:
        first = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
        raise ValueError("no nccl-tests output: none of the lines is one nccl-tests prints (the first: %r)"
                         % (first[:120],))
    return res


def _jnum(value, where):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("nccl-tests JSON: %s is %r, not a number" % (where, value))
    return value


def parse_json(text):
    """nccl-tests ``-J FILE.json`` document -> the dict ``parse`` returns."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ValueError("nccl-tests JSON: not JSON (%s)" % exc)
    if not isinstance(doc, dict) or not isinstance(doc.get("results", []), list):
        raise ValueError("nccl-tests JSON: expected an object with a 'results' list")
    res = _empty()
    if doc.get("nccl_version") is not None:
        res["nccl_version"] = version_string(_jnum(doc["nccl_version"], "nccl_version"))
    args = doc.get("args") or []
    if args and isinstance(args[0], str):
        res["test"] = args[0].rsplit("/", 1)[-1]
    config = doc.get("config") or {}
    for dev in config.get("devices") or []:
        res["ranks"].append({"rank": dev.get("rank"), "group": dev.get("group"), "pid": dev.get("pid"),
                             "host": dev.get("hostname"), "device": dev.get("device"), "bus_id": dev.get("device_hex"),
                             "gpu": dev.get("device_info")})
    for i, rec in enumerate(doc.get("results") or []):
        if not isinstance(rec, dict):
            raise ValueError("nccl-tests JSON: results[%d] is not an object" % i)
        root = rec.get("root")
        if isinstance(root, str):
            root = int(root.strip()) if re.match(r"^\s*-?\d+\s*$", root) else None
        row = {"size": _jnum(rec.get("size"), "results[%d].size" % i), "count": _jnum(rec.get("count"), "results[%d].count" % i),
               "type": rec.get("type"), "redop": rec.get("redop"), "root": root, "oop": {}, "ip": {}}
        for key, place in (("out_of_place", "oop"), ("in_place", "ip")):
            body = rec.get(key) or {}
            time = body.get("time", body.get("cpu_time"))
            row[place] = {"time": _jnum(time, "results[%d].%s.time" % (i, key)),
                          "algbw": _jnum(body.get("alg_bw"), "results[%d].%s.alg_bw" % (i, key)),
                          "busbw": _jnum(body.get("bus_bw"), "results[%d].%s.bus_bw" % (i, key)),
                          "wrong": _jnum(body.get("nwrong"), "results[%d].%s.nwrong" % (i, key))}
        res["rows"].append(row)
    oob = doc.get("out_of_bounds") or {}
    if "count" in oob:
        res["out_of_bounds"] = _jnum(oob["count"], "out_of_bounds.count")
    avg = doc.get("average_bus_bandwidth") or {}
    if "bandwidth" in avg:
        res["avg_busbw"] = _jnum(avg["bandwidth"], "average_bus_bandwidth.bandwidth")
        ok = avg.get("okay")
        res["avg_busbw_ok"] = ok if isinstance(ok, bool) else None
    res["errors"] = [str(e) for e in doc.get("errors") or []]
    return res
