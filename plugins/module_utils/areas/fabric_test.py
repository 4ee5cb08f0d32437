# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric_test area: fabric acceptance, the proof that every rail of every node delivers.
Everything the rdma.fabric.fabric_test role decides, as pure functions with no host I/O (the
pair planner, the isolation and the verdict rules are module_utils/acceptance/_acceptance.py):

- ``settings(variables)``: the role's settings (every option of
  ``roles/fabric_test/meta/argument_specs.yml``, keys without ``fabric_test_``), the host and the
  address its peers reach it at;
- ``config_errors(settings)``: every problem, each naming the ``fabric_test_*`` variable and the value;
- ``spec(variables, render)``: the settings;
- ``node(host, spec, gathered)``: the node as the planner sees it: its address and its rails
  (``rdma.fabric.perftest`` ``state=gathered``), or the record that says why it cannot be tested;
- ``plan(nodes, spec, known_good)``: the pair rounds of the fleet, per fabric (every node against
  ``peers`` distinct peers; with ``known_good`` only the other nodes, each against known-good
  ones), each round ``{client: {server, server_tests, client_tests, rails}}``, and the nodes
  (one its fabric cannot pair carries the reason);
- ``rows(nodes, spec, outcomes, phase)``: every test's outcome judged against the thresholds;
- ``isolation(nodes, spec, rows)``: the rounds that retest each node of a failing pair against
  nodes that passed that rail;
