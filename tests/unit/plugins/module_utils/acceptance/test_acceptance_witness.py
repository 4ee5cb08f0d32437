# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who witnesses a rail, for every check kind (DOMAIN 9): where one end of a pair is known-good,
that end runs a side that measures every kind of the pair and the verdict reads its figure; a
figure the candidate alone printed never admits it, whichever side the candidate ran."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _kinds as K
from ansible_collections.rdma.fabric.plugins.module_utils.areas import fabric_test as F

DEFAULTS = {"peers": 2, "kinds": ["bw", "lat"], "duration": 2, "timeout": 0, "devices": [], "tcp_port": 18515,
            "address": "", "use_cuda": "auto", "leaves": {}, "thresholds": {}, "node_type": "", "known_good": [],
            "nccl_launcher": [], "report_dir": "/tmp/r", "verdict_file": "", "fail": True, "group": "",
            "loopback": "never", "ansible_host": ""}
GOOD = ["good1", "good2"]
NEW = ["new1", "new2"]
# every single kind, and every pair of kinds that one side can witness together
KIND_SETS = [[k] for k in K.NAMES] + [list(p) for p in itertools.combinations(K.NAMES, 2) if K.witness_side(p)]


def spec_of(kinds):
    return {"settings": dict(DEFAULTS, kinds=list(kinds))}


def gathered():
    tools = dict((tool, "/usr/bin/" + tool) for tool in K.TOOLS)
    tools["timeout"] = "/usr/bin/timeout"
    return {"rails": [{"device": "mlx5_%d" % i, "ib_port": 1, "link_layer": "InfiniBand", "state": "ACTIVE",
                       "rate_gbps": 100, "numa_node": 0} for i in range(2)], "tools": tools, "gpus": 0}


def nodes_of(spec):
    return dict((h, F.node(h, {"settings": dict(spec["settings"], address=h + ".lab")}, gathered()))
                for h in GOOD + NEW)


def figure(kind, passing):
    """A figure that passes (or clearly fails) the kind's default threshold at 100 Gb/s."""
    if K.row(kind)["better"] == "higher":
        return 99.0 if passing else 10.0
    return 0.9 if passing else 50.0


def run_round(entry, kinds, candidate_says, witness_says):
    """The outcome of one planned pair: each side prints what its host says (a candidate lies at will)."""
    def results(host):
        passing = candidate_says if host in NEW else witness_says
        out = []
        for rail in entry["rails"]:
            for kind in kinds:
                value = figure(kind, passing)
                record = {"rail": rail, "kind": kind, "ok": True, "error": None, "rc": 0}
                record[K.row(kind)["figure"]] = value
                out.append(record)
        return out
    return {"client": entry["client"], "server": entry["server"], "rails": entry["rails"],
            "client_results": results(entry["client"]), "server_results": results(entry["server"])}


def judge(kinds, candidate_says, witness_says, swap=False):
    spec = spec_of(kinds)
    nodes = nodes_of(spec)
    rounds = F.rounds(nodes, spec, GOOD)
    outcomes = []
    for r in rounds:
        for entry in r.values():
            if swap:    # the roles turned: the known-good node on the side the plan did not give it
                entry = dict(entry, server=entry["client"], client=entry["server"])
            outcomes.append(run_round(entry, kinds, candidate_says, witness_says))
    rows = F.rows(nodes, spec, outcomes, known_good=GOOD)
    return F.verdict(nodes, spec, rows, NEW, GOOD), rows, rounds


@pytest.mark.parametrize("kinds", KIND_SETS, ids="+".join)
def test_the_known_good_node_runs_a_side_that_measures_every_kind(kinds):
    spec = spec_of(kinds)
    side = K.witness_side(kinds)
    assert side is not None and all(side in K.row(k)["measures"] for k in kinds)
    rounds = F.rounds(nodes_of(spec), spec, GOOD)
    assert rounds
    for r in rounds:
        for driver, entry in r.items():
            assert driver in NEW                         # the candidate drives (a play host)
            assert entry[side] in GOOD and entry["server" if side == "client" else "client"] == driver


@pytest.mark.parametrize("kinds", KIND_SETS, ids="+".join)
def test_a_candidates_own_figures_never_admit_it(kinds):
    verdict, rows, dummy = judge(kinds, candidate_says=True, witness_says=False)
    assert verdict["passed"] == [] and sorted(verdict["failed"]) == NEW
    assert rows and not any(row["ok"] for row in rows)
    assert all(row["measured_by"].split()[1] in GOOD for row in rows)


@pytest.mark.parametrize("kinds", KIND_SETS, ids="+".join)
def test_the_witnesses_figures_admit_a_candidate_whatever_it_prints(kinds):
    verdict, rows, dummy = judge(kinds, candidate_says=False, witness_says=True)
    assert verdict["passed"] == NEW and verdict["failed"] == {}
    assert all(row["ok"] for row in rows)


@pytest.mark.parametrize("kind", K.NAMES)
def test_a_known_good_node_on_a_side_that_does_not_measure_is_no_witness(kind):
    """Turned around, the known-good node runs the other side: where that side measures nothing
    (the ib_write_bw/ib_read_bw server) the row fails with the reason; where it measures (ib_send_bw's
    sender, ib_write_lat's both sides) its own figure is still the one read."""
    verdict, rows, dummy = judge([kind], candidate_says=True, witness_says=False, swap=True)
    assert verdict["passed"] == []
    witness = K.witness_side([kind])
    turned = "server" if witness == "client" else "client"
    if turned in K.row(kind)["measures"]:
        assert all(row["figure"] == figure(kind, False) for row in rows)
    else:
        assert all(row["error"].startswith("no witness: the known-good good") for row in rows)
        assert all(row["figure"] is None for row in rows)
    verdict, rows, dummy = judge([kind], candidate_says=False, witness_says=True, swap=True)
    assert verdict["passed"] == (NEW if turned in K.row(kind)["measures"] else [])


def test_without_a_known_good_node_the_kinds_first_measuring_side_is_read():
    for kind in K.NAMES:
        assert K.figure_side(kind) == K.row(kind)["measures"][0]
        assert K.figure_side(kind, "client") == ("client" if "client" in K.row(kind)["measures"] else None)
        assert K.figure_side(kind, "server") == ("server" if "server" in K.row(kind)["measures"] else None)
