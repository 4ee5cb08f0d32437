# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Derive NCCL environment values from rdma_facts, validate them, render /etc/nccl.conf.

Pure functions, no I/O, standard library only (used by the filter plugins on the
controller). Every failure raises NcclError with a message naming the field, the device
and the value. Semantics follow DOMAIN.md and the NCCL source notes in the samples file
``nccl.txt``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import ipaddress
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common import _dscp
from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re


class NcclError(ValueError):
    pass


# ---------------------------------------------------------------- NCCL_IB_HCA

MAX_HCAS = 32  # fixed upper limit documented for NCCL_IB_HCA
_DEVICE_NAME = _lazy_re.compile(r"^[A-Za-z0-9_.\-]+\Z")


def _rail_items(rails):
    """Normalise rails (dicts from rdma_facts ``rails`` or plain device names) to dicts."""
    if isinstance(rails, (str, dict)):
        rails = [rails]
    items = []
    for position, rail in enumerate(rails or []):
        if isinstance(rail, str):
            rail = {"device": rail}
        if not isinstance(rail, dict):
            raise NcclError("rails[%d]: expected a device name or a rail dict, got %r" % (position, rail))
        items.append(rail)
    return items


def ib_hca(rails, ports="auto", exclude=None):
    """Value of NCCL_IB_HCA for the compute rails, in rail (GPU) order.

    Always the exact-match form ``=dev[:port],...`` (without ``=``, ``mlx5_1`` would also
    select ``mlx5_10`` .. ``mlx5_19``). A device shared by several GPUs is listed once.
    ``ports``: ``auto`` adds ``:port`` only where it matters (the device has several ports,
    the rail is not on port 1, or two rails use different ports of one device); ``always``
    adds it whenever the port is known; ``never`` leaves it out. ``exclude``: device names
    to leave out (e.g. a rail reserved for storage).
    """
    if ports not in ("auto", "always", "never"):
        raise NcclError("ports must be one of auto, always, never; got %r" % (ports,))
    excluded = set(exclude or [])
    chosen = []
    for position, rail in enumerate(_rail_items(rails)):
        device = rail.get("device")
        if not device or device in excluded:
            continue
        if not _DEVICE_NAME.match(str(device)):
            raise NcclError("rails[%d]: device name %r cannot be written in NCCL_IB_HCA "
                            "(',', ':', '=', '^' and spaces are list syntax)" % (position, device))
        port = rail.get("port")
        if port is not None:
            try:
                port = int(port)
            except (TypeError, ValueError):
                raise NcclError("rails[%d] (%s): port must be an integer, got %r" % (position, device, port))
            if port < 1:
                raise NcclError("rails[%d] (%s): port must be 1 or more, got %r" % (position, device, port))
        key = (device, port)
        if key not in [(d, p) for d, p, dummy in chosen]:
            chosen.append((device, port, rail.get("port_count")))
    if not chosen:
        raise NcclError("no compute rail left for NCCL_IB_HCA (rails: %r, excluded: %r)"
                        % ([r.get("device") for r in _rail_items(rails)], sorted(excluded)))
    ports_of = {}
    for device, port, dummy in chosen:
        ports_of.setdefault(device, set()).add(port)
    items = []
    for device, port, port_count in chosen:
        if port is None or ports == "never":
            suffix = ""
        elif ports == "always":
            suffix = ":%d" % port
        else:
            matters = port != 1 or (port_count or 1) > 1 or len(ports_of[device]) > 1
            suffix = ":%d" % port if matters else ""
        item = device + suffix
        if item not in items:
            items.append(item)
    if len(items) > MAX_HCAS:
        raise NcclError("NCCL_IB_HCA would list %d HCAs; NCCL supports at most %d" % (len(items), MAX_HCAS))
    return "=" + ",".join(items)


# ---------------------------------------------------------------- NCCL_IB_GID_INDEX

