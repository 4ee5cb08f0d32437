"""The simulated sysfs tree (built in $RUN_DIR/sys.backing, seen at $RUN_DIR/sys) and the kernel's write checks."""
import errno
import ipaddress
import os
import re
import shutil
import stat
import time

from . import paths

# MLNX_OFED en_sysfs.c DCQCN attributes with their firmware defaults (no params/ dir).
ECN_NP_PARAMS = [("min_time_between_cnps", 4), ("cnp_dscp", 48), ("cnp_802p_prio", 6)]
ECN_RP_PARAMS = [
    ("clamp_tgt_rate", 0), ("clamp_tgt_rate_after_time_inc", 1), ("rpg_time_reset", 300),
    ("rpg_byte_reset", 32767), ("rpg_threshold", 1), ("rpg_max_rate", 0), ("rpg_ai_rate", 5),
    ("rpg_hai_rate", 50), ("rpg_gd", 11), ("rpg_min_dec_fac", 50), ("rpg_min_rate", 1),
    ("rate_to_set_on_first_cnp", 0), ("dce_tcp_g", 1019), ("dce_tcp_rtt", 1),
    ("rate_reduce_monitor_period", 4), ("initial_alpha_value", 1023),
]
U32 = (0, 0xFFFFFFFF)
# Accepted ranges (what the driver / firmware refuse with EINVAL).
RANGES = {
    "enable": (0, 1), "cnp_dscp": (0, 63), "cnp_802p_prio": (0, 7), "min_time_between_cnps": U32,
    "clamp_tgt_rate": (0, 1), "clamp_tgt_rate_after_time_inc": (0, 1), "rpg_threshold": (1, 31),
    "rpg_gd": (0, 15), "rpg_min_dec_fac": (0, 100), "initial_alpha_value": (0, 1023), "dce_tcp_g": (0, 1023),
    "traffic_class": (0, 255),
}
HW_COUNTERS_ROCE = [
    "duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err", "np_cnp_sent",
    "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence", "packet_seq_err", "req_cqe_error",
    "req_cqe_flush_error", "req_remote_access_errors", "req_remote_invalid_request", "resp_cqe_error",
    "resp_cqe_flush_error", "resp_local_length_error", "resp_remote_access_errors", "rnr_nak_retry_err",
    "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
    "roce_slow_restart_trans", "rp_cnp_handled", "rp_cnp_ignored", "rx_atomic_requests",
    "rx_dct_connect", "rx_icrc_encapsulated", "rx_read_requests", "rx_write_requests",
]
HW_COUNTERS_IB = [
    "duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err", "out_of_buffer",
    "out_of_sequence", "packet_seq_err", "req_cqe_error", "req_cqe_flush_error",
    "req_remote_access_errors", "req_remote_invalid_request", "resp_cqe_error", "resp_cqe_flush_error",
    "resp_local_length_error", "resp_remote_access_errors", "rnr_nak_retry_err", "rx_atomic_requests",
    "rx_dct_connect", "rx_read_requests", "rx_write_requests",
]
PORT_COUNTERS = [
    "excessive_buffer_overrun_errors", "link_downed", "link_error_recovery", "local_link_integrity_errors",
    "port_rcv_constraint_errors", "port_rcv_data", "port_rcv_errors", "port_rcv_packets",
    "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_constraint_errors",
    "port_xmit_data", "port_xmit_discards", "port_xmit_packets", "port_xmit_wait", "symbol_error",
    "VL15_dropped",
]
IB_SPEED_NAME = {100: "4X EDR", 200: "4X HDR", 400: "4X NDR", 25: "1X EDR", 50: "2X EDR"}
# The RDMA-CM default RoCE modes (drivers/infiniband/core/cache.c gid_type_str[]): what configfs
# default_roce_mode shows and takes; an IB port supports only IB/RoCE v1 (roce_gid_type_mask_support).
ROCE_V2, ROCE_V1 = "RoCE v2", "IB/RoCE v1"
ROCE_MODES = (ROCE_V2, ROCE_V1)
RDMA_CM_DIR = "kernel/config/rdma_cm"
# Real tables hold 255 (RoCE) / 128 (IB) entries; the first 16 are rendered (fewer files, same reads).
GID_TABLE = {"Ethernet": 16, "InfiniBand": 16}


def pcie_speed_text(speed):
    """'32GT/s' -> '32.0 GT/s PCIe' (sysfs current_link_speed, kernel >= 4.19 style)."""
    num = float(speed.replace("GT/s", ""))
    return "%s GT/s PCIe" % (("%.1f" % num) if num != 2.5 else "2.5")


