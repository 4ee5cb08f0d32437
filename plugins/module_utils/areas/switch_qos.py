# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch_qos area: the switch side of lossless RoCE, one intent derived from the hosts' own
roce_qos settings and planned on the controller, per switch (leaf). Pure functions, no I/O:

- ``settings(variables, host_variables)``: the switch's ``switch_qos_*`` settings (every option of
  ``roles/switch_qos/meta/argument_specs.yml``) and, under ``hosts``, the roce_qos settings of each
  host the leaf's ports face (``{host: roce_qos variables}``, the role's defaults under the
  inventory's values);
- ``config_errors(settings)``: every problem, each naming the variable the user set and its value
  (a threshold of 0, max below min, a priority the hosts do not use, an unknown switch OS, a port
  speed with no ECN row, hosts on one leaf that want different things);
- ``intent(settings)``: the lossless intent (RoCE priority and TC, DSCP -> TC, PFC, scheduling,
  ECN per port speed, the PFC watchdog, buffer inputs) that every OS renders;
- ``plan(settings)``: the intent and the switch OS's rendering (``switch/_render.OSES``), with the
  platform's own refusals as errors (a PlanError names them);
- ``records(switch, found)``: the drift-check record shape (``host`` the switch, ``object`` its
  port, the host end named in ``actual``).

The host role (roce_qos) and the switch rendering read the same values: the switch takes the
RoCE DSCP, the CNP DSCP, the lossless priorities and the ETS classes from roce_qos_* and nothing
else, so the two ends cannot disagree by construction. Errors are PlanError."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.areas import roce_qos as _roce_qos
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError

NAME = "switch_qos"
PREFIX = "switch_qos_"
FLAGS = ("apply",)
# roce_qos variables the intent is derived from (the host's own settings)
HOST_VARIABLES = ("roce_qos_lossless_priority", "roce_qos_roce_dscp", "roce_qos_cnp_dscp",
                  "roce_qos_cnp_priority", "roce_qos_pfc_priorities", "roce_qos_prio_tc", "roce_qos_tsa",
                  "roce_qos_tcbw", "roce_qos_dscp2prio_extra", "roce_qos_cable_len")
# The seed's switch thresholds (4.3: ECN from 200 KB of queue depth, 100% marking at 2,000 KB) are
# the row of the reference speed; other speeds scale by the bandwidth-delay product (BDP = rate x
# RTT: 100 Gb/s x 20 us = 250 KB), so each row keeps the seed's ratio to the BDP (0.8 BDP to 8 BDP).
REFERENCE_SPEED = 100
SEED_ECN = {"min_kb": 200, "max_kb": 2000, "probability": 100}
RTT_US = 20
DEFAULT_SPEEDS = (10, 25, 40, 50, 100, 200, 400)
# NVIDIA's lossless defaults (Cumulus `nv set qos roce`, Onyx `show roce`): 150 KB / 1.5 MB at 100%
NVIDIA_ECN = {"min_kb": 150, "max_kb": 1500, "probability": 100}
MTU_MAX = 9216
WATCHDOG_ACTIONS = ("drop", "forward", "alert")


def bdp_kb(speed_gbps, rtt_us=RTT_US):
    """The bandwidth-delay product in KB (1,000 bytes) of a link: Gb/s x us / 8."""
    return speed_gbps * rtt_us / 8.0


def default_ecn_table():
    """``{speed Gb/s: {min_kb, max_kb, probability}}``: the seed's pair at 100 Gb/s, scaled by
    the BDP for the others (docs/switch_qos.md lists the table)."""
    table = {}
    for speed in DEFAULT_SPEEDS:
        scale = float(speed) / REFERENCE_SPEED
        table[speed] = {"min_kb": int(round(SEED_ECN["min_kb"] * scale)),
                        "max_kb": int(round(SEED_ECN["max_kb"] * scale)),
                        "probability": SEED_ECN["probability"]}
    return table