- ``verdict(nodes, spec, rows, judged)``: per host pass or not, the findings (records in the
  health report's shape: host, check, subject = rail/device/peer, expected, actual) and the
  checks skipped with their reason.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _acceptance
from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _kinds
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings

NAME = "fabric_test"
PREFIX = "fabric_test_"
OTHER_VARIABLES = ("inventory_hostname", "ansible_host")
FLAGS = ("fail",)
# the check kinds (tool, figure, threshold, check names): one row each in acceptance/_kinds.py
KINDS = _kinds.NAMES
CHECKS = _kinds.CHECKS
_DEVICE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_ADDRESS = re.compile(r"^[0-9A-Fa-f.:]{2,45}$")
# a word of the NCCL launcher once {hosts} and {np} are put in: what rdma.fabric.nccl_test takes
# (_perftest_run._SAFE_ARG: one argv item, no shell syntax or blanks)
_LAUNCHER_WORD = re.compile(r"^[A-Za-z0-9_.,:=/+@%\-]+\Z")
_LAUNCHER_FIELDS = {"{hosts}": "h1,h2", "{np}": "2"}
# fabric_test_tcp_port + rail: the highest rail count we plan for
MAX_RAILS = 32
# the bounds of a test's time: a known-good node serves for at most this long per pair
MAX_DURATION = 600
MAX_TIMEOUT = 1800
# what perftest needs besides the test time (its sleep(1), the exchange, GPU set-up)
TIMEOUT_MARGIN = 10
# the loopback test per HCA (server and client on the node): auto where the pair tests are short
LOOPBACK = ("auto", "always", "never")
LOOPBACK_CHECKS = _kinds.LOOPBACK_CHECKS
# the settings of a node that decide how it is judged or how long its peers serve: each node's own
# inventory values, carried in its node record (never the first play host's for all)
NODE_SETTINGS = ("thresholds", "node_type", "duration", "timeout", "group", "loopback", "peers")
# facts a node's module output may never set: they would override the variables that decide how it
# (or the run) is judged, in the fabric test, onboarding and the role's own state
FORGED_PREFIXES = (PREFIX, "onboard_", "__fabric_test_", "rdma_fabric_")


def forged(fact_names):
    """The names among ``fact_names`` (a node's ``ansible_facts`` keys) that a node may not set."""
    return sorted(name for name in fact_names or () if isinstance(name, str) and name.startswith(FORGED_PREFIXES))


def settings(variables):
    """The role's settings (keys without ``fabric_test_``), ``host`` and ``ansible_host``
    (``address`` stays what the inventory set: empty means decided per node, see :func:`node`)."""
    out = role_settings(variables, PREFIX, FLAGS)
    out["host"] = variables.get("inventory_hostname")
    out["ansible_host"] = variables.get("ansible_host") or ""
    return out


def config_errors(settings):
    """Every problem of the settings, each naming the variable and the value; [] when good."""
    errors = []

    def bad(name, why):
        errors.append("fabric_test_%s=%r: %s" % (name, settings.get(name), why))

    peers = settings.get("peers")
    if not isinstance(peers, int) or isinstance(peers, bool) or peers < 1:
        bad("peers", "expected a whole number of peers, at least 1")
    kinds = settings.get("kinds")
    if not isinstance(kinds, list) or not kinds or any(k not in KINDS for k in kinds) or len(set(kinds)) != len(kinds):
        bad("kinds", "expected a list of distinct tests out of %s" % ", ".join(KINDS))
    elif _kinds.witness_side(kinds) is None:
        bad("kinds", "no side of a pair measures every one of these tests: a known-good peer could not witness "
            "them all (run them in separate plays)")
    for name, low, high in (("duration", 1, MAX_DURATION), ("timeout", 0, MAX_TIMEOUT)):
        value = settings.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < low or value > high:
            bad(name, "expected whole seconds from %d to %d" % (low, high))
    duration, timeout = settings.get("duration"), settings.get("timeout")
    if isinstance(duration, int) and isinstance(timeout, int) and 0 < timeout < duration + TIMEOUT_MARGIN \
            and not isinstance(timeout, bool):
        bad("timeout", "shorter than the test can take: fabric_test_duration=%r plus perftest's set-up needs at least "
            "%d s (0 is the duration plus 20)" % (duration, duration + TIMEOUT_MARGIN))
    port = settings.get("tcp_port")
    if not isinstance(port, int) or isinstance(port, bool) or not 1024 <= port <= 65535 - MAX_RAILS:
        bad("tcp_port", "expected a TCP port from 1024 to %d (rail i uses the port plus i)" % (65535 - MAX_RAILS))
    devices = settings.get("devices")
    if not isinstance(devices, list) or any(not isinstance(d, str) or not _DEVICE.match(d) for d in devices):
        bad("devices", "expected a list of RDMA device names such as mlx5_0")
    elif len(set(devices)) != len(devices):
        bad("devices", "a device is listed twice")
    elif len(devices) > MAX_RAILS:
        bad("devices", "at most %d rails" % MAX_RAILS)
    address = settings.get("address")
    if not isinstance(address, str) or any(c.isspace() or ord(c) < 32 for c in address) or address.startswith("-") \
            or len(address) > 253:
        bad("address", "expected a host name or address without spaces, or empty (decided per node)")
    group = settings.get("group")
    if not isinstance(group, str) or len(group) > 64 or any(ord(c) < 32 for c in group):
        bad("group", "expected a group name (up to 64 printable characters), or empty (by rail count and node type)")
    if settings.get("loopback") not in LOOPBACK:
        bad("loopback", "expected one of %s" % ", ".join(LOOPBACK))
    leaves = settings.get("leaves")
    if not isinstance(leaves, dict) or any(not isinstance(v, (str, dict)) for v in leaves.values()):
        bad("leaves", "expected {node: leaf} or {node: {rail: leaf}}")
    good = settings.get("known_good")
    if not isinstance(good, list) or any(not isinstance(h, str) or not h for h in good):
        bad("known_good", "expected a list of inventory host names")
    launcher = settings.get("nccl_launcher")
    if not isinstance(launcher, list) or any(not isinstance(a, str) for a in launcher):
        bad("nccl_launcher", "expected a list of strings (an argument vector)")
    else:
        for position, word in enumerate(launcher):
            filled = word
            for field, sample in _LAUNCHER_FIELDS.items():
                filled = filled.replace(field, sample)
            if not _LAUNCHER_WORD.match(filled):
                bad("nccl_launcher", "item %d %r: one argument per item, letters, digits and . , : = / + @ %% _ - "
                    "besides {hosts} and {np} (no shell syntax or blanks)" % (position, word))
                break
    report_dir = settings.get("report_dir")
    if not isinstance(report_dir, str) or not report_dir or any(c in report_dir for c in "\r\n\x00"):
        bad("report_dir", "expected a directory on the controller")
    verdict_file = settings.get("verdict_file")
    if verdict_file and (not isinstance(verdict_file, str) or not verdict_file.startswith("/") or "\n" in verdict_file
                         or "\x00" in verdict_file or ".." in verdict_file.split("/")):
        bad("verdict_file", "expected an absolute path without .. components, or empty for none")
    node_type = settings.get("node_type")
    if not isinstance(node_type, str):
        bad("node_type", "expected a node type name (a key of fabric_test_thresholds.by_node_type)")
    elif node_type:
        given = settings.get("thresholds")
        given = given.get("by_node_type") if isinstance(given, dict) else None
        known = set(_acceptance.THRESHOLDS["by_node_type"]) | set(given if isinstance(given, dict) else ())
        if node_type not in known:
            bad("node_type", "no thresholds for this node type: a key of fabric_test_thresholds.by_node_type or one "
                "of the defaults (%s), or empty" % ", ".join(sorted(_acceptance.THRESHOLDS["by_node_type"])))
    errors.extend(_acceptance.check_settings(settings.get("thresholds")))
    return errors


def spec(variables, render=None):
    """The spec the role works from: the settings (no files: the role installs nothing but the verdict)."""
    return {"settings": settings(variables)}


def _fabric_ports(gathered):
    """The ports of the node's fabric: the link layer most of its ports have (InfiniBand on a
    tie), each port of a device once, in device name order (mlx5_2 before mlx5_10)."""
    ports = [p for p in gathered.get("rails") or [] if p.get("link_layer")]
    if not ports:
        return []
    layers = {}
    for port in ports:
        layers[port["link_layer"]] = layers.get(port["link_layer"], 0) + 1
    layer = sorted(layers, key=lambda name: (-layers[name], name != "InfiniBand", name))[0]

    def natural(port):
        return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", port["device"])] + [port.get("ib_port") or 1]
    return sorted((p for p in ports if p["link_layer"] == layer), key=natural)


def _address(host, settings, gathered):
    """``(address, source)``: where peers reach the node for perftest's TCP exchange, decided per
    node without name resolution on the peers' side: ``fabric_test_address``, else ``ansible_host``,
    else the address the node's own facts give (the IPv4 of its default route's interface,
    rdma.fabric.perftest ``gathered.address``), else the inventory name (resolved by the peers)."""
    if settings.get("address"):
        return settings["address"], "fabric_test_address"
    if settings.get("ansible_host") and settings.get("ansible_host") != host:
        return settings["ansible_host"], "ansible_host"
    own = (gathered or {}).get("address") if isinstance(gathered, dict) else None
    if isinstance(own, str) and _ADDRESS.match(own):
        return own, "the node's default-route address"
    return host, "the inventory name"


def _unmet(host, settings, rails):
    """Thresholds of the node's own inventory that no rail can ever meet (a floor above the port's
    rate), each naming fabric_test_thresholds and the value; [] when every one can be met."""
    errors = []
    given = settings.get("thresholds") or {}
    for rail in rails:
        rate = rail.get("rate_gbps")
        if not isinstance(rate, (int, float)) or rate <= 0:
            continue
        for loopback in (False, True):
            try:
                thr = _acceptance.thresholds(given, rate, settings.get("node_type") or None, rail.get("link_layer"),
                                             loopback=loopback)
            except ValueError:
                return errors          # config_errors names the bad value
            for kind in settings.get("kinds") or _kinds.DEFAULT:
                row = _kinds.KINDS.get(kind)
                if not row or not row["fraction"] or (loopback and not row["loopback_check"]):
                    continue        # a bandwidth kind's floor (Gb/s) against the port's rate
                floor = thr.get(row["limit"])
                if floor is not None and floor > rate:
                    errors.append("fabric_test_thresholds=%r: a %s floor of %s Gb/s%s is above rail %d's port rate "
                                  "(%s, %s Gb/s): it can never be met" % (given, kind, _num(floor),
                                                                          " (loopback)" if loopback else "",
                                                                          rail["rail"], rail["device"], _num(rate)))
                    return errors
    return errors


def node(host, spec, gathered, fact_names=()):
    """``{host, address, address_source, rails, error, settings, group}`` of one node from its
    gathered facts: ``rails`` in rail order, each ``{rail, device, ib_port, link_layer, rate_gbps,
    gid_index, state, numa_node}``; ``settings`` the node's own inventory values that decide how it
    is judged (NODE_SETTINGS); ``error`` (the node cannot be tested: no RDMA device, a named device
    it does not have, no perftest, a threshold it can never meet, facts that set its fabric_test_*
    variables) is None otherwise. ``fact_names``: the names of the node's facts
    (``ansible_facts.keys()``): a module's output on the node can set facts, and facts override the
    inventory; a node whose facts set a ``fabric_test_*`` variable is refused, never judged by its
    own values."""
    settings = spec["settings"]
    address, source = _address(host, settings, gathered if isinstance(gathered, dict) else None)
    if isinstance(gathered, dict) and isinstance(gathered.get("gathered"), dict):
        address, source = _address(host, settings, gathered["gathered"])
    out = {"host": host, "address": address, "address_source": source, "rails": [], "error": None,
           "node_type": settings.get("node_type") or "", "gpus": 0,
           "settings": dict((key, settings.get(key)) for key in NODE_SETTINGS)}
    names = forged(fact_names)
    if names:
        out["error"] = ("%s: its facts set %s (from a module's output on the node; facts override the inventory): "
                        "refused, a node is judged by its inventory values only" % (host, ", ".join(names)))
        return out
    if not isinstance(gathered, dict) or gathered.get("failed"):
        out["error"] = "the node's rails could not be read: %s" % ((gathered or {}).get("msg") or "no result")
        return out
    # the module's result holds the facts under ``gathered``; a bare facts dict is taken as it is
    if isinstance(gathered.get("gathered"), dict):
        gathered = gathered["gathered"]
    tools = gathered.get("tools") or {}
    out["gpus"] = gathered.get("gpus") or 0
    every = dict((p["device"], p) for p in gathered.get("rails") or [] if p.get("device"))
    wanted = settings.get("devices") or []
    if wanted:
        missing = [d for d in wanted if d not in every]
        if missing:
            out["error"] = "fabric_test_devices=%r: %s has no RDMA device %s (it has %s)" % (
                wanted, host, ", ".join(missing), ", ".join(sorted(every)) or "none")
            return out
        ports = [every[d] for d in wanted]
    else:
        ports = _fabric_ports(gathered)
    if not ports:
        out["error"] = "%s has no RDMA device (no port under /sys/class/infiniband)" % host
        return out
    needed = [_kinds.TOOL[k] for k in settings.get("kinds") or _kinds.DEFAULT if k in _kinds.KINDS]
    absent = [t for t in needed + ["timeout"] if not tools.get(t)]
    if absent:
        out["error"] = "%s: %s not found (install perftest and coreutils)" % (host, ", ".join(absent))
    for index, port in enumerate(ports):
        out["rails"].append({"rail": index, "device": port["device"], "ib_port": port.get("ib_port") or 1,
                             "link_layer": port.get("link_layer"), "rate_gbps": port.get("rate_gbps"),
                             "gid_index": port.get("gid_index"), "state": port.get("state"),
                             "numa_node": port.get("numa_node"), "lid": port.get("lid"), "gid": port.get("gid")})
    unmet = _unmet(host, settings, out["rails"])
    if unmet and not out["error"]:
        out["error"] = unmet[0]
    out["group"] = group_of(out)
    return out


def group_of(node):
    """The group a node is planned in: nodes of one group reach each other on every rail i. Its
    fabric (the rails' link layer: pairs never cross fabrics) and ``fabric_test_group`` where the
    inventory sets it, else the rail count and the node type (a 2-rail node never meets an
    8-rail one: their rails are on different networks)."""
    fabric = fabric_of(node)
    settings = node.get("settings") or {}
    if settings.get("group"):
        return "%s/%s" % (fabric, settings["group"])
    label = "%s/%d rails" % (fabric, len(node.get("rails") or []))
    if node.get("node_type"):
        label += "/%s" % node["node_type"]
    return label


def _tests(rails, base_port, peer=None):
    tests = []
    for rail in rails:
        test = {"rail": rail["rail"], "device": rail["device"], "ib_port": rail["ib_port"],
                "tcp_port": base_port + rail["rail"]}
        if rail.get("link_layer") == "Ethernet" and rail.get("gid_index") is not None:
            test["gid_index"] = rail["gid_index"]
        if peer:
            test["peer"] = peer
        tests.append(test)
    return tests


def _judged(nodes, server, client, known_good=()):
    """The end whose inventory values judge a pair: the end that is not known-good, else the client."""
    good = set(known_good or ())
    if server not in good and client in good:
        return server
    return client


def _pair_times(nodes, hosts):
    """``(duration, timeout)`` of a pair from the inventory values of its judged nodes, within the
    limits config_errors enforces (a known-good node never serves longer than that)."""
    durations, timeouts = [], []
    for host in hosts:
        settings = (nodes.get(host) or {}).get("settings") or {}
        duration, timeout = settings.get("duration"), settings.get("timeout")
        if isinstance(duration, int) and not isinstance(duration, bool):
            durations.append(min(max(duration, 1), MAX_DURATION))
        if isinstance(timeout, int) and not isinstance(timeout, bool):
            timeouts.append(min(max(timeout, 0), MAX_TIMEOUT))
    duration = max(durations) if durations else 10
    timeout = max(timeouts) if timeouts else 0
    if timeout and timeout < duration + TIMEOUT_MARGIN:
        timeout = duration + TIMEOUT_MARGIN
    return duration, timeout


def pair(nodes, spec, server, client, rails=None, driver=None, known_good=()):
    """One round entry: the server's and the client's tests, rail i against rail i (the rails
    both have, or ``rails``), each rail on its own TCP port. ``driver``: the play host that runs
    the pair's tasks (its server and its client are delegated). ``server == client`` is the
    loopback test of a node: both ends on its own HCAs."""
    base = spec["settings"]["tcp_port"]
    count = min(len(nodes[server]["rails"]), len(nodes[client]["rails"]))
    chosen = sorted(r for r in (rails if rails is not None else range(count)) if r < count)
    judged = [h for h in (server, client) if h not in set(known_good or ())] or [client]
    duration, timeout = _pair_times(nodes, judged)
    return {"server": server, "client": client, "driver": driver or client, "loopback": server == client,
            "server_address": nodes[server]["address"], "rails": chosen, "duration": duration, "timeout": timeout,
            "server_tests": _tests([nodes[server]["rails"][r] for r in chosen], base),
            "client_tests": _tests([nodes[client]["rails"][r] for r in chosen], base, nodes[server]["address"])}


def _round(nodes, spec, pairs, known_good=()):
    """``{driver: pair}``. Who witnesses a rail: where one end is known-good, the known-good end
    runs the side that measures every kind of the pair (``_kinds.witness_side``: the ``ib_write_bw``
    client, whose server only prints the client's report; the receiver, the server, where the kinds
    are ``ib_send_bw`` alone), so that a figure the candidate alone produced never admits it; the
    candidate, a play host, drives the pair (a known-good node may be outside the play). Elsewhere
    the client drives."""
    out = {}
    good = set(known_good or ())
    side = _kinds.witness_side(spec["settings"].get("kinds") or _kinds.DEFAULT) or "client"
    for entry in pairs:
        server, client = entry[0], entry[1]
        if (server in good) != (client in good) and (client in good) != (side == "client"):
            server, client = client, server
        driver = server if (client in good and server not in good) else client
        out[driver] = pair(nodes, spec, server, client, entry[2] if len(entry) > 2 else None, driver, known_good)
    return out


def testable(nodes):
    """The hosts that can be tested (no ``error``), in name order."""
    return sorted(h for h, n in nodes.items() if not n.get("error"))


def fabric_of(node):
    """The fabric a node's rails are on (their link layer): pairs never cross fabrics."""
    return (node.get("rails") or [{}])[0].get("link_layer") or "unknown"


def _peers_wanted(nodes, hosts, default):
    values = [(nodes[h].get("settings") or {}).get("peers") for h in hosts]
    values = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v >= 1]
    return max(values) if values else default


