"""The fabric_test area object: nodes from gathered facts, rounds, rows judged against the
thresholds, isolation and the verdict that names the node and the rail (pure, no host)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.rdma.fabric.plugins.filter.fabric_test import fabric_test as step
from ansible_collections.rdma.fabric.plugins.module_utils.areas import fabric_test as F

from ansible.errors import AnsibleFilterError

DEFAULTS = {"peers": 2, "kinds": ["bw", "lat"], "duration": 2, "timeout": 0, "devices": [], "tcp_port": 18515,
            "address": "x", "use_cuda": "auto", "leaves": {}, "thresholds": {}, "node_type": "", "known_good": [],
            "nccl_launcher": [], "report_dir": "/tmp/r", "verdict_file": "/var/lib/rdma-fabric/fabric-test.json",
            "fail": True, "group": "", "loopback": "auto", "ansible_host": ""}


def spec(**over):
    settings = dict(DEFAULTS, **over)
    return {"settings": settings}


def gathered(rails=2, layer="Ethernet", rate=100, extra=()):
    ports = [{"device": "mlx5_%d" % i, "ib_port": 1, "link_layer": layer, "state": "ACTIVE", "rate_gbps": rate,
              "gid_index": 3 if layer == "Ethernet" else None, "numa_node": 0} for i in range(rails)]
    ports += list(extra)
    return {"rails": ports, "tools": {"ib_write_bw": "/usr/bin/ib_write_bw", "ib_write_lat": "/usr/bin/ib_write_lat",
                                      "timeout": "/usr/bin/timeout"}, "gpus": 0, "peermem": False}


def nodes_of(hosts, settings=None, **kw):
    """Nodes planned from each node's own inventory values (DEFAULTS and ``settings``)."""
    return dict((h, F.node(h, {"settings": dict(DEFAULTS, address=h + ".lab", **(settings or {}))}, gathered(**kw)))
                for h in hosts)


def test_node_picks_the_fabric_link_layer_in_natural_order():
    storage = [{"device": "mlx5_10", "ib_port": 1, "link_layer": "Ethernet", "rate_gbps": 200},
               {"device": "mlx5_11", "ib_port": 1, "link_layer": "Ethernet", "rate_gbps": 200}]
    node = F.node("dgx", spec(), gathered(rails=3, layer="InfiniBand", rate=400, extra=storage))
    assert node["error"] is None
    assert [r["device"] for r in node["rails"]] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    node = F.node("n", spec(), gathered(rails=12))
    assert [r["device"] for r in node["rails"]][:3] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    assert node["rails"][10]["device"] == "mlx5_10" and node["rails"][10]["rail"] == 10


def test_node_errors_name_the_variable_and_value():
    node = F.node("n1", spec(devices=["mlx5_0", "mlx5_7"]), gathered())
    assert "fabric_test_devices=['mlx5_0', 'mlx5_7']" in node["error"] and "mlx5_7" in node["error"]
    assert "no RDMA device" in F.node("n2", spec(), {"rails": [], "tools": {}})["error"]
    missing = gathered()
    missing["tools"]["ib_write_lat"] = None
    assert "ib_write_lat not found" in F.node("n3", spec(), missing)["error"]


@pytest.mark.parametrize("name,value,needle", [
    ("peers", 0, "fabric_test_peers=0"), ("peers", "two", "fabric_test_peers='two'"),
    ("kinds", ["bw", "bogus"], "fabric_test_kinds="), ("kinds", [], "fabric_test_kinds=[]"),
    ("duration", 0, "fabric_test_duration=0"), ("tcp_port", 80, "fabric_test_tcp_port=80"),
    ("devices", ["mlx5_0;rm"], "fabric_test_devices="), ("address", "a b", "fabric_test_address='a b'"),
    ("verdict_file", "relative.json", "fabric_test_verdict_file='relative.json'"),
    ("thresholds", {"bw_fraction": "abc"}, "fabric_test_thresholds.bw_fraction='abc'"),
    ("nccl_launcher", "mpirun", "fabric_test_nccl_launcher='mpirun'"),
])
def test_config_errors(name, value, needle):
    errors = F.config_errors(spec(**{name: value})["settings"])
    assert any(needle in e for e in errors), errors