# ------------------------------------------------------------------ settings


def settings(variables, host_variables=None):
    """The switch's settings (keys without the ``switch_qos_`` prefix) from ``variables``, and
    ``hosts``: ``{host: roce_qos settings}`` from ``host_variables`` (``{host: variables}``)."""
    out = role_settings(variables, PREFIX, FLAGS)
    out["hosts"] = dict((host, _roce_qos.settings(dict(values or {})))
                        for host, values in sorted((host_variables or {}).items()))
    return out


def _int(errors, name, value, low=None, high=None):
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        else:
            errors.append("%s=%r: expected an integer" % (name, value))
            return None
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = (low if low is not None else "", high if high is not None else "")
        errors.append("%s=%r: out of range %s-%s" % ((name, value) + bounds))
        return None
    return value


def _host_part(roce):
    """What a host's roce_qos settings decide of the switch: the part two hosts on one leaf must share."""
    return {"lossless_priority": roce.get("lossless_priority"), "roce_dscp": roce.get("roce_dscp"),
            "cnp_dscp": roce.get("cnp_dscp"), "cnp_priority": roce.get("cnp_priority"),
            "pfc_priorities": sorted(roce.get("pfc_priorities") or []),
            "prio_tc": list(roce.get("prio_tc") or []), "tsa": list(roce.get("tsa") or []),
            "tcbw": list(roce.get("tcbw") or []),
            "dscp2prio_extra": sorted((e.get("dscp"), e.get("priority")) for e in roce.get("dscp2prio_extra") or []
                                      if isinstance(e, dict))}


def _ecn_table(settings, errors):
    table = settings.get("ecn_thresholds")
    if table is None:
        return default_ecn_table()
    if not isinstance(table, dict) or not table:
        errors.append("switch_qos_ecn_thresholds=%r: expected a dict of link speed (Gb/s): {min_kb, max_kb, "
                      "probability}" % (table,))
        return {}
    out = {}
    for speed, row in sorted(table.items(), key=lambda item: str(item[0])):
        name = "switch_qos_ecn_thresholds.%s" % (speed,)
        key = _int(errors, "switch_qos_ecn_thresholds key %r" % (speed,), speed, 1)
        if not isinstance(row, dict):
            errors.append("%s=%r: expected {min_kb, max_kb, probability}" % (name, row))
            continue
        low = _int(errors, name + ".min_kb", row.get("min_kb"), 1)
        high = _int(errors, name + ".max_kb", row.get("max_kb"), 1)
        prob = _int(errors, name + ".probability", row.get("probability", 100), 1, 100)
        if low is not None and high is not None and high < low:
            errors.append("%s.max_kb=%d is below %s.min_kb=%d: ECN marking starts at min and reaches the "
                          "probability at max; give max >= min" % (name, high, name, low))
            continue
        if None not in (key, low, high, prob):
            out[key] = {"min_kb": low, "max_kb": high, "probability": prob}
    return out


