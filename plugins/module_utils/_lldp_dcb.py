# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read, parse, compare and apply IEEE DCBX TLVs (PFC, ETS-CFG, ETS-REC, APP) with lldptool.

Layout rules (samples/lldptool.txt, intel/openlldp printing code):
  * ``-t [-n] -i IF [-V TLV]`` prints TLV name lines (ending in ``TLV``) and value lines
    indented by a TAB (doc copies use spaces): a TLV not transmitted / a port without DCB
    prints nothing with rc 0.
  * ``-c ARG`` prints ``ARG=value``; ask ONE argument per call (two arguments trip a
    length bug: ``enabled=80`` / ``illing0=``). PFC ``enabled`` is a decimal bitmask cut to
    2 characters (255 prints ``25``), so the TLV view (``PFC enabled: 3 `` or ``none``)
    is preferred and the bitmask only used when it is unambiguous.
  * errors: rc 1 (255 when lldpad is down) and a stray trailing byte (``Device not capable b``).

``read_state`` is the only I/O seam (it takes a ``run(argv) -> (rc, out, err)``);
``parse_tlvs`` serves gathered and parsed; ``plan_commands`` is the pure compare;
``LldpDcbResource`` plugs them into the resource engine.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils._common import (
    ToolError, check_name, find_tool, run_tool, sysfs_path,
)
from ansible_collections.rdma.fabric.plugins.module_utils._mlnx_qos import (
    TOOL as MLNX_QOS, interface_exists, read_state as read_mlnx_qos,
)
from ansible_collections.rdma.fabric.plugins.module_utils._resource import Resource
from ansible_collections.rdma.fabric.plugins.module_utils import _qos_validate as V

TOOL = "lldptool"
TLV_NAMES = {
    "IEEE 8021QAZ PFC TLV": "pfc",
    "IEEE 8021QAZ ETS Configuration TLV": "ets_cfg",
    "IEEE 8021QAZ ETS Recommendation TLV": "ets_rec",
    "IEEE 8021QAZ APP TLV": "app",
}
TLV_IDS = {"pfc": "PFC", "ets_cfg": "ETS-CFG", "ets_rec": "ETS-REC", "app": "APP"}
ADMIN_CHOICES = ("rx", "tx", "rxtx", "disabled")
SELECTORS = {1: "ethertype", 2: "tcp/sctp", 3: "udp/dccp", 4: "tcp/sctp/udp/dccp", 5: "dscp"}


def _yes(text):
    text = (text or "").strip().lower()
    if text in ("yes", "true", "1"):
        return True
    if text in ("no", "false", "0"):
        return False
    return None


def _clean(text):
    """Drop the stray bytes lldptool leaves after an error word and backspaces."""
    return (text or "").replace("\b", "").strip()


def parse_tlvs(text):
    """TLV dump (``lldptool -t [-n] -i IF``) -> {pfc, ets_cfg, ets_rec, app} (None when absent)."""
    blocks, current = {}, None
    for raw in (text or "").splitlines():
        line = _clean(raw)
        if not line:
            continue
        if line.endswith(" TLV") or line.endswith(" LTV"):
            current = TLV_NAMES.get(line)
            if current:
                blocks[current] = []
            continue
        if current:
            blocks[current].append(line)
    result = dict((key, None) for key in TLV_IDS)
    for key, lines in blocks.items():
        if key == "app":
            result["app"] = _parse_app(lines)
            continue
        fields = {}
        for line in lines:
            if ":" in line:
                name, value = line.split(":", 1)
                fields[name.strip().lower()] = value.strip()
        entry = {}
        if key == "pfc":
            enabled = fields.get("pfc enabled", "")
            entry["willing"] = _yes(fields.get("willing"))
            entry["enabled"] = [] if enabled in ("none", "") else sorted(int(p) for p in enabled.split())
        else:
            if key == "ets_cfg":
                entry["willing"] = _yes(fields.get("willing"))
            prio_map = dict(tok.split(":") for tok in fields.get("prio_map", "").split() if ":" in tok)
            tsa_map = dict(tok.split(":") for tok in fields.get("tsa_map", "").split() if ":" in tok)
            entry["up2tc"] = [int(prio_map[str(p)]) for p in range(8)] if len(prio_map) == 8 else None
            entry["tsa"] = [tsa_map[str(t)] for t in range(8)] if len(tsa_map) == 8 else None
            shares = [int(tok.rstrip("%")) for tok in fields.get("tc bandwidth", "").split()]
            entry["tcbw"] = shares if len(shares) == 8 else None
        result[key] = entry
    return result


