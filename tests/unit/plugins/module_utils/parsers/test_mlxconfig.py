# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mlxconfig parser: real samples (mlxconfig.txt) pinned, error outputs, tables generated from
mlxconfig's printing formats (hypothesis) read back, near-misses refused, value comparison and
argument vectors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxconfig as mc
from ansible_collections.rdma.fabric.tests.unit import samples

SAMPLES = samples.load("mlxconfig.txt")
FAST = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


def test_samples_present_and_cited():
    assert len(SAMPLES) >= 5
    for sample in SAMPLES.values():
        assert "source: " in sample.meta and "kind: " in sample.meta, sample.id


def test_mstconfig_set_ib_sriov_cni():
    r = mc.parse_set(SAMPLES["MLXCONFIG-IBSRIOVCNI-MSTCONFIG-SET-CX5"].raw)
    assert r["applied"] is True and r["reboot_needed"] is True and r["errors"] == []
    (dev,) = r["devices"]
    assert (dev["device"], dev["device_type"], dev["name"]) == ("0000:02:00.0", "ConnectX5", "MCX556A-ECA_Ax")
    assert dev["description"].startswith("ConnectX-5 VPI adapter card; EDR IB") and dev["description"].endswith("ROHS R6")
    assert dev["columns"] == ["next_boot", "new"]
    assert dev["params"] == {
        "SRIOV_EN": {"default": None, "current": None, "next_boot": "False(0)", "new": "True(1)", "modified": False},
        "NUM_OF_VFS": {"default": None, "current": None, "next_boot": "0", "new": "8", "modified": False},
    }


def test_mlxconfig_set_maas_cx6():
    r = mc.parse_set(SAMPLES["MLXCONFIG-MAAS2-SET-CX6-BOOT"].raw)
    assert r["applied"] and r["reboot_needed"]
    (dev,) = r["devices"]
    assert dev["device"] == "c2:00.0" and dev["device_type"] == "ConnectX6" and dev["name"] == "MCX653106A-HDA_Ax"
    assert [(n, p["next_boot"], p["new"]) for n, p in dev["params"].items()] == [
        ("BOOT_VLAN", "1", "0"), ("BOOT_LACP_DIS", "True(1)", "True(1)"), ("BOOT_VLAN_EN", "False(0)", "False(0)"),
        ("BOOT_UNDI_NETWORK_WAIT", "0", "30")]
    # the same text read as a query keeps the next-boot values and the New column
    q = mc.parse_query(SAMPLES["MLXCONFIG-MAAS2-SET-CX6-BOOT"].raw)
    assert q[0]["params"]["BOOT_UNDI_NETWORK_WAIT"]["next_boot"] == "0"


def test_e_query_table_fragment_arrays():
    (dev,) = mc.parse_query(SAMPLES["MLXCONFIG-SRIOVOP358-EQUERY-CX6LX-TABLE"].raw)
    assert dev["device"] is None and dev["columns"] == ["default", "current", "next_boot"]
    assert len(dev["params"]) == 12
    assert dev["params"]["MEMIC_SIZE_LIMIT"] == {"default": "_256KB(1)", "current": "_256KB(1)", "next_boot": "_256KB(1)",
                                                 "modified": False}
    assert dev["params"]["HOST_CHAINING_DESCRIPTORS"]["next_boot"] == "Array[0..7]"
    assert dev["params"]["ROCE_NEXT_PROTOCOL"]["current"] == "254"
    assert not any(p["modified"] for p in dev["params"].values())


def test_trimmed_paste_refused_then_read():
    raw = SAMPLES["MLXCONFIG-TERRENCEMIAO-QUERY-CX4-TRIMMED"].raw
    with pytest.raises(ValueError, match=r"'\.\.\.'"):
        mc.parse_query(raw)
    (dev,) = mc.parse_query(raw.replace("...\n", ""))
    assert dev["device"] == "/dev/mst/mt4115_pciconf0" and dev["name"] == "00KH925_Ax"
    assert dev["columns"] == ["next_boot"]
    want = {"LINK_TYPE_P1": "ETH(2)", "SRIOV_EN": "True(1)", "NUM_OF_VFS": "8"}
    assert {n: p["next_boot"] for n, p in dev["params"].items()} == want


