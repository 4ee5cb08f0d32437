"""playbooks/plan.yml (issue 30): what the roles would do on a host, without changing it: each
area's plan and every file it would install, with the content the node would get, written on
the controller. Run against a fabricsim node (its sysfs) with a local connection."""
import json
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

INVENTORY = """
gpu_nodes:
  hosts:
    gpu1:
roce_nodes:
  hosts:
    gpu1:
      ansible_connection: local
      ansible_python_interpreter: %s
      ansible_become: false
      roce_qos_pfc_priorities_by_interface: {enp24s0np0: [3, 4]}
"""


def test_the_plan_playbook_writes_each_plan_and_file_and_changes_nothing(sim, tmp_path):
    sim.init("hgx-h100-roce")
    before = sim.log(writes=True)
    (tmp_path / "inventory.yml").write_text(INVENTORY % sys.executable)
    env = dict(os.environ, SYSFS_PATH=sim.sys, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                           str(tmp_path / "inventory.yml"), os.path.join(REPO, "playbooks", "plan.yml"),
                           "-e", "plan_dir=%s" % (tmp_path / "plan"), "-e", "ansible_become=false"],
                          capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    with open(str(tmp_path / "plan" / "gpu1" / "roce_qos.json")) as handle:
        plan = json.load(handle)
    ports = [p["netdev"] for p in plan["ports"]]
    assert len(ports) == 8 and plan["mlnx_qos"][0]["pfc"] == [3, 4] and plan["mlnx_qos"][1]["pfc"] == [3]
    state = tmp_path / "plan" / "gpu1" / "files" / "etc" / "rdma-fabric" / "roce_qos" / "desired.conf"
    assert state.read_text() == plan["state_file"]
    assert "enp24s0np0 mlnx_qos -i enp24s0np0 --pfc 0,0,0,1,1,0,0,0" in state.read_text()
    applier = tmp_path / "plan" / "gpu1" / "files" / "usr" / "local" / "sbin" / "rdma-fabric-roce-qos-apply"
    assert applier.read_text().startswith("#!")
    assert sim.log(writes=True) == before                 # the node: reads only