def _roce_v2_ipv4_gids(rail):
    found = []
    for entry in rail.get("ipv4_gids") or rail.get("gids") or []:
        if entry.get("type") == "RoCE v2" and entry.get("ipv4"):
            found.append(entry)
    return found


def gid_index(rails, addresses=None):
    """NCCL_IB_GID_INDEX for the RoCE rails: the index of the RoCE v2 GID of each rail's IPv4.

    NCCL takes ONE index for every HCA, so the rails must agree; a disagreement is an error
    naming each device and its index. ``addresses`` maps device -> the IPv4 address to use
    (needed when a port carries several, e.g. a VLAN netdev); by default the IPv4 GIDs on the
    rail's own netdev are used. InfiniBand rails are skipped (NCCL uses GID 0 / the FLID
    there). Returns None when no rail is RoCE.
    """
    addresses = addresses or {}
    if not isinstance(addresses, dict):
        raise NcclError("addresses must map a device name to its IPv4 address, got %r" % (addresses,))
    resolved = []
    for rail in _rail_items(rails):
        device = rail.get("device")
        if not device or rail.get("link_layer") == "InfiniBand":
            continue
        if rail.get("link_layer") not in ("Ethernet", None):
            continue
        where = "%s port %s" % (device, rail.get("port", "?"))
        candidates = _roce_v2_ipv4_gids(rail)
        wanted = addresses.get(device)
        if wanted is not None:
            try:
                wanted = str(ipaddress.IPv4Address(str(wanted)))
            except ValueError:
                raise NcclError("addresses[%s]: %r is not an IPv4 address" % (device, wanted))
            matching = [g for g in candidates if g["ipv4"] == wanted]
            if not matching:
                raise NcclError("%s has no RoCE v2 GID for IPv4 %s (RoCE v2 IPv4 GIDs: %s)"
                                % (where, wanted, _describe(candidates)))
        else:
            netdev = rail.get("netdev")
            matching = [g for g in candidates if not netdev or g.get("netdev") == netdev]
            if not matching:
                raise NcclError("%s (netdev %s) has no RoCE v2 GID with an IPv4 address: configure an "
                                "IPv4 address on the netdev or pass addresses (RoCE v2 IPv4 GIDs of the port: %s)"
                                % (where, netdev or "unknown", _describe(candidates)))
            distinct = sorted(set(g["ipv4"] for g in matching))
            if len(distinct) > 1:
                raise NcclError("%s carries several IPv4 RoCE v2 GIDs (%s); choose one with addresses"
                                % (where, _describe(matching)))
        index = min(int(g["index"]) for g in matching)
        resolved.append((device, index))
    if not resolved:
        return None
    indexes = sorted(set(index for dummy, index in resolved))
    if len(indexes) > 1:
        raise NcclError("the RoCE rails need different GID indexes (%s) but NCCL_IB_GID_INDEX is one value "
                        "for all HCAs: give every rail's IPv4 address the same GID slot, or leave "
                        "NCCL_IB_GID_INDEX unset and use NCCL_IB_ADDR_FAMILY/NCCL_IB_ROCE_VERSION_NUM"
                        % ", ".join("%s=%d" % pair for pair in resolved))
    return indexes[0]


def _describe(gids):
    if not gids:
        return "none"
    return ", ".join("%s@%s on %s" % (g.get("index"), g.get("ipv4"), g.get("netdev") or "-") for g in gids)


# ---------------------------------------------------------------- NCCL_IB_TC

def traffic_class(dscp, ecn=0):
    """NCCL_IB_TC (the IPv4 ToS byte) from a DSCP and the ECN bits: ``dscp << 2 | ecn``
    (``_dscp.tos``, the one home of that arithmetic).

    ``ecn``: 0..3, a codepoint name (``not-ect``, ``ect0``, ``ect1``, ``ce``) or a boolean
    (true = ECT(0), what DCQCN-capable NICs send). DSCP 26 -> 104, with ECT(0) -> 106.
    """
    try:
        return _dscp.tos(dscp, ecn)
    except ValueError as exc:
        raise NcclError(str(exc))


