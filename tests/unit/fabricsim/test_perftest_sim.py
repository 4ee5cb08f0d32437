"""fabricsim's perftest (ib_write_bw, ib_write_lat, ib_send_bw) and nccl-tests (all_reduce_perf)
tools: a server and a client in two fabricsim nodes (two state dirs) talking over localhost TCP."""
import os
import re
import socket
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ENTRY = os.path.abspath(os.path.join(HERE, "..", "..", "fabricsim", "bin", "fabricsim"))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Node(object):
    def __init__(self, root, name):
        self.dir = os.path.join(root, name)
        self.env = dict(os.environ, FABRICSIM_STATE_DIR=os.path.join(self.dir, "state"),
                        FABRICSIM_RUN_DIR=os.path.join(self.dir, "run"),
                        FABRICSIM_SHIM_DIR=os.path.join(self.dir, "sbin"),
                        FABRICSIM_PERFTEST_TIME_SCALE="0", FABRICSIM_PERFTEST_HANG="0",
                        FABRICSIM_PERFTEST_IO_TIMEOUT="20")
        for key in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_TESTS_MIN_BW", "FABRICSIM_PERFTEST_VERSION"):
            self.env.pop(key, None)
        self.env["NCCL_CONF_FILE"] = os.path.join(self.dir, "nccl.conf")

    def cmd(self, *args, **kw):
        env = dict(self.env, **kw.pop("env", {}))
        proc = subprocess.run([sys.executable, ENTRY] + [str(a) for a in args], env=env, cwd=self.dir,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60, check=False)
        return proc.stdout, proc.stderr, proc.returncode

    def ok(self, *args):
        out, err, rc = self.cmd(*args)
        assert rc == 0, (out, err)
        return out

    def start(self, *args):
        return subprocess.Popen([sys.executable, ENTRY] + [str(a) for a in args], env=self.env, cwd=self.dir,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)

    def log(self):
        import json
        path = os.path.join(self.dir, "state", "log.jsonl")
        with open(path) as handle:
            return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture
def nodes(tmp_path):
    made = []

    def make(server_profile="hgx-h100-roce", client_profile=None):
        made.append(1)
        a, b = Node(str(tmp_path), "a%d" % len(made)), Node(str(tmp_path), "b%d" % len(made))
        os.makedirs(a.dir)
        os.makedirs(b.dir)
        a.ok("init", "--profile", server_profile)
        b.ok("init", "--profile", client_profile or server_profile)
        return a, b
    return make


def pair(server, client, tool, sargs, cargs=None, port=None):
    """Run the server, wait until it listens, run the client: ((out, err, rc) server, client)."""
    port = port or free_port()
    srv = server.start(tool, "-p", port, *sargs)
    marker = os.path.join(server.dir, "run", "perftest.%d.listening" % port)
    deadline = time.time() + 20
    while not os.path.exists(marker) and srv.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    cres = client.cmd(tool, "-p", port, *(list(cargs if cargs is not None else sargs) + ["127.0.0.1"]))
    try:
        sout, serr = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        sout, serr = srv.communicate()
    return (sout, serr, srv.returncode), cres


def bw_avg(out):
    rows = re.findall(r"^ (\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", out, re.M)
    assert rows, out
    return float(rows[-1][3])


