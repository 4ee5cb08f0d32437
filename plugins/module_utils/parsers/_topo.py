# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``nvidia-smi topo -m`` and derive GPU to NIC rails from it.

Pure functions, standard library only (runs on the target). nvidia-smi is closed source:
there is no printing code to follow, so the grammar is the one every public capture in
``tests/unit/fixtures/samples/nvidia_smi_topo.txt`` shows (drivers from the K80/DGX-1 era
through R570/R575: TOPO-DOC-K80-MLX4-CPUAFF, TOPO-DOC-DGX1-V100, TOPO-REAL-OLDFMT-2GPU,
TOPO-REAL-A100-2GPU-OLDNIC, TOPO-REAL-A100-10NIC, TOPO-REAL-H100-NV18-8NIC,
TOPO-REAL-RTX6000ADA-4NIC, TOPO-REAL-2X5090-NONIC):

* a header line: an empty corner cell, then ``GPU#`` columns, NIC columns named ``NIC#``
  (drivers ~R470 and later, with a ``NIC Legend:`` block) or by device (``mlx5_0``,
  ``mlx4_0``: older drivers), then the trailing columns ``CPU Affinity`` (always),
  ``NUMA Affinity`` (~R418 and later) and ``GPU NUMA ID`` (~R525 and later);
* one row per column, in column order: the label, one relation per column (`` X `` on the
  diagonal; X SYS SOC NODE PHB PXB PIX NV#), the trailing cells, which may be empty (NIC
  rows, an empty CPU Affinity) and are preceded by an extra empty cell before GPU NUMA ID;
* a blank line, ``Legend:`` with ``CODE = text`` lines, and ``NIC Legend:`` with
  ``NIC#: device`` lines when the columns are ``NIC#``.

Cells are TAB separated; on a TTY the header is wrapped in ANSI underline escapes; pasted
copies often have TABs expanded to spaces and trailing whitespace trimmed, so rows are also
read on whitespace runs. ``parse`` is the strict reader (used by the corpus test): text
without the matrix, a line the tool cannot print, a row or legend that does not match the
header is a TopoParseError naming the line. ``parse_topo`` keeps its older contract (text
without a header gives empty lists: "No devices were found"); ``parse_topo(text,
require_gpus=True)`` (the facts module) reads the text once the same way and, when it holds
no GPU row, raises the strict reader's reason (the partial result on the error's ``topo``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# Distance ranks between a GPU and a NIC, nearest first. SOC is the pre-2017 name of SYS.
RELATION_RANK = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5, "SOC": 5}
_UNKNOWN_RANK = 99

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GPU_LABEL = re.compile(r"^GPU\d+\Z")
_LEGEND_LINE = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*\Z")
_RELATION = re.compile(r"^(X|SYS|SOC|NODE|PHB|PXB|PIX|NV\d+|N/A)\Z")
# Legend lines: "  X    = Self", "  NV#  = Connection traversing ...", old "X   = Self" at column 0.
_LEGEND_CODE = re.compile(r"^\s*(X|SYS|SOC|NODE|PHB|PXB|PIX|NV#)\s+=\s+\S.*\Z")
_NIC_COLUMN = re.compile(r"^NIC\d+\Z")
# Trailing columns whose headers contain spaces; renamed so a whitespace split keeps them whole.
_TRAILING_HEADERS = (("GPU NUMA ID", "gpu_numa_id"), ("CPU Affinity", "cpu_affinity"),
                     ("NUMA Affinity", "numa_affinity"))
_TRAILING_KEYS = [key for dummy, key in _TRAILING_HEADERS]


class TopoParseError(ValueError):
    pass


def strip_ansi(text):
    return _ANSI.sub("", text or "")