def rate_text(rate):
    return "%d Gb/sec (%s)" % (rate, IB_SPEED_NAME.get(rate, "4X"))


def read_text(path):
    """A file's stripped text, or "" when it cannot be read."""
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return ""


def _write(path, value, force=True):
    if not force and os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(value if value.endswith("\n") or value == "" else value + "\n")


def _symlink(target, link):
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.islink(link) or os.path.exists(link):
        if os.path.islink(link) and os.readlink(link) == target:
            return
        os.unlink(link)
    os.symlink(target, link)


def pci_dir(profile, bdf):
    """``devices/<host bridge>/<root port>/.../<bdf>`` relative to the sysfs root."""
    chain = [bdf] + profile.ancestors(bdf)
    host = profile.host_bridge(bdf) or "pci" + chain[-1][:7]      # pci0000:3a
    return os.path.join("devices", host, *reversed(chain))


def _link_dir(target, link):
    """``link`` -> ``target`` (a directory), relative; replaces a flat tree's real directory."""
    os.makedirs(target, exist_ok=True)
    os.makedirs(os.path.dirname(link), exist_ok=True)
    relative = os.path.relpath(target, os.path.dirname(link))
    if os.path.islink(link):
        if os.readlink(link) == relative:
            return
        os.unlink(link)
    elif os.path.isdir(link):
        shutil.rmtree(link)
    os.symlink(relative, link)


def writable_attributes(root, profile):
    """Every sysfs file a user may write (the watcher validates these)."""
    out = []
    for nic in profile.nics:
        for port in nic["ports"]:
            if port["link_layer"] != "Ethernet":
                continue
            if profile.data.get("ecn_sysfs", True):
                base = os.path.join(root, "class/net", port["netdev"], "ecn")
                for proto, params in (("roce_np", ECN_NP_PARAMS), ("roce_rp", ECN_RP_PARAMS)):
                    for prio in range(8):
                        out.append(os.path.join(base, proto, "enable", str(prio)))
                    for name, dummy in params:
                        out.append(os.path.join(base, proto, name))
            out.append(os.path.join(root, "class/infiniband", nic["dev"], "tc", str(port["port"]),
                                    "traffic_class"))
    for nic in profile.nics:
        for port in nic["ports"]:
            for name in ("default_roce_tos", "default_roce_mode"):
                out.append(os.path.join(root, RDMA_CM_DIR, nic["dev"], "ports", str(port["port"]), name))
    return out


def rdma_cm_port_link_layer(path):
    """The link layer of the port a ``<root>/kernel/config/rdma_cm/DEV/ports/N/ATTR`` path
    belongs to (read from ``<root>/class/infiniband/DEV/ports/N/link_layer``), or ""."""
    root, sep, rest = path.partition("/" + RDMA_CM_DIR + "/")
    parts = rest.split("/")
    if not sep or len(parts) < 3 or parts[1] != "ports":
        return ""
    return read_text(os.path.join(root, "class/infiniband", parts[0], "ports", parts[2], "link_layer"))


def validate_roce_mode(path, text):
    """cma_configfs.c default_roce_mode_store: ib_cache_gid_parse_type_str() takes exactly
    "RoCE v2" or "IB/RoCE v1" (one trailing newline allowed; else EINVAL), then
    cma_set_default_gid_type() refuses a mode the port does not support (EINVAL): RoCE v2 on
    an InfiniBand port."""
    value = text[:-1] if text.endswith("\n") else text
    if value not in ROCE_MODES:
        return False, errno.EINVAL, None
    if value == ROCE_V2 and rdma_cm_port_link_layer(path) != "Ethernet":
        return False, errno.EINVAL, None
    return True, 0, value


def validate(path, text):
    """Return (ok, errno, normalised value) for a write of text to path, like the kernel."""
    name = os.path.basename(path)
    if name == "default_roce_mode":
        return validate_roce_mode(path, text)
    if os.path.basename(os.path.dirname(path)) == "enable":
        name = "enable"
    value = text.strip()
    if name == "default_roce_tos":              # cma_configfs: kstrtou8(buf, 0, ...)
        match = re.match(r"^[+]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)$", value)
        if not match:
            return False, errno.EINVAL, None
        num = int(match.group(1), 0) if not re.match(r"^0[0-7]+$", match.group(1)) else int(match.group(1), 8)
        if num > 255:
            return False, errno.ERANGE, None
        return True, 0, str(num)
    if not re.match(r"^[+]?\d+$", value):     # kstrtou32/kstrtoint: decimal only here
        return False, errno.EINVAL, None
    num = int(value)
    low, high = RANGES.get(name, U32)
    if num < low or num > high:
        return False, errno.EINVAL, None
    return True, 0, str(num)


