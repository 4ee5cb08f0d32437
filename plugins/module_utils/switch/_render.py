# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch OSes of the switch_qos area, one row each (``OSES``): how the lossless intent
(``areas/switch_qos.intent``) is rendered, what the platform refuses (checked here, before any
switch sees it) and how it is applied. Pure functions, no I/O.

- ``dell_sonic``: module arguments of the ``dellemc.enterprise_sonic`` resource modules
  (sonic_qos_maps, sonic_qos_wred, sonic_qos_scheduler, sonic_qos_pfc, sonic_qos_buffer,
  sonic_qos_interfaces, sonic_dcbx; never sonic_roce, which reboots the switch; sonic_qos_buffer's
  buffer init reboots it too: that step is marked ``reboots``). The modules
  document ranges they do not enforce (sonic_qos_wred sends a threshold of 0 as no threshold
  at all, and any max): the ranges of their DOCUMENTATION are enforced here.
- ``eos``: AVD structured config (``qos.map.dscp``, ``qos_profiles``, ``ethernet_interfaces``)
  that pyavd validates and renders to EOS CLI; applied with arista.eos.eos_config.
- ``sonic``: community SONiC CONFIG_DB JSON, checked against the constraints of sonic-yang-models
  (each check names the YANG module it comes from; the models are read, not copied).
- ``cumulus``: NVUE ``nv set ...`` lines (Cumulus Linux 5.x NVUE reference, QoS commands).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

# Names of what we create on the switch (never the OS's defaults, e.g. SONiC's AZURE maps)
MAP = "RDMA_FABRIC"
SCHEDULER = "RDMA_FABRIC"


def _wred_name(speed):
    return "RDMA_FABRIC_ECN_%dG" % speed


def _pg_of(tc, intent):
    """Priority group of a TC: each lossless priority its own PG (headroom per PG), the rest PG 0."""
    return tc if tc in intent["pfc_priorities"] else 0


# ------------------------------------------------------------------ Dell Enterprise SONiC

DELL_CABLE_LENGTHS = (5, 40, 300)       # sonic_qos_interfaces cable_length choices (5m, 40m, 300m)
# the ranges of the modules' DOCUMENTATION (dellemc.enterprise_sonic 3.2.0), not enforced by them
DELL_LIMITS = {"wred_threshold": (1000, 12480000), "drop_probability": (0, 100),
               "watchdog_detect_time": (100, 5000), "watchdog_restore_time": (100, 60000),
               "poll_interval": (100, 3000), "weight": (1, 100), "sequence": (0, 7)}


def dell_cable_length(meters):
    """The smallest of the module's cable lengths at least ``meters`` long (more headroom is
    safe, less is not); None beyond 300 m."""
    for choice in DELL_CABLE_LENGTHS:
        if meters <= choice:
            return "%dm" % choice
    return None


