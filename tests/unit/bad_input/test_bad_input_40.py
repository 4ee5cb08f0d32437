# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad input of issue 40 (the classes of the held-back suite that the roles health, roce_qos,
gpudirect, rails, nccl_env and opensm and the resource engine own), one test per class, and the
four defects left from round 2. The rule: every value either can be met or is refused by name
(the variable the user set and the value), and a value that would silently turn a check off is
refused. A dictionary of limits merges over the defaults unless it says ``replace: true``.

1. values that silently turn a check off: a partial limits dictionary replacing every default,
   a textfile name node_exporter never reads, a timer period of 0;
2. an RDMA-CM RoCE mode that defeats DSCP trust;
3. a malformed structured input that ends in a traceback: every option of the roles' argument
   specs, each given a value of every wrong shape, through the role_spec lookup's path (the
   argument spec, the area's spec, its config_errors, its plan where the plan needs no node);
4. round 2: an empty ``replaced`` config, a file mode given as the integer 644, an interface
   name holding ``;``, a health interval of 0."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml
from ansible.errors import AnsibleError

from ansible_collections.rdma.fabric.plugins.module_utils.areas import health, nccl_env, rails, roce_qos
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health, _health_timer
from ansible_collections.rdma.fabric.plugins.modules import mlnx_qos, node_files, rail_addresses
from ansible_collections.rdma.fabric.plugins.plugin_utils import _node_package, _role_specs
from ansible_collections.rdma.fabric.tests.unit import helpers

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# fabric_test and nic_firmware: their own bad-input classes, elsewhere
AREAS = ("health", "roce_qos", "gpudirect", "rails", "nccl_env", "opensm")
# what the inventory must give for the defaults to plan (a template default made plain)
REQUIRED = {
    "health": {"health_report_dir": "/tmp/health-report"},
    "nccl_env": {"nccl_env_roce_dscp": 26},
    "opensm": {"opensm_sm_key": "0x00000000c0ffee01"},
    "rails": {"rails_pools": ["10.10.0.0/24", "10.10.1.0/24"], "ansible_play_hosts_all": ["gpu-01", "gpu-02"]},
}
ROCE_FACTS = {"device_names": ["mlx5_0", "mlx5_1"], "devices": {
    "mlx5_0": {"ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "eth2"}]},
    "mlx5_1": {"ports": [{"port": 1, "link_layer": "Ethernet", "netdev": "eth3"}]}}}
# the plans that need no node beyond these facts
PLAN_FACTS = {"health": {}, "roce_qos": ROCE_FACTS}


_NODE_FILES = {}


@pytest.fixture(autouse=True)
def _node_files_once(monkeypatch):
    """The health spec's node module_utils (an import closure read from disk), read once: the
    shapes below build that spec some thousand times."""
    real = _node_package.files

    def files(entry):
        if entry not in _NODE_FILES:
            _NODE_FILES[entry] = real(entry)
        return _NODE_FILES[entry]
    monkeypatch.setattr(_node_package, "files", files)


def _variables(role, **over):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
        variables = yaml.safe_load(handle) or {}
    variables.update(REQUIRED.get(role, {}), inventory_hostname="gpu-01")
    variables.update(over)
    return variables


def _errors(role, **over):
    """What the role's preflight says of these variables: the role_spec lookup's spec (the
    argument spec's check, the area's spec) and the area's config_errors, then (no error) its
    plan where it needs no node. A PlanError or AnsibleError is the refusal, as its message."""
    variables = _variables(role, **over)

    def get(name, *default):
        return variables[name] if name in variables else (default[0] if default else None)
    area = _role_specs.AREA_OBJECTS[role]
    try:
        spec = _role_specs.area_spec(role, get, lambda term, template_vars=None: "")
        errors = area.config_errors(spec["settings"])
        if not errors and role in PLAN_FACTS:
            area.plan(PLAN_FACTS[role], spec)
    except (PlanError, AnsibleError) as exc:
        return [str(exc)]
    return errors


def _named(errors, *words):
    assert errors, "accepted"
    assert any(all(w in e for w in words) for e in errors), errors


def _health_settings(**over):
    return health.settings(_variables("health", **over))


# ============================================================== 1. values that turn a check off
def test_a_partial_limits_dictionary_merges_over_the_defaults_unless_it_says_replace():
    """health_gpu_models, health_thresholds and health_checks' counter_limits/ethtool_limits:
    a partial dict keeps the defaults it does not name (a GPU model added keeps H100's 8 ports
    at 400 Gb/s; one counter's limit keeps every other counter judged); ``replace: true`` says
    the dict is the whole set."""
    checks = health.checks(_health_settings(
        health_gpu_models={"GB200": {"ports": 4, "min_rate_gbps": 800}}, health_thresholds={"max_flaps": 2},
        health_checks={"counter_limits": {"symbol_error": 5}, "ethtool_limits": {"rx_crc_errors_phy": 3}}))
    merged = _health.merge_checks(checks)
    assert sorted(merged["gpu_models"]) == ["B200", "GB200", "H100", "H200"]
    assert merged["gpu_models"]["H100"] == {"ports": 8, "min_rate_gbps": 400}
    assert merged["max_flaps"] == 2 and merged["max_pause_per_s"] == 1000 and merged["gid_occupancy_max"] == 0.9
    assert merged["counter_limits"]["symbol_error"] == 5 and merged["counter_limits"]["link_downed"] == 0
    assert merged["ethtool_limits"] == {"rx_crc_errors_phy": 3, "rx_symbol_err_phy": 0}
    # the judge's own merge (rdma_health's checks, health_gate): the same rule
    assert _health.merge_checks({"counter_limits": {"port_rcv_errors": 9}})["counter_limits"]["link_downed"] == 0
    # replace: true is the whole set, said by name
    settings = _health_settings(health_gpu_models={"replace": True, "GB200": {"ports": 4}},
                                health_thresholds={"replace": True, "max_flaps": 2},
                                health_checks={"counter_limits": {"replace": True, "symbol_error": 5}})
    assert health.config_errors(settings) == []
    merged = _health.merge_checks(health.checks(settings))
    assert sorted(merged["gpu_models"]) == ["GB200"] and merged["counter_limits"] == {"symbol_error": 5}
    assert merged["max_flaps"] == 2 and merged["max_pause_per_s"] is None
    # a replace that is no boolean is refused by name
    _named(health.config_errors(_health_settings(health_thresholds={"replace": "yes", "max_flaps": 1})),
           "health_thresholds.replace", "'yes'")
    _named(health.config_errors(_health_settings(health_checks={"counter_limits": {"replace": 1}})),
           "health_checks", "counter_limits.replace=1")
    # the area's defaults are the role's
    defaults = _variables("health")
    assert defaults["health_thresholds"] == health.DEFAULT_THRESHOLDS
    assert defaults["health_gpu_models"] == health.DEFAULT_GPU_MODELS


@pytest.mark.parametrize("textfile, words", [
    ("/var/lib/prometheus/node-exporter/rdma_fabric_health.txt", ["only *.prom", "rdma_fabric_health.txt"]),
    ("/var/lib/prometheus/node-exporter/rdma_fabric_health.prom.tmp", ["only *.prom"]),
    ("/var/lib/prometheus/node-exporter/.prom", ["only *.prom"]),
    ("/var/lib/prometheus/node-exporter/", ["plain absolute path"]),
    ("/var/lib/prometheus/node-exporter/../x.prom", ["plain absolute path"]),
    ("rdma_fabric_health.prom", ["absolute path"]),
    ("/var/lib/prometheus/node-exporter/rdma_fabric_node_drift.prom", ["the drift check's textfile"]),
])
def test_a_textfile_name_node_exporter_never_reads_is_refused(textfile, words):
    """health_timer_textfile (and the drift check's textfile next to it): node_exporter's
    textfile collector reads only *.prom files of its directory; the area refuses any other
    name, and the timer on the node refuses a config edited by hand."""
    errors = health.config_errors(_health_settings(health_timer_textfile=textfile))
    _named(errors, "health_timer_textfile=%r" % textfile, *words)
    assert health.config_errors(_health_settings(health_timer_textfile="/srv/ne/rdma_fabric_node_drift.prom",
                                                 health_timer_drift=False)) == []
    node = _health_timer.config_errors({"interval": 5, "textfile": "/srv/ne/health.txt",
                                        "drift": {"textfile": "/srv/ne/drift"}})
    assert [e.split("=")[0] for e in node] == ["textfile", "drift.textfile"], node


@pytest.mark.parametrize("every", ["0", 0, "0s", "0min 0s", "0.0"])
def test_a_timer_period_of_0_is_refused(every):
    """health_timer_every of 0 (OnUnitActiveSec=0: the periodic health and drift checks would
    never run again) is refused by name; so is a period shorter than one check."""
    _named(health.config_errors(_health_settings(health_timer_every=every)),
           "health_timer_every=%r" % (every,), "longer than 0 s")
    _named(health.config_errors(_health_settings(health_timer_every="2s")), "health_timer_every='2s'",
           "health_interval")
    assert health.config_errors(_health_settings(health_timer_every="5min")) == []


# ============================================================== 2. RoCE mode against DSCP trust
@pytest.mark.parametrize("mode", ["v1", "IB/RoCE v1"])
def test_an_rdma_cm_roce_v1_mode_with_dscp_trust_is_refused(mode):
    """RoCE v1 has no IP header: DSCP trust cannot classify RDMA-CM's connections."""
    errors = _errors("roce_qos", roce_qos_rdma_cm_roce_mode=mode)
    _named(errors, "roce_qos_rdma_cm_roce_mode=%r" % mode, "roce_qos_trust=dscp", "no IP header")
    assert _errors("roce_qos", roce_qos_rdma_cm_roce_mode="v2") == []
    assert _errors("roce_qos", roce_qos_rdma_cm_roce_mode="none") == []


# ============================================================== 3. malformed structured input
WRONG = (None, "junk", "", 7, -1, 0, 1.5, True, [1, 2], ["x"], [None], [[]], [{"a": 1}], {"a": 1}, {"a": None},
         {"a": [1]}, {"a": {"b": "c"}})


def _role_options(role):
    with open(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml")) as handle:
        return yaml.safe_load(handle)["argument_specs"]["main"]["options"]


def _shapes(name, default):
    """``(label, value)``: the variable with each wrong value, and inside its default (a value of
    a dict, a field of a list's dict, an item of a list) each wrong value again."""
    for wrong in WRONG:
        yield name, wrong
    if isinstance(default, dict):
        for key, value in default.items():
            for wrong in WRONG:
                yield "%s.%s" % (name, key), dict(default, **{key: wrong})
            for inner in (value if isinstance(value, dict) else {}):
                for wrong in WRONG:
                    yield "%s.%s.%s" % (name, key, inner), dict(default, **{key: dict(value, **{inner: wrong})})
        if not default:
            for wrong in WRONG:
                yield "%s.eth2" % name, {"eth2": wrong}
                yield "%s.x.y" % name, {"x": {"y": wrong}}
    if isinstance(default, list):
        for wrong in WRONG:
            yield "%s[0]" % name, [wrong] + list(default[1:])
        if default and isinstance(default[0], dict):
            for key in default[0]:
                for wrong in WRONG:
                    yield "%s[0].%s" % (name, key), [dict(default[0], **{key: wrong})] + list(default[1:])


@pytest.mark.parametrize("role", AREAS)
def test_every_option_of_every_shape_is_refused_by_name_never_a_traceback(role):
    """Each variable of the role's argument spec, given every wrong shape (a string where a dict
    is expected, a list of ints where a list of dicts, None...): the argument spec, the area's
    spec, config_errors and the plan end in an error naming the variable, or accept it; never
    in an exception of another kind (a traceback in the run)."""
    assert _errors(role) == [], "the defaults plan"
    defaults = _variables(role)
    failures = []
    for name in sorted(_role_options(role)):
        for label, value in _shapes(name, defaults.get(name)):
            try:
                errors = _errors(role, **{name: value})
            except Exception as exc:   # pylint: disable=broad-except
                failures.append("%s=%r: %s: %s" % (label, value, type(exc).__name__, exc))
                continue
            if errors and not any(name in e for e in errors):
                failures.append("%s=%r: no error names %s: %s" % (label, value, name, errors))
    assert not failures, "\n".join(failures[:40])


@pytest.mark.parametrize("role, over, words", [
    # health: the timer's config was built from a textfile that is no path (posixpath TypeError)
    ("health", {"health_timer_textfile": None}, ["health_timer_textfile=None"]),
    ("health", {"health_timer_textfile": ["x"]}, ["health_timer_textfile=['x']"]),
    # roce_qos: an interface list that is a number (TypeError: not iterable)
    ("roce_qos", {"roce_qos_interfaces": 7}, ["roce_qos_interfaces=7", "list"]),
    # nccl_env: a dict among the allowed names (TypeError: unhashable)
    ("nccl_env", {"nccl_env_allow_unknown": [{"a": 1}]}, ["nccl_env_allow_unknown", "list of names"]),
    # rails, gpudirect, opensm: no traceback found; one malformed shape each, refused by name
    ("rails", {"rails_nics": [["eth2"]]}, ["rails_nics"]),
    ("gpudirect", {"gpudirect_kernel_arguments": [7]}, ["gpudirect_kernel_arguments"]),
    ("opensm", {"opensm_partitions": [{"name": "p", "pkey": "0x7fff", "members": "junk"}]}, ["opensm_partitions"]),
])
def test_the_malformed_inputs_that_ended_in_a_traceback_are_refused_by_name(role, over, words):
    _named(_errors(role, **over), *words)


# ============================================================== 4. the four defects of round 2
def test_round2_an_empty_replaced_config_is_refused(monkeypatch, tmp_path):
    """state: replaced with nothing in it: an empty config, or an entry that names only its
    object (a rail interface's addresses, routes and rules would all be deleted)."""
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))
    for main, config in ((mlnx_qos.main, []), (rail_addresses.main, [])):
        kind, result = helpers.run_module(monkeypatch, main, {"state": "replaced", "config": config})
        assert kind == "fail" and "config=[]" in result["msg"] and "state=replaced" in result["msg"], result
    kind, result = helpers.run_module(monkeypatch, rail_addresses.main,
                                      {"state": "replaced", "config": [{"interface": "eth2"}]})
    assert kind == "fail" and "config[0]" in result["msg"] and "interface=eth2" in result["msg"], result
    kind, result = helpers.run_module(monkeypatch, mlnx_qos.main, {"state": "replaced", "config": [{"interface": "eth2"}]})
    assert kind == "fail" and "config[0]" in result["msg"], result
    # merged with an empty config still only warns: it changes nothing
    kind, result = helpers.run_module(monkeypatch, mlnx_qos.main, {"state": "merged", "config": []})
    assert kind == "exit" and result["changed"] is False, result


