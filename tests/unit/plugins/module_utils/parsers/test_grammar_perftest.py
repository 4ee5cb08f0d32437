# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from perftest's printing code (linux-rdma/perftest src/perftest_parameters.c
ctx_print_test_info / print_report_bw / print_report_lat, perftest_parameters.h REPORT_FMT*,
perftest_communication.c ctx_print_pingpong_data): outputs it could print are read back,
near-misses are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _perftest

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings

DASHES = "-" * 87
SET = settings(max_examples=40, deadline=None)


def _setting(key, value):
    return " %-16s: %s" % (key, value) if len(key) < 16 else " %s: %s" % (key, value)


@st.composite
def bw_outputs(draw):
    verb = draw(st.sampled_from(["Send", "RDMA_Write", "RDMA_Read"]))
    units = draw(st.sampled_from(["MB/sec", "MiB/sec", "Gb/sec"]))
    roce = draw(st.booleans())
    device = draw(st.from_regex(r"\Amlx5_(?:[0-9]|1[0-7]|bond_0)\Z"))
    gid_index = draw(st.integers(0, 15))
    new = draw(st.booleans())  # 4.5+: PCIe relax order / ibv_wr* API lines
    lines = [DASHES, "                    %s BW Test" % verb,
             " Dual-port       : OFF\t\tDevice         : %s" % device,
             " Number of qps   : %d\t\tTransport type : IB" % draw(st.integers(1, 16)),
             " Connection type : RC\t\tUsing SRQ      : OFF"]
    if new:
        lines += [" PCIe relax order: %s" % draw(st.sampled_from(["ON", "OFF", "Unsupported"])),
                  " ibv_wr* API     : %s" % draw(st.sampled_from(["ON", "OFF"]))]
    lines += [" TX depth        : 128", " CQ Moderation   : 100", " Mtu             : %d[B]" % draw(st.sampled_from([1024, 4096])),
              " Link type       : %s" % ("Ethernet" if roce else "IB")]
    if roce:
        lines.append(" GID index       : %d" % gid_index)
    lines += [" Max inline data : 0[B]", " rdma_cm QPs\t : OFF", " Data ex. method : Ethernet", DASHES]
    qpn = draw(st.integers(0, 0xffffff))
    lines.append(" local address: LID %s QPN %#06x PSN %#06x RKey %#08x VAddr %#016x"
                 % ("0000" if roce else "%#04x" % draw(st.integers(1, 0xbfff)), qpn, draw(st.integers(1, 0xffffff)),
                    draw(st.integers(1, 0xffffffff)), draw(st.integers(0x10000, 2 ** 47))))
    ip = draw(st.lists(st.integers(0, 255), min_size=4, max_size=4))
    if roce:
        lines.append(" GID: " + ":".join("%02d" % b for b in [0] * 10 + [255, 255] + ip))
    lines += [DASHES, " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]" % (units, units)]
    rows = []
    for exp in sorted(draw(st.sets(st.integers(1, 23), min_size=1, max_size=6))):
        size, iters = 2 ** exp, draw(st.integers(1, 10 ** 6))
        peak, avg = draw(st.floats(0, 400, allow_nan=False)), draw(st.floats(0, 400, allow_nan=False))
        rate = draw(st.floats(0, 100, allow_nan=False))
        if units == "Gb/sec" and avg < 0.1:  # REPORT_FMT_EXT
            lines.append(" %-7d    %-10d     %-7.6f            %-7.6f            %-7.6f" % (size, iters, peak, avg, rate))
        else:
            lines.append(" %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f" % (size, iters, peak, avg, rate))
        rows.append((size, iters, avg))
    lines.append(DASHES)
    return "\n".join(lines) + "\n", dict(verb=verb, units=units, device=device, roce=roce, gid=gid_index, qpn=qpn,
                                         ip=ip, rows=rows)