def test_two_devices_modified_read_only_and_tlv_error():
    devs = mc.parse_query(SAMPLES["MLXCONFIG-RECON-EQUERY-TWO-DEVICES-RO"].raw)
    assert [d["device"] for d in devs] == ["0000:3b:00.0", "0000:c1:00.0"]
    first, second = devs
    assert first["params"]["LINK_TYPE_P1"] == {"default": "IB(1)", "current": "IB(1)", "next_boot": "ETH(2)", "modified": True}
    assert first["params"]["PCI_WR_ORDERING"]["current"] == "force_relax(1)"
    assert first["params"]["NUM_OF_VFS"]["default"] == "N/A"
    assert first["params"]["CNP_DSCP_P1"]["modified"] is False
    assert first["read_only"] == ["ROCE_CC_ALGORITHM_P1"] and first["errors"] == []
    assert "The '*' shows parameters with next value different from default/current value." in first["unparsed"]
    assert second["device_type"] == "BlueField3" and second["description"] == "N/A"
    assert second["params"]["INTERNAL_CPU_MODEL"]["next_boot"] == "EMBEDDED_CPU(1)"
    assert second["errors"] == ["Failed to query some of the TLVs:"]
    assert mc.errors(SAMPLES["MLXCONFIG-RECON-EQUERY-TWO-DEVICES-RO"].raw) == ["Failed to query some of the TLVs:"]


def test_set_failed_not_supported():
    raw = SAMPLES["MLXCONFIG-RECON-SET-FAILED-NOT-SUPPORTED"].raw
    r = mc.parse_set(raw)
    assert r["applied"] is False and r["reboot_needed"] is False
    assert r["errors"] == ["The Device doesn't support LINK_TYPE_P1 parameter"] == mc.errors(raw)
    assert r["devices"][0]["params"]["CNP_802P_PRIO_P1"]["new"] == "7"


def test_unknown_parameter_only_error():
    raw = SAMPLES["MLXCONFIG-RECON-UNKNOWN-PARAMETER"].raw
    assert mc.errors(raw) == ["Unknown Parameter ROCE_CC_PRIO_MASK"]
    with pytest.raises(ValueError, match="Unknown Parameter ROCE_CC_PRIO_MASK"):
        mc.parse_query(raw)
    assert mc.parse_set(raw) == {"devices": [], "applied": False, "reboot_needed": False,
                                 "errors": ["Unknown Parameter ROCE_CC_PRIO_MASK"]}


def test_interactive_answer_on_same_line_and_power_cycle():
    text = ("Configurations:                                          Next Boot       New\n"
            "        LINK_TYPE_P1                                IB(1)                ETH(2)              \n"
            "\n Apply new Configuration? (y/n) [n] : Applying... Done!\n"
            "-I- Please power cycle machine to load new configurations.\n")
    r = mc.parse_set(text)
    assert r["applied"] and r["reboot_needed"]


@pytest.mark.parametrize("text", [
    "", "   \n", "hello world\n", "Device type: ConnectX5\nsome unrelated text\n",
    "Configurations:                              Nxt Boot\n",
    "Configurations:                              Default         Current         Next Boot\n"
    "         LINK_TYPE_P1                        ETH(2)          ETH(2)\n",
    "Configurations:                              Next Boot\n         LINK_TYPE_P1   ETH(2)\n$ echo done\n",
    "Configurations:                              Next Boot       Default\n",
])
def test_refused(text):
    with pytest.raises(ValueError):
        mc.parse_query(text)


def test_refusal_names_the_line():
    with pytest.raises(ValueError, match="root@host"):
        mc.parse_query("root@host:~# mlxconfig q\n")


# ---- generated outputs (printf formats of mlxcfg_ui.cpp, layouts <= 4.25 and 4.26-4.35) ----

