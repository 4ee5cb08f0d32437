# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run perftest pair tests (the check kinds of ``_kinds.ROWS``: ``ib_write_bw``, ``ib_write_lat``, ...) on a node: the server side as a
detached job that outlives the module, the client side in the module, the server's results
collected afterwards. Used by the ``perftest`` module (and ``nccl_test`` for the GPU facts).

Every perftest process runs as ``timeout --kill-after=5 T [numactl ...|taskset ...] TOOL ...``
(coreutils ``timeout``: SIGTERM after T seconds, SIGKILL 5 s later), in a session of its own
(``setsid``), so that nothing survives a failure or an interrupted controller for longer than
its bound, and ``collect`` can find and kill what is left of a job by its session id. Each job's
processes carry ``RDMA_FABRIC_PERFTEST_JOB=<token>`` in their environment: a session id whose
leader is gone could be reused, the token is what proves a process is ours before it is killed.

Each kind's command line is its row in ``_kinds.py`` (the tool, its arguments, whether ``-D`` applies);
the defaults of the two kinds run by default, and where they come from:

* bandwidth: ``ib_write_bw -s 1048576 -q 2 -F --report_gbits -D DURATION``. 1 MiB messages as
  azurehpc-health-checks runs it (``-s $((1*1024*1024)) -D 10 -x 0 -F --report_gbits``): far past
  the size where a write stream reaches line rate, so the figure is the link's and not the
  per-message overhead's; two QPs as oci-hpc runs it (``ib_write_bw -F -q 2 -x 3``): one QP can
  fall short of 400G line rate; ``-F`` because the CPU frequency warning is moot under a governor.