# ---------------------------------------------------------------- NCCL_NET_GDR_LEVEL

# All strings NCCL's ncclGetLevel accepts across versions (2.8 .. 2.30), case-sensitive.
GDR_LEVELS = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")


def dmabuf_enable(peer_memory):
    """NCCL_DMABUF_ENABLE for a node from its peer-memory state (``_gdr_readiness.peer_memory_state``,
    the one decision on dma-buf support: NVIDIA open kernel module on Linux >= 5.12): 1 when the
    node supports dma-buf and no peer-memory module (nvidia_peermem) is loaded, else 0 (NCCL then
    registers GPU memory through peer memory, or not at all)."""
    if not isinstance(peer_memory, dict) or "dma_buf" not in peer_memory:
        raise NcclError("peer_memory must be the peer_memory of rdma.fabric.gdr_readiness "
                        "(dma_buf, modules_loaded), got %r" % (peer_memory,))
    return 1 if peer_memory.get("dma_buf") and not peer_memory.get("modules_loaded") else 0


def gdr_level(value):
    """Validate NCCL_NET_GDR_LEVEL; return it as NCCL reads it (a name or a decimal integer)."""
    if isinstance(value, bool):
        raise NcclError("NCCL_NET_GDR_LEVEL must be one of %s or an integer, got %r" % (" ".join(GDR_LEVELS), value))
    if isinstance(value, int):
        if value < 0:
            raise NcclError("NCCL_NET_GDR_LEVEL integer must be 0 or more, got %r" % (value,))
        return str(value)
    text = str(value)
    if text in GDR_LEVELS:
        return text
    if text.isdigit():
        # NCCL checks only the first character and reads the rest with strtol: keep it decimal.
        if len(text) > 1 and text.startswith("0"):
            raise NcclError("NCCL_NET_GDR_LEVEL %r has a leading zero; write %d" % (text, int(text)))
        return text
    if text == "NODE":
        raise NcclError("NCCL_NET_GDR_LEVEL NODE is an nvidia-smi topo code, not an NCCL level (NCCL "
                        "would silently ignore it); use PHB (same NUMA node) or SYS")
    if text.upper() in GDR_LEVELS:
        raise NcclError("NCCL_NET_GDR_LEVEL is case-sensitive: write %r, not %r (NCCL ignores %r)"
                        % (text.upper(), text, text))
    raise NcclError("NCCL_NET_GDR_LEVEL must be one of %s or an integer, got %r" % (" ".join(GDR_LEVELS), text))


# ---------------------------------------------------------------- variable names