def _parse_app(lines):
    apps = []
    for line in lines:
        match = re.match(r"^App#\s*\d+\s+Prio\s+(\d+)\s+Sel\s+(\d+)\s+P-ID\s+.*?:\s*(\S+)$", line)
        if match:
            apps.append({"priority": int(match.group(1)), "selector": int(match.group(2)),
                         "protocol": int(match.group(3), 0)})
            continue
        match = re.match(r"^Prio:\s*(\d+)\s+dscp:\s*([\d,\s]*)$", line)
        if match:
            for tok in match.group(2).split(","):
                if tok.strip():
                    apps.append({"priority": int(match.group(1)), "selector": 5, "protocol": int(tok)})
    return sorted(apps, key=lambda a: (a["selector"], a["protocol"], a["priority"]))


def parse_arg(text, arg):
    """``ARG=value`` (get-lldp, ``-c``) -> value text; None when the line is missing."""
    for line in (text or "").splitlines():
        line = _clean(line)
        if line.startswith(arg + "="):
            return line[len(arg) + 1:].strip()
    return None


def pfc_from_bitmask(text, tlv_enabled=None):
    """``-c enabled`` decimal bitmask -> priorities. lldptool cuts the value to 2
    characters, so a 2-character value may be the start of a 3-digit mask: then the TLV
    view (when transmitted) decides, else None (unknown)."""
    if text is None or text == "":
        return tlv_enabled
    if not text.isdigit():
        return tlv_enabled
    mask = int(text)
    candidates = [mask] + ([mask * 10 + d for d in range(10) if mask * 10 + d <= 255] if len(text) == 2 else [])
    if tlv_enabled is not None:
        tlv_mask = sum(1 << p for p in tlv_enabled)
        if tlv_mask in candidates:
            return tlv_enabled
    if len(candidates) > 1:
        return None
    return [p for p in range(8) if mask >> p & 1]


# --------------------------------------------------------------------------- reader
def _call(run, argv, allow_empty=True):
    rc, out, err = run(argv)
    if rc != 0:
        words = _clean(err) or _clean(out)
        words = re.sub(r"\s+\S$", "", words)    # the stray byte after the message
        raise ToolError("%s failed (rc=%s): %s" % (" ".join(argv), rc, words or "(no output)"),
                        argv=argv, rc=rc, stdout=out, stderr=err)
    return out or ""


def read_state(run, tool, interface, tlvs, neighbor=False):
    """The only I/O seam. ``run(argv)`` runs one command; ``tlvs`` the TLV keys to read."""
    have = {"admin_status": parse_arg(_call(run, [tool, "get-lldp", "-i", interface, "adminStatus"]), "adminStatus")}
    dump = parse_tlvs(_call(run, [tool, "-t", "-i", interface]))
    for key in tlvs:
        tlv = TLV_IDS[key]
        entry = dict(dump[key] or {}) if key != "app" else {}
        entry["enable_tx"] = _yes(parse_arg(_call(run, [tool, "-t", "-i", interface, "-V", tlv, "-c", "enableTx"]),
                                            "enableTx"))
        if key in ("pfc", "ets_cfg"):
            willing = parse_arg(_call(run, [tool, "-t", "-i", interface, "-V", tlv, "-c", "willing"]), "willing")
            entry["willing"] = _yes(willing) if willing else entry.get("willing")
        if key == "pfc":
            mask = parse_arg(_call(run, [tool, "-t", "-i", interface, "-V", "PFC", "-c", "enabled"]), "enabled")
            entry["enabled"] = pfc_from_bitmask(mask, entry.get("enabled"))
        if key == "app":
            have["app"] = dump["app"] or []
            have["app_enable_tx"] = entry["enable_tx"]
            continue
        for field in ("up2tc", "tsa", "tcbw"):
            if key != "pfc":
                entry.setdefault(field, None)
        have[key] = entry
    if neighbor:
        have["neighbor"] = parse_tlvs(_call(run, [tool, "-t", "-n", "-i", interface]))
    return have