def natural_key(name):
    """Sort key that puts mlx5_2 before mlx5_10 (sysfs and show_gids list them the other way)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(name))]


def natural_sorted(names):
    return sorted(names, key=natural_key)


def relation_rank(code):
    return RELATION_RANK.get(code, _UNKNOWN_RANK)


def _is_header(line):
    if "\t" in line:
        cells = [cell.strip() for cell in line.split("\t")]
        return cells[0] == "" and any(_GPU_LABEL.match(c) for c in cells[1:])
    tokens = line.split()
    # Space-expanded paste: the header has no row label, so its first token is already GPU0.
    return bool(tokens) and line[:1].isspace() and _GPU_LABEL.match(tokens[0]) is not None


def _header_columns(line):
    """Device column names and trailing column keys of the header line, in order."""
    text = line
    for header, key in _TRAILING_HEADERS:
        text = text.replace(header, key)
    if "\t" in text:
        cells = [cell.strip() for cell in text.split("\t")][1:]
    else:
        cells = text.split()
    cells = [cell for cell in cells if cell]
    devices, trailing = [], []
    for cell in cells:
        if cell in _TRAILING_KEYS:
            trailing.append(cell)
        elif not trailing:
            devices.append(cell)
        # any other cell after the trailing headers: an unknown newer column, ignored
    return devices, trailing


def _split_row(line, n_devices, trailing):
    """Return (label, relation cells, trailing values dict) of one matrix row."""
    if "\t" in line:
        cells = [cell.strip() for cell in line.split("\t")]
        label, relations, rest = cells[0], cells[1:1 + n_devices], cells[1 + n_devices:]
        values = {}
        # "NUMA\t\tGPU NUMA ID": newer drivers put an empty cell before GPU NUMA ID.
        if "gpu_numa_id" in trailing and len(rest) > len(trailing):
            gpu_numa = [cell for cell in rest[trailing.index("gpu_numa_id"):] if cell]
            values["gpu_numa_id"] = gpu_numa[0] if gpu_numa else ""
            rest = rest[:trailing.index("gpu_numa_id")]
            plain = [key for key in trailing if key != "gpu_numa_id"]
        else:
            plain = trailing
        for key, cell in zip(plain, rest):
            values[key] = cell
        return label, relations, values
    tokens = line.split()
    label, relations, rest = tokens[0], tokens[1:1 + n_devices], tokens[1 + n_devices:]
    # Spaces lost the empty cells: align what is left on the right (CPU Affinity is the one
    # that goes missing, NIC rows have none at all).
    values = {}
    if rest:
        for key, cell in zip(trailing[-len(rest):], rest[-len(trailing):]):
            values[key] = cell
    return label, relations, values


def _none_if_blank(value):
    if value is None:
        return None
    value = value.strip()
    return None if value in ("", "N/A") else value


def _int_or_none(value):
    value = _none_if_blank(value)
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def parse_topo(text, require_gpus=False):
    """Parse ``nvidia-smi topo -m`` output.

    Returns ``{"gpus": [...], "nics": [...], "nic_legend": {...}, "matrix": {...}}``:
    ``gpus`` in GPU index order, each ``{"name": "GPU0", "index": 0, "cpu_affinity",
    "numa_affinity", "gpu_numa_id"}``; ``nics`` in column order, each ``{"column": "NIC0",
    "device": "mlx5_0"}``; ``matrix[row][column]`` holds the legend code with rows and
    columns named ``GPU#`` or by RDMA device (the legend resolved). Empty input or output
    without a GPU header gives empty lists. Raises TopoParseError on a malformed matrix.
    ``require_gpus``: a result with no GPU row raises TopoParseError instead, the message
    the strict ``parse`` gives for that text (``no matrix header ...``, ``no row for column(s)
    ...``), the lenient result on the error's ``topo`` attribute.
    """
    lines = strip_ansi(text).replace("\r", "").split("\n")
    legend = {}
    in_legend = False
    for line in lines:
        if line.strip() == "NIC Legend:":
            in_legend = True
            continue
        if in_legend:
            match = _LEGEND_LINE.match(line)
            if match:
                legend[match.group(1)] = match.group(2)
            elif line.strip():
                in_legend = False

    header_at = next((i for i, line in enumerate(lines) if _is_header(line)), None)
    result = {"gpus": [], "nics": [], "nic_legend": legend, "matrix": {}}
    if header_at is None:
        return _no_gpus(lines, result) if require_gpus else result
    columns, trailing = _header_columns(lines[header_at])

    def device_name(column):
        return legend.get(column, column)

    for column in columns:
        if not _GPU_LABEL.match(column):
            result["nics"].append({"column": column, "device": device_name(column)})

    for line in lines[header_at + 1:]:
        if not line.strip():
            break
        label, relations, values = _split_row(line, len(columns), trailing)
        if len(relations) != len(columns):
            raise TopoParseError("nvidia-smi topo -m row %r has %d relation cells, the header has %d columns"
                                 % (label, len(relations), len(columns)))
        for column, code in zip(columns, relations):
            if not _RELATION.match(code):
                raise TopoParseError("nvidia-smi topo -m row %r column %r: unknown relation %r"
                                     % (label, column, code))
        row = device_name(label)
        result["matrix"][row] = dict((device_name(column), code) for column, code in zip(columns, relations))
        if _GPU_LABEL.match(label):
            result["gpus"].append({
                "name": label,
                "index": int(label[3:]),
                "cpu_affinity": _none_if_blank(values.get("cpu_affinity")),
                "numa_affinity": _int_or_none(values.get("numa_affinity")),
                "gpu_numa_id": _int_or_none(values.get("gpu_numa_id")),
            })
    result["gpus"].sort(key=lambda gpu: gpu["index"])
    if require_gpus and not result["gpus"]:
        return _no_gpus(lines, result)
    return result


def _no_gpus(lines, result):
    """parse_topo(require_gpus=True) of a text with no GPU row: raise the strict reader's
    reason, the lenient result on the error's ``topo``."""
    try:
        _check(lines, _header_line(lines), result)
        raise TopoParseError("nvidia-smi topo -m: no GPU row in the matrix")
    except TopoParseError as exc:
        exc.topo = result
        raise


