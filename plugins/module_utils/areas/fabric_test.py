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

import re

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _acceptance
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings

NAME = "fabric_test"
PREFIX = "fabric_test_"
OTHER_VARIABLES = ("inventory_hostname", "ansible_host")
FLAGS = ("fail",)
KINDS = ("bw", "lat")
CHECKS = {"bw": "perftest.write_bw", "lat": "perftest.write_lat"}
_DEVICE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# a word of the NCCL launcher once {hosts} and {np} are put in: what rdma.fabric.nccl_test takes
# (_perftest_run._SAFE_ARG: one argv item, no shell syntax or blanks)
_LAUNCHER_WORD = re.compile(r"^[A-Za-z0-9_.,:=/+@%\-]+\Z")
_LAUNCHER_FIELDS = {"{hosts}": "h1,h2", "{np}": "2"}
# fabric_test_tcp_port + rail: the highest rail count we plan for
MAX_RAILS = 32


def settings(variables):
    """The role's settings (keys without ``fabric_test_``), ``host`` and ``address``."""
    out = role_settings(variables, PREFIX, FLAGS)
    out["host"] = variables.get("inventory_hostname")
    out["address"] = out.get("address") or variables.get("ansible_host") or out["host"]
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
    for name, low in (("duration", 1), ("timeout", 0)):
        value = settings.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < low or value > 3600:
            bad(name, "expected whole seconds from %d to 3600" % low)
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
    if not isinstance(address, str) or not address or any(c.isspace() for c in address):
        bad("address", "expected a host name or address without spaces")
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
    if verdict_file and (not isinstance(verdict_file, str) or not verdict_file.startswith("/") or "\n" in verdict_file):
        bad("verdict_file", "expected an absolute path, or empty for none")
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


def node(host, spec, gathered):
    """``{host, address, rails, error}`` of one node from its gathered facts: ``rails`` in rail
    order, each ``{rail, device, ib_port, link_layer, rate_gbps, gid_index, state, numa_node}``;
    ``error`` (the node cannot be tested: no RDMA device, a named device it does not have, no
    perftest) is None otherwise."""
    settings = spec["settings"]
    out = {"host": host, "address": settings.get("address") or host, "rails": [], "error": None,
           "node_type": settings.get("node_type") or "", "gpus": 0}
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
    needed = ["ib_write_bw" if k == "bw" else "ib_write_lat" for k in settings.get("kinds") or KINDS]
    absent = [t for t in needed + ["timeout"] if not tools.get(t)]
    if absent:
        out["error"] = "%s: %s not found (install perftest and coreutils)" % (host, ", ".join(absent))
    for index, port in enumerate(ports):
        out["rails"].append({"rail": index, "device": port["device"], "ib_port": port.get("ib_port") or 1,
                             "link_layer": port.get("link_layer"), "rate_gbps": port.get("rate_gbps"),
                             "gid_index": port.get("gid_index"), "state": port.get("state"),
                             "numa_node": port.get("numa_node")})
    return out


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


def pair(nodes, spec, server, client, rails=None):
    """One round entry: the server's and the client's tests, rail i against rail i (the rails
    both have, or ``rails``), each rail on its own TCP port."""
    base = spec["settings"]["tcp_port"]
    count = min(len(nodes[server]["rails"]), len(nodes[client]["rails"]))
    chosen = sorted(r for r in (rails if rails is not None else range(count)) if r < count)
    return {"server": server, "server_address": nodes[server]["address"], "rails": chosen,
            "server_tests": _tests([nodes[server]["rails"][r] for r in chosen], base),
            "client_tests": _tests([nodes[client]["rails"][r] for r in chosen], base, nodes[server]["address"])}


def _round(nodes, spec, pairs, known_good=()):
    """``{client: pair}``; the client drives the pair from its own play host, so a known-good
    node (which may be outside the play) serves whenever its peer is not known-good."""
    out = {}
    good = set(known_good or ())
    for entry in pairs:
        server, client = entry[0], entry[1]
        if client in good and server not in good:
            server, client = client, server
        out[client] = pair(nodes, spec, server, client, entry[2] if len(entry) > 2 else None)
    return out


