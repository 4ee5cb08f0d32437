# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCIe ACS audit and runtime redirect control (logic of ``pcie_acs``), plus the GDR
readiness verdict.

* ``parse_lspci`` reads ``lspci -D -nn -vvv`` (also plain ``lspci -vvv`` captures): per
  function its class, vendor, ``NUMA node``, bridge bus range and the ACS capability
  (``ACSCap``/``ACSCtl`` flags, printed by pciutils ls-ecaps.c as ``Name+``/``Name-``).
  It follows the printing code of pciutils/pciutils lspci.c (show_device: the function
  header ``[DDDD:]BB:DD.F class: name`` at column 0, everything else indented, a blank
  line after each function under -v), ls-caps.c (cap_express: the port types;
  cap_express_link/link_speed/link_compare: LnkCap/LnkSta) and ls-ecaps.c (cap_acs), tags
  v3.5.0 to v3.14.0 (samples ``tests/unit/fixtures/samples/lspci_pcie.txt``). LnkSta notes
  by version: none before 3.6 (one line ending in ``TrErr- ...``); ``(ok)``,
  ``(downgraded)`` or ``(strange)`` on every port in 3.6-3.7; from 3.8 nothing when equal
  to LnkCap, ``(downgraded)`` below it (not on root/downstream ports), ``(overdriven)``
  above it. Speeds are 2.5/5/8/16/32/64GT/s (128GT/s after v3.14) or ``unknown``. Indented lines are free
  text (VPD strings, vendor capabilities) except LnkCap, LnkSta, ACSCap and ACSCtl, whose
  layout is checked; a column-0 line that is not a function header, an indented line
  before the first header, a note or speed lspci cannot print, or ACS flags other than the
  seven ls-ecaps.c prints are a ValueError naming the line. Lines of lspci's own messages
  (``lspci: ...``, ``pcilib: ...``, stderr when captured with 2>&1) and ``-x`` hex dump
  lines are accepted and skipped.
* ``upstream_bridges`` walks up from an endpoint: the sysfs device path
  (``$SYSFS_PATH/bus/pci/devices/<bdf>`` resolves to ``.../pci0000:16/0000:16:01.0/
  0000:17:00.0/...``) when it has bridges in it, else the bridges' ``Bus: secondary=``
  numbers from the same lspci text (a simulated sysfs is often flat).
* ``plan`` computes, per bridge, the ACS Control word to write and the setpci argv.
* ``gdr_verdict`` is the pure GPUDirect RDMA readiness rule.

ACS Control register (PCIe base spec 7.7.8.3, ECAP_ACS + 0x6, 16 bits):
bit 0 SrcValid, 1 TransBlk, 2 ReqRedir, 3 CmpltRedir, 4 UpstreamFwd, 5 EgressCtrl,
6 DirectTrans.  Peer-to-peer between a GPU and a NIC below the same switch is sent up
to the root complex (and the IOMMU) while ReqRedir or CmpltRedir is set on the switch's
downstream ports, and blocked or redirected per the egress vector while EgressCtrl is
set.  ``clear: redirect`` clears those three bits and leaves SrcValid, TransBlk,
UpstreamFwd and DirectTrans as they are (they do not reroute P2P; DirectTrans even
helps it); ``clear: all`` clears the seven bits, as the NCCL troubleshooting loop
(``setpci ... ECAP_ACS+0x6.w=0000``) does.  The write uses setpci's ``value:mask`` form
so that bits lspci does not decode (newer spec revisions) are left untouched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rdma.fabric.plugins.module_utils.common._bdf import BDF_TEXT, is_bdf, normalize_bdf
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError, find_tool, run_tool, sysfs_path
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import Resource
from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re

ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
REDIRECT_MASK = 0x0004 | 0x0008 | 0x0020      # ReqRedir, CmpltRedir, EgressCtrl
ALL_MASK = 0x007f
CLEAR_MASKS = {"redirect": REDIRECT_MASK, "all": ALL_MASK}

_HEADER_RE = _lazy_re.compile(
    r"^(?P<bdf>" + BDF_TEXT + r")\s+"
    r"(?P<cls>[^:\[]+?)(?:\s+\[(?P<clsid>[0-9a-fA-F]{4})\])?:\s+(?P<desc>.*?)"
    r"(?:\s+\[(?P<vendor>[0-9a-fA-F]{4}):(?P<device>[0-9a-fA-F]{4})\])?(?:\s+\(rev [0-9a-fA-F]+\))?(?:\s+\(prog-if [^)]*\))?\s*\Z")
