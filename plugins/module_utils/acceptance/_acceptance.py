# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric acceptance on the controller: which nodes test against which, in rounds; which node
and rail a failing pair points at; the thresholds a figure is judged against. Pure functions,
no I/O (docs/fabric_test.md "Planning" and "Thresholds").

- ``plan_rounds(nodes, k, leaves)``: pair tests for a whole fleet, ``[[(server, client), ...], ...]``;
  every node meets at least ``k`` distinct peers, nobody is in two tests of one round, no pair
  twice, at most ``k + 1`` rounds whatever the fleet size.
- ``onboard_rounds(new, good, k)``: every new node against ``k`` distinct known-good nodes.
- ``isolation_rounds(failed, passed, k)``: each node of a failing pair against nodes that
  passed the same rail, ``[[(server, client, [rails]), ...], ...]``.
- ``verdicts(results)``: per (node, rail, check) ``pass``/``fail``/``undetermined`` with the
  evidence (areas/fabric_test.py ``verdict`` turns them into findings: the one judging path).
- ``THRESHOLDS``, ``thresholds(settings, rate_gbps, node_type)``, ``check_settings(settings)``:
  the figures a test must reach, where each comes from. The keys are those of the check kinds
  (``_kinds.THRESHOLD_KEYS``: a kind's row names its threshold, its fraction of the port rate and
  its defaults), plus nccl-tests' bus bandwidth.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _kinds as K

VARIABLE = "fabric_test_peers"
SETTINGS_VARIABLE = "fabric_test_thresholds"

# --------------------------------------------------------------------------- thresholds
# Defaults, with where each figure comes from (docs/fabric_test.md "Thresholds"):
# - bw_fraction 0.9: Mellanox/ngc_multinode_perf (NGC-Ready multinode certification) passes a
#   perftest bandwidth test at 90% of the port rate (common.sh: BW_PASS_RATE = 0.9 * port rate,
#   times 2 for its bidirectional runs; README "Pass criterion is 90% of the port link speed",
#   commit 7d08085). At 200 Gb/s (HDR) that is 180 Gb/s, the floor azurehpc-health-checks sets for
#   ND A100 v4 (conf/nd96asr_v4.conf `check_ib_bw_gdr 180.0`); at 400 Gb/s (NDR) 360 Gb/s, its
#   floor for ND H200 v5 (conf/nd96isr_h200_v5.conf `check_ib_bw_gdr 360`; ND H100 v5 uses 380,
#   conf/nd96isr_h100_v5.conf, commit 0e0a1ac). Azure's figures are GPUDirect loopback tests.
# - lat_max_us: ngc_multinode_perf fails ib_write_lat/ib_send_lat above 2.5 us average
#   (4.5 us for read; common.sh LAT_PASS_VAL, issue Mellanox/ngc_multinode_perf#84) -- InfiniBand;
#   oracle-quickstart/oci-hpc fails ib_write_lat (8 bytes, t_avg) above 5 us on its RoCE shapes
#   (playbooks/roles/healthchecks/files/multi_node_active_healthcheck.py, ib_write_lat 5; 9 on
#   GB200 shapes; commit b5285a6) -- Ethernet (RoCE).
# - nccl_busbw_min_gbps: all_reduce_perf "Avg bus bandwidth" across nodes, in GB/s (gigabytes, the
#   unit nccl-tests prints), per node type. No default: it depends on the GPUs and on every rail's
#   rate. The by_node_type entries are oci-hpc's multi-node NCCL floors for its shapes (same file,
#   "threshold"), named as OCI names them; give your own in fabric_test_thresholds.by_node_type.
THRESHOLDS = dict([(row["fraction"], row["fraction_default"]) for row in K.ROWS if row["fraction"]]
                  + [(row["limit"], None) for row in K.ROWS]   # None: from the fraction, or by link type
                  + [(row["limit"] + "_by_link", dict(row["limit_by_link"])) for row in K.ROWS if row["limit_by_link"]]
                  + [("nccl_busbw_min_gbps", None), ("by_rate", {})])