def render_dell_sonic(intent):
    """``[{module, args}]`` in the order they are applied (maps before the interfaces that bind them)."""
    pfc = intent["pfc_priorities"]
    speeds = sorted(set(p["speed"] for p in intent["ports"]))
    ecn = dict((p["speed"], p["ecn"]) for p in intent["ports"])
    maps = {
        "dscp_maps": [{"name": MAP, "entries": [{"dscp": d, "fwd_group": str(tc)}
                                                for d, tc in sorted(intent["dscp_to_tc"].items())]}],
        "fwd_group_queue_maps": [{"name": MAP, "entries": [{"fwd_group": str(tc), "queue_index": tc}
                                                           for tc in range(8)]}],
        "fwd_group_pg_maps": [{"name": MAP, "entries": [{"fwd_group": str(tc), "pg_index": _pg_of(tc, intent)}
                                                        for tc in range(8)]}],
        "pfc_priority_queue_maps": [{"name": MAP, "entries": [{"dot1p": p, "queue_index": p} for p in pfc]}],
        "pfc_priority_pg_maps": [{"name": MAP, "entries": [{"dot1p": p, "pg_index": p} for p in pfc]}],
    }
    wred = [{"name": _wred_name(s), "ecn": "green",
             "green": {"enable": True, "min_threshold": ecn[s]["min_kb"] * 1000,
                       "max_threshold": ecn[s]["max_kb"] * 1000, "drop_probability": ecn[s]["probability"]}}
            for s in speeds]
    scheduler = [{"name": SCHEDULER, "schedulers": [
        dict({"sequence": s["tc"], "scheduler_type": s["type"]},
             **({"weight": s["weight"]} if s["type"] == "dwrr" else {})) for s in intent["scheduler"]]}]
    wd = intent["watchdog"]
    interfaces = []
    for port in intent["ports"]:
        interfaces.append({
            "name": port["name"],
            "qos_maps": {"dscp_fwd_group": MAP, "fwd_group_queue": MAP, "fwd_group_pg": MAP,
                         "pfc_priority_queue": MAP, "pfc_priority_pg": MAP},
            "queues": [{"id": p, "wred_profile": _wred_name(port["speed"])} for p in pfc],
            "scheduler_policy": SCHEDULER,
            "cable_length": dell_cable_length(intent["cable_length_m"]),
            "pfc": {"asymmetric": False, "priorities": [{"dot1p": p, "enable": True} for p in pfc],
                    "watchdog_action": wd["action"], "watchdog_detect_time": wd["detect_ms"],
                    "watchdog_restore_time": wd["restore_ms"]}})
    dcbx = {"global": {"enabled": True},
            "interfaces": [{"name": p["name"], "enabled": True, "pfc_tlv_enabled": True,
                            "ets_configuration_tlv_enabled": True, "ets_recommendation_tlv_enabled": True}
                           for p in intent["ports"]]}
    return [
        {"module": "dellemc.enterprise_sonic.sonic_qos_maps", "args": {"config": maps, "state": "merged"}},
        {"module": "dellemc.enterprise_sonic.sonic_qos_wred", "args": {"config": wred, "state": "merged"}},
        {"module": "dellemc.enterprise_sonic.sonic_qos_scheduler", "args": {"config": scheduler, "state": "merged"}},
        {"module": "dellemc.enterprise_sonic.sonic_qos_pfc",
         "args": {"config": {"counter_poll": True, "poll_interval": wd.get("poll_ms", 100)}, "state": "merged"}},
        # buffer init goes through the collection's edit_config_reboot: the switch reboots (applied
        # only with switch_qos_allow_reboot; like sonic_roce, which is never used)
        {"module": "dellemc.enterprise_sonic.sonic_qos_buffer",
         "args": {"config": {"buffer_init": True}, "state": "merged"}, "reboots": True},
        {"module": "dellemc.enterprise_sonic.sonic_qos_interfaces", "args": {"config": interfaces,
                                                                             "state": "merged"}},
        {"module": "dellemc.enterprise_sonic.sonic_dcbx", "args": {"config": dcbx, "state": "merged"}},
    ]


def _range(out, what, value, limits, source):
    low, high = limits
    if value is None or isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        out.append("%s=%r: out of the range %d-%d (%s)" % (what, value, low, high, source))
        return False
    return True