_FLAG_RE = _lazy_re.compile(r"([A-Za-z0-9]+)([+-])")
# pciutils ls-caps.c cap_express_link: "LnkCap:\tPort #N, Speed 32GT/s, Width x16, ASPM ..." and
# "LnkSta:\tSpeed 16GT/s (downgraded), Width x16 (ok)"; the note is " (ok)", " (downgraded)" or
# " (strange)" on endpoints and upstream ports, absent on root and downstream ports and before
# pciutils 3.6 (which ends the line in a comma); an unknown speed code prints "unknown".
_SPEED = r"(?:unknown|(?:2\.5|5|8|16|32|64|128)GT/s)"
_NOTE = r"(?:\s\((?:ok|downgraded|strange|overdriven)\))?"
_LINK_RE = _lazy_re.compile(r"(?:Port #\d+,\s*)?Speed (?P<speed>" + _SPEED + r")(?:\s*\((?P<snote>[a-z]+)\))?,"
                            r"\s*Width x(?P<width>\d+)(?:\s*\((?P<wnote>[a-z]+)\))?(?:,.*)?\Z")
_LNKSTA_RE = _lazy_re.compile(r"Speed " + _SPEED + _NOTE + r", Width x\d+" + _NOTE +
                              r"(?:,(?: [A-Za-z]+[+-])*)?\Z")     # < 3.6: ", TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-"
_LNKCAP_RE = _lazy_re.compile(r"Port #\d+, Speed " + _SPEED + r", Width x\d+, ASPM .+\Z")
_ACS_LINE_RE = _lazy_re.compile(r"SrcValid[+-] TransBlk[+-] ReqRedir[+-] CmpltRedir[+-] UpstreamFwd[+-] EgressCtrl[+-] "
                                r"DirectTrans[+-]\Z")
_HEXDUMP_RE = _lazy_re.compile(r"^[0-9a-f]{2,3}:(?: [0-9a-f]{2})+\s*\Z")
_OWN_MESSAGE = ("lspci: ", "pcilib: ", "WARNING: ")
_CAP_RE = _lazy_re.compile(r"^\s*Capabilities:\s+\[(?P<off>[0-9a-fA-F]+)(?:\s+v\d+)?\]\s+(?P<name>.*)\Z")
_BUS_RE = _lazy_re.compile(r"Bus:\s+primary=(?P<pri>[0-9a-fA-F]+),\s+secondary=(?P<sec>[0-9a-fA-F]+),"
                           r"\s+subordinate=(?P<sub>[0-9a-fA-F]+)")
_PORT_RE = _lazy_re.compile(r"Express \(v\d\) (?P<type>Root Port|Downstream Port|Upstream Port|Endpoint|"
                            r"Legacy Endpoint|Root Complex Integrated Endpoint|Root Complex Event Collector|"
                            r"PCI-Express to PCI/PCI-X Bridge|"
                            r"PCI/PCI-X to PCI-Express Bridge)")


def flags_to_word(flags):
    """ACSCtl flags {name: bool} -> the 16-bit control word (bits 0-6)."""
    return sum(1 << bit for bit, name in enumerate(ACS_BITS) if flags.get(name))


def word_to_flags(word):
    return dict((name, bool(word & (1 << bit))) for bit, name in enumerate(ACS_BITS))