def test_good_settings_have_no_errors():
    assert F.config_errors(spec()["settings"]) == []


def test_rounds_every_node_meets_two_peers_each_rail_on_its_port():
    nodes = nodes_of(["a", "b", "c", "d"])
    rounds = step(nodes, "rounds", spec())
    peers = {}
    for r in rounds:
        busy = []
        for client, entry in r.items():
            busy += [client, entry["server"]]
            peers.setdefault(client, set()).add(entry["server"])
            peers.setdefault(entry["server"], set()).add(client)
            assert [t["tcp_port"] for t in entry["server_tests"]] == [18515, 18516]
            assert all(t["peer"] == entry["server"] + ".lab" for t in entry["client_tests"])
            assert [t["gid_index"] for t in entry["client_tests"]] == [3, 3]
        assert len(busy) == len(set(busy))
    assert all(len(p) >= 2 for p in peers.values()) and len(rounds) <= 3


def test_a_group_smaller_than_peers_tests_the_peers_there_are_plus_the_loopback():
    planned = step(nodes_of(["a", "b", "c"], {"peers": 3}), "plan", spec())
    assert all(n["error"] is None for n in planned["nodes"].values())
    assert all(n["owed"] == 1 and n["peers_planned"] == 2 and n["loopback"] for n in planned["nodes"].values())
    met, loops = {}, []
    for r in planned["rounds"]:
        busy = [h for e in r.values() for h in set((e["server"], e["client"]))]
        assert len(busy) == len(set(busy))
        for driver, e in r.items():
            if e["loopback"]:
                assert e["server"] == e["client"] == driver and e["client_tests"][0]["peer"] == driver + ".lab"
                loops.append(driver)
            else:
                met.setdefault(e["client"], set()).add(e["server"])
                met.setdefault(e["server"], set()).add(e["client"])
    assert sorted(loops) == ["a", "b", "c"] and all(len(v) == 2 for v in met.values())
    with pytest.raises(AnsibleFilterError, match="step 'bogus'"):
        step({}, "bogus", spec())


def test_onboard_the_known_good_node_measures_and_the_new_node_drives():
    """#40: a figure the candidate alone produced never admits it: the known-good end runs the
    ib_write_bw client (its server only prints the client's report), the new node drives."""
    nodes = nodes_of(["good1", "good2", "new1", "new2"])
    rounds = step(nodes, "rounds", spec(), ["good1", "good2"])
    met = {}
    for r in rounds:
        for driver, entry in r.items():
            assert driver.startswith("new") and entry["server"] == driver and entry["client"].startswith("good")
            assert all(t["peer"] == driver + ".lab" for t in entry["client_tests"])
            met.setdefault(driver, set()).add(entry["client"])
    assert met == {"new1": {"good1", "good2"}, "new2": {"good1", "good2"}}


def result(rail, kind, ok=True, bw=96.0, lat=1.9, error=None):
    out = {"rail": rail, "kind": kind, "ok": ok, "error": error, "rc": 0 if ok else 1}
    if ok:
        out.update(bw_gbps=bw if kind == "bw" else None, lat_typical_us=lat if kind == "lat" else None)
    return out


def run(nodes, rounds, slow=None, phase="round"):
    """The outcomes of ``rounds`` where (host, rail) ``slow`` gets a third of the bandwidth."""
    outcomes = []
    for r in rounds:
        for entry in r.values():
            client = entry["client"]
            res = []
            for rail in entry["rails"]:
                hit = slow and slow[0] in (client, entry["server"]) and slow[1] == rail
                res.append(result(rail, "bw", bw=33.0 if hit else 96.0))
                res.append(result(rail, "lat"))
            outcomes.append({"client": client, "server": entry["server"], "rails": entry["rails"], "phase": phase,
                             "client_results": res, "server_results": []})
    return outcomes


