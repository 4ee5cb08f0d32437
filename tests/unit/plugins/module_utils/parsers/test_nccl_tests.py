# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl-tests parser: real samples (nccl_tests.txt), tables generated from nccl-tests' printing
formats (hypothesis) for old and new layouts read back, near-misses refused, -J JSON."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _nccl_tests as nt
from ansible_collections.rdma.fabric.tests.unit import samples

SAMPLES = samples.load("nccl_tests.txt")


def test_every_sample_parses():
    assert len(SAMPLES) >= 5
    for sample in SAMPLES.values():
        assert nt.parse(sample.raw) is not None, sample.id


def test_efa_tag_output_old_layout():
    r = nt.parse(SAMPLES["NCCL-EFA-EKS-MPI-TAGOUTPUT"].raw)
    assert r["nccl_version"] == "2.9.9"
    assert len(r["ranks"]) == 16
    assert r["ranks"][8] == {"rank": 8, "group": None, "pid": 25, "host": "nccl-tests-efa-16-worker-1", "device": 0,
                             "bus_id": "0x10", "gpu": "A100-SXM4-40GB"}
    assert len(r["rows"]) == 30
    first, last = r["rows"][0], r["rows"][-1]
    assert (first["size"], first["count"], first["type"], first["redop"], first["root"]) == (8, 2, "float", "sum", None)
    assert first["oop"] == {"time": 179.1, "algbw": 0.0, "busbw": 0.0, "wrong": 2e-07}
    assert last["ip"] == {"time": 184216.0, "algbw": 23.31, "busbw": 43.72, "wrong": 5e-07}
    assert (r["avg_busbw"], r["out_of_bounds"], r["errors"]) == (11.2432, 0, [])


def test_h100_sixteen_ranks_root_column():
    r = nt.parse(SAMPLES["NCCL-ZTAN-H100-16RANKS"].raw)
    assert len(r["ranks"]) == 16 and r["ranks"][15]["host"] == "ztan-mig-gq73" and r["ranks"][15]["bus_id"] == "0000:8c:00"
    assert r["ranks"][0]["gpu"] == "NVIDIA H100 80GB HBM3" and r["ranks"][0]["group"] == 0
    assert len(r["rows"]) == 31
    big = r["rows"][-1]
    assert (big["size"], big["root"], big["oop"]["busbw"], big["ip"]["busbw"], big["oop"]["wrong"]) == (
        8589934592, -1, 338.82, 337.35, 0)
    assert r["rows"][28]["oop"]["time"] == 12646.0
    assert r["avg_busbw"] == 70.742 and r["out_of_bounds"] == 0 and r["avg_busbw_ok"] is None


def test_system_error():
    r = nt.parse(SAMPLES["NCCL-473-SYSTEM-ERROR"].raw)
    assert r["errors"] == ["fastmoe: Test NCCL failure common.cu:777 'unhandled system error'"]
    assert r["rows"] == [] and r["avg_busbw"] is None and len(r["ranks"]) == 4


def test_v1_layout_and_failure():
    r = nt.parse(SAMPLES["NCCL-5-V1-CUDA-ERROR"].raw)
    assert len(r["ranks"]) == 8 and r["ranks"][7]["pid"] is None and r["ranks"][7]["host"] == "node03"
    assert r["errors"] == ["NCCL failure all_reduce.cu:95 'unhandled cuda error'"]


def test_single_process_prefix():
    r = nt.parse(SAMPLES["NCCL-1039-V100-ROOT-COLUMN-PREFIX"].raw)
    assert [row["size"] for row in r["rows"]] == [8, 16, 32, 64]
    assert r["rows"][3]["oop"] == {"time": 18.59, "algbw": 0.0, "busbw": 0.01, "wrong": 0}
    assert r["avg_busbw"] is None


def test_nccl_info_lines_and_banner():
    r = nt.parse(SAMPLES["NCCL-1812-V2-19-INFO-PREFIX"].raw)
    assert r["test"] == "all_reduce_perf" and r["nccl_version"] == "2.19.3" and len(r["ranks"]) == 4


