"""ib_write_bw, ib_write_lat, ib_send_bw, ib_read_bw: perftest pair tests whose output follows perftest
26.04 (version string 6.29; linux-rdma/perftest ``perftest_parameters.c`` ctx_print_test_info,
print_full_bw_report, print_report_lat, ``perftest_communication.c`` and the tools' main()).

Who prints what (src/write_bw.c, read_bw.c, send_bw.c): the ``ib_write_bw`` and ``ib_read_bw`` server
measures nothing and prints the client's report (``xchg_bw_reports``: the last row only); the
``ib_send_bw`` receiver (server) prints its own figures, as the sender does. ``ib_read_bw`` prints
`` Outstand reads  : N`` instead of ``Max inline data`` (ctx_print_test_info: READ and ATOMIC) and
``OUT %#04x`` before ``RKey``/``VAddr`` in its address lines (READ_FMT, ctx_print_pingpong_data).
Real outputs the layout was checked against: tests/unit/fixtures/samples/perftest.txt
(PERFTEST-PIB-3-READ-BW-KEYS-ERROR, PERFTEST-BYTEPS-371-SEND-BW-2QPS-SERVER, PERFTEST-82-SEND-BW-ROCE-BOND-RDMACM).

Server (no host argument) binds 0.0.0.0:PORT (``-p``, default 18515), accepts one client, and both
sides exchange one JSON line describing their side (port state and rate, PCIe link, the GID at
``-x``, faults, options); each side then derives the same figures from both descriptions, so
server and client print consistent results. Nothing is written: every call is a read in the log.

Figures (see README "perftest and nccl-tests"): path = min(active rate of both ports x rail-degrade
factor, PCIe link of both NICs (GT/s x width x encoding x 0.9)); a write/send stream reaches 0.97 of
it for big messages, a per-QP message rate caps small ones; a PFC mismatch with the switch
(the NIC's PFC priorities not all enabled on the switch port) collapses big-message bandwidth,
not latency. Latency: ~1.0 us IB, ~1.65 us RoCE for 2 bytes, plus serialisation.

Time: the client sleeps perftest's ``sleep(1)`` after connecting and the test time (``-D`` or
iterations / message rate), scaled by ``$FABRICSIM_PERFTEST_TIME_SCALE`` (default 1; tests 0).
"""
import hashlib
import ipaddress
import json
import os
import random
import socket
import time

VERSION = "6.29"           # perftest 26.04 (configure.ac AC_INIT)
MIB_SINCE = (6, 22)        # perftest 24.07 (6.22) prints MiB/sec instead of MB/sec (same 2^20 factor)
UNLOCKED = True            # main.run_tool runs these without the state lock (a server waits in accept)
DEF_PORT = 18515
RESULT_LINE = "-" * 87 + "\n"
TOOLS = ("ib_write_bw", "ib_write_lat", "ib_send_bw", "ib_read_bw")
OUT_READS = 16             # ib_read_bw's outstanding reads: the device's max_qp_rd_atom (16 on ConnectX)
PCIE_EFF = 0.9             # TLP/DLLP overhead on the PCIe link
WIRE_EFF = 0.97            # a write stream's share of the wire (headers, ACKs) for big messages
MPPS_PER_QP = 3.0          # small-message ceiling per QP (Mpps; ~2.6 seen on HDR with one QP)
MPPS_MAX = 60.0
PFC_COLLAPSE = 0.12        # share of the bandwidth left when drops + go-back-N retransmissions set in
LAT_BASE = {"InfiniBand": 1.00, "Ethernet": 1.65}

SHORT = "w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:aFegzRvhbNVCHUOZP"
LONG_ARG = {
    "port": "p", "ib-dev": "d", "ib-port": "i", "mtu": "m", "size": "s", "iters": "n", "tx-depth": "t",
    "qp-timeout": "u", "sl": "S", "gid-index": "x", "connection": "c", "qp": "q", "vector": "X",
    "inline_size": "I", "outs": "o", "tos": "T", "hop_limit": "L", "MGID": "M", "rx-depth": "r", "cq-mod": "Q",
    "atomic_type": "A", "post_list": "l", "duration": "D", "margin": "f",
}
LONG_FLAG = {"all": "a", "CPU-freq": "F", "events": "e", "mcg": "g", "comm_rdma_cm": "z", "rdma_cm": "R",
             "help": "h", "bidirectional": "b", "noPeak": "N", "version": "V", "report-cycles": "C",
             "report-histogrm": "H", "report-unsorted": "U", "dualport": "O"}
LONG_OTHER_ARG = ("source_mac", "dest_mac", "dest_ip", "source_ip", "dest_port", "source_port", "ethertype",
                  "limit_bw", "limit_msgrate", "report-counters", "force-link", "remote_mac", "local_mac",
                  "remote_ip", "local_ip", "remote_port", "local_port", "pkey_index", "burst_size",
                  "typical_pkt_size", "rate_limit", "rate_limit_type", "rate_units", "output", "out_json_file",
                  "latency_gap", "flow_label", "retry_count", "payload_file_path", "use_cuda", "use_cuda_bus_id",
                  "cuda_mem_type", "use_rocm", "use_neuron", "use_hl", "use_mlu", "use_opencl", "mmap",
                  "mmap-offset", "dlid", "tclass", "wait_destroy", "flows", "flows_burst", "reply_every",
                  "recv_post_list", "bind_source_ip", "cqe_poll", "pin_cores", "numa_node", "gpu_touch",
                  "use_musa", "use_musa_bus_id", "opencl_platform_id", "use_ib_dm_dmabuf", "vlan_pcp")
