# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest parser: real samples (perftest.txt), outputs generated from perftest's printing
formats (hypothesis) read back, near-misses refused, --out_json, units, launcher prefixes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _perftest as pt
from ansible_collections.rdma.fabric.tests.unit import samples

SAMPLES = samples.load("perftest.txt")


def test_every_sample_parses():
    assert len(SAMPLES) >= 10
    for sample in SAMPLES.values():
        assert pt.parse(sample.raw) is not None, sample.id


def test_cns_client_all_sizes_gbits():
    r = pt.parse(SAMPLES["PERFTEST-CNS-WRITE-BW-CLIENT-ALL-GBITS"].raw)
    assert (r["test"], r["kind"], r["units"], r["device"], r["link_type"], r["gid_index"]) == (
        "RDMA_Write BW", "bw", "Gb/sec", "mlx5_0", "Ethernet", 4)
    assert len(r["rows"]) == 23
    assert r["rows"][0] == {"bytes": 2, "iterations": 5000, "bw_peak": 0.080755, "bw_average": 0.07309, "msg_rate": 4.568094}
    assert r["rows"][-1] == {"bytes": 8388608, "iterations": 5000, "bw_peak": 52.52, "bw_average": 52.52, "msg_rate": 0.000783}
    assert r["local"]["qpn"] == 0x137 and r["local"]["lid"] == 0 and r["local"]["gid"] == "::ffff:c0a8:6f01"
    assert r["remote"]["gid"] == "::ffff:c0a8:6f02" and r["remote"]["rkey"] == 0x2c23
    assert r["settings"]["Mtu"] == "1024[B]" and r["settings"]["TX depth"] == "128"
    assert r["errors"] == []


def test_cns_server():
    r = pt.parse(SAMPLES["PERFTEST-CNS-WRITE-BW-SERVER"].raw)
    assert r["gid_index"] == 8 and "TX depth" not in r["settings"]
    assert [x["bw_average"] for x in r["rows"]] == [52.52]


def test_post_list_title_and_duration_row():
    r = pt.parse(SAMPLES["PERFTEST-273-POSTLIST-GBITS"].raw)
    assert r["test"] == "RDMA_Write Post List BW" and r["kind"] == "bw"
    assert r["settings"]["PCIe relax order"] == "Unsupported" and r["settings"]["Post List"] == "128"
    assert r["rows"] == [{"bytes": 8, "iterations": 224958464, "bw_peak": 0.0, "bw_average": 0.48, "msg_rate": 7.498617}]
    assert r["local"] is None


def test_ib_lids_no_gid():
    r = pt.parse(SAMPLES["PERFTEST-132-WRITE-BW-IB-ALL-GBITS-PREFIX"].raw)
    assert r["link_type"] == "IB" and r["gid_index"] is None
    assert r["local"]["lid"] == 2 and r["remote"]["lid"] == 1 and r["local"]["gid"] is None
    assert [x["bytes"] for x in r["rows"]] == [2, 4, 8]
    assert r["rows"][1]["bw_peak"] == 0.084507


def test_mb_sec_header_without_rows():
    r = pt.parse(SAMPLES["PERFTEST-234-WRITE-BW-ROCE-MBSEC-PREFIX"].raw)
    assert r["units"] == "MB/sec" and r["rows"] == [] and r["gid_index"] == 3
    assert r["local"]["gid"] == "::ffff:aff:ff05"


def test_latency_server_with_warnings():
    r = pt.parse(SAMPLES["PERFTEST-RDMA-TUTORIAL-8-WRITE-LAT-SERVER-PREFIX"].raw)
    assert (r["test"], r["kind"], r["device"]) == ("RDMA_Write Latency", "lat", "mlx4_0")
    assert r["errors"][0].startswith("Requested SQ size might be too big")
    assert r["settings"]["Max inline data"] == "220[B]"


def test_output_latency_value_only():
    r = pt.parse(SAMPLES["PERFTEST-QINGCLOUD-WRITE-LAT-OUTPUT-LATENCY"].raw)
    assert r["value"] == 1.846569 and r["rows"] == []


def test_connect_error():
    r = pt.parse(SAMPLES["PERFTEST-228-CONNECT-ERROR"].raw)
    assert r["errors"] == ["Couldn't connect to 192.168.125.211:18515",
                           "Unable to open file descriptor for socket connection Unable to init the socket connection"]
    assert r["rows"] == [] and r["test"] is None