def neighbor_mismatch(have):
    """Where the switch's PFC / APP TLVs disagree with ours."""
    out = []
    peer = have.get("neighbor") or {}
    ours_pfc = (have.get("pfc") or {}).get("enabled")
    theirs_pfc = (peer.get("pfc") or {}).get("enabled")
    if peer.get("pfc") is None:
        out.append("neighbor sends no PFC TLV")
    elif ours_pfc is not None and theirs_pfc != ours_pfc:
        out.append("PFC enabled priorities: local %s, neighbor %s" % (ours_pfc, theirs_pfc))
    ours_app = set((a["selector"], a["protocol"], a["priority"]) for a in have.get("app") or [])
    theirs_app = set((a["selector"], a["protocol"], a["priority"]) for a in peer.get("app") or [])
    if ours_app and peer.get("app") is None:
        out.append("neighbor sends no APP TLV")
    elif ours_app != theirs_app and peer.get("app") is not None:
        for sel, proto, prio in sorted(ours_app - theirs_app):
            out.append("APP %s %d -> priority %d: local only" % (SELECTORS.get(sel, sel), proto, prio))
        for sel, proto, prio in sorted(theirs_app - ours_app):
            out.append("APP %s %d -> priority %d: neighbor only" % (SELECTORS.get(sel, sel), proto, prio))
    return out


# --------------------------------------------------------------------------- want
def normalize_want(config, prefix="config"):
    config = config or {}
    want = {"admin_status": config.get("admin_status")}
    pfc = config.get("pfc")
    if pfc is not None:
        want["pfc"] = {"willing": pfc.get("willing"), "enable_tx": pfc.get("enable_tx"),
                       "enabled": V.priority_list(prefix + ".pfc.enabled", pfc.get("enabled"))}
    for key in ("ets_cfg", "ets_rec"):
        ets = config.get(key)
        if ets is None:
            continue
        field = prefix + "." + key
        entry = {"enable_tx": ets.get("enable_tx"),
                 "up2tc": V.list_of_8(field + ".up2tc", ets.get("up2tc"),
                                      lambda f, v: V.int_in_range(f, v, 0, 7, "TC")),
                 "tsa": V.list_of_8(field + ".tsa", ets.get("tsa"), _tsa_check),
                 "tcbw": V.list_of_8(field + ".tcbw", ets.get("tcbw"),
                                     lambda f, v: V.int_in_range(f, v, 0, 100, "percentage"))}
        if key == "ets_cfg":
            entry["willing"] = ets.get("willing")
        if entry["tsa"] is not None and entry["tcbw"] is not None:
            V.ets_bandwidth(field + ".tsa", entry["tsa"], field + ".tcbw", entry["tcbw"])
        elif entry["tcbw"] is not None and sum(entry["tcbw"]) != 100:
            raise V.ValidationError("%s.tcbw=%s: shares sum to %d, must be 100"
                                    % (field, entry["tcbw"], sum(entry["tcbw"])))
        want[key] = entry
    if config.get("app") is not None:
        apps = []
        for index, app in enumerate(config["app"]):
            field = "%s.app[%d]" % (prefix, index)
            sel = V.int_in_range(field + ".selector", app.get("selector"), 1, 5, "selector")
            high = 63 if sel == 5 else 65535
            apps.append({"priority": V.priority(field + ".priority", app.get("priority")), "selector": sel,
                         "protocol": V.int_in_range(field + ".protocol", app.get("protocol"), 0, high, "protocol")})
        keys = [(a["selector"], a["protocol"]) for a in apps]
        for index, key in enumerate(keys):
            if key in keys[:index]:
                raise V.ValidationError(
                    "%s.app[%d]: selector %d protocol %d is given twice (priorities %d and %d); an APP "
                    "entry maps one protocol to one priority"
                    % (prefix, index, key[0], key[1], apps[keys.index(key)]["priority"], apps[index]["priority"]))
        want["app"] = sorted(apps, key=lambda a: (a["selector"], a["protocol"], a["priority"]))
    want["app_enable_tx"] = config.get("app_enable_tx")
    return want


