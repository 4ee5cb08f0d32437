# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The acceptance check kinds: one row per perftest test the fabric test can run on a rail.

A kind is one row of ``ROWS`` and nothing else: the perftest module's ``kinds`` choices, the
command lines (``_perftest_run.plan``), the figures read from the output (``figures``), the
threshold keys of ``fabric_test_thresholds`` and their defaults (``_acceptance.thresholds``),
the checks, rows and expected values of the fabric test (``areas/fabric_test.py``), the
loopback variant and the docs table of docs/fabric_test.md ("Check kinds") all derive from it.
The module's documentation and the role's argument spec cannot import Python: a unit test holds
their ``choices`` to ``NAMES`` (tests/unit/plugins/module_utils/acceptance/test_acceptance_kinds.py).

A row:

- ``name``: the kind as users write it (``fabric_test_kinds``, the perftest module's ``kinds``);
- ``tool``: the perftest binary; ``verb``: its RDMA verb (what perftest's parser refuses depends on it);
- ``table``: ``bw`` or ``lat``, the perftest result table the figure comes from;
- ``argv``: the arguments besides device, port, TCP port, ``-F``, GID, GPU and peer;
  ``duration``: whether ``-D DURATION`` applies (perftest's duration mode prints no typical
  latency, so the latency test runs its default 1000 iterations);
- ``measures``: the sides whose printed figure is their own measurement, the one read by default
  first. perftest's ``ib_write_bw``/``ib_read_bw`` server measures nothing: in half-duplex mode it
  receives the client's report (``xchg_bw_reports``) and prints it as its own; with ``ib_send_bw``
  the receiver (the server) counts what arrived and the sender its completions, both measure
  (perftest src/write_bw.c, read_bw.c, send_bw.c at 26.04). Who witnesses a rail: where one end of
  a pair is known-good, that end runs a side that measures every kind of the pair and its figure
  is the row's; a figure only the candidate printed never admits it;
- ``figure``/``unit``/``better``: the record key of the figure, its unit, ``higher`` or ``lower``;
- ``limit``: the threshold the figure is judged against (a key of ``_acceptance.thresholds``);
  ``fraction``: the key that sets ``limit`` as a share of the port's rate (bandwidth), with its
  ``fraction_default``; ``inherit``: the kind whose bandwidth threshold applies where no layer sets
  this kind's own keys; ``limit_by_link``: a default per link type (latency);
- ``check``/``loopback_check``: the check names of the pair test and of the loopback test (server
  and client on one node; None: the kind has no loopback variant);
- ``default``: run when ``fabric_test_kinds`` is not set;
- ``refuses``: perftest options its parser refuses for this test (``-x`` events on WRITE, ...);
- ``doc``: the line of the docs table.

To add a kind: a row here, its name in the ``choices`` of ``plugins/modules/perftest.py`` and of
``roles/fabric_test/meta/argument_specs.yml``, its line in docs/fabric_test.md (the tests say
where these disagree).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

BW_SIZE = 1048576      # azurehpc-health-checks' ib_write_bw -s $((1*1024*1024))
BW_QPS = 2             # oci-hpc's ib_write_bw -F -q 2 -x 3
LAT_SIZE = 2           # perftest's default for latency tests
_BW_ARGV = ("-s", str(BW_SIZE), "-q", str(BW_QPS), "--report_gbits")
# what perftest's parser refuses by test type and by verb (src/perftest_parameters.c parser())
_BW_REFUSES = {"C": "Available only on Latency tests", "H": "Available only on Latency tests",
               "U": "Available only on Latency tests"}
_LAT_REFUSES = {"b": "Bidirectional is only available in BW test", "N": "NoPeak only valid for BW tests",
                "q": "more than one QP only in BW tests (the module sets -q for bandwidth kinds only)"}
_WRITE_REFUSES = {"X": "Events feature not available on WRITE verb",
                  "g": "MultiCast feature only available on SEND verb",
                  "o": "Setting Outstanding reads only available on READ verb"}
# refused for every kind
REFUSES_ALL = {"A": "atomic type only for ATOMIC", "G": "RSS isn't supported", "h": "prints the help and exits",
               "V": "prints the version and exits"}


def _merge(*dicts):
    out = {}
    for item in dicts:
        out.update(item)
    return out


ROWS = (
    {"name": "bw", "tool": "ib_write_bw", "verb": "RDMA_Write", "table": "bw", "argv": _BW_ARGV, "duration": True,
     "measures": ("client",), "figure": "bw_gbps", "unit": "Gb/s", "better": "higher",
     "limit": "bw_min_gbps", "fraction": "bw_fraction", "fraction_default": 0.9, "inherit": None,
     "limit_by_link": None, "check": "perftest.write_bw", "loopback_check": "perftest.loopback_write_bw",
     "default": True, "refuses": _merge(_BW_REFUSES, _WRITE_REFUSES),
     "doc": "RDMA write bandwidth, 1 MiB messages, 2 QPs, `-D` seconds; the client measures (the server prints "
            "the client's report)"},
    {"name": "lat", "tool": "ib_write_lat", "verb": "RDMA_Write", "table": "lat", "argv": ("-s", str(LAT_SIZE)),
     "duration": False, "measures": ("client", "server"), "figure": "lat_typical_us", "unit": "us", "better": "lower",
     "limit": "lat_max_us", "fraction": None, "fraction_default": None, "inherit": None,
     "limit_by_link": {"IB": 2.5, "Ethernet": 5.0}, "check": "perftest.write_lat",
     "loopback_check": "perftest.loopback_write_lat", "default": True,
     "refuses": _merge(_LAT_REFUSES, _WRITE_REFUSES),
     "doc": "RDMA write latency, 2-byte messages, 1000 iterations; typical (median) latency; both sides measure"},
    {"name": "send_bw", "tool": "ib_send_bw", "verb": "Send", "table": "bw", "argv": _BW_ARGV, "duration": True,
     "measures": ("server", "client"), "figure": "bw_gbps", "unit": "Gb/s", "better": "higher",
     "limit": "send_bw_min_gbps", "fraction": "send_bw_fraction", "fraction_default": None, "inherit": "bw",
     "limit_by_link": None, "check": "perftest.send_bw", "loopback_check": "perftest.loopback_send_bw",
     "default": False, "refuses": _merge(_BW_REFUSES, {"o": _WRITE_REFUSES["o"]}),
     "doc": "send/receive bandwidth (two-sided, receive buffers posted), 1 MiB messages, 2 QPs, `-D` seconds; "
            "the receiver (server) measures what arrived, the sender its completions"},
    {"name": "read_bw", "tool": "ib_read_bw", "verb": "RDMA_Read", "table": "bw", "argv": _BW_ARGV, "duration": True,
     "measures": ("client",), "figure": "bw_gbps", "unit": "Gb/s", "better": "higher",
     "limit": "read_bw_min_gbps", "fraction": "read_bw_fraction", "fraction_default": None, "inherit": "bw",
     "limit_by_link": None, "check": "perftest.read_bw", "loopback_check": "perftest.loopback_read_bw",
     "default": False, "refuses": _merge(_BW_REFUSES, {"g": _WRITE_REFUSES["g"]}),
     "doc": "RDMA read bandwidth (data from the server to the client), 1 MiB messages, 2 QPs, `-D` seconds; "
            "the client measures (the server prints the client's report)"},
)

NAMES = tuple(row["name"] for row in ROWS)
KINDS = dict((row["name"], row) for row in ROWS)
DEFAULT = [row["name"] for row in ROWS if row["default"]]
TOOLS = tuple(row["tool"] for row in ROWS)
TOOL = dict((row["name"], row["tool"]) for row in ROWS)
CHECKS = dict((row["name"], row["check"]) for row in ROWS)
LOOPBACK_CHECKS = dict((row["name"], row["loopback_check"]) for row in ROWS if row["loopback_check"])
SIDES = ("client", "server")


# the threshold keys, each once: {key: {"type": "fraction"|"floor"|"ceiling", "unit", "kinds"}};
# nccl-tests' bus bandwidth (GB/s, the nccl_test module's figure) is the one key of no perftest kind
def _threshold_keys(rows):
    keys = {"nccl_busbw_min_gbps": {"type": "floor", "unit": "GB/s", "kinds": ()}}
    for item in rows:
        if item["fraction"]:
            keys.setdefault(item["fraction"], {"type": "fraction", "unit": "", "kinds": ()})
        keys.setdefault(item["limit"], {"type": "floor" if item["better"] == "higher" else "ceiling",
                                        "unit": item["unit"], "kinds": ()})
        for key in (item["fraction"], item["limit"]):
            if key:
                keys[key]["kinds"] += (item["name"],)
    return keys


THRESHOLD_KEYS = _threshold_keys(ROWS)
# the keys one layer may set, in a fixed order (the kinds' order, then NCCL)
LAYER_KEYS = tuple(key for row in ROWS for key in (row["fraction"], row["limit"]) if key) + ("nccl_busbw_min_gbps",)
# the keys of the loopback layer: those of the kinds with a loopback variant
LOOPBACK_KEYS = tuple(key for row in ROWS if row["loopback_check"] for key in (row["fraction"], row["limit"]) if key)


def row(kind):
    """The row of ``kind``; ValueError naming the kinds there are."""
    if kind not in KINDS:
        raise ValueError("kind %r: expected one of %s" % (kind, ", ".join(NAMES)))
    return KINDS[kind]


def by_check(check):
    """``(row, loopback)`` of a check name (``perftest.write_bw``, ``perftest.loopback_write_bw``), or (None, None)."""
    for item in ROWS:
        if check == item["check"]:
            return item, False
        if check == item["loopback_check"]:
            return item, True
    return None, None


def check_of(kind, loopback=False):
    item = row(kind)
    return item["loopback_check"] if loopback else item["check"]


def tool_argv(kind, duration):
    """The kind's own arguments (``-s``, ``-q``, ``-D``, ``--report_gbits``), in perftest's order of our
    command lines: size and QPs, duration, units."""
    item = row(kind)
    argv = list(item["argv"])
    if item["duration"]:
        extra = ["-D", str(duration)]
        if "--report_gbits" in argv:
            at = argv.index("--report_gbits")
            argv[at:at] = extra
        else:
            argv += extra
    return argv


def refused(kinds, key):
    """``(tool, why)`` when one of ``kinds`` refuses the perftest option ``key`` (``-C``: ``C``), else None."""
    for kind in kinds:
        why = row(kind)["refuses"].get(key) or REFUSES_ALL.get(key)
        if why:
            return row(kind)["tool"], why
    return None


def witness_side(kinds):
    """The side a known-good node runs so that it measures every kind of ``kinds``: the first side,
    in the kinds' own order of preference, that measures them all; None when no side does."""
    order = []
    for kind in kinds:
        for side in row(kind)["measures"]:
            if side not in order:
                order.append(side)
    for side in order:
        if all(side in row(kind)["measures"] for kind in kinds):
            return side
    return None


def figure_side(kind, witness=None):
    """The side whose figure a row reads: the known-good end's side (``witness``) where it measures
    this kind, else the kind's first measuring side. None when the witness's side does not measure
    (the row cannot be judged: a figure the candidate alone printed)."""
    measures = row(kind)["measures"]
    if witness is not None:
        return witness if witness in measures else None
    return measures[0]


def passes(kind, figure, thr):
    """Whether ``figure`` meets the kind's threshold in ``thr`` (False when either is missing)."""
    item = row(kind)
    limit = (thr or {}).get(item["limit"])
    if not isinstance(figure, (int, float)) or isinstance(figure, bool) or limit is None:
        return False
    return figure >= limit if item["better"] == "higher" else figure <= limit


def _num(value):
    if isinstance(value, float):
        return ("%.2f" % value).rstrip("0").rstrip(".")
    return str(value)


def expected(kind, thr):
    """``>= 90 Gb/s``, ``<= 2.5 us``: what the kind's figure must be."""
    item = row(kind)
    return "%s %s %s" % (">=" if item["better"] == "higher" else "<=", _num((thr or {}).get(item["limit"])),
                         item["unit"])


def docs_table():
    """The docs/fabric_test.md table of the kinds, one line per kind (a test holds the page to it)."""
    lines = ["| kind | tool | checks (pair, loopback) | figure | measured by | threshold | default | what |",
             "|---|---|---|---|---|---|---|---|"]
    for item in ROWS:
        limit = "`%s`" % item["limit"]
        if item["fraction"]:
            limit += " or `%s` x port rate" % item["fraction"]
        if item["inherit"]:
            limit += ", else `%s`'s" % item["inherit"]
        if item["limit_by_link"]:
            limit += ", default %s" % ", ".join("%s %s" % (_num(v), k) for k, v in sorted(item["limit_by_link"].items()))
        elif item["fraction_default"]:
            limit += ", default %s" % _num(item["fraction_default"])
        lines.append("| `%s` | `%s` | `%s`, `%s` | `%s` (%s, %s is better) | %s | %s | %s | %s |" % (
            item["name"], item["tool"], item["check"], item["loopback_check"] or "-", item["figure"], item["unit"],
            item["better"], " and ".join(item["measures"]), limit, "yes" if item["default"] else "no", item["doc"]))
    return "\n".join(lines)
