# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from nccl-tests' printing code (NVIDIA/nccl-tests src/common.cu / util.cu:
the device report, writeResultHeader, writeBenchmarkLine*, writeResultFooter): outputs it could
print (2.14-2.17 layout) are read back, near-misses are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _nccl_tests

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings
SET = settings(max_examples=40, deadline=None)

HEADER = [
    "#                                                              out-of-place                       in-place          ",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
]


@st.composite
def outputs(draw):
    ngpus = draw(st.integers(1, 8))
    hosts = draw(st.lists(st.from_regex(r"\A[a-z][a-z0-9-]{0,15}\Z"), min_size=1, max_size=2))
    lines = ["# nThread 1 nGpus %d minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
             "validation: 1 graph: 0" % ngpus, "#", "# Using devices"]
    rank = 0
    for host in hosts:
        for dev in range(ngpus):
            lines.append("#  Rank %2d Group  0 Pid %6d on %10s device %2d [%04x:%02x:%02x] %s"
                         % (rank, draw(st.integers(1, 999999)), host, dev, 0, draw(st.integers(0, 255)), 0, "NVIDIA H100 80GB HBM3"))
            rank += 1
    lines += ["#"] + HEADER
    sizes = sorted(draw(st.sets(st.integers(3, 30), min_size=1, max_size=8)))
    busbws = []
    for exp in sizes:
        size = 2 ** exp
        t1, t2 = draw(st.floats(1, 99999, allow_nan=False)), draw(st.floats(1, 99999, allow_nan=False))
        bw1, bw2 = size / 1e3 / t1, size / 1e3 / t2
        busbws.append(bw1)
        lines.append("%12li  %12li  %8s  %6s  %6i  %7.1f  %6.2f  %6.2f  %6d  %7.1f  %6.2f  %6.2f  %6d"
                     % (size, size // 4, "float", "sum", -1, t1, bw1, bw1, 0, t2, bw2, bw2, 0))
    avg = sum(busbws) / len(busbws)
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : %g " % avg, "#"]
    return "\n".join(lines) + "\n", rank, [2 ** e for e in sizes], avg


@SET
@given(outputs())
def test_outputs_read_back(case):
    text, nranks, sizes, avg = case
    res = _nccl_tests.parse(text)
    assert len(res["ranks"]) == nranks
    assert [r["size"] for r in res["rows"]] == sizes
    assert all(r["type"] == "float" and r["redop"] == "sum" and r["root"] == -1 for r in res["rows"])
    assert res["out_of_bounds"] == 0
    assert abs(res["avg_busbw"] - float("%g" % avg)) < 1e-9


@SET
@given(outputs(), st.sampled_from([
    "        1024           256     float     sum      -1    12.3    0.08",       # row cut short
    "        1024           256     float     sum      -1    12.x    0.08    0.08      0    12.1    0.08    0.08      0",
    "#  Rank  0 Grp 0 on host device 0",
    "# Avg bus bandwidth    : fast",
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
    "random text from somewhere else",
]))
def test_near_misses_are_refused(case, bad):
    text = case[0]
    lines = text.splitlines()
    lines.insert(len(lines) - 3, bad)
    with pytest.raises(ValueError):
        _nccl_tests.parse("\n".join(lines) + "\n")


@pytest.mark.parametrize("text", ["", "\n", "hello\n", " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n"])
def test_no_nccl_tests_lines_is_refused(text):
    with pytest.raises(ValueError):
        _nccl_tests.parse(text)