def config_errors(settings):
    """Every problem of the settings, each naming the variable and the value."""
    from ansible_collections.rdma.fabric.plugins.module_utils.switch import _render
    errors = []
    os_name = settings.get("os")
    if os_name not in _render.OSES:
        errors.append("switch_qos_os=%r: unknown switch OS; expected one of %s"
                      % (os_name, ", ".join(sorted(_render.OSES))))
    # no "hosts": the role's preflight, with the switch's own variables only (the checks that need the
    # hosts' roce_qos settings run in switch_qos_plan); "inventory": the inventory's host names then
    known = settings.get("hosts") if "hosts" in settings else None
    hosts = known or {}
    for host, roce in sorted(hosts.items()):
        for message in _roce_qos.config_errors(roce):
            errors.append("%s: %s" % (host, message))
    ecn = _ecn_table(settings, errors)
    ports = settings.get("ports")
    if not isinstance(ports, list) or not ports:
        errors.append("switch_qos_ports=%r: expected a list of the leaf's host ports ({name, speed, host, "
                      "host_interface})" % (ports,))
        ports = []
    seen = set()
    for index, port in enumerate(ports):
        name = "switch_qos_ports[%d]" % index
        if not isinstance(port, dict) or not port.get("name"):
            errors.append("%s=%r: expected {name, speed, host, host_interface}" % (name, port))
            continue
        if not _word(port["name"]):
            errors.append("%s.name=%r: a port name of the switch (Ethernet0, Eth1/1, swp1): one word, no blank "
                          "or control character" % (name, port["name"]))
        elif port["name"] in seen:
            errors.append("%s.name=%r: the port is listed twice" % (name, port["name"]))
        seen.add(port["name"])
        netdev = port.get("host_interface")
        if netdev is not None and (not isinstance(netdev, str) or not _NETDEV.match(netdev) or netdev in (".", "..")):
            errors.append("%s.host_interface=%r: a network interface name of the host (eth2, ens1f0np0: at most 15 "
                          "letters, digits, '_', '-', '.', ':' or '@')" % (name, netdev))
        elif netdev is not None and port.get("host") is None:
            errors.append("%s.host_interface=%r: given without its host (the host's view of the port is looked up "
                          "by host and interface)" % (name, netdev))
        speed = _int(errors, name + ".speed", port.get("speed"), 1)
        if speed is not None and ecn and speed not in ecn:
            errors.append("%s.speed=%d: no ECN row for %d Gb/s in switch_qos_ecn_thresholds (rows: %s); add one "
                          "(the seed's 200/2,000 KB at 100 Gb/s scaled by the bandwidth-delay product: min %d KB, "
                          "max %d KB)" % (name, speed, speed, ", ".join(str(s) for s in sorted(ecn)),
                                          round(SEED_ECN["min_kb"] * speed / 100.0),
                                          round(SEED_ECN["max_kb"] * speed / 100.0)))
        inventory = hosts if known is not None else settings.get("inventory")
        if port.get("host") is not None and inventory is not None and port["host"] not in inventory:
            errors.append("%s.host=%r: not a host of the inventory's RoCE hosts (%s)"
                          % (name, port["host"], ", ".join(sorted(inventory)) or "none"))
    errors.extend(_group_errors(settings, ports))
    _int(errors, "switch_qos_watchdog_detect_ms", settings.get("watchdog_detect_ms", 200), 1)
    _int(errors, "switch_qos_watchdog_restore_ms", settings.get("watchdog_restore_ms", 200), 1)
    if settings.get("watchdog_action", "drop") not in WATCHDOG_ACTIONS:
        errors.append("switch_qos_watchdog_action=%r: expected one of %s"
                      % (settings.get("watchdog_action"), ", ".join(WATCHDOG_ACTIONS)))
    if settings.get("cable_length_m") is not None:
        _int(errors, "switch_qos_cable_length_m", settings["cable_length_m"], 1)
    _int(errors, "switch_qos_mtu", settings.get("mtu", MTU_MAX), 1500, MTU_MAX)
    # the role's report_dir (switch_qos_plan checks its own report_dir argument, which the role sets from it)
    directory = settings.get("report_dir")
    bad_directory = (not isinstance(directory, str) or not directory.startswith("/")
                     or any(ord(c) < 32 for c in directory))
    if known is None and "report_dir" in settings and bad_directory:
        errors.append("switch_qos_report_dir=%r: an absolute directory on the controller (the default is "
                      "switch-qos-report in the working directory of the run, made absolute)" % (directory,))
    errors.extend(_priority_errors(settings, ports))
    return errors


_NETDEV = re.compile(r"\A[A-Za-z0-9_.:@-]{1,15}\Z")


def _word(text):
    return isinstance(text, str) and bool(text) and not any(c.isspace() or ord(c) < 32 or c == "\x7f" for c in text)


