# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The check kinds registry (acceptance/_kinds.py) and what derives from it: the perftest module's
documented and coded choices, the role's argument spec, the docs table, the command lines, the
thresholds; and the one judging path (areas/fabric_test.py rows and verdict) for each kind."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _acceptance as A
from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _kinds as K
from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run
from ansible_collections.rdma.fabric.plugins.module_utils.areas import fabric_test as F
from ansible_collections.rdma.fabric.plugins.modules import perftest as module

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))


def _yaml(*parts):
    with open(os.path.join(REPO, *parts)) as handle:
        return yaml.safe_load(handle)


# ------------------------------------------------------------------ what cannot import the registry
def test_the_module_documents_the_registrys_choices_and_default():
    doc = yaml.safe_load(module.DOCUMENTATION)["options"]["kinds"]
    assert doc["choices"] == list(K.NAMES)
    assert doc["default"] == K.DEFAULT
    spec = module.argument_spec()["kinds"]
    assert spec["choices"] == list(K.NAMES) and spec["default"] == K.DEFAULT


def test_the_role_argument_spec_and_defaults_hold_the_registrys_choices():
    option = _yaml("roles", "fabric_test", "meta", "argument_specs.yml")["argument_specs"]["main"]["options"][
        "fabric_test_kinds"]
    assert option["choices"] == list(K.NAMES)
    assert option["default"] == K.DEFAULT
    assert _yaml("roles", "fabric_test", "defaults", "main.yml")["fabric_test_kinds"] == K.DEFAULT


def test_the_docs_table_is_the_registrys():
    with open(os.path.join(REPO, "docs", "fabric_test.md")) as handle:
        text = handle.read()
    found = re.search(r"<!-- check kinds: [^\n]*-->\n(.*?)\n<!-- end of check kinds -->", text, re.S)
    assert found, "docs/fabric_test.md has no check kinds table"
    assert found.group(1) == K.docs_table()
    for name in K.NAMES:
        assert "| `%s` |" % name in found.group(1)


# ------------------------------------------------------------------ the rows
def test_every_row_is_complete_and_names_are_unique():
    keys = set(K.ROWS[0])
    for row in K.ROWS:
        assert set(row) == keys, row["name"]
        assert row["better"] in ("higher", "lower") and row["table"] in ("bw", "lat")
        assert row["measures"] and set(row["measures"]) <= set(K.SIDES)
        assert row["figure"] in run.figures(row["name"], None, None)
        assert row["limit"] in K.THRESHOLD_KEYS and row["limit"] in A.thresholds(None, 100)
        assert row["fraction"] is None or row["fraction"] in A.LAYER_KEYS
        assert row["inherit"] is None or K.row(row["inherit"])["fraction"]
        assert row["doc"] and "|" not in row["doc"]
    for field in ("name", "tool", "check"):
        values = [row[field] for row in K.ROWS]
        assert len(set(values)) == len(values), field
    checks = [row["check"] for row in K.ROWS] + [row["loopback_check"] for row in K.ROWS if row["loopback_check"]]
    assert len(set(checks)) == len(checks)
    assert set(K.DEFAULT) == set(("bw", "lat"))     # what runs by default does not change with new kinds
    with pytest.raises(ValueError, match="kind 'nope': expected one of"):
        K.row("nope")


def node_facts():
    rails = [{"device": "mlx5_0", "ib_port": 1, "link_layer": "InfiniBand", "state": "ACTIVE", "rate_gbps": 400,
              "netdev": "ib0", "gid_index": None, "lid": 7, "numa_node": 0}]
    paths = dict((tool, "/usr/bin/" + tool) for tool in K.TOOLS)
    paths["timeout"] = "/usr/bin/timeout"
    return {"rails": rails, "gpus": 0, "peermem": False, "gpu_list": [], "_paths": paths, "_allowed": None}