NAMES = st.from_regex(r"\A[A-Z][A-Z0-9_]{2,30}(?:_P[12])?\Z")
LABELS = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,12}\Z")
VALUES = st.one_of(st.integers(0, 2 ** 31).map(str), st.builds(lambda l, n: "%s(%d)" % (l, n), LABELS, st.integers(0, 255)),
                   st.just("N/A"), st.builds(lambda n: "Array[0..%d]" % n, st.integers(1, 63)))


def _render(devices, old):
    width, name_fmt = (16, "%s        %-36s") if old else (20, "%s%s     %-44s")
    out = []
    for index, (cols, rows) in enumerate(devices):
        out.append("\nDevice #%d:\n----------\n\n" % (index + 1))
        out.append(("%-" + str(width) + "s%-" + str(width) + "s\n") % ("Device type:", "ConnectX7"))
        out.append(("%-" + str(width) + "s%-" + str(width) + "s\n") % ("Description:", "NVIDIA ConnectX-7; 400G; x16"))
        out.append(("%-" + str(width) + "s%-" + str(width) + "s\n\n") % ("Device:", "0000:%02x:00.0" % index))
        labels = {"default": "Default", "current": "Current", "next_boot": "Next Boot"}
        out.append("Configurations:" + "".join("%22s" % labels[c] for c in cols) + "\n")
        for name, star, ro, values in rows:
            if old:
                line = name_fmt % ("*" if star else " ", name)
            else:
                line = name_fmt % ("*" if star else " ", "RO" if ro else "  ", name)
            used = 0
            for i, value in enumerate(values):
                if i and used >= width:
                    line += " "
                cell = ("%-" + str(width) + "s") % value
                line += cell
                used = len(cell)
            out.append(line + "\n")
    return "".join(out)


COLS = st.sampled_from([["next_boot"], ["default", "next_boot"], ["current", "next_boot"], ["default", "current", "next_boot"]])


@st.composite
def devices_strategy(draw):
    devices = []
    for _index in range(draw(st.integers(1, 3))):
        cols = draw(COLS)
        names = draw(st.lists(NAMES, min_size=1, max_size=8, unique=True))
        rows = [(n, draw(st.booleans()), draw(st.booleans()), [draw(VALUES) for _c in cols]) for n in names]
        devices.append((cols, rows))
    return devices


@FAST
@given(devices_strategy(), st.booleans())
def test_generated_tables_read_back(devices, old):
    parsed = mc.parse_query(_render(devices, old))
    assert len(parsed) == len(devices)
    for (cols, rows), dev in zip(devices, parsed):
        assert dev["columns"] == cols
        assert list(dev["params"]) == [r[0] for r in rows]
        for name, star, ro, values in rows:
            param = dev["params"][name]
            assert param["modified"] is star
            assert [param[c] for c in cols] == values
            assert (name in dev.get("read_only", [])) is (ro and not old)


@FAST
@given(devices_strategy(), st.booleans(), st.data())
def test_row_missing_a_column_refused(devices, old, data):
    text = _render(devices, old)
    lines = text.splitlines(True)
    rows = [i for i, line in enumerate(lines) if line.startswith((" ", "*")) and "Device" not in line]
    i = data.draw(st.sampled_from(rows))
    cut = lines[i].rstrip().rsplit(None, 1)[0] + "\n"
    if len(cut.split()) < 2:
        cut = "  x y z w v u t\n"
    lines[i] = cut
    with pytest.raises(ValueError):
        mc.parse_query("".join(lines))


@FAST
@given(devices_strategy(), st.sampled_from(["Configurations:   Defualt    Next Boot\n", "Configurations:   Next Boot  Next Boot\n",
                                            "Configurations:   Current   Default   Next Boot\n"]))
def test_garbled_header_refused(devices, header):
    text = _render(devices, False)
    start = text.index("Configurations:")
    end = text.index("\n", start) + 1
    with pytest.raises(ValueError):
        mc.parse_query(text[:start] + header + text[end:])