def test_modify_qp_rtr_error():
    r = pt.parse(SAMPLES["PERFTEST-393-MODIFY-QP-RTR-ERROR"].raw)
    assert r["errors"] == ["Failed to modify QP 122273 to RTR", " Unable to Connect the HCA's through the link",
                           "Failed to modify QP 122272 to RTR", " Unable to Connect the HCA's through the link"]


def test_old_read_bw_keys_error():
    r = pt.parse(SAMPLES["PERFTEST-PIB-3-READ-BW-KEYS-ERROR"].raw)
    assert r["test"] == "RDMA_Read BW" and r["units"] == "MB/sec" and r["rows"] == []
    assert r["local"]["out_reads"] == 0x10 and r["remote"]["vaddr"] == 0x007fe9b02b0000
    assert "Couldn't read remote address" in r["errors"] and " Unable to read to socket/rdam_cm" in r["errors"]


# ------------------------------------------------------------ units, launcher

def test_gbps_follows_format_factor():
    assert pt.gbps(11762.61, "MB/sec") == pytest.approx(11762.61 * 1048576 * 8 / 1e9)
    assert pt.gbps(1000, "MiB/sec") == pt.gbps(1000, "MB/sec")
    assert pt.gbps(196.5, "Gb/sec") == 196.5
    with pytest.raises(ValueError, match="units"):
        pt.gbps(1, "GB/sec")


def test_strip_launcher_prefixes():
    text = ("[1,0]<stdout>: #bytes x\n0: a\n 12: b\n[3] c\n2024-05-01T10:00:00.123456789Z d\n"
            "[1,0]<stderr>:Couldn't connect to h:1\nMay  1 10:00:00 host perftest: e\nplain\n")
    assert pt.strip_launcher(text).splitlines() == [" #bytes x", "a", "b", "c", "d", "Couldn't connect to h:1", "e", "plain"]


def test_tag_output_wrapped_sample_parses_the_same():
    raw = SAMPLES["PERFTEST-CNS-WRITE-BW-CLIENT-ALL-GBITS"].raw
    wrapped = "".join("[1,0]<stdout>:" + line for line in raw.splitlines(True))
    assert pt.parse(wrapped) == pt.parse(raw)


# ------------------------------------------------------------ refusals

@pytest.mark.parametrize("text", ["", "\n\n", "hello world\n", "ib_write_bw: command not found\n", "$ ib_write_bw -d mlx5_0\n"])
def test_no_perftest_line(text):
    with pytest.raises(ValueError):
        pt.parse(text)


BASE = SAMPLES["PERFTEST-CNS-WRITE-BW-SERVER"].raw


@pytest.mark.parametrize("old, new, word", [
    ("BW peak[Gb/sec]", "BW peak[GB/sec]", "table headers"),
    ("BW average[Gb/sec]", "BW average[MB/sec]", "table headers"),
    (" 8388608    5000 ", " 8388608    5k00 ", "unsigned integer"),
    ("52.52  \t\t   0.000783", "52.52", "fields"),
    ("Link type       : Ethernet", "Link type       : Infiniband", "Link type"),
    ("Connection type : RC", "Connection type : RCX", "Connection type"),
    ("LID 0000 QPN 0x0136", "LID 0000 QPN 0x01z6", "address"),
    ("GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:111:02", "GID: 00:00:00:00:00:00:00:00:00:00:255:256:192:168:111:02", "above 255"),
    ("RDMA_Write BW Test", "RDMA_Write BW Tset", "no perftest format"),
    ("* Waiting for client to connect... *", "* Waiting for the client... *", "no perftest format"),
])
def test_near_miss_refused_naming_line(old, new, word):
    assert old in BASE
    text = BASE.replace(old, new, 1)
    with pytest.raises(ValueError, match=word) as err:
        pt.parse(text)
    assert "line" in str(err.value)


def test_row_before_header_refused():
    with pytest.raises(ValueError):
        pt.parse(" 65536      5000           52.52              52.52  \t\t   0.000783\n")


def test_latency_table_in_bw_test_refused():
    text = BASE.replace(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
                        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]")
    with pytest.raises(ValueError, match="lat table in a bw test"):
        pt.parse(text)


# ------------------------------------------------------------ --out_json

