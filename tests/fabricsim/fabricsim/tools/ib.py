"""ibstat, ibstatus, ibv_devinfo, ibdev2netdev, show_gids, cma_roce_mode."""

import os
import re

from .. import paths, sysfs
from .. import profile as prof

STATE_WORD = {"ACTIVE": "Active", "DOWN": "Down", "INIT": "Initializing", "ARMED": "Armed"}


def is_write(tool, args):
    return tool == "cma_roce_mode" and "-m" in args


def run(tool, args, ctx):
    return {"ibstat": ibstat, "ibstatus": ibstatus, "ibv_devinfo": ibv_devinfo, "ibdev2netdev": ibdev2netdev,
            "show_gids": show_gids, "cma_roce_mode": cma_roce_mode}[tool](args, ctx)


def _hexguid(guid):
    return "0x" + guid.replace(":", "")


def _port_guid(port):
    if port["link_layer"] == "InfiniBand":
        return port["port_guid"]
    raw = prof.mac_to_link_local(port["mac"]).exploded.split(":")[4:]
    return ":".join(raw)


def _lids(port):
    if port["link_layer"] == "Ethernet":
        return 0, 0
    return port.get("lid", 0), port.get("sm_lid", 0)


def ibstat(args, ctx):
    """rdma-core infiniband-diags/ibstat.c. Profile option ``ibstat`` (a dict): ``node_types``
    ({dev: "Router" | "iWARP RNIC"}, default "CA": ca_dump's node_type_str name for the header and
    the ``<kind> type`` line); ``umad_2007`` (a libibumad older than 4474288a0, OFED 1.3, with the
    infiniband-diags 1.3 ibstat: lists iWARP RNICs, prints no ``Link layer``). Otherwise libibumad's
    is_ib_type() leaves type 4 out of the device list, so an iWARP RNIC is not printed and
    ``ibstat DEV`` of one, like an unknown name, IBPANICs ``'DEV' IB device can't be found``."""
    p = ctx.profile
    options = p.data.get("ibstat") or {}
    kinds = options.get("node_types") or {}
    old = bool(options.get("umad_2007"))
    listed = [n for n in p.nics if old or kinds.get(n["dev"], "CA") != "iWARP RNIC"]
    names = [a for a in args if not a.startswith("-")]
    nics = listed
    if names:
        nics = [n for n in listed if n["dev"] == names[0]]
        if not nics:                    # main(): IBPANIC with errno 0, so %m prints 'Success'
            return "", "ibpanic: [%d] main: '%s' IB device can't be found: Success\n" % (1000, names[0]), 255
    if "-l" in args:
        return "".join(n["dev"] + "\n" for n in nics), "", 0
    if "-p" in args:
        return "".join(_hexguid(_port_guid(pt)) + "\n" for n in nics for pt in n["ports"]), "", 0
    out = []
    for nic in nics:
        model = p.model(nic)
        kind = kinds.get(nic["dev"], "CA")
        out.append("%s '%s'\n\t%s type: %s\n\tNumber of ports: %d\n\tFirmware version: %s\n"
                   "\tHardware version: %s\n\tNode GUID: %s\n\tSystem image GUID: %s\n" % (
                       kind, nic["dev"], kind, model["ca_type"], len(nic["ports"]), nic["fw"], int(model["hw_rev"], 16),
                       _hexguid(nic["node_guid"]), _hexguid(nic["sys_image_guid"])))
        for port in nic["ports"]:
            state, dummy, phys, dummy = p.port_state(port)
            lid, smlid = _lids(port)
            eth = port["link_layer"] == "Ethernet"
            out.append("\tPort %d:\n\t\tState: %s\n\t\tPhysical state: %s\n\t\tRate: %d\n\t\tBase lid: %d\n"
                       "\t\tLMC: 0\n\t\tSM lid: %d\n\t\tCapability mask: %s\n\t\tPort GUID: %s\n" % (
                           port["port"], STATE_WORD[state], phys, 10 if port.get("down") else port["rate"],
                           lid, smlid, "0x00010000" if eth else "0xa751e848", _hexguid(_port_guid(port))))
            if not old:
                out.append("\t\tLink layer: %s\n" % port["link_layer"])
    return "".join(out), "", 0


