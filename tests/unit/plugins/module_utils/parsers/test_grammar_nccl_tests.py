# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from nccl-tests' printing code (NVIDIA/nccl-tests src/common.cu / util.cu:
the device report, writeResultHeader, writeBenchmarkLine*, writeResultFooter): outputs it could
print (2.14-2.17 layout) are read back, near-misses are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

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
    "# Out of bounds values : many OK",
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


# --- nccl-tests under a launcher (issue #39): noise before, inside and after the table -----------
# Launcher prefixes: Open MPI --tag-output (orte/mca/iof: "[jobid,rank]<stdout>:"), srun --label ("%d: ").
PREFIXES = {"none": lambda r, s: "", "mpi": lambda r, s: "[1,%d]<%s>:" % (r, s), "srun": lambda r, s: "%d: " % r}

_HOST = st.from_regex(r"\A[a-z][a-z0-9-]{0,12}\Z")


@st.composite
def noise_line(draw):
    """A line a launcher merges into nccl-tests' output, drawn from the printing code of its source:
    Open MPI show_help aggregation (opal/util/show_help.c) and MCA warnings, ssh's known-hosts notice
    (sshconnect.c), srun/slurmstepd, NCCL_DEBUG=INFO (NCCL debug.cc "%s:%d:%d [%d] NCCL INFO ...",
    including the tuning table lines of tuning.cc)."""
    host, pid, tid, dev = draw(_HOST), draw(st.integers(1, 99999)), draw(st.integers(1, 99999)), draw(st.integers(0, 7))
    n = draw(st.integers(1, 999))
    return draw(st.sampled_from([
        "-" * 74,
        "WARNING: There was an error initializing an OpenFabrics device.",
        "  Local host:   %s" % host,
        "  Local device: mlx5_%d" % dev,
        "[%s:%05d] %d more processes have sent help message help-mpi-btl-openib.txt / error in device init" % (host, pid, n),
        "[%s:%05d] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error messages" % (host, pid),
        "%d more processes have sent help message help-mpi-btl-base.txt / btl:no-nics" % n,
        "A deprecated MCA variable value was specified in the environment or",
        "  Deprecated variable: mpi_preconnect_all",
        "Warning: Permanently added '%s,10.0.0.%d' (ECDSA) to the list of known hosts." % (host, dev),
        "srun: Job step created",
        "%s:%d:%d [%d] NCCL INFO Bootstrap : Using eth0:10.0.0.%d<0>" % (host, pid, tid, dev, dev),
        "%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>" % (host, pid, tid, dev),
        "%s:%d:%d [%d] NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7" % (host, pid, tid, dev),
        "%s:%d:%d [%d] NCCL INFO   Algorithm   |            Tree |            Ring" % (host, pid, tid, dev),
        "%s:%d:%d [%d] NCCL INFO      Max NThreads  |            512 |            640" % (host, pid, tid, dev),
        "%s:%d:%d [%d] NCCL INFO %2d   AllReduce |    %5.1f/   %5.1f |    %5.1f/   %5.1f" % (host, pid, tid, dev, dev, 6.8, 0.0, 14.1, 0.0),
        "%s:%d:%d [%d] NCCL INFO comm 0x55d1c8b0 rank %d nranks 8 cudaDev %d busId 1b000 - Init COMPLETE" % (host, pid, tid, dev, dev, dev),
        "%s:%d:%d [%d] NCCL INFO Connected all rings" % (host, pid, tid, dev),
        "  %d more process has sent help message help-mca-var.txt / deprecated-env" % n,
    ]))


@st.composite
def launched(draw):
    """(text, plain): a valid table (2.14-2.17 layout) behind a launcher prefix, noise lines of
    every kind interleaved anywhere (before, inside and after the table), from the main stream,
    the other ranks and stderr; and the same table without the noise."""
    text, nranks, sizes, avg = draw(outputs())
    kind = draw(st.sampled_from(sorted(PREFIXES)))
    pre = PREFIXES[kind]
    lines = [pre(0, "stdout") + line for line in text.splitlines()]
    out = []
    for line in lines:
        for dummy in range(draw(st.integers(0, 2))):
            rank = draw(st.integers(0, 15))
            stream = draw(st.sampled_from(["stdout", "stderr"]))
            out.append((pre(rank, stream) if draw(st.booleans()) else "") + draw(noise_line()))
        out.append(line)
    out += [draw(noise_line()) for dummy in range(draw(st.integers(0, 3)))]
    return "\n".join(out) + "\n", text, kind


@SET
@given(launched())
def test_noise_does_not_change_the_figures(case):
    noisy, plain, kind = case
    got, want = _nccl_tests.parse(noisy), _nccl_tests.parse(plain)
    for key in ("rows", "ranks", "avg_busbw", "avg_busbw_ok", "out_of_bounds", "errors", "test"):
        assert got[key] == want[key], key