def test_one_slow_rail_is_isolated_to_its_node_and_rail():
    hosts = ["a", "b", "c", "d", "e", "f"]
    nodes = nodes_of(hosts)
    s = spec()
    rounds = step(nodes, "rounds", s)
    rows = step(run(nodes, rounds, slow=("c", 1)), "rows", s, nodes, "round")
    assert any(not r["ok"] for r in rows)
    assert all(r["ok"] for r in rows if r["check"] == "perftest.write_lat")
    iso = step(rows, "isolation", s, nodes)
    assert iso, "a failing pair is retested"
    rows += step(run(nodes, iso, slow=("c", 1), phase="isolation"), "rows", s, nodes, "isolation")
    verdict = step(rows, "verdict", s, nodes, hosts)
    assert sorted(verdict["failed"]) == ["c"] and verdict["passed"] == ["a", "b", "d", "e", "f"]
    finding = verdict["failed"]["c"][0]
    assert finding["subject"] == "rail1/mlx5_1" and finding["check"] == "perftest.write_bw"
    assert "33 Gb/s" in finding["actual"] and finding["expected"].startswith(">= 90 Gb/s")
    assert "rail1/mlx5_1 perftest.write_bw: fail: 33 Gb/s" in step(finding, "message", s)
    text = step(verdict, "verdict_file", s, "c")
    assert json.loads(text)["passed"] is False
    assert json.loads(step(verdict, "verdict_file", s, "a"))["passed"] is True


def test_a_tool_error_is_a_failure_with_the_tool_text_never_a_pass():
    nodes = nodes_of(["a", "b"])
    s = spec(peers=1)
    rounds = step(nodes, "rounds", s)
    outcome = run(nodes, rounds)[0]
    outcome["client_results"][0] = result(0, "bw", ok=False, error="Failed to modify QP 1234 to RTR")
    rows = step([outcome], "rows", s, nodes, "round")
    bad = [r for r in rows if not r["ok"]]
    assert len(bad) == 1 and bad[0]["error"] == "Failed to modify QP 1234 to RTR"
    missing = dict(outcome, client_results=[], error="unreachable")
    rows = step([missing], "rows", s, nodes, "round")
    assert rows and not any(r["ok"] for r in rows) and all(r["error"] == "unreachable" for r in rows)


def test_untestable_node_fails_with_the_reason_and_nccl_is_skipped_not_passed():
    nodes = nodes_of(["a", "b", "c"])
    nodes["z"] = F.node("z", spec(), {"rails": [], "tools": {}})
    s = spec()
    planned = step(nodes, "plan", s)
    rows = step(run(planned["nodes"], planned["rounds"]), "rows", s, planned["nodes"])
    verdict = step(rows, "verdict", s, planned["nodes"], ["a", "z"])
    assert list(verdict["failed"]) == ["z"] and "no RDMA device" in verdict["failed"]["z"][0]["actual"]
    assert [k["check"] for k in verdict["skipped"] if k["host"] == "a"] == ["nccl.all_reduce"]


def test_pairs_cross_leaves_where_the_leaves_are_known():
    hosts = ["n%d" % i for i in range(8)]
    leaves = dict((h, "leaf%d" % (i % 2)) for i, h in enumerate(hosts))
    rounds = step(nodes_of(hosts), "rounds", spec(leaves=leaves))
    pairs = [(entry["server"], client) for r in rounds for client, entry in r.items()]
    assert len(pairs) == 8 and all(leaves[a] != leaves[b] for a, b in pairs)
    assert any("fabric_test_leaves=" in e for e in F.config_errors(spec(leaves={"n1": 3})["settings"]))


def test_node_reads_the_module_result_as_registered():
    """``register`` of rdma.fabric.perftest state=gathered holds the facts under ``gathered``."""
    node = step({"changed": False, "gathered": gathered(rails=2)}, "node", spec(), "n1")
    assert node["error"] is None and [r["device"] for r in node["rails"]] == ["mlx5_0", "mlx5_1"]
    failed = step({"failed": True, "msg": "boom"}, "node", spec(), "n2")
    assert "could not be read: boom" in failed["error"]


