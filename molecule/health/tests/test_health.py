"""After the faulty run: the node kept its flap state file (written atomically, JSON) and the
healthy run wrote nothing to the fabric (fabricsim's write log)."""
import json

from molecule_hosts import hosts_of

testinfra_hosts = hosts_of("all")


def test_flap_state_kept_on_the_node(host):
    state = json.loads(host.file("/var/lib/rdma-fabric/health-state.json").content_string)
    assert state["version"] == 1 and state["ports"]
    name = host.backend.get_hostname()
    if name == "health-roce":
        assert state["ports"]["mlx5_4/1"]["events"], state["ports"]["mlx5_4/1"]
    assert not [p for p in host.file("/var/lib/rdma-fabric").listdir() if p.startswith(".health-state.")]
