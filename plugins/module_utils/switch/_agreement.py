# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch intent checked against the hosts: each host's live QoS and what its leaf's port
advertises over LLDP DCBX (the host's lldptool read of the neighbour, the health check's
``lossless`` view), a switch's running configuration where it keeps a known-bad default, and ECN
advice from the hosts' CNP / ECN counters. Pure functions; records in the drift check's shape
(``host`` the switch, ``object`` its port, the host end named in ``actual``).

A view (``facts/_health_read.derive_lossless``, one per host netdev) is
``{host: {pfc, ets, app}, peer: {pfc: {enabled}, ets_cfg, app, dcbx, chassis_id, system_name}}``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.areas import switch_qos as _area
from ansible_collections.rdma.fabric.plugins.module_utils.switch import _render

ROCE_UDP_PORT = 4791
SELECTOR_UDP, SELECTOR_DSCP = 3, 5


def _prios(prios):
    return ",".join(str(p) for p in prios) if prios else "none"


def port_records(switch, intent, port, view):
    """Records for one leaf port against the host's view of it (its netdev on the other end of
    the cable): PFC, the APP entries (UDP 4791 and the RoCE DSCP) and the lossless priority's
    ETS class, as the host has them and as the switch port advertises them."""
    found = []
    name = port["name"]
    end = "%s %s" % (port.get("host") or "?", port.get("host_interface") or "?")
    want_pfc = list(intent["pfc_priorities"])
    host = (view or {}).get("host") or {}
    peer = (view or {}).get("peer")
    host_pfc = host.get("pfc")
    if host_pfc is not None and sorted(host_pfc) != want_pfc:
        found.append((name, "pfc", _prios(want_pfc),
                      "host %s has PFC on %s; the intent (from its roce_qos settings) is %s"
                      % (end, _prios(sorted(host_pfc)), _prios(want_pfc))))
    found.extend(_host_ets(name, end, intent, host.get("ets")))
    if peer is None or peer.get("dcbx") is None:
        return _area.records(switch, found)
    theirs = (peer.get("pfc") or {}).get("enabled")
    peer_name = peer.get("system_name") or peer.get("chassis_id") or switch
    if theirs is None:
        found.append((name, "lldp.pfc", _prios(want_pfc),
                      "switch %s port %s sends no PFC TLV (seen by host %s, which has PFC on %s)"
                      % (peer_name, name, end, _prios(host_pfc))))
    elif sorted(theirs) != want_pfc:
        found.append((name, "lldp.pfc", _prios(want_pfc),
                      "switch %s port %s advertises PFC on %s (LLDP DCBX, seen by host %s, which has PFC on %s)"
                      % (peer_name, name, _prios(sorted(theirs)), end, _prios(host_pfc))))
    apps = peer.get("app")
    for selector, protocol, what in ((SELECTOR_UDP, ROCE_UDP_PORT, "UDP 4791"),
                                     (SELECTOR_DSCP, intent["roce_dscp"], "DSCP %d" % intent["roce_dscp"])):
        if apps is None:
            break
        if selector == SELECTOR_DSCP and peer.get("dcbx") in ("cee", "cin"):
            continue        # CEE has no DSCP APP entries
        prios = sorted(set(a["priority"] for a in apps if a.get("protocol") == protocol and (
            a.get("selector") == selector or (selector == SELECTOR_UDP and a.get("selector") in (2, 3, 4)))))
        if prios != [intent["roce_priority"]]:
            found.append((name, "lldp.app.%s" % what.replace(" ", "_").lower(), "priority %d" % intent["roce_priority"],
                          "switch %s port %s advertises %s -> %s (seen by host %s)"
                          % (peer_name, name, what, "priority %s" % _prios(prios) if prios else "no entry", end)))
    ets = peer.get("ets_cfg")
    if ets and ets.get("up2tc") is not None and ets.get("tsa") is not None:
        roce_tc = ets["up2tc"][intent["roce_priority"]]
        tsa = ets["tsa"][roce_tc] if roce_tc < len(ets["tsa"]) else None
        if tsa not in (None, "ets"):
            found.append((name, "lldp.ets.priority_%d" % intent["roce_priority"], "ets",
                          "switch %s port %s advertises %s for the RoCE priority's TC %d (seen by host %s)"
                          % (peer_name, name, tsa, roce_tc, end)))
    return _area.records(switch, found)


