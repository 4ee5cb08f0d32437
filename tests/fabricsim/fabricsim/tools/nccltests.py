"""all_reduce_perf (NVIDIA/nccl-tests 2.19.6, src/util.cu and src/common.cu printing): a
single-process run over the node's GPUs (``-g N``, ``-t T``), the newest table layout (with the
``redop`` and ``root`` columns).

Bus bandwidth: over NVLink by default (the GPUs of an HGX/DGX board; ~360 GB/s busbw for big
messages), over the node's rails when NCCL is told not to use peer-to-peer and shared memory
(``NCCL_P2P_DISABLE=1`` and ``NCCL_SHM_DISABLE=1``, from the environment or the nccl.conf NCCL
reads: ``$NCCL_CONF_FILE``, ``~/.nccl.conf``, ``/etc/nccl.conf``): every GPU's ring hop then
crosses its rail, so the slowest rail (port rate x rail-degrade, PCIe link, PFC mismatch) sets the
figure; rails whose port is down are skipped as NCCL skips inactive ports. A profile without
GPUs fails as CUDA does ("no CUDA-capable device is detected"). Nothing is written (a read).
"""
import os
import socket

from . import perftest

NCCL_TESTS_VERSION = "2.19.6"
NCCL_CODE = 22807           # NCCL 2.28.7 (headers and library)
UNLOCKED = True
NVLINK_BUSBW = 360.0        # GB/s, H100 SXM NVSwitch ring, big messages
NVLINK_LAT = 12.0           # us
NET_LAT = 24.0
SOCKET_BUSBW = 1.2          # no usable RDMA port: NCCL's socket transport
SHORT = "t:g:b:e:i:f:n:m:w:N:p:I:K:c:o:d:r:z:y:T:hG:C:a:R:x:D:V:J:S:M:u:"
LONG = {"nthreads": "t", "ngpus": "g", "minbytes": "b", "maxbytes": "e", "stepbytes": "i", "stepfactor": "f",
        "iters": "n", "agg_iters": "m", "warmup_iters": "w", "run_cycles": "N", "parallel_init": "p", "check": "c",
        "op": "o", "datatype": "d", "root": "r", "blocking": "z", "stream_null": "y", "timeout": "T",
        "cudagraph": "G", "report_cputime": "C", "report_timestamps": "S", "output_file": "J", "average": "a",
        "local_register": "R", "cta_policy": "x", "device_implementation": "D", "device_cta_count": "V",
        "memory": "M", "unalign": "u", "per_iter_timing": "I", "per_iter_skip": "K"}
TYPES = {"int8": 1, "char": 1, "uint8": 1, "int32": 4, "int": 4, "uint32": 4, "int64": 8, "uint64": 8,
         "half": 2, "float16": 2, "float": 4, "float32": 4, "double": 8, "float64": 8, "bfloat16": 2}
OPS = ("sum", "prod", "max", "min", "avg", "mulsum")
H100_MEM = 85031714816      # totalGlobalMem of an H100 80GB HBM3


def is_write(tool, args):
    return False


def usage(prog):
    return ("USAGE: %s \n\t[-t,--nthreads <num threads>] \n\t[-g,--ngpus <gpus per thread>] \n\t"
            "[-b,--minbytes <min size in bytes>] \n\t[-e,--maxbytes <max size in bytes>] \n\t"
            "[-i,--stepbytes <increment size>] \n\t[-f,--stepfactor <increment factor>] \n\t"
            "[-n,--iters <iteration count>] \n\t[-m,--agg_iters <aggregated iteration count>] \n\t"
            "[-w,--warmup_iters <warmup iteration count>] \n\t"
            "[-N,--run_cycles <cycle count> run & print each cycle (default: 1; 0=infinite)] \n\t"
            "[-p,--parallel_init <0/1>] \n\t[-c,--check <check iteration count>] \n\t"
            "[-o,--op <sum/prod/min/max/avg/mulsum/all>] \n\t[-d,--datatype <nccltype/all>] \n\t"
            "[-r,--root <root>] \n\t"
            "[-z,--blocking <0/1/2/3> 1=barrier after each inner iter (-m), 2=no barrier, 3=wait and barrier after "
            "each outer iter (-n)] \n\t[-y,--stream_null <0/1>] \n\t[-T,--timeout <time in seconds>] \n\t"
            "[-G,--cudagraph <num graph launches>] \n\t[-C,--report_cputime <0/1>] \n\t"
            "[-S,--report_timestamps <0/1> report timestamps (default 0)] \n\t"
            "[-J,--output_file <file> write output to filepath, if accessible. Infer type from suffix (only json "
            "supported presently.)] \n\t"
            "[-a,--average <0/1/2/3> report average iteration time <0=RANK0/1=AVG/2=MIN/3=MAX>] \n\t"
            "[-M,--memory <0/1> enable memory usage report (default: 0)] \n\t[-h,--help]\n" % prog)


