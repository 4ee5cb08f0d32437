# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No value of the opensm role adds a line to the files it writes (issue 26), even where the
role's preflight does not run.

The drift check (playbooks/tasks/drift_check.yml) renders ``__opensm_drift_spec`` (opensm.conf,
partitions.conf, /etc/default/opensm and the service's drop-in, from the role's templates) with
the inventory's values and no preflight. Here that spec is rendered the same way, with the role's
defaults and vars/main.yml, the drift task's vars and one hostile value at a time: each value
carries a line break and a line of its own (``INJECTED``), or the target file's own syntax. The
rendering must fail naming the variable (never printing a key), or give files with no injected
line. A separate process: the plugin loader is initialised for the collection there (the
templates call the collection's filters through the rdma.fabric.role_template lookup)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
INJECTED = "\nINJECTED 1"

# What playbooks/tasks/drift_check.yml sets on its drift_check task.
DRIFT_TASK_VARS = """
__opensm_guid: "{{ __opensm_slots.guid }}"
__opensm_partitions_file: "{{ __opensm_slots.partitions_file }}"
__opensm_priority: "{{ __opensm_wanted_priority | int }}"
__opensm_options: "{{ __opensm_wanted_options }}"
"""

RENDER = r"""
import json, os, sys, tempfile
collections, repo = sys.argv[1], sys.argv[2]
sys.path.insert(0, collections)
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([collections])
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
given = json.load(sys.stdin)
loader = DataLoader()
role = os.path.join(repo, "roles", "opensm")
defaults = loader.load_from_file(os.path.join(role, "defaults", "main.yml"), trusted_as_template=True)
role_vars = loader.load_from_file(os.path.join(role, "vars", "main.yml"), trusted_as_template=True)
with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as handle:
    handle.write(given["task_vars"])
task_vars = loader.load_from_file(handle.name, trusted_as_template=True)
os.unlink(handle.name)
out = {}
for case in given["cases"]:
    variables = dict(defaults)
    variables.update({"opensm_sm_key": "0x5ca1ab1e0ddba11", "opensm_role": "master"})
    variables.update(case["vars"])
    variables.update(role_vars)
    variables.update(task_vars)
    variables.update({"inventory_hostname": "sm1", "ansible_facts": {}, "playbook_dir": repo, "omit": "__omit"})
    try:
        spec = Templar(loader=loader, variables=variables).template(variables["__opensm_drift_spec"])
        files = {"config": spec["config"], "partitions": spec["partitions"], "ports": spec["ports"]}
        files.update(("dropin " + k, v) for k, v in spec["dropins"].items())
        out[case["id"]] = {"files": dict((k, str(v)) for k, v in files.items())}
    except Exception as exc:
        out[case["id"]] = {"error": "%s: %s" % (type(exc).__name__, exc)}
print(json.dumps(out))
"""

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
    # the preflight refuses these; here an int conversion makes them a number, still one line
    ("polling", {"opensm_sminfo_polling_timeout": "1000" + INJECTED}, None, []),
    ("log-max-size", {"opensm_log_max_size": "0" + INJECTED}, None, []),
    ("lease", {"opensm_m_key": "0xbeef", "opensm_m_key_lease_period": "0" + INJECTED}, None, []),
]


@pytest.fixture(scope="module")
def rendered():
    cases = [{"id": "sound", "vars": {}}] + [{"id": c[0], "vars": c[1]} for c in CASES]
    # each case's values without the injected line: what its files must look like
    cases += [{"id": c[0] + ":clean", "vars": json.loads(json.dumps(c[1]).replace(json.dumps(INJECTED)[1:-1], ""))}
              for c in CASES if c[2] is None]
    proc = subprocess.run([sys.executable, "-c", RENDER, os.path.join(REPO, ".cache", "collections"), REPO],
                          input=json.dumps({"cases": cases, "task_vars": DRIFT_TASK_VARS}),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


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


# ------------------------------------------------------------------ the filters themselves
def test_the_filters_refuse_a_line_where_a_template_writes_it():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.rdma.fabric.plugins.filter import opensm as F

    assert F.conf_value("ftree,updn", "routing_engine") == "ftree,updn" and F.conf_value(True, "qos") == "TRUE"
    with pytest.raises(AnsibleFilterError, match=r"opensm_routing_engine: .*'ftree\\nsm_key 0x1'.*line break"):
        F.conf_value("ftree\nsm_key 0x1", "routing_engine")
    with pytest.raises(AnsibleFilterError, match=r"opensm_extra_options\['sa_key'\].*not printed") as refused:
        F.conf_value("0xdead\u2028x", "sa_key")
    assert "0xdead" not in str(refused.value)
    with pytest.raises(AnsibleFilterError, match=r"opensm_extra_options\['a b'\]: not an opensm.conf option name"):
        F.conf_value(1, "a b")
    assert F.checked("/var/cache/opensm", "opensm_cache_dir") == "/var/cache/opensm"
    with pytest.raises(AnsibleFilterError, match=r"opensm_cache_dir='/x%i'"):
        F.checked("/x%i", "opensm_cache_dir")
    with pytest.raises(AnsibleFilterError, match="opensm_checked: no check for 'opensm_bogus'"):
        F.checked(1, "opensm_bogus")
    with pytest.raises(AnsibleFilterError, match=r"opensm_partitions\[0\].defmember 'x;' must be"):
        F.partition_lines([{"name": "p", "pkey": 2, "defmember": "x;"}])


@pytest.mark.parametrize("values, words", [
    ({"opensm_fabric": ""}, ["opensm_fabric=''"]),
    ({"opensm_fabric": "ib\x1b[2J"}, ["opensm_fabric=", "control"]),
    ({"opensm_ca_port": "0"}, ["opensm_ca_port='0'"]),
    ({"opensm_ca_port": 255}, ["opensm_ca_port=255"]),
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
    from ansible_collections.rdma.fabric.plugins.filter import opensm as F
    errors = F.config_errors(values, ["sm1", "sm2"])
    assert errors and all(w in errors[0] for w in words), errors


def test_config_errors_pass_good_values_and_hide_a_secret():
    from ansible_collections.rdma.fabric.plugins.filter import opensm as F
    good = {"opensm_fabric": "ib0", "opensm_ca": "mlx5_0", "opensm_ca_port": 1, "opensm_cache_dir": "/var/cache/opensm",
            "opensm_log_file": "/var/log/opensm.log", "opensm_routing_engine": "ftree, updn",
            "opensm_log_flags": "0x03", "opensm_verify_retries": "30", "opensm_verify_delay": 0,
            "opensm_query_environment": {"SIM_HOST": "Hca2", "IBSIM_PORT": 7070}, "opensm_ha_hosts": ["sm1", "sm2"],
            "opensm_guid": "0x0002c90300a0b0c1", "opensm_role": "standby", "opensm_standby_rank": 2,
            "opensm_partitions": [{"name": "p", "pkey": 2, "sl": 1, "scope": 2, "defmember": "limited", "ipoib": True}]}
    assert F.config_errors(good, ["sm1", "sm2"]) == []
    errors = F.config_errors({"opensm_query_environment": {"API_TOKEN": ["s3cr3t-value"]}})
    assert errors and "API_TOKEN" in errors[0] and "s3cr3t-value" not in errors[0]