JSON_BW = """{
"test_info": {
"test": "RDMA_Write_BW_Test",
"Dual_port": "OFF",
"Device": "mlx5_0",
"Number_of_qps": 1,
"Transport_type": "IB",
"Connection_type": "RC",
"Using_SRQ": "OFF",
"PCIe_relax_order": "ON",
"ibv_wr_API": "ON",
"TX_depth": 128,
"CQ_Moderation": 100,
"Mtu": 4096,
"Link_type": "Ethernet",
"GID_index": 3,
"Max_inline_data": 0,
"rdma_cm_QPs": "OFF",
"Use_ROCm_memory": "OFF",
"Use_MUSA_memory": "OFF",
"Data_ex_method": "Ethernet"
},
"results": {
"MsgSize": 65536,
"n_iterations": 5000,
"BW_peak": 97.21,
"BW_average": 97.18,
"MsgRate": 0.185356
}
}
"""


def test_parse_json_bw():
    r = pt.parse_json(JSON_BW, units="Gb/sec")
    assert (r["test"], r["kind"], r["device"], r["gid_index"], r["link_type"], r["units"]) == (
        "RDMA_Write BW", "bw", "mlx5_0", 3, "Ethernet", "Gb/sec")
    assert r["rows"] == [{"bytes": 65536, "iterations": 5000, "bw_peak": 97.21, "bw_average": 97.18, "msg_rate": 0.185356}]
    assert pt.parse_json(JSON_BW)["units"] is None


def test_parse_json_lat_and_quirks():
    lat = ('{\n"test_info": {\n"test": "RDMA_Write_Latency_Test",\n"Device": "mlx5_1",\n"Link_type": "IB",\n'
           '"Data_ex_method": "Ethernet"\n},\n"results": {\n"MsgSize": 2,\n"n_iterations": 1000,\n"t_min": 0.98,\n'
           '"t_max": 3.10,\n"t_typical": 1.01,\n"t_avg": 1.02,\n"t_stdev": 0.05,\n"percentile_99": 1.20,\n'
           '"percentile_99.9": 3.10\n}\n}\n')
    r = pt.parse_json(lat)
    assert r["kind"] == "lat" and r["rows"][0]["t_typical"] == 1.01 and r["rows"][0]["p99_9"] == 3.10
    qos = ('{\n"test_info": {\n"test": "Send_BW_Test"\n},\n"results": {\n"MsgSize": 65536,\nsl: 3,\n"n_iterations": 1000,\n'
           '"BW_peak": 11000.50,\n"BW_average": 10990.10,\n "MsgRate": 0.175842\n}\n}\n')
    assert pt.parse_json(qos, units="MiB/sec")["rows"][0]["bw_average"] == 10990.10
    with pytest.raises(ValueError, match="not JSON"):
        pt.parse_json("{")
    with pytest.raises(ValueError, match="test_info"):
        pt.parse_json(json.dumps({"results": {}}))
    with pytest.raises(ValueError, match="not a number"):
        pt.parse_json(JSON_BW.replace('"BW_average": 97.18', '"BW_average": "fast"'))


# ------------------------------------------------------------ generated from the printing formats
# The formats below are perftest's (perftest_parameters.h / .c, perftest_communication.h); Python's
# % operator renders %-7lu / %-7.2lf like printf once the C length modifiers are dropped.

RESULT_LINE = "-" * 87 + "\n"
REPORT_FMT = " %-7d    %-10d       %-7.2f            %-7.2f\t\t     %-7.6f"
REPORT_FMT_EXT = " %-7d    %d           %-7.6f            %-7.6f            %-7.6f"
REPORT_FMT_LAT = " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f"
HEAD_BW = " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]"
HEAD_LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
            "99% percentile[usec]   99.9% percentile[usec] ")

cents = st.integers(min_value=0, max_value=99999999).map(lambda c: c / 100.0)
micro = st.integers(min_value=0, max_value=99999999).map(lambda c: c / 1e6)