def testable(nodes):
    """The hosts that can be tested (no ``error``), in name order."""
    return sorted(h for h, n in nodes.items() if not n.get("error"))


def fabric_of(node):
    """The fabric a node's rails are on (their link layer): pairs never cross fabrics."""
    return (node.get("rails") or [{}])[0].get("link_layer") or "unknown"


def plan(nodes, spec, known_good=()):
    """``{rounds, nodes}``: the fleet's pair rounds, planned per fabric (a RoCE node is never
    paired with an InfiniBand one), and the nodes, where a node its fabric cannot pair (too few
    peers, too few known-good ones) carries the planner's error naming ``fabric_test_peers``.
    Without ``known_good`` every testable node meets ``peers`` distinct peers of its fabric
    (_acceptance.plan_rounds, pairs across leaves where known); with it every other node meets
    ``peers`` distinct known-good nodes of its fabric (_acceptance.onboard_rounds). The rounds of
    the fabrics run side by side (round i of each in round i)."""
    k = spec["settings"]["peers"]
    nodes = dict((h, dict(n)) for h, n in nodes.items())
    good_set = set(known_good or ())
    groups = {}
    for host in testable(nodes):
        groups.setdefault(fabric_of(nodes[host]), []).append(host)
    merged = []
    for fabric in sorted(groups):
        hosts = groups[fabric]
        good = [h for h in hosts if h in good_set]
        try:
            if known_good:
                new = [h for h in hosts if h not in good_set]
                planned = _acceptance.onboard_rounds(new, good, k) if new else []
            else:
                leaves = dict((h, v) for h, v in (spec["settings"].get("leaves") or {}).items() if h in set(hosts))
                planned = _acceptance.plan_rounds(hosts, k, leaves or None)
        except ValueError as exc:
            for host in hosts:
                if host not in good_set:
                    nodes[host]["error"] = "%s fabric of %d node(s): %s" % (fabric, len(hosts), exc)
            continue
        for index, entries in enumerate(planned):
            if index == len(merged):
                merged.append([])
            merged[index].extend(entries)
    return {"rounds": [_round(nodes, spec, r, known_good) for r in merged], "nodes": nodes}


def rounds(nodes, spec, known_good=()):
    """The rounds of :func:`plan`."""
    return plan(nodes, spec, known_good)["rounds"]


def _threshold(nodes, spec, server, client, rail):
    rates = [nodes[h]["rails"][rail].get("rate_gbps") for h in (server, client)]
    rates = [r for r in rates if isinstance(r, (int, float)) and r > 0]
    # the faster end's rate: a port that trained below its peer's rate must not lower the bar
    rate = max(rates) if rates else None
    return rate, _acceptance.thresholds(spec["settings"].get("thresholds") or {}, rate,
                                        nodes[client].get("node_type") or None,
                                        nodes[client]["rails"][rail].get("link_layer"))