def lat_typical(out):
    rows = re.findall(r"^ 2\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
    assert rows, out
    return float(rows[-1][2])


BW = ["-d", "mlx5_0", "-F", "--report_gbits", "-q", "2", "-s", "1048576"]


def test_healthy_roce_bw_near_line_rate_and_both_sides_agree(nodes):
    a, b = nodes()
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", BW)
    assert (src, crc) == (0, 0), (serr, cerr)
    assert "* Waiting for client to connect... *" in sout and "Waiting" not in cout
    for out in (sout, cout):
        assert "                    RDMA_Write BW Test\n" in out
        assert " Link type       : Ethernet\n" in out and " GID index       : 3\n" in out
        assert " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n" in out
        assert " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:10:00:11\n" in out
    assert 380 <= bw_avg(cout) <= 400
    assert bw_avg(sout) == bw_avg(cout)
    assert " TX depth        : 128\n" in cout and "TX depth" not in sout
    # the server's local QP is the client's remote one
    srv_local = re.findall(r" local address: (.*)\n", sout)
    cli_remote = re.findall(r" remote address: (.*)\n", cout)
    assert srv_local == cli_remote and len(srv_local) == 2
    # reads only: a converged node keeps zero writes
    assert [r["kind"] for r in a.log() if r["tool"] == "ib_write_bw"] == ["read"]
    assert not [r for r in b.log() if r["kind"] == "write"]


def test_ib_lat_and_mib_units(nodes):
    a, b = nodes("dgx-h100-ib")
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_lat", ["-d", "mlx5_1", "-F"])
    assert (src, crc) == (0, 0), (serr, cerr)
    assert " Link type       : IB\n" in cout and "GID index" not in cout and " GID:" not in cout
    assert (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
            "   99% percentile[usec]   99.9% percentile[usec] \n") in cout
    assert 0.9 <= lat_typical(cout) <= 1.15
    assert lat_typical(sout) == lat_typical(cout)
    assert re.search(r" local address: LID 0x[0-9a-f]{2} QPN 0x[0-9a-f]{4} ", cout)
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_1", "-F"])
    assert "BW peak[MiB/sec]    BW average[MiB/sec]" in cout
    assert 45000 <= bw_avg(cout) <= 47700          # ~380-400 Gb/s in 2^20-byte units
    b.env["FABRICSIM_PERFTEST_VERSION"] = "6.21"
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_1", "-F"])
    assert "BW peak[MB/sec]    BW average[MB/sec]" in cout


def test_roce_latency_and_all_sizes(nodes):
    a, b = nodes()
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_lat", ["-d", "mlx5_3"])
    assert crc == 0, cerr
    assert 1.5 <= lat_typical(cout) <= 2.0
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_3", "-a", "--report_gbits"])
    rows = re.findall(r"^ (\d+) ", cout, re.M)
    assert rows[0] == "2" and rows[-1] == "8388608" and len(rows) == 23
    assert len(re.findall(r"^ \d+ ", sout, re.M)) == 1           # the write server prints the last report only
    assert re.search(r"^ 2\s+5000\s+0\.\d{6}\s+0\.\d{6}\s+\d+\.\d{6}$", cout, re.M)     # accuracy format < 0.1 Gb/s


def test_rail_degrade_lowers_only_that_rail(nodes):
    a, b = nodes()
    a.ok("fault", "rail-degrade", "mlx5_2", "0.5")
    slow = bw_avg(pair(a, b, "ib_write_bw", ["-d", "mlx5_2", "-F", "--report_gbits"])[1][0])
    fine = bw_avg(pair(a, b, "ib_write_bw", ["-d", "mlx5_1", "-F", "--report_gbits"])[1][0])
    assert 185 <= slow <= 200 and fine >= 380
    lat_slow = lat_typical(pair(a, b, "ib_write_lat", ["-d", "mlx5_2"])[1][0])
    lat_fine = lat_typical(pair(a, b, "ib_write_lat", ["-d", "mlx5_1"])[1][0])
    assert lat_fine < lat_slow < lat_fine * 1.2
    err = a.cmd("fault", "rail-degrade", "mlx5_2", "2")[1]
    assert "0 < FACTOR <= 1" in err


def test_pcie_degrade_lowers_the_figure(nodes):
    a, b = nodes()
    b.ok("fault", "pcie-degrade", "0000:18:00.0", "16GT/s", "8")     # mlx5_0
    out = pair(a, b, "ib_write_bw", ["-d", "mlx5_0", "-F", "--report_gbits"])[1][0]
    assert 100 <= bw_avg(out) <= 115


def test_link_down_fails_like_perftest(nodes):
    a, b = nodes("dgx-h100-ib")
    a.ok("fault", "link-down", "mlx5_0")
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_0"])
    assert src == 1 and serr == (" Port number 1 state is Down\n Couldn't set the link layer\n"
                                 " Couldn't get context for the device\n")
    assert "Waiting for client" not in sout
    assert crc == 1 and cerr.startswith("Couldn't connect to 127.0.0.1:")
    assert cerr.endswith("\nUnable to open file descriptor for socket connection\n Unable to init the socket connection\n")


def test_nothing_listening_and_port_in_use(nodes):
    a, b = nodes()
    port = free_port()
    out, err, rc = b.cmd("ib_write_bw", "-p", port, "127.0.0.1")
    assert rc == 1 and err == ("Couldn't connect to 127.0.0.1:%d\nUnable to open file descriptor for socket connection\n"
                               " Unable to init the socket connection\n" % port)
    busy = socket.socket()
    busy.bind(("0.0.0.0", port))
    busy.listen(1)
    try:
        out, err, rc = a.cmd("ib_write_bw", "-p", port)
    finally:
        busy.close()
    assert rc == 1 and "* Waiting for client to connect... *" in out
    assert err == ("Couldn't listen to port %d\nUnable to open file descriptor for socket connection\n"
                   " Unable to init the socket connection\n" % port)


def test_wrong_gid_index(nodes):
    a, b = nodes()
    # both ends on an empty GID slot: zero GIDs, modify QP to RTR fails on both sides
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_0", "-x", "5"])
    for out, err, rc in ((sout, serr, src), (cout, cerr, crc)):
        assert rc == 1 and re.match(r"^Failed to modify QP \d+ to RTR\n Unable to Connect the HCA's through the link\n$", err)
        assert " GID index       : 5\n" in out
    # one end without an IPv4 GID (hgx-h100-roce-nogid mlx5_2): perftest picks the link-local GID
    a2, b2 = nodes("hgx-h100-roce-nogid", "hgx-h100-roce")
    (sout, serr, src), (cout, cerr, crc) = pair(a2, b2, "ib_write_bw", ["-d", "mlx5_2"])
    assert " GID index       : 1\n" in sout and " GID index       : 3\n" in cout
    for err, rc in ((serr, src), (cerr, crc)):
        assert rc == 1 and err == "\n Found Incompatibility issue with GID types.\n Please Try to use a different IP version.\n\n"
    # RoCE v1 on one end, v2 on the other: connects, then the client's writes are never acknowledged
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_0", "-x", "2"], ["-d", "mlx5_0", "-x", "3"])
    assert crc == 1 and " Completion with error at client\n" in cerr and "transport retry counter exceeded (12)" in cerr
    assert src == 1 and "Failed to exchange data between server and clients" in serr


def test_switch_pfc_mismatch_collapses_bw_not_lat(nodes):
    a, b = nodes()

    def pfc3(nic):
        nic["qos"]["enp64s0np0"]["pfc_en"] = 1 << 3
    for node in (a, b):
        import json
        path = os.path.join(node.dir, "run", "nic.json")
        with open(path) as handle:
            data = json.load(handle)
        pfc3(data)
        with open(path, "w") as handle:
            json.dump(data, handle)
    dev = "mlx5_1"
    healthy = bw_avg(pair(a, b, "ib_write_bw", ["-d", dev, "-F", "--report_gbits"])[1][0])
    lat_ok = lat_typical(pair(a, b, "ib_write_lat", ["-d", dev])[1][0])
    a.ok("fault", "switch-pfc", "enp64s0np0", "none")
    collapsed = bw_avg(pair(a, b, "ib_write_bw", ["-d", dev, "-F", "--report_gbits"])[1][0])
    small = pair(a, b, "ib_write_bw", ["-d", dev, "-s", "64", "--report_gbits"])[1][0]
    lat_bad = lat_typical(pair(a, b, "ib_write_lat", ["-d", dev])[1][0])
    assert healthy >= 380 and collapsed < 0.2 * healthy
    assert bw_avg(small) > 1.0                     # small messages: no load, no drops
    assert lat_bad == lat_ok


def test_usage_errors_and_cuda(nodes):
    a, b = nodes("small-roce")
    out, err, rc = a.cmd("ib_write_bw", "--bogus")
    assert rc == 1 and err == ("ib_write_bw: unrecognized option '--bogus'\n Invalid Command or flag.\n"
                               " Please check command line and run again.\n\n Parser function exited with Error\n")
    assert out.startswith("Usage:\n  ib_write_bw            start a server and wait for connection\n")
    out, err, rc = a.cmd("ib_write_lat", "-Y")
    assert rc == 1 and err.startswith("ib_write_lat: invalid option -- 'Y'\n")
    out, err, rc = a.cmd("ib_write_bw", "--use_cuda=0", "127.0.0.1")
    assert rc == 1 and out == " Unsupported memory type\n" and err == " Parser function exited with Error\n"
    out, err, rc = a.cmd("ib_write_bw", "-D", "5", "-a")
    assert rc == 1 and err == "Duration mode currently doesn't support running on all sizes.\n"
    assert a.cmd("ib_write_bw", "--version")[0] == "Version: 6.29\n"


def test_cuda_on_gpu_nodes(nodes):
    a, b = nodes()
    b.ok("modprobe", "nvidia_peermem")
    # nvidia_peermem not loaded on the server: plain --use_cuda cannot register GPU memory there
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_0", "--use_cuda=0"])
    assert src == 1 and "Couldn't allocate MR with error=14\n" in serr
    assert crc == 1 and "Failed to exchange data between server and clients" in cerr
    # DMA-BUF does not need it
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_0", "--use_cuda=0", "--use_cuda_dmabuf",
                                                                      "--report_gbits", "-F"])
    assert (src, crc) == (0, 0), (serr, cerr)
    assert "\nPicking device No. 0\n" in cout and "using DMA-BUF for GPU buffer address" in cout
    # perftest 26.04.17's wording (the "device memory tests" wording is newer, master after the tag)
    assert "Perftest doesn't supports CUDA tests with inline messages: inline size set to 0\n" in cout
    assert re.search(r"^Calling ibv_reg_dmabuf_mr\(offset=0, size=\d+, addr=0x[0-9a-f]+, fd=\d+\) for QP #0$", cout, re.M)
    assert re.search(r"\n-{87}\ndeallocating GPU buffer [0-9a-f]{16}\ndestroying current CUDA Ctx\n$", cout)
    assert bw_avg(cout) >= 380
    try:
        from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _perftest
    except ImportError:     # pragma: no cover
        return
    for text in (cout, sout):
        parsed = _perftest.parse(text)
        assert parsed["rows"] and parsed["accelerator"]["kind"] == "CUDA" and parsed["accelerator"]["dmabuf"]
        assert parsed["errors"] == []
    assert _perftest.gbps(_perftest.parse(cout)["rows"][-1]["bw_average"], "Gb/sec") == bw_avg(cout)