@SET
@given(bw_outputs())
def test_bw_outputs_read_back(case):
    text, want = case
    res = _perftest.parse(text)
    assert res["test"] == "%s BW" % want["verb"] and res["kind"] == "bw"
    assert res["units"] == want["units"] and res["device"] == want["device"]
    assert res["link_type"] == ("Ethernet" if want["roce"] else "IB")
    assert res["gid_index"] == (want["gid"] if want["roce"] else None)
    assert res["local"]["qpn"] == want["qpn"]
    if want["roce"]:
        assert ipaddress.IPv6Address(res["local"]["gid"]).ipv4_mapped == ipaddress.IPv4Address(bytes(bytearray(want["ip"])))
    assert [(r["bytes"], r["iterations"]) for r in res["rows"]] == [(s, i) for s, i, _a in want["rows"]]
    for row, (_s, _i, avg) in zip(res["rows"], want["rows"]):
        assert abs(row["bw_average"] - avg) <= 0.006


@st.composite
def lat_outputs(draw):
    nine = draw(st.booleans())  # 9 columns since 4.4-0.8
    head = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
    if nine:
        head += "    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
    lines = [DASHES, "                    RDMA_Write Latency Test", " Dual-port       : OFF\t\tDevice         : mlx5_0",
             " Number of qps   : 1\t\tTransport type : IB", " Connection type : RC\t\tUsing SRQ      : OFF",
             " Mtu             : 4096[B]", " Link type       : IB", " Max inline data : 220[B]", " rdma_cm QPs\t : OFF",
             " Data ex. method : Ethernet", DASHES, head]
    sizes = sorted(draw(st.sets(st.integers(1, 23), min_size=1, max_size=5)))
    figures = []
    for exp in sizes:
        vals = [draw(st.floats(0.5, 5000, allow_nan=False)) for dummy in range(7 if nine else 3)]
        figures.append(vals)
        lines.append((" %-7d %-10d" % (2 ** exp, 1000)) + "".join("     %-7.2f" % v for v in vals))
    lines.append(DASHES)
    return "\n".join(lines) + "\n", nine, [2 ** e for e in sizes], figures


@SET
@given(lat_outputs())
def test_lat_outputs_read_back(case):
    text, nine, sizes, figures = case
    res = _perftest.parse(text)
    assert res["kind"] == "lat" and res["units"] == "usec"
    assert [r["bytes"] for r in res["rows"]] == sizes
    for row, vals in zip(res["rows"], figures):
        assert abs(row["t_min"] - vals[0]) <= 0.006
        assert (row["p99_9"] is not None) == nine


@SET
@given(bw_outputs(), st.sampled_from([
    " 65536      5000           12.3.4              11.1\t\t   0.1",   # a number printf cannot print
    " 65536      5000           12.34",                                  # a row cut short
    " #bytes     #iterations    BW peak[KB/sec]    BW average[KB/sec]   MsgRate[Mpps]",
    " local address: LID 0x01 QPN 0x0048",
    " GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:300:01",
    "Segmentation fault (core dumped) in a wrapper script",
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1",
]))
def test_near_misses_are_refused(case, bad):
    text, _want = case
    lines = text.splitlines()
    lines.insert(len(lines) - 1, bad)
    with pytest.raises(ValueError):
        _perftest.parse("\n".join(lines) + "\n")


@pytest.mark.parametrize("text", ["", "\n\n", "hello world\n", "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n"])
def test_no_perftest_lines_is_refused(text):
    with pytest.raises(ValueError):
        _perftest.parse(text)