def nearest_nics(topo, gpu_name):
    """(best relation code, [devices at that distance]) for one GPU; (None, []) without NICs."""
    row = topo["matrix"].get(gpu_name, {})
    ranked = [(relation_rank(row.get(nic["device"])), nic["device"]) for nic in topo["nics"]
              if row.get(nic["device"]) is not None]
    if not ranked:
        return None, []
    best = min(rank for rank, dummy in ranked)
    if best == _UNKNOWN_RANK:
        return None, []
    devices = [device for rank, device in ranked if rank == best]
    return row[devices[0]], devices


def assign_rails(topo, usable=None):
    """Give each GPU, in GPU order, its nearest NIC.

    When several NICs tie (DGX A100: two NICs behind each PCIe switch shared by two GPUs),
    the least used one wins, then column order: GPU0 -> mlx5_0, GPU1 -> mlx5_1. ``usable``
    (a set of device names) restricts the candidates, e.g. to devices that exist in sysfs.
    Returns ``[{"gpu": "GPU0", "index": 0, "device": ..., "relation": ..., "nearest": [...]}]``
    (device None when the GPU has no NIC) and the set of compute devices (nearest to at
    least one GPU).
    """
    usage = {}
    rails, compute = [], set()
    order = dict((nic["device"], position) for position, nic in enumerate(topo["nics"]))
    restricted = {"gpus": topo["gpus"], "matrix": topo["matrix"],
                  "nics": [nic for nic in topo["nics"] if usable is None or nic["device"] in usable]}
    for gpu in topo["gpus"]:
        relation, candidates = nearest_nics(restricted, gpu["name"])
        compute.update(candidates)
        chosen = None
        if candidates:
            chosen = min(candidates, key=lambda dev: (usage.get(dev, 0), order[dev]))
            usage[chosen] = usage.get(chosen, 0) + 1
        rails.append({"gpu": gpu["name"], "index": gpu["index"], "device": chosen,
                      "relation": relation, "nearest": candidates})
    return rails, compute


def _refuse(number, line, why):
    raise TopoParseError("nvidia-smi topo -m line %d '%s': %s" % (number, line.strip()[:80], why))


def parse(text):
    """Strict ``nvidia-smi topo -m`` reader: ``parse_topo``'s result, or TopoParseError.

    Refused: no matrix header (empty text, "No devices were found", another tool's
    output), a line before the header, a row whose label is not a column or that repeats
    one, a column without its row, a ``NIC#`` column without its ``NIC Legend`` entry, and
    after the matrix any line that is not blank, ``Legend:``, ``NIC Legend:``, a legend
    entry or a ``NIC#: device`` entry."""
    lines = strip_ansi(text).replace("\r", "").split("\n")
    header_at = _header_line(lines)
    return _check(lines, header_at, parse_topo(text))


def _header_line(lines):
    """Index of the matrix header; TopoParseError naming the first line when there is none."""
    header_at = next((i for i, line in enumerate(lines) if _is_header(line)), None)
    if header_at is None:
        first = next(((n, line) for n, line in enumerate(lines, 1) if line.strip()), None)
        if first is None:
            raise TopoParseError("nvidia-smi topo -m: empty output (expected the GPU topology matrix)")
        _refuse(first[0], first[1], "no matrix header (a TAB or blank corner cell, then GPU0 ...): "
                                    "not 'nvidia-smi topo -m' output")
    return header_at


def _check(lines, header_at, result):
    """The strict reader's checks of the lines around ``parse_topo``'s result: the result, or
    TopoParseError naming the line."""
    for number, line in enumerate(lines[:header_at], 1):
        if line.strip():
            _refuse(number, line, "text before the matrix header (nvidia-smi prints the header first)")
    columns, dummy = _header_columns(lines[header_at])
    seen = []
    at = header_at + 1
    while at < len(lines) and lines[at].strip():
        label = lines[at].split("\t")[0].strip() if "\t" in lines[at] else lines[at].split()[0]
        if label not in columns:
            _refuse(at + 1, lines[at], "row %r is not a column of the header %s" % (label, columns))
        if label in seen:
            _refuse(at + 1, lines[at], "row %r printed twice" % label)
        seen.append(label)
        at += 1
    missing = [column for column in columns if column not in seen]
    if missing:
        raise TopoParseError("nvidia-smi topo -m: no row for column(s) %s (cut-off matrix)" % ", ".join(missing))
    for number, line in enumerate(lines[at:], at + 1):
        stripped = line.strip()
        if not stripped or stripped in ("Legend:", "NIC Legend:") or _LEGEND_CODE.match(line) \
                or _LEGEND_LINE.match(line):
            continue
        _refuse(number, line, "not a legend line (nvidia-smi prints only 'Legend:' and 'NIC Legend:' blocks "
                              "after the matrix)")
    unnamed = [c for c in columns if _NIC_COLUMN.match(c) and c not in result["nic_legend"]]
    if unnamed:
        raise TopoParseError("nvidia-smi topo -m: column(s) %s without a 'NIC Legend:' entry (cut-off output)"
                             % ", ".join(unnamed))
    return result