def _host_ets(name, end, intent, ets):
    """The host's live ETS class of each scheduled priority (mlnx_qos: up2tc, tsa, tcbw) against
    the intent's scheduling: strict stays strict, a DWRR class has the intent's share."""
    if not ets or ets.get("up2tc") is None or ets.get("tsa") is None:
        return []
    out = []
    for entry in intent["scheduler"]:
        prio = entry["tc"]
        if prio >= len(ets["up2tc"]):
            continue
        tc = ets["up2tc"][prio]
        tsa = ets["tsa"][tc] if tc < len(ets["tsa"]) else None
        share = (ets.get("tcbw") or [None] * 8)[tc] if tc < len(ets.get("tcbw") or []) else None
        want = "strict" if entry["type"] == "strict" else "ets %d%%" % entry["weight"]
        have = "strict" if tsa == "strict" else "%s %s%%" % (tsa, share) if share is not None else str(tsa)
        if tsa is not None and have != want and not (tsa == "ets" and share is None and want.startswith("ets")):
            out.append((name, "ets.priority_%d" % prio, want,
                        "host %s has priority %d in TC %d: %s; the intent (the switch's scheduling) is %s"
                        % (end, prio, tc, have, want)))
    return out


def fleet_records(switch, intent, views):
    """Records of every port of the leaf: ``views`` is ``{host: {netdev: view}}`` (the hosts'
    health reads); a port whose host has no view is not checked (the report lists it)."""
    out = []
    for port in intent["ports"]:
        view = ((views or {}).get(port.get("host")) or {}).get(port.get("host_interface"))
        if view is not None:
            out.extend(port_records(switch, intent, port, view))
    return out


def running_records(switch, os_name, running, intent):
    """A switch OS's known-bad default left in place: on community SONiC, each intent port's
    DSCP_TO_TC_MAP in the running CONFIG_DB (``running``) must send the RoCE DSCP to a PFC TC and
    the CNP DSCP to the CNP TC; the default AZURE map sends 26 to TC 1 (lossy)."""
    if os_name != "sonic" or not running:
        return []
    found = []
    maps = running.get("DSCP_TO_TC_MAP") or {}
    for port in intent["ports"]:
        binding = ((running.get("PORT_QOS_MAP") or {}).get(port["name"]) or {}).get("dscp_to_tc_map")
        if binding is None:
            found.append((port["name"], "dscp_to_tc_map", _render.MAP,
                          "no DSCP map bound (PORT_QOS_MAP|%s): the port classifies on its default; host %s %s marks "
                          "DSCP %d" % (port["name"], port.get("host"), port.get("host_interface"), intent["roce_dscp"])))
            continue
        table = maps.get(binding)
        if table is None and binding == _render.SONIC_DEFAULT_MAP:
            table = dict((str(k), str(v)) for k, v in _render.SONIC_AZURE_DSCP_TO_TC.items())
        table = table or {}
        for dscp, want in ((intent["roce_dscp"], intent["roce_tc"]), (intent["cnp_dscp"], intent["cnp_tc"])):
            have = table.get(str(dscp))
            if have is None or int(have) != want:
                lossy = have is not None and int(have) not in intent["pfc_priorities"] and dscp == intent["roce_dscp"]
                found.append((port["name"], "dscp_to_tc_map.%d" % dscp, "TC %d" % want,
                              "DSCP_TO_TC_MAP|%s sends DSCP %d to TC %s%s%s; host %s %s marks its %s with DSCP %d"
                              % (binding, dscp, have, " (lossy: no PFC)" if lossy else "",
                                 " - SONiC's default map (sonic-buildimage qos_config.j2)"
                                 if binding == _render.SONIC_DEFAULT_MAP else "",
                                 port.get("host"), port.get("host_interface"),
                                 "RoCE data" if dscp == intent["roce_dscp"] else "CNPs", dscp)))
        pfc = ((running.get("PORT_QOS_MAP") or {}).get(port["name"]) or {}).get("pfc_enable")
        if pfc is not None and sorted(int(p) for p in pfc.split(",") if p.strip().isdigit()) != intent["pfc_priorities"]:
            found.append((port["name"], "pfc_enable", _prios(intent["pfc_priorities"]),
                          "PORT_QOS_MAP|%s pfc_enable=%s (host %s %s)"
                          % (port["name"], pfc, port.get("host"), port.get("host_interface"))))
    return _area.records(switch, found)