def test_nccl_pair_results_skipped_failed_or_below_the_node_type_floor():
    lab = {"thresholds": {"by_node_type": {"lab": {"nccl_busbw_min_gbps": 40}}}, "node_type": "lab"}
    nodes = nodes_of(["a", "b"], lab)
    s = spec(nccl_launcher=["mpirun", "--tag-output", "-np", "{np}", "-H", "{hosts}"], **lab)
    launcher = step({"server": "b", "client": "a"}, "launcher", s, nodes, "a")
    assert launcher == ["mpirun", "--tag-output", "-np", "2", "-H", "a.lab,b.lab"]
    for n in nodes.values():
        n["node_type"] = "lab"
    planned_rounds = step(nodes, "rounds", s)
    first = planned_rounds[0]
    assert first["b"]["client"] == "b" and first["b"]["server"] == "a"
    rows = step(run(nodes, planned_rounds), "rows", s, nodes)
    # an outcome of no planned pair (a node's made-up fact) is not read
    forged = step(rows, "verdict", s, nodes, ["a", "b"], [], [
        {"client": "b", "server": "b", "result": {"ok": False, "msg": "forged"}}], first)
    assert forged["failed"] == {}
    skipped = step(rows, "verdict", s, nodes, ["a", "b"], [], [
        {"client": "b", "server": "a", "result": {"skipped": True, "reason": "mpirun not found"}}], first)
    assert [k["reason"] for k in skipped["skipped"]] == ["mpirun not found", "mpirun not found"]
    assert skipped["failed"] == {}
    slow = step(rows, "verdict", s, nodes, ["a", "b"], [], [
        {"client": "b", "server": "a", "result": {"ok": True, "avg_busbw_gbps": 21.5}}], first)
    assert sorted(slow["failed"]) == ["a", "b"] and slow["findings"][0]["actual"] == "21.5 GB/s"
    assert slow["findings"][0]["expected"] == ">= 40 GB/s bus bandwidth"
    broken = step(rows, "verdict", s, nodes, ["a", "b"], ["a"], [
        {"client": "b", "server": "a", "result": {"ok": False, "error": "Test NCCL failure common.cu:1279"}}], first)
    assert list(broken["failed"]) == ["b"] and "NCCL failure" in broken["failed"]["b"][0]["actual"]


def test_pairs_never_cross_fabrics_and_a_lonely_node_is_named():
    nodes = nodes_of(["r1", "r2", "r3"])
    nodes.update(dict((h, F.node(h, {"settings": dict(DEFAULTS, address=h)}, gathered(layer="InfiniBand", rate=400)))
                      for h in ["i1", "i2", "i3", "i4"]))
    nodes["i9"] = F.node("i9", spec(), gathered(layer="InfiniBand"))
    del nodes["i9"]
    planned = step(nodes, "plan", spec())
    for r in planned["rounds"]:
        for client, entry in r.items():
            assert client[0] == entry["server"][0]
    assert all(n["error"] is None for n in planned["nodes"].values())
    lonely = dict(nodes_of(["r1"]), **dict((h, nodes[h]) for h in ["i1", "i2", "i3", "i4"]))
    planned = step(lonely, "plan", spec())
    # a lone node is no error: it runs the loopback test and owes its pair tests
    r1 = planned["nodes"]["r1"]
    assert r1["error"] is None and r1["owed"] == 2 and r1["loopback"]
    assert "2 of fabric_test_peers=2 pair tests owed" in r1["owed_reason"] and "0 other nodes" in r1["owed_reason"]
    assert planned["nodes"]["i1"]["error"] is None and len(planned["rounds"]) == 2
    assert planned["rounds"][0]["r1"]["loopback"] and planned["rounds"][0]["r1"]["server"] == "r1"
    verdict = step([], "verdict", spec(), planned["nodes"], ["r1"])
    assert list(verdict["failed"]) == ["r1"]      # no result: the loopback did not run, never a pass


