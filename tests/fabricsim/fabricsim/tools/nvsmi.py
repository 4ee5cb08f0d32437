"""nvidia-smi topo -m (tab-separated matrix, NIC legend), -L, --query-gpu=FIELDS --format=csv[,noheader]."""
LEGEND = """Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""
NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
             "latest NVIDIA driver is installed and running.\n\n")


def is_write(tool, args):
    return False


def relation(p, a, b, a_gpu, b_gpu):
    if a == b:
        return " X "
    if a_gpu and b_gpu:
        return "NV18"
    chain_a = [a] + p.ancestors(a)
    chain_b = [b] + p.ancestors(b)
    common = [x for x in chain_a[1:] if x in chain_b[1:]]
    if common:
        top = common[0]
        bridges = set(chain_a[1:chain_a.index(top) + 1]) | set(chain_b[1:chain_b.index(top) + 1])
        return "PIX" if len(bridges) <= 1 else "PXB"
    if p.host_bridge(a) == p.host_bridge(b):
        return "PHB"
    return "NODE" if p.numa_of(a) == p.numa_of(b) else "SYS"


def topo(ctx):
    p = ctx.profile
    fmt = p.data.get("topo_format", "legend_numa_id")
    gpus = [("GPU%d" % g["index"], g["bdf"], True) for g in p.gpus]
    nics = []
    for i, nic in enumerate(p.nics):
        label = nic["dev"] if fmt in ("names", "cpu_affinity_only") else "NIC%d" % i
        nics.append((label, nic["bdf"], False))
    devs = gpus + nics
    # "cpu_affinity_only": the oldest drivers (K80/DGX-1 era, samples TOPO-DOC-*) print no
    # NUMA Affinity column and name NICs by device
    numa_column = fmt != "cpu_affinity_only"
    head = "\t" + "\t".join(d[0] for d in devs) + "\tCPU Affinity" + ("\tNUMA Affinity" if numa_column else "")
    if fmt == "legend_numa_id":
        head += "\tGPU NUMA ID"
    lines = [head]
    cpus = p.data.get("numa_cpus", {})
    for label, bdf, is_gpu in devs:
        cells = [relation(p, bdf, other, is_gpu, ogpu) for dummy, other, ogpu in devs]
        row = label + "\t" + "\t".join(cells)
        if is_gpu:
            numa = p.numa_of(bdf)
            row += "\t%s" % cpus.get(str(numa), "") + ("\t%s" % numa if numa_column else "")
            if fmt == "legend_numa_id":
                row += "\t\tN/A"
        else:
            row += ("\t\t" if numa_column else "\t") + ("\t\t" if fmt == "legend_numa_id" else "")
        lines.append(row)
    out = "\n".join(lines) + "\n\n" + LEGEND
    if fmt not in ("names", "cpu_affinity_only"):
        out += "\nNIC Legend:\n\n" + "".join("  NIC%d: %s\n" % (i, n["dev"]) for i, n in enumerate(p.nics)) + "\n"
    return out


QUERY_FIELDS = {
    "index": lambda g: str(g["index"]),
    # nvidia-smi prints an 8-digit domain, upper case
    "pci.bus_id": lambda g: "0000" + g["bdf"].upper(),
    "name": lambda g: g["name"],
    "uuid": lambda g: g["uuid"],
}


def query_gpu(p, args):
    fields = [a.split("=", 1)[1] for a in args if a.startswith("--query-gpu=")][0].split(",")
    fmt = ([a.split("=", 1)[1] for a in args if a.startswith("--format=")] or [""])[0].split(",")
    if "csv" not in fmt:
        return "", "fabricsim: nvidia-smi --query-gpu needs --format=csv\n", 1
    unknown = [f for f in fields if f not in QUERY_FIELDS]
    if unknown:
        return "Field \"%s\" is not a valid field to query.\n\n" % unknown[0], "", 2
    lines = [] if "noheader" in fmt else [", ".join(fields)]
    for gpu in sorted(p.gpus, key=lambda g: g["index"]):
        lines.append(", ".join(QUERY_FIELDS[f](gpu) for f in fields))
    return "\n".join(lines) + "\n", "", 0


def run(tool, args, ctx):
    p = ctx.profile
    if not p.gpus:
        return NO_DRIVER, "", 9
    if args[:2] in (["topo", "-m"], ["topo", "--matrix"]):
        return topo(ctx), "", 0
    if any(a.startswith("--query-gpu=") for a in args):
        return query_gpu(p, args)
    if args[:1] in (["-L"], ["--list-gpus"]):
        return "".join("GPU %d: %s (UUID: %s)\n" % (g["index"], g["name"], g["uuid"]) for g in p.gpus), "", 0
    return "", "fabricsim: nvidia-smi %s is not simulated (topo -m, -L are)\n" % " ".join(args), 1
