"""site.yml's node-mode reboot play (gpudirect_reboot=if_required): its hosts are the GPU nodes
the one-call play converged (the drift groups, or every GPU node with site_converge=all) whose
call left a reboot to do now (with site_converge_mode=roles site.yml does not import it: gpudirect.yml
reboots then, tests/unit/test_site_modes.py). A converged re-run builds no host's variables for it. The
play's own ``hosts`` expression, taken from playbooks/site_node.yml, is run by ansible-playbook on local
hosts."""
import os
import re
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAY_NAME = "Reboot the nodes that need it, in batches (gpudirect_reboot=if_required)"
INVENTORY = """all:
  children:
    gpu_nodes: {hosts: {a: {}, b: {}, c: {}, d: {}}}
    roce_nodes: {hosts: {a: {}, e: {}}}
"""


def _hosts_expression():
    with open(os.path.join(REPO, "playbooks", "site_node.yml")) as handle:
        plays = yaml.safe_load(handle)
    found = [p["hosts"] for p in plays if p.get("name") == PLAY_NAME]
    assert len(found) == 1, "site_node.yml has no play %r" % PLAY_NAME
    return found[0]


def _run(tmp_path, groups, reboot_now, extra=()):
    """The hosts the reboot play runs on, after a play that set __site_reboot_now as the
    one-call play does (``reboot_now``: host -> value; absent: never set) and the drift groups."""
    setup = {"name": "As the drift check and the one-call play leave them", "hosts": "all", "gather_facts": False,
             "tasks": [{"name": "The reboot verdict", "ansible.builtin.set_fact": {
                 "__site_reboot_now": "{{ (%r)[inventory_hostname] }}" % (reboot_now,)},
                 "when": "inventory_hostname in %r" % (sorted(reboot_now),)},
                 {"name": "The drift groups", "ansible.builtin.add_host": {"name": "{{ item.0 }}", "groups": ["{{ item.1 }}"]},
                  "loop": [[h, g] for g, hosts in sorted(groups.items()) for h in hosts], "run_once": True}]}
    reboot = {"name": PLAY_NAME, "hosts": _hosts_expression(), "gather_facts": False,
              "tasks": [{"name": "Say where", "ansible.builtin.debug": {"msg": "REBOOT {{ inventory_hostname }}"}}]}
    (tmp_path / "inventory.yml").write_text(INVENTORY)
    (tmp_path / "play.yml").write_text(yaml.safe_dump([setup, reboot], sort_keys=False))
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_HOME=str(tmp_path / "home"), ANSIBLE_FORKS="5",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_DEPRECATION_WARNINGS="false")
    env.pop("ANSIBLE_CONFIG", None)
    proc = subprocess.run([sys.executable, "-m", "ansible", "playbook", "-i", str(tmp_path / "inventory.yml"),
                           "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                           str(tmp_path / "play.yml")] + list(extra),
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return sorted(set(re.findall(r'"msg": "REBOOT (\w+)"', proc.stdout)))


GROUPS = {"drift_roce_qos": ["a"], "drift_gpudirect": ["b"], "drift_nccl_env": ["d"], "drift_unchecked": ["e"]}
REBOOT = {"a": True, "b": False, "c": True, "e": True}


@pytest.mark.parametrize("extra, expected", [
    ((), ["a"]),                                          # converged: a (b needs none; c not converged; e no GPU)
    (("-e", "site_converge=all"), ["a", "c"]),            # every GPU node was converged
])
def test_the_reboot_play_runs_on_the_converged_gpu_nodes_that_need_it(tmp_path, extra, expected):
    assert _run(tmp_path, GROUPS, REBOOT, extra) == expected


def test_a_converged_rerun_reboots_nothing(tmp_path):
    assert _run(tmp_path, {}, {}) == []