def test_a_mixed_inventory_is_planned_per_group_never_across():
    """#39: a 2 x 100G node is never paired with 8 x 400G ones (its rails cannot reach theirs);
    fabric_test_group overrides the automatic grouping."""
    nodes = nodes_of(["h1", "h2", "h3"], rails=8, rate=400)
    nodes.update(nodes_of(["s1"], rails=2, rate=100))
    nodes.update(nodes_of(["i1", "i2"], rails=8, rate=400, layer="InfiniBand"))
    planned = step(nodes, "plan", spec())
    groups = dict((h, n["group"]) for h, n in planned["nodes"].items())
    assert groups["h1"] == groups["h3"] == "Ethernet/8 rails" and groups["s1"] == "Ethernet/2 rails"
    for r in planned["rounds"]:
        for e in r.values():
            assert groups[e["server"]] == groups[e["client"]]
    assert planned["nodes"]["s1"]["owed"] == 2 and planned["nodes"]["s1"]["loopback"]
    assert planned["nodes"]["h1"]["owed"] == 0 and not planned["nodes"]["h1"].get("loopback")
    assert planned["nodes"]["i1"]["owed"] == 1
    # two pods of one shape that do not reach each other
    pods = nodes_of(["a1", "a2", "a3"], {"group": "pod-a"})
    pods.update(nodes_of(["b1", "b2", "b3"], {"group": "pod-b"}))
    planned = step(pods, "plan", spec())
    for r in planned["rounds"]:
        for e in r.values():
            assert e["server"][0] == e["client"][0]


def test_a_fleet_of_one_runs_the_loopback_per_hca_with_its_own_thresholds():
    nodes = nodes_of(["only"], {"thresholds": {"loopback": {"bw_min_gbps": 90}}}, rails=2, rate=100)
    planned = step(nodes, "plan", spec())
    assert len(planned["rounds"]) == 1
    entry = planned["rounds"][0]["only"]
    assert entry["loopback"] and entry["server"] == entry["client"] == "only" and entry["rails"] == [0, 1]
    assert [t["device"] for t in entry["server_tests"]] == [t["device"] for t in entry["client_tests"]]
    outcome = run(planned["nodes"], planned["rounds"])
    outcome[0]["client_results"][0]["bw_gbps"] = 85.0      # rail 0: 85 < 90 (the loopback floor)
    rows = step(outcome, "rows", spec(), planned["nodes"])
    assert [r["check"] for r in rows] == ["perftest.loopback_write_bw", "perftest.loopback_write_lat"] * 2
    assert rows[0]["expected"] == ">= 90 Gb/s" and not rows[0]["ok"] and rows[2]["ok"]
    verdict = step(rows, "verdict", spec(), planned["nodes"], ["only"])
    finding = verdict["failed"]["only"][0]
    assert finding["subject"] == "rail0/mlx5_0 loopback" and finding["actual"] == "fail: 85 Gb/s"
    rows[0]["ok"], rows[0]["figure"] = True, 95.0
    verdict = step(rows, "verdict", spec(), planned["nodes"], ["only"])
    assert verdict["passed"] == ["only"] and verdict["provisional"]["only"]["owed"] == 2
    assert json.loads(step(verdict, "verdict_file", spec(), "only"))["provisional"] is True
    assert step(rows, "isolation", spec(), planned["nodes"]) == []


def test_onboarding_with_no_known_good_peer_in_the_group_is_gated_by_the_loopback():
    nodes = nodes_of(["good1"], rails=8, rate=400)
    nodes.update(nodes_of(["new1"], rails=2, rate=100))
    planned = step(nodes, "plan", spec(), ["good1"])
    assert list(planned["rounds"][0]) == ["new1"] and planned["rounds"][0]["new1"]["loopback"]
    assert "no known-good node" in planned["nodes"]["new1"]["owed_reason"]