def _loopback_wanted(node, owed):
    mode = (node.get("settings") or {}).get("loopback") or "auto"
    return mode == "always" or (mode == "auto" and owed > 0)


def plan(nodes, spec, known_good=()):
    """``{rounds, nodes}``: the fleet's pair rounds, planned per group (:func:`group_of`: a RoCE
    node never meets an InfiniBand one, a 2-rail node never an 8-rail one, ``fabric_test_group``
    overrides), and the nodes. Without ``known_good`` every testable node meets ``peers``
    distinct peers of its group (_acceptance.plan_rounds, pairs across leaves where known); with it
    every other node meets ``peers`` distinct known-good nodes of its group
    (_acceptance.onboard_rounds). A group smaller than that is no error: its nodes meet the peers
    there are, each node's record says how many peer tests are ``owed``, and (``fabric_test_loopback:
    auto``) each then runs the loopback test per HCA, server and client on the node itself. The
    rounds of the groups run side by side (round i of each in round i); a loopback joins the first
    round its node is free in."""
    k_default = spec["settings"]["peers"]
    nodes = dict((h, dict(n)) for h, n in nodes.items())
    good_set = set(known_good or ())
    groups = {}
    for host in testable(nodes):
        nodes[host]["group"] = group_of(nodes[host])
        groups.setdefault(nodes[host]["group"], []).append(host)
    if known_good:
        _shape_errors(nodes, groups, good_set)
        groups = dict((g, [h for h in hosts if not nodes[h].get("error")]) for g, hosts in groups.items())
    merged = []
    loopbacks = []
    for group in sorted(groups):
        hosts = groups[group]
        good = [h for h in hosts if h in good_set]
        judged = [h for h in hosts if h not in good_set] if known_good else hosts
        if not judged:
            continue
        k = _peers_wanted(nodes, judged, k_default)
        available = len(good) if known_good else len(hosts) - 1
        k_eff = min(k, available)
        planned = []
        if k_eff >= 1:
            if known_good:
                planned = _acceptance.onboard_rounds(judged, good, k_eff)
            else:
                leaves = dict((h, v) for h, v in (spec["settings"].get("leaves") or {}).items() if h in set(hosts))
                planned = _acceptance.plan_rounds(hosts, k_eff, leaves or None)
        for host in judged:
            nodes[host]["peers_planned"] = k_eff
            nodes[host]["owed"] = k - k_eff
            if k - k_eff > 0:
                nodes[host]["owed_reason"] = (
                    "%d of fabric_test_peers=%d pair tests owed: the group %s has %s" % (
                        k - k_eff, k, group, "no known-good node" if known_good and not good else
                        "%d known-good node%s" % (len(good), "" if len(good) == 1 else "s") if known_good else
                        "%d other node%s" % (len(hosts) - 1, "" if len(hosts) == 2 else "s")))
            if _loopback_wanted(nodes[host], k - k_eff):
                loopbacks.append(host)
                nodes[host]["loopback"] = True
        for index, entries in enumerate(planned):
            if index == len(merged):
                merged.append([])
            merged[index].extend(entries)
    rounds = [_round(nodes, spec, r, known_good) for r in merged]
    for host in loopbacks:
        for index, entries in enumerate(rounds):
            busy = set(h for e in entries.values() for h in (e["server"], e["client"], e["driver"]))
            if host not in busy:
                entries[host] = pair(nodes, spec, host, host, None, host, known_good)
                break
        else:
            rounds.append({host: pair(nodes, spec, host, host, None, host, known_good)})
    return {"rounds": rounds, "nodes": nodes}


