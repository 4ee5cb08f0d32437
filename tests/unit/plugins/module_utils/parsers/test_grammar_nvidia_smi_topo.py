# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the nvidia-smi topo -m grammar (closed source: the layouts of the real
captures in nvidia_smi_topo.txt, old and new drivers): matrices printed that way read back
through ``_topo.parse``; near-misses are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _topo

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings
FAST = settings(max_examples=40, deadline=None)

LEGEND = ("Legend:\n\n  X    = Self\n"
          "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
          "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
          "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
          "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
          "  PIX  = Connection traversing at most a single PCIe bridge\n"
          "  NV#  = Connection traversing a bonded set of # NVLinks\n")
PCIE = ["PIX", "PXB", "PHB", "NODE", "SYS"]
# layouts: (NIC columns as NIC#, NUMA Affinity column, GPU NUMA ID column)
LAYOUTS = {"k80": (False, False, False), "old": (False, True, False), "legend": (True, True, False),
           "numa_id": (True, True, True)}


@st.composite
def systems(draw):
    n_gpu = draw(st.integers(1, 8))
    n_nic = draw(st.integers(0, 6))
    layout = draw(st.sampled_from(sorted(LAYOUTS)))
    nv = draw(st.sampled_from(["NV1", "NV2", "NV4", "NV8", "NV12", "NV18", None]))
    names = draw(st.lists(st.from_regex(r"\A(mlx5_|mlx4_|ibp|rocep)[0-9]{1,2}\Z"), min_size=n_nic, max_size=n_nic,
                          unique=True))
    rel = {}
    devices = ["GPU%d" % i for i in range(n_gpu)] + ["N%d" % i for i in range(n_nic)]
    for i, a in enumerate(devices):
        for b in devices[i + 1:]:
            code = nv if a.startswith("GPU") and b.startswith("GPU") and nv else draw(st.sampled_from(PCIE))
            rel[(a, b)] = rel[(b, a)] = code
    cpus = [draw(st.sampled_from(["", "0-47,96-143", "48-95", "0-11"])) for dummy in range(n_gpu)]
    numa = [draw(st.integers(0, 7)) for dummy in range(n_gpu)]
    return dict(n_gpu=n_gpu, names=names, layout=layout, rel=rel, cpus=cpus, numa=numa)


def _print(system, tabs, ansi):
    by_legend, numa_col, numa_id = LAYOUTS[system["layout"]]
    gpus = ["GPU%d" % i for i in range(system["n_gpu"])]
    nic_cols = ["NIC%d" % i if by_legend else name for i, name in enumerate(system["names"])]
    keys = gpus + ["N%d" % i for i in range(len(system["names"]))]
    labels = gpus + nic_cols
    head = "\t" + "\t".join(labels) + "\tCPU Affinity" + ("\tNUMA Affinity" if numa_col else "") + \
        ("\tGPU NUMA ID" if numa_id else "")
    if ansi:
        head = "\x1b[4m" + head + "\x1b[0m"
    rows = [head]
    for key, label in zip(keys, labels):
        cells = [" X " if key == other else system["rel"][(key, other)] for other in keys]
        row = label + "\t" + "\t".join(cells)
        if key.startswith("GPU"):
            index = int(key[3:])
            row += "\t" + system["cpus"][index] + ("\t%d" % system["numa"][index] if numa_col else "") + \
                ("\t\tN/A" if numa_id else "")
        else:
            row += "\t" + ("\t" if numa_col else "") + ("\t\t" if numa_id else "")
        rows.append(row)
    text = "\n".join(rows) + "\n\n" + LEGEND
    if by_legend and system["names"]:
        text += "\nNIC Legend:\n\n" + "".join("  NIC%d: %s\n" % (i, n) for i, n in enumerate(system["names"])) + "\n"
    return text if tabs else text.expandtabs(8)


@FAST
@given(systems(), st.booleans(), st.booleans())
def test_printed_matrices_read_back(system, tabs, ansi):
    topo = _topo.parse(_print(system, tabs, ansi))
    by_legend, numa_col, dummy = LAYOUTS[system["layout"]]
    assert [n["device"] for n in topo["nics"]] == system["names"]
    assert [g["name"] for g in topo["gpus"]] == ["GPU%d" % i for i in range(system["n_gpu"])]
    keys = ["GPU%d" % i for i in range(system["n_gpu"])] + ["N%d" % i for i in range(len(system["names"]))]
    names = keys[:system["n_gpu"]] + system["names"]
    for a, name_a in zip(keys, names):
        for b, name_b in zip(keys, names):
            assert topo["matrix"][name_a][name_b] == ("X" if a == b else system["rel"][(a, b)])
    for gpu in topo["gpus"]:
        cpus = system["cpus"][gpu["index"]]
        if tabs or numa_col:
            # without TABs an empty CPU Affinity is only recoverable when a NUMA value follows it
            assert gpu["cpu_affinity"] == (cpus or None)
        assert gpu["numa_affinity"] == (system["numa"][gpu["index"]] if numa_col else None)


@FAST
@given(systems(), st.booleans(), st.sampled_from(["drop_row", "bad_code", "drop_legend", "junk_after", "junk_before", "dup_row"]))
def test_near_misses_are_refused(system, tabs, how):
    lines = _print(system, True, False).split("\n")
    n_rows = system["n_gpu"] + len(system["names"])
    by_legend = LAYOUTS[system["layout"]][0]
    if how == "drop_row":
        del lines[n_rows]
    elif how == "bad_code":
        lines[1] = lines[1].replace(" X ", "XX", 1)
    elif how == "drop_legend":
        if not (by_legend and system["names"]):
            return
        lines = [ln for ln in lines if not ln.startswith("  NIC%d:" % (len(system["names"]) - 1))]
    elif how == "junk_after":
        lines.append("Topology matrix printed at 12:00")
    elif how == "junk_before":
        lines.insert(0, "GPU topology:")
    elif how == "dup_row":
        lines.insert(2, lines[1])
    text = "\n".join(lines)
    with pytest.raises(ValueError):
        _topo.parse(text if tabs else text.expandtabs(8))


@pytest.mark.parametrize("text", [
    "", "No devices were found\n",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
    "1a:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n\tNUMA node: 0\n",
    " \tGPU0\tGPU1\t\n GPU0\tX\tGNS\t\n GPU1\tGNS\tX\t\n",          # topo -p2p r: not -m
])
def test_other_outputs_are_refused(text):
    with pytest.raises(ValueError):
        _topo.parse(text)