def parse_size(text):
    text = text.strip()
    mult = 1
    if text and text[-1] in "KkMmGgTt":
        mult = 1024 ** ("kmgt".index(text[-1].lower()) + 1)
        text = text[:-1]
    value = float(text)
    if value < 0:
        raise ValueError(text)
    return int(value * mult)


def parse(args, prog):
    o = {"t": "1", "g": "1", "b": "33554432", "e": "33554432", "i": "1048576", "f": "1", "n": "20", "m": "1",
         "w": "1", "c": "1", "o": "sum", "d": "float", "G": "0", "u": "0", "J": None}
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--") and len(a) > 2:
            name, eq, val = a[2:].partition("=")
            if name == "help":
                return None, usage(prog), "", 0
            if name not in LONG:
                return None, "invalid option '?'\n" + usage(prog), "%s: unrecognized option '%s'\n" % (prog, a), 0
            if not eq:
                if i + 1 >= len(args):
                    return None, "invalid option '?'\n" + usage(prog), \
                        "%s: option '--%s' requires an argument\n" % (prog, name), 0
                i += 1
                val = args[i]
            o[LONG[name]] = val
        elif a.startswith("-") and len(a) > 1:
            c = a[1]
            pos = SHORT.find(c)
            if c == "h":
                return None, usage(prog), "", 0
            if pos < 0 or c == ":":
                return None, "invalid option '?'\n" + usage(prog), "%s: invalid option -- '%s'\n" % (prog, c), 0
            val = a[2:]
            if not val:
                if i + 1 >= len(args):
                    return None, "invalid option '?'\n" + usage(prog), \
                        "%s: option requires an argument -- '%s'\n" % (prog, c), 0
                i += 1
                val = args[i]
            o[c] = val
        i += 1
    return o, "", "", None


def _conf_env():
    env = {}
    paths = [os.environ.get("NCCL_CONF_FILE") or "", os.path.expanduser("~/.nccl.conf"), "/etc/nccl.conf"]
    for path in reversed([p for p in paths if p]):
        try:
            with open(path) as handle:
                for line in handle:
                    line = line.strip()
                    if line and not line.startswith("#") and "=" in line:
                        key, dummy, val = line.partition("=")
                        env[key.strip()] = val.strip()
        except (IOError, OSError):
            pass
    env.update(dict((k, v) for k, v in os.environ.items() if k.startswith("NCCL_")))
    return env


def float_str(value, width):
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        text = fmt % (width, value)
        if len(text) <= width:
            return text
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


def rail_busbw(ctx, nranks):
    """GB/s the ring gets over the rails (NET transport), and the rails used."""
    prof = ctx.profile
    faults = prof.faults
    rails = [n for n in prof.nics if n.get("rail")] or list(prof.nics)
    figures = []
    for nic in rails:
        port = nic["ports"][0]
        if prof.port_state(port)[0] != "ACTIVE":
            continue
        gbps = min(float(port["rate"]) * float((faults.get("rail_degrade") or {}).get(nic["dev"], 1.0)),
                   perftest.pcie_gbps(prof.pci[nic["bdf"]]))
        if perftest.pfc_mismatch(ctx, port):
            gbps *= perftest.PFC_COLLAPSE
        figures.append(gbps)
    if not figures:
        return SOCKET_BUSBW
    used = figures[:max(1, nranks)]
    share = min(1.0, float(len(used)) / max(1, nranks))
    return min(used) / 8.0 * 0.92 * share