@st.composite
def perftest_output(draw):
    kind = draw(st.sampled_from(["bw", "lat"]))
    verb = draw(st.sampled_from(["Send", "RDMA_Write", "RDMA_Read"]))
    units = draw(st.sampled_from(["MB/sec", "MiB/sec", "Gb/sec"])) if kind == "bw" else "usec"
    roce = draw(st.booleans())
    gid = draw(st.integers(0, 15)) if roce else None
    dev = "mlx5_%d" % draw(st.integers(0, 17))
    out = []
    if draw(st.booleans()):
        out.append("\n************************************\n* Waiting for client to connect... *\n************************************\n")
    if draw(st.booleans()):
        out.append(" WARNING: BW peak won't be measured in this run.\n")
    title = "%s %s Test" % (verb, "BW" if kind == "bw" else "Latency")
    out.append(RESULT_LINE + "                    " + title + "\n")
    out.append(" Dual-port       : OFF\t\tDevice         : %s\n" % dev)
    out.append(" Number of qps   : %d\t\tTransport type : IB\n" % draw(st.integers(1, 64)))
    out.append(" Connection type : RC\t\tUsing SRQ      : OFF\n")
    if draw(st.booleans()):
        out.append(" PCIe relax order: ON\n ibv_wr* API     : ON\n")
    out.append(" Mtu             : %d[B]\n Link type       : %s\n" % (draw(st.sampled_from([1024, 2048, 4096])), "Ethernet" if roce else "IB"))
    if gid is not None:
        out.append(" GID index       : %d\n" % gid)
    out.append(" Max inline data : 0[B]\n rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n" + RESULT_LINE)
    lids = draw(st.tuples(st.integers(0, 0xbfff), st.integers(0, 0xbfff))) if not roce else (0, 0)
    for side, lid in zip(("local", "remote"), lids):
        qpn, psn = draw(st.integers(0, 0xffffff)), draw(st.integers(0, 0xffffff))
        line = " %s address: LID %s QPN %s PSN %s" % (side, "%#04x" % lid, "%#06x" % qpn, "%#06x" % psn)
        if verb != "Send":
            line += " RKey %s VAddr %s" % ("%#08x" % draw(st.integers(0, 0xffffffff)), "%#016x" % draw(st.integers(0, 2 ** 47)))
        out.append(line + "\n")
        if roce:
            out.append(" GID: " + ":".join("%02d" % b for b in draw(st.lists(st.integers(0, 255), min_size=16, max_size=16))) + "\n")
    out.append(RESULT_LINE)
    rows = []
    if kind == "bw":
        out.append(HEAD_BW % (units, units) + "\n")
        for size in draw(st.lists(st.integers(1, 23).map(lambda e: 2 ** e), min_size=1, max_size=6, unique=True)):
            it = draw(st.integers(1, 10 ** 9))
            if units == "Gb/sec" and draw(st.booleans()):
                peak, avg, rate = draw(micro), draw(micro.filter(lambda v: v < 0.1)), draw(micro)
                out.append(REPORT_FMT_EXT % (size, it, peak, avg, rate) + "\n")
            else:
                peak, avg, rate = draw(cents), draw(cents), draw(micro)
                out.append(REPORT_FMT % (size, it, peak, avg, rate) + "\n")
            rows.append({"bytes": size, "iterations": it, "bw_peak": peak, "bw_average": avg, "msg_rate": rate})
    else:
        out.append(HEAD_LAT + "\n")
        for size in draw(st.lists(st.integers(1, 23).map(lambda e: 2 ** e), min_size=1, max_size=6, unique=True)):
            it = draw(st.integers(2, 10 ** 6))
            vals = [draw(cents) for _cell in range(7)]
            out.append(REPORT_FMT_LAT % tuple([size, it] + vals) + "\n")
            rows.append(dict(zip(("bytes", "iterations", "t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p99_9"),
                                 [size, it] + vals)))
    out.append(RESULT_LINE)
    if draw(st.booleans()):
        out.append("Conflicting CPU frequency values detected: 1200.000000 != 3400.000000. CPU Frequency is not max.\n")
    return "".join(out), {"test": title[:-5], "kind": kind, "units": units, "device": dev, "gid_index": gid, "rows": rows,
                          "link_type": "Ethernet" if roce else "IB", "lids": lids}


@settings(max_examples=150, deadline=None)
@given(perftest_output())
def test_generated_outputs_read_back(case):
    text, want = case
    got = pt.parse(text)
    for key in ("test", "kind", "units", "device", "gid_index", "link_type", "rows"):
        assert got[key] == want[key], key
    assert (got["local"]["lid"], got["remote"]["lid"]) == want["lids"]


@settings(max_examples=100, deadline=None)
@given(perftest_output(), st.data())
def test_generated_near_misses_refused(case, data):
    text, want = case
    lines = text.splitlines(True)
    rows = [i for i, line in enumerate(lines) if line[:2].strip().isdigit() and "#" not in line]
    i = data.draw(st.sampled_from(rows))
    how = data.draw(st.sampled_from(["drop", "letter", "extra"]))
    tokens = lines[i].split()
    if how == "drop":
        lines[i] = " ".join(tokens[:-1]) + "\n"
    elif how == "letter":
        lines[i] = lines[i].replace(tokens[1], tokens[1] + "x", 1)
    else:
        lines[i] = lines[i].rstrip("\n") + " 1.00 1.00\n"
    with pytest.raises(ValueError, match="line"):
        pt.parse("".join(lines))