def ensure_view():
    """Make paths.sys_root() show the tree when fabricsim-sysfsd does not serve it over FUSE:
    a symlink to sys.backing.  A FUSE mount there (live or dead) is the daemon's business."""
    view, backing = paths.sys_root(), paths.sys_backing()
    try:
        st = os.lstat(view)
    except FileNotFoundError:
        st = None
    except OSError:             # ENOTCONN: a FUSE mount whose server died; the daemon cleans up
        return
    if st is not None:
        if not stat.S_ISDIR(st.st_mode) or os.path.ismount(view):
            return
        # a plain directory: the tree of an older fabricsim, or a mount point left empty
        if os.path.isdir(backing):
            shutil.rmtree(view)
        else:
            os.rename(view, backing)
    try:
        os.symlink(os.path.basename(backing), view)
    except FileExistsError:
        pass


def build(profile, reset=False):
    """Render the tree (in sys.backing).  Static attributes are always rewritten (faults may
    change them); writable ones only when reset (boot) or when missing."""
    os.makedirs(paths.run_dir(), exist_ok=True)
    ensure_view()
    root = paths.sys_backing()
    if reset and os.path.isdir(root):
        shutil.rmtree(root)
    # The watcher re-arms when the generation changes: write it only once the tree is
    # complete, or it could arm on a half-built tree and miss writes until the next reset.
    new_generation = reset or not os.path.exists(os.path.join(paths.run_dir(), "generation"))
    counters = profile.faults.get("counters", {})
    for bdf, dev in profile.pci.items():
        # The function lives under its host bridge and every bridge above it, as the kernel
        # lays it out; bus/pci/devices/<bdf> links there (readers find the upstream port
        # as the parent directory).
        base = os.path.join(root, pci_dir(profile, bdf))
        _link_dir(base, os.path.join(root, "bus/pci/devices", bdf))
        _write(os.path.join(base, "numa_node"), str(dev.get("numa", -1)))
        _write(os.path.join(base, "vendor"), dev.get("vendor", "0x15b3"))
        _write(os.path.join(base, "device"), dev.get("device", "0x0000"))
        _write(os.path.join(base, "class"), dev.get("class", "0x000000"))
        cap, sta = dev.get("link_cap"), dev.get("link_sta")
        if cap:
            _write(os.path.join(base, "max_link_speed"), pcie_speed_text(cap[0]))
            _write(os.path.join(base, "max_link_width"), str(cap[1]))
            _write(os.path.join(base, "current_link_speed"), pcie_speed_text(sta[0]))
            _write(os.path.join(base, "current_link_width"), str(sta[1]))
        numa = dev.get("numa", -1)
        cpus = profile.data.get("numa_cpus", {}).get(str(numa), "")
        if cpus:
            _write(os.path.join(base, "local_cpulist"), cpus)
    for nic in profile.nics:
        model = profile.model(nic)
        ib = os.path.join(root, "class/infiniband", nic["dev"])
        function = os.path.join(root, pci_dir(profile, nic["bdf"]))
        _symlink(os.path.relpath(function, ib), os.path.join(ib, "device"))
        _symlink(os.path.relpath(ib, os.path.join(function, "infiniband")),
                 os.path.join(function, "infiniband", nic["dev"]))
        _write(os.path.join(ib, "node_guid"), nic["node_guid"])
        _write(os.path.join(ib, "sys_image_guid"), nic["sys_image_guid"])
        _write(os.path.join(ib, "fw_ver"), nic["fw"])
        _write(os.path.join(ib, "hca_type"), model["ca_type"])
        _write(os.path.join(ib, "hw_rev"), model["hw_rev"])
        _write(os.path.join(ib, "board_id"), nic["board_id"])
        _write(os.path.join(ib, "node_type"), "1: CA")
        _write(os.path.join(ib, "node_desc"), "%s %s" % (profile.data.get("hostname", "node"), nic["dev"]))
        for port in nic["ports"]:
            pnum = str(port["port"])
            pdir = os.path.join(ib, "ports", pnum)
            state, snum, phys, pnum_phys = profile.port_state(port)
            _write(os.path.join(pdir, "state"), "%d: %s" % (snum, state))
            _write(os.path.join(pdir, "phys_state"), "%d: %s" % (pnum_phys, phys))
            _write(os.path.join(pdir, "rate"), rate_text(port["rate"]) if not port.get("down")
                   else "10 Gb/sec (4X SDR)")
            _write(os.path.join(pdir, "link_layer"), port["link_layer"])
            eth = port["link_layer"] == "Ethernet"
            _write(os.path.join(pdir, "lid"), "0x0" if eth else hex(port.get("lid", 0)))
            _write(os.path.join(pdir, "sm_lid"), "0x0" if eth else hex(port.get("sm_lid", 0)))
            _write(os.path.join(pdir, "lid_mask_count"), "0")
            _write(os.path.join(pdir, "sm_sl"), "0")
            _write(os.path.join(pdir, "cap_mask"), "0x04010000" if eth else "0xa751e848")
            gids = {idx: (addr, gtype, ndev) for idx, addr, gtype, ndev in profile.gids(nic, port)}
            for old in ("gid_attrs/types", "gid_attrs/ndevs"):
                d = os.path.join(pdir, old)
                if os.path.isdir(d):
                    shutil.rmtree(d)
            for idx in range(GID_TABLE[port["link_layer"]]):
                addr = gids.get(idx, (ipaddress.IPv6Address(0), None, None))[0]
                _write(os.path.join(pdir, "gids", str(idx)), addr.exploded)
                if idx in gids:
                    _write(os.path.join(pdir, "gid_attrs/types", str(idx)), gids[idx][1])
                    if gids[idx][2]:
                        _write(os.path.join(pdir, "gid_attrs/ndevs", str(idx)), gids[idx][2])
            names = HW_COUNTERS_ROCE if eth else HW_COUNTERS_IB
            over = dict(counters.get(nic["dev"], {}))
            for name in names + [n for n in over if n not in names and n not in PORT_COUNTERS]:
                _write(os.path.join(pdir, "hw_counters", name), str(over.get(name, 0)))
            for name in PORT_COUNTERS:
                _write(os.path.join(pdir, "counters", name), str(over.get(name, 0)))
            if eth:
                _write(os.path.join(ib, "tc", pnum, "traffic_class"), "0", force=reset)
            # The rdma_cm configfs group of the device, as it is after `mkdir rdma_cm/<dev>`
            # (plain files cannot populate a group on mkdir, so it is always there).
            cm = os.path.join(root, RDMA_CM_DIR, nic["dev"], "ports", pnum)
            _write(os.path.join(cm, "default_roce_mode"), ROCE_V2 if eth else ROCE_V1, force=reset)
            _write(os.path.join(cm, "default_roce_tos"), "0", force=reset)
            # netdev
            nd = os.path.join(root, "class/net", port["netdev"])
            _symlink(os.path.relpath(function, nd), os.path.join(nd, "device"))
            _symlink(os.path.relpath(nd, os.path.join(function, "net")),
                     os.path.join(function, "net", port["netdev"]))
            if eth:
                _write(os.path.join(nd, "address"), port["mac"])
                _write(os.path.join(nd, "type"), "1")
            else:
                guid = port["port_guid"].replace(":", "")
                raw = "00:00:10:29:fe:80:00:00:00:00:00:00:" + ":".join(guid[i:i + 2] for i in range(0, 16, 2))
                _write(os.path.join(nd, "address"), raw)
                _write(os.path.join(nd, "type"), "32")
            _write(os.path.join(nd, "operstate"), "down" if port.get("down") else "up")
            _write(os.path.join(nd, "carrier"), "0" if port.get("down") else "1")
            _write(os.path.join(nd, "mtu"), str(port.get("mtu", 1500)))
            _write(os.path.join(nd, "dev_port"), "0")
            if eth and profile.data.get("ecn_sysfs", True):
                ecn = os.path.join(nd, "ecn")
                for proto, params in (("roce_np", ECN_NP_PARAMS), ("roce_rp", ECN_RP_PARAMS)):
                    for prio in range(8):
                        _write(os.path.join(ecn, proto, "enable", str(prio)), "0", force=reset)
                    for name, default in params:
                        _write(os.path.join(ecn, proto, name), str(default), force=reset)
    if new_generation:
        _write(os.path.join(paths.run_dir(), "generation"), "%.6f" % time.time())
    return root