def rows(nodes, spec, outcomes, phase="round"):
    """Every test of a round as a row for _acceptance.verdicts: ``{server, client, rail, check,
    ok, figure, expected, error, phase}``. ``outcomes``: ``[{client, server, client_results,
    server_results}]`` (perftest ``results`` of the client and of the server's collect). A test
    the client did not report (the server could not start, the client host failed) is a failed
    row with the reason, never a pass."""
    out = []
    kinds = spec["settings"]["kinds"]
    for outcome in outcomes:
        client, server = outcome["client"], outcome["server"]
        planned = outcome.get("rails") or []
        by_key = dict(((r.get("rail"), r.get("kind")), r) for r in outcome.get("client_results") or [])
        served = dict(((r.get("rail"), r.get("kind")), r) for r in outcome.get("server_results") or [])
        for rail in planned:
            rate, thr = _threshold(nodes, spec, server, client, rail)
            for kind in kinds:
                row = {"server": server, "client": client, "rail": rail, "check": CHECKS[kind], "phase": phase,
                       "ok": False, "figure": None, "error": None, "rate_gbps": rate,
                       "device": nodes[client]["rails"][rail]["device"],
                       "peer_device": nodes[server]["rails"][rail]["device"]}
                result = by_key.get((rail, kind))
                if result is None:
                    row["error"] = outcome.get("error") or "the client reported no %s result" % kind
                    row["expected"] = _expected(kind, thr)
                    out.append(row)
                    continue
                row["expected"] = _expected(kind, thr)
                if not result.get("ok"):
                    # both ends' own words: a down port on the server side shows only there (its
                    # client just cannot connect)
                    server_error = (served.get((rail, kind)) or {}).get("error")
                    said = [e for e in (result.get("error"), server_error) if e]
                    row["error"] = "; ".join("%s: %s" % (who, e) for who, e in zip(
                        ("client %s" % client, "server %s" % server), (result.get("error"), server_error)) if e) \
                        if len(said) > 1 else (said[0] if said else "rc=%s" % result.get("rc"))
                elif kind == "bw":
                    row["figure"] = result.get("bw_gbps")
                    row["ok"] = row["figure"] is not None and row["figure"] >= thr["bw_min_gbps"]
                else:
                    row["figure"] = result.get("lat_typical_us")
                    row["ok"] = row["figure"] is not None and row["figure"] <= thr["lat_max_us"]
                out.append(row)
    return out


def _expected(kind, thr):
    if kind == "bw":
        return ">= %s Gb/s" % _num(thr.get("bw_min_gbps"))
    return "<= %s us" % _num(thr.get("lat_max_us"))


def _num(value):
    if isinstance(value, float):
        return ("%.2f" % value).rstrip("0").rstrip(".")
    return str(value)


def isolation(nodes, spec, all_rows, known_good=()):
    """The retest rounds: each node of a pair that failed a rail against a node that passed
    that rail (_acceptance.isolation_rounds); [] when nothing failed."""
    failed, passed = {}, {}
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
    thr = _acceptance.thresholds(spec["settings"].get("thresholds") or {}, None,
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


def verdict(nodes, spec, all_rows, judged, known_good=(), nccl=()):
    """``{passed: [hosts], failed: {host: [findings]}, findings, skipped}``: the verdict of every
    host of ``judged`` (known-good nodes serve but are not judged). A node that cannot be tested
    fails with the reason; a rail a node failed with nodes that passed it fails the node, named
    with the rail, the device, the figure and the peers."""
    findings, skipped = [], []
    for host in judged:
        error = (nodes.get(host) or {}).get("error")
        if error:
            findings.append(_finding(host, "fabric_test.node", host, "testable", error,
                                     "the node has no rail that can be tested", "ansible HOST -m rdma.fabric.perftest"))
    expected = {}
    for row in all_rows:
        expected.setdefault((row["client"], row["rail"], row["check"]), row.get("expected"))
        expected.setdefault((row["server"], row["rail"], row["check"]), row.get("expected"))
    for item in _acceptance.verdicts(all_rows):
        host = item["node"]
        if item["verdict"] == "pass" or host not in judged or host in set(known_good or ()):
            continue
        rail = item["rail"]
        rails = (nodes.get(host) or {}).get("rails") or []
        device = rails[rail]["device"] if isinstance(rail, int) and rail < len(rails) else "?"
        unit = "Gb/s" if item["check"] == CHECKS["bw"] else "us"
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
    failed = {}
    for finding in findings:
        failed.setdefault(finding["host"], []).append(finding)
    passed = [h for h in judged if h not in failed]
    return {"passed": sorted(passed), "failed": failed, "findings": findings, "skipped": skipped}


def _finding(host, check, subject, expected, actual, diagnosis, remedy, severity="error"):
    return {"host": host, "check": check, "subject": subject, "severity": severity, "expected": expected,
            "actual": actual, "diagnosis": diagnosis, "remedy": remedy}