def test_facts_that_set_a_fabric_test_variable_refuse_the_node():
    """#40: a module's output can carry ansible_facts, which override the inventory."""
    node = step(gathered(), "node", spec(), "evil", ["ansible_local", "fabric_test_thresholds"])
    assert "facts set fabric_test_thresholds" in node["error"] and "refused" in node["error"]
    assert step(gathered(), "node", spec(), "fine", ["ansible_local", "distribution"])["error"] is None


def test_each_node_is_judged_by_its_own_inventory_thresholds_not_the_first_hosts():
    """#40: the run-once plan used the first play host's settings for every node."""
    nodes = nodes_of(["a"], {"thresholds": {"bw_fraction": 0.5}})
    nodes.update(nodes_of(["b", "c", "d"]))
    s = spec(thresholds={"bw_fraction": 0.5})     # the first host's (a's) settings
    planned = step(nodes, "plan", s)
    rows = step(run(planned["nodes"], planned["rounds"], slow=("b", 0)), "rows", s, planned["nodes"])
    slow = [r for r in rows if r["check"] == "perftest.write_bw" and r["rail"] == 0 and "b" in (r["server"], r["client"])]
    judged_by_b = [r for r in slow if r["client"] == "b" or r["client"] != "a"]
    assert judged_by_b and all(r["expected"] == ">= 90 Gb/s" and not r["ok"] for r in judged_by_b)


def test_the_pair_takes_the_judged_nodes_times_within_limits():
    nodes = nodes_of(["good"], {"duration": 5})
    nodes.update(nodes_of(["new"], {"duration": 30, "timeout": 0}))
    entry = step(nodes, "rounds", spec(), ["good"])[0]["new"]
    assert entry["duration"] == 30 and entry["timeout"] == 0
    nodes["new"]["settings"]["duration"] = 86400        # never past the limit, even if it got here
    assert step(nodes, "rounds", spec(), ["good"])[0]["new"]["duration"] == F.MAX_DURATION


def test_a_threshold_above_the_port_rate_is_refused_by_name():
    node = F.node("n", spec(thresholds={"bw_min_gbps": 500}), gathered(rate=400))
    assert "fabric_test_thresholds={'bw_min_gbps': 500}" in node["error"] and "can never be met" in node["error"]
    node = F.node("n", spec(thresholds={"loopback": {"bw_min_gbps": 450}}), gathered(rate=400))
    assert "(loopback)" in node["error"]


def test_the_address_is_decided_per_node_without_name_resolution():
    facts = dict(gathered(), address="10.88.0.7")
    assert F.node("n", spec(address=""), facts)["address"] == "10.88.0.7"
    assert F.node("n", spec(address=""), facts)["address_source"] == "the node's default-route address"
    assert F.node("n", spec(address="", ansible_host="192.0.2.9"), facts)["address"] == "192.0.2.9"
    assert F.node("n", spec(address="n.example"), facts)["address"] == "n.example"
    assert F.node("n", spec(address=""), dict(gathered(), address="x; rm"))["address"] == "n"


def test_the_failure_message_is_a_few_lines_and_names_the_report():
    findings = [{"subject": "rail%d/mlx5_%d" % (i, i), "check": "perftest.write_bw", "actual": "fail: 180 Gb/s with p",
                 "expected": ">= 360 Gb/s with a peer that passes"} for i in range(12)]
    text = step(findings, "message", spec(), "n1", "/tmp/r")
    lines = text.splitlines()
    assert lines[0] == "Fabric test failed on n1: 12 findings" and len(lines) == 11
    assert lines[1] == "- rail0/mlx5_0 perftest.write_bw: fail: 180 Gb/s with p (expected >= 360 Gb/s with a peer that passes)"
    assert lines[-2] == "- and 4 more" and lines[-1] == "Report: /tmp/r/fabric_test.json"


