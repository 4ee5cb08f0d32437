"""mlxconfig, flint and mlxfwmanager (NVIDIA MFT / Mellanox/mstflint) over the NIC's non-volatile
firmware configuration.

Layouts follow mstflint v4.31.0-1 .. v4.35.0-1 (MFT 4.31-4.35; the header columns of the public
samples: "Next Boot" at column 57, -e "Default" 57 / "Current" 77 / "Next Boot" 93; rows: flag,
RO, 5 spaces, name in 44, values in 20 separated by a space):
mlxconfig/mlxcfg_ui.cpp (printOpening, printConfHeader, printSingleParam, setDevCfg, askUser),
flint/subcommands.cpp (QuerySubCommand::printInfo, displayFs3Uids), mlxfwupdate/mlxfwmanager.cpp
(printDeviceInfoQuery).  Parameter names, TLVs, field sizes and labels come from
mlxconfig/mlxconfig_dbs/mlxconfig_host.db.

NV configuration belongs to the adapter card, not to a PCI function: both functions of a dual-port
card (0000:3b:00.0 and .1) show and change the same table, with _P1/_P2 for its two ports.  The
next-boot values live in the persistent state dir (nv.json); current values are what was next-boot
at the last boot (state.rebuild(reset=True): `fabricsim boot`, `reset`, `init`, a rebuilt run dir).
"""
from .. import state

MLX_CFG_ABORTED = 2
MLX_CFG_ERROR = 3        # mlxcfg_status.h: main() returns the mlxCfgStatus enum
FLINT_FAILED = 1

BOOL = [("False", 0), ("True", 1)]

