"""site.yml's node mode after the check (site_converge_mode=node): the check's own call converged each
RoCE and GPU node's drifted areas, except where it deferred (apply_deferred: a firmware converge that
may reboot the node, or a check that failed); the next play converges only those, in a second call,
and the play after it runs the NCCL fleet check and the GPUDirect readiness on every drifted RoCE/GPU
node, from whichever call converged it. The plays' own ``hosts`` and ``vars``, taken from
playbooks/site_node.yml (what site.yml imports with site_converge_mode=node), run under ansible-playbook
on local hosts."""
import os
import re
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
APPLY = "Converge RoCE QoS, NCCL and GPUDirect RDMA on the nodes the check left"
AFTER = "Check the NCCL settings across the fleet and the GPUDirect RDMA readiness of the converged nodes"
INVENTORY = """all:
  children:
    gpu_nodes: {hosts: {a: {}, b: {}, c: {}, d: {}}}
    roce_nodes: {hosts: {a: {}, e: {}}}
    sm_nodes: {hosts: {s: {}}}
"""


def _play(name):
    with open(os.path.join(REPO, "playbooks", "site_node.yml")) as handle:
        plays = yaml.safe_load(handle)
    found = [p for p in plays if p.get("name") == name]
    assert len(found) == 1, "site_node.yml has no play %r" % name
    return found[0]


def _run(tmp_path, groups, converged_later=(), extra=()):
    """The hosts each of the two plays runs on, after the check as drift_check.yml leaves it (its
    groups, and a drift_check_result on every host naming it); a host of ``converged_later`` also
    has the second call's site_converge_result. Returns ({play: hosts}, {host: the call it read})."""
    setup = {"name": "As the check leaves them", "hosts": "all", "gather_facts": False, "tasks": [
        {"name": "The check's result", "ansible.builtin.set_fact": {
            "drift_check_result": {"call": "check", "settings": {"x": 1}}}},
        {"name": "The second call's result", "ansible.builtin.set_fact": {
            "site_converge_result": {"call": "second", "settings": {"x": 2}}},
         "when": "inventory_hostname in %r" % (sorted(converged_later),)},
        {"name": "The groups", "ansible.builtin.add_host": {"name": "{{ item.0 }}", "groups": ["{{ item.1 }}"]},
         "loop": [[h, g] for g, hosts in sorted(groups.items()) for h in hosts], "run_once": True}]}
    plays = [setup]
    for tag, name in (("APPLY", APPLY), ("AFTER", AFTER)):
        play = _play(name)
        plays.append({"name": name, "hosts": play["hosts"], "gather_facts": False, "vars": play.get("vars") or {},
                      "tasks": [{"name": "Say where", "ansible.builtin.debug": {
                          "msg": "%s {{ inventory_hostname }} %s" % (
                              tag, "{{ __site_result.call }}" if tag == "AFTER" else "-")}}]})
    (tmp_path / "inventory.yml").write_text(INVENTORY)
    (tmp_path / "play.yml").write_text(yaml.safe_dump(plays, sort_keys=False))
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_HOME=str(tmp_path / "home"), ANSIBLE_FORKS="5",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_DEPRECATION_WARNINGS="false")
    env.pop("ANSIBLE_CONFIG", None)
    proc = subprocess.run([sys.executable, "-m", "ansible", "playbook", "-i", str(tmp_path / "inventory.yml"),
                           "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                           str(tmp_path / "play.yml")] + list(extra),
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = re.findall(r'"msg": "(APPLY|AFTER) (\w+) ([-\w]+)"', proc.stdout)
    hosts = dict((tag, sorted(h for t, h, _c in said if t == tag)) for tag in ("APPLY", "AFTER"))
    return hosts, dict((h, c) for t, h, c in said if t == "AFTER")


GROUPS = {"drift_roce_qos": ["a", "e"], "drift_gpudirect": ["b"], "drift_nic_firmware": ["b"],
          "drift_apply_deferred": ["b", "c", "s"], "drift_unchecked": ["c", "s"], "drift_opensm": ["s"]}


def test_only_the_deferred_nodes_get_a_second_call_and_every_drifted_node_the_checks_after(tmp_path):
    hosts, calls = _run(tmp_path, GROUPS, ("b", "c"))
    # s (an SM node, no RoCE/GPU area) is left to the OpenSM play; d did not drift
    assert hosts == {"APPLY": ["b", "c"], "AFTER": ["a", "b", "c", "e"]}
    assert calls == {"a": "check", "b": "second", "c": "second", "e": "check"}


def test_site_converge_all(tmp_path):
    hosts, _calls = _run(tmp_path, GROUPS, ("b", "c"), ("-e", "site_converge=all"))
    assert hosts == {"APPLY": ["b", "c"], "AFTER": ["a", "b", "c", "d", "e"]}


def test_a_converged_rerun_runs_neither(tmp_path):
    assert _run(tmp_path, {})[0] == {"APPLY": [], "AFTER": []}


@pytest.mark.parametrize("extra, words", [
    (("-e", "site_converge=some"), "site_converge=some: one of drifted, all"),
    (("-e", "site_converge_mode=fast", "-e", "site_converge=none"),
     "site_converge=none: one of drifted, all; site_converge_mode=fast: one of node, roles"),
    (("-e", "site_converge_mode=roles", "-e", "site_converge=some"), "site_converge=some: one of drifted, all"),
    (("-e", "site_converge_mode=Node"), "site_converge_mode=Node: one of node, roles"),
])
def test_bad_site_settings_stop_the_run_before_any_task_naming_the_variable_and_value(tmp_path, extra, words):
    """site.yml checks site_converge and site_converge_mode where it imports the mode's playbook:
    the run stops there, before any play is read and any task runs."""
    (tmp_path / "inventory.yml").write_text(INVENTORY)
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_HOME=str(tmp_path / "home"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_DEPRECATION_WARNINGS="false",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"))
    env.pop("ANSIBLE_CONFIG", None)
    proc = subprocess.run([sys.executable, "-m", "ansible", "playbook", "-i", str(tmp_path / "inventory.yml"),
                           "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                           os.path.join(REPO, "playbooks", "site.yml")] + list(extra),
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode != 0
    assert words in proc.stdout + proc.stderr
    assert "TASK [" not in proc.stdout