def parse_lspci(text, source="lspci output"):
    """Parse ``lspci [-D] [-nn] -vvv`` into {bdf: device dict}, in print order.

    device: bdf, class, class_id, description, vendor_id, device_id, numa_node,
    port_type, bus (secondary, subordinate) for bridges, acs (None without the
    capability, else {offset, cap {flag: bool}, ctl {flag: bool}, ctl_word}),
    access_denied (lspci ran without root: capabilities not shown)."""
    devices = {}
    cur = None
    for number, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        if not line[0].isspace():
            if line.startswith(_OWN_MESSAGE) or _HEXDUMP_RE.match(line):
                continue      # lspci's own messages (2>&1 captures) and -x hex dumps
            match = _HEADER_RE.match(line)
            try:
                bdf = normalize_bdf(match.group("bdf")) if match else None
            except ValueError:
                bdf = None        # device above 1f / function above 7: not a function header
            if bdf is None:
                if not devices and not any(_HEADER_RE.match(ln) for ln in (text or "").splitlines()):
                    break         # no function header at all: the error below names the first line
                raise ValueError("%s line %d '%s': not a PCI function header ('[DDDD:]BB:DD.F class: name'); "
                                 "lspci prints nothing else at column 0" % (source, number, line.strip()[:80]))
            cur = {"bdf": bdf, "class": match.group("cls").strip(),
                   "class_id": (match.group("clsid") or "").lower() or None,
                   "description": match.group("desc").strip(),
                   "vendor_id": (match.group("vendor") or "").lower() or None,
                   "device_id": (match.group("device") or "").lower() or None,
                   "numa_node": None, "port_type": None, "bus": None, "acs": None,
                   "access_denied": False, "link": None}
            devices[cur["bdf"]] = cur
            continue
        if cur is None:
            if any(_HEADER_RE.match(ln) for ln in (text or "").splitlines()):
                raise ValueError("%s line %d '%s': indented line before the first PCI function header"
                                 % (source, number, line.strip()[:80]))
            continue
        stripped = line.strip()
        if stripped.startswith("NUMA node:"):
            try:
                cur["numa_node"] = int(stripped.split(":", 1)[1])
            except ValueError:
                pass
        elif stripped.startswith("Bus:"):
            match = _BUS_RE.search(stripped)
            if match:
                cur["bus"] = (int(match.group("sec"), 16), int(match.group("sub"), 16))
        elif stripped.startswith("Capabilities:"):
            if "<access denied>" in stripped:
                cur["access_denied"] = True
                continue
            match = _CAP_RE.match(line)
            if match:
                port = _PORT_RE.search(match.group("name"))
                if port:
                    cur["port_type"] = port.group("type")
                if match.group("name").startswith("Access Control Services"):
                    cur["acs"] = {"offset": int(match.group("off"), 16), "cap": None, "ctl": None,
                                  "ctl_word": None}
        elif stripped.startswith(("LnkCap:", "LnkSta:")):
            _link_line(cur, stripped, source)
        elif stripped.startswith(("ACSCap:", "ACSCtl:")) and cur["acs"] is not None:
            flags = stripped.split(":", 1)[1].strip()
            if not _ACS_LINE_RE.match(flags):
                raise ValueError("%s line %d '%s' of %s: not the seven ACS flags ls-ecaps.c prints (SrcValid+/- ... "
                                 "DirectTrans+/-)" % (source, number, stripped[:100], cur["bdf"]))
            if stripped.startswith("ACSCap:"):
                cur["acs"]["cap"] = dict((n, v == "+") for n, v in _FLAG_RE.findall(flags))
                continue
            ctl = dict((n, v == "+") for n, v in _FLAG_RE.findall(flags))
            cur["acs"]["ctl"] = ctl
            cur["acs"]["ctl_word"] = flags_to_word(ctl)
    if not devices:
        first = [(n, ln) for n, ln in enumerate((text or "").splitlines(), 1) if ln.strip()]
        if first:
            raise ValueError("%s line %d '%s': no PCI function header ('BDF class: description') in the "
                             "text: not 'lspci -vvv' output" % (source, first[0][0], first[0][1].strip()[:80]))
        raise ValueError("%s: empty, no PCI function in it (expected 'lspci -vvv' output)" % source)
    return devices


def _speed(text):
    return None if text == "unknown" else float(text[:-4])