def test_a_candidate_reporting_a_rail_fewer_than_its_node_type_is_refused_not_looped_back():
    """#40 review: the group comes from what the candidate reports; with a declared node type it
    cannot put itself in a group of its own and pass on its own loopback."""
    h100 = {"node_type": "BM.GPU.H100.8"}
    nodes = nodes_of(["k1", "k2"], h100, rails=8, rate=400, layer="InfiniBand")
    nodes.update(nodes_of(["cand"], h100, rails=7, rate=400, layer="InfiniBand"))
    planned = step(nodes, "plan", spec(), ["k1", "k2"])
    assert "cand reports InfiniBand/7 rails/BM.GPU.H100.8" in planned["nodes"]["cand"]["error"]
    assert "refused" in planned["nodes"]["cand"]["error"] and planned["rounds"] == []
    verdict = step([], "verdict", spec(), planned["nodes"], ["cand"], ["k1", "k2"])
    assert list(verdict["failed"]) == ["cand"] and verdict["passed"] == []


def test_a_client_that_reached_another_hca_is_a_failure_not_its_figure():
    """#40 review: the out-of-band address leads elsewhere (an accomplice serving the test)."""
    nodes = nodes_of(["good"], rails=1, layer="InfiniBand", rate=400)
    nodes.update(nodes_of(["cand"], rails=1, layer="InfiniBand", rate=400))
    nodes["cand"]["rails"][0]["lid"] = 7
    entry = step(nodes, "rounds", spec(), ["good"])[0]["cand"]
    ok = dict(result(0, "bw", bw=390.0), remote={"lid": 7, "gid": None})
    outcome = {"client": entry["client"], "server": entry["server"], "rails": [0], "phase": "round",
               "client_results": [ok, dict(result(0, "lat"), remote={"lid": 7, "gid": None})], "server_results": []}
    rows = step([outcome], "rows", spec(), nodes, "round", ["good"])
    assert all(r["ok"] for r in rows)
    outcome["client_results"][0] = dict(ok, remote={"lid": 9, "gid": None})
    rows = step([outcome], "rows", spec(), nodes, "round", ["good"])
    assert not rows[0]["ok"] and "reached LID 9, not cand's mlx5_0 (LID 7)" in rows[0]["error"]
    roce = nodes_of(["g"], rails=1)
    roce.update(nodes_of(["c"], rails=1))
    roce["c"]["rails"][0]["gid"] = "::ffff:10.0.0.5"
    row = F._reached_elsewhere({"remote": {"gid": "::ffff:10.0.0.77"}}, roce["c"]["rails"][0], "c")
    assert "reached GID ::ffff:10.0.0.77, not c's mlx5_0" in row
    assert F._reached_elsewhere({"remote": {"gid": "0000:0000:0000:0000:0000:ffff:0a00:0005"}},
                                roce["c"]["rails"][0], "c") is None


def test_the_failure_message_shows_node_text_controls_as_escapes():
    """#40 low: a perftest error from the node is printed in the failing task's message on the
    operator's console: terminal escapes, C1 controls, DEL, bidi overrides and lone surrogates in
    any field are shown as visible escapes (the report's terminal_text), never written raw."""
    finding = {"subject": "rail0/mlx5_0\x1b[2J", "check": "perftest.write_bw\u202e",
               "actual": "fail: \x1b]8;;http://evil/\x07click\x1b]8;;\x07 \x9b31m\x7f \ud800",
               "expected": ">= 360 Gb/s\x1b[8m"}
    text = step(finding, "message", spec(), "n1\x1b[1A", "/tmp/r\x1b[K")
    for bad in ("\x1b", "\x07", "\x9b", "\x7f", "\u202e", "\ud800"):
        assert bad not in text
    assert text.count("\n") == 2    # head, one finding, the report line: no line break forged
    assert "rail0/mlx5_0\\x1b[2J perftest.write_bw\\u202e: fail: \\x1b]8;;http://evil/\\x07click" in text
    assert "\\x9b31m\\x7f \\ud800 (expected >= 360 Gb/s\\x1b[8m)" in text
    assert text.startswith("Fabric test failed on n1\\x1b[1A: 1 finding\n")
    assert text.endswith("Report: /tmp/r\\x1b[K/fabric_test.json")