def check_dell_sonic(rendered):
    """What Enterprise SONiC refuses though the modules pass it on: their documented ranges."""
    out = []
    args = dict((step["module"].rsplit(".", 1)[1], step["args"]["config"]) for step in rendered)
    if "sonic_roce" in args:
        out.append("sonic_roce: never used (it reboots the switch)")
    doc = "dellemc.enterprise_sonic %s DOCUMENTATION"
    for profile in args.get("sonic_qos_wred") or []:
        green = profile["green"]
        name = "sonic_qos_wred %s green" % profile["name"]
        ok = _range(out, name + ".min_threshold", green["min_threshold"], DELL_LIMITS["wred_threshold"],
                    doc % "sonic_qos_wred")
        ok = _range(out, name + ".max_threshold", green["max_threshold"], DELL_LIMITS["wred_threshold"],
                    doc % "sonic_qos_wred") and ok
        _range(out, name + ".drop_probability", green["drop_probability"], DELL_LIMITS["drop_probability"],
               doc % "sonic_qos_wred")
        if ok and green["max_threshold"] < green["min_threshold"]:
            out.append("%s.max_threshold=%d is below min_threshold=%d"
                       % (name, green["max_threshold"], green["min_threshold"]))
    for policy in args.get("sonic_qos_scheduler") or []:
        for entry in policy["schedulers"]:
            _range(out, "sonic_qos_scheduler %s sequence" % policy["name"], entry["sequence"], DELL_LIMITS["sequence"],
                   doc % "sonic_qos_scheduler")
            if entry["scheduler_type"] != "strict":
                _range(out, "sonic_qos_scheduler %s sequence %d weight" % (policy["name"], entry["sequence"]),
                       entry.get("weight"), DELL_LIMITS["weight"], doc % "sonic_qos_scheduler")
    pfc = args.get("sonic_qos_pfc") or {}
    if "poll_interval" in pfc:
        _range(out, "sonic_qos_pfc poll_interval", pfc["poll_interval"], DELL_LIMITS["poll_interval"],
               doc % "sonic_qos_pfc")
    for intf in args.get("sonic_qos_interfaces") or []:
        name = "sonic_qos_interfaces %s" % intf["name"]
        if intf.get("cable_length") not in ["%dm" % c for c in DELL_CABLE_LENGTHS]:
            out.append("%s cable_length=%r: the module takes 5m, 40m or 300m (switch_qos_cable_length_m beyond "
                       "300 m has no headroom class on Enterprise SONiC)" % (name, intf.get("cable_length")))
        wd = intf.get("pfc") or {}
        _range(out, name + " pfc.watchdog_detect_time", wd.get("watchdog_detect_time"),
               DELL_LIMITS["watchdog_detect_time"], doc % "sonic_qos_interfaces")
        _range(out, name + " pfc.watchdog_restore_time", wd.get("watchdog_restore_time"),
               DELL_LIMITS["watchdog_restore_time"], doc % "sonic_qos_interfaces")
        if wd.get("watchdog_action") not in ("drop", "forward", "alert"):
            out.append("%s pfc.watchdog_action=%r: expected drop, forward or alert" % (name, wd.get("watchdog_action")))
    return out


# ------------------------------------------------------------------ Arista EOS (AVD structured config)

EOS_WATCHDOG_ACTIONS = {"drop": "drop", "alert": "notify-only"}     # AVD: drop | notify-only
EOS_PROFILE = "RDMA-FABRIC-ROCE"


def _seconds(ms):
    text = "%.2f" % (ms / 1000.0)
    return text.rstrip("0").rstrip(".") if "." in text else text


def render_eos(intent):
    """AVD structured config (pyavd's eos_cli_config_gen schema) for the intent."""
    pfc = intent["pfc_priorities"]
    ecn = intent["ports"][0]["ecn"] if intent["ports"] else None
    wd = intent["watchdog"]
    by_tc = {}
    for dscp, tc in sorted(intent["dscp_to_tc"].items()):
        by_tc.setdefault(tc, []).append(str(dscp))
    profiles = []
    for speed in sorted(set(p["speed"] for p in intent["ports"])):
        ecn = [p["ecn"] for p in intent["ports"] if p["speed"] == speed][0]
        queues = []
        for entry in intent["scheduler"]:
            queue = {"id": entry["tc"]}
            if entry["type"] == "strict":
                queue["priority"] = "priority strict"
            else:
                queue["bandwidth_percent"] = entry["weight"]
            if entry["tc"] in pfc:
                queue["random_detect"] = {"ecn": {"threshold": {
                    "units": "kbytes", "min": ecn["min_kb"], "max": ecn["max_kb"],
                    "max_probability": ecn["probability"]}}}
            queues.append(queue)
        profiles.append({
            "name": "%s-%dG" % (EOS_PROFILE, speed), "trust": "dscp",
            "priority_flow_control": {
                "enabled": True,
                "priorities": [{"priority": p, "no_drop": True} for p in pfc],
                "watchdog": {"enabled": True, "action": EOS_WATCHDOG_ACTIONS.get(wd["action"], wd["action"]),
                             "timer": {"timeout": _seconds(wd["detect_ms"]), "recovery_time": _seconds(wd["restore_ms"]),
                                       "polling_interval": _seconds(wd.get("poll_ms", 100))}}},
            "tx_queues": queues})
    return {
        "qos": {"map": {"dscp": ["%s to traffic-class %d" % (" ".join(d), tc) for tc, d in sorted(by_tc.items())]}},
        "qos_profiles": profiles,
        "ethernet_interfaces": [{"name": p["name"], "mtu": intent["mtu"],
                                 "service_profile": "%s-%dG" % (EOS_PROFILE, p["speed"])} for p in intent["ports"]],
    }