# --- accelerator (GPU) memory lines: drawn from perftest's own printf formats -------------------
_FILL = {"d": st.integers(0, 99999).map(str), "ld": st.integers(0, 99999).map(str), "u": st.integers(0, 9999).map(str),
         "lu": st.integers(0, 2 ** 40).map(str), "zu": st.integers(0, 2 ** 40).map(str), "zd": st.integers(0, 2 ** 40).map(str),
         "X": st.integers(0, 255).map(lambda v: "%X" % v), "02X": st.integers(0, 255).map(lambda v: "%02X" % v),
         "x": st.integers(0, 2 ** 16).map(lambda v: "%x" % v),
         "016llx": st.integers(0, 2 ** 48).map(lambda v: "%016x" % v), "016lx": st.integers(0, 2 ** 48).map(lambda v: "%016x" % v),
         "#llx": st.integers(0, 2 ** 48).map(lambda v: "%#x" % v), "#lx": st.integers(0, 2 ** 48).map(lambda v: "%#x" % v),
         "p": st.one_of(st.integers(1, 2 ** 48).map(hex), st.just("(nil)")),
         "s": st.from_regex(r"\A[A-Za-z0-9 :+_./-]{0,24}\Z"), "m": st.just("No such file or directory")}


@st.composite
def accel_line(draw, roles=("setup", "teardown", "notice", "error")):
    """One line printed by perftest's accelerator code: a format of _ACCEL_FORMATS, conversions filled."""
    import re
    kind, role, fmt = draw(st.sampled_from([f for f in _perftest._ACCEL_FORMATS if f[1] in roles]))
    out, pos, body = [], 0, fmt.lstrip("\n").rstrip("\n")
    for m in re.finditer(r"%(#?0?\d*(?:ll|l|z)?[dupxXsm])", body):
        out.append(body[pos:m.start()])
        out.append(draw(_FILL[m.group(1)]))
        pos = m.end()
    out.append(body[pos:])
    return role, "".join(out)


@SET
@given(bw_outputs(), st.lists(accel_line(("setup", "notice")), max_size=12),
       st.lists(accel_line(("teardown",)), max_size=4), st.booleans())
def test_gpu_memory_lines_do_not_change_the_figures(case, before, after, blank_picking):
    """Accelerator set-up lines before the header and teardown lines after the table (any version,
    any accelerator) are accepted and the figures read are those of the same table without them."""
    text, _want = case
    plain = _perftest.parse(text)
    pre = "".join(("\n" if blank_picking and line.startswith("Picking device") else "") + line + "\n" for dummy, line in before)
    post = "".join(line + "\n" for dummy, line in after)
    res = _perftest.parse(pre + text + post)
    assert res["rows"] == plain["rows"] and res["units"] == plain["units"] and res["test"] == plain["test"]
    assert res["errors"] == plain["errors"]
    if before or after:
        assert res["accelerator"]["lines"] == [line.rstrip() for dummy, line in before + after]
    else:
        assert res["accelerator"] is None


@SET
@given(bw_outputs(), accel_line(("error",)))
def test_gpu_failure_lines_are_errors(case, failure):
    text, _want = case
    dummy, line = failure
    res = _perftest.parse(line + "\n" + text)
    assert res["errors"] == [line.rstrip()] and res["accelerator"]["lines"] == [line.rstrip()]


@SET
@given(bw_outputs(), st.sampled_from([
    "initializing CUDA now",                                   # a known line with a tail it never has
    "CUDA device 0: PCIe address is 17",                       # cut short
    "Picking device No. zero",
    "allocated GPU buffer address at 7f3fa4000000 pointer=",  # %016llx is 16 digits at least
    "destroying current GPU Ctx",
    "[pid = 12, dev = 0] device name = NVIDIA A30",
]))
def test_gpu_near_misses_are_refused(case, bad):
    text, _want = case
    with pytest.raises(ValueError):
        _perftest.parse(bad + "\n" + text)


def test_gpu_lines_alone_are_perftest_output():
    """A server killed while it waits after its CUDA set-up printed only perftest's lines: read, no rows."""
    res = _perftest.parse("initializing CUDA\nListing all CUDA devices in system:\nCUDA device 0: PCIe address is 17:00\n"
                          "\nPicking device No. 0\n")
    assert res["rows"] == [] and res["accelerator"]["kind"] == "CUDA"