LONG_OTHER_FLAG = ("server", "client", "mac_fwd", "use_rss", "run_infinitely", "report_gbits", "use-srq", "no_lock",
                   "use-null-mr", "report-both", "reversed", "tcp", "cpu_util", "out_json", "dont_xchg_versions",
                   "use_cuda_dmabuf", "use_cuda_pcie_mapping", "use_data_direct", "use_musa_dmabuf",
                   "use_musa_pcie_mapping", "use_rocm_dmabuf", "use_neuron_dmabuf", "use_mlu_dmabuf", "ipv6",
                   "ipv6-addr", "raw_ipv6", "report-per-port", "odp", "use_hugepages", "use_old_post_send",
                   "promiscuous", "sniffer", "raw_mcast", "mr_per_qp", "perform_warm_up", "vlan_en",
                   "disable_pcie_relaxed", "write_with_imm", "send_with_imm", "connectionless",
                   "disable_dynamic_polling", "data_validation", "data_validation_debug", "disable_numa")


class Fail(Exception):
    """A perftest failure: (stdout so far, stderr lines, rc)."""

    def __init__(self, err, rc=1, out=""):
        Exception.__init__(self, err)
        self.err, self.rc, self.out = err, rc, out


def is_write(tool, args):
    return False


def _scale():
    try:
        return max(0.0, float(os.environ.get("FABRICSIM_PERFTEST_TIME_SCALE", "1")))
    except ValueError:
        return 1.0


def _sleep(seconds):
    if seconds * _scale() > 0:
        time.sleep(seconds * _scale())


def chex(value, width):
    """C printf ``%#0<width>x``: 0x prefix counted in the width, none for zero."""
    if value == 0:
        return "0" * width
    digits = "%x" % value
    return "0x" + digits.rjust(max(0, width - 2), "0")


def verb_of(tool):
    return {"ib_write_bw": ("RDMA_Write", "bw"), "ib_write_lat": ("RDMA_Write", "lat"),
            "ib_send_bw": ("Send", "bw"), "ib_read_bw": ("RDMA_Read", "bw")}[tool]


# --- options (getopt_long as perftest's parser) ---------------------------------------------
def _usage(tool, kind):
    lines = ["Usage:\n", "  %s            start a server and wait for connection\n" % tool,
             "  %s <host>     connect to server at <host>\n" % tool, "\n",
             "Note: Some options must match on both server and client for consistent behavior (marked 'SYMMETRIC').\n",
             "\n", "Options:\n",
             "  -a, --all  Run sizes from 2 till 2^23 (SYMMETRIC)\n"]
    if kind == "bw":
        lines.append("  -b, --bidirectional  Measure bidirectional bandwidth (default unidirectional) (SYMMETRIC)\n")
    lines += ["  -d, --ib-dev=<dev>  Use IB device <dev> (default first device found)\n",
              "  -D, --duration  Run test for a customized period of seconds. (SYMMETRIC)\n",
              "  -F, --CPU-freq  Do not show a warning even if cpufreq_ondemand module is loaded, and cpu-freq is not on max.\n",
              "  -h, --help  Show this help screen.\n",
              "  -i, --ib-port=<port>  Use port <port> of IB device (default 1)\n",
              "  -n, --iters=<iters>  Number of exchanges (at least 5, default %d)\n" % (5000 if kind == "bw" else 1000),
              "  -p, --port=<port>  Listen on/connect to port <port> (default 18515)\n"]
    if kind == "bw":
        lines.append("  -q, --qp=<num of qp's>  Num of qp's(default 1)\n")
    lines += ["  -s, --size=<size>  Size of message to exchange (default %d)\n" % (65536 if kind == "bw" else 2),
              "  -x, --gid-index=<index>   Test uses GID with GID index (Default : IB - no gid . ETH - 0)\n",
              "      --out_json  Save the report in a json file\n",
              "      --out_json_file=<file>  Name of the report json file. (Default: perftest_out.json in the working directory) \n"]
    if kind == "bw":
        lines.append("      --report_gbits  Report Max/Average BW of test in Gbit/sec (instead of MiB/sec)\n")
    lines += ["      --use_cuda=<cuda device id>  Use CUDA specific device for GPUDirect RDMA testing\n",
              "      --use_cuda_dmabuf  Use CUDA DMA-BUF for GPUDirect RDMA testing\n"]
    return "".join(lines)


def _bad_command(tool, kind, getopt_msg):
    return Fail("%s\n Invalid Command or flag.\n Please check command line and run again.\n\n"
                " Parser function exited with Error\n" % getopt_msg, 1, _usage(tool, kind))


def _num(value, what, tool):
    try:
        return int(value, 0)
    except ValueError:
        raise Fail(" Invalid %s\n Parser function exited with Error\n" % what)