def check_eos(rendered):
    """What EOS refuses before pyavd is asked (its schema: thresholds >= 1, probability 1-100,
    watchdog action drop | notify-only), and max >= min, which pyavd does not check."""
    out = []
    for profile in rendered.get("qos_profiles") or []:
        action = profile["priority_flow_control"]["watchdog"]["action"]
        if action not in ("drop", "notify-only"):
            out.append("%s: PFC watchdog action %r: EOS takes drop or notify-only (switch_qos_watchdog_action: "
                       "drop or alert)" % (profile["name"], action))
        for queue in profile["tx_queues"]:
            threshold = ((queue.get("random_detect") or {}).get("ecn") or {}).get("threshold")
            if not threshold:
                continue
            name = "%s tx-queue %d ECN" % (profile["name"], queue["id"])
            ok = _range(out, name + " min", threshold["min"], (1, 2 ** 32 - 1), "pyavd eos_cli_config_gen schema")
            ok = _range(out, name + " max", threshold["max"], (1, 2 ** 32 - 1), "pyavd eos_cli_config_gen schema") and ok
            _range(out, name + " max_probability", threshold["max_probability"], (1, 100),
                   "pyavd eos_cli_config_gen schema")
            if ok and threshold["max"] < threshold["min"]:
                out.append("%s: maximum-threshold %d below minimum-threshold %d"
                           % (name, threshold["max"], threshold["min"]))
    return out


def validate_eos_with_pyavd(structured):
    """``(violations, cli)``: pyavd's validation messages and its EOS CLI (pyavd is a test and
    controller requirement, imported only here)."""
    import pyavd
    result = pyavd.validate_structured_config(structured)
    violations = ["%s: %s" % (".".join(str(p) for p in v.path), v.message)
                  for v in result.validation_result.violations]
    if violations:
        return violations, None
    return [], pyavd.get_device_config(structured)


# ------------------------------------------------------------------ community SONiC (CONFIG_DB)

SONIC_DEFAULT_MAP = "AZURE"
# sonic-buildimage files/build_templates/qos_config.j2: the default DSCP_TO_TC_MAP AZURE
# (DSCP 3 and 4 to the lossless TCs 3 and 4, 5 to 2, 8 to 0, 46 to 5, 48 to 6, the rest, 26 among
# them, to TC 1: lossy)
SONIC_AZURE_DSCP_TO_TC = dict([(d, 1) for d in range(64)] + [(3, 3), (4, 4), (5, 2), (8, 0), (46, 5), (48, 6)])
# sonic-yang-models constraints, each with the YANG module it comes from (read, not copied: GPLv3)
YANG = {
    "pfcwd": "sonic-yang-models yang-models/sonic-pfcwd.yang (detection_time 100-5000, restoration_time "
             "100-60000, action drop|forward|alert, POLL_INTERVAL 100-1000)",
    "wred": "sonic-yang-models yang-models/sonic-wred-profile.yang (thresholds uint64, drop probability 0-100, "
            "green_max_threshold >= green_min_threshold, ecn enumeration ecn_none|ecn_green|...|ecn_all)",
    "port_qos_map": "sonic-yang-models yang-models/sonic-port-qos-map.yang (pfc_enable: priorities 0-7 "
                    "comma-separated; map fields are leafrefs to the map tables)",
    "dscp_to_tc": "sonic-yang-models yang-models/sonic-dscp-tc-map.yang (DSCP 0-63, TC 0-15)",
    "tc_to_pg": "sonic-yang-models yang-models/sonic-tc-priority-group-map.yang (TC 0-15, PG 0-7)",
    "pfc_to_pg": "sonic-yang-models yang-models/sonic-pfc-priority-priority-group-map.yang (priority 0-7, PG 0-7)",
    "tc_to_queue": "sonic-yang-models yang-models/sonic-tc-queue-map.yang (TC 0-15, queue 0-7)",
    "queue": "sonic-yang-models yang-models/sonic-queue.yang (QUEUE|port|q wred_profile: leafref to WRED_PROFILE)",
    "scheduler": "sonic-yang-models yang-models/sonic-scheduler.yang (type DWRR|WRR|STRICT, weight 1-100)",
    "cable_length": "sonic-yang-models yang-models/sonic-cable-length.yang (a length in meters, '<n>m')",
}
SONIC_ECN_MODES = ("ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow", "ecn_green_red",
                   "ecn_yellow_red", "ecn_all")
SONIC_PFCWD_ACTIONS = ("drop", "forward", "alert")