def _group_errors(settings, ports):
    """Hosts on one leaf that want different lossless settings: the intent is per group of hosts,
    and a leaf serving two groups is an error naming a host of each and the first difference."""
    hosts = settings.get("hosts") or {}
    groups = []
    for port in ports:
        host = port.get("host") if isinstance(port, dict) else None
        if host not in hosts:
            continue
        part = _host_part(hosts[host])
        for group in groups:
            if group[0] == part:
                group[1].append(host)
                break
        else:
            groups.append((part, [host]))
    if len(groups) < 2:
        return []
    first, other = groups[0], groups[1]
    key = [k for k in sorted(first[0]) if first[0][k] != other[0][k]][0]
    return ["switch_qos_ports: the leaf serves hosts that want different lossless settings (roce_qos_%s=%r on %s, "
            "%r on %s): the switch intent is per group of hosts; put each group on its own leaves or give the "
            "hosts one roce_qos_%s" % (key, first[0][key], ", ".join(first[1]), other[0][key], ", ".join(other[1]),
                                       key)]


def _priority_errors(settings, ports):
    """switch_qos_pfc_priorities (null: the hosts'): each one a priority the hosts use with PFC,
    and the RoCE priority among them."""
    hosts = settings.get("hosts") or {}
    wanted = settings.get("pfc_priorities")
    if wanted is None:
        return []
    errors = []
    if not isinstance(wanted, list):
        return ["switch_qos_pfc_priorities=%r: expected a list of priorities 0-7" % (wanted,)]
    used = set()
    for roce in hosts.values():
        used.update(roce.get("pfc_priorities") or [])
    for prio in wanted:
        if _int(errors, "switch_qos_pfc_priorities", prio, 0, 7) is None:
            continue
        if wanted.count(prio) > 1:
            errors.append("switch_qos_pfc_priorities=%r: priority %d is given twice" % (wanted, prio))
            break
        if hosts and prio not in used:
            errors.append("switch_qos_pfc_priorities=%r: priority %d is not one the hosts use with PFC "
                          "(roce_qos_pfc_priorities: %s); PFC on a priority the hosts do not pause is a lossless "
                          "class nobody uses, and the hosts' lossless priority would be missing"
                          % (wanted, prio, sorted(used)))
    for host, roce in sorted(hosts.items()):
        lossless = roce.get("lossless_priority")
        if lossless is not None and lossless not in wanted:
            errors.append("switch_qos_pfc_priorities=%r: no PFC on the RoCE priority %s of %s "
                          "(roce_qos_lossless_priority)" % (wanted, lossless, host))
            break
    return errors


# ------------------------------------------------------------------ the intent


def _host_settings(settings):
    hosts = settings.get("hosts") or {}
    ports = settings.get("ports") or []
    for port in ports:
        if isinstance(port, dict) and port.get("host") in hosts:
            return hosts[port["host"]]
    if hosts:
        return hosts[sorted(hosts)[0]]
    # no host in the inventory: the roce_qos role's defaults (the hosts' when they keep them)
    return _roce_qos.settings(_roce_qos_defaults())


def _roce_qos_defaults():
    import os
    import yaml
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "roce_qos", "defaults", "main.yml")
    with open(path) as handle:
        return yaml.safe_load(handle)


