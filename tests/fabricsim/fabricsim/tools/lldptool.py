"""lldptool (intel/openlldp) against a simulated lldpad.

lldpad's stored settings persist ($FABRICSIM_STATE_DIR/lldpad.json, like /var/lib/lldpad/lldpad.conf).
In OS DCBX mode a PFC / ETS-CFG / APP set through lldptool is pushed to the NIC (what
mlnx_qos reports changes); in firmware DCBX mode it is stored but never reaches the NIC.
The neighbour (-n) is a switch advertising PFC on its configured priorities and APP 4791->3
(with the NIC in firmware DCBX mode the firmware answers the switch: lldpad sees its LLDP
identity TLVs but no DCB TLV);
profile ``lldp_neighbour.dcbx: cee`` makes it a CEE DCBX switch (one ``CEE DCBX TLV``, no IEEE
8021QAZ TLVs), profile ``lldpad_app_layout: old`` prints APP TLVs in the multi-line ``App#N:``
layout of lldpad releases before openlldp 218a515 (2018-11, i.e. v1.0.1 and older).
"""
from .. import state

NOT_RUNNING = "connect: Connection refused\nFailed to connect to lldpad - clif_open: Invalid argument\n"
NODEV = "Device not found or inactive \n"
JUNK = {"PFC": "b", "ETS-CFG": "9", "ETS-REC": "a", "APP": "c", "IEEE-DCBX": "0"}
TLV_NAMES = {"PFC": "IEEE 8021QAZ PFC TLV", "ETS-CFG": "IEEE 8021QAZ ETS Configuration TLV",
             "ETS-REC": "IEEE 8021QAZ ETS Recommendation TLV", "APP": "IEEE 8021QAZ APP TLV"}
AGENTS = {"nb": "nearestbridge", "nearestbridge": "nearestbridge", "ncb": "nearestcustomerbridge",
          "nearestcustomerbridge": "nearestcustomerbridge", "nntpmrb": "nearestnontpmrbridge",
          "nearestnontpmrbridge": "nearestnontpmrbridge"}
# lldp_8021qaz_clif.c ieee8021qaz_print_app_tlv() spelling (sic "STCP"); other selectors "Reserved Port"
SEL_NAMES = {1: "Ethertype", 2: "{S}TCP Port", 3: "UDP or DCCP Port", 4: "TCP/STCP/UDP/DCCP Port"}
LONG = {"get-lldp": "-l", "set-lldp": "-L", "get-tlv": "-t", "set-tlv": "-T", "stats": "-S", "help": "-h",
        "version": "-v", "ping": "-p"}


def parse(args):
    o = {"cmd": None, "if": None, "tlv": None, "c": False, "n": False, "agent": "nearestbridge", "d": False,
         "r": False, "args": []}
    i = 0
    while i < len(args):
        a = args[i]
        if a in LONG:
            a = LONG[a]
        if a in ("-l", "-L", "-t", "-T", "-S", "-h", "-v", "-p"):
            o["cmd"] = a
        elif a.startswith("-") and len(a) > 2 and a[1] != "-" and all(ch in "tTlLnScdr" for ch in a[1:]):
            for ch in a[1:]:       # bundled short options, e.g. -ti
                o["cmd" if ch in "tTlLS" else {"n": "n", "c": "c", "d": "d", "r": "r"}[ch]] = \
                    ("-" + ch) if ch in "tTlLS" else True
        elif a == "-i":
            i += 1
            o["if"] = args[i] if i < len(args) else None
        elif a.startswith("-i") and len(a) > 2:
            o["if"] = a[2:]
        elif a == "-V":
            i += 1
            o["tlv"] = args[i] if i < len(args) else None
        elif a == "-g":
            i += 1
            o["agent"] = AGENTS.get(args[i], args[i]) if i < len(args) else "nearestbridge"
        elif a == "-c":
            o["c"] = True
        elif a == "-n":
            o["n"] = True
        elif a == "-d":
            o["d"] = True
        elif a == "-r":
            o["r"] = True
        else:
            o["args"].append(a)
        i += 1
    return o


def is_write(tool, args):
    o = parse(args)
    return o["cmd"] in ("-L", "-T")


def _cfg(ctx, netdev):
    cfg = state.lldpad()
    port = cfg.setdefault("ports", {}).setdefault(netdev, {})
    return cfg, port


def _tlv(port, name):
    return port.setdefault("tlv", {}).setdefault(name, {})