def render_sonic(intent):
    """CONFIG_DB tables (``config load``/``config apply-patch`` JSON): our own maps (never the
    default AZURE), PORT_QOS_MAP with pfc_enable and the bindings, a WRED profile per port
    speed bound to the lossless queues, CABLE_LENGTH and PFC_WD."""
    pfc = intent["pfc_priorities"]
    ports = [p["name"] for p in intent["ports"]]
    wd = intent["watchdog"]
    db = {
        "DSCP_TO_TC_MAP": {MAP: dict((str(d), str(intent["dscp_to_tc"].get(d, 0))) for d in range(64))},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: dict((str(tc), str(_pg_of(tc, intent))) for tc in range(8))},
        "TC_TO_QUEUE_MAP": {MAP: dict((str(tc), str(tc)) for tc in range(8))},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: dict((str(p), str(p)) for p in range(8))},
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": {MAP: dict((str(p), str(p)) for p in pfc)},
        "PORT_QOS_MAP": dict((name, {"dscp_to_tc_map": MAP, "tc_to_pg_map": MAP, "tc_to_queue_map": MAP,
                                     "pfc_to_queue_map": MAP, "pfc_to_pg_map": MAP,
                                     "pfc_enable": ",".join(str(p) for p in pfc),
                                     "pfcwd_sw_enable": ",".join(str(p) for p in pfc)}) for name in ports),
        "WRED_PROFILE": {},
        "QUEUE": {},
        "CABLE_LENGTH": {"AZURE": dict((name, "%dm" % intent["cable_length_m"]) for name in ports)},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": str(wd.get("poll_ms", 100))}},
        "SCHEDULER": {},
    }
    for port in intent["ports"]:
        name = _wred_name(port["speed"])
        db["WRED_PROFILE"][name] = {
            "wred_green_enable": "true", "ecn": "ecn_green",
            "green_min_threshold": str(port["ecn"]["min_kb"] * 1000),
            "green_max_threshold": str(port["ecn"]["max_kb"] * 1000),
            "green_drop_probability": str(port["ecn"]["probability"])}
        db["PFC_WD"][port["name"]] = {"action": wd["action"], "detection_time": str(wd["detect_ms"]),
                                      "restoration_time": str(wd["restore_ms"])}
        for entry in intent["scheduler"]:
            key = "%s|%d" % (port["name"], entry["tc"])
            db["QUEUE"][key] = {"scheduler": "%s_Q%d" % (SCHEDULER, entry["tc"])}
            if entry["tc"] in pfc:
                db["QUEUE"][key]["wred_profile"] = name
    for entry in intent["scheduler"]:
        sched = {"type": "STRICT"} if entry["type"] == "strict" else {"type": "DWRR", "weight": str(entry["weight"])}
        db["SCHEDULER"]["%s_Q%d" % (SCHEDULER, entry["tc"])] = sched
    return db


def _num(value):
    return int(value) if isinstance(value, str) and value.isdigit() else None