def _shape_errors(nodes, groups, good_set):
    """Onboarding: a candidate's group comes from what it reports (its rails); one that reports a
    shape no known-good node of its node type has (a rail fewer, another link layer) would land
    in a group of its own and pass on its own loopback. Where known-good nodes of its declared
    ``fabric_test_node_type`` exist in other groups, it is refused by name instead."""
    good_groups = set(g for g, hosts in groups.items() if any(h in good_set for h in hosts))
    by_type = {}
    for group, hosts in groups.items():
        for host in hosts:
            if host in good_set and nodes[host].get("node_type"):
                by_type.setdefault(nodes[host]["node_type"], {}).setdefault(group, host)
    for group, hosts in groups.items():
        if group in good_groups:
            continue
        for host in hosts:
            node_type = nodes[host].get("node_type")
            if host in good_set or not node_type or node_type not in by_type:
                continue
            shapes = ", ".join("%s (%s)" % (g, h) for g, h in sorted(by_type[node_type].items()))
            nodes[host]["error"] = (
                "%s reports %s where the known-good nodes of fabric_test_node_type=%r are %s: a rail missing or "
                "on another fabric; refused (a node's own report never puts it in a group of its own)"
                % (host, group, node_type, shapes))


def rounds(nodes, spec, known_good=()):
    """The rounds of :func:`plan`."""
    return plan(nodes, spec, known_good)["rounds"]