def _link_line(device, stripped, source):
    """One LnkCap or LnkSta line into device["link"]: cap_speed/cap_width (GT/s, lanes),
    speed/width (what it trained to), the notes lspci printed, and ``downgraded``
    (lspci's own note, else the comparison with LnkCap)."""
    key, _sep, rest = stripped.partition(":")
    rest = rest.strip()
    match = _LINK_RE.match(rest)
    layout = _LNKCAP_RE if key == "LnkCap" else _LNKSTA_RE
    if not match or not layout.match(rest):
        raise ValueError("%s: %s line %r of %s: no 'Speed NGT/s, Width xN'" % (source, key, stripped[:100], device["bdf"]))
    link = device["link"] = device["link"] or {"cap_speed": None, "cap_width": None, "speed": None, "width": None,
                                               "speed_note": None, "width_note": None, "downgraded": None}
    notes = (match.group("snote"), match.group("wnote"))
    if key == "LnkSta" and set(notes) & {"ok", "strange"} and (None in notes or "overdriven" in notes):
        # 3.6-3.7 print a note after both values, 3.8+ never print (ok)/(strange)
        raise ValueError("%s: %s line %r of %s: notes %s mix pciutils layouts (3.6-3.7 note both values, 3.8+ "
                         "never print 'ok')" % (source, key, stripped[:100], device["bdf"], list(notes)))
    speed, width = _speed(match.group("speed")), int(match.group("width"))
    if key == "LnkCap":
        link["cap_speed"], link["cap_width"] = speed, width
    else:
        link["speed"], link["width"] = speed, width
        link["speed_note"], link["width_note"] = match.group("snote"), match.group("wnote")
    if "downgraded" in (link["speed_note"], link["width_note"]):
        link["downgraded"] = True
    elif None not in (link["cap_speed"], link["speed"], link["cap_width"], link["width"]):
        link["downgraded"] = link["speed"] < link["cap_speed"] or link["width"] < link["cap_width"]


def is_bridge(device):
    return device["bus"] is not None or device["port_type"] in ("Root Port", "Downstream Port", "Upstream Port") \
        or device["class"] in ("PCI bridge", "Host bridge")


def is_gpu(device):
    return device["class"] in ("3D controller", "VGA compatible controller") and (
        device["vendor_id"] == "10de" or "NVIDIA" in device["description"])


def is_rdma_nic(device):
    return device["class"] in ("Ethernet controller", "Infiniband controller", "Network controller") and (
        device["vendor_id"] == "15b3" or "Mellanox" in device["description"] or "ConnectX" in device["description"])


# --------------------------------------------------------------------------------------
# upstream path
# --------------------------------------------------------------------------------------

def sysfs_chain(bdf):
    """BDFs from the root port down to ``bdf`` from the sysfs device path, or None."""
    link = sysfs_path("bus", "pci", "devices", bdf)
    if not os.path.exists(link):
        return None
    parts = [p for p in os.path.realpath(link).split(os.sep) if is_bdf(p)]
    return parts if parts and parts[-1] == bdf else None


def upstream_bridges(bdf, devices, chain=None):
    """Bridges above ``bdf``, nearest first.

    ``chain`` (from ``sysfs_chain``) wins when it holds bridges; else the lspci bus
    ranges are walked: the parent of a function on bus B is the bridge whose secondary
    bus is B in the same domain."""
    if chain and len(chain) > 1:
        return list(reversed(chain[:-1]))
    path = []
    seen = set()
    current = bdf
    while True:
        domain, bus = current.split(":")[0], int(current.split(":")[1], 16)
        parent = None
        for other in devices.values():
            if other["bus"] and other["bdf"].split(":")[0] == domain and other["bus"][0] == bus \
                    and other["bdf"] != current:
                parent = other["bdf"]
                break
        if parent is None or parent in seen:
            return path
        seen.add(parent)
        path.append(parent)
        current = parent


def path_between(gpu_up, nic_up):
    """Bridges on the P2P path between two endpoints, given their upstream lists
    (nearest first): those below the lowest common bridge, plus that bridge (the
    switch where the traffic turns).  Without a common bridge: all of both."""
    common = [b for b in gpu_up if b in nic_up]
    if not common:
        return gpu_up + [b for b in nic_up if b not in gpu_up]
    turn = common[0]
    below = gpu_up[:gpu_up.index(turn)] + nic_up[:nic_up.index(turn)]
    return below + [turn]


# --------------------------------------------------------------------------------------
# audit and plan (pure)
# --------------------------------------------------------------------------------------

def bridge_state(device, mask):
    """Audit entry of one bridge."""
    acs = device["acs"]
    entry = {"bdf": device["bdf"], "port_type": device["port_type"], "acs": acs is not None}
    if device["access_denied"]:
        entry.update(acs=None, redirect=None, ctl=None, ctl_word=None)
        return entry
    if acs is None or acs["ctl"] is None:
        entry.update(redirect=False, ctl=None, ctl_word=None)
        return entry
    entry.update(ctl=acs["ctl"], ctl_word="%04x" % acs["ctl_word"], redirect=bool(acs["ctl_word"] & mask))
    return entry