def _ibstatus_port(nic, port, p, options):
    """port_status of the ibstatus script: each value echoed from sysfs after a TAB-ended key.
    ``options``: ``unreadable`` (keys whose sysfs file cannot be read: ``unknown``, ``IB`` for
    link_layer), ``link_layer`` False (the script before a6cc34bfb, 2010: no such line)."""
    state, snum, phys, pnum = p.port_state(port)
    lid, smlid = _lids(port)
    if port.get("down") and port["link_layer"] == "InfiniBand":
        lid = 0xFFFF
    gid = p.gids(nic, port)[0][1].exploded
    rate = "10 Gb/sec (4X SDR)" if port.get("down") else "%d Gb/sec (%s)" % (
        port["rate"], {100: "4X EDR", 200: "4X HDR", 400: "4X NDR"}.get(port["rate"], "4X"))
    values = [("default gid", "\t", gid), ("base lid", "\t", "0x%x" % lid), ("sm lid", "\t\t", "0x%x" % smlid),
              ("state", "\t\t", "%d: %s" % (snum, state)), ("phys state", "\t", "%d: %s" % (pnum, phys)),
              ("rate", "\t\t", rate)]
    if options.get("link_layer", True):
        values.append(("link_layer", "\t", port["link_layer"]))
    unreadable = set(options.get("unreadable") or ())
    lines = ["\t%s:%s %s\n" % (key, tabs, ("IB" if key == "link_layer" else "unknown") if key in unreadable else value)
             for key, tabs, value in values]
    return "Infiniband device '%s' port %d status:\n%s\n" % (nic["dev"], port["port"], "".join(lines))


def ibstatus(args, ctx):
    """rdma-core infiniband-diags/scripts/ibstatus: ``[devname[:port]]...``. Its fatal() echoes
    ``Fatal error:  <message>`` on STDOUT (echo "Fatal error: " $*) and exits 255, after what the
    devices before the missing one printed; a port number that has no sysfs directory prints
    'unknown' values (link_layer falls back to IB). Profile option ``ibstatus`` (a dict):
    ``unreadable`` (a list of keys, e.g. ["default gid", "rate"], whose sysfs file every port
    lacks: ``unknown``), ``link_layer`` False (the script before 2010: no link_layer line)."""
    p = ctx.profile
    options = p.data.get("ibstatus") or {}
    if not args:
        if not p.nics:
            return "Fatal error:  No devices\n", "", 255
        args = [nic["dev"] for nic in p.nics]
    out = []
    for arg in args:
        dev, port_arg = arg.split(":")[0], arg.split(":")[-1]
        nic = next((n for n in p.nics if n["dev"] == dev), None)
        if nic is None:
            out.append("Fatal error:  device '%s': sys files not found (/sys/class/infiniband/%s/ports)\n" % (dev, dev))
            return "".join(out), "", 255
        for port in nic["ports"]:
            if port_arg == dev or port_arg == str(port["port"]):
                out.append(_ibstatus_port(nic, port, p, options))
        if port_arg != dev and not any(port_arg == str(port["port"]) for port in nic["ports"]):
            layer = "\tlink_layer:\t IB\n" if options.get("link_layer", True) else ""
            out.append("Infiniband device '%s' port %s status:\n\tdefault gid:\t unknown\n\tbase lid:\t unknown\n"
                       "\tsm lid:\t\t unknown\n\tstate:\t\t unknown\n\tphys state:\t unknown\n"
                       "\trate:\t\t unknown\n%s\n" % (dev, port_arg, layer))
    return "".join(out), "", 0


