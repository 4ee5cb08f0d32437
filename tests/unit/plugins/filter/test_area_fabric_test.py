"""The fabric_test area object: nodes from gathered facts, rounds, rows judged against the
thresholds, isolation and the verdict that names the node and the rail (pure, no host)."""
import json

import pytest

from ansible_collections.rdma.fabric.plugins.filter.fabric_test import fabric_test as step
from ansible_collections.rdma.fabric.plugins.module_utils.areas import fabric_test as F

from ansible.errors import AnsibleFilterError

DEFAULTS = {"peers": 2, "kinds": ["bw", "lat"], "duration": 2, "timeout": 0, "devices": [], "tcp_port": 18515,
            "address": "x", "use_cuda": "auto", "leaves": {}, "thresholds": {}, "node_type": "", "known_good": [],
            "nccl_launcher": [], "report_dir": "/tmp/r", "verdict_file": "/var/lib/rdma-fabric/fabric-test.json",
            "fail": True}


def spec(**over):
    settings = dict(DEFAULTS, **over)
    return {"settings": settings}


def gathered(rails=2, layer="Ethernet", rate=100, extra=()):
    ports = [{"device": "mlx5_%d" % i, "ib_port": 1, "link_layer": layer, "state": "ACTIVE", "rate_gbps": rate,
              "gid_index": 3 if layer == "Ethernet" else None, "numa_node": 0} for i in range(rails)]
    ports += list(extra)
    return {"rails": ports, "tools": {"ib_write_bw": "/usr/bin/ib_write_bw", "ib_write_lat": "/usr/bin/ib_write_lat",
                                      "timeout": "/usr/bin/timeout"}, "gpus": 0, "peermem": False}


def nodes_of(hosts, **kw):
    return dict((h, F.node(h, {"settings": dict(DEFAULTS, address=h + ".lab")}, gathered(**kw))) for h in hosts)


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


def test_too_many_peers_is_each_nodes_error_naming_the_variable():
    planned = step(nodes_of(["a", "b", "c"]), "plan", spec(peers=3))
    assert planned["rounds"] == []
    assert all("fabric_test_peers=3" in n["error"] for n in planned["nodes"].values())
    with pytest.raises(AnsibleFilterError, match="step 'bogus'"):
        step({}, "bogus", spec())


def test_onboard_rounds_only_pair_new_with_known_good_and_the_new_node_drives():
    nodes = nodes_of(["good1", "good2", "new1", "new2"])
    rounds = step(nodes, "rounds", spec(), ["good1", "good2"])
    met = {}
    for r in rounds:
        for client, entry in r.items():
            assert client.startswith("new") and entry["server"].startswith("good")
            met.setdefault(client, set()).add(entry["server"])
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
        for client, entry in r.items():
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
    verdict = step([], "verdict", s, nodes, ["a", "z"])
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
    nodes = nodes_of(["a", "b"])
    s = spec(nccl_launcher=["mpirun", "--tag-output", "-np", "{np}", "-H", "{hosts}"],
             thresholds={"by_node_type": {"lab": {"nccl_busbw_min_gbps": 40}}}, node_type="lab")
    launcher = step({"server": "b"}, "launcher", s, nodes, "a")
    assert launcher == ["mpirun", "--tag-output", "-np", "2", "-H", "a.lab,b.lab"]
    for n in nodes.values():
        n["node_type"] = "lab"
    skipped = step([], "verdict", s, nodes, ["a", "b"], [], [
        {"client": "a", "server": "b", "result": {"skipped": True, "reason": "mpirun not found"}}])
    assert [k["reason"] for k in skipped["skipped"]] == ["mpirun not found", "mpirun not found"]
    assert skipped["failed"] == {}
    slow = step([], "verdict", s, nodes, ["a", "b"], [], [
        {"client": "a", "server": "b", "result": {"ok": True, "avg_busbw_gbps": 21.5}}])
    assert sorted(slow["failed"]) == ["a", "b"] and slow["findings"][0]["actual"] == "21.5 GB/s"
    assert slow["findings"][0]["expected"] == ">= 40 GB/s bus bandwidth"
    broken = step([], "verdict", s, nodes, ["a", "b"], ["b"], [
        {"client": "a", "server": "b", "result": {"ok": False, "error": "Test NCCL failure common.cu:1279"}}])
    assert list(broken["failed"]) == ["a"] and "NCCL failure" in broken["failed"]["a"][0]["actual"]


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
    assert "fabric_test_peers=2" in planned["nodes"]["r1"]["error"] and "Ethernet fabric of 1 node" in \
        planned["nodes"]["r1"]["error"]
    assert planned["nodes"]["i1"]["error"] is None and len(planned["rounds"]) == 2
    verdict = step([], "verdict", spec(), planned["nodes"], ["r1"])
    assert list(verdict["failed"]) == ["r1"]