# (mlxconfig name, TLV, type, spec, default); type "int": spec = field size in bits (or (bits, max)
# for a firmware rule maximum), "enum"/"bool": spec = [(label, value)], default a value, or a
# callable (card, port) -> value.  Port blocks print P1's rows, then P2's.
GLOBAL_HEAD = [
    ("MEMIC_BAR_SIZE", "nv_memic_conf", "int", 8, 0),
    ("MEMIC_SIZE_LIMIT", "nv_memic_conf", "enum", [("DISABLED", 0), ("_256KB", 1), ("_512KB", 2), ("_1024KB", 3)], 1),
    ("FLEX_PARSER_PROFILE_ENABLE", "nv_flex_parser_conf", "int", 8, 0),
    ("ROCE_NEXT_PROTOCOL", "nv_roce_1_5_conf", "int", 8, 254),
    ("NUM_OF_VFS", "nv_global_pci_conf", "int", (16, 127), 0),
    ("NUM_OF_PF", "nv_global_pci_conf", "int", (8, 4), lambda card, port: card["nports"]),
    ("SRIOV_EN", "nv_global_pci_conf", "bool", BOOL, 0),
    ("PF_LOG_BAR_SIZE", "nv_global_pci_conf", "int", (6, 11), 5),
    ("VF_LOG_BAR_SIZE", "nv_global_pci_conf", "int", (6, 7), 1),
    ("NUM_PF_MSIX", "nv_global_pci_conf", "int", (10, 255), 63),
    ("NUM_VF_MSIX", "nv_global_pci_conf", "int", (10, 127), 11),
    ("INT_LOG_MAX_PAYLOAD_SIZE", "nv_tpt_conf", "enum", [("AUTOMATIC", 0), ("_4KB", 12)], 0),
    ("CQE_COMPRESSION", "nv_sw_offload_conf", "enum", [("BALANCED", 0), ("AGGRESSIVE", 1)], 0),
    ("IP_OVER_VXLAN_EN", "nv_sw_offload_conf", "bool", BOOL, 0),
    ("UCTX_EN", "nv_sw_offload_conf", "bool", BOOL, 1),
    ("PCI_ATOMIC_MODE", "nv_sw_offload_conf", "enum",
     [("PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED", 0), ("PCI_ATOMICS_ENABLED_EXT_ATOMICS_ENABLED_SERIALIZED", 1),
      ("PCI_ATOMICS_ENABLED_EXT_ATOMICS_DISABLED", 2), ("PCI_ATOMICS_ENABLED_EXT_ATOMICS_ENABLED_NONCOHERENT", 3),
      ("PCI_ATOMICS_ENABLED_EXT_ATOMICS_ENABLED", 4)], 0),
    ("LRO_LOG_TIMEOUT0", "nv_sw_offload_conf", "int", 4, 6),
    ("ROCE_ADAPTIVE_ROUTING_EN", "nv_sw_offload_conf", "bool", BOOL, 0),
    ("RDMA_SELECTIVE_REPEAT_EN", "nv_sw_offload_conf", "bool", BOOL, 0),
    ("TX_SCHEDULER_BURST", "nv_performance_tuning_conf", "int", (5, 31), 0),
    ("LOG_MAX_QUEUE", "nv_sw_accelerate_conf", "int", 6, 17),
]
PORT_BLOCKS = [
    [("ROCE_CC_PRIO_MASK", "nv_roce_cc", "int", 8, 255)],
    [("CLAMP_TGT_RATE_AFTER_TIME_INC", "nv_roce_cc_ecn", "bool", BOOL, 1),
     ("CLAMP_TGT_RATE", "nv_roce_cc_ecn", "bool", BOOL, 0),
     ("RPG_TIME_RESET", "nv_roce_cc_ecn", "int", 17, 300),
     ("RPG_BYTE_RESET", "nv_roce_cc_ecn", "int", (32, 32767), 32767),
     ("RPG_THRESHOLD", "nv_roce_cc_ecn", "int", 5, 1),
     ("RPG_MAX_RATE", "nv_roce_cc_ecn", "int", 32, 0),
     ("RPG_AI_RATE", "nv_roce_cc_ecn", "int", (32, 131071), 5),
     ("RPG_HAI_RATE", "nv_roce_cc_ecn", "int", (32, 131071), 50),
     ("RPG_GD", "nv_roce_cc_ecn", "int", 4, 11),
     ("RPG_MIN_DEC_FAC", "nv_roce_cc_ecn", "int", (8, 100), 50),
     ("RPG_MIN_RATE", "nv_roce_cc_ecn", "int", (32, 131071), 1),
     ("RATE_TO_SET_ON_FIRST_CNP", "nv_roce_cc_ecn", "int", (32, 131071), 0),
     ("DCE_TCP_G", "nv_roce_cc_ecn", "int", 10, 1019),
     ("DCE_TCP_RTT", "nv_roce_cc_ecn", "int", 17, 1),
     ("RATE_REDUCE_MONITOR_PERIOD", "nv_roce_cc_ecn", "int", 17, 4),
     ("INITIAL_ALPHA_VALUE", "nv_roce_cc_ecn", "int", 10, 1023),
     ("MIN_TIME_BETWEEN_CNPS", "nv_roce_cc_ecn", "int", 17, 4),
     ("CNP_802P_PRIO", "nv_roce_cc_ecn", "int", 3, 6),
     ("CNP_DSCP", "nv_roce_cc_ecn", "int", 6, 48)],
    [("LLDP_NB_DCBX", "nv_lldp_nb_conf", "bool", BOOL, 0),
     ("LLDP_NB_RX_MODE", "nv_lldp_nb_conf", "enum", [("OFF", 0), ("MANDATORY", 1), ("ALL", 2)], 2),
     ("LLDP_NB_TX_MODE", "nv_lldp_nb_conf", "enum", [("OFF", 0), ("MANDATORY", 1), ("ALL", 2)], 2)],
    [("DCBX_IEEE", "nv_lldp_nb_dcbx", "bool", BOOL, 1),
     ("DCBX_CEE", "nv_lldp_nb_dcbx", "bool", BOOL, 1),
     ("DCBX_WILLING", "nv_lldp_nb_dcbx", "bool", BOOL, 1)],
    [("LINK_TYPE", "nv_vpi_link_type", "enum", [("IB", 1), ("ETH", 2)],
      lambda card, port: 1 if card["link_layers"][port - 1] == "InfiniBand" else 2)],
    [("KEEP_ETH_LINK_UP", "nv_keep_link_up", "bool", BOOL, 1),
     ("KEEP_IB_LINK_UP", "nv_keep_link_up", "bool", BOOL, 0),
     ("KEEP_LINK_UP_ON_BOOT", "nv_keep_link_up", "bool", BOOL, 0),
     ("KEEP_LINK_UP_ON_STANDBY", "nv_keep_link_up", "bool", BOOL, 0)],
    [("NUM_OF_VL", "nv_qos_conf", "enum",
      [("_1_VL", 1), ("_2_VLs", 2), ("_4_VLs", 3), ("_8_VLs", 4), ("_15_VLs", 5)], 3),
     ("NUM_OF_TC", "nv_qos_conf", "enum", [("_8_TCs", 0), ("_1_TC", 1), ("_2_TCs", 2), ("_3_TCs", 3),
                                           ("_4_TCs", 4), ("_5_TCs", 5), ("_6_TCs", 6), ("_7_TCs", 7)], 0),
     ("NUM_OF_PFC", "nv_qos_conf", "int", (4, 8), 8)],
]
GLOBAL_TAIL = [
    ("ROCE_CONTROL", "nv_hca_conf", "enum", [("DEVICE_DEFAULT", 0), ("ROCE_DISABLE", 1), ("ROCE_ENABLE", 2)], 2),
    ("PCI_WR_ORDERING", "nv_hca_conf", "enum", [("per_mkey", 0), ("force_relax", 1)], 0),
    ("MULTI_PORT_VHCA_EN", "nv_hca_conf", "bool", BOOL, 0),
    ("PORT_OWNER", "nv_external_port_ctrl", "bool", BOOL, 1),
    ("ALLOW_RD_COUNTERS", "nv_external_port_ctrl", "bool", BOOL, 1),
    ("RENEG_ON_CHANGE", "nv_external_port_ctrl", "bool", BOOL, 1),
    ("TRACER_ENABLE", "nv_external_port_ctrl", "bool", BOOL, 1),
    ("IP_VER", "nv_rom_boot_conf2", "enum", [("IPv4", 0), ("IPv6", 1), ("IPv4_IPv6", 2), ("IPv6_IPv4", 3)], 0),
    ("BOOT_UNDI_NETWORK_WAIT", "nv_rom_boot_conf2", "int", 8, 0),
    ("UEFI_HII_EN", "nv_rom_uefi_conf", "bool", BOOL, 1),
    ("BOOT_VLAN", "nv_rom_boot_conf1", "int", 12, 1),
    ("LEGACY_BOOT_PROTOCOL", "nv_rom_boot_conf1", "enum",
     [("NONE", 0), ("PXE", 1), ("ISCSI", 2), ("PXE_WO_FAIL_ISCSI", 4), ("ISCSI_WO_FAIL_PXE", 5)], 1),
    ("BOOT_LACP_DIS", "nv_rom_boot_conf1", "bool", BOOL, 1),
    ("BOOT_VLAN_EN", "nv_rom_boot_conf1", "bool", BOOL, 0),
    ("ATS_ENABLED", "nv_pci_conf", "bool", BOOL, 0),
    ("EXP_ROM_UEFI_x86_ENABLE", "nv_pci_conf", "bool", BOOL, 1),
    ("EXP_ROM_PXE_ENABLE", "nv_pci_conf", "bool", BOOL, 1),
    ("ADVANCED_PCI_SETTINGS", "nv_pci_conf", "bool", BOOL, 0),
    ("MAX_ACC_OUT_READ", "nv_global_pci_conf_2", "int", 16, 0),
    ("SAFE_MODE_THRESHOLD", "nv_safe_mode_conf", "int", 8, 10),
    ("SAFE_MODE_ENABLE", "nv_safe_mode_conf", "bool", BOOL, 1),
]