def _dcb(ctx, netdev):
    return ctx.nic.get("qos", {}).get(netdev)


def run(tool, args, ctx):
    o = parse(args)
    if o["cmd"] == "-v":
        return ("lldptool v1.2.99\nCopyright (c) 2007-2010, Intel Corporation\n\n"
                "Substantially modified from:  hostapd_cli v 0.5.7\n"
                "Copyright (c) 2004-2007, Jouni Malinen <j@w1.fi> and contributors\n"), "", 0
    if not state.lldpad_running(ctx.profile):
        return "", NOT_RUNNING, 255
    if o["cmd"] == "-p":
        return "pong\n", "", 0
    netdev = o["if"]
    nic, port = ctx.profile.port_by_netdev(netdev) if netdev else (None, None)
    if port is None:
        return NODEV, "", 1
    cfg, pcfg = _cfg(ctx, netdev)
    q = _dcb(ctx, netdev)
    cmd = o["cmd"]
    if cmd in ("-l", "-L"):
        return lldp_params(o, cfg, pcfg)
    if cmd == "-S":
        return ("Total Frames Transmitted        = %d\nTotal Discarded Frames Received = 0\n"
                "Total Error Frames Received     = 0\nTotal Frames Received           = %d\n"
                "Total Discarded TLVs            = 0\nTotal Unrecognized TLVs         = 0\n"
                "Total Ageouts                   = 0\n" % (pcfg.get("tx", 0), pcfg.get("rx", 0))), "", 0
    if cmd == "-T":
        return set_tlv(o, ctx, cfg, pcfg, q, port)
    if cmd == "-t":
        return get_tlv(o, ctx, pcfg, q, port)
    return "", "", 0


def lldp_params(o, cfg, pcfg):
    agent = pcfg.setdefault("agents", {}).setdefault(o["agent"], {})
    out = []
    if o["cmd"] == "-l":
        for arg in o["args"] or ["adminStatus"]:
            if arg != "adminStatus":
                return "Command not applicable \n", "", 1
            out.append("adminStatus=%s\n" % agent.get("adminStatus", "disabled"))
        return "".join(out), "", 0
    for arg in o["args"]:
        key, dummy, value = arg.partition("=")
        if key != "adminStatus" or value not in ("rx", "tx", "rxtx", "disabled"):
            return "Invalid command \n", "", 1
        agent["adminStatus"] = value
        out.append("adminStatus = %s\n" % value)
    state.save_lldpad(cfg)
    return "".join(out), "", 0


def _mask_list(mask):
    return [p for p in range(8) if mask >> p & 1]


def _local_pfc(t, q):
    mask = t.get("enabled")
    if mask is None and q is not None:
        mask = q["pfc_en"]
    return mask


def _local_ets(t, q):
    if "up2tc" in t:
        return t["up2tc"], t["tcbw"], t["tsa"]
    if q is None:
        return [0] * 8, [0] * 8, ["strict"] * 8
    return q["prio_tc"], q["tcbw"], q["tsa"]


def _yn(v):
    return "yes" if v else "no"