def _threshold(nodes, spec, server, client, rail, known_good=()):
    """``(rate, thresholds)`` of one rail of a pair, from the judged node's own inventory values
    (its ``fabric_test_thresholds`` and node type, never the first play host's). The rate: the
    known-good end's where there is one (a candidate's self-reported rate never sets its own bar),
    else the faster end's (a port that trained below its peer's rate must not lower the bar)."""
    judged = _judged(nodes, server, client, known_good)
    good = [h for h in (server, client) if h in set(known_good or ()) and h != judged]
    sources = good or [server, client]
    rates = [nodes[h]["rails"][rail].get("rate_gbps") for h in sources]
    rates = [r for r in rates if isinstance(r, (int, float)) and r > 0]
    rate = max(rates) if rates else None
    settings = nodes[judged].get("settings") or spec["settings"]
    return rate, _acceptance.thresholds(settings.get("thresholds") or {}, rate, settings.get("node_type") or None,
                                        nodes[judged]["rails"][rail].get("link_layer"), loopback=server == client)


def _witness(server, client, known_good):
    """The side (``client``/``server``) the known-good end of a pair ran, None where neither or both are."""
    good = set(known_good or ())
    if (server in good) == (client in good) or server == client:
        return None
    return "client" if client in good else "server"


def rows(nodes, spec, outcomes, phase="round", known_good=()):
    """Every test of a round as a row for _acceptance.verdicts: ``{server, client, rail, check,
    ok, figure, expected, error, phase}``. ``outcomes``: ``[{client, server, client_results,
    server_results}]`` (perftest ``results`` of the client and of the server's collect). A test
    the measuring side did not report (the server could not start, the client host failed) is a
    failed row with the reason, never a pass. The figure is that of the side that measures
    (``_kinds.figure_side``: the kind's first measuring side; where one end is known-good, the
    side that end ran, and none when that side does not measure: a figure the candidate alone
    printed never admits it); a loopback (server and client the same node) is a
    ``perftest.loopback_*`` row. Each kind is judged against its own threshold (its row's ``limit``)."""
    out = []
    kinds = spec["settings"]["kinds"]
    for outcome in outcomes:
        client, server = outcome["client"], outcome["server"]
        loopback = client == server
        witness = _witness(server, client, known_good)
        planned = outcome.get("rails") or []
        by_side = {"client": dict(((r.get("rail"), r.get("kind")), r) for r in outcome.get("client_results") or []),
                   "server": dict(((r.get("rail"), r.get("kind")), r) for r in outcome.get("server_results") or [])}
        hosts = {"client": client, "server": server}
        for rail in planned:
            rate, thr = _threshold(nodes, spec, server, client, rail, known_good)
            for kind in kinds:
                kind_row = _kinds.row(kind)
                if loopback and not kind_row["loopback_check"]:
                    continue
                row = {"server": server, "client": client, "rail": rail, "phase": phase,
                       "check": _kinds.check_of(kind, loopback), "ok": False, "figure": None, "error": None,
                       "rate_gbps": rate, "device": nodes[client]["rails"][rail]["device"],
                       "peer_device": nodes[server]["rails"][rail]["device"], "expected": _kinds.expected(kind, thr)}
                side = _kinds.figure_side(kind, witness)
                if side is None:
                    row["error"] = ("no witness: the known-good %s ran the %s side of %s, which measures nothing "
                                    "of its own; a figure the candidate alone printed never admits it"
                                    % (hosts[witness], witness, kind_row["tool"]))
                    out.append(row)
                    continue
                other = "server" if side == "client" else "client"
                result = by_side[side].get((rail, kind))
                ran = by_side["client"].get((rail, kind)) or result or {}
                row["pinning"] = ran.get("pinning")
                row["gpu"] = ran.get("gpu")
                row["measured_by"] = "%s %s" % (side, hosts[side])
                if result is None:
                    row["error"] = outcome.get("error") or "the %s reported no %s result" % (side, kind)
                    out.append(row)
                    continue
                elsewhere = _reached_elsewhere(result, nodes[hosts[other]]["rails"][rail], hosts[other], side)
                if elsewhere and result.get("ok"):
                    row["error"] = elsewhere
                elif not result.get("ok"):
                    # both ends' own words: a down port on the server side shows only there (its
                    # client just cannot connect)
                    errors = [(who, (by_side[who].get((rail, kind)) or {}).get("error")) for who in ("client", "server")]
                    said = [(who, e) for who, e in errors if e]
                    row["error"] = "; ".join("%s %s: %s" % (who, hosts[who], e) for who, e in said) \
                        if len(said) > 1 else (said[0][1] if said else "rc=%s" % result.get("rc"))
                else:
                    row["figure"] = result.get(kind_row["figure"])
                    row["ok"] = _kinds.passes(kind, row["figure"], thr)
                out.append(row)
    return out