# ibv_devinfo -v device attributes and capability lists as rdma-core's devinfo.c prints them
# (MLNX_OFED 5.x ships rdma-core: the same layout), values of the real ConnectX-6 Dx sample
# IBVDEV-REAL-CX6DX-RDMACORE-V (ibv_devinfo.txt): key, value; a list after a key is printed
# one flag a line at five TABs ('NO SUPPORT', 'C-VLAN stripping offload', ...).
_DEVINFO_CAPS = [
    ("max_mr_size", "0xffffffffffffffff"), ("page_size_cap", "0xfffffffffffff000"), ("max_qp", "131072"),
    ("max_qp_wr", "32768"),
    ("device_cap_flags", "0xed721c36", ["BAD_PKEY_CNTR", "BAD_QKEY_CNTR", "AUTO_PATH_MIG", "CHANGE_PHY_PORT",
                                        "PORT_ACTIVE_EVENT", "SYS_IMAGE_GUID", "RC_RNR_NAK_GEN", "MEM_WINDOW", "XRC",
                                        "MEM_MGT_EXTENSIONS", "MEM_WINDOW_TYPE_2B", "RAW_IP_CSUM",
                                        "MANAGED_FLOW_STEERING", "Unknown flags: 0xC8400000"]),
    ("max_sge", "30"), ("max_sge_rd", "30"), ("max_cq", "16777216"), ("max_cqe", "4194303"), ("max_mr", "16777216"),
    ("max_pd", "8388608"), ("max_qp_rd_atom", "16"), ("max_ee_rd_atom", "0"), ("max_res_rd_atom", "2097152"),
    ("max_qp_init_rd_atom", "16"), ("max_ee_init_rd_atom", "0"), ("atomic_cap", "ATOMIC_HCA (1)"), ("max_ee", "0"),
    ("max_rdd", "0"), ("max_mw", "16777216"), ("max_raw_ipv6_qp", "0"), ("max_raw_ethy_qp", "0"),
    ("max_mcast_grp", "2097152"), ("max_mcast_qp_attach", "240"), ("max_total_mcast_qp_attach", "503316480"),
    ("max_ah", "2147483647"), ("max_fmr", "0"), ("max_srq", "8388608"), ("max_srq_wr", "32767"), ("max_srq_sge", "31"),
    ("max_pkeys", "128"), ("local_ca_ack_delay", "16"),
    ("general_odp_caps", "", ["ODP_SUPPORT", "ODP_SUPPORT_IMPLICIT"]),
    ("rc_odp_caps", "", ["SUPPORT_SEND", "SUPPORT_RECV", "SUPPORT_WRITE", "SUPPORT_READ", "SUPPORT_SRQ"]),
    ("uc_odp_caps", "", ["NO SUPPORT"]),
    ("ud_odp_caps", "", ["SUPPORT_SEND"]),
    ("xrc_odp_caps", "", ["SUPPORT_SEND", "SUPPORT_WRITE", "SUPPORT_READ", "SUPPORT_SRQ"]),
    ("completion timestamp_mask", "\t\t0x7fffffffffffffff"), ("hca_core_clock", "1000000kHZ"),
    ("raw packet caps", "", ["C-VLAN stripping offload", "Scatter FCS offload", "IP csum offload", "Delay drop"]),
    ("device_cap_flags_ex", "0x15ED721C36", ["RAW_SCATTER_FCS", "PCI_WRITE_END_PADDING", "Unknown flags: 0x100000000"]),
]
_DEVINFO_TAIL = (
    "\ttso_caps:\n\t\tmax_tso:\t\t\t262144\n\t\tsupported_qp:\n\t\t\t\t\tSUPPORT_RAW_PACKET\n"
    "\trss_caps:\n\t\tmax_rwq_indirection_tables:\t\t\t524288\n\t\tmax_rwq_indirection_table_size:\t\t\t2048\n"
    "\t\trx_hash_function:\t\t\t\t0x1\n\t\trx_hash_fields_mask:\t\t\t\t0x800000FF\n"
    "\t\tsupported_qp:\n\t\t\t\t\tSUPPORT_RAW_PACKET\n\tmax_wq_type_rq:\t\t\t8388608\n"
    "\tpacket_pacing_caps:\n\t\tqp_rate_limit_min:\t1kbps\n\t\tqp_rate_limit_max:\t100000000kbps\n"
    "\t\tsupported_qp:\n\t\t\t\t\tSUPPORT_RAW_PACKET\n\ttag matching not supported\n"
    "\n\tcq moderation caps:\n\t\tmax_cq_count:\t65535\n\t\tmax_cq_period:\t4095 us\n\n"
    "\tmaximum available device memory:\t131072Bytes\n\n\tnum_comp_vectors:\t\t%d\n")