def audit(devices, endpoints, chains, mask):
    """Audit bridges above ``endpoints``; returns (bridges {bdf: entry}, endpoints {bdf: [bridge bdfs]}).

    ``chains``: {bdf: sysfs chain or None}."""
    missing = [bdf for bdf in endpoints if bdf not in devices]
    if missing:
        raise ToolError("devices: PCI function(s) %s not found in lspci output (no such device on this "
                        "host)" % ", ".join(missing))
    ups = dict((bdf, upstream_bridges(bdf, devices, chains.get(bdf))) for bdf in endpoints)
    bridges = {}
    for bdf in endpoints:
        for bridge in ups[bdf]:
            if bridge in devices and bridge not in bridges:
                bridges[bridge] = bridge_state(devices[bridge], mask)
    return bridges, ups


def pair_paths(devices, ups):
    """For each GPU among the audited endpoints, its path to every audited NIC."""
    gpus = [b for b in ups if is_gpu(devices[b])]
    nics = [b for b in ups if is_rdma_nic(devices[b])]
    return dict((gpu, dict((nic, path_between(ups[gpu], ups[nic])) for nic in nics)) for gpu in gpus)


SWITCH_PORTS = ("Upstream Port", "Downstream Port")


def is_switch_port(device):
    """A PCIe switch port (upstream or downstream), as its Express capability says."""
    return device is not None and device.get("port_type") in SWITCH_PORTS


def rail_paths(devices, ups):
    """For each GPU among the audited endpoints, the path to its own NIC(s) only: the NICs
    that meet it at the nearest PCIe switch port both sit below. A GPU and a NIC that meet
    only at a root port, the host bridge or not at all (another rail, another socket) are
    left out, and so are the NICs of the GPU's switch farther up than its nearest one."""
    gpus = [b for b in ups if is_gpu(devices[b])]
    nics = [b for b in ups if is_rdma_nic(devices[b])]
    out = {}
    for gpu in gpus:
        best, own = None, {}
        for nic in nics:
            common = [b for b in ups[gpu] if b in ups[nic]]
            turn = common[0] if common else None
            if turn is None or not is_switch_port(devices.get(turn)):
                continue
            depth = ups[gpu].index(turn)
            if best is None or depth < best:
                best, own = depth, {}
            if depth == best:
                own[nic] = path_between(ups[gpu], ups[nic])
        if own:
            out[gpu] = own
    return out


def write_targets(bridges, rails, devices=None):
    """Bridges whose ACS may be changed: the switch ports on the path between a GPU and its
    own NIC below a shared switch (``rails``, from ``rail_paths``), nothing else. A root
    port is never a target, nor a bridge that is not known to be a switch port, whatever
    endpoints were given; with no such pair there is no target at all."""
    on_paths = set(b for nics in rails.values() for path in nics.values() for b in path)
    return dict((b, e) for b, e in bridges.items()
                if b in on_paths and e.get("port_type") != "Root Port"
                and (devices is None or is_switch_port(devices.get(b))))


def setpci_argv(setpci, bdf, value, mask):
    return [setpci, "-s", bdf, "ECAP_ACS+0x6.w=%04x:%04x" % (value, mask)]


def plan(bridges, mask, setpci="setpci"):
    """setpci calls for the bridges whose control word still has bits of ``mask`` set.

    Returns a list of {bdf, before, after, argv}; empty when converged."""
    steps = []
    for bdf in sorted(bridges):
        entry = bridges[bdf]
        if entry["acs"] is None:
            raise ToolError("ACS state of %s unknown: lspci printed '<access denied>' (run as root)" % bdf)
        if entry["ctl_word"] is None:
            continue
        word = int(entry["ctl_word"], 16)
        if word & mask:
            new = word & ~mask
            steps.append({"bdf": bdf, "before": "%04x" % word, "after": "%04x" % new,
                          "argv": setpci_argv(setpci, bdf, new & mask, mask)})
    return steps


# --------------------------------------------------------------------------------------
# reader and apply
# --------------------------------------------------------------------------------------