def run(tool, args, ctx):
    prog = tool
    opts, out, err, rc = parse(args, prog)
    if opts is None:
        return out, err, rc
    host = socket.gethostname()
    pid = os.getpid()
    try:
        nthreads, ngpus = int(opts["t"], 0), int(opts["g"], 0)
        minb, maxb = parse_size(opts["b"]), parse_size(opts["e"])
        stepb, stepf = parse_size(opts["i"]), int(opts["f"], 0)
        iters, agg, warm = int(opts["n"], 0), int(opts["m"], 0), int(opts["w"], 0)
        check, graph, unalign = int(opts["c"], 0), int(opts["G"], 0), int(opts["u"], 0)
    except ValueError:
        return "", "invalid size specified for 'minbytes'\n", 1
    if minb > maxb:
        return "", "invalid sizes for 'minbytes' and 'maxbytes': %d > %d\n" % (minb, maxb), 1
    dtype, op = opts["d"], opts["o"]
    if dtype not in TYPES or op not in OPS:
        return "", "", 1
    out = ["# nccl-tests version %s nccl-headers=%d nccl-library=%d\n" % (NCCL_TESTS_VERSION, NCCL_CODE, NCCL_CODE),
           "# Collective test starting: %s\n" % prog,
           "# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d agg iters: %d "
           "validation: %d graph: %d unalign: %d\n" % (
               nthreads, ngpus, minb, maxb, stepf if stepf > 1 else stepb, "factor" if stepf > 1 else "bytes",
               warm, iters, agg, check, graph, unalign),
           "#\n", "# Using devices\n"]
    gpus = sorted(ctx.profile.gpus, key=lambda g: g["index"])
    if not gpus:
        out.append("%s: Test CUDA failure util.cu:674 'no CUDA-capable device is detected'\n" % host)
        out.append(" .. %s pid %d: Test failure common.cu:1454\n" % (host, pid))
        return "".join(out), "", 2
    nranks = nthreads * ngpus
    gpu0 = os.environ.get("NCCL_TESTS_DEVICE")
    first = int(gpu0) if gpu0 else 0
    if first + nranks > len(gpus):
        out.append(" .. %s pid %d: Test failure common.cu:1454\n" % (host, pid))
        return "".join(out), ("Invalid number of GPUs: %d requested but only %d were found.\n"
                              "Please check the number of processes and GPUs per process.\n" % (first + nranks, len(gpus))), 5
    for r in range(nranks):
        g = gpus[first + r]
        dom, bus, rest = g["bdf"].split(":")
        dev = rest.split(".")[0]
        out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n" % (
            r, 0, pid, host, first + r, int(dom, 16), int(bus, 16), int(dev, 16), g["name"]))
    word = TYPES[dtype]
    reserve = min(-(-H100_MEM // (16 << 30)) * (1 << 30), 4 << 30)
    mem_max = (H100_MEM - reserve - (1 << 30)) // (3 if check else 2)
    if maxb > mem_max:
        maxb = mem_max
        minb = min(minb, maxb)
        out.append("#\n# Reducing maxBytes to %d due to memory limitation\n" % maxb)
    env = _conf_env()
    net = env.get("NCCL_P2P_DISABLE") == "1" and env.get("NCCL_SHM_DISABLE") == "1"
    peak = rail_busbw(ctx, nranks) if net else NVLINK_BUSBW
    lat = NET_LAT if net else NVLINK_LAT
    out += ["#\n",
            "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n"
            % ("", "", "", "", ""),
            "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s\n" % (
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong", ""),
            "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s\n" % (
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "")]
    factor = 2.0 * (nranks - 1) / nranks
    total_bw, count_bw, wall = 0.0, 0, 0.0
    size = minb
    n = 0
    while size <= maxb:
        count = size // word
        nbytes = count * word
        cells = []
        for k, skew in ((0, 1.0), (1, 1.004)):
            data = nbytes * factor if nranks > 1 else nbytes * 0.0
            t_us = (lat * (1 + 0.01 * ((n + k) % 3)) + data / (peak * 1e3)) * skew if nranks > 1 else 0.5 + nbytes / 2e6
            algbw = nbytes / 1e9 / (t_us / 1e6) if t_us > 0 else 0.0
            busbw = algbw * factor
            wrong = "  %6g" % 0 if check else "    N/A"
            cells.append("  %7s  %6s  %6s%s" % (float_str(t_us, 7), float_str(algbw, 6), float_str(busbw, 6), wrong))
            total_bw += busbw
            count_bw += 1
            wall += t_us * (iters + warm) / 1e6
        out.append("%12d  %12d  %8s  %6s  %6s%s\n" % (nbytes, count, dtype, op, "%6i" % -1, "".join(cells)))
        n += 1
        if stepf > 1:
            size *= stepf
        else:
            size += stepb
        if size == 0:
            break
    avg = total_bw / count_bw if count_bw else 0.0
    check_avg = os.environ.get("NCCL_TESTS_MIN_BW")
    verdict = ""
    failed = False
    if check_avg:
        try:
            failed = avg < float(check_avg) * 0.9
            verdict = "FAILED" if failed else "OK"
        except ValueError:
            pass
    out += ["# %-20s : %d %s\n" % ("Out of bounds values", 0, "OK"),
            "# %-20s : %s %s\n" % ("Avg bus bandwidth", "%g" % avg, verdict),
            "#\n", "# Collective test concluded: %s\n" % prog, "#\n", "\n"]
    perftest._sleep(min(wall, 60.0))
    if failed:
        out.append(" .. %s pid %d: Test failure common.cu:1454\n" % (host, pid))
        return "".join(out), "", 7
    return "".join(out), "", 0
