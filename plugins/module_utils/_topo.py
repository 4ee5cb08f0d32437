# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``nvidia-smi topo -m`` and derive GPU to NIC rails from it.

Pure functions, standard library only (runs on the target). Layout rules (samples file
``nvidia_smi_topo.txt``): TAB separated with an empty corner cell, diagonal `` X ``,
NIC columns named ``NIC#`` with a ``NIC Legend:`` block on newer drivers or named by
device on older ones, trailing ``CPU Affinity`` / ``NUMA Affinity`` / optional
``GPU NUMA ID`` columns whose cells may be empty, ANSI escapes on a TTY, and pasted copies
with TABs expanded to spaces.
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


def parse_topo(text):
    """Parse ``nvidia-smi topo -m`` output.

    Returns ``{"gpus": [...], "nics": [...], "nic_legend": {...}, "matrix": {...}}``:
    ``gpus`` in GPU index order, each ``{"name": "GPU0", "index": 0, "cpu_affinity",
    "numa_affinity", "gpu_numa_id"}``; ``nics`` in column order, each ``{"column": "NIC0",
    "device": "mlx5_0"}``; ``matrix[row][column]`` holds the legend code with rows and
    columns named ``GPU#`` or by RDMA device (the legend resolved). Empty input or output
    without a GPU header gives empty lists. Raises TopoParseError on a malformed matrix.
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
        return result
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
    return result


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