def check_sonic(db):
    """The sonic-yang-models constraints on the tables rendered (and on a running CONFIG_DB):
    ranges, max >= min, enums and map references. Each message cites its YANG module."""
    out = []

    def need(cond, text, source):
        if not cond:
            out.append("%s (%s)" % (text, YANG[source]))
    for name, table in (db.get("DSCP_TO_TC_MAP") or {}).items():
        for dscp, tc in table.items():
            need(_num(dscp) is not None and _num(dscp) <= 63, "DSCP_TO_TC_MAP|%s: DSCP %r" % (name, dscp), "dscp_to_tc")
            need(_num(tc) is not None and _num(tc) <= 15, "DSCP_TO_TC_MAP|%s: %s -> TC %r" % (name, dscp, tc),
                 "dscp_to_tc")
    for name, table in (db.get("TC_TO_PRIORITY_GROUP_MAP") or {}).items():
        for tc, pg in table.items():
            need(_num(tc) is not None and _num(tc) <= 15 and _num(pg) is not None and _num(pg) <= 7,
                 "TC_TO_PRIORITY_GROUP_MAP|%s: %s -> %r" % (name, tc, pg), "tc_to_pg")
    for name, table in (db.get("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP") or {}).items():
        for prio, pg in table.items():
            need(_num(prio) is not None and _num(prio) <= 7 and _num(pg) is not None and _num(pg) <= 7,
                 "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP|%s: %s -> %r" % (name, prio, pg), "pfc_to_pg")
    for name, table in (db.get("TC_TO_QUEUE_MAP") or {}).items():
        for tc, queue in table.items():
            need(_num(tc) is not None and _num(tc) <= 15 and _num(queue) is not None and _num(queue) <= 7,
                 "TC_TO_QUEUE_MAP|%s: %s -> %r" % (name, tc, queue), "tc_to_queue")
    refs = {"dscp_to_tc_map": "DSCP_TO_TC_MAP", "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
            "tc_to_queue_map": "TC_TO_QUEUE_MAP", "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
            "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"}
    for port, entry in (db.get("PORT_QOS_MAP") or {}).items():
        for field, table in refs.items():
            if field in entry:
                need(entry[field] in (db.get(table) or {}),
                     "PORT_QOS_MAP|%s %s=%r: no such %s" % (port, field, entry[field], table), "port_qos_map")
        for field in ("pfc_enable", "pfcwd_sw_enable"):
            if field in entry:
                need(re.match(r"\A[0-7](,[0-7])*\Z", entry[field] or "") is not None,
                     "PORT_QOS_MAP|%s %s=%r" % (port, field, entry[field]), "port_qos_map")
    for name, prof in (db.get("WRED_PROFILE") or {}).items():
        low, high = _num(prof.get("green_min_threshold")), _num(prof.get("green_max_threshold"))
        need(low is not None and high is not None,
             "WRED_PROFILE|%s: green thresholds %r/%r are not unsigned integers"
             % (name, prof.get("green_min_threshold"), prof.get("green_max_threshold")), "wred")
        if low is not None and high is not None:
            need(high >= low, "WRED_PROFILE|%s: green_max_threshold %d below green_min_threshold %d"
                 % (name, high, low), "wred")
            need(low > 0, "WRED_PROFILE|%s: green_min_threshold 0 (marks every packet)" % name, "wred")
        prob = _num(prof.get("green_drop_probability"))
        need(prob is not None and prob <= 100, "WRED_PROFILE|%s: green_drop_probability %r"
             % (name, prof.get("green_drop_probability")), "wred")
        need(prof.get("ecn") in SONIC_ECN_MODES, "WRED_PROFILE|%s: ecn %r" % (name, prof.get("ecn")), "wred")
    for key, entry in (db.get("QUEUE") or {}).items():
        if "wred_profile" in entry:
            need(entry["wred_profile"] in (db.get("WRED_PROFILE") or {}),
                 "QUEUE|%s wred_profile=%r: no such WRED_PROFILE" % (key, entry["wred_profile"]), "queue")
    for name, sched in (db.get("SCHEDULER") or {}).items():
        need(sched.get("type") in ("DWRR", "WRR", "STRICT"), "SCHEDULER|%s type=%r" % (name, sched.get("type")),
             "scheduler")
        if "weight" in sched:
            weight = _num(sched["weight"])
            need(weight is not None and 1 <= weight <= 100, "SCHEDULER|%s weight=%r" % (name, sched["weight"]),
                 "scheduler")
    for key, entry in (db.get("QUEUE") or {}).items():
        if "scheduler" in entry:
            need(entry["scheduler"] in (db.get("SCHEDULER") or {}),
                 "QUEUE|%s scheduler=%r: no such SCHEDULER" % (key, entry["scheduler"]), "queue")
    for name, table in (db.get("CABLE_LENGTH") or {}).items():
        for port, length in table.items():
            need(re.match(r"\A[0-9]+m\Z", str(length)) is not None,
                 "CABLE_LENGTH|%s %s=%r" % (name, port, length), "cable_length")
    for key, entry in (db.get("PFC_WD") or {}).items():
        if key == "GLOBAL":
            poll = _num(entry.get("POLL_INTERVAL"))
            need(poll is not None and 100 <= poll <= 1000, "PFC_WD|GLOBAL POLL_INTERVAL=%r"
                 % entry.get("POLL_INTERVAL"), "pfcwd")
            continue
        detect, restore = _num(entry.get("detection_time")), _num(entry.get("restoration_time"))
        need(detect is not None and 100 <= detect <= 5000, "PFC_WD|%s detection_time=%r"
             % (key, entry.get("detection_time")), "pfcwd")
        need(restore is not None and 100 <= restore <= 60000, "PFC_WD|%s restoration_time=%r"
             % (key, entry.get("restoration_time")), "pfcwd")
        need(entry.get("action") in SONIC_PFCWD_ACTIONS, "PFC_WD|%s action=%r" % (key, entry.get("action")), "pfcwd")
    return out