THRESHOLDS["by_node_type"] = {
    "BM.GPU4.8": {"nccl_busbw_min_gbps": 185.0},
    "BM.GPU.A100-v2.8": {"nccl_busbw_min_gbps": 185.0},
    "BM.GPU.B4.8": {"nccl_busbw_min_gbps": 185.0},
    "BM.GPU.H100.8": {"nccl_busbw_min_gbps": 440.0},
    "BM.GPU.H200.8": {"nccl_busbw_min_gbps": 440.0},
    "BM.GPU.B200.8": {"nccl_busbw_min_gbps": 440.0},
}
# the keys one layer (top level, by_rate.RATE, by_node_type.NAME) may set: every kind's
LAYER_KEYS = K.LAYER_KEYS
SETTINGS_KEYS = LAYER_KEYS + ("by_rate", "by_node_type", "loopback")
# the loopback test (server and client on one node, its HCA and PCIe/GPU path only): its own
# layer over the pair thresholds, applied last (Azure's per-HCA GPUDirect loopback floors are
# absolute: 380 Gb/s H100 NDR, 360 H200, 180 HDR; by default the same fraction of the port rate);
# the keys of the kinds that have a loopback variant
LOOPBACK_KEYS = K.LOOPBACK_KEYS


def _number(value):
    """A float from a number or a numeric string; None when it is neither (booleans are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    if math.isnan(number) or math.isinf(number):
        return None
    return number


def _layer_errors(layer, where):
    errors = []
    if not isinstance(layer, dict):
        return ["%s=%r: expected a dict of %s" % (where, layer, ", ".join(LAYER_KEYS))]
    for key in sorted(layer, key=str):
        value = layer[key]
        name = "%s.%s" % (where, key)
        if key not in LAYER_KEYS:
            errors.append("%s: unknown setting; expected one of %s" % (name, ", ".join(LAYER_KEYS)))
            continue
        if value is None:
            continue
        number = _number(value)
        if K.THRESHOLD_KEYS[key]["type"] == "fraction":
            if number is None or not 0 < number <= 1:
                errors.append("%s=%r: expected a number between 0 and 1" % (name, value))
        elif number is None or number <= 0:
            errors.append("%s=%r: expected a positive number (%s)" % (name, value, K.THRESHOLD_KEYS[key]["unit"]))
    return errors


def check_settings(settings):
    """Every problem of ``fabric_test_thresholds`` as ``fabric_test_thresholds.KEY=VALUE: ...``
    strings ([] when good, and for None). Shape::

        {bw_fraction: 0.9, bw_min_gbps: 360, lat_max_us: 2.5, nccl_busbw_min_gbps: 300,
         by_rate: {400: {bw_fraction: 0.95}},            # port rate in Gb/s
         by_node_type: {gpu-h100: {nccl_busbw_min_gbps: 350, lat_max_us: 3}}}
    """
    if settings is None:
        return []
    if not isinstance(settings, dict):
        return ["%s=%r: expected a dict of %s" % (SETTINGS_VARIABLE, settings, ", ".join(SETTINGS_KEYS))]
    errors = _layer_errors(dict((k, v) for k, v in settings.items() if k not in ("by_rate", "by_node_type", "loopback")),
                           SETTINGS_VARIABLE)
    loopback = settings.get("loopback")
    if loopback is not None:
        if not isinstance(loopback, dict) or any(k not in LOOPBACK_KEYS for k in loopback):
            errors.append("%s.loopback=%r: expected a dict of %s" % (SETTINGS_VARIABLE, loopback, ", ".join(LOOPBACK_KEYS)))
        else:
            errors.extend(_layer_errors(loopback, "%s.loopback" % SETTINGS_VARIABLE))
    by_rate = settings.get("by_rate")
    if by_rate is not None:
        if not isinstance(by_rate, dict):
            errors.append("%s.by_rate=%r: expected a dict {port rate in Gb/s: {%s}}" % (
                SETTINGS_VARIABLE, by_rate, ", ".join(LAYER_KEYS)))
        else:
            for rate in sorted(by_rate, key=str):
                number = _number(rate)
                if number is None or number <= 0:
                    errors.append("%s.by_rate.%s: %r is not a port rate in Gb/s (a positive number)"
                                  % (SETTINGS_VARIABLE, rate, rate))
                errors.extend(_layer_errors(by_rate[rate], "%s.by_rate.%s" % (SETTINGS_VARIABLE, rate)))
    by_type = settings.get("by_node_type")
    if by_type is not None:
        if not isinstance(by_type, dict):
            errors.append("%s.by_node_type=%r: expected a dict {node type: {%s}}" % (
                SETTINGS_VARIABLE, by_type, ", ".join(LAYER_KEYS)))
        else:
            for name in sorted(by_type, key=str):
                errors.extend(_layer_errors(by_type[name], "%s.by_node_type.%s" % (SETTINGS_VARIABLE, name)))
    return errors


# Legal values that in effect turn a check off (issue 40: "a value that would silently disable a
# check is refused, or warned about by name where it is legal"). They stay legal (a lab, a
# degraded fleet under repair), and check_warnings names each one.
# by the type of the key: a fraction below 0.5, a floor below 1 (Gb/s, GB/s), a ceiling above 100 us
WARN_BELOW = {"fraction": 0.5, "floor": 1.0}
WARN_ABOVE = {"ceiling": 100.0}


def _warn_why(key, limit):
    info = K.THRESHOLD_KEYS[key]
    what = " and ".join(K.check_of(kind) for kind in info["kinds"]) or "nccl.all_reduce"
    if info["type"] == "fraction":
        return "below %g: a link passes at a fraction of its rate, the %s check is in effect off" % (limit, what)
    if info["type"] == "floor":
        return "below %g %s: any working link passes, the %s check is in effect off" % (limit, info["unit"], what)
    return "above %g %s: RDMA latency is a few us, the %s check is in effect off" % (limit, info["unit"], what)


def _layer_warnings(layer, where):
    warnings = []
    if not isinstance(layer, dict):
        return warnings
    for key in sorted(layer, key=str):
        if key not in LAYER_KEYS:
            continue
        number = _number(layer[key])
        if number is None or number <= 0:
            continue        # not a legal value: check_settings refuses it
        kind = K.THRESHOLD_KEYS[key]["type"]
        if kind in WARN_BELOW and number < WARN_BELOW[kind]:
            limit = WARN_BELOW[kind]
        elif kind in WARN_ABOVE and number > WARN_ABOVE[kind]:
            limit = WARN_ABOVE[kind]
        else:
            continue
        warnings.append("%s.%s=%r: %s" % (where, key, layer[key], _warn_why(key, limit)))
    return warnings


def check_warnings(settings):
    """The legal values of ``fabric_test_thresholds`` that in effect turn a check off, one
    ``fabric_test_thresholds.KEY=VALUE: why`` string each (at every layer: top level, by_rate.RATE,
    by_node_type.NAME, loopback): a bw_fraction below 0.5, a bw_min_gbps below 1 Gb/s, an
    nccl_busbw_min_gbps below 1 GB/s, a lat_max_us above 100 us. [] when none, and for None or a
    value check_settings refuses (it names those)."""
    if not isinstance(settings, dict):
        return []
    warnings = _layer_warnings(dict((k, v) for k, v in settings.items() if k not in ("by_rate", "by_node_type", "loopback")),
                               SETTINGS_VARIABLE)
    for group in ("by_rate", "by_node_type"):
        layers = settings.get(group)
        if isinstance(layers, dict):
            for name in sorted(layers, key=str):
                warnings.extend(_layer_warnings(layers[name], "%s.%s.%s" % (SETTINGS_VARIABLE, group, name)))
    warnings.extend(_layer_warnings(settings.get("loopback"), "%s.loopback" % SETTINGS_VARIABLE))
    return warnings


def _rate_layer(by_rate, rate):
    if not isinstance(by_rate, dict) or rate is None:
        return {}
    for key, value in by_rate.items():
        number = _number(key)
        if number is not None and abs(number - rate) < 1e-9:
            return value or {}
    return {}


def thresholds(settings, rate_gbps, node_type=None, link_type=None, loopback=False):
    """The threshold of every kind (``bw_min_gbps``, ``lat_max_us``, ... with the fractions they come
    from, ``_kinds.LAYER_KEYS``) and ``nccl_busbw_min_gbps``, for a port of ``rate_gbps`` (its active
    rate, Gb/s) on a node of ``node_type``, ``link_type`` ``IB`` or ``Ethernet`` (the latency default;
    IB when not given).

    Layers, each overriding the one before: THRESHOLDS, THRESHOLDS.by_rate[rate],
    THRESHOLDS.by_node_type[node_type], then the same three of ``settings``
    (``fabric_test_thresholds``). A bandwidth kind's limit (``bw_min_gbps``) is its fraction
    (``bw_fraction``) times ``rate_gbps`` unless the most specific layer that sets either of the two
    sets the limit (an absolute floor); a kind that ``inherit``s another's (``send_bw``, ``read_bw``)
    takes that kind's fraction and limit where no layer sets its own keys.
    ``nccl_busbw_min_gbps`` is in GB/s (nccl-tests' busbw unit); None means not judged. A limit is
    None when the rate is unknown and no floor is set. ``loopback``: the loopback test's, with
    ``settings.loopback`` applied over the rest. Raises ValueError with ``check_settings``' messages
    on bad settings."""
    errors = check_settings(settings)
    if errors:
        raise ValueError("; ".join(errors))
    rate = _number(rate_gbps)
    if rate_gbps is not None and (rate is None or rate <= 0):
        raise ValueError("port rate %r: expected a positive number of Gb/s" % (rate_gbps,))
    link = "Ethernet" if link_type in ("Ethernet", "RoCE", "roce", "eth") else "IB"
    layers = []
    for source in (THRESHOLDS, settings or {}):
        top = dict((k, v) for k, v in source.items() if k in LAYER_KEYS)
        layers += [top, _rate_layer(source.get("by_rate"), rate),
                   (source.get("by_node_type") or {}).get(node_type) or {} if node_type is not None else {}]
    if loopback:
        layers.append((settings or {}).get("loopback") or {})
    out = {"nccl_busbw_min_gbps": None}
    for layer in layers:
        if layer.get("nccl_busbw_min_gbps") is not None:
            out["nccl_busbw_min_gbps"] = _number(layer["nccl_busbw_min_gbps"])
    for row in K.ROWS:
        fraction, limit, absolute, own = None, None, False, False
        for layer in layers:
            if row["fraction"] and layer.get(row["fraction"]) is not None:
                fraction, absolute, own = _number(layer[row["fraction"]]), False, True
            if layer.get(row["limit"]) is not None:
                limit, absolute, own = _number(layer[row["limit"]]), True, True
        if row["inherit"] and not own:
            parent = K.row(row["inherit"])
            fraction, limit = out[parent["fraction"]], out[parent["limit"]]
        else:
            if row["fraction"] and not absolute:
                fraction = fraction if fraction is not None else row["fraction_default"]
                limit = round(fraction * rate, 3) if rate is not None and fraction is not None else None
            if limit is None and row["limit_by_link"]:
                limit = row["limit_by_link"].get(link)
        if row["fraction"]:
            out[row["fraction"]] = fraction
        out[row["limit"]] = limit
    return out


# --------------------------------------------------------------------------- planning
def _check_k(k):
    if isinstance(k, bool) or not isinstance(k, int):
        raise ValueError("%s=%r: expected a whole number >= 1" % (VARIABLE, k))
    if k < 1:
        raise ValueError("%s=%r: expected a whole number >= 1" % (VARIABLE, k))
    return k


def _unique(nodes, field):
    if isinstance(nodes, (str, bytes)) or nodes is None:
        raise ValueError("%s=%r: expected a list of node names" % (field, nodes))
    out = list(nodes)
    seen = set()
    for node in out:
        if node in seen:
            raise ValueError("%s: node %s is listed twice" % (field, node))
        seen.add(node)
    return sorted(out, key=str)


def _leaf_key(value):
    if isinstance(value, dict):
        return tuple(sorted((str(r), str(v)) for r, v in value.items()))
    return value if value is None else str(value)


def _split(nodes, leaves):
    """Nodes in two halves A (N // 2) and B (the rest) such that every leaf but at most one (X)
    is wholly on one side; X's part in A opens A, its part in B closes B. Returns A, B, |X|."""
    count = len(nodes)
    half = count // 2
    if not leaves:
        return nodes[:half], nodes[half:], 0
    groups = {}
    for node in nodes:
        groups.setdefault(_leaf_key(leaves.get(node)), []).append(node)
    order = sorted(groups.items(), key=lambda item: (-len(item[1]), str(item[0])))
    side_a, rest, room = [], [], half
    for _leaf, members in order:
        if len(members) <= room:
            side_a.extend(members)
            room -= len(members)
        else:
            rest.append(members)
    if room == 0:
        side_b = [n for members in rest for n in members]
        return side_a, side_b, 0
    straddler = min(rest, key=len)  # every leaf left is bigger than the room left in A
    others = [n for members in rest if members is not straddler for n in members]
    return straddler[:room] + side_a, others + straddler[room:], len(straddler)


def _bipartite(side_a, side_b, rounds):
    """Round r pairs A[i] with B[(i + r) % |B|]; A serves in even rounds, B in odd ones."""
    size_b = len(side_b)
    plan = []
    for shift in range(rounds):
        pairs = []
        for index, node in enumerate(side_a):
            other = side_b[(index + shift) % size_b]
            pairs.append((node, other) if shift % 2 == 0 else (other, node))
        plan.append(pairs)
    return plan


def _interleave(nodes, leaves):
    if not leaves:
        return list(nodes)
    groups = {}
    for node in nodes:
        groups.setdefault(_leaf_key(leaves.get(node)), []).append(node)
    lists = [members for _leaf, members in sorted(groups.items(), key=lambda item: (-len(item[1]), str(item[0])))]
    out = []
    for index in range(max(len(m) for m in lists)):
        out.extend(m[index] for m in lists if index < len(m))
    return out


def _circle(nodes, rounds):
    """The circle method (round-robin tournament): one node fixed, the others rotate; a dummy
    (a bye) when the count is odd. Every round is a matching, no pair comes twice in the
    count - 1 (even) or count (odd) rounds there are. Roles: the fixed node serves in even rounds,
    the pair at distance i has the node ahead serving when i is even; no node serves more than one
    test more (or fewer) than it is client."""
    seq = list(nodes)
    if len(seq) % 2:
        seq.append(None)
    fixed, rot = seq[-1], seq[:-1]
    size = len(rot)
    plan = []
    for r in range(rounds):
        pairs = [(fixed, rot[r % size]) if r % 2 == 0 else (rot[r % size], fixed)]
        for i in range(1, len(seq) // 2):
            a, b = rot[(r + i) % size], rot[(r - i) % size]
            pairs.append((a, b) if i % 2 == 0 else (b, a))
        plan.append([p for p in pairs if p[0] is not None and p[1] is not None])
    return plan


def _trim(plan, k):
    """Drop, from the last round, the pairs neither of whose nodes still needs a peer, and turn
    the pairs kept so that each node's server and client counts stay within one."""
    if len(plan) < 2:
        return plan
    count, role = {}, {}
    for pairs in plan[:-1]:
        for a, b in pairs:
            count[a] = count.get(a, 0) + 1
            count[b] = count.get(b, 0) + 1
            role[a] = role.get(a, 0) + 1  # serves minus client tests
            role[b] = role.get(b, 0) - 1
    last = []
    for a, b in plan[-1]:
        if count.get(a, 0) >= k and count.get(b, 0) >= k:
            continue
        kept = abs(role.get(a, 0) + 1) + abs(role.get(b, 0) - 1)
        turned = abs(role.get(b, 0) + 1) + abs(role.get(a, 0) - 1)
        last.append((b, a) if turned < kept else (a, b))
    return plan[:-1] + ([last] if last else [])


def plan_bound(count, k):
    """The most rounds ``plan_rounds`` uses for ``count`` nodes: k for an even count, k + 1 for an odd one."""
    return k if count % 2 == 0 else k + 1


def plan_rounds(nodes, k=2, leaves=None):
    """Pair tests for a fleet: ``[[(server, client), ...], ...]``, one list per round.

    Guarantees: every node meets at least ``k`` distinct peers; no node is in two tests of one
    round; no pair (either order) is tested twice; at most ``k + 1`` rounds whatever the number
    of nodes N -- exactly ``k`` when N is even, ``k + 1`` when N is odd (the last round then holds
    only the tests of the nodes that sat one round out). Server and client roles alternate by
    round: no node serves more than one test more (or fewer) than it is client, and with k = 2
    and N even every node serves once and is client once. Deterministic:
    the nodes are sorted (by ``str``) first.

    ``leaves``: ``{node: leaf}`` or ``{node: {rail: leaf}}`` (the rail plan's leaf per rail; nodes
    whose leaves agree on every rail are on one "leaf"). Pairs across leaves are preferred: the
    nodes are split in two halves so that every leaf but at most one (the straddler X) is wholly
    on one side, and every test pairs one node of each half. Only X's two parts can then meet
    each other, and not in the first ``ceil(N/2) - |X| + 1`` rounds; with no straddler (e.g. two
    leaves of N/2, or leaves that fill a half exactly) every pair crosses leaves.

    Method: for k <= N // 2, the halves A (N // 2 nodes) and B (the rest); round r pairs A[i]
    with B[(i + r) % |B|] (a cyclic bipartite matching: distinct peers, never a pair twice).
    For larger k (more peers than a half holds), the circle method on the nodes interleaved by
    leaf. ValueError naming ``fabric_test_peers=<k>`` and the fleet size when k > N - 1, or k is
    not a whole number >= 1.
    """
    order = _unique(nodes, "nodes")
    k = _check_k(k)
    count = len(order)
    if count == 0:
        return []
    if k > count - 1:
        raise ValueError("%s=%d: more than the %d other node%s of a fleet of %d; lower %s to at most %d"
                         % (VARIABLE, k, count - 1, "" if count == 2 else "s", count, VARIABLE, max(count - 1, 0)))
    if leaves is not None and not isinstance(leaves, dict):
        raise ValueError("leaves=%r: expected {node: leaf} or {node: {rail: leaf}}" % (leaves,))
    rounds = plan_bound(count, k)
    if k <= count // 2:
        side_a, side_b, _straddle = _split(order, leaves)
        plan = _bipartite(side_a, side_b, rounds)
    else:
        plan = _circle(_interleave(order, leaves), rounds)
    return _trim(plan, k) if rounds > k else plan


def onboard_rounds(new, good, k=2):
    """Tests of new nodes against known-good ones: ``[[(server, client), ...], ...]``.

    Every new node meets ``k`` distinct good nodes and never another new node; no node is twice
    in a round. New node i (sorted) meets good[(i + t) % G] in round ``(i // G) * k + t`` for
    t < k (G good nodes): ``k * ceil(len(new) / G)`` rounds, k when there are at least as many
    good nodes as new ones. The new node is the client in even rounds, the server in odd ones.
    ValueError naming ``fabric_test_peers`` and the count of known-good nodes when G < k, or
    a node that is both new and good."""
    new = _unique(new, "new")
    good = _unique(good, "good")
    k = _check_k(k)
    both = sorted(set(new) & set(good), key=str)
    if both:
        raise ValueError("node %s is both new and known-good" % ", ".join(str(n) for n in both))
    if not new:
        return []
    size = len(good)
    if size < k:
        raise ValueError("%s=%d: only %d known-good node%s to test the new ones against; lower %s or admit more nodes"
                         % (VARIABLE, k, size, "" if size == 1 else "s", VARIABLE))
    blocks = (len(new) + size - 1) // size
    plan = [[] for _block in range(blocks * k)]
    for index, node in enumerate(new):
        block, pos = divmod(index, size)
        for t in range(k):
            peer = good[(pos + t) % size]
            r = block * k + t
            plan[r].append((peer, node) if t % 2 == 0 else (node, peer))
    return plan


def _normalise_rail(rail):
    if isinstance(rail, str) and rail.strip().isdigit():
        return int(rail)
    return rail


def _failed_pairs(failed):
    """``[(server, client, [rails])]`` from ``{(server, client): [rails]}`` or a list of
    ``{"server", "client", "rails"}`` dicts or ``[server, client, rails]`` lists."""
    out = []
    if isinstance(failed, dict):
        items = [(key[0], key[1], rails) for key, rails in failed.items()]
    elif isinstance(failed, (list, tuple)):
        items = []
        for entry in failed:
            if isinstance(entry, dict):
                items.append((entry.get("server"), entry.get("client"), entry.get("rails")))
            else:
                items.append(tuple(entry))
    else:
        raise ValueError("failed=%r: expected {(server, client): [rails]}" % (failed,))
    for server, client, rails in items:
        if isinstance(rails, (int, str)):
            rails = [rails]
        out.append((server, client, sorted(set(_normalise_rail(r) for r in rails or []), key=str)))
    return sorted(out, key=lambda item: (str(item[0]), str(item[1])))


def isolation_rounds(failed, passed, k=1):
    """Retests that name the node of a failing pair: ``[[(server, client, [rails]), ...], ...]``.

    ``failed``: ``{(server, client): [rails]}`` -- the pairs and the rails that failed, in the
    roles they had (a list of ``{"server", "client", "rails"}`` works too). ``passed``:
    ``{rail: set(nodes)}`` -- the nodes that passed that rail in some test. Each node of a
    failing pair is retested, in the role it had, against ``k`` distinct nodes that passed every
    rail it failed (one peer for all its rails where one exists, else peers rail by rail); never
    against its failing partner. A peer's rails are tested together (``[rails]``). Peers are
    chosen least-loaded first, then the tests are packed greedily into rounds (no node twice in
    a round): at most ``2 * D - 1`` rounds, D the most retests of one node (k times the peers a
    node's rails need, or a passed node's share of the retests), which does not grow with the
    fleet while the failing nodes are not more than the passed ones. A (node, rail) with no
    passed peer left is not retested (its verdict stays undetermined unless other evidence)."""
    k = _check_k(k)
    pairs = _failed_pairs(failed)
    good = {}
    for rail, members in (passed or {}).items():
        good[_normalise_rail(rail)] = set(members or ())
    demand = {}
    for server, client, rails in pairs:
        for node, role, partner in ((server, "server", client), (client, "client", server)):
            entry = demand.setdefault(node, {"role": role, "rails": set(), "exclude": set()})
            entry["rails"].update(rails)
            entry["exclude"].add(partner)
    load = {}
    tests = []
    # candidates come from a window of the passed nodes that moves on with every failing node
    # (spreading the retests and keeping the cost per node constant); the whole list only when
    # the window has no peer for a rail
    pool = sorted(set(n for members in good.values() for n in members), key=str)
    width = min(len(pool), 16 + 8 * k)
    for number, node in enumerate(sorted(demand, key=str)):
        entry = demand[node]
        need = dict((rail, k) for rail in entry["rails"])
        chosen = set()
        start = (number * width) % len(pool) if pool else 0
        window = [pool[(start + i) % len(pool)] for i in range(width)]
        while True:
            open_rails = [r for r in sorted(need, key=str) if need[r] > 0]
            if not open_rails:
                break
            score = {}
            for candidates in (window, None):
                for rail in open_rails:
                    members = good.get(rail, ())
                    for peer in (members if candidates is None else [p for p in candidates if p in members]):
                        if peer == node or peer in entry["exclude"] or peer in chosen:
                            continue
                        score[peer] = score.get(peer, 0) + 1
                if score:
                    break
            if not score:
                break
            peer = min(score, key=lambda p: (-score[p], load.get(p, 0), str(p)))
            rails = [r for r in open_rails if peer in good.get(r, ())]
            for rail in rails:
                need[rail] -= 1
            chosen.add(peer)
            load[peer] = load.get(peer, 0) + 1
            load[node] = load.get(node, 0) + 1
            tests.append((node, entry["role"], peer, rails))
    busy = {}
    plan = []
    order = sorted(tests, key=lambda t: (-(load.get(t[0], 0) + load.get(t[2], 0)), str(t[0]), str(t[2])))
    for node, role, peer, rails in order:
        taken = busy.setdefault(node, set()) | busy.setdefault(peer, set())
        r = 0
        while r in taken:
            r += 1
        while len(plan) <= r:
            plan.append([])
        plan[r].append((node, peer, rails) if role == "server" else (peer, node, rails))
        busy[node].add(r)
        busy[peer].add(r)
    return [sorted(pairs, key=lambda p: (str(p[0]), str(p[1]))) for pairs in plan]


# --------------------------------------------------------------------------- verdicts
def _tests_by_key(results):
    by_key = {}
    for index, result in enumerate(results or []):
        if not isinstance(result, dict):
            raise ValueError("results[%d]=%r: expected a dict with server, client, rail, check, ok" % (index, result))
        for key in ("server", "client", "check", "ok"):
            if key not in result:
                raise ValueError("results[%d]: %s is missing" % (index, key))
        rail = _normalise_rail(result.get("rail"))
        for node, peer, role in ((result["server"], result["client"], "server"),
                                 (result["client"], result["server"], "client")):
            test = {"peer": peer, "role": role, "ok": bool(result["ok"]), "figure": result.get("figure"),
                    "error": result.get("error"), "phase": result.get("phase", "round")}
            if result.get("device"):
                test["device"] = result["device"]
            by_key.setdefault((result["check"], rail), {}).setdefault(node, []).append(test)
    return by_key


def _decide(tests_of):
    """Verdicts of the nodes of one (check, rail): {node: (verdict, reason)}."""
    fails = dict((n, set(t["peer"] for t in tests if not t["ok"])) for n, tests in tests_of.items())
    oks = dict((n, set(t["peer"] for t in tests if t["ok"])) for n, tests in tests_of.items())
    status = {}
    nodes = sorted(tests_of, key=str)

    def names(peers):
        return ", ".join(str(p) for p in sorted(peers, key=str))

    while True:
        changed = False
        for node in nodes:
            if node in status:
                continue
            failing = set(p for p in fails[node] if status.get(p, ("",))[0] == "fail")
            good_oks = set(p for p in oks[node] if status.get(p, ("",))[0] != "fail")
            passed_peers = set(p for p in fails[node] if status.get(p, ("",))[0] == "pass")
            if not fails[node]:
                status[node] = ("pass", "every test passed (with %s)" % names(oks[node]))
            elif fails[node] <= failing and good_oks:
                status[node] = ("pass", "failed only with %s, which fail%s; passed with %s"
                                % (names(fails[node]), "s" if len(fails[node]) == 1 else "", names(good_oks)))
            elif passed_peers:
                status[node] = ("fail", "failed with %s, which passed this rail with other nodes" % names(passed_peers))
            else:
                continue
            changed = True
        if changed:
            continue
        # no clear evidence left: the nodes that failed with the most distinct peers (at least 2,
        # none of them failing already) fail
        counts = dict((n, len([p for p in fails[n] if status.get(p, ("",))[0] != "fail"]))
                      for n in nodes if n not in status)
        top = max(counts.values()) if counts else 0
        if top < 2:
            break
        for node in nodes:
            if counts.get(node) == top:
                status[node] = ("fail", "failed with %d distinct peers (%s)" % (top, names(fails[node])))
    for node in nodes:
        if node not in status:
            status[node] = ("undetermined", "failed with %s only%s; no node that passed this rail confirms which "
                            "side fails" % (names(fails[node]), "" if not oks[node] else
                                            " (passed with %s)" % names(oks[node])))
    return status


def verdicts(results):
    """Per (node, rail, check) verdicts: ``[{"node", "rail", "check", "verdict", "reason",
    "tests": [{"peer", "role", "ok", "figure", "error", "phase"(, "device")}]}]``, sorted.

    ``results``: ``[{"server", "client", "rail", "check", "ok": bool, "figure": float|None,
    "error": str|None, "phase": "round"|"isolation"(, "device")}]``, one per test and rail (the
    same test counts for both nodes). Rules, applied per (rail, check) until nothing changes:

    1. ``pass``: every test of the node passed.
    2. ``pass``: every failed test was with a node whose verdict is ``fail`` and it passed with a
       node that does not fail (the partner of a bad node, cleared by its other tests or by
       isolation).
    3. ``fail``: it failed with a node whose verdict is ``pass`` (that node passed the rail:
       isolation evidence).
    4. When 1-3 decide nothing more: the nodes that failed with the most distinct peers not
       already failing, if that is at least 2, ``fail``; then 1-3 again.

    What is left is ``undetermined``: a single failure with nothing to tell which side fails.
    The reason names the peers; ``tests`` holds the figures and errors."""
    out = []
    for (check, rail), tests_of in _tests_by_key(results).items():
        for node, (verdict, reason) in _decide(tests_of).items():
            out.append({"node": node, "rail": rail, "check": check, "verdict": verdict, "reason": reason,
                        "tests": sorted(tests_of[node], key=lambda t: (t["phase"] != "round", str(t["peer"])))})
    return sorted(out, key=lambda v: (str(v["node"]), str(v["check"]), str(v["rail"])))


def rounds_wall_time(n_nodes, k, per_test_s, rails, rails_at_once=True):
    """``{"rounds", "pairs", "tests", "wall_s"}`` of ``plan_rounds`` over ``n_nodes`` nodes:
    rounds from the plan bound, pairs and tests (pairs * rails) from the plan itself, wall time
    ``rounds * per_test_s`` (every rail of a pair at once) or ``rounds * rails * per_test_s``."""
    plan = plan_rounds(range(n_nodes), k)
    pairs = sum(len(r) for r in plan)
    rounds = len(plan)
    wall = rounds * float(per_test_s) * (1 if rails_at_once else int(rails))
    return {"rounds": rounds, "pairs": pairs, "tests": pairs * int(rails), "wall_s": wall}