class Param(object):
    def __init__(self, base, port, tlv, kind, spec, default, card):
        self.name = base + ("_P%d" % port if port else "")
        self.tlv = tlv
        self.kind = kind
        self.labels = spec if kind in ("enum", "bool") else None
        bits, maximum = (spec if isinstance(spec, tuple) else (spec, None)) if kind == "int" else (None, None)
        self.bits, self.maximum = bits, maximum
        self.default = default(card, port) if callable(default) else default

    def show(self, value):
        """mlxcfg_ui printValue: LABEL(n) for enums and bools, the number for integers."""
        if self.labels:
            for label, num in self.labels:
                if num == value:
                    return "%s(%d)" % (label, value)
        return "%d" % value

    def parse(self, text):
        """(value, shown) or raises ValueError(the -E- text of mlxcfg_param.cpp)."""
        if self.labels:
            num = _strtoul(text)
            for label, value in self.labels:
                if (num is not None and value == num) or (num is None and label.lower() == text.lower()):
                    return value, "%s(%d)" % (label, value)
            raise ValueError("Unknown value %s" % text)
        num = _strtoul(text)
        if num is None:
            raise ValueError("Cannot parse the value")
        if self.bits != 32 and num > (1 << self.bits) - 1:
            raise ValueError("The value %s is not valid,  as its size is %d bits" % (text, self.bits))
        shown = "%d" % num if text == "%d" % num else "%s(%d)" % (text, num)
        return num, shown