# ------------------------------------------------------------------ Cumulus Linux (NVUE)

# NVIDIA's lossless defaults (`nv set qos roce mode lossless`, Cumulus Linux 5.x "RDMA over
# Converged Ethernet - RoCE"): ECN on TC 0 and 3 from 150,000 to 1,501,500 bytes at 100%
NVUE_ROCE_DEFAULTS = {"min_bytes": 150000, "max_bytes": 1501500, "probability": 100, "pfc": [3],
                      "dscp": {26: 3, 48: 6}, "strict_tc": 6}
NVUE_WATCHDOG_POLL = (100, 5000)     # nv set qos pfc-watchdog polling-interval (ms)


def nvue_ecn_profile(speed):
    """The congestion-control profile of a port speed (Cumulus Linux 5.4+ per-interface profiles)."""
    return "rdma-fabric-%dg" % speed


def render_cumulus(intent):
    """``nv set`` lines for the intent (then ``nv config apply``). The default-global mapping,
    PFC and egress-scheduler profiles hold the intent; ECN has one congestion-control profile
    per port speed (``nv set interface swpN qos congestion-control profile ...``), since the
    thresholds scale with the speed."""
    lines = ["nv set qos mapping default-global trust l3"]
    for dscp, tc in sorted(intent["dscp_to_tc"].items()):
        lines.append("nv set qos mapping default-global dscp %d switch-priority %d" % (dscp, tc))
    lines.append("nv set qos pfc default-global switch-priority %s" % ",".join(str(p) for p in intent["pfc_priorities"]))
    lines.append("nv set qos pfc default-global tx enable")
    lines.append("nv set qos pfc default-global rx enable")
    lines.append("nv set qos pfc default-global cable-length %d" % intent["cable_length_m"])
    for speed in sorted(set(p["speed"] for p in intent["ports"])):
        ecn = [p["ecn"] for p in intent["ports"] if p["speed"] == speed][0]
        profile = nvue_ecn_profile(speed)
        for tc in intent["pfc_priorities"]:
            prefix = "nv set qos congestion-control %s traffic-class %d" % (profile, tc)
            lines += ["%s ecn enable" % prefix, "%s min-threshold %d" % (prefix, ecn["min_kb"] * 1000),
                      "%s max-threshold %d" % (prefix, ecn["max_kb"] * 1000),
                      "%s probability %d" % (prefix, ecn["probability"])]
    for entry in intent["scheduler"]:
        if entry["type"] == "strict":
            lines.append("nv set qos egress-scheduler default-global traffic-class %d mode strict" % entry["tc"])
        else:
            lines.append("nv set qos egress-scheduler default-global traffic-class %d mode dwrr" % entry["tc"])
            lines.append("nv set qos egress-scheduler default-global traffic-class %d bw-percent %d"
                         % (entry["tc"], entry["weight"]))
    lines.append("nv set qos pfc-watchdog polling-interval %d" % intent["watchdog"].get("poll_ms", 100))
    for port in intent["ports"]:
        lines.append("nv set interface %s link mtu %d" % (port["name"], intent["mtu"]))
        profile = nvue_ecn_profile(port["speed"])
        lines.append("nv set interface %s qos congestion-control profile %s" % (port["name"], profile))
        lines.append("nv set interface %s qos pfc-watchdog" % port["name"])
    return lines


