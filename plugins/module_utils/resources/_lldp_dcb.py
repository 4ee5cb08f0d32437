# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lldp_dcb on the resource engine: the wanted IEEE DCBX TLVs (PFC, ETS-CFG, ETS-REC, APP) of
an interface normalised and checked, compared with what lldptool reports, and the
``lldptool -T`` / ``set-lldp`` calls that make them so, planned and applied.

How lldptool prints (the layouts of every openlldp release with the printing code they
follow, CEE / CIN DCBX, the cut ``-c`` bitmask) and the one reader of an interface's state
(``read_state``) are ``_lldptool``; this file writes: one ``-T`` per TLV holding every
argument that differs, APP entries added / deleted one per call.

* ``normalize_want``: the module's ``config`` -> want (``_qos_validate`` checks);
* ``plan_commands`` is the pure compare -> argv lists; ``desired_state`` the check-mode
  prediction; ``neighbor_mismatch`` where the switch's PFC / APP TLVs disagree with ours;
* ``LldpDcbResource`` plugs them into the resource engine (``_resource``), with the DCBX mode
  check through mlnx_qos (``_mlnx_qos``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import (
    ToolError, check_name, find_tool, run_tool, sysfs_path,
)
from ansible_collections.rdma.fabric.plugins.module_utils.parsers._lldptool import (
    TLV_IDS, TOOL, _call, parse_tlvs, read_state,
)
from ansible_collections.rdma.fabric.plugins.module_utils.resources._mlnx_qos import (
    TOOL as MLNX_QOS, interface_exists, read_state as read_mlnx_qos,
)
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import Resource
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _qos_validate as V

ADMIN_CHOICES = ("rx", "tx", "rxtx", "disabled")
SELECTORS = {1: "ethertype", 2: "tcp/sctp", 3: "udp/dccp", 4: "tcp/sctp/udp/dccp", 5: "dscp"}


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
            out["neighbor"] = dict((k, have["neighbor"].get(k)) for k in ("pfc", "app", "chassis_id", "port_id",
                                                                          "port_id_subtype", "system_name"))
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