def read_lspci(module, lspci):
    """The only reader of device state: ``lspci -D -nn -vvv`` (root for ACS lines)."""
    rc, out, err = run_tool(module, [lspci, "-D", "-nn", "-vvv"])
    return out


def apply_step(module, step):
    """Run one setpci call; ToolError naming the bridge on failure."""
    try:
        run_tool(module, step["argv"])
    except ToolError as exc:
        exc.msg = "setpci failed on %s: %s" % (step["bdf"], exc.msg)
        raise


# --------------------------------------------------------------------------------------
# the pcie_acs resource (the engine in _resource runs it)
# --------------------------------------------------------------------------------------

def predict_bridges(bridges, steps, mask):
    """Bridges after ``steps`` (check mode): the planned control words."""
    predicted = dict(bridges)
    for step in steps:
        word = int(step["after"], 16)
        predicted[step["bdf"]] = dict(bridges[step["bdf"]], ctl_word=step["after"], redirect=bool(word & mask),
                                      ctl=word_to_flags(word))
    return predicted


class PcieAcsResource(Resource):
    """``pcie_acs`` on the resource engine: one object, the bridges above the endpoints.

    want: endpoints (None: every GPU and RDMA NIC), mask, what to do (``audited`` plans
    nothing); have: the lspci devices and the audit; commands: setpci steps. ``endpoints``,
    ``pairs``, ``changes`` and ``redirect_enabled`` (of the state last read or predicted)
    are the module's other result keys."""

    name = "pcie_acs"
    multi = False

    def __init__(self, module):
        super(PcieAcsResource, self).__init__(module)
        self.extras = {"changes": []}
        self.planned = self.warned = False

    def normalize(self, entry, field):
        bad = [bdf for bdf in entry["devices"] or [] if not is_bdf(bdf)]
        if bad:
            raise ValidationError("devices: %s not PCI addresses ([domain:]bus:dev.fn, e.g. 0000:1a:00.0)"
                                  % ", ".join(repr(b) for b in bad))
        endpoints = [normalize_bdf(b) for b in entry["devices"] or []]
        twice = [b for i, b in enumerate(endpoints) if b in endpoints[:i]]
        if twice:
            raise ValidationError("devices: %s given twice (%s); give each PCI function once"
                                  % (", ".join(sorted(set(twice))), ", ".join(repr(b) for b in entry["devices"])))
        return {"endpoints": endpoints or None,
                "mask": CLEAR_MASKS[entry["clear"]], "action": entry["state"]}

    def _audit(self, devices, want, use_sysfs):
        if want["endpoints"]:
            endpoints = want["endpoints"]
        else:
            endpoints = [b for b, d in devices.items() if is_gpu(d) or is_rdma_nic(d)]
        chains = dict((b, sysfs_chain(b) if use_sysfs else None) for b in endpoints)
        bridges, ups = audit(devices, endpoints, chains, want["mask"])
        pairs = pair_paths(devices, ups)
        rails = rail_paths(devices, ups)
        self.extras.update(endpoints=ups, pairs=pairs, rails=rails,
                           redirect_enabled=sorted(b for b, e in bridges.items() if e["redirect"]))
        return {"bridges": bridges, "pairs": pairs, "rails": rails, "devices": devices}

    def read(self, key, want):
        have = self._audit(parse_lspci(read_lspci(self.module, find_tool(self.module, "lspci"))), want, True)
        if not self.warned:
            self.warned = True
            denied = sorted(b for b, e in have["bridges"].items() if e["acs"] is None)
            if denied:
                self.module.warn("lspci printed '<access denied>' for %s: run as root (become) to see ACS"
                                 % ", ".join(denied))
        return have

    def parse(self, text):
        params = self.module.params
        want = self.normalize(dict(devices=params["devices"], clear=params["clear"], state="parsed"), "config")
        try:
            have = self._audit(parse_lspci(text, "running_config"), want, False)
        except ToolError as exc:
            raise ValidationError(exc.msg)
        self.extras.update(before=have["bridges"], after=have["bridges"], commands=[])
        return have["bridges"]

    def export(self, key, have):
        return have["bridges"]

    def plan(self, key, want, have, state):
        if want["action"] != "redirect_disabled":
            return []
        denied = sorted(b for b, e in have["bridges"].items() if e["acs"] is None)
        if denied:
            raise ValidationError("ACS state of %s unknown: lspci printed '<access denied>' (run as root); "
                                  "nothing is written" % ", ".join(denied))
        try:
            steps = plan(write_targets(have["bridges"], have["rails"], have["devices"]), want["mask"],
                         find_tool(self.module, "setpci"))
        except ToolError as exc:
            raise ValidationError(exc.msg)
        if not self.planned:
            self.planned = True
            if not have["rails"]:
                self.module.warn("pcie_acs: no GPU and NIC of the same rail (below one PCIe switch) among %s: "
                                 "no ACS control word is written (root ports and paths between rails keep "
                                 "their isolation)" % (", ".join(sorted(self.extras.get("endpoints") or []))
                                                       or "the endpoints"))
            self.extras["changes"] = [dict(bdf=st["bdf"], before=st["before"], after=st["after"]) for st in steps]
        return steps

    def predict(self, key, want, have, state):
        predicted = predict_bridges(have["bridges"], self.plan(key, want, have, state), want["mask"])
        self.extras["redirect_enabled"] = sorted(b for b, e in predicted.items() if e["redirect"])
        return dict(have, bridges=predicted)

    def apply(self, key, command):
        apply_step(self.module, command)

    def render(self, command):
        return " ".join(command["argv"])

    def extra_result(self):
        return dict(self.extras)