* latency: ``ib_write_lat -s 2 -F`` (perftest's own default size, 2 bytes) in iteration mode
  (perftest's default 1000 iterations): perftest's duration mode (``-D``) prints the average
  only, no typical or 99th percentile, so ``duration`` applies to the bandwidth test only.

Standard library only (runs on the node, Python >= 3.8).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import re
import shlex
import signal
import subprocess
import threading
import time
import uuid

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _kinds
from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts as rdma
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _node_address
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import C_LOCALE, read_sysfs, sysfs_path

KINDS = _kinds.NAMES
TOOL = _kinds.TOOL
BW_SIZE = _kinds.BW_SIZE      # azurehpc-health-checks (see the module docstring)
BW_QPS = _kinds.BW_QPS        # oci-hpc (ib_write_bw -F -q 2 -x 3)
LAT_SIZE = _kinds.LAT_SIZE    # perftest's default for latency tests
KILL_AFTER = 5         # timeout --kill-after
CONNECT_RETRY = 30.0   # seconds a client retries "Couldn't connect" (the lat server starts when the bw server exits; a busy host takes seconds)
LISTEN_WAIT = 10.0     # seconds the server state waits for the first server to listen
OUTPUT_LIMIT = 1024 * 1024
MARKER = "RDMA_FABRIC_PERFTEST_JOB"
TOOLS = _kinds.TOOLS + ("numactl", "taskset", "timeout", "nvidia-smi")

_SAFE_ARG = re.compile(r"^[A-Za-z0-9_.,:=/+@%\-]+\Z")
_CONNECT_FAILED = re.compile(r"Couldn't connect to|Unable to init the socket connection|"
                             r"Unable to open file descriptor for socket connection")


class RunError(ValueError):
    """Bad input found while planning (a device or port the node does not have, a GPU asked
    for where there is none); the message names the option and the value."""


# ---------------------------------------------------------------- validation (pure)

def check_extra_args(values, field="extra_args"):
    """``extra_args`` as a list of plain words: no shell syntax, no blanks (each is passed as one
    argv item, never through a shell unquoted, but a word that looks like shell is a mistake)."""
    for position, value in enumerate(values or []):
        if not isinstance(value, str) or not _SAFE_ARG.match(value):
            raise RunError("%s[%d]=%r: only letters, digits and . , : = / + @ %% _ - are allowed "
                           "(one argument per item, no shell syntax or blanks)" % (field, position, value))
    return list(values or [])


# perftest's own option table (linux-rdma/perftest src/perftest_parameters.c, parser(): the getopt
# string and long_options[]); what takes an argument, and what ib_write_bw / ib_write_lat refuse.
PERFTEST_SHORT = "w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:aFegzRvhbNVCHUOZP"
PERFTEST_LONG_ARG = {
    "port": "p", "ib-dev": "d", "ib-port": "i", "mtu": "m", "size": "s", "iters": "n", "tx-depth": "t",
    "qp-timeout": "u", "sl": "S", "gid-index": "x", "connection": "c", "qp": "q", "vector": "X",
    "inline_size": "I", "outs": "o", "tos": "T", "hop_limit": "L", "MGID": "M", "rx-depth": "r", "cq-mod": "Q",
    "atomic_type": "A", "post_list": "l", "duration": "D", "margin": "f", "source_mac": "B", "dest_mac": "E",
    "dest_ip": "J", "source_ip": "j", "dest_port": "K", "source_port": "k", "ethertype": "Y", "limit_bw": "w",
    "limit_msgrate": "y", "report-counters": "W",
}
PERFTEST_LONG_FLAG = {"all": "a", "CPU-freq": "F", "events": "e", "mcg": "g", "comm_rdma_cm": "z", "rdma_cm": "R",
                      "help": "h", "bidirectional": "b", "noPeak": "N", "version": "V", "report-cycles": "C",
                      "report-histogrm": "H", "report-unsorted": "U", "dualport": "O", "server": "Z", "client": "P",
                      "mac_fwd": "v", "use_rss": "G"}
PERFTEST_LONG_OTHER_ARG = frozenset((
    "force-link", "remote_mac", "local_mac", "remote_ip", "local_ip", "remote_port", "local_port", "pkey_index",
    "burst_size", "typical_pkt_size", "rate_limit", "rate_limit_type", "rate_units", "output", "out_json_file",
    "latency_gap", "flow_label", "retry_count", "payload_file_path", "use_cuda", "use_cuda_bus_id", "cuda_mem_type",
    "use_musa", "use_musa_bus_id", "use_rocm", "use_neuron", "use_hl", "use_mlu", "use_opencl",
    "opencl_platform_id", "use_ib_dm_dmabuf", "gpu_touch", "mmap", "mmap-offset", "dlid", "tclass", "wait_destroy",
    "flows", "flows_burst", "reply_every", "vlan_pcp", "recv_post_list", "bind_source_ip", "cqe_poll", "pin_cores",
    "numa_node", "congest_type", "tph_mem", "cpu_id", "ph", "log_dci_streams", "log_active_dci_streams",
    "aes_block_size", "kek_path", "credentials_path", "data_enc_keys_number", "data_enc_key_app_path"))
PERFTEST_LONG_OTHER_FLAG = frozenset((
    "run_infinitely", "report_gbits", "use-srq", "no_lock", "use-null-mr", "report-both", "reversed", "tcp",
    "cpu_util", "out_json", "dont_xchg_versions", "use_cuda_dmabuf", "use_cuda_pcie_mapping", "use_data_direct",
    "use_musa_dmabuf", "use_musa_pcie_mapping", "use_rocm_dmabuf", "use_neuron_dmabuf", "use_mlu_dmabuf", "ipv6",
    "ipv6-addr", "raw_ipv6", "report-per-port", "odp", "use_hugepages", "use_old_post_send", "promiscuous", "sniffer",
    "raw_mcast", "mr_per_qp", "perform_warm_up", "vlan_en", "aes_xts", "encrypt_on_tx", "sig_before",
    "disable_pcie_relaxed", "use_ooo", "no_enhanced_reorder", "unsolicited_write", "write_with_imm", "send_with_imm",
    "connectionless", "disable_dynamic_polling", "sig_offload", "data_validation", "data_validation_debug",
    "disable_numa"))
# what perftest's parser refuses for each kind: the kind's row (_kinds.ROWS "refuses", _kinds.REFUSES_ALL)
# what the module sets itself: given again, perftest refuses it ("Duplicated argument") or the test is not ours
PERFTEST_MODULE_SETS = {
    "d": "the device (tests[].device)", "i": "the port (tests[].ib_port)", "p": "the TCP port (tests[].tcp_port)",
    "s": "the message size", "q": "the number of QPs", "D": "the duration (duration)",
    "x": "the GID index (tests[].gid_index)", "F": "-F", "use_cuda": "GPU memory (use_cuda)",
    "use_cuda_dmabuf": "GPU memory (use_cuda)", "report_gbits": "--report_gbits",
    "bind_source_ip": "the server's listen address (bind_address)", "Z": "the role (state)", "P": "the role (state)",
}


def check_perftest_args(values, kinds=KINDS, field="extra_args"):
    """``extra_args`` against perftest's own option table: an unknown option, a missing argument, an
    option the tool of one of ``kinds`` refuses (the kind's row in ``_kinds``), one the module sets itself, or a positional word
    (the server's address is the module's, tests[].peer) is refused naming ``extra_args[i]``."""
    values = check_extra_args(values, field)
    position = 0
    while position < len(values):
        word = values[position]
        where = "%s[%d]=%r" % (field, position, word)
        if word.startswith("--"):
            name, equals, dummy = word[2:].partition("=")
            key = PERFTEST_LONG_ARG.get(name) or PERFTEST_LONG_FLAG.get(name) or name
            takes = name in PERFTEST_LONG_ARG or name in PERFTEST_LONG_OTHER_ARG
            if not takes and name not in PERFTEST_LONG_FLAG and name not in PERFTEST_LONG_OTHER_FLAG:
                raise RunError("%s: perftest has no option --%s" % (where, name))
            if not takes and equals:
                raise RunError("%s: perftest's --%s takes no argument" % (where, name))
            consumed = 0
            if takes and not equals:
                if position + 1 >= len(values):
                    raise RunError("%s: perftest's --%s needs an argument (none follows)" % (where, name))
                consumed = 1
            keys = [key]
        elif word.startswith("-") and len(word) > 1:
            keys, consumed = [], 0
            for index, char in enumerate(word[1:]):
                found = PERFTEST_SHORT.find(char)
                if found < 0 or char == ":":
                    raise RunError("%s: perftest has no option -%s" % (where, char))
                keys.append(char)
                if found + 1 < len(PERFTEST_SHORT) and PERFTEST_SHORT[found + 1] == ":":
                    if not word[index + 2:]:
                        if position + 1 >= len(values):
                            raise RunError("%s: perftest's -%s needs an argument (none follows)" % (where, char))
                        consumed = 1
                    break
        else:
            raise RunError("%s: not an option; perftest's one positional argument is the server's address, "
                           "which the module sets (tests[].peer)" % where)
        for key in keys:
            label = ("--%s" % key) if len(key) > 1 else ("-%s" % key)
            if key in PERFTEST_MODULE_SETS:
                raise RunError("%s: %s is set by the module (%s); perftest refuses an option given twice"
                               % (where, label, PERFTEST_MODULE_SETS[key]))
            refused = _kinds.refused(kinds, key)
            if refused:
                raise RunError("%s: %s refuses %s (%s)" % (where, refused[0], label, refused[1]))
        position += 1 + consumed
    return values


def check_bind_address(value):
    """``bind_address``: an IPv4 address (perftest's --bind_source_ip; IPv6 would need --ipv6-addr on both sides)."""
    if value is None:
        return None
    parts = value.split(".")
    if len(parts) != 4 or not all(p.isdigit() and len(p) <= 3 and int(p) <= 255 for p in parts):
        raise RunError("bind_address=%r: expected an IPv4 address of this host (perftest's --bind_source_ip); "
                       "an IPv6 address would need --ipv6-addr on both sides" % (value,))
    return value


def check_tests(tests, state):
    """The ``tests`` option for ``state``; returns it with defaults filled. RunError names the item."""
    if not tests:
        raise RunError("tests: state=%s needs at least one test ({rail, device, tcp_port%s})"
                       % (state, ", peer" if state == "client" else ""))
    seen_rails, seen_ports = {}, {}
    for position, test in enumerate(tests):
        where = "tests[%d]" % position
        if test.get("rail") is None or test["rail"] < 0:
            raise RunError("%s.rail=%r: a rail is an index 0, 1, ..." % (where, test.get("rail")))
        device = test.get("device")
        if not device or not re.match(r"^[A-Za-z0-9_.\-]{1,63}\Z", device) or device.startswith("-"):
            raise RunError("%s.device=%r: expected an RDMA device name such as mlx5_0" % (where, device))
        if test.get("ib_port") is None or not 1 <= test["ib_port"] <= 255:
            raise RunError("%s.ib_port=%r: an IB port number is 1-255" % (where, test.get("ib_port")))
        port = test.get("tcp_port")
        if port is None or not 1024 <= port <= 65535:
            raise RunError("%s.tcp_port=%r: expected a TCP port 1024-65535 (perftest's -p, its default is 18515)"
                           % (where, port))
        if test.get("gid_index") is not None and not 0 <= test["gid_index"] <= 255:
            raise RunError("%s.gid_index=%r: a GID index is 0-255" % (where, test["gid_index"]))
        peer = test.get("peer")
        if state == "client":
            if not peer:
                raise RunError("%s.peer: state=client needs the server's address (perftest's TCP out-of-band)" % where)
        if peer is not None and (not re.match(r"^[A-Za-z0-9_.:%\-\[\]]{1,253}\Z", peer) or peer.startswith("-")):
            raise RunError("%s.peer=%r: expected a host name or an IP address" % (where, peer))
        for key, seen, value in (("rail", seen_rails, test["rail"]), ("tcp_port", seen_ports, port)):
            if value in seen:
                raise RunError("%s.%s=%r: the same %s as tests[%d]; every rail of a pair runs at once, "
                               "each on its own rail and tcp_port" % (where, key, value, key, seen[value]))
            seen[value] = position
    return tests


# ---------------------------------------------------------------- node facts

def find_tools(module):
    return dict((name, module.get_bin_path(name, required=False)) for name in TOOLS)


def _gid_of(device, port):
    """The GID index the node really uses on a RoCE port (``_nccl.gid_index``: the RoCE v2 GID
    of the netdev's IPv4), with the reason when there is none."""
    rail = {"device": device["name"], "port": port["port"], "link_layer": port["link_layer"],
            "netdev": port["netdev"], "gids": port["gids"]}
    try:
        return _nccl.gid_index([rail]), None
    except _nccl.NcclError as exc:
        return None, str(exc)


def _peermem():
    return any(read_sysfs(sysfs_path("module", name, "initstate")) == "live"
               for name in ("nvidia_peermem", "nv_peer_mem"))


def _proc_gpus(proc_root="/proc"):
    try:
        return len(os.listdir(os.path.join(proc_root, "driver", "nvidia", "gpus")))
    except OSError:
        return 0


# what rdma.fabric.nccl_env writes: NCCL_IB_GID_INDEX there is the GID index NCCL jobs use
NCCL_CONF = "/etc/nccl.conf"


def nccl_gid_index(path=NCCL_CONF):
    """``(index, None)`` from ``NCCL_IB_GID_INDEX=N`` in the node's nccl.conf (the last one wins,
    as NCCL reads it), ``(None, None)`` when the file or the line is absent, ``(None, why)`` when
    the value is no GID index."""
    try:
        text = _fileio.read_text(path, 1024 * 1024, what="nccl.conf")
    except _fileio.FileError:
        return None, None
    value = None
    for line in text.splitlines():
        found = re.match(r"^\s*NCCL_IB_GID_INDEX\s*=\s*(\S*)\s*$", line)
        if found:
            value = found.group(1)
    if value is None:
        return None, None
    if not re.match(r"^[0-9]{1,3}$", value) or int(value) > 255:
        return None, "%s: NCCL_IB_GID_INDEX=%s is not a GID index" % (path, value)
    return int(value), None


def gather(module):
    """The node's facts for the tests: ``rails`` (every RDMA port), ``tools``, ``gpus``, ``peermem``
    and the GPU list (``gpu_list``, from rdma_facts) to choose the GPU nearest a NIC."""
    tools = find_tools(module)
    facts = rdma.gather(module, ["devices", "gids", "gpus"])
    rails = []
    nccl_index, nccl_error = nccl_gid_index()
    for name, device in facts["devices"].items():
        for port in device["ports"]:
            entry = {"device": name, "ib_port": port["port"], "link_layer": port["link_layer"],
                     "state": port["state"], "rate_gbps": port["rate_gbps"], "netdev": port["netdev"],
                     "gid_index": None, "lid": None, "numa_node": device["numa_node"]}
            if port["link_layer"] == "InfiniBand":
                entry["lid"] = port["lid"]
            elif nccl_index is not None or nccl_error:
                # the index NCCL jobs on this node use (nccl_env's NCCL_IB_GID_INDEX), right or wrong
                entry["gid_index"], entry["gid_source"] = nccl_index, NCCL_CONF
                if nccl_error:
                    entry["gid_error"] = nccl_error
            else:
                entry["gid_index"], reason = _gid_of(device, port)
                entry["gid_source"] = "ipv4"
                if reason:
                    entry["gid_error"] = reason
            if entry["gid_index"] is not None:
                # the GID at the index: what a peer's perftest prints as this end's "remote address"
                entry["gid"] = next((g["gid"] for g in port.get("gids") or [] if g.get("index") == entry["gid_index"]), None)
            rails.append(entry)
    gpus = len(facts["gpus"]) if facts["gpus"] else _proc_gpus()
    return {"rails": rails, "tools": dict((k.replace("-", "_"), v) for k, v in tools.items()),
            "gpus": gpus, "peermem": _peermem(), "gpu_list": facts["gpus"], "errors": facts["errors"],
            "address": _node_address.node_address(),
            "_paths": tools}


def public_facts(node):
    return dict((key, node[key]) for key in ("rails", "tools", "gpus", "peermem", "address"))


def find_rail(node, test, position):
    for rail in node["rails"]:
        if rail["device"] == test["device"] and rail["ib_port"] == test["ib_port"]:
            return rail
    devices = sorted(set(r["device"] for r in node["rails"]))
    if not devices:
        raise RunError("tests[%d].device=%s: this host has no RDMA device" % (position, test["device"]))
    if test["device"] not in devices:
        raise RunError("tests[%d].device=%s: no such RDMA device on this host (devices: %s)"
                       % (position, test["device"], ", ".join(devices)))
    ports = [r["ib_port"] for r in node["rails"] if r["device"] == test["device"]]
    raise RunError("tests[%d].ib_port=%d: %s has no port %d (ports: %s)"
                   % (position, test["ib_port"], test["device"], test["ib_port"], ", ".join(map(str, ports))))


def nearest_gpu(node, device, numa_node):
    """The GPU index for ``--use_cuda``: the GPU whose rail is this NIC (rdma_facts' assignment from
    ``nvidia-smi topo -m``: the GPU behind the same PCIe switch), else a GPU that lists the NIC
    among its nearest, else the first GPU on the NIC's NUMA node, else GPU 0. Returns (index, why)."""
    gpus = node["gpu_list"] or []
    for gpu in gpus:
        if gpu.get("rail") == device:
            return gpu["index"], "rail GPU (%s)" % (gpu.get("nearest_relation") or "topology")
    for gpu in gpus:
        if device in (gpu.get("nearest_nics") or []):
            return gpu["index"], "nearest NIC (%s)" % (gpu.get("nearest_relation") or "topology")
    for gpu in gpus:
        if numa_node is not None and gpu.get("numa_node") == numa_node:
            return gpu["index"], "same NUMA node %d" % numa_node
    return (gpus[0]["index"] if gpus else 0), "no topology: first GPU"


def cuda_args(node, use_cuda, device, numa_node):
    """perftest's GPU memory arguments for ``use_cuda`` (auto, true, false) or []."""
    if use_cuda == "false" or (use_cuda == "auto" and not node["gpus"]):
        return [], None
    if not node["gpus"]:
        raise RunError("use_cuda=true: this host has no NVIDIA GPU (nvidia-smi lists none and "
                       "/proc/driver/nvidia/gpus is empty); use use_cuda=auto or false")
    index, why = nearest_gpu(node, device, numa_node)
    args = ["--use_cuda=%d" % index]
    if not node["peermem"]:
        args.append("--use_cuda_dmabuf")   # GPUDirect through DMA-BUF where no peer-memory module is loaded
    return args, "GPU %d, %s, %s" % (index, why, "nvidia_peermem" if node["peermem"] else "DMA-BUF")


# ---------------------------------------------------------------- pinning (#39)
#
# Pinning is an optimisation and never fails a test. The HCA's local CPUs (sysfs local_cpulist,
# else its NUMA node's cpulist) are intersected with the CPUs this process may use (its affinity
# mask, which already reflects cgroups and isolated CPUs, and the cgroup cpuset); the memory node
# with the cpuset's memory nodes. Nothing left: no pinning, and the record says why.

CGROUP_ROOT = "/sys/fs/cgroup"
PROC_CGROUP = "/proc/self/cgroup"
PROC_STATUS = "/proc/self/status"
_CPULIST = re.compile(r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*\Z")
# what taskset / numactl / libnuma print when the CPUs or memory nodes are not ours (EINVAL)
AFFINITY_ERROR = re.compile(r"failed to set pid [0-9]+'s affinity|sched_setaffinity|numa_sched_setaffinity|"
                            r"libnuma: Warning|set_mempolicy|mbind: Invalid|numactl: .*(Invalid argument|out of range)")


def parse_cpulist(text):
    """``"0-3,8"`` -> {0, 1, 2, 3, 8}; None for text that is no CPU list (an empty list is set())."""
    text = (text or "").strip()
    if not text:
        return set()
    if not _CPULIST.match(text):
        return None
    found = set()
    for part in text.split(","):
        low, dummy, high = part.partition("-")
        low, high = int(low), int(high or low)
        if high < low or high - low > 65536:
            return None
        found.update(range(low, high + 1))
    return found


def format_cpulist(cpus):
    """{0, 1, 2, 3, 8} -> ``"0-3,8"`` (``""`` for none)."""
    ranges, run = [], None
    for cpu in sorted(cpus or ()):
        if run and cpu == run[1] + 1:
            run[1] = cpu
        else:
            run = [cpu, cpu]
            ranges.append(run)
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in ranges)


def _read_small(path):
    try:
        with open(path) as handle:
            return handle.read(65536)
    except (IOError, OSError, UnicodeDecodeError):
        return None


def cgroup_cpuset(cgroup_root=CGROUP_ROOT, proc_cgroup=PROC_CGROUP):
    """``(cpus, mems, where)`` of this process's cgroup cpuset: v1 ``ROOT/cpuset/PATH/cpuset.effective_cpus``
    (and ``cpuset.effective_mems``), v2 ``ROOT/PATH/cpuset.cpus.effective`` (and ``cpuset.mems.effective``),
    PATH from ``/proc/self/cgroup``; a PATH not visible here (a container's cgroup namespace) is read at
    the root of the hierarchy. None for what cannot be read (no cpuset: only the affinity mask counts)."""
    text = _read_small(proc_cgroup) or ""
    v1_path, v2_path = None, None
    for line in text.splitlines():
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        if fields[0] == "0" and fields[1] == "":
            v2_path = fields[2]
        elif "cpuset" in fields[1].split(","):
            v1_path = fields[2]
    layouts = []
    if v1_path is not None and os.path.isdir(os.path.join(cgroup_root, "cpuset")):
        base = os.path.join(cgroup_root, "cpuset")
        layouts.append((base, v1_path, ("cpuset.effective_cpus", "cpuset.cpus"), ("cpuset.effective_mems", "cpuset.mems")))
    if v2_path is not None and os.path.exists(os.path.join(cgroup_root, "cgroup.controllers")):
        layouts.append((cgroup_root, v2_path, ("cpuset.cpus.effective",), ("cpuset.mems.effective",)))
    for base, path, cpu_names, mem_names in layouts:
        for directory in (os.path.join(base, path.lstrip("/")), base):
            cpus = mems = None
            where = None
            for name in cpu_names:
                value = parse_cpulist(_read_small(os.path.join(directory, name)) or "")
                if value:
                    cpus, where = value, os.path.join(directory, name)
                    break
            for name in mem_names:
                value = parse_cpulist(_read_small(os.path.join(directory, name)) or "")
                if value:
                    mems = value
                    break
            if cpus is not None or mems is not None:
                return cpus, mems, where
    return None, None, None


def allowed(cgroup_root=CGROUP_ROOT, proc_cgroup=PROC_CGROUP, proc_status=PROC_STATUS):
    """``{"cpus": set, "mems": set|None, "where": str}``: the CPUs this process may run on (its affinity
    mask, intersected with the cgroup cpuset) and the memory nodes it may bind to (the cpuset's, else
    ``Mems_allowed_list`` of /proc/self/status, else None: unknown)."""
    try:
        cpus = set(os.sched_getaffinity(0))
        where = ["affinity mask"]
    except (AttributeError, OSError):
        cpus, where = None, []
    set_cpus, set_mems, set_where = cgroup_cpuset(cgroup_root, proc_cgroup)
    if set_cpus is not None:
        cpus = set_cpus if cpus is None else cpus & set_cpus
        where.append(set_where)
    mems = set_mems
    if mems is None:
        for line in (_read_small(proc_status) or "").splitlines():
            if line.startswith("Mems_allowed_list:"):
                mems = parse_cpulist(line.split(":", 1)[1])
    return {"cpus": cpus, "mems": mems, "where": " and ".join(where) or "unknown"}


def numa_prefix(node, device, enabled):
    """``(prefix, pinning)``: the command prefix pinning perftest to the HCA's local CPUs that this
    process may use, and what was done, for the record. ``numactl --cpunodebind=N`` when the whole
    node's CPUs are allowed, ``--membind=N`` only when the node's memory is allowed. No prefix (and a
    ``pinning`` starting with ``none:`` that says why) when numa=false, the HCA has no local CPUs in
    sysfs, none of them is allowed here, or neither tool is installed. Only part of the node allowed:
    ``taskset -c`` the allowed local CPUs (numactl ``--physcpubind`` where there is no taskset)."""
    if not enabled:
        return [], "none: numa=false"
    device_dir = sysfs_path("class", "infiniband", device, "device")
    raw = read_sysfs(os.path.join(device_dir, "numa_node"))
    try:
        node_id = int(raw)
    except (TypeError, ValueError):
        node_id = -1
    node_cpus = None
    if node_id >= 0:
        node_cpus = parse_cpulist(read_sysfs(sysfs_path("devices", "system", "node", "node%d" % node_id, "cpulist")) or "")
    local = parse_cpulist(read_sysfs(os.path.join(device_dir, "local_cpulist")) or "") or node_cpus
    if not local:
        return [], "none: HCA %s has no NUMA node or local CPU list in sysfs" % device
    limits = node.get("_allowed") if isinstance(node, dict) else None
    if limits is None:
        limits = allowed()
        if isinstance(node, dict):
            node["_allowed"] = limits
    cpus = local if limits["cpus"] is None else local & limits["cpus"]
    if not cpus:
        return [], ("none: HCA %s's local CPUs %s are outside this process's allowed CPUs %s (%s)"
                    % (device, format_cpulist(local), format_cpulist(limits["cpus"]), limits["where"]))
    mem_ok = node_id >= 0 and (limits["mems"] is None or node_id in limits["mems"])
    paths = node["_paths"]
    inside = "" if cpus == local else " (of its local CPUs %s, those this process may use)" % format_cpulist(local)
    mem_note = "" if mem_ok or node_id < 0 else (", no --membind: memory node %d is outside the allowed nodes %s"
                                                 % (node_id, format_cpulist(limits["mems"])))
    whole_node = node_id >= 0 and bool(node_cpus) and (limits["cpus"] is None or node_cpus <= limits["cpus"])
    if paths.get("numactl") and whole_node:
        argv = [paths["numactl"], "--cpunodebind=%d" % node_id] + (["--membind=%d" % node_id] if mem_ok else [])
        return argv, "%s: HCA %s NUMA node %d%s%s" % (" ".join(["numactl"] + argv[1:]), device, node_id, inside, mem_note)
    if paths.get("taskset"):
        return ([paths["taskset"], "-c", format_cpulist(cpus)],
                "taskset -c %s: HCA %s%s" % (format_cpulist(cpus), device, inside))
    if paths.get("numactl"):
        argv = [paths["numactl"], "--physcpubind=%s" % format_cpulist(cpus)] + (["--membind=%d" % node_id] if mem_ok else [])
        return argv, "%s: HCA %s%s%s" % (" ".join(["numactl"] + argv[1:]), device, inside, mem_note)
    return [], "none: neither numactl nor taskset is installed"


def affinity_failed(rc, text):
    """Whether a pinned run failed in the pinning tool (EINVAL from taskset or numactl), not in perftest."""
    return rc not in (0, None) and bool(AFFINITY_ERROR.search(text or ""))


def unpinned_note(pinning, text):
    line = next((ln.strip() for ln in (text or "").splitlines() if AFFINITY_ERROR.search(ln)), "")
    return "none: pinned run failed (%s; %s), ran unpinned" % (line[:200], (pinning or "").split(":", 1)[0])


# ---------------------------------------------------------------- command lines

def plan(node, test, position, params, role):
    """Per kind: {kind, argv (the whole wrapped command), tool_argv, error (why it cannot run)}."""
    rail = find_rail(node, test, position)
    paths = node["_paths"]
    prefix, pinning = numa_prefix(node, test["device"], params["numa"])
    cuda, gpu = cuda_args(node, params["use_cuda"], test["device"], rail["numa_node"])
    gid = test.get("gid_index")
    gid_error = None
    if gid is None and rail["link_layer"] != "InfiniBand":
        gid, gid_error = rail["gid_index"], rail.get("gid_error")
    timeout = params["timeout"]
    planned = []
    for kind in params["kinds"]:
        tool = TOOL[kind]
        argv = [paths.get(tool) or tool, "-d", test["device"], "-i", str(test["ib_port"]), "-p", str(test["tcp_port"]), "-F"]
        argv += _kinds.tool_argv(kind, params["duration"])
        if gid is not None:
            argv += ["-x", str(gid)]
        argv += cuda + list(params["extra_args"])
        if role == "server" and params.get("bind_address"):
            argv += ["--bind_source_ip", params["bind_address"]]   # the out-of-band listen address (#40)
        if role == "client":
            argv.append(test["peer"])
        error = None
        if not paths.get(tool):
            error = "%s not found (install perftest)" % tool
        elif not paths.get("timeout"):
            error = "timeout not found (install coreutils): no perftest process runs without its bound"
        elif gid_error:
            error = "no GID index for %s port %d: %s" % (test["device"], test["ib_port"], gid_error)
        bound = [paths.get("timeout") or "timeout", "--kill-after=%d" % KILL_AFTER, str(timeout)]
        planned.append({"kind": kind, "argv": bound + prefix + argv, "error": error, "pinning": pinning, "gpu": gpu,
                        "gid_index": gid, "link_layer": rail["link_layer"],
                        "unpinned_argv": (bound + argv) if prefix else None})
    return rail, planned


# ---------------------------------------------------------------- results

def _tail_lines(text, count=3):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-count:]


def figures(kind, parsed, perftest):
    """bw_gbps/bw_peak_gbps or lat_*_us of the row with the largest message. ``kind``: a check kind
    (its row's ``table``) or perftest's table (``bw``, ``lat``: the parser's ``kind``)."""
    out = {"bw_gbps": None, "bw_peak_gbps": None, "lat_typical_us": None, "lat_avg_us": None, "lat_p99_us": None}
    rows = (parsed or {}).get("rows") or []
    if not rows:
        return out
    row = max(rows, key=lambda r: r.get("bytes") or 0)
    table = _kinds.KINDS[kind]["table"] if kind in _kinds.KINDS else kind
    if table == "bw":
        units = parsed.get("units")
        for key, field in (("bw_gbps", "bw_average"), ("bw_peak_gbps", "bw_peak")):
            if row.get(field) is not None:
                out[key] = round(perftest.gbps(row[field], units), 3)
    else:
        out["lat_typical_us"], out["lat_avg_us"], out["lat_p99_us"] = row.get("t_typical"), row.get("t_avg"), row.get("p99")
    return out


def result(perftest, test, item, role, rc, text, note=None):
    """One result record from a finished (or killed) tool run."""
    parsed, parse_error = None, None
    try:
        parsed = perftest.parse(text or "")
    except ValueError as exc:
        parse_error = str(exc)
    rows = (parsed or {}).get("rows") or []
    ok = rc == 0 and bool(rows) and note is None
    error = None
    if not ok:
        words = [line.strip() for line in (parsed or {}).get("errors") or [] if line.strip()] or _tail_lines(text)
        serious = [line for line in words if not line.upper().startswith("WARNING")]
        words = serious or words     # perftest's warnings (BW peak not measured with -D) only when nothing else
        if rc in (124, 137) and note is None:
            note = "timed out after %s s (%s)" % (item["argv"][2], " ".join(item["argv"][:3]))
        if note:
            words = [note] + words
        if not words:
            detail = ": %s" % parse_error if parse_error else ""
            words = ["%s exited with rc=%s and printed no result%s" % (TOOL[item["kind"]], rc, detail)]
        elif rc == 0 and not rows and not note:
            words.append("no result line in the output")
        error = "; ".join(words)
    record = {"rail": test["rail"], "device": test["device"], "ib_port": test["ib_port"], "kind": item["kind"],
              "role": role, "peer": test.get("peer"), "tcp_port": test["tcp_port"], "command": item["argv"],
              "rc": rc, "ok": ok, "error": error, "gid_index": item.get("gid_index"),
              "link_layer": item.get("link_layer"), "pinning": item.get("pinning"), "gpu": item.get("gpu"),
              "output": (text or "")[-4000:]}
    record.update(figures(item["kind"], parsed, perftest))
    # the other end as this end's perftest saw it (its LID and GID from the exchange): the
    # fabric test checks it is the peer's rail (an out-of-band address that leads elsewhere)
    remote = (parsed or {}).get("remote") or {}
    record["remote"] = {"lid": remote.get("lid"), "gid": remote.get("gid")} if remote else None
    return record


def not_run(test, item, role, error):
    record = {"rail": test["rail"], "device": test["device"], "ib_port": test["ib_port"], "kind": item["kind"],
              "role": role, "peer": test.get("peer"), "tcp_port": test["tcp_port"], "command": item["argv"],
              "rc": None, "ok": False, "error": error, "gid_index": item.get("gid_index"),
              "link_layer": item.get("link_layer"), "pinning": item.get("pinning"), "gpu": item.get("gpu"),
              "output": ""}
    record.update(figures(item["kind"], None, None))
    return record


# ---------------------------------------------------------------- processes

def _environ(token=None):
    env = dict(os.environ)
    env.update(C_LOCALE)
    if token:
        env[MARKER] = token
    return env


def _proc_stat(pid):
    """(state, pgrp, session) of a process, or None when it is gone."""
    try:
        with open("/proc/%s/stat" % pid) as handle:
            text = handle.read()
    except (IOError, OSError):
        return None
    fields = text[text.rfind(")") + 2:].split()
    try:
        return fields[0], int(fields[2]), int(fields[3])
    except (IndexError, ValueError):
        return None


def _has_marker(pid, token):
    try:
        with open("/proc/%s/environ" % pid, "rb") as handle:
            env = handle.read()
    except (IOError, OSError):
        return False
    return ("%s=%s" % (MARKER, token)).encode() in env.split(b"\0")


def session_members(sid, token):
    """Live (not zombie) processes of session ``sid`` that carry the job's token."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _proc_stat(name)
        if stat and stat[2] == sid and stat[0] != "Z" and _has_marker(name, token):
            found.append(int(name))
    return found


def kill_session(sid, token, grace=2.0):
    """SIGTERM then (after ``grace`` s) SIGKILL every process of the job; returns the pids killed."""
    killed = []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = session_members(sid, token)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, sig)
                if pid not in killed:
                    killed.append(pid)
            except OSError:
                pass
        deadline = time.time() + grace
        while time.time() < deadline and session_members(sid, token):
            time.sleep(0.05)
    return killed


def listening(port):
    """Whether a TCP socket of this network namespace listens on ``port`` (/proc/net/tcp, tcp6)."""
    for name in ("tcp", "tcp6"):
        try:
            with open("/proc/net/" + name) as handle:
                lines = handle.read().splitlines()[1:]
        except (IOError, OSError):
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


# ---------------------------------------------------------------- job directory

def check_job_dir(path):
    """``job_dir`` before anything runs: absolute, and when it exists a real directory."""
    if not path or not os.path.isabs(path):
        raise RunError("job_dir=%r: expected an absolute path" % (path,))
    if ".." in path.split("/"):
        raise RunError("job_dir=%s: a '..' component is refused (name the directory itself)" % path)
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
        raise RunError("job_dir=%s: exists and is not a directory (or is a symlink): refused" % path)
    return path


def prepare_job_dir(path):
    """The job directory, mode 0700, owned by us, not a symlink; created when missing."""
    try:
        os.makedirs(path, 0o700)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise RunError("job_dir=%s: cannot create it: %s" % (path, os.strerror(exc.errno)))
    info = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path):
        raise RunError("job_dir=%s: not a directory (or a symlink): refused" % path)
    if info.st_uid != os.geteuid():
        raise RunError("job_dir=%s: owned by uid %d, not by this user (%d): refused" % (path, info.st_uid, os.geteuid()))
    os.chmod(path, 0o700)
    return path


def job_files(job_dir, rail, kinds=KINDS):
    files = {"job": os.path.join(job_dir, "%d.job" % rail)}
    for kind in kinds:
        files[kind] = os.path.join(job_dir, "%d.%s.out" % (rail, kind))
        files[kind + "_rc"] = os.path.join(job_dir, "%d.%s.rc" % (rail, kind))
        files[kind + "_pin"] = os.path.join(job_dir, "%d.%s.pin" % (rail, kind))
    return files


def read_job(path):
    try:
        return json.loads(_fileio.read_text(path, 1024 * 1024, what="perftest job file"))
    except (IOError, OSError, ValueError):
        return None


def remove_job(job_dir, rail):
    for path in job_files(job_dir, rail).values():
        try:
            os.unlink(path)
        except OSError:
            pass


def stale_jobs(job_dir, rail, tcp_port):
    """Jobs of ours in ``job_dir`` on this rail or tcp_port (any rail) with processes left."""
    found = []
    try:
        names = os.listdir(job_dir)
    except OSError:
        return found
    for name in names:
        if not name.endswith(".job"):
            continue
        job = read_job(os.path.join(job_dir, name))
        if not job or (job.get("rail") != rail and job.get("tcp_port") != tcp_port):
            continue
        if job.get("sid") and job.get("token") and session_members(job["sid"], job["token"]):
            found.append(job)
    return found


# ---------------------------------------------------------------- server

def start_server(job_dir, test, planned, timeout):
    """Start the kinds of one rail one after the other under one detached ``sh``, in a new session."""
    files = job_files(job_dir, test["rail"], [item["kind"] for item in planned])
    replaced = []
    for job in stale_jobs(job_dir, test["rail"], test["tcp_port"]):
        replaced.append({"rail": job.get("rail"), "tcp_port": job.get("tcp_port"), "pid": job.get("pid"),
                         "killed": kill_session(job["sid"], job["token"])})
    remove_job(job_dir, test["rail"])
    token = uuid.uuid4().hex
    job = {"rail": test["rail"], "device": test["device"], "ib_port": test["ib_port"], "tcp_port": test["tcp_port"],
           "token": token, "sid": None, "pid": None, "started": time.time(), "timeout": timeout,
           "kinds": [item["kind"] for item in planned], "outputs": dict((item["kind"], files[item["kind"]]) for item in planned),
           "commands": dict((item["kind"], item["argv"]) for item in planned), "errors": {}, "replaced": replaced,
           "context": dict((item["kind"], dict((key, item[key]) for key in ("gid_index", "link_layer", "pinning", "gpu")))
                           for item in planned)}
    lines = ["umask 077"]
    for item in planned:
        if item["error"]:
            job["errors"][item["kind"]] = item["error"]
            continue
        out = shlex.quote(files[item["kind"]])
        line = "%s </dev/null >%s 2>&1; rc=$?" % (" ".join(shlex.quote(a) for a in item["argv"]), out)
        if item.get("unpinned_argv"):
            # pinning never fails a test (#39): the pinning tool refused (EINVAL), run once unpinned
            line += ("; if [ $rc -ne 0 ] && grep -Em1 %s %s >%s 2>/dev/null; then %s </dev/null >%s 2>&1; rc=$?; fi" % (
                shlex.quote(AFFINITY_ERROR.pattern), out, shlex.quote(files[item["kind"] + "_pin"]),
                " ".join(shlex.quote(a) for a in item["unpinned_argv"]), out))
        lines.append(line + "; echo $rc >%s" % shlex.quote(files[item["kind"] + "_rc"]))
    if len(lines) > 1 and listening(test["tcp_port"]):
        for kind in list(job["kinds"]):
            job["errors"].setdefault(kind, "tcp_port %d is already in use on this host by another process "
                                           "(not a job of this module): choose another tcp_port" % test["tcp_port"])
        lines = lines[:1]
    if len(lines) > 1:
        launcher = subprocess.Popen(
            ["/bin/sh", "-c", '"$0" -c "$1" </dev/null >/dev/null 2>&1 & echo $!', "/bin/sh", "\n".join(lines)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True,
            start_new_session=True, env=_environ(token), cwd="/")
        out = launcher.communicate()[0]
        job["sid"] = launcher.pid
        try:
            job["pid"] = int(out.strip())
        except ValueError:
            job["pid"] = None
    _fileio.write_atomic(files["job"], json.dumps(job, sort_keys=True), mode=0o600)
    return job


def wait_listening(jobs, bound):
    """Wait (at most ``bound`` s) until each started job's port listens or its processes are gone."""
    deadline = time.time() + bound
    pending = [job for job in jobs if job["sid"]]
    while pending:
        for job in list(pending):
            if listening(job["tcp_port"]):
                job["listening"] = True
                pending.remove(job)
            elif not session_members(job["sid"], job["token"]):
                job["listening"] = False
                pending.remove(job)
        if not pending or time.time() > deadline:
            break
        time.sleep(0.05)
    for job in jobs:
        job.setdefault("listening", False)


# ---------------------------------------------------------------- client

def run_one(item, timeout, retry=CONNECT_RETRY, limit=OUTPUT_LIMIT):
    """Run one client command; retry while perftest says it cannot connect (the server of the next
    kind starts only when the previous one exits); run it once more unpinned when the pinning tool
    failed (#39). Output is read bounded, keeping its last ``limit`` bytes (#40).
    Returns (rc, text, attempts, extra) with ``extra``: ``dropped`` (bytes of output dropped) and
    ``pinning`` (what the record says, changed when the run fell back to no pinning)."""
    deadline = time.time() + retry
    attempts = 0
    argv, pinning = item["argv"], item.get("pinning")
    while True:
        attempts += 1
        rc, out, dropped = run_capture(argv, _environ(), timeout + KILL_AFTER + 5, limit)
        text = tail_text(out, dropped)
        if argv is not item.get("unpinned_argv") and item.get("unpinned_argv") and affinity_failed(rc, text):
            pinning = unpinned_note(pinning, text)
            argv = item["unpinned_argv"]
            continue
        if rc != 0 and _CONNECT_FAILED.search(text or "") and time.time() < deadline:
            time.sleep(0.5)
            continue
        return rc, text, attempts, {"dropped": dropped, "pinning": pinning, "argv": argv}


def tail_text(out, dropped):
    """Decoded output; when the front was dropped, the cut (partial) first line goes too."""
    text = out.decode("utf-8", "replace") if isinstance(out, bytes) else (out or "")
    if dropped and "\n" in text:
        text = text[text.index("\n") + 1:]
    return text


def dropped_line(dropped, limit):
    """The line put at the start of kept output that lost its front."""
    return "[rdma.fabric: %d bytes of output dropped, the last %d bytes kept]\n" % (dropped, limit)


def output_with_note(text, dropped, limit, keep):
    """The record's ``output``: the last ``keep`` characters, the dropped line first when any was dropped."""
    return (dropped_line(dropped, limit) if dropped else "") + (text or "")[-keep:]


def run_clients(perftest, work, timeout):
    """``work``: [(test, planned)]; every rail at once, the kinds of a rail in order."""
    results = dict((index, []) for index in range(len(work)))

    def rail_worker(index, test, planned):
        for item in planned:
            if item["error"]:
                results[index].append(not_run(test, item, "client", item["error"]))
                continue
            rc, text, attempts, extra = run_one(item, timeout)
            ran = dict(item, pinning=extra["pinning"], argv=extra["argv"])
            record = result(perftest, test, ran, "client", rc, text)
            record["attempts"] = attempts
            record["output_dropped_bytes"] = extra["dropped"]
            if extra["dropped"]:
                record["output"] = output_with_note(text, extra["dropped"], OUTPUT_LIMIT, 4000)
            results[index].append(record)

    threads = [threading.Thread(target=rail_worker, args=(index, test, planned))
               for index, (test, planned) in enumerate(work)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [record for index in range(len(work)) for record in results[index]]


# ---------------------------------------------------------------- collect

def collect(perftest, job_dir, tests, kinds, bound):
    """Wait for the rails' server jobs (all at once, at most ``bound`` s), kill what is left,
    parse the outputs, remove the job files."""
    jobs = []
    for test in tests:
        jobs.append((test, read_job(job_files(job_dir, test["rail"])["job"])))
    deadline = time.time() + bound
    while time.time() < deadline:
        if not any(job and job.get("sid") and session_members(job["sid"], job["token"]) for dummy, job in jobs):
            break
        time.sleep(0.1)
    results = []
    for test, job in jobs:
        if not job:
            for kind in kinds:
                item = {"kind": kind, "argv": []}
                results.append(not_run(dict(test, peer=None), item, "server",
                                       "no server job for rail %d in %s (state=server did not run here, or its "
                                       "files were collected already)" % (test["rail"], job_dir)))
            continue
        killed = kill_session(job["sid"], job["token"]) if job.get("sid") else []
        files = job_files(job_dir, job["rail"], job["kinds"])
        server_test = dict(test, device=job["device"], ib_port=job["ib_port"], tcp_port=job["tcp_port"], peer=None)
        for kind in job["kinds"]:
            item = dict(job.get("context", {}).get(kind) or {}, kind=kind, argv=job["commands"][kind])
            if kind in job["errors"]:
                results.append(not_run(server_test, item, "server", job["errors"][kind]))
                continue
            dropped = 0
            try:
                text = _fileio.read_text(files[kind], OUTPUT_LIMIT, tail=True, what="perftest output")
                dropped = max(0, os.stat(files[kind]).st_size - OUTPUT_LIMIT)
                text = tail_text(text, dropped)
            except (IOError, OSError):
                text = None
            try:
                pin_failed = _fileio.read_text(files[kind + "_pin"], 4096, what="perftest pinning note")
            except (IOError, OSError):
                pin_failed = None
            if pin_failed:
                item["pinning"] = unpinned_note(item.get("pinning"), pin_failed)
            try:
                rc = int(_fileio.read_text(files[kind + "_rc"], 64, what="perftest rc").strip())
            except (IOError, OSError, ValueError):
                rc = None
            note = None
            if text is None:
                note = ("never started: the server before it was still running when collect killed the job "
                        "after %s s" % bound) if killed else "never started (no output file)"
                results.append(not_run(server_test, item, "server", note))
                continue
            if rc is None and killed:
                note = "killed by collect after waiting %s s: no client came, or the test hung" % bound
            elif rc in (124, 137):
                note = "timed out after %s s (no client came, or the test hung)" % job["timeout"]
            record = result(perftest, server_test, item, "server", rc, text, note)
            record["output_dropped_bytes"] = dropped
            if dropped:
                record["output"] = output_with_note(text, dropped, OUTPUT_LIMIT, 4000)
            results.append(record)
        remove_job(job_dir, job["rail"])
    return results


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def run_capture(argv, environ, wait, limit=OUTPUT_LIMIT):
    """``(returncode, output bytes, dropped)`` of ``argv`` in a session of its own (stdout and stderr
    together), read from the pipe in chunks keeping only the last ``limit`` bytes (the tools print
    their results last; a flood of output, heavy NCCL_DEBUG or a hostile rank, cannot exhaust the
    node's memory), ``dropped`` the bytes read and not kept; its whole process group killed when it
    outlives ``wait`` seconds. ``returncode`` as Popen gives it (-N for a signal)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            close_fds=True, start_new_session=True, env=environ)
    buf = _fileio.TailBuffer(limit)
    deadline = time.time() + wait
    try:
        if not _fileio.read_fd_tail(proc.stdout.fileno(), buf, deadline):
            _kill_group(proc)
            # what is left in the pipe; a process that left the session may hold it open: bounded
            _fileio.read_fd_tail(proc.stdout.fileno(), buf, time.time() + KILL_AFTER)
    finally:
        proc.stdout.close()
    try:
        proc.wait(timeout=max(0.1, deadline - time.time()))
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
    return proc.returncode, buf.data(), buf.dropped


def run_bounded(argv, environ, wait, limit=OUTPUT_LIMIT):
    """``(rc, output bytes, dropped)`` of :func:`run_capture`, a signal as 128 + N."""
    rc, out, dropped = run_capture(argv, environ, wait, limit)
    return (rc if rc >= 0 else 128 - rc), out, dropped