def parse_args(tool, args):
    """Options -> dict; raises Fail with perftest's text."""
    verb, kind = verb_of(tool)
    p = {"tool": tool, "verb": verb, "kind": kind, "device": None, "ib_port": 1, "gid_index": -1,
         "port": DEF_PORT, "size": 65536 if kind == "bw" else 2, "iters": 5000 if kind == "bw" else 1000,
         "iters_set": False, "duration": None, "qps": 1, "all": False, "gbits": False, "cuda": None,
         "dmabuf": False, "out_json": False, "json_file": "perftest_out.json", "host": None,
         "noPeak": False, "bidir": False, "help": False, "version": False, "warnings": [], "rdma_cm": False,
         "comm_rdma_cm": False}
    positional = []
    i = 0
    opts = []
    while i < len(args):
        a = args[i]
        if a == "--":
            positional += args[i + 1:]
            break
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
            if name in LONG_ARG or name in LONG_OTHER_ARG:
                if not eq:
                    if i + 1 >= len(args):
                        raise _bad_command(tool, kind, "%s: option '--%s' requires an argument" % (tool, name))
                    i += 1
                    val = args[i]
                opts.append((LONG_ARG.get(name, name), val))
            elif name in LONG_FLAG or name in LONG_OTHER_FLAG:
                if eq:
                    raise _bad_command(tool, kind, "%s: option '--%s' doesn't allow an argument" % (tool, name))
                opts.append((LONG_FLAG.get(name, name), None))
            else:
                raise _bad_command(tool, kind, "%s: unrecognized option '%s'" % (tool, a))
        elif a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                c = a[j]
                pos = SHORT.find(c)
                if pos < 0 or c == ":":
                    raise _bad_command(tool, kind, "%s: invalid option -- '%s'" % (tool, c))
                if pos + 1 < len(SHORT) and SHORT[pos + 1] == ":":
                    val = a[j + 1:]
                    if not val:
                        if i + 1 >= len(args):
                            raise _bad_command(tool, kind, "%s: option requires an argument -- '%s'" % (tool, c))
                        i += 1
                        val = args[i]
                    opts.append((c, val))
                    break
                opts.append((c, None))
                j += 1
        else:
            positional.append(a)
        i += 1
    for key, val in opts:
        if key == "h":
            p["help"] = True
        elif key == "V":
            p["version"] = True
        elif key == "d":
            p["device"] = val
        elif key == "i":
            p["ib_port"] = _num(val, "IB port", tool)
        elif key == "x":
            p["gid_index"] = _num(val, "GID index", tool)
            p["gid_user"] = True
        elif key == "p":
            p["port"] = _num(val, "port", tool)
        elif key == "s":
            p["size"] = _num(val, "size", tool)
            if not 1 <= p["size"] <= 0x80000000:
                raise Fail(" Message Size should be between 1 and 2147483648\n Parser function exited with Error\n")
        elif key == "n":
            p["iters"] = _num(val, "iterations", tool)
            p["iters_set"] = True
            if p["iters"] < 5:
                raise Fail(" Iteration num should be at least 5\n Parser function exited with Error\n")
        elif key == "D":
            p["duration"] = _num(val, "duration", tool)
        elif key == "q":
            p["qps"] = _num(val, "number of qps", tool)
        elif key == "a":
            p["all"] = True
        elif key == "N":
            p["noPeak"] = True
        elif key == "b":
            p["bidir"] = True
        elif key == "report_gbits":
            p["gbits"] = True
        elif key == "use_cuda":
            p["cuda"] = _num(val, "CUDA device", tool)
        elif key == "use_cuda_dmabuf":
            p["dmabuf"] = True
        elif key == "R":
            p["rdma_cm"] = True
        elif key == "z":
            p["comm_rdma_cm"] = True
        elif key == "out_json":
            p["out_json"] = True
        elif key == "out_json_file":
            p["json_file"] = val
    if p["help"]:               # HELP_EXIT / VERSION_EXIT: main() still returns FAILURE
        raise Fail("", 1, _usage(tool, kind))
    if p["version"]:
        raise Fail("", 1, "Version: %s\n" % VERSION)
    if p["dmabuf"] and p["cuda"] is None:
        raise Fail("CUDA DMA-BUF cannot be used without CUDA\n Parser function exited with Error\n")
    if len(positional) == 1:
        p["host"] = positional[0]
    elif positional:
        raise Fail(" Invalid Command line. Please check command rerun \n Parser function exited with Error\n")
    if p["duration"] is not None:
        if p["all"]:
            raise Fail("Duration mode currently doesn't support running on all sizes.\n", 1, RESULT_LINE)
        if kind == "bw" and not p["noPeak"]:
            p["warnings"].append(" WARNING: BW peak won't be measured in this run.\n")
        p["noPeak"] = True
    elif kind == "bw" and p["iters"] > 20000 and not p["noPeak"]:
        p["warnings"].append(" WARNING: BW peak won't be measured in this run.\n")
        p["noPeak"] = True
    return p


# --- this node's side -------------------------------------------------------------------
def pcie_gbps(pdev):
    speed, width = pdev.get("link_sta") or pdev.get("link_cap") or ["16GT/s", 16]
    gts = float(str(speed).replace("GT/s", ""))
    enc = 8.0 / 10.0 if gts < 8 else 128.0 / 130.0
    return gts * int(width) * enc * PCIE_EFF


def _gid_raw(entry):
    return list(entry[1].packed) if entry else [0] * 16


def pfc_mismatch(ctx, port):
    """The NIC has PFC on a priority the switch port does not: drops under load."""
    if port["link_layer"] != "Ethernet":
        return False
    q = ctx.nic.get("qos", {}).get(port["netdev"]) or {}
    nic_prios = set(p for p in range(8) if q.get("pfc_en", 0) & (1 << p))
    nb = ctx.profile.data.get("lldp_neighbour", {})
    switch = set((ctx.profile.faults.get("switch_pfc") or {}).get(port["netdev"], nb.get("pfc", [])))
    return bool(nic_prios - switch)


def _peermem_loaded():
    try:
        from . import kmod
        return bool(kmod.loaded("nvidia_peermem"))
    except Exception:       # pragma: no cover - no sysfs tree
        return False