def _tsa_check(field, value):
    if value not in ("ets", "strict", "vendor"):
        raise V.ValidationError("%s=%r: must be one of ets, strict, vendor" % (field, value))
    return value


# --------------------------------------------------------------------------- compare
def _yn(flag):
    return "yes" if flag else "no"


def plan_commands(want, have, state, interface):
    """Pure compare -> argv lists (argv[0] 'lldptool'), one ``-T`` per TLV holding every
    argument that differs. APP entries are added / (replaced only) deleted one per call,
    adds before deletes so the APP TLV never goes empty midway."""
    have = have or {}
    base = [TOOL]
    cmds = []
    if want.get("admin_status") is not None and want["admin_status"] != have.get("admin_status"):
        cmds.append(base + ["set-lldp", "-i", interface, "adminStatus=%s" % want["admin_status"]])
    for key in ("pfc", "ets_cfg", "ets_rec"):
        if key not in want:
            continue
        spec, cur = want[key], have.get(key) or {}
        args = []
        if spec.get("willing") is not None and spec["willing"] != cur.get("willing"):
            args.append("willing=%s" % _yn(spec["willing"]))
        if key == "pfc":
            if spec["enabled"] is not None and spec["enabled"] != cur.get("enabled"):
                args.append("enabled=%s" % (",".join(str(p) for p in spec["enabled"]) or "none"))
        else:
            if spec["up2tc"] is not None and spec["up2tc"] != cur.get("up2tc"):
                args.append("up2tc=" + ",".join("%d:%d" % (p, tc) for p, tc in enumerate(spec["up2tc"])))
            if spec["tsa"] is not None and spec["tsa"] != cur.get("tsa"):
                args.append("tsa=" + ",".join("%d:%s" % (tc, t) for tc, t in enumerate(spec["tsa"])))
            if spec["tcbw"] is not None and spec["tcbw"] != cur.get("tcbw"):
                args.append("tcbw=" + ",".join(str(b) for b in spec["tcbw"]))
        if spec.get("enable_tx") is not None and spec["enable_tx"] != cur.get("enable_tx"):
            args.append("enableTx=%s" % _yn(spec["enable_tx"]))
        if args:
            cmds.append(base + ["-T", "-i", interface, "-V", TLV_IDS[key]] + args)
    if want.get("app") is not None:
        current = set((a["priority"], a["selector"], a["protocol"]) for a in have.get("app") or [])
        wanted = [(a["priority"], a["selector"], a["protocol"]) for a in want["app"]]
        for entry in wanted:
            if entry not in current:
                cmds.append(base + ["-T", "-i", interface, "-V", "APP", "app=%d,%d,%d" % entry])
        if state == "replaced":
            for entry in sorted(current - set(wanted)):
                cmds.append(base + ["-T", "-i", interface, "-V", "APP", "-d", "app=%d,%d,%d" % entry])
    if want.get("app_enable_tx") is not None and want["app_enable_tx"] != have.get("app_enable_tx"):
        cmds.append(base + ["-T", "-i", interface, "-V", "APP", "enableTx=%s" % _yn(want["app_enable_tx"])])
    return cmds


def tlvs_wanted(want):
    keys = [key for key in ("pfc", "ets_cfg", "ets_rec") if key in want]
    if want.get("app") is not None or want.get("app_enable_tx") is not None:
        keys.append("app")
    return keys


def to_result(have):
    """have as returned: drop the neighbor dump (gathered returns it separately)."""
    return dict((k, v) for k, v in (have or {}).items() if k != "neighbor")


