"""site.yml reads the playbook of its site_converge_mode alone: site_node.yml (node, the default) or
site_roles.yml (roles). Each starts with the drift check and NIC firmware and OpenSM
(site_firmware_opensm.yml), then its own plays; the other mode's plays are not parsed, so a run starts
none of them. ``ansible-playbook --list-tasks`` names the plays of a run without connecting to a host."""
import os
import re
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOKS = os.path.join(REPO, "playbooks")
INVENTORY = """all:
  children:
    gpu_nodes: {hosts: {a: {}}}
    roce_nodes: {hosts: {a: {}}}
"""


def _own_plays(name):
    """The names of the plays written in playbooks/NAME itself (its imports left out)."""
    with open(os.path.join(PLAYBOOKS, name)) as handle:
        return [p["name"] for p in yaml.safe_load(handle) if "hosts" in p]


def _imported_plays(name):
    """Every play of playbooks/NAME with its imports expanded, in order (no template in their paths)."""
    with open(os.path.join(PLAYBOOKS, name)) as handle:
        entries = yaml.safe_load(handle)
    plays = []
    for entry in entries:
        if "ansible.builtin.import_playbook" in entry:
            plays += _imported_plays(entry["ansible.builtin.import_playbook"])
        else:
            plays.append(entry["name"])
    return plays


def _listed(tmp_path, *extra):
    (tmp_path / "inventory.yml").write_text(INVENTORY)
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_HOME=str(tmp_path / "home"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_DEPRECATION_WARNINGS="false",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"))
    env.pop("ANSIBLE_CONFIG", None)
    proc = subprocess.run([sys.executable, "-m", "ansible", "playbook", "-i", str(tmp_path / "inventory.yml"),
                           "--list-tasks", os.path.join(PLAYBOOKS, "site.yml")] + list(extra),
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return re.findall(r"^\s*play #\d+ \([^)]*\): (.*?)\tTAGS:", proc.stdout, re.M)


@pytest.mark.parametrize("extra, mode_file, other_file", [
    ((), "site_node.yml", "site_roles.yml"),
    (("-e", "site_converge=all"), "site_node.yml", "site_roles.yml"),
    (("-e", "site_converge_mode=node"), "site_node.yml", "site_roles.yml"),
    (("-e", "site_converge_mode=roles"), "site_roles.yml", "site_node.yml"),
])
def test_site_runs_the_plays_of_its_mode_alone(tmp_path, extra, mode_file, other_file):
    listed = _listed(tmp_path, *extra)
    assert listed == _imported_plays(mode_file)
    # the check first, then NIC firmware and OpenSM, then the mode's own plays
    assert listed[0] == "Check every area and report"
    shared = _imported_plays("site_firmware_opensm.yml")
    assert listed[3:3 + len(shared)] == shared
    own = _own_plays(mode_file)
    assert own and set(own) <= set(listed[3 + len(shared):])
    assert not set(_own_plays(other_file)) & set(listed)


def test_a_converged_node_rerun_starts_9_plays_not_17(tmp_path):
    """What the split is for: both modes' plays were 17 in one playbook, every play parsed and its
    hosts templated in every run."""
    node, roles = _listed(tmp_path), _listed(tmp_path, "-e", "site_converge_mode=roles")
    assert (len(node), len(roles)) == (9, 11)