def local_side(ctx, p):
    """Check the device as perftest does before it connects; return this side's description."""
    prof = ctx.profile
    if p["cuda"] is not None and not prof.gpus:
        # distro perftest builds without CUDA: the memory type is refused by the parser
        raise Fail(" Parser function exited with Error\n", 1, " Unsupported memory type\n")
    if not prof.nics:
        raise Fail(" Did not detect devices \n If device exists, check if driver is up\n"
                   " Unable to find the Infiniband/RoCE device\n")
    nic = prof.nics[0] if p["device"] is None else prof.nic(p["device"])
    if nic is None:
        raise Fail("IB device %s not found\n Unable to find the Infiniband/RoCE device\n" % p["device"])
    port = [pt for pt in nic["ports"] if pt["port"] == p["ib_port"]]
    if not port:
        raise Fail(" Unable to query port %d attributes\n Couldn't set the link layer\n"
                   " Couldn't get context for the device\n" % p["ib_port"])
    port = port[0]
    state, snum = prof.port_state(port)[:2]
    if state != "ACTIVE":
        word = {1: "Down", 2: "Init", 3: "Armed"}.get(snum, "Nop")
        raise Fail(" Port number %d state is %s\n Couldn't set the link layer\n"
                   " Couldn't get context for the device\n" % (p["ib_port"], word))
    out = []
    if p["cuda"] is not None:
        # perftest_parameters.c ctx_set_max_inline at 26.04.17 ("device memory tests" only after it, on master)
        out.append("Perftest doesn't supports CUDA tests with inline messages: inline size set to 0\n")
    eth = port["link_layer"] == "Ethernet"
    gids = dict((g[0], g) for g in prof.gids(nic, port))
    gid_index = p["gid_index"]
    if eth and gid_index == -1:
        # not given: perftest picks the best GID (IPv4 first, global scope, RoCE v2)
        def score(g):
            v4 = g[1].ipv4_mapped is not None
            return (2 if v4 else 0) + (1 if not g[1].is_link_local else 0) + (1 if g[2] == "RoCE v2" else 0)
        best = sorted(gids.values(), key=lambda g: (-score(g), g[0]))
        gid_index = best[0][0] if best else 0
    entry = gids.get(gid_index) if gid_index >= 0 else None
    mtu = 4096
    if eth:
        mtu = max(m for m in (256, 512, 1024, 2048, 4096) if m <= max(port.get("mtu", 1500), 256))
    faults = prof.faults
    factor = float((faults.get("rail_degrade") or {}).get(nic["dev"], 1.0))
    net = None
    if eth and entry is not None and entry[1].ipv4_mapped is not None:
        v4 = str(entry[1].ipv4_mapped)
        net = v4 + "/32"
        cands = []
        if prof.live is not None:
            cands = [str(a) for a in prof.live.get(port["netdev"], []) if hasattr(a, "ip") and str(a.ip) == v4]
        if port.get("ipv4") and ipaddress.ip_interface(port["ipv4"]).ip == ipaddress.ip_address(v4):
            cands.append(port["ipv4"])
        if cands:
            net = str(ipaddress.ip_interface(cands[0]).network)
    gpu = None
    if p["cuda"] is not None:
        gpus = sorted(prof.gpus, key=lambda g: g["index"])
        gpu = {"count": len(gpus), "name": gpus[0]["name"] if gpus else "",
               "bus": [g["bdf"] for g in gpus], "peermem": _peermem_loaded()}
    return {
        "host": socket.gethostname(), "profile": prof.name, "dev": nic["dev"], "ib_port": p["ib_port"],
        "link_layer": port["link_layer"], "rate": float(port["rate"]), "pcie": pcie_gbps(prof.pci[nic["bdf"]]),
        "lid": 0 if eth else int(port.get("lid", 0)), "gid_index": gid_index,
        "gid": _gid_raw(entry), "gid_type": entry[2] if entry else None, "net": net, "mtu": mtu,
        "numa": prof.numa_of(nic["bdf"]), "rail_factor": factor, "pfc_mismatch": pfc_mismatch(ctx, port),
        "gpu": gpu, "cuda": p["cuda"], "dmabuf": p["dmabuf"], "rdma_cm": p["rdma_cm"], "params": dict(
            (k, p[k]) for k in ("tool", "size", "iters", "duration", "qps", "all", "noPeak", "kind")),
        "pre_out": "".join(out), "version": VERSION,
    }


# --- what happens between two sides (pure) ----------------------------------------------------
def _seed(server, client, *extra):
    key = "|".join(str(x) for x in (server["host"], server["dev"], client["host"], client["dev"]) + extra)
    return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16)


def _is_v4(raw):
    return raw[:12] == [0] * 10 + [255, 255]


def cuda_failure(side):
    """(stdout, stderr) of a side whose GPU buffer cannot be set up, or None."""
    if side["cuda"] is None:
        return None
    gpu = side["gpu"]
    if side["cuda"] >= gpu["count"]:
        return ("initializing CUDA\n", "No such device ID (%d) exists in system\nCouldn't init GPU context: 1\n"
                "Failed to init memory\n Couldn't create IB resources\n" % side["cuda"])
    if not side["dmabuf"] and not gpu["peermem"]:
        return (cuda_banner(side), "Couldn't allocate MR with error=14\nfailed to create mr\nFailed to create MR\n"
                " Couldn't create IB resources\n")
    return None


def cuda_banner(side, pid=None):
    gpu = side["gpu"]
    lines = ["initializing CUDA\n", "Listing all CUDA devices in system:\n"]
    for i, bdf in enumerate(gpu["bus"]):
        bus, dev = bdf.split(":")[1], bdf.split(":")[2].split(".")[0]
        lines.append("CUDA device %d: PCIe address is %s:%s\n" % (i, bus.upper(), dev.upper()))
    lines += ["\nPicking device No. %d\n" % side["cuda"],
              "[pid = %d, dev = %d] device name = [%s]\n" % (pid or os.getpid(), side["cuda"], gpu["name"]),
              "creating CUDA Ctx\n", "making it the current CUDA Ctx\n", "CUDA device integrated: 0\n"]
    return "".join(lines)