def test_new_banner_version_and_footer_status():
    text = ("# nccl-tests version 2.18.3 nccl-headers=23003 nccl-library=23003\n# Collective test starting: all_reduce_perf\n"
            "# nThread 1 nGpus 1 minBytes 1024 maxBytes 8589934592 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 "
            "validation: 1 graph: 0 unalign: 0\n#\n# Out of bounds values : 3 FAILED\n# Avg bus bandwidth    : 12.5 FAILED\n#\n"
            "# Collective test concluded: all_reduce_perf\n")
    r = nt.parse(text)
    assert (r["nccl_tests_version"], r["nccl_version"], r["out_of_bounds"], r["avg_busbw"], r["avg_busbw_ok"]) == (
        "2.18.3", "2.30.3", 3, 12.5, False)


def test_version_codes():
    assert nt.version_string(22703) == "2.27.3" and nt.version_string(2803) == "2.8.3"


# ------------------------------------------------------------ refusals

@pytest.mark.parametrize("text", ["", "hello\n", "Warning: Permanently added 'w-1' (ED25519) to the list of known hosts.\n",
                                  "all_reduce_perf: error while loading shared libraries: libnccl.so.2\n"])
def test_no_nccl_tests_line(text):
    with pytest.raises(ValueError):
        nt.parse(text)


BASE = SAMPLES["NCCL-ZTAN-H100-16RANKS"].raw


@pytest.mark.parametrize("old, new, word", [
    ("1652.2   81.24", "16x2.2   81.24", "not a number"),
    ("  8589934592    2147483648     float     sum      -1    47535  180.71  338.82      0    47743  179.92  337.35      0",
     "  8589934592    2147483648     float     sum      -1    47535  180.71  338.82      0    47743  179.92  337.35", "fields"),
    ("#       size         count      type   redop    root     time   algbw   busbw #wrong",
     "#       size         count      type   redop    root     time   algbw   busbw #right", "unknown column"),
    ("# Avg bus bandwidth    : 70.742 ", "# Avg bus bandwidth    : fast ", "footer"),
    ("#  Rank  3 Group  0 Pid   6902 on ztan-mig-235z device  3 [0000:0c:00]", "#  Rank  3 Group  0 Pid   6902 on ztan-mig-235z device  3 (0000:0c:00)",
     "device line"),
    ("# nThread 1 nGpus 1 minBytes 8", "# nThread 1 nGpus one minBytes 8", "parameter line"),
    ("#        (B)    (elements)", "#        (KB)    (elements)", "no nccl-tests format"),
])
def test_near_miss_refused_naming_line(old, new, word):
    assert old in BASE
    with pytest.raises(ValueError, match=word) as err:
        nt.parse(BASE.replace(old, new, 1))
    assert "line" in str(err.value)


def test_row_before_header_refused():
    with pytest.raises(ValueError, match="before the table header"):
        nt.parse("           8             2     float     sum      -1    19.12    0.00    0.00      0    18.26    0.00    0.00      0\n")


# ------------------------------------------------------------ -J JSON (util.cu json writers, JSON_FILE_VERSION 3)

JSON_DOC = {
    "version": 3, "start_time": "2025-11-01 10:00:00", "args": ["/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "8G"],
    "env": [], "nccl_version": 22703,
    "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 8, "maximum_bytes": 8589934592, "step_factor": 2, "warmup_iters": 5,
               "iterations": 20, "aggregated_iterations": 1, "validation": 1, "graph": 0, "blocking_collectives": False,
               "per_iter_timing": False, "per_iter_skip": 0, "parallel_init": False,
               "devices": [{"rank": 0, "group": 0, "pid": 101, "hostname": "node-a", "device": 0, "device_hex": "0000:18:00",
                            "device_info": "NVIDIA H100 80GB HBM3"}]},
    "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
                 "out_of_place": {"time": 20.1, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
                 "in_place": {"time": 19.8, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": None},
                 "actual_iterations": 20, "experiment_name": ""}],
    "out_of_bounds": {"count": 0, "okay": True}, "average_bus_bandwidth": {"bandwidth": 0.0, "okay": "unchecked"},
    "errors": [], "end_time": "2025-11-01 10:00:05"}


def test_parse_json():
    r = nt.parse_json(json.dumps(JSON_DOC))
    assert (r["test"], r["nccl_version"], r["out_of_bounds"], r["avg_busbw"], r["avg_busbw_ok"]) == (
        "all_reduce_perf", "2.27.3", 0, 0.0, None)
    assert r["ranks"][0]["bus_id"] == "0000:18:00" and r["ranks"][0]["host"] == "node-a"
    assert r["rows"][0]["root"] == -1 and r["rows"][0]["oop"]["time"] == 20.1 and r["rows"][0]["ip"]["wrong"] is None
    with pytest.raises(ValueError, match="not JSON"):
        nt.parse_json("{")
    bad = json.loads(json.dumps(JSON_DOC))
    bad["results"][0]["out_of_place"]["bus_bw"] = "fast"
    with pytest.raises(ValueError, match="bus_bw"):
        nt.parse_json(json.dumps(bad))