def _same_gid(one, two):
    try:
        return ipaddress.ip_address(one) == ipaddress.ip_address(two)
    except ValueError:
        return False


def _reached_elsewhere(result, rail, server, side="client"):
    """Why the measuring side (``side``) did not test the other end's (``server``'s) rail: the LID
    (InfiniBand) or GID (RoCE) its perftest exchanged with is not the one that end's rail has (an
    out-of-band address that leads to another HCA, another node); None when it matches or nothing tells."""
    remote = result.get("remote") or {}
    if rail.get("link_layer") == "InfiniBand":
        lid = remote.get("lid")
        if isinstance(lid, int) and isinstance(rail.get("lid"), int) and lid and rail["lid"] and lid != rail["lid"]:
            return ("the %s reached LID %d, not %s's %s (LID %d): its out-of-band address leads to another HCA"
                    % (side, lid, server, rail["device"], rail["lid"]))
        return None
    gid, own = remote.get("gid"), rail.get("gid")
    if gid and own and not _same_gid(gid, own):
        return ("the %s reached GID %s, not %s's %s (GID %s): its out-of-band address leads to another HCA"
                % (side, gid, server, rail["device"], own))
    return None


def _num(value):
    if isinstance(value, float):
        return ("%.2f" % value).rstrip("0").rstrip(".")
    return str(value)


def isolation(nodes, spec, all_rows, known_good=()):
    """The retest rounds: each node of a pair that failed a rail against a node that passed
    that rail (_acceptance.isolation_rounds); [] when nothing failed. A loopback row names its
    node by itself: it is never retested."""
    failed, passed = {}, {}
    all_rows = [row for row in all_rows if row["server"] != row["client"]]
    for row in all_rows:
        key = (row["server"], row["client"])
        if row["ok"]:
            continue
        failed.setdefault(key, set()).add(row["rail"])
    for row in all_rows:
        if (row["server"], row["client"]) not in failed:
            for host in (row["server"], row["client"]):
                passed.setdefault(row["rail"], set()).add(host)
    for host in known_good or ():
        if host in nodes and not nodes[host].get("error"):
            for rail in range(len(nodes[host]["rails"])):
                passed.setdefault(rail, set()).add(host)
    if not failed:
        return []
    planned = _acceptance.isolation_rounds(dict((k, sorted(v)) for k, v in failed.items()), passed)
    # known-good nodes are not judged: a retest between two of them is not run
    good = set(known_good or ())
    planned = [[e for e in r if not (e[0] in good and e[1] in good)] for r in planned]
    return [_round(nodes, spec, r, known_good) for r in planned if r]