@st.composite
def foreign_rows(draw):
    """A line shaped like a result row but from another stream: another rank's or stderr's tagged
    output, or an NCCL INFO line carrying the row's text."""
    size = 2 ** draw(st.integers(3, 30))
    row = "%12li  %12li  %8s  %6s  %6i  %7.1f  %6.2f  %6.2f  %6d  %7.1f  %6.2f  %6.2f  %6d" % (
        size, size // 4, "float", "sum", -1, 1.0, 9.99, 9.99, 7, 1.0, 9.99, 9.99, 7)
    how = draw(st.sampled_from(["rank", "stderr", "info"]))
    if how == "rank":
        return "mpi", "[1,%d]<stdout>:%s" % (draw(st.integers(1, 15)), row)
    if how == "stderr":
        return "mpi", "[1,0]<stderr>:%s" % row
    return "none", "%s:%d:%d [0] NCCL INFO %s" % (draw(_HOST), draw(st.integers(1, 9999)), 1, row)


@SET
@given(outputs(), foreign_rows(), st.data())
def test_foreign_row_is_never_a_row(case, foreign, data):
    text, nranks, sizes, avg = case
    kind, bad = foreign
    lines = [PREFIXES[kind](0, "stdout") + line for line in text.splitlines()]
    rows_at = [i for i, line in enumerate(lines) if line.split(":", 1)[-1].strip()[:1].isdigit() or line.strip()[:1].isdigit()]
    at = data.draw(st.sampled_from(rows_at))
    lines.insert(at, bad)
    res = _nccl_tests.parse("\n".join(lines) + "\n")
    assert [r["size"] for r in res["rows"]] == sizes
    assert all(r["oop"]["wrong"] == 0 for r in res["rows"])
    assert bad in res["noise"] or " NCCL INFO " in bad   # NCCL log lines are read as such


def _failed(res):
    wrong = sum(side["wrong"] or 0 for row in res["rows"] for side in (row["oop"], row["ip"]))
    return bool(wrong or res["out_of_bounds"] or res["errors"] or res["avg_busbw_ok"] is False)


@SET
@given(launched(), st.sampled_from(["wrong", "oob", "failure", "other-rank-failure"]))
def test_failed_run_is_never_passed_for_noise(case, how):
    noisy, plain, kind = case
    pre = PREFIXES[kind]
    if how == "wrong":
        lines = noisy.splitlines()
        i = max(j for j, line in enumerate(lines) if line.startswith(pre(0, "stdout"))
                and re.match(r"^\s*\d+\s+\d+\s+float\s", line[len(pre(0, "stdout")):]))
        tokens = lines[i][len(pre(0, "stdout")):].split()
        tokens[8] = "3"
        lines[i] = pre(0, "stdout") + "  ".join(tokens)
        noisy = "\n".join(lines) + "\n"
    elif how == "oob":
        noisy = noisy.replace("# Out of bounds values : 0 OK", "# Out of bounds values : 12 FAILED")
    elif how == "failure":
        noisy += pre(0, "stdout") + "node1: Test NCCL failure common.cu:1005 'unhandled system error'\n"
    else:
        noisy += pre(3, "stdout") + " .. node2 pid 4242: Test failure common.cu:1089\n"
    assert _failed(_nccl_tests.parse(noisy))
    assert not _failed(_nccl_tests.parse(plain))


def test_text_with_only_launcher_noise_is_refused():
    with pytest.raises(ValueError):
        _nccl_tests.parse("Warning: Permanently added 'node2' (ECDSA) to the list of known hosts.\n" + "-" * 74 + "\n"
                          "random text from somewhere else\n")


@SET
@given(outputs(), st.integers(1, 255), st.floats(0, 1e6, allow_nan=False), st.sampled_from(["", "OK"]),
       st.sampled_from(["[1,%d]<stdout>:", "[1,%d]<stderr>:"]))
def test_footers_of_another_rank_are_noise(case, rank, forged_bw, status, tag):
    """Under mpirun --tag-output only rank 0's stdout prints the table: a footer any other stream
    appends (after or inside the table) never replaces rank 0's figures (issue 40)."""
    text, nranks, sizes, avg = case
    lines = ["[1,0]<stdout>:" + line for line in text.splitlines()]
    forged = [(tag % rank) + "# Avg bus bandwidth    : %g %s" % (forged_bw, status),
              (tag % rank) + "# Out of bounds values : 0 OK"]
    at = len(lines) - 3   # before rank 0's footer, then once more after it
    res = _nccl_tests.parse("\n".join(lines[:at] + forged + lines[at:] + forged) + "\n")
    assert abs(res["avg_busbw"] - float("%g" % avg)) < 1e-9 and res["out_of_bounds"] == 0
    assert res["errors"] == [] and [r["size"] for r in res["rows"]] == sizes
    assert res["noise"].count(forged[0]) == 2


@SET
@given(outputs(), st.integers(1, 255), st.integers(1, 10 ** 6))
def test_a_failed_footer_of_any_rank_fails_the_run(case, rank, count):
    text, nranks, sizes, avg = case
    lines = ["[1,0]<stdout>:" + line for line in text.splitlines()]
    lines.append("[1,%d]<stdout>:# Out of bounds values : %d FAILED" % (rank, count))
    res = _nccl_tests.parse("\n".join(lines) + "\n")
    assert res["out_of_bounds"] == 0 and len(res["errors"]) == 1 and "Out of bounds values: %d FAILED" % count in res["errors"][0]