KNOWN_VARIABLES = frozenset("""
NCCL_ALGO NCCL_ALLOC_P2P_NET_LL_BUFFERS NCCL_BUFFSIZE NCCL_CGA_CLUSTER_SIZE NCCL_CHECKS_DISABLE
NCCL_CHECK_POINTERS NCCL_COLLNET_ENABLE NCCL_COLLNET_NODE_THRESHOLD NCCL_COMM_BLOCKING NCCL_COMM_ID
NCCL_CONF_FILE NCCL_CREATE_THREAD_CONTEXT NCCL_CROSS_NIC NCCL_CTA_POLICY NCCL_CUMEM_ENABLE
NCCL_CUMEM_HOST_ENABLE NCCL_DEBUG NCCL_DEBUG_FILE NCCL_DEBUG_SUBSYS NCCL_DEBUG_TIMESTAMP_FORMAT
NCCL_DEBUG_TIMESTAMP_LEVELS NCCL_DMABUF_ENABLE NCCL_ENV_PLUGIN NCCL_GDRCOPY_ENABLE
NCCL_GDRCOPY_FLUSH_ENABLE NCCL_GDRCOPY_SYNC_ENABLE NCCL_GRAPH_DUMP_FILE NCCL_GRAPH_DUMP_FILE_RANK
NCCL_GRAPH_FILE NCCL_GRAPH_MIXING_SUPPORT NCCL_GRAPH_REGISTER NCCL_HOSTID NCCL_IB_ADAPTIVE_ROUTING
NCCL_IB_ADDR_FAMILY NCCL_IB_ADDR_RANGE NCCL_IB_AR_THRESHOLD NCCL_IB_CUDA_SUPPORT NCCL_IB_DATA_DIRECT
NCCL_IB_DISABLE NCCL_IB_ECE_ENABLE NCCL_IB_FIFO_TC NCCL_IB_GDR_LEVEL NCCL_IB_GID_INDEX NCCL_IB_HCA
NCCL_IB_MERGE_NICS NCCL_IB_MERGE_VFS NCCL_IB_MQP_RETRY_ALL NCCL_IB_MQP_RETRY_CNT
NCCL_IB_MQP_RETRY_SLEEP_MSEC NCCL_IB_OOO_RQ NCCL_IB_PCI_RELAXED_ORDERING NCCL_IB_PKEY
NCCL_IB_QPS_PER_CONNECTION NCCL_IB_RETRY_CNT NCCL_IB_RETURN_ASYNC_EVENTS NCCL_IB_ROCE_VERSION_NUM
NCCL_IB_ROUTABLE_FLID_GID_INDEX NCCL_IB_SL NCCL_IB_SPLIT_DATA_ON_QPS NCCL_IB_TC NCCL_IB_TIMEOUT
NCCL_IB_USE_INLINE NCCL_IGNORE_CPU_AFFINITY NCCL_IGNORE_DISABLED_P2P NCCL_LAUNCH_MODE
NCCL_LEGACY_CUDA_REGISTER NCCL_LL128_BUFFSIZE NCCL_LL128_NTHREADS NCCL_LL_BUFFSIZE NCCL_LL_THRESHOLD
NCCL_LOCAL_REGISTER NCCL_MAX_CTAS NCCL_MAX_NCHANNELS NCCL_MAX_NRINGS NCCL_MAX_P2P_NCHANNELS
NCCL_MIN_CTAS NCCL_MIN_NCHANNELS NCCL_MIN_NRINGS NCCL_MIN_P2P_NCHANNELS NCCL_MNNVL_CLIQUE_ID
NCCL_MNNVL_ENABLE NCCL_MNNVL_UUID NCCL_NCHANNELS_PER_NET_PEER NCCL_NET NCCL_NET_DISABLE_INTRA
NCCL_NET_FORCE_FLUSH NCCL_NET_FORCE_MERGE NCCL_NET_GDR_C2C NCCL_NET_GDR_LEVEL NCCL_NET_GDR_READ
NCCL_NET_MERGE_LEVEL NCCL_NET_OVERHEAD NCCL_NET_PLUGIN NCCL_NET_SHARED_BUFFERS NCCL_NET_SHARED_COMMS
NCCL_NSOCKS_PERTHREAD NCCL_NTHREADS NCCL_NVB_DISABLE NCCL_NVB_PRECONNECT NCCL_NVLS_CHUNKSIZE
NCCL_NVLS_ENABLE NCCL_NVLS_NCHANNELS NCCL_OOB_NET_ENABLE NCCL_OOB_NET_IFNAME NCCL_P2P_DIRECT_DISABLE
NCCL_P2P_DISABLE NCCL_P2P_LEVEL NCCL_P2P_LL_THRESHOLD NCCL_P2P_NET_CHUNKSIZE NCCL_P2P_NVL_CHUNKSIZE
NCCL_P2P_PCI_CHUNKSIZE NCCL_P2P_PXN_LEVEL NCCL_P2P_READ_ENABLE NCCL_P2P_USE_CUDA_MEMCPY
NCCL_PROFILER_PLUGIN NCCL_PROGRESS_APPENDOP_FREQ NCCL_PROTO NCCL_PROXY_APPEND_BATCH_SIZE
NCCL_PROXY_DUMP_SIGNAL NCCL_PROXY_PROFILE NCCL_PXN_DISABLE NCCL_RAS_ADDR NCCL_RAS_ENABLE
NCCL_RAS_TIMEOUT_FACTOR NCCL_RUNTIME_CONNECT NCCL_SET_STACK_SIZE NCCL_SET_THREAD_NAME
NCCL_SHM_DISABLE NCCL_SHM_LOCALITY NCCL_SHM_MEMCPY_MODE NCCL_SHM_USE_CUDA_MEMCPY
NCCL_SINGLE_RING_THRESHOLD NCCL_SOCKET_FAMILY NCCL_SOCKET_IFNAME NCCL_SOCKET_NTHREADS
NCCL_SOCKET_RETRY_CNT NCCL_SOCKET_RETRY_SLEEP_MSEC NCCL_TOPO_DUMP_FILE NCCL_TOPO_DUMP_FILE_RANK
NCCL_TOPO_FILE NCCL_TREE_THRESHOLD NCCL_TUNER_PLUGIN NCCL_UID_STAGGER_RATE NCCL_UID_STAGGER_THRESHOLD
NCCL_WIN_ENABLE NCCL_WORK_FIFO_BYTES NCCL_WORK_FIFO_DEPTH
""".split())

