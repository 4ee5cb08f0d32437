# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric acceptance planner: rounds, onboarding, isolation, verdicts, thresholds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random
import time

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _acceptance as A

SIZES = list(range(2, 65)) + [65, 100, 127, 128, 257, 500, 1000, 1999, 2000]


def check_plan(plan, nodes, k):
    """The planner's guarantees; returns {node: peers}."""
    peers = dict((n, set()) for n in nodes)
    seen = set()
    for pairs in plan:
        in_round = set()
        for server, client in pairs:
            assert server != client
            assert server in peers and client in peers
            assert server not in in_round and client not in in_round, "node twice in a round"
            in_round.update((server, client))
            key = frozenset((server, client))
            assert key not in seen, "pair %s twice" % sorted(key)
            seen.add(key)
            peers[server].add(client)
            peers[client].add(server)
    assert all(len(p) >= k for p in peers.values()), min(len(p) for p in peers.values())
    assert len(plan) <= A.plan_bound(len(nodes), k) <= k + 1
    return peers


@pytest.mark.parametrize("count", SIZES)
def test_plan_properties_k2(count):
    nodes = ["gpu-%04d" % i for i in range(count)]
    k = min(2, count - 1)
    plan = A.plan_rounds(nodes, k)
    check_plan(plan, nodes, k)
    assert len(plan) == (k if count % 2 == 0 else k + 1)
    assert A.plan_rounds(list(reversed(nodes)), k) == plan  # deterministic, order of input irrelevant


@pytest.mark.parametrize("count", [2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 64, 101])
def test_plan_properties_every_k(count):
    nodes = list(range(count))
    for k in range(1, count):
        check_plan(A.plan_rounds(nodes, k), nodes, k)


@pytest.mark.parametrize("count", [6, 10, 64, 100, 257, 1000, 2000])
def test_plan_larger_k(count):
    nodes = ["n%d" % i for i in range(count)]
    for k in (1, 3, 4, 8):
        if k < count:
            check_plan(A.plan_rounds(nodes, k), nodes, k)


@pytest.mark.parametrize("count", [4, 8, 64, 200, 1000])
def test_roles_balanced(count):
    plan = A.plan_rounds(range(count), 2)
    serves = dict((n, 0) for n in range(count))
    clients = dict((n, 0) for n in range(count))
    for pairs in plan:
        for server, client in pairs:
            serves[server] += 1
            clients[client] += 1
    assert all(serves[n] == 1 and clients[n] == 1 for n in range(count))
    if count < 8:
        return
    plan = A.plan_rounds(range(count), 4)
    for n in range(count):
        assert sum(1 for p in plan for s, _c in p if s == n) == 2


@pytest.mark.parametrize("count", [3, 5, 6, 7, 12, 13, 40, 41])
def test_roles_within_one(count):
    for k in range(1, count):
        plan = A.plan_rounds(range(count), k)
        for n in range(count):
            serves = sum(1 for p in plan for s, _c in p if s == n)
            clients = sum(1 for p in plan for _s, c in p if c == n)
            assert abs(serves - clients) <= 1, (n, serves, clients)


def _same_leaf(plan, leaf_of):
    return [(s, c) for pairs in plan for s, c in pairs if leaf_of[s] == leaf_of[c]]