def gpu_addr(side, rng):
    return 0x7f0000000000 + (rng.getrandbits(28) << 12)


def cuda_alloc(side, size, rng):
    """cuda_memory.c cuda_memory_allocate_buffer at 26.04.17, then the DMA-BUF registration line of
    perftest_resources.c create_single_mr. The ``%p`` of "allocated GPU buffer of a .." is the address
    of perftest's local pointer (a stack address), not the GPU address: printed as the code does."""
    addr = gpu_addr(side, rng)
    buf = max(size, 65536) * 2 * side["params"]["qps"]
    out = []
    if side["dmabuf"]:
        out.append("using DMA-BUF for GPU buffer address at %#x aligned at %#x with aligned size %d\n" % (addr, addr, buf))
    out.append("allocated GPU buffer of a %d address at %#x for type CUDA_MEM_DEVICE\n"
               % (buf, 0x7ffc00000000 + (rng.getrandbits(24) << 4)))
    if side["dmabuf"]:
        out.append("Calling ibv_reg_dmabuf_mr(offset=0, size=%d, addr=%#x, fd=%d) for QP #0\n" % (buf, addr, 5 + rng.getrandbits(2)))
    return "".join(out)


def connect_outcome(server, client):
    """None when the QPs connect; else {"stage": "gid"|"rtr"|"traffic", "fail": {"server": bool, "client": bool}}."""
    eth = server["link_layer"] == "Ethernet" or client["link_layer"] == "Ethernet"
    sg, cg = server["gid"], client["gid"]
    if server["gid_index"] >= 0 and client["gid_index"] >= 0 and _is_v4(sg) != _is_v4(cg):
        return {"stage": "gid", "fail": {"server": True, "client": True}}
    if server["link_layer"] != client["link_layer"]:
        return {"stage": "rtr", "fail": {"server": True, "client": True}}
    if eth:
        zero = [0] * 16
        if sg == zero or cg == zero:
            return {"stage": "rtr", "fail": {"server": True, "client": True}}
        if _is_v4(sg) and server["net"] and client["net"]:
            a = ipaddress.ip_network(server["net"], strict=False)
            b = ipaddress.ip_network(client["net"], strict=False)
            if not (ipaddress.ip_address(bytes(cg[12:])) in a or ipaddress.ip_address(bytes(sg[12:])) in b):
                return {"stage": "rtr", "fail": {"server": True, "client": True}}    # no route between the rails
        if server["gid_type"] != client["gid_type"]:
            return {"stage": "traffic", "fail": {"server": False, "client": True}}   # RoCE v1 vs v2: nothing arrives
    else:
        for side, other in ((server, client), (client, server)):
            if side["gid_index"] > 0 and side["gid"] == [0] * 16:
                return {"stage": "rtr", "fail": {"server": True, "client": True}}
    return None


def path_gbps(server, client, size=None):
    wire = min(server["rate"] * server["rail_factor"], client["rate"] * client["rail_factor"])
    return min(wire, server["pcie"], client["pcie"])


def bw_rows(server, client, p):
    """[(size, iterations, peak Gb/s, avg Gb/s, Mpps)] as the client measures them."""
    rng = random.Random(_seed(server, client, p["tool"], p["size"], p["qps"]))
    sizes = [1 << i for i in range(1, 24)] if p["all"] else [p["size"]]
    path = path_gbps(server, client)
    collapse = server["pfc_mismatch"] or client["pfc_mismatch"]
    rows = []
    for size in sizes:
        wire_s = size * 8 / (path * WIRE_EFF * 1e9)
        msg_s = 1.0 / (min(MPPS_PER_QP * p["qps"], MPPS_MAX) * 1e6)
        per_msg = max(wire_s, msg_s)
        gbps = size * 8 / per_msg / 1e9
        if collapse and size >= 8192:
            gbps *= PFC_COLLAPSE * (1 + 0.1 * rng.random())
        gbps *= 1 - 0.004 * rng.random()
        mpps = gbps * 1e9 / (size * 8) / 1e6
        if p["duration"] is not None:
            margin = p["duration"] // 4
            iters = int(mpps * 1e6 * (p["duration"] - 2 * margin))
            peak = 0.0
        else:
            iters = p["iters"] * p["qps"]
            peak = 0.0 if p["noPeak"] else gbps * (1 + 0.002 + 0.006 * rng.random())
        rows.append((size, iters, peak, gbps, mpps))
    return rows


def lat_rows(server, client, p):
    """[(size, iters, t_min, t_max, t_typical, t_avg, t_stdev, p99, p99.9)] in usec."""
    rng = random.Random(_seed(server, client, p["tool"], p["size"]))
    sizes = [1 << i for i in range(1, 24)] if p["all"] else [p["size"]]
    path = path_gbps(server, client)
    base = max(LAT_BASE.get(server["link_layer"], 1.0), LAT_BASE.get(client["link_layer"], 1.0))
    worst = min(server["rail_factor"], client["rail_factor"])
    base *= 1 + 0.1 * (1 - worst)                       # a dirty optic: retries, FEC, a little slower
    if server["cuda"] is not None or client["cuda"] is not None:
        base += 0.25
    rows = []
    for size in sizes:
        typ = base + size * 8 / (path * 1e3) + 0.02 * rng.random()
        t_min = typ - 0.03 - 0.02 * rng.random()
        t_avg = typ + 0.01 + 0.02 * rng.random()
        stdev = 0.01 + 0.03 * rng.random()
        p99 = typ + 0.08 + 0.1 * rng.random()
        p999 = typ + 0.6 + 1.5 * rng.random()
        t_max = p999 + 2.0 + 4.0 * rng.random()
        iters = p["iters"] if p["duration"] is None else int(p["duration"] * 1e6 / (2 * typ))
        rows.append((size, iters, t_min, t_max, typ, t_avg, stdev, p99, p999))
    return rows


