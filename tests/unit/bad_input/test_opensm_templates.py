# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No value of the opensm role adds a line to the files it writes (issue 26), even where the
role's preflight does not run.

The drift check (playbooks/tasks/drift_check.yml) sends the opensm area's spec (``__opensm_spec``:
opensm.conf, partitions.conf, /etc/default/opensm and the service's drop-in, rendered from the
role's templates by plugins/module_utils/areas/opensm.py ``spec``) with the inventory's values
and no preflight. Here that spec is built the same way, with the role's defaults and one hostile
value at a time: each value carries a line break and a line of its own (``INJECTED``), or the
target file's own syntax. The spec must refuse it naming the variable (never printing a key),
rendering no file, or give files with no injected line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.areas import opensm as F
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.areas.test_area_opensm import renderer, variables

INJECTED = "\nINJECTED 1"


def _render(case_vars):
    values = variables()
    values.update({"opensm_sm_key": "0x5ca1ab1e0ddba11", "opensm_role": "master"})
    values.update(case_vars)
    try:
        spec = F.spec(values, renderer(values))
    except PlanError as exc:
        return {"error": "PlanError: %s" % exc}
    if spec["files"] is None:
        return {"error": "; ".join(F.config_errors(spec["settings"]))}
    files = {"config": spec["files"]["config"], "partitions": spec["files"]["partitions"],
             "ports": spec["files"]["ports"]}
    files.update(("dropin " + k, v) for k, v in spec["files"]["dropins"].items())
    return {"files": files}


# (id, {variable: hostile value}, the variable the error must name, values the error must not show)
CASES = [
    ("fabric", {"opensm_fabric": "ib0" + INJECTED}, "opensm_fabric", []),
    ("role", {"opensm_role": "master" + INJECTED}, "opensm_role", []),
    ("standby-rank", {"opensm_role": "standby", "opensm_standby_rank": "1" + INJECTED}, "opensm_standby_rank", []),
    ("routing-engine", {"opensm_routing_engine": "ftree" + INJECTED}, "opensm_routing_engine", []),
    ("log-file", {"opensm_log_file": "/var/log/opensm.log" + INJECTED}, "opensm_log_file", []),
    ("log-flags", {"opensm_log_flags": "0x03" + INJECTED}, "opensm_log_flags", []),
    ("log-flags-trailing", {"opensm_log_flags": "0x03\n"}, "opensm_log_flags", []),
    ("cache-dir", {"opensm_cache_dir": "/var/cache/opensm\nExecStartPre=/bin/sh -c id"}, "opensm_cache_dir", []),
    ("cache-dir-blank", {"opensm_cache_dir": "/var/cache/opensm /etc"}, "opensm_cache_dir", []),
    ("guid", {"opensm_guid": "0x1" + INJECTED}, "opensm_guid", []),
    ("sm-key", {"opensm_sm_key": "0x5ca1ab1e" + INJECTED}, "opensm_sm_key", ["0x5ca1ab1e"]),
    ("m-key", {"opensm_m_key": "0xbeef" + INJECTED}, "opensm_m_key", ["0xbeef"]),
    ("extra-value", {"opensm_extra_options": {"sweep_interval": "10" + INJECTED}}, "opensm_extra_options", []),
    ("extra-key", {"opensm_extra_options": {"sweep_interval" + INJECTED: 10}}, "opensm_extra_options", []),
    ("extra-secret", {"opensm_extra_options": {"sa_key": "0xdead" + INJECTED}}, "opensm_extra_options",
     ["0xdead"]),
    ("partition-name", {"opensm_partitions": [{"name": "p" + INJECTED, "pkey": 2}]}, "opensm_partitions[0]", []),
    ("partition-defmember", {"opensm_partitions": [{"name": "p", "pkey": 2, "defmember": "full" + INJECTED}]},
     "opensm_partitions[0]", []),
    ("partition-sl", {"opensm_partitions": [{"name": "p", "pkey": 2, "sl": "1 : ALL=full ; INJECTED=0x3"}]},
     "opensm_partitions[0]", []),
    ("partition-scope", {"opensm_partitions": [{"name": "p", "pkey": 2, "scope": "2,ipoib"}]}, "opensm_partitions[0]",
     []),
    ("partition-member", {"opensm_partitions": [{"name": "p", "pkey": 2, "members": [
        {"guid": "ALL", "membership": "full ; INJECTED=0x3 : ALL=full"}]}]}, "opensm_partitions[0]", []),
    ("partition-guid", {"opensm_partitions": [{"name": "p", "pkey": 2, "members": [{"guid": "0x1" + INJECTED}]}]},
     "opensm_partitions[0]", []),
    ("polling", {"opensm_sminfo_polling_timeout": "1000" + INJECTED}, "opensm_sminfo_polling_timeout", []),
    ("log-max-size", {"opensm_log_max_size": "0" + INJECTED}, "opensm_log_max_size", []),
    ("lease", {"opensm_m_key": "0xbeef", "opensm_m_key_lease_period": "0" + INJECTED}, "opensm_m_key_lease_period",
     ["0xbeef"]),
]


@pytest.fixture(scope="module")
def rendered():
    cases = [{"id": "sound", "vars": {}}] + [{"id": c[0], "vars": c[1]} for c in CASES]
    # each case's values without the injected line: what its files must look like
    cases += [{"id": c[0] + ":clean", "vars": json.loads(json.dumps(c[1]).replace(json.dumps(INJECTED)[1:-1], ""))}
              for c in CASES if c[2] is None]
    return dict((case["id"], _render(case["vars"])) for case in cases)