def test_rdma_cm_server_hint(nodes):
    """-R: 'rdma_cm QPs : ON', 'Data ex. method : rdma_cm'; the server prints its waiting hint
    (ctx_print_test_info); perftest's parser reads both sides."""
    a, b = nodes()
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_0", "-R", "--report_gbits"])
    assert (src, crc) == (0, 0), (serr, cerr)
    assert " rdma_cm QPs\t : ON\n Data ex. method : rdma_cm\n" + "-" * 87 + "\n Waiting for client rdma_cm QP to connect\n" \
        " Please run the same command with the IB/RoCE interface IP\n" in sout
    assert " Waiting for client rdma_cm QP" not in cout and " Data ex. method : rdma_cm\n" in cout
    try:
        from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _perftest
    except ImportError:     # pragma: no cover
        return
    for text in (sout, cout):
        parsed = _perftest.parse(text)
        assert parsed["rows"] and parsed["settings"]["Data ex. method"] == "rdma_cm" and parsed["accelerator"] is None


def test_duration_and_out_json(nodes):
    a, b = nodes()
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_0", "-D", "4", "--report_gbits", "-F",
                                                                      "--out_json", "--out_json_file=r.json"])
    assert crc == 0, cerr
    assert cout.startswith(" WARNING: BW peak won't be measured in this run.\n")
    assert re.search(r"^ 65536\s+\d{6,}\s+0\.00\s+3\d\d\.\d\d", cout, re.M)
    import json
    with open(os.path.join(b.dir, "r.json")) as handle:
        data = json.load(handle)
    assert data["test_info"]["test"] == "RDMA_Write_BW_Test" and data["results"]["BW_peak"] == 0.0
    assert data["results"]["BW_average"] == bw_avg(cout)