def _strtoul(text):
    """strtoul(text, &end, 0) with the whole string consumed, or None; out of range raises."""
    t = text.strip()
    neg = t.startswith("-")
    body = t[1:] if neg or t.startswith("+") else t
    try:
        if body.lower().startswith("0x"):
            num = int(body[2:], 16)
        elif len(body) > 1 and body.startswith("0"):
            num = int(body, 8)
        else:
            num = int(body, 10)
    except ValueError:
        return None
    if neg or num > 0xFFFFFFFF:
        raise ValueError("value is out of range")
    return num


# ---- the node's cards ------------------------------------------------------
def cards(profile):
    """[card] in PCI order; a card = the NICs (PCI functions) of one adapter: bdf without function."""
    from ..profile import MODELS
    out = {}
    for nic in sorted(profile.nics, key=lambda n: n["bdf"]):
        key = nic["bdf"].rsplit(".", 1)[0]
        out.setdefault(key, []).append(nic)
    result = []
    for key, nics in sorted(out.items()):
        model = MODELS[nics[0]["model"]]
        nports = model.get("ports", 1)
        layers = []
        for i in range(nports):
            if len(nics) > 1:
                src = nics[min(i, len(nics) - 1)]["ports"][0]
            else:
                src = nics[0]["ports"][min(i, len(nics[0]["ports"]) - 1)]
            layers.append(src["link_layer"])
        result.append({"key": key, "nics": nics, "model": model, "nports": nports, "link_layers": layers})
    mst_index = {}
    for card in result:
        mt = card["model"]["mt"].lower()
        card["mst"] = "/dev/mst/%s_pciconf%d" % (mt, mst_index.get(mt, 0))
        mst_index[mt] = mst_index.get(mt, 0) + 1
    return result


def params(card):
    out = [Param(p[0], 0, p[1], p[2], p[3], p[4], card) for p in GLOBAL_HEAD]
    for block in PORT_BLOCKS:
        for port in range(1, card["nports"] + 1):
            out += [Param(p[0], port, p[1], p[2], p[3], p[4], card) for p in block]
    out += [Param(p[0], 0, p[1], p[2], p[3], p[4], card) for p in GLOBAL_TAIL]
    return out


def param_names(card):
    return [p.name for p in params(card)]


def resolve(profile, dev):
    """(card, nic) for a -d argument: PCI address (with or without domain), mst device, mlx5_N
    or netdev; (None, None) when nothing matches."""
    if not dev:
        return None, None
    for card in cards(profile):
        for i, nic in enumerate(card["nics"]):
            fn = nic["bdf"].rsplit(".", 1)[1]
            names = {nic["bdf"], nic["bdf"][5:], nic["dev"]}
            names.update(p["netdev"] for p in nic["ports"])
            names.add(card["mst"] + ("" if fn == "0" else "." + fn))
            if dev.lower() in names or dev in names:
                return card, nic
    return None, None


def card_of(profile, dev):
    return resolve(profile, dev)[0]


# ---- NV state ----------------------------------------------------------------
def card_values(card, which):
    """{name: value} of the card's 'next' or 'current' configuration."""
    stored = state.nv().get(card["key"], {}).get(which, {})
    return dict((p.name, stored.get(p.name, p.default)) for p in params(card))


def boot(profile, faults):
    """What a reboot does to NV config: next-boot becomes current, except the parameters an
    nv-stuck fault keeps (the firmware does not take their value).  Caller holds the lock."""
    nv = state.nv()
    stuck = faults.get("nv_stuck", {})
    for card in cards(profile):
        entry = nv.get(card["key"])
        if not entry:
            continue
        current = dict(entry.get("current", {}))
        for name, value in entry.get("next", {}).items():
            if name not in stuck.get(card["key"], []):
                current[name] = value
        entry["current"] = current
    state.save_nv(nv)


def store(card, values, current=False):
    """Write next-boot values (and current ones with current=True) of a card."""
    nv = state.nv()
    entry = nv.setdefault(card["key"], {"next": {}, "current": {}})
    entry.setdefault("next", {}).update(values)
    if current:
        entry.setdefault("current", {}).update(values)
    state.save_nv(nv)