def rail_plan_leaves(count, rails, per_leaf, name="gpu-%04d"):
    """The rail planner's shape: node slot // host ports per leaf is its stripe, the same on every rail."""
    return dict((name % i, dict((r, "rail%d-leaf%d" % (r, i // per_leaf)) for r in range(rails)))
                for i in range(count))


@pytest.mark.parametrize("rails", range(1, 9))
@pytest.mark.parametrize("count,per_leaf", [(4, 2), (8, 4), (64, 32), (256, 32), (2000, 32), (100, 50), (96, 32)])
def test_leaves_crossed_when_they_split_evenly(rails, count, per_leaf):
    leaves = rail_plan_leaves(count, rails, per_leaf)
    nodes = sorted(leaves)
    plan = A.plan_rounds(nodes, 2, leaves=leaves)
    check_plan(plan, nodes, 2)
    leaf_of = dict((n, A._leaf_key(v)) for n, v in leaves.items())
    assert _same_leaf(plan, leaf_of) == []


@pytest.mark.parametrize("seed", range(40))
def test_leaves_only_the_straddler_meets_itself(seed):
    rng = random.Random(seed)
    count = rng.randint(4, 400)
    nleaves = rng.randint(2, 12)
    leaves = dict(("n%d" % i, "leaf%d" % rng.randrange(nleaves)) for i in range(count))
    k = rng.randint(1, 3)
    plan = A.plan_rounds(sorted(leaves), k, leaves=leaves)
    check_plan(plan, sorted(leaves), k)
    side_a, side_b, straddle = A._split(sorted(leaves, key=str), leaves)
    bad = _same_leaf(plan, leaves)
    if straddle == 0:
        assert bad == []
    else:
        assert len(set(leaves[s] for s, _c in bad)) <= 1
        cross_rounds = len(side_b) - straddle + 1
        for r, pairs in enumerate(plan[:max(cross_rounds, 0)]):
            assert _same_leaf([pairs], leaves) == [], r
    # better than leaf-blind: never more same-leaf pairs than the plan that ignores leaves
    assert len(bad) <= len(_same_leaf(A.plan_rounds(sorted(leaves), k), leaves))


def test_leaves_two_leaves_of_a_3_to_1_fleet():
    leaves = dict(("n%d" % i, "big" if i < 6 else "small") for i in range(8))
    plan = A.plan_rounds(sorted(leaves), 2, leaves=leaves)
    check_plan(plan, sorted(leaves), 2)
    # each small-leaf node crosses every time; big-leaf nodes cannot all cross
    for s, c in (p for pairs in plan for p in pairs):
        if "small" in (leaves[s], leaves[c]):
            assert leaves[s] != leaves[c]


def test_planning_10000_nodes_under_a_second():
    nodes = ["gpu-%05d" % i for i in range(10000)]
    leaves = rail_plan_leaves(10000, 8, 32, "gpu-%05d")
    start = time.perf_counter()
    plan = A.plan_rounds(nodes, 2, leaves=leaves)
    elapsed = time.perf_counter() - start
    check_plan(plan, nodes, 2)
    assert elapsed < 1.0, elapsed
    start = time.perf_counter()
    A.plan_rounds(nodes, 2)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None])
def test_bad_k(bad):
    with pytest.raises(ValueError, match=r"fabric_test_peers="):
        A.plan_rounds(["a", "b", "c"], bad)


def test_k_larger_than_fleet():
    with pytest.raises(ValueError, match=r"fabric_test_peers=4: more than the 3 other nodes of a fleet of 4"):
        A.plan_rounds(["a", "b", "c", "d"], 4)
    with pytest.raises(ValueError, match=r"fabric_test_peers=1: .* fleet of 1"):
        A.plan_rounds(["a"], 1)
    with pytest.raises(ValueError, match=r"listed twice"):
        A.plan_rounds(["a", "a", "b"], 1)
    with pytest.raises(ValueError, match=r"nodes="):
        A.plan_rounds("abc", 1)
    assert A.plan_rounds([], 2) == []


# --------------------------------------------------------------------------- onboarding
@pytest.mark.parametrize("new_count,good_count,k", [(1, 2, 2), (1, 5, 2), (3, 3, 2), (4, 2, 2), (10, 3, 3),
                                                    (7, 50, 2), (50, 7, 2), (100, 100, 4)])
def test_onboard(new_count, good_count, k):
    new = ["new%d" % i for i in range(new_count)]
    good = ["good%d" % i for i in range(good_count)]
    plan = A.onboard_rounds(new, good, k)
    met = dict((n, set()) for n in new)
    for pairs in plan:
        in_round = set()
        for server, client in pairs:
            assert server not in in_round and client not in in_round
            in_round.update((server, client))
            assert (server in new) != (client in new), "two new nodes together, or two good ones"
            newbie, peer = (server, client) if server in new else (client, server)
            assert peer not in met[newbie]
            met[newbie].add(peer)
    assert all(len(p) == k for p in met.values())
    assert len(plan) == k * -(-new_count // good_count)


def test_onboard_errors():
    with pytest.raises(ValueError, match=r"fabric_test_peers=2: only 1 known-good node"):
        A.onboard_rounds(["n"], ["g"], 2)
    with pytest.raises(ValueError, match=r"both new and known-good"):
        A.onboard_rounds(["n", "g"], ["g", "h"], 1)
    assert A.onboard_rounds([], ["g"], 2) == []


# --------------------------------------------------------------------------- isolation and verdicts
def run_plan(plan, rails, bad, check="perftest.write_bw", phase="round"):
    """Synthetic results: a test of rail r fails when either node is bad on rail r."""
    results = []
    for pairs in plan:
        for entry in pairs:
            server, client = entry[0], entry[1]
            for rail in (entry[2] if len(entry) > 2 else rails):
                broken = (server, rail) in bad or (client, rail) in bad
                results.append({"server": server, "client": client, "rail": rail, "check": check,
                                "ok": not broken, "figure": 95.0 if broken else 385.0, "error": None, "phase": phase})
    return results


def failed_and_passed(results):
    failed, passed = {}, {}
    for res in results:
        if res["ok"]:
            passed.setdefault(res["rail"], set()).update((res["server"], res["client"]))
        else:
            failed.setdefault((res["server"], res["client"]), []).append(res["rail"])
    return failed, passed


def acceptance(nodes, rails, bad, k=2):
    plan = A.plan_rounds(nodes, k)
    results = run_plan(plan, rails, bad)
    failed, passed = failed_and_passed(results)
    iso = A.isolation_rounds(failed, passed) if failed else []
    for pairs in iso:
        in_round = set()
        for server, client, _rails in pairs:
            assert server not in in_round and client not in in_round
            in_round.update((server, client))
    results += run_plan(iso, rails, bad, phase="isolation")
    return A.verdicts(results), iso


@pytest.mark.parametrize("count", list(range(4, 51)))
def test_one_bad_rail_is_named(count):
    rails = list(range(1 + count % 8))
    nodes = ["gpu-%02d" % i for i in range(count)]
    rng = random.Random(count)
    bad_node, bad_rail = rng.choice(nodes), rng.choice(rails)
    result, iso = acceptance(nodes, rails, set([(bad_node, bad_rail)]))
    failing = [(v["node"], v["rail"]) for v in result if v["verdict"] != "pass"]
    assert failing == [(bad_node, bad_rail)]
    assert len(iso) <= 3
    verdict = next(v for v in result if v["node"] == bad_node and v["rail"] == bad_rail)
    assert verdict["verdict"] == "fail"
    # the evidence the finding is written from (areas/fabric_test.py verdict): the failed tests' figures
    failed_tests = [t for t in verdict["tests"] if not t["ok"]]
    assert failed_tests and all(t["figure"] == 95.0 for t in failed_tests)


def test_isolation_clears_the_partner_with_one_peer_each():
    # k = 1: a single failing pair says nothing by itself; isolation names the side
    nodes = ["a", "b", "c", "d", "e", "f"]
    result, iso = acceptance(nodes, [0, 1], set([("c", 1)]), k=1)
    assert [(v["node"], v["rail"], v["verdict"]) for v in result if v["verdict"] != "pass"] == [("c", 1, "fail")]
    partner = next(v for v in result if v["node"] != "c" and v["rail"] == 1 and any(not t["ok"] for t in v["tests"]))
    assert partner["verdict"] == "pass" and "isolation" in [t["phase"] for t in partner["tests"]]


def test_isolation_shapes_and_roles():
    failed = {("a", "b"): [0, 2]}
    passed = {0: set(["c", "d"]), 2: set(["d", "e"]), 1: set(["a", "b"])}
    plan = A.isolation_rounds(failed, passed, k=1)
    tests = [t for pairs in plan for t in pairs]
    # d passed both rails: one test per node covers both; a keeps its server role, b its client role
    assert ("a", "d", [0, 2]) in tests and ("d", "b", [0, 2]) in tests
    assert len(plan) == 2
    # the list form and string rails (JSON keys) work the same
    same = A.isolation_rounds([{"server": "a", "client": "b", "rails": ["0", "2"]}],
                              {"0": ["c", "d"], "2": ["d", "e"]}, k=1)
    assert same == plan
    # never the failing partner, k distinct peers per rail
    plan = A.isolation_rounds({("a", "b"): [0]}, {0: set(["a", "b", "c", "d", "e"])}, k=2)
    peers_of_a = [s if c == "a" else c for pairs in plan for s, c, _r in pairs if "a" in (s, c)]
    assert sorted(peers_of_a) == ["c", "d"]
    # no passed node: nothing to retest
    assert A.isolation_rounds({("a", "b"): [0]}, {0: set(["a", "b"])}) == []


def test_isolation_bounded_for_many_failures():
    nodes = ["n%03d" % i for i in range(200)]
    bad = set(("n%03d" % i, 0) for i in range(0, 200, 10))  # 20 bad nodes
    plan = A.plan_rounds(nodes, 2)
    failed, passed = failed_and_passed(run_plan(plan, [0, 1], bad))
    iso = A.isolation_rounds(failed, passed, k=1)
    assert len(iso) <= 4
    result = A.verdicts(run_plan(plan, [0, 1], bad) + run_plan(iso, [0, 1], bad, phase="isolation"))
    assert set((v["node"], v["rail"]) for v in result if v["verdict"] == "fail") == bad
    assert all(v["verdict"] == "pass" for v in result if (v["node"], v["rail"]) not in bad)


def test_verdict_rules():
    def res(server, client, ok, phase="round", figure=None, error=None):
        return {"server": server, "client": client, "rail": 0, "check": "perftest.write_bw", "ok": ok,
                "figure": figure, "error": error, "phase": phase}

    # a single failure and nothing else: undetermined, both sides
    out = A.verdicts([res("a", "b", False, error="Couldn't connect to 10.0.0.2:18515")])
    assert [v["verdict"] for v in out] == ["undetermined", "undetermined"]
    assert all(v["tests"][0]["error"] == "Couldn't connect to 10.0.0.2:18515" for v in out)
    # a failed with a node that passed the rail elsewhere (isolation evidence)
    out = dict((v["node"], v) for v in A.verdicts([res("a", "b", False, figure=90.0), res("c", "b", True),
                                                   res("a", "d", False, "isolation", 91.0), res("d", "e", True)]))
    assert out["a"]["verdict"] == "fail" and out["b"]["verdict"] == "pass" and out["d"]["verdict"] == "pass"
    assert out["a"]["tests"][0]["phase"] == "round"
    # a node that failed with two peers fails; its partners that passed elsewhere pass
    out = dict((v["node"], v["verdict"]) for v in A.verdicts(
        [res("x", "y", False), res("z", "x", False), res("y", "w", True), res("w", "z", True)]))
    assert out == {"x": "fail", "y": "pass", "z": "pass", "w": "pass"}
    # checks and rails are judged apart
    out = A.verdicts([res("a", "b", True), dict(res("a", "b", False), rail=1),
                      dict(res("a", "b", True), check="perftest.write_lat")])
    assert sorted((v["check"], v["rail"], v["verdict"]) for v in out if v["node"] == "a") == [
        ("perftest.write_bw", 0, "pass"), ("perftest.write_bw", 1, "undetermined"), ("perftest.write_lat", 0, "pass")]
    with pytest.raises(ValueError, match=r"results\[0\]: ok is missing"):
        A.verdicts([{"server": "a", "client": "b", "check": "c"}])
    assert [v["verdict"] for v in A.verdicts([res("a", "b", True)])] == ["pass", "pass"]


# --------------------------------------------------------------------------- thresholds and judging
def test_threshold_defaults():
    assert A.thresholds(None, 400) == {"bw_fraction": 0.9, "bw_min_gbps": 360.0, "lat_max_us": 2.5,
                                       "nccl_busbw_min_gbps": None,
                                       # ib_send_bw and ib_read_bw: ib_write_bw's until set (their own keys)
                                       "send_bw_fraction": 0.9, "send_bw_min_gbps": 360.0,
                                       "read_bw_fraction": 0.9, "read_bw_min_gbps": 360.0}
    assert A.thresholds({}, 200, link_type="Ethernet")["lat_max_us"] == 5.0
    assert A.thresholds(None, 200)["bw_min_gbps"] == 180.0  # azurehpc-health-checks' HDR floor
    assert A.thresholds(None, 400, "BM.GPU.H100.8")["nccl_busbw_min_gbps"] == 440.0
    assert A.thresholds(None, None)["bw_min_gbps"] is None


def test_threshold_layers():
    settings = {"bw_fraction": 0.8, "lat_max_us": "3", "by_rate": {"400": {"bw_fraction": 0.95}},
                "by_node_type": {"h100": {"nccl_busbw_min_gbps": 350, "bw_min_gbps": 370}, "BM.GPU.H100.8": {}}}
    assert A.thresholds(settings, 200)["bw_min_gbps"] == 160.0
    assert A.thresholds(settings, 400)["bw_min_gbps"] == 380.0
    thr = A.thresholds(settings, 400, "h100")
    assert thr["bw_min_gbps"] == 370.0 and thr["nccl_busbw_min_gbps"] == 350.0 and thr["lat_max_us"] == 3.0
    assert A.thresholds({"nccl_busbw_min_gbps": 300}, 400, "BM.GPU.H100.8")["nccl_busbw_min_gbps"] == 300.0
    # an absolute floor on top, then a fraction for one rate
    assert A.thresholds({"bw_min_gbps": 100, "by_rate": {400: {"bw_fraction": 0.5}}}, 400)["bw_min_gbps"] == 200.0
    assert A.thresholds({"bw_min_gbps": 100}, 400)["bw_min_gbps"] == 100.0


@pytest.mark.parametrize("settings,message", [
    ({"bw_fraction": "abc"}, "fabric_test_thresholds.bw_fraction='abc': expected a number between 0 and 1"),
    ({"bw_fraction": 1.5}, "fabric_test_thresholds.bw_fraction=1.5: expected a number between 0 and 1"),
    ({"bw_fraction": True}, "fabric_test_thresholds.bw_fraction=True: expected a number between 0 and 1"),
    ({"lat_max_us": -1}, "fabric_test_thresholds.lat_max_us=-1: expected a positive number (us)"),
    ({"nccl_busbw_min_gbps": [1]}, "fabric_test_thresholds.nccl_busbw_min_gbps=[1]: expected a positive number (GB/s)"),
    ({"bw_fraktion": 0.9}, "fabric_test_thresholds.bw_fraktion: unknown setting"),
    ({"by_rate": {"fast": {}}}, "fabric_test_thresholds.by_rate.fast: 'fast' is not a port rate"),
    ({"by_rate": {400: {"bw_fraction": "x"}}}, "fabric_test_thresholds.by_rate.400.bw_fraction='x'"),
    ({"by_rate": [400]}, "fabric_test_thresholds.by_rate=[400]: expected a dict"),
    ({"by_node_type": {"h100": 5}}, "fabric_test_thresholds.by_node_type.h100=5: expected a dict"),
    ({"by_node_type": {"h100": {"by_rate": {}}}}, "fabric_test_thresholds.by_node_type.h100.by_rate: unknown"),
    ("0.9", "fabric_test_thresholds='0.9': expected a dict"),
])
def test_check_settings(settings, message):
    errors = A.check_settings(settings)
    assert len(errors) == 1 and errors[0].startswith(message), errors
    with pytest.raises(ValueError, match="fabric_test_thresholds"):
        A.thresholds(settings, 400)


def test_check_settings_good():
    assert A.check_settings(None) == [] and A.check_settings({}) == []
    assert A.check_settings({"bw_fraction": "0.85", "bw_min_gbps": None, "by_rate": {200: {}, "400": {"lat_max_us": 3}},
                             "by_node_type": {"x": {"nccl_busbw_min_gbps": 100}}}) == []
    with pytest.raises(ValueError, match="port rate 'fast'"):
        A.thresholds(None, "fast")


# judging one test's figure against its threshold is the fabric_test area's rows (the one judging
# path): tests/unit/plugins/module_utils/acceptance/test_acceptance_kinds.py


def test_rounds_wall_time_200_nodes():
    out = A.rounds_wall_time(200, 2, 30, 8)
    assert out == {"rounds": 2, "pairs": 200, "tests": 1600, "wall_s": 60.0}
    assert A.rounds_wall_time(201, 2, 30, 8, rails_at_once=False)["wall_s"] == 3 * 8 * 30.0


def test_isolation_of_10000_nodes_is_quick():
    nodes = ["n%05d" % i for i in range(10000)]
    bad = set((nodes[i], 3) for i in range(0, 10000, 50))  # 200 bad nodes on rail 3
    plan = A.plan_rounds(nodes, 2)
    failed, passed = failed_and_passed(run_plan(plan, range(8), bad))
    start = time.perf_counter()
    iso = A.isolation_rounds(failed, passed)
    assert time.perf_counter() - start < 1.0
    assert len(iso) <= 3
    # the verdicts of rail 3 (the other rails all pass, and cost the same again each)
    result = A.verdicts(run_plan(iso, [3], bad, phase="isolation") + run_plan(plan, [3], bad))
    assert set((v["node"], v["rail"]) for v in result if v["verdict"] != "pass") == bad