def _lines(files):
    return dict((name, text.splitlines()) for name, text in files.items())


def test_the_sound_values_render_every_file(rendered):
    sound = rendered["sound"]
    assert "files" in sound, sound
    lines = _lines(sound["files"])
    assert "sm_key 0x05ca1ab1e0ddba11" in lines["config"] and "sm_priority 14" in lines["config"]
    assert any(line.startswith("Default=0x7fff") for line in lines["partitions"])
    assert any(line.startswith("PORTS=") for line in lines["ports"])
    assert any(line.startswith("Environment=OSM_CACHE_DIR=/var/cache/opensm") for line in lines["dropin Debian"])


@pytest.mark.parametrize("case_id, values, variable, hidden", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_value_adds_no_line(rendered, case_id, values, variable, hidden):
    outcome = rendered[case_id]
    if "error" in outcome:
        assert variable and variable in outcome["error"], outcome["error"]
        assert "Traceback" not in outcome["error"]
        shown = [h for h in hidden if h in outcome["error"]]
        assert not shown, "the error shows the key %r: %s" % (shown, outcome["error"])
        return
    assert variable is None, "rendered, where the value should be refused naming %s: %r" % (variable, outcome)
    clean = _lines(rendered[case_id + ":clean"]["files"])
    for name, lines in _lines(outcome["files"]).items():
        assert not [line for line in lines if "INJECTED" in line], (name, lines)
        assert len(lines) == len(clean[name]), (name, lines)


# ------------------------------------------------------------------ the area's checks themselves
def test_the_area_refuses_a_line_where_a_template_writes_it():
    assert F.conf_value("ftree,updn", "routing_engine") == "ftree,updn" and F.conf_value(True, "qos") == "TRUE"
    with pytest.raises(PlanError, match=r"opensm_routing_engine: .*'ftree\\nsm_key 0x1'.*line break"):
        F.conf_value("ftree\nsm_key 0x1", "routing_engine")
    with pytest.raises(PlanError, match=r"opensm_extra_options\['sa_key'\].*not printed") as refused:
        F.conf_value("0xdead\u2028x", "sa_key")
    assert "0xdead" not in str(refused.value)
    with pytest.raises(PlanError, match=r"opensm_extra_options\['a b'\]: not an opensm.conf option name"):
        F.conf_value(1, "a b")
    with pytest.raises(PlanError, match=r"opensm_partitions\[0\].defmember 'x;' must be"):
        F.partition_lines([{"name": "p", "pkey": 2, "defmember": "x;"}])


def _errors(values):
    given = variables()
    given.update(values)
    return F.config_errors(F.settings(given))


@pytest.mark.parametrize("values, words", [
    ({"opensm_fabric": ""}, ["opensm_fabric=''"]),
    ({"opensm_fabric": "ib\x1b[2J"}, ["opensm_fabric=", "control"]),
    ({"opensm_ca_port": "0"}, ["opensm_ca_port='0'"]),
    ({"opensm_ca_port": 255}, ["opensm_ca_port=255"]),
    ({"opensm_cache_dir": "/x%i"}, ["opensm_cache_dir='/x%i'"]),
    ({"opensm_log_file": "/var/log/open sm.log"}, ["opensm_log_file='/var/log/open sm.log'"]),
    ({"opensm_routing_engine": "ftree;updn"}, ["opensm_routing_engine='ftree;updn'"]),
    ({"opensm_verify_retries": 0}, ["opensm_verify_retries=0"]),
    ({"opensm_verify_delay": "soon"}, ["opensm_verify_delay='soon'"]),
    ({"opensm_query_environment": {"SIM_HOST": {"a": 1}}}, ["opensm_query_environment.SIM_HOST", "{'a': 1}"]),
    ({"opensm_query_environment": ["SIM_HOST=Hca2"]}, ["opensm_query_environment=['SIM_HOST=Hca2']"]),
    ({"opensm_ha_hosts": ["sm1", 7]}, ["opensm_ha_hosts[1]=7"]),
    ({"opensm_partitions": [{"name": "p", "pkey": 2, "qkey": 1}]}, ["opensm_partitions[0]", "'qkey'"]),
])
def test_config_errors_name_the_variable_and_the_value(values, words):
    errors = _errors(values)
    assert [e for e in errors if all(w in e for w in words)], errors


def test_config_errors_pass_good_values_and_hide_a_secret():
    good = {"opensm_fabric": "ib0", "opensm_ca": "mlx5_0", "opensm_ca_port": 1, "opensm_cache_dir": "/var/cache/opensm",
            "opensm_log_file": "/var/log/opensm.log", "opensm_routing_engine": "ftree, updn",
            "opensm_log_flags": "0x03", "opensm_verify_retries": "30", "opensm_verify_delay": 0,
            "opensm_query_environment": {"SIM_HOST": "Hca2", "IBSIM_PORT": 7070}, "opensm_ha_hosts": ["sm1", "sm2"],
            "opensm_guid": "0x0002c90300a0b0c1", "opensm_role": "standby", "opensm_standby_rank": 2,
            "opensm_partitions": [{"name": "p", "pkey": 2, "sl": 1, "scope": 2, "defmember": "limited", "ipoib": True}]}
    assert _errors(good) == []
    errors = _errors({"opensm_query_environment": {"API_TOKEN": ["s3cr3t-value"]}})
    assert errors and "API_TOKEN" in errors[0] and "s3cr3t-value" not in errors[0]