_PHYS_STATE = {1: "SLEEP", 2: "POLLING", 3: "DISABLED", 4: "PORT_CONFIGURATION TRAINNING", 5: "LINK_UP",
               6: "LINK_ERROR_RECOVERY", 7: "PHY TEST"}
_SPEED = {2.5: 1, 5.0: 2, 10.0: 8, 14.0: 16, 25.0: 32, 50.0: 64, 100.0: 128, 200.0: 256}


def _devinfo_key(key, value):
    """'\tkey:' + the TABs of devinfo.c's format string (the value at column 40; a value given
    with leading TABs keeps them: 'completion timestamp_mask:\t\t\t')."""
    if value.startswith("\t"):
        return "\t%s:\t%s\n" % (key, value)
    column = 8 + len(key) + 1
    return "\t%s:%s%s\n" % (key, "\t" * max(1, (40 - column // 8 * 8) // 8), value)


def _devinfo_caps():
    out = []
    for entry in _DEVINFO_CAPS:
        key, value = entry[0], entry[1]
        out.append("\t%s:\n" % key if value == "" else _devinfo_key(key, value))
        out.extend("\t\t\t\t\t%s\n" % flag for flag in (entry[2] if len(entry) > 2 else []))
    return "".join(out)


def _devinfo_port_verbose(port, pnum, options):
    """The -v port lines of devinfo.c between link_layer and the GIDs."""
    from .. import health_faults
    eth = port["link_layer"] == "Ethernet"
    rate = 10 if port.get("down") else port.get("rate", 100)
    lane = float(rate) / 4
    speed = "%.1f Gbps (%d)" % (lane, _SPEED[lane]) if lane in _SPEED else "invalid speed (0)"
    out = ("\t\t\tmax_msg_sz:\t\t0x40000000\n\t\t\tport_cap_flags:\t\t%s\n\t\t\tport_cap_flags2:\t0x0000\n"
           "\t\t\tmax_vl_num:\t\t%s\n\t\t\tbad_pkey_cntr:\t\t0x0\n\t\t\tqkey_viol_cntr:\t\t0x0\n"
           "\t\t\tsm_sl:\t\t\t0\n\t\t\tpkey_tbl_len:\t\t%d\n\t\t\tgid_tbl_len:\t\t%d\n"
           "\t\t\tsubnet_timeout:\t\t%d\n\t\t\tinit_type_reply:\t0\n\t\t\tactive_width:\t\t4X (2)\n"
           "\t\t\tactive_speed:\t\t%s\n" % (
               "0x04010000" if eth else "0xa751e848", "invalid value (0)" if eth else "4 (3)", 1 if eth else 128,
               health_faults.GID_TABLE_SIZE, 0 if eth else 18, speed))
    if options.get("effective_speed"):
        out += "\t\t\teffective_speed:\t%.1f Gbps\n" % rate
    return out + "\t\t\tphys_state:\t\t%s (%d)\n" % (_PHYS_STATE.get(pnum, "invalid physical state"), pnum)


def ibv_devinfo(args, ctx):
    """rdma-core devinfo.c: without -v the short layout; -v (-vv: the same one level) adds the
    device attributes with their capability lists, the port attributes and the GIDs. Profile
    option ``ibv_devinfo`` (a dict): ``effective_speed`` (rdma-core 2026 b8675bad5 prints
    ``effective_speed:``), ``ofed4`` (MLNX_OFED 4.x: a ``Device ports:`` header, every GID
    full hex without a type suffix)."""
    p = ctx.profile
    options = p.data.get("ibv_devinfo") or {}
    verbose = "-v" in args or "-vv" in args or "--verbose" in args
    dev = None
    for i, a in enumerate(args):
        if a in ("-d", "--ib-dev") and i + 1 < len(args):
            dev = args[i + 1]
        elif a.startswith("--ib-dev="):
            dev = a.split("=", 1)[1]
    if "-l" in args or "--list" in args:
        return "%d HCAs found:\n" % len(p.nics) + "".join("\t%s\n" % n["dev"] for n in p.nics), "", 0
    nics = p.nics if dev is None else [n for n in p.nics if n["dev"] == dev]
    if not nics:
        return "", "IB device '%s' wasn't found\n" % dev, 255
    out = []
    for nic in nics:
        model = p.model(nic)
        out.append("hca_id:\t%s\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t%s\n\tnode_guid:\t\t\t%s\n"
                   "\tsys_image_guid:\t\t\t%s\n\tvendor_id:\t\t\t0x02c9\n\tvendor_part_id:\t\t\t%d\n"
                   "\thw_ver:\t\t\t\t%s\n\tboard_id:\t\t\t%s\n\tphys_port_cnt:\t\t\t%d\n" % (
                       nic["dev"], nic["fw"], nic["node_guid"], nic["sys_image_guid"], model["vendor_part_id"],
                       model["hw_rev"], nic["board_id"], len(nic["ports"])))
        if verbose:
            out.append(_devinfo_caps() + _DEVINFO_TAIL % 63)
        if options.get("ofed4"):
            out.append("\tDevice ports:\n")
        for port in nic["ports"]:
            state, snum, phys, pnum = p.port_state(port)
            lid, smlid = _lids(port)
            mtu = min(port.get("mtu", 1500), 4096)
            mtu_code = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
            active = max(m for m in mtu_code if m <= max(mtu, 256)) if port["link_layer"] == "Ethernet" else 4096
            out.append("\t\tport:\t%d\n\t\t\tstate:\t\t\tPORT_%s (%d)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
                       "\t\t\tactive_mtu:\t\t%d (%d)\n\t\t\tsm_lid:\t\t\t%d\n\t\t\tport_lid:\t\t%d\n"
                       "\t\t\tport_lmc:\t\t0x00\n\t\t\tlink_layer:\t\t%s\n" % (
                           port["port"], state, snum, active, mtu_code[active], smlid, lid, port["link_layer"]))
            if verbose:
                out.append(_devinfo_port_verbose(port, pnum, options))
                for idx, addr, gtype, dummy in p.gids(nic, port):
                    if options.get("ofed4"):
                        out.append("\t\t\tGID[%3d]:\t\t%s\n" % (idx, addr.exploded))
                    elif port["link_layer"] == "Ethernet":
                        text = str(addr) if gtype == "RoCE v2" else addr.exploded
                        if gtype == "RoCE v2" and addr.ipv4_mapped:
                            text = "::ffff:" + str(addr.ipv4_mapped)
                        kind = "RoCE v2" if gtype == "RoCE v2" else "RoCE v1"
                        out.append("\t\t\tGID[%3d]:\t\t%s, %s\n" % (idx, text, kind))
                    else:
                        out.append("\t\t\tGID[%3d]:\t\t%s\n" % (idx, addr.exploded))
            out.append("\n")
    return "".join(out), "", 0


def ibdev2netdev(args, ctx):
    p = ctx.profile
    verbose = "-v" in args
    out = []
    for nic in p.nics:
        model = p.model(nic)
        for port in nic["ports"]:
            link = "Down" if port.get("down") else "Up"
            if verbose:
                state = p.port_state(port)[0]
                out.append("%s %s (%s - %-11s) %-15s fw %s port %d (%-6s) ==> %s (%s)\n" % (
                    nic["bdf"], nic["dev"], model["mt"], model["part"], model["desc"], nic["fw"], port["port"],
                    state, port["netdev"], link))
            else:
                out.append("%s port %d ==> %s (%s)\n" % (nic["dev"], port["port"], port["netdev"], link))
    return "".join(out), "", 0


def show_gids(args, ctx):
    p = ctx.profile
    out = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n",
           "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n"]
    n = 0
    for nic in p.nics:
        if args and nic["dev"] != args[0]:
            continue
        for port in nic["ports"]:
            gids = {str(idx): (addr, gtype, ndev) for idx, addr, gtype, ndev in p.gids(nic, port)}
            for idx in sorted(gids):        # `ls` order: 0 1 10 11 2 ...
                addr, gtype, ndev = gids[idx]
                full = addr.exploded
                ver = "v2" if gtype == "RoCE v2" else "v1"
                if full.startswith("0000") and addr.ipv4_mapped:
                    out.append("%s\t%d\t%s\t%s\t%s  \t%s\t%s\n" % (
                        nic["dev"], port["port"], idx, full, addr.ipv4_mapped, ver, ndev or ""))
                else:
                    out.append("%s\t%d\t%s\t%s\t\t\t%s\t%s\n" % (
                        nic["dev"], port["port"], idx, full, ver, ndev or ""))
                n += 1
    out.append("n_gids_found=%d\n" % n)
    return "".join(out), "", 0


def _cma_mode_file(dev, port):
    return os.path.join(paths.sys_backing(), sysfs.RDMA_CM_DIR, dev, "ports", str(port), "default_roce_mode")


def cma_roce_mode(args, ctx):
    """mlnx-tools' sbin/cma_roce_mode on the simulated rdma_cm configfs (samples/cma_roce_mode.txt):
    the mode is the configfs file default_roce_mode (what the dcqcn module reads and writes too);
    -m 1|2 writes "IB/RoCE v1"|"RoCE v2" into it, validated as the kernel does (a mode the port
    does not support: 'echo: write error: Invalid argument' on stderr, the mode unchanged, rc 0);
    any other -m value is ignored (a non-numeric one makes bash's test complain twice), and the
    mode is always printed."""
    dev, port, mode = "mlx5_0", "1", None
    i = 0
    while i < len(args):
        if args[i] == "-d" and i + 1 < len(args):
            dev = args[i + 1]
            i += 1
        elif args[i] == "-p" and i + 1 < len(args):
            port = args[i + 1]
            i += 1
        elif args[i] == "-m" and i + 1 < len(args):
            mode = args[i + 1]
            i += 1
        elif args[i] == "-h":
            return CMA_ROCE_MODE_HELP, "", 0
        i += 1
    nic = ctx.profile.nic(dev)
    if nic is None:
        return ("Failed to create configuration for %s\n" % dev,
                "mkdir: cannot create directory \u2018%s\u2019: No such device\n" % dev, 1)
    if port not in [str(pt["port"]) for pt in nic["ports"]]:
        return "Device %s port %s does not exist\n" % (dev, port), "", 1
    path = _cma_mode_file(dev, port)
    err = ""
    if mode is not None and not re.match(r"^-?\d+$", mode.strip()):
        err = ("/usr/sbin/cma_roce_mode: line 108: [: %s: integer expression expected\n"
               "/usr/sbin/cma_roce_mode: line 110: [: %s: integer expression expected\n" % (mode, mode))
    elif mode is not None and int(mode) in (1, 2):
        text = sysfs.ROCE_V1 if int(mode) == 1 else sysfs.ROCE_V2
        ok, errno_, value = sysfs.validate(path, text + "\n")
        if ctx.fail_now:
            err = "/usr/sbin/cma_roce_mode: line 111: echo: write error: Device or resource busy\n"
        elif not ok:
            err = "/usr/sbin/cma_roce_mode: line 111: echo: write error: %s\n" % os.strerror(errno_)
        else:
            with open(path, "w") as handle:
                handle.write(value + "\n")
            ctx.nic.setdefault("cma", {}).setdefault(dev, {})[port] = value
            ctx.dirty = True
    return sysfs.read_text(path) + "\n", err, 0


CMA_ROCE_MODE_HELP = (
    "Set/Show RoCE default mode of RDMA_CM applications\n\n"
    "Usage:\n\tcma_roce_mode OPTIONS\nOptions:\n"
    "\t-h              show this help\n"
    "\t-d <dev>        use IB device <dev> (default mlx5_0)\n"
    "\t-p <port>       use port <port> of IB device (default 1)\n"
    "\t-m <roce_mode>  set RoCE mode of RDMA_CM applications (1 or 2)\n")