def test_send_bw(nodes):
    a, b = nodes()
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_send_bw", ["-d", "mlx5_0", "--report_gbits", "-F"])
    assert (src, crc) == (0, 0), (serr, cerr)
    assert "                    Send BW Test\n" in sout and " RX depth        : 512\n" in sout
    assert " RKey" not in cout


def test_all_reduce_perf(nodes):
    a, b = nodes("hgx-h100-roce", "small-roce")
    out = a.ok("all_reduce_perf", "-b", "8", "-e", "1G", "-f", "2", "-g", "8")
    assert "# Collective test starting: all_reduce_perf\n" in out
    assert ("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw"
            "  #wrong \n") in out
    assert len(re.findall(r"^#  Rank  \d Group  0 Pid", out, re.M)) == 8
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+float\s+sum\s+-1\s+(\S+)\s+(\S+)\s+(\S+)\s+0\s+", out, re.M)
    assert rows[-1][0] == "1073741824" and 330 < float(rows[-1][4]) < 370
    assert re.search(r"^# Avg bus bandwidth    : [\d.]+ \n", out, re.M)
    # over the rails: the slowest rail sets the figure
    with open(a.env["NCCL_CONF_FILE"], "w") as handle:
        handle.write("NCCL_P2P_DISABLE=1\nNCCL_SHM_DISABLE=1\n")
    net = a.ok("all_reduce_perf", "-b", "1G", "-e", "1G", "-g", "8")
    a.ok("fault", "rail-degrade", "mlx5_5", "0.5")
    slow = a.ok("all_reduce_perf", "-b", "1G", "-e", "1G", "-g", "8")

    def last_busbw(text):
        return float(re.findall(r"^\s+\d+\s+\d+\s+float\s+sum\s+-1\s+\S+\s+\S+\s+(\S+)", text, re.M)[-1])
    assert 40 < last_busbw(net) < 50 and last_busbw(slow) < 0.55 * last_busbw(net)
    out, err, rc = a.cmd("all_reduce_perf", "-g", "9")
    assert rc == 5 and "Invalid number of GPUs: 9 requested but only 8 were found.\n" in err
    out, err, rc = a.cmd("all_reduce_perf", "-b", "1G", "-e", "1G", "-g", "8", env={"NCCL_TESTS_MIN_BW": "100"})
    assert rc == 7 and "# Avg bus bandwidth    : " in out and "FAILED" in out
    out, err, rc = b.cmd("all_reduce_perf", "-g", "1")
    assert rc == 2 and "Test CUDA failure util.cu:674 'no CUDA-capable device is detected'" in out
    assert [r["kind"] for r in a.log() if r["tool"] == "all_reduce_perf"] == ["read"] * 5