# --- printing ----------------------------------------------------------------------------------
def units_mib():
    ver = tuple(int(x) for x in os.environ.get("FABRICSIM_PERFTEST_VERSION", VERSION).split(".")[:2])
    return ver >= MIB_SINCE


def header(p, me, role):
    kind = p["kind"]
    title = "%s %s Test" % (p["verb"], "BW" if kind == "bw" else "Latency")
    if kind == "bw" and p["bidir"]:
        title = "%s Bidirectional BW Test" % p["verb"]
    lines = [RESULT_LINE, "                    %s\n" % title,
             " Dual-port       : OFF\t\tDevice         : %s\n" % me["dev"],
             " Number of qps   : %d\t\tTransport type : IB\n" % p["qps"],
             " Connection type : RC\t\tUsing SRQ      : OFF\n",
             " PCIe relax order: ON\t\tLock-free      : OFF\n",
             " ibv_wr* API     : ON\t\tUsing Enhanced Reorder      : OFF\n"]
    tx = 128 if kind == "bw" else 1
    if p["duration"] is None and not p["all"]:
        tx = min(tx, p["iters"])
    if role == "client" or p["bidir"]:
        lines.append(" TX depth        : %d\n" % tx)
    if p["verb"] == "Send" and (role == "server" or p["bidir"]):
        lines.append(" RX depth        : %d\n" % (512 if p["duration"] is not None or p["all"] else min(512, p["iters"])))
    if kind == "bw":
        cq = 100
        if p["size"] > 8192 and not p["all"]:
            cq = 1
        lines.append(" CQ Moderation   : %d\n" % min(cq, tx))
        lines.append(" CQE Poll Batch  : Dynamic\n")
    lines.append(" Mtu             : %d[B]\n" % me["mtu"])
    lines.append(" Link type       : %s\n" % ("Ethernet" if me["link_layer"] == "Ethernet" else "IB"))
    if me["gid_index"] >= 0:
        lines.append(" GID index       : %d\n" % me["gid_index"])
    inline = 0
    if kind == "lat" and me["cuda"] is None:
        inline = 220 if p["verb"] == "RDMA_Write" else 236
    if p["verb"] == "RDMA_Read":
        lines.append(" Outstand reads  : %d\n" % OUT_READS)
    else:
        lines.append(" Max inline data : %d[B]\n" % inline)
    # ctx_print_test_info: -R connects the QPs with rdma_cm (and exchanges over it), -z only exchanges;
    # an rdma_cm server prints its waiting hint inside the settings block
    lines.append(" rdma_cm QPs\t : %s\n" % ("ON" if p.get("rdma_cm") else "OFF"))
    lines.append(" Data ex. method : %s\n" % ("rdma_cm" if p.get("rdma_cm") or p.get("comm_rdma_cm") else "Ethernet"))
    if p.get("rdma_cm") and role == "server":
        lines += [RESULT_LINE, " Waiting for client rdma_cm QP to connect\n",
                  " Please run the same command with the IB/RoCE interface IP\n"]
    if me["numa"] is not None and me["numa"] >= 0:
        lines.append(" NUMA node       : %d\n" % me["numa"])
    lines.append(RESULT_LINE)
    return "".join(lines)


def qp_numbers(side, other, role, p):
    rng = random.Random(_seed(other if role == "client" else side, side if role == "client" else other,
                              "qp", role))
    base = 0x100 + rng.randrange(0x4000)
    return [{"lid": side["lid"], "qpn": base + i, "psn": rng.getrandbits(24), "rkey": rng.getrandbits(24) | 0x1000,
             "vaddr": 0x7f0000000000 + (rng.getrandbits(28) << 12)} for i in range(p["qps"])]


def addr_lines(side, qps, where, verb):
    out = []
    for qp in qps:
        line = " %s address: LID %s QPN %s PSN %s" % (where, chex(qp["lid"], 4), chex(qp["qpn"], 6), chex(qp["psn"], 6))
        if verb == "RDMA_Read":
            line += " OUT %s" % chex(OUT_READS, 4)
        if verb in ("RDMA_Write", "RDMA_Read"):
            line += " RKey %s VAddr %s" % (chex(qp["rkey"], 8), chex(qp["vaddr"], 16))
        out.append(line + "\n")
        if side["gid_index"] >= 0:
            out.append(" GID: %s\n" % ":".join("%02d" % b for b in side["gid"]))
    return out


def bw_table_head(gbits):
    unit = "Gb/sec" if gbits else ("MiB/sec" if units_mib() else "MB/sec")
    return " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n" % (unit, unit)


def _conv(gbps, gbits):
    return gbps if gbits else gbps * 1e9 / 8 / 0x100000


def bw_line(row, gbits):
    size, iters, peak, avg, mpps = row
    peak, avg = _conv(peak, gbits), _conv(avg, gbits)
    if gbits and avg < 0.1:
        return " %-7d    %d           %-7.6f            %-7.6f            %-7.6f\n" % (size, iters, peak, avg, mpps)
    return " %-7d    %-10d       %-7.2f            %-7.2f\t\t     %-7.6f\n" % (size, iters, peak, avg, mpps)


def lat_table_head(p):
    if p["duration"] is None:
        return (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
                "   99% percentile[usec]   99.9% percentile[usec] \n")
    return " #bytes        #iterations       t_avg[usec]    tps average\n"


