# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from mlxconfig's printing code (Mellanox/mstflint mlxconfig/mlxcfg_ui.cpp
printOpening, printConfHeader, printSingleParam/printValue; the <= 4.25 and 4.26-4.35 widths):
queries it could print are read back, near-misses are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxconfig

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings
SET = settings(max_examples=40, deadline=None)

# (field width, header widths, blanks before a name, name width, value width) per layout
LAYOUTS = {"4.25": (16, (16, 36, 16, 18), 9, 36, 16), "4.26": (20, (20, 39, 21, 23), 8, 44, 20)}
WORDS = ["True(1)", "False(0)", "ETH(2)", "IB(1)", "Array[0..7]", "force_relax(1)", "N/A", "MEMIC_ATOMIC_ENABLE(2)"]
VALUES = st.one_of(st.integers(0, 65535).map(str), st.sampled_from(WORDS))
NAMES = st.from_regex(r"\A[A-Z][A-Z0-9_]{2,30}\Z")


@st.composite
def queries(draw):
    layout = draw(st.sampled_from(sorted(LAYOUTS)))
    field, head, blanks, name_w, value_w = LAYOUTS[layout]
    extended = draw(st.booleans())
    labels = ["Default", "Current", "Next Boot"] if extended else ["Next Boot"]
    device = draw(st.sampled_from(["0000:3b:00.0", "c2:00.0", "/dev/mst/mt4125_pciconf0"]))
    lines = ["", "Device #1:", "----------", "",
             "%-*s%-*s" % (field, "Device type:", field, "ConnectX6DX"),
             "%-*s%-*s" % (field, "Name:", field, "MCX623106AN-CDA_Ax"),
             "%-*s%s" % (field, "Description:", "ConnectX-6 Dx EN adapter card; 100GbE; Dual-port QSFP56; PCIe 4.0 x16"),
             "%-*s%-*s" % (field, "Device:", field, device), ""]
    header = "%-*s" % (head[0], "Configurations:")
    for label, width in zip(labels, head[1:][-len(labels):]):
        header += "%*s" % (width, label)
    lines.append(header)
    params = {}
    for name in draw(st.lists(NAMES, min_size=1, max_size=8, unique=True)):
        values = [draw(VALUES) for dummy in labels]
        star = extended and values[-1] != values[0]
        prefix = ("*" if star else "") + " " * (blanks - (1 if star else 0))
        lines.append(prefix + "%-*s" % (name_w, name) + " ".join("%-*s" % (value_w, v) for v in values))
        params[name] = dict(zip(labels, values))
    if extended:
        lines.append("The '*' shows parameters with next value different from default/current value.")
    return "\n".join(lines) + "\n", device, params


@SET
@given(queries())
def test_queries_read_back(case):
    text, device, params = case
    [got] = _mlxconfig.parse_query(text)
    assert got["device"] == device
    assert sorted(got["params"]) == sorted(params)
    for name, values in params.items():
        assert got["params"][name]["next_boot"] == values["Next Boot"]
        if "Default" in values:
            assert got["params"][name]["default"] == values["Default"]
            assert got["params"][name]["current"] == values["Current"]


@SET
@given(queries(), st.sampled_from([
    "...",
    "        SRIOV_EN",                                  # a row without its values
    "        NUM_OF_VFS                                  8                    8                    8                    8   ",
    "some unrelated text in the table",
]))
def test_near_misses_in_the_table_are_refused(case, bad):
    text = case[0]
    lines = text.rstrip("\n").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Configurations:")) + 1
    lines.insert(at, bad)
    with pytest.raises(ValueError):
        _mlxconfig.parse_query("\n".join(lines) + "\n")


@pytest.mark.parametrize("text", ["", "\n", "hello\n", "-E- Failed to open the device\n",
                                  "Image type:            FS4\nFW Version:            28.39.1002\n"])
def test_no_device_is_refused(text):
    with pytest.raises(ValueError):
        _mlxconfig.parse_query(text)