def test_parser_reads_the_output(nodes):
    """H1's parser (plugins/module_utils/parsers/_perftest.py) reads what the simulator prints."""
    try:
        from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _perftest
    except ImportError:
        pytest.skip("plugins/module_utils/parsers/_perftest.py not there yet")
    a, b = nodes()
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", BW)
    parsed = _perftest.parse(cout)
    assert parsed["kind"] == "bw" and parsed["units"] == "Gb/sec" and parsed["device"] == "mlx5_0"
    assert parsed["gid_index"] == 3 and parsed["link_type"] == "Ethernet"
    assert parsed["rows"][0]["bytes"] == 1048576 and parsed["rows"][0]["bw_average"] == bw_avg(cout)
    assert _perftest.parse(sout)["rows"][0]["bw_average"] == bw_avg(cout)
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_lat", ["-d", "mlx5_0"])
    lat = _perftest.parse(cout)
    assert lat["kind"] == "lat" and lat["rows"][0]["t_typical"] == lat_typical(cout)
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_0", "-x", "5"])
    errs = _perftest.parse(cout + cerr)["errors"]
    assert any("Unable to Connect the HCA's through the link" in e for e in errs)


def test_parsers_read_every_layout(nodes):
    """The parsers (H1) read every layout and failure the simulator prints: server and client, -a with
    the small-figure format, duration mode, MB/sec, send, --out_json, errors; all_reduce_perf."""
    try:
        from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _perftest, _nccl_tests
    except ImportError:
        pytest.skip("plugins/module_utils/parsers/_perftest.py or parsers/_nccl_tests.py not there yet")
    a, b = nodes()
    runs = [("ib_write_bw", ["-d", "mlx5_1", "-a", "--report_gbits"]),
            ("ib_write_bw", ["-d", "mlx5_1", "-D", "2", "-q", "2"]),
            ("ib_send_bw", ["-d", "mlx5_1", "--report_gbits"]),
            ("ib_write_lat", ["-d", "mlx5_1", "-a"]),
            ("ib_write_lat", ["-d", "mlx5_1", "-D", "2"])]
    for tool, args in runs:
        (sout, serr, src), (cout, cerr, crc) = pair(a, b, tool, args)
        assert (src, crc) == (0, 0), (tool, args, serr, cerr)
        for out in (sout, cout):
            parsed = _perftest.parse(out)
            assert parsed["rows"] and not [e for e in parsed["errors"] if "WARNING" not in e], (tool, args, parsed)
            assert parsed["device"] == "mlx5_1" and parsed["gid_index"] == 3
    b.env["FABRICSIM_PERFTEST_VERSION"] = "6.21"
    cout = pair(a, b, "ib_write_bw", ["-d", "mlx5_1", "--out_json", "--out_json_file=x.json"])[1][0]
    parsed = _perftest.parse(cout)
    assert parsed["units"] == "MB/sec"
    with open(os.path.join(b.dir, "x.json")) as handle:
        from_json = _perftest.parse_json(handle.read())
    assert from_json["rows"][0]["bw_average"] == parsed["rows"][0]["bw_average"]
    # failures: the tool's error lines are kept
    a.ok("fault", "link-down", "mlx5_4")
    (sout, serr, src), (cout, cerr, crc) = pair(a, b, "ib_write_bw", ["-d", "mlx5_4"])
    assert any("Port number 1 state is Down" in e for e in _perftest.parse(sout + serr)["errors"])
    assert any("Couldn't connect to 127.0.0.1:" in e for e in _perftest.parse(cout + cerr)["errors"])
    a2, b2 = nodes("hgx-h100-roce-nogid", "hgx-h100-roce")
    (sout, serr, src), (cout, cerr, crc) = pair(a2, b2, "ib_write_lat", ["-d", "mlx5_2"])
    assert any("Incompatibility issue with GID types" in e for e in _perftest.parse(cout + cerr)["errors"])
    # nccl-tests
    out = a.ok("all_reduce_perf", "-b", "8", "-e", "128M", "-f", "2", "-g", "8")
    nccl = _nccl_tests.parse(out)
    assert nccl["test"] == "all_reduce_perf" and len(nccl["ranks"]) == 8 and nccl["out_of_bounds"] == 0
    assert nccl["rows"][-1]["redop"] == "sum" and nccl["rows"][-1]["root"] == -1
    assert abs(nccl["avg_busbw"] - float(re.search(r"Avg bus bandwidth    : (\S+)", out).group(1))) < 1e-6
    out = a.ok("all_reduce_perf", "-b", "1M", "-e", "1M", "-g", "2", "-c", "0")
    assert _nccl_tests.parse(out)["rows"][0]["oop"]["wrong"] is None