def nccl_launcher(nodes, spec, client, server):
    """The launcher argument vector of a pair: ``{hosts}`` the two addresses, ``{np}`` the
    ranks (the GPUs of both nodes, one rank each)."""
    hosts = "%s,%s" % (nodes[client]["address"], nodes[server]["address"])
    ranks = str(max(2, (nodes[client].get("gpus") or 1) + (nodes[server].get("gpus") or 1)))
    return [w.replace("{hosts}", hosts).replace("{np}", ranks) for w in spec["settings"].get("nccl_launcher") or []]


def _nccl_findings(nodes, spec, outcome, judged, known_good, findings, skipped):
    """One pair's all_reduce_perf result: skipped with its reason, failed with the tool's error,
    or below ``nccl_busbw_min_gbps`` (GB/s, nccl-tests' unit; not judged when None)."""
    client, server, result = outcome.get("client"), outcome.get("server"), outcome.get("result") or {}
    hosts = [h for h in (client, server) if h in judged and h not in set(known_good or ())]
    subject = "pair %s-%s" % (client, server)
    if result.get("skipped") or not result:
        for host in hosts:
            skipped.append({"host": host, "check": "nccl.all_reduce", "subject": subject,
                            "reason": result.get("reason") or result.get("msg") or "the NCCL test did not run"})
        return
    own = nodes[client].get("settings") or spec["settings"]
    thr = _acceptance.thresholds(own.get("thresholds") or {}, None,
                                 nodes[client].get("node_type") or None)["nccl_busbw_min_gbps"]
    figure = result.get("avg_busbw_gbps")
    if result.get("ok") and (thr is None or (figure is not None and figure >= thr)):
        return
    actual = result.get("error") or result.get("msg") if not result.get("ok") else "%s GB/s" % _num(figure)
    for host in hosts:
        findings.append(_finding(host, "nccl.all_reduce", subject,
                                 ">= %s GB/s bus bandwidth" % _num(thr) if thr is not None else "a run without errors",
                                 actual or "rc=%s" % result.get("rc"), "all_reduce_perf across the pair",
                                 "run the pair's perftest rows first: a rail that fails there fails NCCL"))


def _loopback_findings(nodes, rows_, judged, findings):
    for row in rows_:
        host = row["client"]
        if row["ok"] or host not in judged:
            continue
        figure = row.get("figure")
        unit = (_kinds.by_check(row["check"])[0] or {}).get("unit", "")
        what = row.get("error") or ("%s %s" % (_num(round(figure, 2)), unit) if isinstance(figure, (int, float))
                                    else "no figure")
        findings.append(_finding(
            host, row["check"], "rail%s/%s loopback" % (row["rail"], row.get("device")), row.get("expected") or "pass",
            "fail: %s" % what, "the HCA's loopback (server and client on the node, its PCIe%s path) fails on its own"
            % (" and GPU" if (nodes.get(host) or {}).get("gpus") else ""),
            "check the HCA %s (rail %s): its PCIe link, firmware and GPU path; then run the fabric test again"
            % (row.get("device"), row["rail"])))