def ecn_advice(switch, port, rates, cnp_surge_per_s=1000.0):
    """Whether a port's ECN thresholds look too low or too high for its link speed, from its
    host's rates per second (the health check's meanings of the DCQCN and pause counters:
    ``cnp_sent`` from np_cnp_sent, ``rx_pause``, ``ecn_marked`` from np_ecn_marked_roce_packets).
    The seed's symptom "ECN too aggressive: CNPs surge, throughput drops, raise the thresholds":
    CNPs above ``cnp_surge_per_s`` with a min threshold under the link's bandwidth-delay product
    is too low; PFC pauses with no ECN mark at all and a min threshold above 4 BDP is too high
    (PFC stops the link before ECN slows the senders). None when neither holds."""
    ecn, speed = port["ecn"], port["speed"]
    bdp = _area.bdp_kb(speed)
    cnp_rate = float(rates.get("cnp_sent") or 0)
    # ECN marks the host received; without that counter, the CNPs it sent for them
    marked = rates.get("ecn_marked")
    marked = rates.get("cnp_sent") or 0 if marked is None else marked
    pauses = rates.get("rx_pause") or 0
    end = "host %s %s" % (port.get("host"), port.get("host_interface"))
    if cnp_rate > cnp_surge_per_s and ecn["min_kb"] < bdp:
        return _area.records(switch, [(port["name"], "ecn.min_kb", "about %d KB or more at %d Gb/s (1 BDP at 20 us)"
                                       % (bdp, speed),
                                       "%d KB: too low for the link speed; %s sends %.0f CNPs/s (CNPs surge, "
                                       "throughput drops: raise the thresholds)" % (ecn["min_kb"], end, cnp_rate))])[0]
    if pauses and not marked and ecn["min_kb"] > 4 * bdp:
        return _area.records(switch, [(port["name"], "ecn.min_kb", "at most about %d KB at %d Gb/s (4 BDP)"
                                       % (4 * bdp, speed),
                                       "%d KB: too high for the link speed; %s receives %g PFC pauses/s and no ECN "
                                       "mark (PFC stops the link before ECN slows the senders)"
                                       % (ecn["min_kb"], end, pauses))])[0]
    return None


def host_rates(ports, rdma):
    """``{netdev: {cnp_sent, rx_pause, ecn_marked}}`` per second from rdma_health's ``ports``
    (keyed ``DEVICE/PORT``, their ``rates`` by meaning) and the host's rdma_facts (``devices``:
    which netdev each RDMA port is). ``ecn_marked`` is None: rdma_health keeps no rate of it."""
    out = {}
    for name, device in sorted(((rdma or {}).get("devices") or {}).items()):
        for port in device.get("ports") or []:
            seen = (ports or {}).get("%s/%s" % (name, port.get("port")))
            if port.get("netdev") and seen and seen.get("rates"):
                rates = seen["rates"]
                out[port["netdev"]] = {"cnp_sent": rates.get("cnp_sent"), "rx_pause": rates.get("rx_pause"),
                                       "ecn_marked": None}
    return out


def fleet_advice(switch, intent, rates):
    """ECN advice records of every port whose host has rates (``{host: {netdev: rates}}``)."""
    out = []
    for port in intent["ports"]:
        seen = ((rates or {}).get(port.get("host")) or {}).get(port.get("host_interface"))
        advice = ecn_advice(switch, port, seen) if seen else None
        if advice:
            out.append(advice)
    return out