def set_tlv(o, ctx, cfg, pcfg, q, port):
    tlv = o["tlv"]
    if tlv not in TLV_NAMES:
        return "Command not applicable %s\n" % JUNK.get(tlv, ""), "", 1
    if q is None:                       # netdev without dcbnl ops (IPoIB here)
        return "Device not capable %s\n" % JUNK[tlv], "", 1
    t = _tlv(pcfg, tlv)
    os_mode = q["dcbx"] == "os"
    out = []
    push = {}
    for arg in o["args"]:
        key, dummy, value = arg.partition("=")
        if key == "enableTx":
            if value not in ("yes", "no"):
                return "Invalid command %s\n" % JUNK[tlv], "", 1
            t["enableTx"] = value == "yes"
            out.append("enabled = %s\n" % value)
        elif key == "willing":
            if value not in ("yes", "no"):
                return "Invalid command %s\n" % JUNK[tlv], "", 1
            t["willing"] = value == "yes"
            out.append("willing = %s\n" % value)
        elif tlv == "PFC" and key == "enabled":
            if value == "none":
                prios = []
            else:
                try:
                    prios = [int(x) for x in value.split(",")]
                except ValueError:
                    return "Invalid command %s\n" % JUNK[tlv], "", 1
                if any(p < 0 or p > 7 for p in prios):
                    return "Invalid command %s\n" % JUNK[tlv], "", 1
            mask = sum(1 << p for p in set(prios))
            t["enabled"] = mask
            push["pfc"] = mask
            out.append("prio = %s\n" % (",".join(str(p) for p in sorted(set(prios))) if prios else "none"))
        elif tlv == "PFC" and key == "delay":
            t["delay"] = int(value)
            out.append("delay = %s\n" % value)
        elif tlv in ("ETS-CFG", "ETS-REC") and key in ("up2tc", "tcbw", "tsa"):
            cur = list(_local_ets(t, q))
            try:
                if key == "tcbw":
                    bws = [int(x) for x in value.split(",")]
                    if len(bws) != 8 or sum(bws) != 100:
                        return "Invalid command %s\n" % JUNK[tlv], "", 1
                    cur[1] = bws
                    out.append("tcbw = %s\n" % "".join("%d%% " % b for b in bws))
                else:
                    pairs = dict(item.split(":") for item in value.split(","))
                    if key == "up2tc":
                        m = list(cur[0])
                        for k, v in pairs.items():
                            m[int(k)] = int(v)
                        cur[0] = m
                        out.append("up2tc = %s\n" % value)
                    else:
                        names = {"strict": "strict", "ets": "ets", "vendor": "vendor", "cb_shaper": "cb_shaper"}
                        m = list(cur[2])
                        for k, v in pairs.items():
                            m[int(k)] = names[v]
                        cur[2] = m
                        out.append("TSA = %s\n" % "".join("%d:%s " % (i, m[i]) for i in range(8)))
            except (ValueError, KeyError, IndexError):
                return "Invalid command %s\n" % JUNK[tlv], "", 1
            t["up2tc"], t["tcbw"], t["tsa"] = cur
            if tlv == "ETS-CFG":
                push["ets"] = cur
        elif tlv == "APP" and key == "app":
            try:
                prio, sel, proto = [int(x) for x in value.split(",")]
            except ValueError:
                return "Invalid command %s\n" % JUNK[tlv], "", 1
            apps = t.setdefault("apps", [])
            if o["d"]:
                if [prio, sel, proto] in apps:
                    apps.remove([prio, sel, proto])
                push.setdefault("app_del", []).append([sel, prio, proto])
            elif [prio, sel, proto] not in apps:
                apps.append([prio, sel, proto])
                push.setdefault("app_add", []).append([sel, prio, proto])
        else:
            return "Command not applicable %s\n" % JUNK[tlv], "", 1
    if ctx.fail_now and push:
        # lldpad stored the setting, the dcbnl push to the NIC failed
        state.save_lldpad(cfg)
        return "Failed to set %s \n" % tlv, "", 1
    state.save_lldpad(cfg)
    if os_mode and push:
        if "pfc" in push:
            q["pfc_en"] = push["pfc"]
        if "ets" in push:
            q["prio_tc"], q["tcbw"], q["tsa"] = [list(x) for x in push["ets"]]
        for app in push.get("app_add", []):
            if app not in q["apps"]:
                q["apps"].insert(0, app)
                if app[0] == 5:
                    q["dscp2prio_hw"][app[2]] = app[1]
        for app in push.get("app_del", []):
            if app in q["apps"]:
                q["apps"].remove(app)
        ctx.dirty = True
    return "".join(out), "", 0


def neighbour_tlvs(ctx, netdev):
    nb = ctx.profile.data.get("lldp_neighbour", {})
    pfc = (ctx.profile.faults.get("switch_pfc") or {}).get(netdev, nb.get("pfc", []))   # fault switch-pfc
    mask = sum(1 << p for p in pfc)
    return {"mac": nb.get("chassis_mac", "b8:ce:f6:00:00:01"), "willing": nb.get("willing", False),
            "PFC": {"enabled": mask, "willing": nb.get("willing", False)},
            "ETS-CFG": {"up2tc": [0, 0, 0, 3, 0, 0, 6, 0], "tcbw": [50, 0, 0, 50, 0, 0, 0, 0],
                        "tsa": ["ets", "strict", "strict", "ets", "strict", "strict", "strict", "strict"],
                        "willing": nb.get("willing", False)},
            "APP": {"apps": [list(a) for a in nb.get("app", [])]}}


def _app_proto(sel, proto):
    return "%s: %s" % (SEL_NAMES.get(sel, "Reserved Port"), "0x%04x" % proto if sel == 1 else proto)