def intent(settings):
    """The lossless intent every OS renders (the settings must have no config_errors):

    ``roce_priority``/``roce_tc``, ``cnp_priority``/``cnp_tc`` (the switch's TC of a priority is
    the priority), ``dscp_to_tc`` (every DSCP the host marks; the rest goes to TC 0),
    ``pfc_priorities``, ``scheduler`` (per TC: strict or dwrr with the host's ETS share),
    ``ports`` (name, speed, host, host_interface, ecn {min_kb, max_kb, probability}),
    ``watchdog`` (detect_ms, restore_ms, action), ``cable_length_m``, ``mtu``."""
    roce = _host_settings(settings)
    lossless, cnp = roce["lossless_priority"], roce["cnp_priority"]
    dscp_to_tc = {roce["roce_dscp"]: lossless, roce["cnp_dscp"]: cnp}
    for extra in roce.get("dscp2prio_extra") or []:
        dscp_to_tc[extra["dscp"]] = extra["priority"]
    pfc = settings.get("pfc_priorities")
    pfc = sorted(pfc if pfc is not None else roce["pfc_priorities"])
    prio_tc, tsa, tcbw = roce["prio_tc"], roce["tsa"], roce["tcbw"]
    scheduler = []
    for tc in sorted(set([0, lossless, cnp] + list(dscp_to_tc.values()))):
        host_tc = prio_tc[tc]
        if tsa[host_tc] == "strict":
            scheduler.append({"tc": tc, "type": "strict"})
        else:
            scheduler.append({"tc": tc, "type": "dwrr", "weight": tcbw[host_tc]})
    ecn = default_ecn_table() if settings.get("ecn_thresholds") is None else _ecn_table(settings, [])
    ports = []
    for port in settings.get("ports") or []:
        speed = int(port["speed"])
        ports.append({"name": port["name"], "speed": speed, "host": port.get("host"),
                      "host_interface": port.get("host_interface"), "ecn": dict(ecn[speed])})
    cable = settings.get("cable_length_m")
    if cable is None:
        cable = roce.get("cable_len") or 40
    return {"roce_priority": lossless, "roce_tc": lossless, "roce_dscp": roce["roce_dscp"],
            "cnp_priority": cnp, "cnp_tc": cnp, "cnp_dscp": roce["cnp_dscp"],
            "dscp_to_tc": dict(sorted(dscp_to_tc.items())), "pfc_priorities": pfc,
            "scheduler": scheduler, "ports": ports,
            "watchdog": {"detect_ms": int(settings.get("watchdog_detect_ms", 200)),
                         "restore_ms": int(settings.get("watchdog_restore_ms", 200)),
                         "action": settings.get("watchdog_action", "drop")},
            "cable_length_m": int(cable), "mtu": int(settings.get("mtu", MTU_MAX))}


def intent_errors(settings):
    """config_errors, and what the intent itself refuses: the CNP class must be strict (the
    hosts' roce_qos_tsa of the CNP priority's TC)."""
    errors = config_errors(settings)
    if errors:
        return errors
    roce = _host_settings(settings)
    cnp_tc = roce["prio_tc"][roce["cnp_priority"]]
    if roce["tsa"][cnp_tc] != "strict":
        errors.append("roce_qos_tsa=%s: TC%d of the CNP priority %d is %s; the switch's CNP class is strict (CNPs "
                      "must not wait behind the data they slow down)" % (roce["tsa"], cnp_tc, roce["cnp_priority"],
                                                                         roce["tsa"][cnp_tc]))
    return errors


def plan(settings, switch="switch"):
    """``{os, intent, rendered, apply, files}``: the intent and the switch OS's rendering
    (``switch/_render``), checked against what that platform takes. A problem is a PlanError
    naming every variable and value."""
    from ansible_collections.rdma.fabric.plugins.module_utils.switch import _render
    errors = intent_errors(settings)
    if errors:
        raise PlanError("switch_qos (%s): %s" % (switch, "; ".join(errors)))
    want = intent(settings)
    row = _render.OSES[settings["os"]]
    rendered = row["render"](want)
    refused = row["check"](rendered)
    if refused:
        raise PlanError("switch_qos (%s, %s): the platform refuses: %s" % (switch, settings["os"], "; ".join(refused)))
    return {"os": settings["os"], "intent": want, "rendered": rendered, "apply": row["apply"],
            "files": _render.files(settings["os"], switch, rendered)}


def records(switch, found):
    """Records in the drift check's shape from ``[(port, setting, expected, actual)]``."""
    return [{"host": switch, "area": NAME, "object": port, "setting": setting, "expected": expected,
             "actual": actual} for port, setting, expected, actual in found]