def nvue_differences(intent):
    """``[(setting, ours, nvidia_default, why)]``: each difference from `nv set qos roce`'s
    lossless defaults, explained (docs/switch_qos.md lists them)."""
    out = []
    for port in intent["ports"][:1]:
        ecn = port["ecn"]
        if ecn["min_kb"] * 1000 != NVUE_ROCE_DEFAULTS["min_bytes"] or ecn["max_kb"] * 1000 != NVUE_ROCE_DEFAULTS["max_bytes"]:
            ours = "%d/%d bytes at %d Gb/s" % (ecn["min_kb"] * 1000, ecn["max_kb"] * 1000, port["speed"])
            out.append(("ecn thresholds", ours,
                        "150000/1501500 bytes", "the seed's 200 KB / 2,000 KB at 100 Gb/s, scaled by the "
                        "bandwidth-delay product to the port's speed; NVIDIA's pair is one value for every speed"))
    out.append(("ecn traffic classes", ",".join(str(p) for p in intent["pfc_priorities"]), "0,3",
                "ECN marks the lossless class only; marking TC 0 (lossy, TCP) is left to the operator"))
    out.append(("trust", "l3 (DSCP)", "pcp,dscp", "the hosts trust DSCP (roce_qos_trust: dscp) and mark every "
                "packet; a PCP tag would be a second classifier the hosts do not set"))
    if intent["pfc_priorities"] != NVUE_ROCE_DEFAULTS["pfc"]:
        out.append(("pfc", ",".join(str(p) for p in intent["pfc_priorities"]), "3",
                    "the hosts' roce_qos_pfc_priorities"))
    return out


def check_cumulus(lines):
    """What NVUE refuses: a threshold of 0, max below min, probability outside 1-100, a
    polling interval outside 100-5000 ms, a switch priority outside 0-7."""
    out = []
    thresholds = {}
    for line in lines:
        found = re.match(r"nv set qos congestion-control (\S+) traffic-class (\d+) "
                         r"(min-threshold|max-threshold|probability) (-?\d+)\Z", line)
        if found:
            tc, what, value = (found.group(1), int(found.group(2))), found.group(3), int(found.group(4))
            thresholds.setdefault(tc, {})[what] = value
            if what == "probability" and not 1 <= value <= 100:
                out.append("%r: probability is 1-100 (NVUE)" % line)
            elif what != "probability" and value < 1:
                out.append("%r: a threshold of %d bytes (NVUE takes a positive size)" % (line, value))
        found = re.match(r"nv set qos pfc-watchdog polling-interval (-?\d+)\Z", line)
        if found and not NVUE_WATCHDOG_POLL[0] <= int(found.group(1)) <= NVUE_WATCHDOG_POLL[1]:
            out.append("%r: the polling interval is %d-%d ms (NVUE)" % ((line,) + NVUE_WATCHDOG_POLL))
        found = re.match(r"nv set qos (?:mapping default-global dscp \d+ switch-priority|pfc default-global "
                         r"switch-priority) ([\d,-]+)\Z", line)
        if found and any(not p.isdigit() or int(p) > 7 for p in found.group(1).split(",")):
            out.append("%r: switch priorities are 0-7 (NVUE)" % line)
    for (profile, tc), values in sorted(thresholds.items()):
        if values.get("max-threshold", 1) < values.get("min-threshold", 0):
            out.append("%s traffic-class %d: max-threshold %d below min-threshold %d (NVUE)"
                       % (profile, tc, values["max-threshold"], values["min-threshold"]))
    return out


# ------------------------------------------------------------------ the table of switch OSes

OSES = {
    "dell_sonic": {"render": render_dell_sonic, "check": check_dell_sonic, "ext": "yml",
                   "apply": "the dellemc.enterprise_sonic modules, one task per step (httpapi)",
                   "docs": "Dell Enterprise SONiC"},
    "eos": {"render": render_eos, "check": check_eos, "ext": "yml",
            "apply": "arista.eos.eos_config with the EOS CLI pyavd renders", "docs": "Arista EOS (AVD)"},
    "sonic": {"render": render_sonic, "check": check_sonic, "ext": "json",
              "apply": "the CONFIG_DB JSON, loaded with `config load` / `config apply-patch`",
              "docs": "community SONiC (CONFIG_DB)"},
    "cumulus": {"render": render_cumulus, "check": check_cumulus, "ext": "nvue",
                "apply": "the nv set lines, then nv config apply", "docs": "NVIDIA Cumulus Linux (NVUE)"},
}


def files(os_name, switch, rendered):
    """``[{name, content}]``: what the playbook writes under the report dir for this switch."""
    if os_name == "cumulus":
        text = "\n".join(rendered) + "\n"
    elif OSES[os_name]["ext"] == "json":
        text = json.dumps(rendered, indent=2, sort_keys=True) + "\n"
    else:
        import yaml
        text = yaml.safe_dump(rendered, default_flow_style=False, sort_keys=False)
    return [{"name": "%s/%s.%s" % (os_name, switch, OSES[os_name]["ext"]), "content": text}]