@pytest.mark.parametrize("kind", K.NAMES)
def test_the_command_line_is_the_rows(kind, monkeypatch):
    monkeypatch.setattr(run, "numa_prefix", lambda node, device, enabled: ([], "none: numa=false"))
    params = {"kinds": [kind], "duration": 7, "timeout": 27, "numa": False, "use_cuda": "false", "extra_args": [],
              "bind_address": None}
    test = {"rail": 0, "device": "mlx5_0", "ib_port": 1, "tcp_port": 18515, "peer": "10.0.0.2"}
    rail, planned = run.plan(node_facts(), test, 0, params, "client")
    argv = planned[0]["argv"]
    row = K.row(kind)
    assert argv[:3] == ["/usr/bin/timeout", "--kill-after=5", "27"]
    assert argv[3] == "/usr/bin/" + row["tool"] and argv[-1] == "10.0.0.2"
    assert argv[4:11] == ["-d", "mlx5_0", "-i", "1", "-p", "18515", "-F"]
    assert argv[11:-1] == K.tool_argv(kind, 7)
    assert ("-D" in argv) == row["duration"]
    assert planned[0]["error"] is None


@pytest.mark.parametrize("kind", K.NAMES)
def test_extra_args_the_tool_refuses_are_refused_by_name(kind):
    tried = 0
    for key, why in K.row(kind)["refuses"].items():
        if key in run.PERFTEST_MODULE_SETS:
            continue        # refused first as the module's own (-q)
        takes = run.PERFTEST_SHORT[run.PERFTEST_SHORT.index(key) + 1:][:1] == ":"
        with pytest.raises(run.RunError, match=re.escape("%s refuses -%s (%s)" % (K.row(kind)["tool"], key, why))):
            run.check_perftest_args(["-" + key] + (["1"] if takes else []), [kind])
        tried += 1
    assert tried >= 3
    assert run.check_perftest_args(["-S", "3"], [kind]) == ["-S", "3"]


def test_threshold_keys_are_the_rows_and_layer_checks_follow_them():
    assert A.LAYER_KEYS == K.LAYER_KEYS
    for key, info in K.THRESHOLD_KEYS.items():
        message = A.check_settings({key: -1})
        assert message and message[0].startswith("fabric_test_thresholds.%s=-1: expected" % key)
        if info["type"] == "fraction":
            assert A.check_settings({key: 0.5}) == [] and A.check_warnings({key: 0.1})
        elif info["type"] == "floor":
            assert A.check_warnings({key: 0.5}) and A.check_warnings({key: 100}) == []
        else:
            assert A.check_warnings({key: 500}) and A.check_warnings({key: 3}) == []
    assert A.check_settings({"loopback": {"nccl_busbw_min_gbps": 1}})     # no loopback for NCCL


@pytest.mark.parametrize("kind", [row["name"] for row in K.ROWS if row["fraction"]])
def test_a_bandwidth_kind_has_its_own_floor_from_its_fraction_or_inherited(kind):
    row = K.row(kind)
    thr = A.thresholds(None, 400)
    assert thr[row["limit"]] == 360.0            # 0.9 of the port rate, its own or inherited
    own = A.thresholds({row["fraction"]: 0.5}, 400)
    assert own[row["limit"]] == 200.0
    floor = A.thresholds({"by_rate": {400: {row["limit"]: 300}}}, 400)
    assert floor[row["limit"]] == 300.0
    loop = A.thresholds({"loopback": {row["limit"]: 380}}, 400, loopback=True)
    assert loop[row["limit"]] == 380.0 and A.thresholds({"loopback": {row["limit"]: 380}}, 400)[row["limit"]] == 360.0
    if row["inherit"]:
        parent = K.row(row["inherit"])
        assert A.thresholds({parent["limit"]: 250}, 400)[row["limit"]] == 250.0     # none of its own: the parent's
        assert A.thresholds({parent["limit"]: 250, row["fraction"]: 0.8}, 400)[row["limit"]] == 320.0


# ------------------------------------------------------------------ the one judging path, per kind
DEFAULTS = {"peers": 1, "kinds": ["bw", "lat"], "duration": 2, "timeout": 0, "devices": [], "tcp_port": 18515,
            "address": "", "use_cuda": "auto", "leaves": {}, "thresholds": {}, "node_type": "", "known_good": [],
            "nccl_launcher": [], "report_dir": "/tmp/r", "verdict_file": "", "fail": True, "group": "",
            "loopback": "never", "ansible_host": ""}


def spec_of(kinds, **over):
    return {"settings": dict(DEFAULTS, kinds=list(kinds), **over)}