def render_tlv(name, t, q=None, layout="new"):
    if name == "PFC":
        mask = _local_pfc(t, q) or 0
        prios = "".join("%d " % p for p in _mask_list(mask)) if mask else "none"
        return ("IEEE 8021QAZ PFC TLV\n\t Willing: %s\n\t MACsec Bypass Capable: no\n"
                "\t PFC capable traffic classes: 8\n\t PFC enabled: %s\n" % (_yn(t.get("willing")), prios))
    if name in ("ETS-CFG", "ETS-REC"):
        up2tc, tcbw, tsa = _local_ets(t, q)
        head = TLV_NAMES[name] + "\n"
        if name == "ETS-CFG":
            head += "\t Willing: %s\n\t CBS: not supported\n\t MAX_TCS: 8\n" % _yn(t.get("willing"))
        tsa_name = {"cb_shaper": "cbshaper"}
        return (head + "\t PRIO_MAP: %s\n\t TC Bandwidth: %s\n\t TSA_MAP: %s\n" % (
            "".join("%d:%d " % (i, up2tc[i]) for i in range(8)),
            "".join("%d%% " % b for b in tcbw),
            "".join("%d:%s " % (i, tsa_name.get(tsa[i], tsa[i])) for i in range(8))))
    if name == "APP":
        lines = ["IEEE 8021QAZ APP TLV\n"]
        dscp = {}
        for n, (prio, sel, proto) in enumerate(t.get("apps", [])):
            if layout == "old":       # before openlldp 218a515: one block per entry, DSCP included
                lines.append("\tApp#%i:\n\t Priority: %i\n\t Sel: %i\n\t %s\n\n" % (n, prio, sel, _app_proto(sel, proto)))
            elif sel == 5:
                dscp.setdefault(prio, []).append(proto)
            else:
                lines.append("\tApp# %3i \t Prio %1i \t Sel %1i \t P-ID\t %s\n" % (n, prio, sel, _app_proto(sel, proto)))
        for prio in sorted(dscp):
            lines.append("\tPrio:%i \t dscp: %s\b \n" % (prio, "".join(" %02i," % d for d in dscp[prio])))
        return "".join(lines)
    return ""


def render_cee(nb):
    """A CEE switch's DCBX TLV as lldp_dcbx_clif.c print_dcbx_v2() prints it."""
    flags = "\t  Enabled, %sWilling, No Error\n" % ("" if nb["willing"] else "Not ")
    ets = nb["ETS-CFG"]
    groups = "".join(" %d:[%s]" % (g, ",".join(str(p) for p in range(8) if ets["up2tc"][p] == g))
                     for g in range(16) if g in ets["up2tc"])
    prios = ", ".join(str(p) for p in _mask_list(nb["PFC"]["enabled"])) or "none"
    out = ["CEE DCBX TLV\n\tControl TLV:\n\t  SeqNo: 1, AckNo: 1\n",
           "\tPriority Groups TLV:\n", flags, "\t  PGID Priorities: %s\n" % groups,
           "\t  PGID Percentages: %s\n" % " ".join("%d:%d%%" % (g, ets["tcbw"][g]) for g in range(8)),
           "\t  Number of TC's supported: 8\n",
           "\tPriority Flow Control TLV:\n", flags, "\t  PFC enabled priorities: %s\n" % prios,
           "\t  Number of TC's supported: 8\n", "\tApplication TLV:\n", flags]
    maps = {}
    for prio, sel, proto in nb["APP"]["apps"]:
        if sel in (1, 2, 3, 4):        # CEE knows ethertypes and TCP/UDP ports only, no DSCP
            key = ("Ethertype" if sel == 1 else "TCP/UDP Port", proto)
            maps[key] = maps.get(key, 0) | 1 << prio
    for (kind, proto), mask in sorted(maps.items()):
        out.append("\t  %s: 0x%04x, Priority Map: 0x%02x\n" % (kind, proto, mask))
    return "".join(out)


def get_tlv(o, ctx, pcfg, q, port):
    tlv = o["tlv"]
    netdev = port["netdev"]
    layout = ctx.profile.data.get("lldpad_app_layout", "new")
    if o["n"]:
        nb = neighbour_tlvs(ctx, netdev)
        cee = ctx.profile.data.get("lldp_neighbour", {}).get("dcbx") == "cee"
        if port.get("down"):
            return "", "", 0
        firmware = q is not None and q.get("dcbx") == "fw"
        if tlv:
            if tlv not in TLV_NAMES:
                return "Command not applicable %s\n" % JUNK.get(tlv, ""), "", 1
            if cee or tlv == "ETS-REC" or firmware:
                return "", "", 0
            return render_tlv(tlv, nb.get(tlv, {}), layout=layout), "", 0
        from .. import cabling
        switch, swport = cabling.neighbour(ctx.profile, netdev)
        out = ("Chassis ID TLV\n\tMAC: %s\nPort ID TLV\n\tIfname: %s\nTime to Live TLV\n\t120\n"
               "System Name TLV\n\t%s\n" % (nb["mac"], swport, switch))
        if firmware:
            pass
        elif cee:
            out += render_cee(nb)
        else:
            for name in ("ETS-CFG", "PFC", "APP"):
                out += render_tlv(name, nb[name], layout=layout)
        return out + "End of LLDPDU TLV\n", "", 0
    if tlv == "IEEE-DCBX":
        if o["c"]:
            return "mode=auto\n", "", 0
        return "", "", 0
    if tlv and tlv not in TLV_NAMES:
        return "Command not applicable %s\n" % JUNK.get(tlv, ""), "", 1
    if o["c"]:
        if not tlv:
            return "Command not applicable \n", "", 1
        return get_args(tlv, o["args"], pcfg, q)
    if q is None:
        if tlv:
            return "", "", 0
    if tlv:
        t = pcfg.get("tlv", {}).get(tlv, {})
        if not t.get("enableTx") or q is None:
            return "", "", 0
        return render_tlv(tlv, t, q, layout=layout), "", 0
    mac = port.get("mac") or "00:00:00:00:00:00"
    out = "Chassis ID TLV\n\tMAC: %s\nPort ID TLV\n\tMAC: %s\nTime to Live TLV\n\t120\n" % (mac, mac)
    for name in ("ETS-CFG", "ETS-REC", "PFC", "APP"):
        t = pcfg.get("tlv", {}).get(name, {})
        if t.get("enableTx") and q is not None:
            out += render_tlv(name, t, q, layout=layout)
    return out + "End of LLDPDU TLV\n", "", 0


def get_args(tlv, names, pcfg, q):
    t = pcfg.get("tlv", {}).get(tlv, {})
    tx = "yes" if t.get("enableTx") else "no"
    values = {"enableTx": tx, "willing": ("" if "willing" not in t else _yn(t["willing"]))}
    if tlv == "PFC":
        mask = _local_pfc(t, q)
        values["enabled"] = "" if mask is None else str(mask)
        values["delay"] = "" if q is None and "delay" not in t else "%02x" % t.get("delay", 0)
        order = []          # -c without names prints nothing for PFC (observed)
    elif tlv in ("ETS-CFG", "ETS-REC"):
        if q is None and "up2tc" not in t:
            values.update(numtcs="", up2tc="", tcbw="", tsa="")
        else:
            up2tc, tcbw, tsa = _local_ets(t, q)
            values.update(numtcs="8", up2tc=",".join("%d:%d" % (i, up2tc[i]) for i in range(8)),
                          tcbw=",".join(str(b) for b in tcbw), tsa=",".join("%d:%s" % (i, tsa[i]) for i in range(8)))
        order = ["enableTx", "willing", "numtcs", "up2tc", "tcbw", "tsa"]
    else:
        # lldp_8021qaz_cmds.c get_arg_app() (0313734+): a header line, then the configured entries
        hw = "hw (set)" if q is not None else " hw (unknown)"
        values["app"] = "(prio,sel,proto)\n" + "".join(
            "%d:(%d,%d,%s) local %s\n" % (i, prio, sel, "0x%04x" % proto if sel == 1 else proto, hw)
            for i, (prio, sel, proto) in enumerate(t.get("apps", [])))
        order = ["enableTx", "willing", "app"]
    out = []
    names = names or order
    for idx, name in enumerate(names):
        if name not in values:
            return "".join(out) + "Command not applicable %s\n" % JUNK[tlv], "", 1
        value = values[name]
        if tlv == "PFC" and name == "enabled" and value:
            # get_arg_enabled hard-codes a value length of 2 (lldp_8021qaz_cmds.c)
            following = idx + 1 < len(names)
            if len(value) > 2:
                if following:
                    return "", "", 0        # response misparsed: nothing printed
                value = value[:2]
            elif len(value) == 1 and following:
                nxt = names[idx + 1]
                out.append("enabled=%s0\n%s0=\n" % (value, nxt[1:]))
                return "".join(out), "", 0
        out.append("%s=%s\n" % (name, value))
    return "".join(out), "", 0
