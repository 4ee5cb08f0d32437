# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad input through the roles themselves (issue 26): a bad OpenSM key is refused with a
message that names the variable and never prints the value (not "hidden due to no_log"), on
every path that reads it; a bad roce_qos variable is refused naming the roce_qos_* variable
the user set and its value, never a module's field (tcbw, config.tsa). The table of
test_bad_input.py holds the filters' cases; these run ansible-playbook on localhost."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
needs_ansible = pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason="ansible-playbook not next to this Python")

PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
%s
"""
IMPORT = """    - ansible.builtin.import_role:
        name: rdma.fabric.%s
        tasks_from: %s
"""


def _play(tmp_path, tasks, *extra):
    playbook = tmp_path / "play.yml"
    playbook.write_text(PLAY % tasks)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="1",
               ANSIBLE_RETRY_FILES_ENABLED="false", ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    cmd = [ANSIBLE_PLAYBOOK, "-i", "localhost,", "-c", "local", str(playbook)] + list(extra)
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=300, check=False)
    return proc.returncode, proc.stdout


GOOD_SM_KEY = "0x00000000c0ffee01"
OPENSM = ["-e", "opensm_role=master", "-e", "opensm_fabric=f1"]


@needs_ansible
@pytest.mark.parametrize("variable, value", [
    ("opensm_m_key", "0x00000000c0ffee0Z"),
    ("opensm_m_key", "0x000000000000c0ffee"),
    ("opensm_sm_key", "0xc0ffee-not-hex"),
])
def test_opensm_preflight_names_a_bad_key_never_its_value(tmp_path, variable, value):
    values = {"opensm_sm_key": GOOD_SM_KEY, variable: value}
    extra = OPENSM + [arg for name in sorted(values) for arg in ("-e", "%s=%s" % (name, values[name]))]
    rc, out = _play(tmp_path, IMPORT % ("opensm", "preflight"), *extra)
    assert rc != 0, out
    assert variable in out, out
    assert value not in out and "hidden due to" not in out, out


@needs_ansible
@pytest.mark.parametrize("variable, value", [("opensm_sm_key", "0xc0ffee-not-hex"), ("opensm_m_key", "0xZZZZc0ffee")])
def test_the_opensm_options_name_a_bad_key_never_its_value(tmp_path, variable, value):
    """A run that skips the preflight (the drift check plans on the node) still refuses it by
    name: the opensm area's plan starts from the same checks."""
    values = {"opensm_sm_key": GOOD_SM_KEY, variable: value}
    extra = OPENSM + [arg for name in sorted(values) for arg in ("-e", "%s=%s" % (name, values[name]))]
    tasks = IMPORT % ("opensm", "drift_spec") + """    - ansible.builtin.assert:
        that: __plan.errors | length == 0
        fail_msg: "{{ __plan.errors | join('; ') }}"
      vars:
        __plan: >-
          {{ {'markers': {'files': {'/etc/debian_version': {'state': 'present'}}}, 'ports': []}
             | rdma.fabric.area_plan('opensm', __opensm_spec) }}
"""
    rc, out = _play(tmp_path, tasks, *extra)
    assert rc != 0, out
    assert variable in out, out
    assert value not in out, out


@needs_ansible
def test_roce_qos_preflight_names_the_role_variable_and_value(tmp_path):
    rc, out = _play(tmp_path, IMPORT % ("roce_qos", "preflight"), "-e", '{"roce_qos_tcbw": [50, 0, 0, 40, 0, 0, 0, 0]}')
    assert rc != 0, out
    assert "roce_qos_tcbw=[50, 0, 0, 40, 0, 0, 0, 0]" in out, out
    assert "(mlnx_qos)" not in out and " tcbw=" not in out, out


def test_roce_qos_flags_that_are_no_boolean_are_refused_by_name():
    from ansible.errors import AnsibleError
    from ansible_collections.rdma.fabric.plugins.plugin_utils import _role_specs
    import yaml
    with open(os.path.join(REPO, "roles", "roce_qos", "defaults", "main.yml")) as handle:
        variables = yaml.safe_load(handle)
    variables["roce_qos_lldp"] = "maybe"

    def get(name, *default):
        return variables.get(name, *default) if default else variables[name]

    def render(term, extra=None):
        return "text of " + term
    with pytest.raises(AnsibleError, match=r"roce_qos_lldp='maybe': .*not a valid boolean"):
        _role_specs.area_spec("roce_qos", get, render)
    variables["roce_qos_lldp"] = "yes"
    assert _role_specs.area_spec("roce_qos", get, render)["settings"]["lldp"] is True
    variables["roce_qos_lossless_priority"] = "three"
    with pytest.raises(AnsibleError, match=r"roce_qos_lossless_priority='three': .*int"):
        _role_specs.area_spec("roce_qos", get, render)