def desired_state(want, have, state):
    """Pure: ``have`` with ``want`` laid over it (the check-mode prediction)."""
    result = dict((k, (dict(v) if isinstance(v, dict) else v)) for k, v in (have or {}).items())
    if want.get("admin_status") is not None:
        result["admin_status"] = want["admin_status"]
    for key in ("pfc", "ets_cfg", "ets_rec"):
        if key in want:
            entry = dict(result.get(key) or {})
            for field, value in want[key].items():
                if value is not None:
                    entry[field] = value
            result[key] = entry
    if want.get("app") is not None:
        current = [] if state == "replaced" else list(result.get("app") or [])
        for app in want["app"]:
            if app not in current:
                current.append(app)
        result["app"] = sorted(current, key=lambda a: (a["selector"], a["protocol"], a["priority"]))
    if want.get("app_enable_tx") is not None:
        result["app_enable_tx"] = want["app_enable_tx"]
    return result


def read_mlnx_dcbx(module, qos_tool, interface):
    """The DCBX mode ('os' | 'fw') through mlnx_qos's one reader."""
    return read_mlnx_qos(module, qos_tool, interface)["dcbx"]


# --------------------------------------------------------------------------- engine
class LldpDcbResource(Resource):
    """lldp_dcb on the engine: one object per interface. ``dcbx_check`` reads the DCBX
    mode with mlnx_qos only for an interface that has something to write."""

    name = "lldptool"
    key_field = "interface"

    def __init__(self, module, dcbx_check=True, switch_dcbx_to_os=False):
        super(LldpDcbResource, self).__init__(module)
        self.dcbx_check = dcbx_check
        self.switch_dcbx_to_os = switch_dcbx_to_os
        self.tools = {}

    def tool(self, name, required=True):
        if name not in self.tools:
            self.tools[name] = find_tool(self.module, name, required=required)
        return self.tools[name]

    def _run(self, argv):
        return run_tool(self.module, argv, check_rc=False)

    def check_key(self, field, value):
        return check_name(field, value)

    def normalize(self, entry, field):
        if self.state == "gathered":
            return None
        config = dict((k, v) for k, v in entry.items() if k != "interface")
        return normalize_want(config, field)

    def read(self, key, want):
        if not interface_exists(key):
            raise ToolError("no such network interface (%s has no entry for it)" % sysfs_path("class", "net"))
        tool = self.tool(TOOL)
        if want is None:
            have = read_state(self._run, tool, key, ["pfc", "ets_cfg", "ets_rec", "app"], neighbor=True)
            have["neighbor_mismatch"] = neighbor_mismatch(have)
            return have
        return read_state(self._run, tool, key, tlvs_wanted(want))

    def parse(self, text):
        dump = parse_tlvs(text)
        if all(value is None for value in dump.values()):
            raise ValueError("holds no IEEE DCBX TLV that lldptool -t prints (PFC, ETS, APP): %r"
                             % ((text or "")[:80],))
        return dump

    def export(self, key, have):
        out = to_result(have)
        if "neighbor" in (have or {}):
            out["neighbor"] = dict((k, have["neighbor"].get(k)) for k in ("pfc", "app"))
        return out

    def plan(self, key, want, have, state):
        commands = plan_commands(want, have, state, key)
        if commands and have is not None and self.dcbx_check:
            qos_tool = self.tool(MLNX_QOS, required=False)
            if not qos_tool:
                self.module.warn("mlnx_qos not found: DCBX mode of %s not checked" % key)
            elif read_mlnx_dcbx(self.module, qos_tool, key) == "fw":
                if not self.switch_dcbx_to_os:
                    raise V.ValidationError(
                        "%s: DCBX is firmware controlled (mlnx_qos: 'DCBX mode: Firmware controlled'), so "
                        "lldptool settings would do nothing; set switch_dcbx_to_os: true or run "
                        "mlnx_qos -i %s --dcbx os" % (key, key))
                commands.insert(0, [MLNX_QOS, "-i", key, "--dcbx", "os"])
        return commands

    def predict(self, key, want, have, state):
        return desired_state(want, have, state)

    def apply(self, key, command):
        argv = [self.tool(command[0])] + list(command[1:])
        _call(self._run, argv)

    def header(self, key):
        return "lldptool -i %s" % key