_NAME = _lazy_re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


def validate_names(names, allowed=None):
    """Check variable names; return them sorted. Unknown names (typos such as NCCL_IB_HCAS)
    raise NcclError with the closest known name, unless listed in ``allowed``."""
    allowed = set(allowed or [])
    problems = []
    for name in names:
        if not isinstance(name, str) or not _NAME.match(name):
            problems.append("%r is not a valid variable name (letters, digits and '_'; no spaces, "
                            "'=' or 'export')" % (name,))
            continue
        if name in KNOWN_VARIABLES or name in allowed:
            continue
        close = difflib.get_close_matches(name, KNOWN_VARIABLES, n=1, cutoff=0.75)
        hint = "; did you mean %s?" % close[0] if close else ""
        problems.append("%s is not a known NCCL variable%s (allow it explicitly if it is intended)" % (name, hint))
    if problems:
        raise NcclError("; ".join(problems))
    return sorted(names)


# ---------------------------------------------------------------- /etc/nccl.conf

_MAX_FIELD = 1023  # NCCL reads at most 1023 characters of name and of value


def format_value(name, value):
    """One value as NCCL reads it from nccl.conf: taken verbatim after the first '='."""
    if value is None:
        raise NcclError("%s: value is null; leave the variable out to keep the NCCL default" % name)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) or not isinstance(value, str):
        raise NcclError("%s: value must be a string or an integer, got %r" % (name, value))
    if "\n" in value or "\r" in value:
        raise NcclError("%s: value %r contains a newline; nccl.conf holds one NAME=value per line" % (name, value))
    if value == "":
        raise NcclError("%s: empty value; NCCL treats it as unset, leave the variable out instead" % name)
    if value != value.strip():
        raise NcclError("%s: value %r has leading or trailing whitespace, which NCCL keeps verbatim" % (name, value))
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        raise NcclError("%s: value %s is quoted; NCCL keeps quotes verbatim, write it without them" % (name, value))
    if re.match(r"^[+-]?0[0-9]+\Z", value):
        raise NcclError("%s: value %r has a leading zero; NCCL reads numbers with base detection, so it "
                        "would be octal (%r is %d). Write it without the zero." % (
                            name, value, value, int(value.lstrip("+-"), 8) if re.match(r"^[+-]?[0-7]+\Z", value) else 0))
    if len(value) > _MAX_FIELD:
        raise NcclError("%s: value is %d characters, NCCL reads at most %d" % (name, len(value), _MAX_FIELD))
    return value