# ------------------------------------------------------------ generated from the printing formats


def float_str(value, width):
    """nccl-tests getFloatStr: fewer decimals until the number fits the width."""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        text = fmt % (width, value)
        if len(text) <= width:
            return text
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


LAYOUTS = {
    # name: (header names line, units line, row preamble format, has root, wrong format)
    "2.11": ("# %10s  %12s  %8s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
        "size", "count", "type", "redop", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"),
        "# %10s  %12s  %8s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
        "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""), False),
    "2.19": ("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " % (
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""), True),
}


@st.composite
def nccl_output(draw):
    layout = draw(st.sampled_from(sorted(LAYOUTS)))
    names, units, has_root = LAYOUTS[layout]
    nranks = draw(st.integers(1, 16))
    check = draw(st.booleans())
    out = ["# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
           "validation: %d graph: 0\n#\n# Using devices\n" % int(check)]
    ranks = []
    for rank in range(nranks):
        host = "node-%d" % (rank // 8)
        bus = "%04x:%02x:%02x" % (0, draw(st.integers(0, 255)), 0)
        out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] NVIDIA H100 80GB HBM3\n" % (
            rank, 0, 1000 + rank, host, rank % 8, bus))
        ranks.append((rank, host, bus))
    out.append("#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n" % ("", "", "", "", ""))
    out.append(names + "\n" + units + "\n")
    rows = []
    for size in draw(st.lists(st.integers(3, 33).map(lambda e: 2 ** e), min_size=1, max_size=8, unique=True)):
        line = "%12li  %12li  %8s  %6s" % (size, size // 4, "float", "sum")
        if has_root:
            line += "  %6s" % ("%6i" % -1)
        row = {"size": size, "root": -1 if has_root else None}
        for place in ("oop", "ip"):
            t = draw(st.floats(0.01, 9e6, allow_nan=False))
            alg, bus = draw(st.floats(0, 999999, allow_nan=False)), draw(st.floats(0, 999999, allow_nan=False))
            wrong = draw(st.integers(0, 10 ** 7))
            ts, algs, buss = float_str(t, 7), float_str(alg, 6), float_str(bus, 6)
            line += ("  %7s  %6s  %6s  %6g" % (ts, algs, buss, wrong)) if check else ("  %7s  %6s  %6s    N/A" % (ts, algs, buss))
            row[place] = {"time": float(ts), "algbw": float(algs), "busbw": float(buss), "wrong": float("%g" % wrong) if check else None}
        out.append(line + "\n")
        rows.append(row)
    avg = draw(st.floats(0, 1000, allow_nan=False))
    out.append("# %-20s : %d %s\n" % ("Out of bounds values", 0, "OK"))
    out.append("# %-20s : %g %s\n#\n" % ("Avg bus bandwidth", avg, ""))
    return "".join(out), {"rows": rows, "ranks": ranks, "avg": float("%g" % avg)}


@settings(max_examples=150, deadline=None)
@given(nccl_output())
def test_generated_outputs_read_back(case):
    text, want = case
    got = nt.parse(text)
    assert got["avg_busbw"] == want["avg"] and got["out_of_bounds"] == 0
    assert [(r["rank"], r["host"], r["bus_id"]) for r in got["ranks"]] == want["ranks"]
    assert len(got["rows"]) == len(want["rows"])
    for g, w in zip(got["rows"], want["rows"]):
        assert (g["size"], g["root"], g["type"], g["redop"]) == (w["size"], w["root"], "float", "sum")
        for place in ("oop", "ip"):
            assert g[place]["time"] == w[place]["time"] and g[place]["algbw"] == w[place]["algbw"]
            assert g[place]["busbw"] == w[place]["busbw"]
            assert (g[place]["wrong"] is None) == (w[place]["wrong"] is None)
            if w[place]["wrong"] is not None:
                assert float(g[place]["wrong"]) == w[place]["wrong"]


@settings(max_examples=60, deadline=None)
@given(nccl_output(), st.integers(0, 31))
def test_generated_outputs_behind_tag_output(case, rank):
    text, want = case
    wrapped = "".join("[1,%d]<stdout>:%s" % (rank, line) for line in text.splitlines(True))
    assert len(nt.parse(wrapped)["rows"]) == len(want["rows"])


@settings(max_examples=100, deadline=None)
@given(nccl_output(), st.data())
def test_generated_near_misses_refused(case, data):
    text, want = case
    lines = text.splitlines(True)
    rows = [i for i, line in enumerate(lines) if line.strip() and line.strip()[0].isdigit()]
    i = data.draw(st.sampled_from(rows))
    how = data.draw(st.sampled_from(["drop", "letter", "extra"]))
    tokens = lines[i].split()
    if how == "drop":
        lines[i] = " ".join(tokens[:-1]) + "\n"
    elif how == "letter":
        lines[i] = lines[i].replace(" " + tokens[1] + " ", " " + tokens[1] + "q ", 1)
    else:
        lines[i] = lines[i].rstrip("\n") + "  1.00\n"
    with pytest.raises(ValueError, match="line"):
        nt.parse("".join(lines))


# ------------------------------------------------------------ under a launcher (issue #39)

def test_real_mpirun_output_with_nccl_warn_between_devices_and_table():
    """nccl-tests#82: both ranks' 'NCCL WARN' lines (NCCL 2.9: file:line before NCCL WARN) and the
    'NCCL version' line sit between the device list and the table; the row is read, the WARN lines
    are warnings (the run went on over sockets), not errors."""
    res = nt.parse(samples.load("nccl_tests.txt")["NCCL-82-BROADCAST-2.9.6-MPIRUN-NCCL-WARN"].raw)
    assert len(res["rows"]) == 1 and res["rows"][0]["root"] == 0 and res["rows"][0]["oop"]["time"] == 45.82
    assert len(res["warnings"]) == 2 and res["errors"] == [] and res["nccl_version"] == "2.9.6"


# Reconstructed from the printing code, not captured: Open MPI 4.1 orte/util/show_help.c
# ("%d more process%s sent help message %s / %s", "Set MCA parameter \"orte_base_help_aggregate\" to 0
# to see all help / error messages", both behind "[host:pid] "), the help text box of
# help-mpi-btl-openib.txt, ssh's known-hosts notice; nccl-tests 2.13.6 all_reduce_perf layout;
# figures are placeholders.
TAGGED = """Warning: Permanently added 'gpu2,10.0.0.2' (ECDSA) to the list of known hosts.
[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
[1,0]<stdout>:#
[1,0]<stdout>:# Using devices
[1,0]<stdout>:#  Rank  0 Group  0 Pid  41021 on       gpu1 device  0 [0x1b] NVIDIA H100 80GB HBM3
[1,0]<stdout>:#  Rank  1 Group  0 Pid  37110 on       gpu2 device  0 [0x1b] NVIDIA H100 80GB HBM3
[1,1]<stderr>:--------------------------------------------------------------------------
[1,1]<stderr>:WARNING: There was an error initializing an OpenFabrics device.
[1,1]<stderr>:
[1,1]<stderr>:  Local host:   gpu2
[1,1]<stderr>:  Local device: mlx5_4
[1,1]<stderr>:--------------------------------------------------------------------------
[1,0]<stdout>:gpu1:41021:41021 [0] NCCL INFO NCCL version 2.18.3+cuda12.2
[1,0]<stdout>:#
[1,0]<stdout>:#                                                              out-of-place                       in-place
[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
[1,0]<stdout>:#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
[1,0]<stdout>:           8             2     float     sum      -1    30.01    0.00    0.00      0    29.87    0.00    0.00      0
[1,1]<stdout>:          16             4     float     sum      -1    99.99    9.99    9.99      5    99.99    9.99    9.99      5
[gpu1:41015] 1 more process has sent help message help-mpi-btl-openib.txt / error in device init
[gpu1:41015] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages
[1,0]<stdout>:gpu1:41021:41030 [0] NCCL INFO comm 0x55d1c8b0 rank 0 nranks 2 cudaDev 0 busId 1b000 - Destroy COMPLETE
[1,0]<stdout>:   134217728      33554432     float     sum      -1   1480.2   90.67   90.67      0   1478.9   90.75   90.75      0
[1,0]<stdout>:# Out of bounds values : 0 OK
[1,0]<stdout>:# Avg bus bandwidth    : 45.3575
[1,0]<stdout>:#
"""


def test_tag_output_run_with_open_mpi_help_inside_the_table():
    res = nt.parse(TAGGED)
    assert [r["size"] for r in res["rows"]] == [8, 134217728]     # rank 1's row-shaped line is not a row
    assert res["avg_busbw"] == 45.3575 and res["out_of_bounds"] == 0
    # ... but its 5 + 5 wrong results fail the run: any stream can fail a run (issue 40)
    assert len(res["errors"]) == 1 and res["errors"][0].startswith("10 wrong results") and "[1,1]<stdout>:" in res["errors"][0]
    assert "[1,1]<stdout>:          16             4     float     sum      -1    99.99    9.99    9.99      5    99.99    9.99" \
           "    9.99      5" in res["noise"]
    assert any("orte_base_help_aggregate" in line for line in res["noise"]) and len(res["ranks"]) == 2


def test_srun_label_run_with_failure_on_another_rank_is_failed():
    text = "".join("0: " + line + "\n" for line in TAGGED.splitlines() if line.startswith("[1,0]<stdout>:"))
    text = text.replace("0: [1,0]<stdout>:", "0: ")
    text += "1: gpu2: Test NCCL failure common.cu:1005 'remote process exited or there was a network error'\n"
    res = nt.parse(text)
    assert len(res["rows"]) == 2 and res["errors"] and "Test NCCL failure" in res["errors"][0]


# ------------------------------------------------------------ footers of another stream (issue 40)

EFA = SAMPLES["NCCL-EFA-EKS-MPI-TAGOUTPUT"].raw


def _appended(*lines):
    return EFA.rstrip("\n") + "\n" + "".join(line + "\n" for line in lines)


@pytest.mark.parametrize("forged", [
    "[1,7]<stdout>:# Avg bus bandwidth    : 999",
    "[1,7]<stdout>:# Avg bus bandwidth    : 999 OK",
    "[1,0]<stderr>:# Avg bus bandwidth    : 999",
    "[1,7]<stdout>:#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
])
def test_another_rank_cannot_rewrite_the_average(forged):
    """mpirun --tag-output: rank 7 appends its own footer; the figure stays rank 0's, the line is noise."""
    res = nt.parse(_appended(forged, "[1,7]<stdout>:# Out of bounds values : 0 OK"))
    assert res["avg_busbw"] == 11.2432 and res["out_of_bounds"] == 0 and res["errors"] == []
    assert forged in res["noise"] and "[1,7]<stdout>:# Out of bounds values : 0 OK" in res["noise"]
    assert len(res["rows"]) == 30


def test_another_rank_cannot_pass_a_failed_run():
    failed = EFA.replace("[1,0]<stdout>:# Out of bounds values : 0 OK", "[1,0]<stdout>:# Out of bounds values : 3 FAILED")
    assert failed != EFA
    res = nt.parse(failed.rstrip("\n") + "\n[1,7]<stdout>:# Out of bounds values : 0 OK\n")
    assert res["out_of_bounds"] == 3


@pytest.mark.parametrize("line, why", [
    ("[1,7]<stdout>:# Out of bounds values : 4 FAILED", "Out of bounds values: 4 FAILED"),
    ("[1,7]<stdout>:# Out of bounds values : 0 FAILED", "Out of bounds values: 0 FAILED"),
    ("[1,7]<stdout>:# Avg bus bandwidth    : 1.5 FAILED", "Avg bus bandwidth FAILED"),
    ("[1,7]<stdout>:   4294967296    1073741824   float    sum   184237   23.31   43.71      1   184216   23.31   43.72      0",
     "1 wrong results"),
])
def test_a_failure_from_any_stream_still_fails_the_run(line, why):
    res = nt.parse(_appended(line))
    assert res["avg_busbw"] == 11.2432 and res["out_of_bounds"] == 0      # rank 0's figures stay
    assert len(res["errors"]) == 1 and res["errors"][0].startswith(why) and "[1,7]<stdout>:" in res["errors"][0]
    assert line in res["noise"]


def test_srun_label_footer_of_rank_one_is_noise():
    text = "".join("0: " + line[len("[1,0]<stdout>:"):] + "\n" for line in TAGGED.splitlines()
                   if line.startswith("[1,0]<stdout>:"))
    res = nt.parse(text + "1: # Avg bus bandwidth    : 999 \n1: # Out of bounds values : 0 OK\n")
    assert res["avg_busbw"] == 45.3575 and res["errors"] == [] and "1: # Avg bus bandwidth    : 999 " in res["noise"]