# ---- shims ---------------------------------------------------------------------
def is_write(tool, args):
    return tool == "mlxconfig" and any(a in ("set", "s") for a in args)


def run(tool, args, ctx):
    return {"mlxconfig": mlxconfig, "flint": flint, "mlxfwmanager": mlxfwmanager}[tool](args, ctx)


def _opening(card, dev_shown, index):
    model = card["model"]
    out = "\nDevice #%d:\n----------\n\n" % index
    out += "%-20s%-20s\n" % ("Device type:", model["mlx_type"])
    out += "%-20s%-20s\n" % ("Name:", fw_part(model))
    out += "%-20s%-20s\n" % ("Description:", fw_desc(model))
    out += "%-20s%-20s\n" % ("Device:", dev_shown)
    return out + "\n"


def _header(show_default, show_current, show_new):
    if show_default and show_current:
        out = "%-20s%44s%20s%18s" % ("Configurations:", "Default", "Current", "Next Boot")
    elif show_current:
        out = "%-20s%46s%18s" % ("Configurations:", "Current", "Next Boot")
    else:
        out = "%-20s%46s" % ("Configurations:", "Next Boot")
    if show_new:
        out += "       New"
    return out + "\n"


def _row(name, values, diff=False):
    return "%s%s     %-44s" % ("*" if diff else " ", "  ", name) + " ".join("%-20s" % v for v in values) + "\n"


USAGE = ("\n        NAME:\n                mlxconfig\n\n        SYNOPSIS:\n                mlxconfig [-d <device> ] "
         "[-y|-e] <s[et] <parameters to set>|q[uery] [<parameters to query>]|r[eset]>\n")


def _usage_err(msg):
    return "-E- %s\n%s" % (msg, USAGE), "", MLX_CFG_ERROR


def mlxconfig(args, ctx):
    dev, yes, verbose, cmd, rest = None, False, False, None, []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--dev"):
            if i + 1 == len(args):
                return _usage_err("missing device name")
            dev = args[i + 1]
            i += 2
            continue
        if a in ("-y", "--yes"):
            yes = True
        elif a in ("-e", "--enable_verbosity"):
            verbose = True
        elif a in ("-h", "--help"):
            return USAGE, "", 0
        elif a in ("q", "query", "s", "set"):
            cmd, rest = ("set" if a in ("s", "set") else "query"), args[i + 1:]
            break
        else:
            return _usage_err("invalid argument: %s" % a)
        i += 1
    if cmd is None:
        return _usage_err("No command found. For more information please read the help message:")
    if cmd == "set" and not rest:
        return _usage_err("missing configuration arguments. For more information please run mlxconfig -h|--help.")
    if cmd == "set" and not dev:
        return _usage_err("set command expects device to be specified.")
    profile = ctx.profile
    if dev:
        card, dummy = resolve(profile, dev)
        if card is None:
            return "-E- Failed to open the device\n", "", MLX_CFG_ERROR
        targets = [(card, dev)]
    else:
        targets = [(c, c["mst"]) for c in cards(profile)]
        if not targets:
            return "-E- No devices found, mst might be stopped. You may need to run 'mst start' to load MST modules. \n", "", MLX_CFG_ERROR
    if cmd == "query":
        out, failed = "", False
        for index, (card, shown) in enumerate(targets, 1):
            text, ok = _query(card, shown, index, rest, verbose)
            out += text
            failed = failed or not ok
        return out, "", MLX_CFG_ERROR if failed else 0
    return _set(ctx, targets[0][0], targets[0][1], rest, yes)


def _query(card, shown, index, names, verbose):
    out = _opening(card, shown, index) + _header(verbose, verbose, False)
    table = params(card)
    by_name = dict((p.name, p) for p in table)
    if names:
        for name in names:
            if name.upper() not in by_name:
                return out + "-E- Unknown Parameter: %s\n" % name, False
        table = [by_name[n.upper()] for n in names]
    nxt, cur = card_values(card, "next"), card_values(card, "current")
    differ = False
    for p in table:
        if verbose:
            diff = nxt[p.name] != p.default or nxt[p.name] != cur[p.name]
            differ = differ or diff
            out += _row(p.name, [p.show(p.default), p.show(cur[p.name]), p.show(nxt[p.name])], diff)
        else:
            out += _row(p.name, [p.show(nxt[p.name])])
    if differ:
        out += "The '*' shows parameters with next value different from default/current value.\n"
    return out, True


