# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``ethtool -S IF`` parser (fabric health: pause frames, discards, symbol errors).

Follows ethtool ``ethtool.c`` ``do_gnicstats`` / ``dump_stats`` (git.kernel.org
network/ethtool, unchanged from 3.x to 6.x: ``printf("     %.*s: %llu\\n", ETH_GSTRING_LEN,
name, value)`` after ``NIC statistics:``) and the mlx5 counter names of the kernel's
``drivers/net/ethernet/mellanox/mlx5/core/en_stats.c`` (Linux 4.x-6.x, MLNX_OFED 4-24);
samples ``tests/unit/fixtures/samples/ethtool_S_mlx5.txt``. Layout:

* a first line ``NIC statistics:``, then one counter per line, ``5 spaces + name + ': ' + u64``
  (decimal, no separators). Pasted copies may turn the indent into a TAB or other spaces:
  any leading whitespace is accepted.
* names are driver strings and may hold spaces, dots, dashes or brackets; one mlx5 kernel
  printed ``tx_pause_storm_warning_events `` with a trailing space: the name is everything
  before the LAST ``': '``, stripped.
* errors go to stderr with rc 94 (``no stats available``) or 96 (``Cannot get stats strings
  information: ...``); given as text they are an error here, never "no counters".
* support-bundle annotations (``$ command``, ``[rc=N]``) are skipped.

Any other line, a value that is not an unsigned decimal, a repeated name or a text without
the header or without a single counter raises ValueError naming the line. Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

HEADER = "NIC statistics:"
_COUNTER = re.compile(r"\s+(?P<name>\S.*?)\s*:\s*(?P<value>\S+)\s*\Z")
_ANNOTATION = re.compile(r"\$ .*|\[rc=-?\d+\]\s*\Z")
_U64 = re.compile(r"\d{1,20}\Z")


def parse(text, source="ethtool -S output"):
    """``ethtool -S IF`` text -> {counter name: int}."""
    counters = {}
    header = False
    for number, line in enumerate((text or "").splitlines(), 1):
        if not line.strip() or _ANNOTATION.match(line.strip()):
            continue
        if line.strip() == HEADER and not line[0].isspace():
            if header:
                raise ValueError("%s line %d %r: a second '%s' header (two outputs pasted together?)"
                                 % (source, number, line, HEADER))
            header = True
            continue
        if not header:
            raise ValueError("%s line %d %r: not 'ethtool -S' output (it starts with '%s')"
                             % (source, number, line.strip()[:80], HEADER))
        match = _COUNTER.match(line)
        if not match:
            raise ValueError("%s line %d %r: not an indented 'name: value' counter line" % (source, number, line[:80]))
        name, value = match.group("name"), match.group("value")
        if not _U64.match(value) or int(value) >= 2 ** 64:
            raise ValueError("%s line %d %r: counter %s=%r is not an unsigned 64-bit decimal"
                             % (source, number, line.strip()[:80], name, value))
        if name in counters:
            raise ValueError("%s line %d: counter %r appears twice" % (source, number, name))
        counters[name] = int(value)
    if not header:
        raise ValueError("%s: empty, no '%s' header (expected 'ethtool -S IF' output)" % (source, HEADER))
    if not counters:
        raise ValueError("%s: '%s' without a single counter" % (source, HEADER))
    return counters


# Counters that fabric health judges, by meaning. ``rx_prioN_pause`` exists only for
# PFC-enabled priorities; ``*_global_pause`` only with link-level pause.
_PRIO_PAUSE = re.compile(r"(?P<dir>rx|tx)_prio(?P<prio>[0-7])_pause\Z")


def pause_frames(counters):
    """{"rx": n, "tx": n, "per_priority": {prio: {"rx": n, "tx": n}}} summed over the
    per-priority and global pause counters that the port has."""
    out = {"rx": 0, "tx": 0, "per_priority": {}}
    for name, value in counters.items():
        match = _PRIO_PAUSE.match(name)
        if match:
            entry = out["per_priority"].setdefault(int(match.group("prio")), {"rx": 0, "tx": 0})
            entry[match.group("dir")] += value
            out[match.group("dir")] += value
        elif name in ("rx_global_pause", "tx_global_pause"):
            out[name[:2]] += value
    return out