@pytest.mark.parametrize("mode, words", [(644, ["files[0].mode=644", "'0644'", "1204"]),
                                         (420, ["files[0].mode=420", "'0644'"]),
                                         (755, ["files[0].mode=755", "'0755'"])])
def test_round2_a_file_mode_given_as_the_integer_644_is_refused(monkeypatch, tmp_path, mode, words):
    target = tmp_path / "x"
    kind, result = helpers.run_module(monkeypatch, node_files.main,
                                      {"files": [{"path": str(target), "content": "a\n", "mode": mode}]})
    assert kind == "fail", result
    for word in words:
        assert word in result["msg"], result["msg"]
    assert not target.exists()
    kind, result = helpers.run_module(monkeypatch, node_files.main,
                                      {"files": [{"path": str(target), "content": "a\n", "mode": "0644"}]})
    assert kind == "exit" and oct(target.stat().st_mode & 0o7777) == "0o644", result


@pytest.mark.parametrize("nics, words", [
    (["eth2;reboot", "eth3"], ["rails_nics[0]='eth2;reboot'", "';'"]),
    ([{"netdev": "eth2;x", "device": "mlx5_0"}, "eth3"], ["rails_nics[0].netdev='eth2;x'"]),
    (["eth2", "eth$(id)"], ["rails_nics[1]='eth$(id)'", "'$'"]),
    (["eth2", "a" * 16], ["rails_nics[1]", "15"]),
    (["eth2", "eth 3"], ["rails_nics[1]='eth 3'"]),
])
def test_round2_an_interface_name_holding_a_semicolon_is_refused(nics, words):
    _named(_errors("rails", rails_nics=nics), *words)
    # a name the node's facts give (no variable) is refused by the plan, naming the interface
    with pytest.raises(PlanError, match=r"rails\[0\]\.netdev='eth2;x'"):
        rails.interfaces({"rails": [{"rail": 0, "netdev": "eth2;x", "cidr": "10.0.0.1/31", "gateway": "10.0.0.0"}]})


@pytest.mark.parametrize("interval", [0, "0", 0.0])
def test_round2_a_health_interval_of_0_is_refused(interval):
    _named(health.config_errors(_health_settings(health_interval=interval)), "health_interval=%r" % (interval,),
           "> 0")
    assert _health_timer.config_errors({"interval": 0, "textfile": "/srv/ne/h.prom"}) == [
        "interval=0: the seconds between the two counter samples, a number > 0"]
    with pytest.raises(ValueError, match="interval=0"):
        _health_timer.run({"interval": 0, "host": "n1"}, object())


def test_the_good_values_still_plan():
    for role in AREAS:
        assert _errors(role) == [], role
    assert roce_qos.config_errors(dict((k[len("roce_qos_"):], v) for k, v in _variables("roce_qos").items()
                                       if k.startswith("roce_qos_"))) == []
    assert nccl_env.config_errors(nccl_env.settings(_variables("nccl_env", nccl_env_allow_unknown=["NCCL_X"]))) == []