def lat_line(row, p):
    size, iters, t_min, t_max, typ, avg, stdev, p99, p999 = row
    if p["duration"] is not None:
        return " %-7d       %d            %-7.2f        %-7.2f\n" % (size, iters, avg, 1e6 / avg)
    return (" %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n"
            % (size, iters, t_min, t_max, typ, avg, stdev, p99, p999))


def write_json(p, me, row, gbits):
    info = ['"test": "%s_%s_Test"' % (p["verb"], "BW" if p["kind"] == "bw" else "Latency"),
            '"Dual_port": "OFF"', '"Device": "%s"' % me["dev"], '"Number_of_qps": %d' % p["qps"],
            '"Transport_type": "IB"', '"Connection_type": "RC"', '"Using_SRQ": "OFF"', '"PCIe_relax_order": "ON"',
            '"ibv_wr_API": "ON"']
    if p["kind"] == "bw":
        info.append('"CQ_Moderation": %d' % (1 if p["size"] > 8192 and not p["all"] else 100))
    info += ['"Mtu": %d' % me["mtu"], '"Link_type": "%s"' % ("Ethernet" if me["link_layer"] == "Ethernet" else "IB")]
    if me["gid_index"] >= 0:
        info.append('"GID_index": %d' % me["gid_index"])
    info.append('"Max_inline_data": %d' % (220 if p["kind"] == "lat" and me["cuda"] is None else 0))
    info.append('"rdma_cm_QPs": "OFF"')
    if me["cuda"] is not None:
        info.append('"cuda_device": %d' % me["cuda"])
    info += ['"Use_ROCm_memory": "OFF"', '"Use_MUSA_memory": "OFF"', '"Data_ex_method": "Ethernet"']
    if p["kind"] == "bw":
        size, iters, peak, avg, mpps = row
        acc = gbits and _conv(avg, gbits) < 0.1
        fmt = "%.6f" if acc else "%.2f"
        res = ('"MsgSize": %d,\n"n_iterations": %d,\n"BW_peak": ' + fmt + ',\n"BW_average": ' + fmt +
               ',\n"MsgRate": %.6f\n') % (size, iters, _conv(peak, gbits), _conv(avg, gbits), mpps)
    else:
        size, iters, t_min, t_max, typ, avg, stdev, p99, p999 = row
        if p["duration"] is None:
            res = ('"MsgSize": %d,\n"n_iterations": %d,\n"t_min": %.2f,\n"t_max": %.2f,\n"t_typical": %.2f,\n'
                   '"t_avg": %.2f,\n"t_stdev": %.2f,\n"percentile_99": %.2f,\n"percentile_99.9": %.2f\n'
                   % (size, iters, t_min, t_max, typ, avg, stdev, p99, p999))
        else:
            res = '"MsgSize": %d,\n"n_iterations": %d,\n"t_avg": %.2f,\n"tps_average": %.2f\n' % (size, iters, avg, 1e6 / avg)
    text = "{\n\"test_info\": {\n" + ",\n".join(info) + "\n},\n\"results\": {\n" + res + "}\n}\n"
    try:
        with open(p["json_file"], "w") as handle:
            handle.write(text)
    except (IOError, OSError):
        pass


# --- the socket exchange --------------------------------------------------------------------
def _send(sock, obj):
    sock.sendall((json.dumps(obj, sort_keys=True) + "\n").encode())


def _recv(sock, buf):
    while b"\n" not in buf[0]:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf[0] += chunk
    line, dummy, rest = buf[0].partition(b"\n")
    buf[0] = rest
    try:
        return json.loads(line.decode())
    except ValueError:
        return None


def _read_fail(role, tool):
    lead = " " if tool != "ib_write_lat" else ""
    if role == "server":
        return ("ethernet_read_keys: Couldn't read remote address\n Unable to read to socket/rdma_cm\n"
                "%sFailed to exchange data between server and clients\n" % lead)
    return ("ethernet_read_keys: Couldn't read remote address\n Unable to read from socket/rdma_cm\n"
            "%sFailed to exchange data between server and clients\n" % lead)