@FAST
@given(st.text(max_size=200))
def test_any_text_gives_result_or_clear_error(text):
    for function in (mc.parse_query, mc.parse_set):
        try:
            function(text)
        except ValueError as exc:
            assert str(exc)


@FAST
@given(st.lists(st.text(alphabet="abcdefghij klmnop.,;:=/", min_size=1, max_size=40), min_size=1, max_size=6))
def test_unrelated_text_refused(lines):
    text = "\n".join(line for line in lines) + "\n"
    if not text.strip() or any(line.strip().startswith(("-", "Done", "Nothing", "Applying", "Device", "Name",
                                                        "Description", "Configurations", "Param", "Query", "Rebooting",
                                                        "Received", "The ", "Apply", "Do you", "Reset")) for line in lines):
        return
    with pytest.raises(ValueError):
        mc.parse_query(text)


# ---- values and argv ----

@pytest.mark.parametrize("text, expected", [
    ("ETH(2)", ("ETH", 2)), ("True(1)", ("True", 1)), ("False(0)", ("False", 0)), ("force_relax(1)", ("force_relax", 1)),
    ("_256KB(1)", ("_256KB", 1)), ("5", (None, 5)), ("0x10", (None, 16)), ("0x1f(31)", ("0x1f", 31)),
    ("Array[0..7]", ("Array[0..7]", None)), ("N/A", ("N/A", None)), ("ETH", ("ETH", None)), (7, (None, 7)),
])
def test_split_value(text, expected):
    assert mc.split_value(text) == expected


@pytest.mark.parametrize("a, b", [
    ("ETH(2)", "ETH"), ("ETH(2)", "2"), ("ETH(2)", 2), ("ETH(2)", "eth"), ("True(1)", "True"), ("True(1)", "1"),
    ("True(1)", True), ("True", "1"), (True, "1"), ("true", True), ("False(0)", False), ("False", "0"), ("0x10", 16),
    ("8", 8), ("Array[0..7]", "array[0..7]"),
])
def test_same_value(a, b):
    first, second = b, a
    assert mc.same_value(a, b) and mc.same_value(first, second)


@pytest.mark.parametrize("a, b", [
    ("ETH(2)", "IB(1)"), ("ETH(2)", "1"), ("ETH(2)", "IB"), ("True(1)", False), ("True", "0"), ("8", 16), ("N/A", "0"),
    ("ETH", "2"), ("ETH(2)", None),
])
def test_not_same_value(a, b):
    first, second = b, a
    assert not mc.same_value(a, b) and not mc.same_value(first, second)


def test_argv():
    assert mc.set_argv("0000:3b:00.0", {"LINK_TYPE_P1": "ETH", "CNP_DSCP_P1": 48, "ADVANCED_PCI_SETTINGS": True}) == [
        "mlxconfig", "-d", "0000:3b:00.0", "-y", "set", "ADVANCED_PCI_SETTINGS=True", "CNP_DSCP_P1=48", "LINK_TYPE_P1=ETH"]
    assert mc.query_argv("/dev/mst/mt4119_pciconf0", ["ROCE_CC_PRIO_MASK_P1", "LINK_TYPE_P1"]) == [
        "mlxconfig", "-d", "/dev/mst/mt4119_pciconf0", "-e", "query", "LINK_TYPE_P1", "ROCE_CC_PRIO_MASK_P1"]
    assert mc.query_argv("0000:3b:00.0", []) == ["mlxconfig", "-d", "0000:3b:00.0", "-e", "query"]


@pytest.mark.parametrize("device, values", [
    ("", {"A": 1}), ("0000:3b:00.0 -y", {"A": 1}), ("0000:3b:00.0", {"A B": 1}), ("0000:3b:00.0", {"A": "1 2"}),
    ("0000:3b:00.0", {"A=B": 1}), ("0000:3b:00.0", {"A": ""}),
])
def test_argv_refuses(device, values):
    with pytest.raises(ValueError):
        mc.set_argv(device, values)