def gathered(rate=400):
    tools = dict((tool, "/usr/bin/" + tool) for tool in K.TOOLS)
    tools["timeout"] = "/usr/bin/timeout"
    return {"rails": [{"device": "mlx5_3", "ib_port": 1, "link_layer": "InfiniBand", "state": "ACTIVE",
                       "rate_gbps": rate, "numa_node": 0}], "tools": tools, "gpus": 0}


def nodes_of(hosts, spec):
    return dict((h, F.node(h, {"settings": dict(spec["settings"], address=h + ".lab")}, gathered())) for h in hosts)


def outcome(kind, client_figure=None, server_figure=None, client_error=None, server_error=None):
    row = K.row(kind)

    def result(figure, error):
        out = {"rail": 0, "kind": kind, "ok": error is None and figure is not None, "error": error, "rc": 0}
        out[row["figure"]] = figure
        return out
    return {"client": "gpu-02", "server": "gpu-01", "rails": [0],
            "client_results": [result(client_figure, client_error)],
            "server_results": [result(server_figure, server_error)]}


@pytest.mark.parametrize("kind", K.NAMES)
def test_a_figure_is_judged_against_its_kinds_threshold(kind):
    row = K.row(kind)
    spec = spec_of([kind])
    nodes = nodes_of(["gpu-01", "gpu-02"], spec)
    side = K.figure_side(kind)
    good, bad = (371.5, 212.31) if row["better"] == "higher" else (1.02, 3.1)
    limit = "360" if row["better"] == "higher" else "2.5"

    def judged(figure, other=None):
        figures = {side: figure, "server" if side == "client" else "client": other}
        return F.rows(nodes, spec, [outcome(kind, figures["client"], figures["server"])])[0]
    row_bad = judged(bad, good)
    assert row_bad["check"] == row["check"] and row_bad["figure"] == bad and row_bad["ok"] is False
    assert row_bad["expected"] == "%s %s %s" % (">=" if row["better"] == "higher" else "<=", limit, row["unit"])
    assert row_bad["measured_by"] == "%s %s" % (side, "gpu-02" if side == "client" else "gpu-01")
    assert judged(good, bad)["ok"] is True      # the measuring side's figure, not the other's
    assert judged(None)["ok"] is False           # no figure: never a pass
    verdict = F.verdict(nodes, spec, [row_bad], ["gpu-01", "gpu-02"])
    finding = [f for f in verdict["findings"] if f["host"] == "gpu-01"][0]
    assert finding["check"] == row["check"] and finding["subject"] == "rail0/mlx5_3"
    assert finding["actual"] == "undetermined: %s %s with gpu-02" % (("%.2f" % bad).rstrip("0").rstrip("."), row["unit"])
    assert finding["severity"] == "warning" and verdict["checks"] == [row["check"]]


@pytest.mark.parametrize("kind", K.NAMES)
def test_a_tool_error_is_the_rows_error_never_a_pass(kind):
    spec = spec_of([kind])
    nodes = nodes_of(["gpu-01", "gpu-02"], spec)
    side = K.figure_side(kind)
    errors = {side: "Couldn't connect to 10.0.0.2:18515"}
    rows = F.rows(nodes, spec, [outcome(kind, client_error=errors.get("client"), server_error=errors.get("server"))])
    assert rows[0]["ok"] is False and rows[0]["error"] == "Couldn't connect to 10.0.0.2:18515"
    both = F.rows(nodes, spec, [outcome(kind, client_error="a", server_error=" Port number 1 state is Down")])[0]
    assert both["error"] == "client gpu-02: a; server gpu-01:  Port number 1 state is Down"
    missing = F.rows(nodes, spec, [dict(outcome(kind), client_results=[], server_results=[])])[0]
    assert missing["error"] == "the %s reported no %s result" % (side, kind) and missing["ok"] is False


def test_the_report_lists_the_default_kinds_checks_and_those_that_ran():
    from ansible_collections.rdma.fabric.plugins.action import fabric_test_report as report
    assert report.CHECKS == sorted([K.CHECKS["bw"], K.CHECKS["lat"], K.LOOPBACK_CHECKS["bw"],
                                    K.LOOPBACK_CHECKS["lat"], "fabric_test.node"])