def _set(ctx, card, shown, items, yes):
    out = _opening(card, shown, 1) + _header(False, False, True)
    by_name = dict((p.name, p) for p in params(card))
    wanted = []
    for item in items:
        name, eq, text = item.partition("=")
        if not eq:
            return out + "-E- Syntax error in: %s\n" % item, "", MLX_CFG_ERROR
        p = by_name.get(name.upper())
        if p is None:
            return out + "-E- Unknown Parameter: %s\n" % name, "", MLX_CFG_ERROR
        try:
            value, shown_new = p.parse(text)
        except ValueError as exc:
            return out + "-E- %s\n" % exc, "", MLX_CFG_ERROR
        wanted.append((p, value, shown_new))
    nxt = card_values(card, "next")
    for p, value, shown_new in wanted:
        out += _row(p.name, [p.show(nxt[p.name]), shown_new])
    out += "\n Apply new Configuration? (y/n) [n] : "
    if not yes:
        # askUser: getline(cin) on a non-terminal stdin reads EOF -> "" -> not y -> aborted
        return out + "-E- Aborted by user.\n", "", MLX_CFG_ABORTED
    out += "y\nApplying... "
    # TLVConf::checkRules (firmware rule maxima) runs in setCfg, after "Applying... "
    for p, value, dummy in wanted:
        if p.maximum is not None and value > p.maximum:
            return out + "Failed!\n-E- Parameter %s' value is larger than maximum allowed %d\n" % (p.name, p.maximum), \
                "", MLX_CFG_ERROR
    refused = ctx.profile.faults.get("nv_refuse", {}).get(card["key"], [])
    for p, value, dummy in wanted:
        if p.name in refused:
            return out + "Failed!\n-E- Failed to set %s settings Bad parameter\n" % p.tlv, "", MLX_CFG_ERROR
    # one MNVDA register write per TLV, in the order the parameters came
    tlvs = []
    for p, value, dummy in wanted:
        if p.tlv not in tlvs:
            tlvs.append(p.tlv)
    if ctx.fail_now:
        done = tlvs[:len(tlvs) // 2]
        store(card, dict((p.name, v) for p, v, dummy in wanted if p.tlv in done))
        failed = tlvs[len(tlvs) // 2]
        return out + "Failed!\n-E- Failed to set %s settings Device is busy\n" % failed, "", MLX_CFG_ERROR
    store(card, dict((p.name, v) for p, v, dummy in wanted))
    return out + "Done!\n-I- Please reboot machine to load new configurations.\n", "", 0


# ---- firmware identity -----------------------------------------------------------
FW_DATES = {"28.39.1002": "24.10.2023", "22.36.1010": "13.2.2023", "28.39.2048": "28.11.2023",
            "22.39.1002": "24.10.2023", "28.41.1000": "18.4.2024", "28.42.1000": "30.7.2024"}
ROMS = {"ConnectX7": [("UEFI", "14.32.17", "cpu=AMD64,AARCH64"), ("PXE", "3.7.201", "cpu=AMD64")],
        "ConnectX6DX": [("UEFI", "14.29.15", "cpu=AMD64,AARCH64"), ("PXE", "3.6.902", "cpu=AMD64")]}


def fw_part(model):
    """The part number the firmware reports (flint Part Number, mlxconfig Name): the board's
    ordering part without its bracket letter, with the _Ax revision suffix."""
    return model["part"][:-1] + "_Ax"


def fw_desc(model):
    return model["desc"].replace(", ", "; ")


def fw_info(card):
    nic0 = card["nics"][0]
    port0 = nic0["ports"][0]
    guid = nic0["node_guid"].replace(":", "").lower()
    mac = port0.get("mac", "").replace(":", "").lower() or (guid[:6] + guid[10:])
    fw = nic0["fw"]
    return {"fw": fw, "psid": nic0["board_id"], "date": FW_DATES.get(fw, "1.1.2024"), "guid": guid, "mac": mac,
            "roms": ROMS.get(card["model"]["mlx_type"], []), "guids_num": card["model"].get("guids_num", 8)}


def flint(args, ctx):
    dev, cmd, extra = None, None, []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--device"):
            dev = args[i + 1] if i + 1 < len(args) else None
            i += 2
            continue
        if a in ("q", "query"):
            cmd, extra = "query", args[i + 1:]
            break
        if a.startswith("-"):
            i += 1
            continue
        return "", "-E- Invalid command \"%s\"\n" % a, FLINT_FAILED
    if dev is None:
        return "", "-E- Missing device or image file. Please specify -d <device> or -i <image>.\n", FLINT_FAILED
    card, dummy = resolve(ctx.profile, dev)
    if card is None:
        return "", "-E- Cannot open Device: %s. No such file or directory. MFE_CR_ERROR\n" % dev, FLINT_FAILED
    if cmd is None:
        return "", "-E- No command given. See help for details.\n", FLINT_FAILED
    full = bool(extra) and extra[0] == "full"
    info = fw_info(card)
    model = card["model"]
    out = "Image type:            FS4\n"
    out += "FW Version:            %s\n" % info["fw"]
    out += "FW Release Date:       %s\n" % info["date"]
    if full:
        out += "Part Number:           %s\n" % fw_part(model)
        out += "Description:           %s\n" % fw_desc(model)
    out += "Product Version:       %s\n" % info["fw"]
    for n, (kind, ver, cpu) in enumerate(info["roms"]):
        out += "%s%s\n" % ("Rom Info:              " if n == 0 else " " * 23, "type=%s version=%s %s" % (kind, ver, cpu))
    out += "Description:           UID                GuidsNumber\n"
    out += "%-18s     %s        %d\n" % ("Base GUID:", info["guid"], info["guids_num"])
    out += "%-18s     %s            %d\n" % ("Base MAC:", info["mac"], info["guids_num"])
    out += "Image VSD:             N/A\nDevice VSD:            N/A\n"
    out += "PSID:                  %s\n" % info["psid"]
    out += "Security Attributes:   secure-fw\n"
    if full:
        out += ("Default Update Method: fw_ctrl\nLife cycle:            GA SECURED\nSecure Boot Capable:   Enabled\n"
                "EFUSE Security Ver:    0\nImage Security Ver:    0\nSecurity Ver Program:  Manually ; Disabled\n"
                "Encryption:            Disabled\n")
    return out, "", 0


def _rom_version(ver):
    major, minor, sub = ver.split(".")
    return "%s.%s.%04d" % (major, minor, int(sub))


def mlxfwmanager(args, ctx):
    devs, query = [], False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--dev"):
            if i + 1 < len(args):
                devs.append(args[i + 1])
            i += 2
            continue
        if a in ("--query", "-q", "--query-format") or a.startswith("--query"):
            query = True
        i += 1
    if not query:
        return "", "-E- Only --query is simulated by fabricsim\n", 1
    out = "Querying Mellanox devices firmware ...\n\n"
    if devs:
        targets = []
        for dev in devs:
            card, dummy = resolve(ctx.profile, dev)
            if card is None:
                return out, "-E- Failed to open device: %s\n" % dev, 1
            targets.append((card, dev))
    else:
        targets = [(c, c["mst"]) for c in cards(ctx.profile)]
    for n, (card, name) in enumerate(targets, 1):
        info = fw_info(card)
        model = card["model"]
        out += "Device #%d:\n----------\n\n" % n
        out += "  Device Type:      %s\n" % model["mlx_type"]
        out += "  Part Number:      %s\n" % fw_part(model)
        out += "  Description:      %s\n" % fw_desc(model)
        out += "  PSID:             %s\n" % info["psid"]
        out += "  PCI Device Name:  %s\n" % name
        if card["link_layers"][0] == "InfiniBand":
            out += "  Base GUID:        %s\n" % info["guid"]
            if len(card["link_layers"]) > 1 and card["link_layers"][1] == "Ethernet":
                out += "  Base MAC:         %s\n" % info["mac"]
        else:
            out += "  Base MAC:         %s\n" % info["mac"]
            if len(card["link_layers"]) > 1 and card["link_layers"][1] == "InfiniBand":
                out += "  Base GUID:        %s\n" % info["guid"]
        out += "  Versions:         %-14s %-14s\n" % ("Current", "Available")
        out += "     FW             %-14s %-14s\n" % (info["fw"], "N/A")
        for kind, ver, dummy in sorted(info["roms"]):
            out += "     %-12s   %-14s %-14s\n" % (kind, _rom_version(ver), "N/A")
        out += "\n  Status:           No matching image found\n\n"
    return out, "", 0