def verdict(nodes, spec, all_rows, judged, known_good=(), nccl=()):
    """``{passed: [hosts], failed: {host: [findings]}, findings, skipped, provisional, nodes, checks}``
    (``checks``: the checks of the rows, those that ran): the
    verdict of every host of ``judged`` (known-good nodes serve but are not judged). A node that
    cannot be tested fails with the reason; a rail a node failed with nodes that passed it fails the
    node, named with the rail, the device, the figure and the peers; a failed loopback fails it.
    A node that passes with pair tests still owed (a group smaller than ``fabric_test_peers``) is
    in ``provisional`` with the count and the reason, and a skipped record says so: passed on a
    loopback alone, a node is admitted provisionally."""
    findings, skipped = [], []
    for host in judged:
        error = (nodes.get(host) or {}).get("error")
        if error:
            findings.append(_finding(host, "fabric_test.node", host, "testable", error,
                                     "the node has no rail that can be tested", "ansible HOST -m rdma.fabric.perftest"))
    tested = set(h for row in all_rows for h in (row["server"], row["client"]))
    for host in judged:
        if host not in tested and not (nodes.get(host) or {}).get("error"):
            findings.append(_finding(host, "fabric_test.node", host, "at least one test", "no test ran",
                                     "the plan gave the node no pair and no loopback test (fabric_test_loopback: never "
                                     "in a group with no peer?)", "set fabric_test_loopback: auto, or add peers"))
    pair_rows = [row for row in all_rows if row["server"] != row["client"]]
    _loopback_findings(nodes, [row for row in all_rows if row["server"] == row["client"]], judged, findings)
    expected = {}
    for row in pair_rows:
        expected.setdefault((row["client"], row["rail"], row["check"]), row.get("expected"))
        expected.setdefault((row["server"], row["rail"], row["check"]), row.get("expected"))
    for item in _acceptance.verdicts(pair_rows):
        host = item["node"]
        if item["verdict"] == "pass" or host not in judged or host in set(known_good or ()):
            continue
        rail = item["rail"]
        rails = (nodes.get(host) or {}).get("rails") or []
        device = rails[rail]["device"] if isinstance(rail, int) and rail < len(rails) else "?"
        unit = (_kinds.by_check(item["check"])[0] or {}).get("unit", "")
        bad = []
        for test in item.get("tests") or []:
            if test.get("ok"):
                continue
            figure = test.get("figure")
            what = test.get("error") or ("%s %s" % (_num(round(figure, 2)), unit) if isinstance(figure, (int, float))
                                         else "no figure")
            bad.append("%s with %s%s" % (what, test.get("peer"), " (isolation)" if test.get("phase") == "isolation" else ""))
        fail = item["verdict"] == "fail"
        findings.append(_finding(
            host, item["check"], "rail%s/%s" % (rail, device),
            "%s with a peer that passes" % (expected.get((host, rail, item["check"])) or "pass"),
            "%s: %s" % (item["verdict"], "; ".join(bad)), item.get("reason") or "",
            "clean or replace the optic and cable of %s (rail %s), check its switch port; then run the fabric test again"
            % (device, rail) if fail else "test the node against more peers (fabric_test_peers)",
            "error" if fail else "warning"))
    for outcome in nccl or ():
        _nccl_findings(nodes, spec, outcome, judged, known_good, findings, skipped)
    if not spec["settings"].get("nccl_launcher"):
        for host in judged:
            if not (nodes.get(host) or {}).get("error"):
                skipped.append({"host": host, "check": "nccl.all_reduce", "subject": "pairs",
                                "reason": "no launcher configured (fabric_test_nccl_launcher): the NCCL test did not run"})
    provisional = {}
    for host in judged:
        node_ = nodes.get(host) or {}
        if node_.get("error") or not node_.get("owed"):
            continue
        provisional[host] = {"owed": node_["owed"], "peers_tested": node_.get("peers_planned") or 0,
                             "reason": node_.get("owed_reason") or "", "loopback": bool(node_.get("loopback"))}
        skipped.append({"host": host, "check": "perftest.pair", "subject": "peers",
                        "reason": "%s%s" % (node_.get("owed_reason") or "%d pair tests owed" % node_["owed"],
                                            "; the loopback test stands in until then" if node_.get("loopback")
                                            else "")})
    failed = {}
    for finding in findings:
        failed.setdefault(finding["host"], []).append(finding)
    passed = [h for h in judged if h not in failed]
    provisional = dict((h, v) for h, v in provisional.items() if h not in failed)
    return {"passed": sorted(passed), "failed": failed, "findings": findings, "skipped": skipped,
            "provisional": provisional, "nodes": results(nodes, all_rows, judged, failed, provisional),
            "checks": sorted(set(row["check"] for row in all_rows))}


def results(nodes, all_rows, judged, failed=None, provisional=None):
    """One line per judged node for the recap: its group, address (and where it came from), rails,
    the lowest bandwidth and the highest latency its tests measured (pair tests and loopback apart),
    its peers, GPU memory or not, pinning, and its verdict."""
    out = []
    for host in sorted(judged):
        node_ = nodes.get(host) or {}
        mine = [r for r in all_rows if host in (r["server"], r["client"])]
        pairs = [r for r in mine if r["server"] != r["client"]]
        loops = [r for r in mine if r["server"] == r["client"]]

        def low(rows_, check):
            values = [r["figure"] for r in rows_ if r["check"] == check and isinstance(r.get("figure"), (int, float))]
            return _num(round(min(values), 1)) if values else "-"

        def high(rows_, check):
            values = [r["figure"] for r in rows_ if r["check"] == check and isinstance(r.get("figure"), (int, float))]
            return _num(round(max(values), 2)) if values else "-"
        pinned = sorted(set(str(r.get("pinning") or "none").split(":", 1)[0] for r in mine if r["client"] == host))
        verdict_ = "fail" if host in (failed or {}) else "pass (provisional)" if host in (provisional or {}) else "pass"
        out.append({"host": host, "group": node_.get("group") or "-", "address": node_.get("address") or "-",
                    "rails": len(node_.get("rails") or []),
                    "bw_gbps": low(pairs, CHECKS["bw"]), "lat_us": high(pairs, CHECKS["lat"]),
                    "loopback_bw_gbps": low(loops, LOOPBACK_CHECKS["bw"]),
                    "peers": ",".join(sorted(set(r["server"] if r["client"] == host else r["client"] for r in pairs)))
                    or "-", "owed": node_.get("owed") or 0,
                    "gpu_memory": "yes" if any(r.get("gpu") for r in mine) else "no",
                    "pinning": ",".join(pinned) or "-", "verdict": verdict_})
    return out


def _finding(host, check, subject, expected, actual, diagnosis, remedy, severity="error"):
    return {"host": host, "check": check, "subject": subject, "severity": severity, "expected": expected,
            "actual": actual, "diagnosis": diagnosis, "remedy": remedy}


def config_warnings(settings):
    """The legal settings that in effect turn a check off, each naming the variable and the value
    (``fabric_test_thresholds.bw_fraction=0.0001: below 0.5: ...``); [] when none. They are warned
    about, not refused (config_errors refuses what cannot be met)."""
    return _acceptance.check_warnings((settings or {}).get("thresholds"))