# --------------------------------------------------------------------------------------
# GPUDirect RDMA readiness (pure)
# --------------------------------------------------------------------------------------

RELATION_ORDER = ("X", "PIX", "PXB", "PHB", "NODE", "SYS")
PEER_MEMORY_OK = ("nvidia_peermem", "nv_peer_mem", "dma_buf")


def gdr_verdict(relation, gpu_numa=None, nic_numa=None, acs_path=None, peer_memory=None, gdr_level="PXB"):
    """Whether GPUDirect RDMA between a GPU and its nearest NIC is expected to work.

    relation: nvidia-smi topo -m code of the GPU/NIC pair (X PIX PXB PHB NODE SYS; NV# is
    a GPU-GPU link and is refused).  gpu_numa/nic_numa: NUMA nodes (None or -1 unknown).
    acs_path: audit entries (``bridge_state``) of the bridges on the path.
    peer_memory: nvidia_peermem / nv_peer_mem / dma_buf when available, else None.
    gdr_level: the farthest relation NCCL uses GDR at (NCCL_NET_GDR_LEVEL; NCCL's
    default is PXB).  Returns {expected_to_work, reasons}; reasons list every blocker."""
    reasons = []
    code = (relation or "").strip()
    if code.upper().startswith("NV"):
        reasons.append("relation %s is an NVLink between GPUs, not a GPU-NIC PCIe path" % code)
    elif code not in RELATION_ORDER:
        reasons.append("unknown GPU-NIC relation %r" % relation)
    elif gdr_level in RELATION_ORDER and RELATION_ORDER.index(code) > RELATION_ORDER.index(gdr_level):
        where = {"PHB": "through the CPU's PCIe host bridge",
                 "NODE": "across host bridges of one NUMA node",
                 "SYS": "across the inter-socket link"}.get(code, code)
        reasons.append("GPU and NIC are %s apart (%s), farther than the GDR level %s: NCCL stages "
                       "through host memory" % (code, where, gdr_level))
    known = [n for n in (gpu_numa, nic_numa) if n is not None and n >= 0]
    if len(known) == 2 and gpu_numa != nic_numa:
        reasons.append("NIC on NUMA node %d, GPU on NUMA node %d" % (nic_numa, gpu_numa))
    for entry in acs_path or []:
        if entry.get("acs") is None:
            reasons.append("ACS state of bridge %s unknown (lspci without root)" % entry["bdf"])
        elif entry.get("redirect"):
            reasons.append("ACS redirect still enabled on bridge %s (ACSCtl %s)" % (entry["bdf"], entry.get("ctl_word")))
    if peer_memory not in PEER_MEMORY_OK:
        reasons.append("no peer memory: nvidia_peermem not loaded and no dma-buf support (got %r)" % (peer_memory,))
    return {"expected_to_work": not reasons, "reasons": reasons}