def render_conf(settings, allowed=None, header=None, check_names=True):
    """Text of /etc/nccl.conf: ``NAME=value`` lines sorted by name, no quotes, no ``export``.

    ``settings``: dict name -> value (None values are left out). ``header``: comment text
    written first, one ``# `` line per line. Raises NcclError for bad names or values.
    """
    if not isinstance(settings, dict):
        raise NcclError("settings must be a dict of NAME: value, got %r" % (type(settings).__name__,))
    present = dict((name, value) for name, value in settings.items() if value is not None)
    if check_names:
        validate_names(list(present), allowed)
    lines = []
    for text in (header or "").splitlines():
        lines.append(("# " + text).rstrip())
    for name in sorted(present):
        lines.append("%s=%s" % (name, format_value(name, present[name])))
    return "\n".join(lines) + "\n" if lines else ""


def parse_conf(text):
    """Read nccl.conf text the way NCCL does: first '=' splits, nothing trimmed, '#' lines skipped.
    Later duplicates do not override earlier ones (setenv without overwrite)."""
    values = {}
    for line in (text or "").split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, value = line.split("=", 1)
        values.setdefault(name, value)
    return values


# ---------------------------------------------------------------- NCCL_DEBUG=INFO log (NET/IB lines)
# Formats (nccl.txt header, src/transport/net_ib): "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB [RO]; OOB if:addr<0>"
# (" ; OOB" without relaxed ordering; items "[i]name:port[:rail[:plane]]/IB|RoCE"), "NET/IB : No device found.",
# "NET/IB : GPU Direct RDMA Enabled|Disabled for HCA i 'name'", channels "... via NET/IB/i[/GDRDMA][/Shared]"
# (old: "Ring 00 : 1 -> 0 [receive] via NET/IB/0"), "Using network IB|Socket|<plugin>". Lines carry a
# "host:pid:tid [dev] NCCL INFO " prefix, sometimes behind a launcher's "[rank]<stdout>:".
_LOG_PREFIX = _lazy_re.compile(r"(?:\[\d+\]<std(?:out|err)>:)?(?:(?P<host>[^\s:]+):\d+:\d+ \[\d+\] )?NCCL INFO (?P<msg>.*)\Z")
_LOG_USING = _lazy_re.compile(r"NET/IB ?: Using(?P<items>(?: \[\d+\][^\s\[;]+)*) ?(?P<ro>\[RO\])?; OOB (?P<oob>\S+)\Z")
_LOG_ITEM = _lazy_re.compile(r"\[(?P<index>\d+)\](?P<name>[^:\s/]+):(?P<port>\d+)(?::\d+){0,2}/(?P<ll>IB|RoCE)\Z")
_LOG_GDR = _lazy_re.compile(r"NET/IB ?: GPU Direct RDMA (?P<state>Enabled|Disabled) for HCA (?P<index>\d+) '(?P<name>[^']+)'")
_LOG_VIA = _lazy_re.compile(r".* via NET/IB/(?P<index>\d+)(?P<flags>(?:/[A-Za-z]+)*)\s*\Z")
_LOG_NETWORK = _lazy_re.compile(r"Using network (?P<net>\S+)\Z")


def _log_node(nodes, host):
    return nodes.setdefault(host or "", {"hcas": [], "relaxed_ordering": None, "gdr": {}, "no_device": False,
                                         "network": None})


def _log_hca(node, index, name=None):
    for hca in node["hcas"]:
        if hca["index"] == index:
            return hca
    hca = {"index": index, "name": name or "NET/IB/%d" % index, "port": None, "link_layer": None,
           "gdr_enabled": None, "gdr_used": None, "channels": 0}
    node["hcas"].append(hca)
    node["hcas"].sort(key=lambda item: item["index"])
    return hca