def session(role, p, me, sock):
    """Both sides after the TCP connection: exchange, then print. Returns (out, err, rc)."""
    out = []
    buf = [b""]
    sock.settimeout(float(os.environ.get("FABRICSIM_PERFTEST_IO_TIMEOUT", "120")) + (p["duration"] or 0))
    try:
        if role == "client":
            _send(sock, me)
            peer = _recv(sock, buf)
        else:
            peer = _recv(sock, buf)
            if peer is not None:
                _send(sock, me)
    except (socket.error, socket.timeout):
        peer = None
    if not isinstance(peer, dict) or "gid" not in peer:
        return "", " Failed to exchange negotiation parameters between server and client\n Failed to negotiate parameters\n", 1
    _sleep(1)      # perftest sleeps one second after establishing the connection
    server, client = (me, peer) if role == "server" else (peer, me)
    cp = client["params"]                                   # the client's options drive the test
    run = dict(p)
    for key in ("size", "iters", "duration", "qps", "all", "noPeak", "iters_set"):
        if key in cp:
            run[key] = cp[key]
    run["size"] = run["size"] if not run["all"] else 1 << 23
    rng = random.Random(_seed(server, client, "cuda", role))
    # memory and resources (ctx_init): a GPU buffer that cannot be registered
    mine, theirs = cuda_failure(me), cuda_failure(peer)
    if mine:
        return mine[0], mine[1], 1
    if me["cuda"] is not None:
        out.append(cuda_banner(me) + cuda_alloc(me, run["size"], rng))
    out.append(header(run, me, role))
    if theirs:
        return "".join(out), _read_fail(role, p["tool"]), 1
    bad = connect_outcome(server, client)
    if bad and bad["stage"] == "gid":
        return "".join(out), "\n Found Incompatibility issue with GID types.\n Please Try to use a different IP version.\n\n", 1
    my_qps = qp_numbers(me, peer, role, run)
    peer_qps = qp_numbers(peer, me, "server" if role == "client" else "client", run)
    if bad and bad["stage"] == "rtr" and bad["fail"][role]:
        return "".join(out), "Failed to modify QP %d to RTR\n Unable to Connect the HCA's through the link\n" % my_qps[0]["qpn"], 1
    out += addr_lines(me, my_qps, "local", p["verb"])
    if bad and bad["stage"] == "rtr":
        return "".join(out), _read_fail(role, p["tool"]), 1
    out += addr_lines(peer, peer_qps, "remote", p["verb"])
    kind = p["kind"]
    if kind == "bw":
        out.append(RESULT_LINE + bw_table_head(p["gbits"]))
    else:
        out.append(RESULT_LINE + lat_table_head(run))
    if bad and bad["stage"] == "traffic":
        if role == "client":
            _sleep(7 * 0.067)           # retry_cnt 7 x qp-timeout 14 (4.096 us x 2^14 = 67 ms)
            try:
                sock.close()
            except socket.error:
                pass
            msg = (" Completion with error at client\n Failed status-transport retry counter exceeded (12): "
                   "wr_id 0 syndrom 0x81\n scnt=%d, ccnt=0\n" % (128 if kind == "bw" else 1))
            tail = " Failed to complete run_iter_bw function successfully\n" if kind == "bw" else "Test exited with Error\n"
            return "".join(out), msg + tail, 1
        # server: nothing arrives; the write_bw server fails when the client goes, write_lat spins
        try:
            while sock.recv(4096):
                pass
        except (socket.error, socket.timeout):
            pass
        if kind == "lat":
            _sleep(float(os.environ.get("FABRICSIM_PERFTEST_HANG", "600")))
            return "".join(out), "", 1
        return "".join(out), _read_fail(role, p["tool"]), 1
    rows = bw_rows(server, client, run) if kind == "bw" else lat_rows(server, client, run)
    test_time = 0.0
    if run["duration"] is not None:
        test_time = run["duration"]
    elif kind == "bw":
        test_time = sum(r[1] / (r[4] * 1e6) for r in rows if r[4] > 0)
    else:
        test_time = sum(r[1] * 2 * r[4] / 1e6 for r in rows)
    if role == "client":
        _sleep(test_time)
        try:
            _send(sock, {"done": True})
        except socket.error:
            pass
    else:
        try:
            _recv(sock, buf)
        except (socket.error, socket.timeout):
            pass
    if kind == "bw":
        if role == "server" and p["verb"] in ("RDMA_Write", "RDMA_Read"):
            rows = rows[-1:]        # the write and read servers only print the client's last report
        out += [bw_line(r, p["gbits"]) for r in rows]
    else:
        out += [lat_line(r, run) for r in rows]
    out.append(RESULT_LINE)
    if p["out_json"] and rows:
        write_json(run, me, rows[-1], p["gbits"])
    if me["cuda"] is not None:
        # destroy_ctx: cuda_memory_free_buffer, then cuda_memory_destroy (free_gpu)
        addr = gpu_addr(me, random.Random(_seed(server, client, "cuda", role)))
        out.append("deallocating GPU buffer %016x\ndestroying current CUDA Ctx\n" % addr)
    return "".join(out), "", 0


def run(tool, args, ctx):
    try:
        p = parse_args(tool, args)
    except Fail as exc:
        return exc.out, exc.err, exc.rc
    pre = "".join(p["warnings"])
    try:
        me = local_side(ctx, p)
    except Fail as exc:
        return pre + exc.out, exc.err, exc.rc
    pre += me.pop("pre_out", "")
    if p["host"] is None:
        pre += "\n************************************\n* Waiting for client to connect... *\n************************************\n"
        lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            lsock.bind(("0.0.0.0", p["port"]))
            lsock.listen(1)
        except (socket.error, OverflowError):
            lsock.close()
            return pre, ("Couldn't listen to port %d\nUnable to open file descriptor for socket connection\n"
                         " Unable to init the socket connection\n" % p["port"]), 1
        marker = _listening(p["port"])
        try:
            conn, dummy = lsock.accept()
        finally:
            lsock.close()
            _unmark(marker)
        role = "server"
    else:
        try:
            infos = socket.getaddrinfo(p["host"], p["port"], socket.AF_INET, socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError, OverflowError):
            return pre, ("Problem in resolving basic address and port\nUnable to open file descriptor for socket connection\n"
                         " Unable to init the socket connection\n"), 1
        conn = None
        for family, stype, proto, dummy, addr in infos:
            s = socket.socket(family, stype, proto)
            try:
                s.connect(addr)
                conn = s
                break
            except socket.error:
                s.close()
        if conn is None:
            return pre, ("Couldn't connect to %s:%d\nUnable to open file descriptor for socket connection\n"
                         " Unable to init the socket connection\n" % (p["host"], p["port"])), 1
        role = "client"
    try:
        out, err, rc = session(role, p, me, conn)
    finally:
        try:
            conn.close()
        except socket.error:
            pass
    return pre + out, err, rc


def _listening(port):
    """run_dir/perftest.PORT.listening while the server waits in accept (tests wait for it: a probe
    connection would be the one client the server accepts)."""
    try:
        from .. import paths
        path = paths.run_file("perftest.%d.listening" % port)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write("%d\n" % os.getpid())
        return path
    except (IOError, OSError, ImportError):
        return None


def _unmark(path):
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass
