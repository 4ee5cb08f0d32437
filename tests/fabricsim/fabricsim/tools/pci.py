"""lspci (list, -D, -s, -nn, -vv/-vvv link, bridge bus numbers and ACS parts) and setpci
(ECAP_ACS+0x6.w reads, writes of VALUE or VALUE:MASK)."""
ACS_BITS = ["SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans"]
CLASS_NAMES = {"0x020000": "Ethernet controller", "0x020700": "Infiniband controller",
               "0x060400": "PCI bridge", "0x030200": "3D controller"}
SPEED_ORDER = ["2.5GT/s", "5GT/s", "8GT/s", "16GT/s", "32GT/s", "64GT/s"]


def is_write(tool, args):
    return tool == "setpci" and any("=" in a for a in args if not a.startswith("-"))


def run(tool, args, ctx):
    return (setpci if tool == "setpci" else lspci)(args, ctx)


def _short(bdf):
    return bdf[5:] if bdf.startswith("0000:") else bdf


def _match(bdf, sel):
    if sel is None:
        return True
    sel = sel.lower()
    return bdf == sel or _short(bdf) == sel or bdf.endswith(":" + sel) and sel.count(":") >= 1


def _flags(value):
    return " ".join("%s%s" % (name, "+" if value >> i & 1 else "-") for i, name in enumerate(ACS_BITS))


def _name(p, dev):
    return dev.get("name", "Device")


def _header(bdf, dev, domain, numeric):
    """``BDF CLASS: NAME`` or, with -nn, ``BDF CLASS [cccc]: NAME [vvvv:dddd] (rev xx)``."""
    cls = CLASS_NAMES.get(dev.get("class"), "Device")
    name = dev.get("name", "Device")
    if numeric:
        rev = ""
        if " (rev " in name:
            name, rev = name.split(" (rev ", 1)
            rev = " (rev " + rev
        cls += " [%s]" % dev.get("class", "0x000000")[2:6]
        name += " [%s:%s]%s" % (dev.get("vendor", "0x0000")[2:], dev.get("device", "0x0000")[2:], rev)
    return "%s %s: %s\n" % (bdf if domain else _short(bdf), cls, name)


def _bus_numbers(p, bdf):
    """(primary, secondary, subordinate) of a bridge, from the devices below it; None
    when nothing sits below it."""
    below = [b for b in p.pci if bdf in p.ancestors(b)]
    if not below:
        return None
    children = [b for b in below if p.pci[b].get("parent") == bdf]

    def bus(b):
        return int(b.split(":")[1], 16)
    return bus(bdf), min(bus(b) for b in children), max(bus(b) for b in below)


def _lnksta(version, kind, cap, sta):
    """The LnkSta lines as pciutils ``version`` prints them (ls-caps.c cap_express_link and
    link_compare; samples lspci_pcie.txt): <= 3.5 one line with the status flags and no notes,
    3.6-3.7 "(ok)"/"(downgraded)"/"(strange)" on every port, >= 3.8 a note only when the
    value differs from LnkCap ("(downgraded)" below it, never on root or downstream ports;
    "(overdriven)" above it). Profile key ``pciutils`` ("3.5", "3.7", "3.8"), default 3.7."""
    flags = "TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-"
    s_cmp = (SPEED_ORDER.index(sta[0]) > SPEED_ORDER.index(cap[0])) - (SPEED_ORDER.index(sta[0]) < SPEED_ORDER.index(cap[0]))
    w_cmp = (sta[1] > cap[1]) - (sta[1] < cap[1])
    if version == "3.5":
        return "\t\tLnkSta:\tSpeed %s, Width x%d, %s\n" % (sta[0], sta[1], flags)
    if version == "3.7":
        def note(cmp):
            return " (%s)" % {0: "ok", -1: "downgraded", 1: "strange"}[cmp]
    else:
        def note(cmp):
            if cmp > 0:
                return " (overdriven)"
            if cmp == 0 or kind in ("root_port", "switch_down"):
                return ""
            return " (downgraded)"
    return "\t\tLnkSta:\tSpeed %s%s, Width x%d%s\n\t\t\t%s\n" % (sta[0], note(s_cmp), sta[1], note(w_cmp), flags)


def lspci(args, ctx):
    p = ctx.profile
    verbose = sum(a.count("v") for a in args if a.startswith("-v") or a in ("-vv", "-vvv"))
    domain = "-D" in args
    numeric = "-nn" in args or sum(a.count("n") for a in args if a.startswith("-") and set(a[1:]) <= set("nvD")) >= 2
    sel = None
    for i, a in enumerate(args):
        if a == "-s" and i + 1 < len(args):
            sel = args[i + 1]
    acs = ctx.nic.get("acs", {})
    out = []
    for bdf in sorted(p.pci):
        if not _match(bdf, sel):
            continue
        dev = p.pci[bdf]
        out.append(_header(bdf, dev, domain, numeric))
        if not verbose:
            continue
        out.append("\tSubsystem: %s\n" % _name(p, dev))
        out.append("\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- "
                   "FastB2B- DisINTx+\n")
        out.append("\tNUMA node: %d\n" % dev.get("numa", 0))
        if dev["kind"] in ("root_port", "switch_up", "switch_down"):
            numbers = _bus_numbers(p, bdf)
            if numbers:
                out.append("\tBus: primary=%02x, secondary=%02x, subordinate=%02x, sec-latency=0\n" % numbers)
        kind = {"root_port": "Root Port (Slot+)", "switch_up": "Upstream Port",
                "switch_down": "Downstream Port (Slot+)"}.get(dev["kind"], "Endpoint")
        out.append("\tCapabilities: [60] Express (v2) %s, MSI 00\n" % kind)
        cap, sta = dev.get("link_cap"), dev.get("link_sta")
        if cap:
            out.append("\t\tLnkCap:\tPort #0, Speed %s, Width x%d, ASPM not supported\n" % (cap[0], cap[1]))
            out.append("\t\t\tClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+\n")
            out.append(_lnksta(p.data.get("pciutils", "3.7"), dev["kind"], cap, sta))
        if dev.get("acs_cap"):
            out.append("\tCapabilities: [%s v1] Access Control Services\n" % dev.get("acs_offset", "0x220")[2:])
            out.append("\t\tACSCap:\t%s\n" % _flags(dev["acs_cap"]))
            out.append("\t\tACSCtl:\t%s\n" % _flags(acs.get(bdf, dev.get("acs_ctl", 0))))
        if dev["kind"] == "nic":
            out.append("\tKernel driver in use: mlx5_core\n\tKernel modules: mlx5_core\n")
        elif dev["kind"] == "gpu":
            out.append("\tKernel driver in use: nvidia\n\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n")
        else:
            out.append("\tKernel driver in use: pcieport\n")
        out.append("\n")
    return "".join(out), "", 0


def setpci(args, ctx):
    p = ctx.profile
    verbose = "-v" in args
    sel, ops = None, []
    i = 0
    while i < len(args):
        if args[i] == "-s" and i + 1 < len(args):
            sel = args[i + 1]
            i += 1
        elif not args[i].startswith("-"):
            ops.append(args[i])
        i += 1
    devs = [b for b in sorted(p.pci) if _match(b, sel)]
    if not devs:
        return "", "", 0          # real setpci: no matching device -> nothing, rc 0 (warning with -v)
    out, err = [], []
    for bdf in devs:
        dev = p.pci[bdf]
        for op in ops:
            reg, dummy, value = op.partition("=")
            if reg.upper() != "ECAP_ACS+0X6.W" and reg.upper() != "ECAP0D+6.W":
                return "", "setpci: fabricsim simulates only ECAP_ACS+0x6.w, not %s\n" % reg, 1
            if not dev.get("acs_cap"):
                if verbose:
                    out.append(bdf + " ")
                err.append("setpci: %s: Instance #0 of Extended capability 000d not found - there are no "
                           "capabilities with that id.\n" % bdf)
                return "".join(out), "".join(err), 1
            base = int(dev.get("acs_offset", "0x220"), 16)
            prefix = "%s (ecap 000d @%03x) @%03x" % (bdf, base, base + 6)
            acs = ctx.nic.setdefault("acs", {})
            if value:
                # VALUE or VALUE:MASK (only the bits of MASK change), as setpci accepts
                text, dummy, mask_text = value.partition(":")
                try:
                    new = int(text, 16) & 0xFFFF
                    mask = int(mask_text, 16) & 0xFFFF if mask_text else 0xFFFF
                except ValueError:
                    return "".join(out), "setpci: Invalid value \"%s\"\n" % value, 1
                new = (acs.get(bdf, dev.get("acs_ctl", 0)) & ~mask) | (new & mask)
                if ctx.fail_now:
                    return "".join(out), "setpci: Unable to write to %s: Device or resource busy\n" % bdf, 1
                acs[bdf] = new & 0x7F
                ctx.dirty = True
                if verbose:
                    out.append("%s %04x\n" % (prefix, new))
            else:
                cur = acs.get(bdf, dev.get("acs_ctl", 0))
                out.append(("%s = %04x\n" % (prefix, cur)) if verbose else "%04x\n" % cur)
    return "".join(out), "", 0