def parse_log(text, source="NCCL log"):
    """An ``NCCL_DEBUG=INFO`` log -> {"nodes": {host ('' without a prefix): {"hcas": [{index, name, port,
    link_layer, gdr_enabled, gdr_used, channels}], "relaxed_ordering", "no_device", "network"}}}.

    ``gdr_enabled``: NCCL's per-HCA "GPU Direct RDMA Enabled/Disabled" line (absent before 2.12);
    ``gdr_used``: True when a channel over the HCA says ``/GDRDMA``, False when channels over it never
    do, None when the log shows no channel over it. A log without one NET/IB or "Using network" line is
    an error (not an NCCL_DEBUG=INFO log, or it was cut before the transport was chosen).

    Follows NVIDIA/nccl 2.4-2.24: src/debug.cc ``ncclDebugLog`` (the ``host:pid:tid [dev] NCCL INFO`` prefix),
    src/transport/net_ib.cc (``net_ib/init.cc`` in recent versions: the ``NET/IB : Using`` and ``GPU Direct RDMA``
    lines), src/transport/net.cc (``via NET/IB/i[/GDRDMA]``), src/init.cc (``Using network``). Lines that
    are not NCCL INFO lines (the application's own output) are skipped: a log interleaves them. Samples:
    tests/unit/fixtures/samples/nccl.txt, pinned by tests/unit/test_corpus.py."""
    nodes = {}
    seen = False
    for number, line in enumerate((text or "").splitlines(), 1):
        match = _LOG_PREFIX.search(line.strip())
        if not match:
            continue
        node_key, msg = match.group("host"), match.group("msg").strip()
        where = "%s line %d %r" % (source, number, line.strip()[:120])
        if msg.startswith(("NET/IB : Using", "NET/IB: Using")):
            using = _LOG_USING.match(msg)
            if not using:
                raise ValueError("%s: not 'NET/IB : Using [i]hca:port/IB|RoCE ... ; OOB if:addr'" % where)
            node = _log_node(nodes, node_key)
            node["relaxed_ordering"] = bool(using.group("ro"))
            for item in using.group("items").split():
                parsed = _LOG_ITEM.match(item)
                if not parsed:
                    raise ValueError("%s: HCA item %r is not '[i]name:port/IB|RoCE'" % (where, item))
                hca = _log_hca(node, int(parsed.group("index")), parsed.group("name"))
                hca.update(name=parsed.group("name"), port=int(parsed.group("port")), link_layer=parsed.group("ll"))
            seen = True
        elif msg.startswith(("NET/IB : No device found", "NET/IB: No device found")):
            _log_node(nodes, node_key)["no_device"] = True
            seen = True
        elif _LOG_GDR.match(msg):
            gdr = _LOG_GDR.match(msg)
            hca = _log_hca(_log_node(nodes, node_key), int(gdr.group("index")), gdr.group("name"))
            hca["gdr_enabled"] = gdr.group("state") == "Enabled"
            seen = True
        elif " via NET/IB/" in msg:
            via = _LOG_VIA.match(msg)
            if not via:
                raise ValueError("%s: not '... via NET/IB/i[/GDRDMA][/Shared]'" % where)
            hca = _log_hca(_log_node(nodes, node_key), int(via.group("index")))
            hca["channels"] += 1
            used = "/GDRDMA" in via.group("flags")
            hca["gdr_used"] = bool(hca["gdr_used"]) or used
            seen = True
        elif _LOG_NETWORK.match(msg):
            _log_node(nodes, node_key)["network"] = _LOG_NETWORK.match(msg).group("net")
            seen = True
    if not seen:
        raise ValueError("%s: no 'NET/IB' or 'Using network' line in it: not an NCCL_DEBUG=INFO log, or cut "
                         "before NCCL chose its transport" % source)
    return {"nodes": nodes}