@settings(max_examples=60, deadline=None)
@given(perftest_output(), st.sampled_from(["[1,0]<stdout>:", "0: ", "[0] ", "2025-01-02T03:04:05.000000001Z "]))
def test_generated_outputs_behind_launchers(case, prefix):
    text, want = case
    wrapped = "".join(prefix + line for line in text.splitlines(True))
    assert pt.parse(wrapped)["rows"] == want["rows"]


# --- GPU memory and rdma_cm servers (issue #39): the figure in the table is read ---------------
@pytest.mark.parametrize("sample_id,kind,dmabuf,name", [
    ("PERFTEST-21-CUDA-V100-SERVER-PICKFIRST", "CUDA", False, "Tesla V100-SXM2-32GB"),     # real, 4.x before 4.5
    ("PERFTEST-241-CUDA-A30-SERVER-DEVLIST", "CUDA", False, "NVIDIA A30"),               # real, 4.5 .. 24.x
    ("PERFTEST-309-ROCM-DMABUF-MI300X-SERVER", "ROCm", True, "AMD Instinct MI300X"),     # real, 25.x ROCm DMA-BUF
    ("PERFTEST-336-CUDA-DMABUF-SERVER-WAITING", "CUDA", False, None),                    # real, only the inline notice
])
def test_real_gpu_outputs_are_read(sample_id, kind, dmabuf, name):
    res = pt.parse(SAMPLES[sample_id].raw)
    acc = res["accelerator"]
    assert (acc["kind"], acc["dmabuf"], acc["device_name"]) == (kind, dmabuf, name)
    assert res["errors"] == []      # the inline notice is not an error


@pytest.mark.parametrize("sample_id,kind,units,figure,role", [
    ("PERFTEST-RECON-2604-CUDA-DMABUF-WRITE-BW-CLIENT", "bw", "Gb/sec", "bw_average", "client"),
    ("PERFTEST-RECON-2207-CUDA-PEERMEM-WRITE-BW-SERVER-MBSEC", "bw", "MB/sec", "bw_average", "server"),
    ("PERFTEST-RECON-2604-CUDA-SEND-LAT-CLIENT", "lat", "usec", "t_typical", "client"),
    ("PERFTEST-RECON-ROCM-WRITE-BW-CLIENT-SETTING", "bw", "Gb/sec", "bw_average", "client"),
    ("PERFTEST-RECON-RDMACM-SERVER-TOS", "bw", "Gb/sec", "bw_average", "server"),
])
def test_gpu_and_rdma_cm_tables_are_read(sample_id, kind, units, figure, role):
    res = pt.parse(SAMPLES[sample_id].raw)
    assert res["kind"] == kind and res["units"] == units and len(res["rows"]) == 1
    assert res["rows"][0][figure] is not None and res["errors"] == []
    if "RDMACM" in sample_id:
        assert res["accelerator"] is None and res["settings"]["Data ex. method"] == "rdma_cm"
        assert res["settings"]["TOS"] == "96" and res["settings"]["rdma_cm QPs"] == "ON"
    else:
        lines = res["accelerator"]["lines"]
        assert lines[-1] in ("destroying current CUDA Ctx", "deallocating GPU buffer 0x7f5d2e000000")


def test_gpu_figures_equal_host_figures():
    """The same table with and without the CUDA lines around it gives the same figures."""
    raw = SAMPLES["PERFTEST-RECON-2207-CUDA-PEERMEM-WRITE-BW-SERVER-MBSEC"].raw
    start, end = raw.index("-" * 87), raw.index("deallocating RX GPU buffer")
    assert pt.parse(raw)["rows"] == pt.parse(raw[start:end])["rows"]


def test_gpu_failure_goes_to_errors():
    text = ("initializing CUDA\nListing all CUDA devices in system:\nCUDA device 0: PCIe address is 17:00\n\n"
            "Picking device No. 0\n[pid = 1, dev = 0] device name = [NVIDIA A30]\ncreating CUDA Ctx\n"
            "making it the current CUDA Ctx\nCUDA device integrated: 0\ncuMemAlloc error=2\n"
            "Failed to init memory\n Couldn't create IB resources\n")
    res = pt.parse(text)
    assert res["errors"][0] == "cuMemAlloc error=2" and not res["rows"]


def test_rdma_cm_event_error_is_read():
    res = pt.parse("RDMA CM event error:\nEvent: RDMA_CM_EVENT_ADDR_ERROR; error: -110.\n Unable to init the socket connection\n")
    assert res["errors"][:2] == ["RDMA CM event error:", "Event: RDMA_CM_EVENT_ADDR_ERROR; error: -110."]
