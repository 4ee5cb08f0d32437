"""After onboarding: the healthy node carries the QoS and the boot unit; the nodes that failed
the health gate are as they were (firmware QoS, no rdma.fabric file, no fabricsim write)."""
import re

from molecule_hosts import hosts_of

testinfra_hosts = hosts_of("all")


def roce_netdevs(host):
    out = host.check_output(
        "for d in /run/fabricsim/sys/class/infiniband/*; do "
        "[ \"$(cat $d/ports/1/link_layer)\" = Ethernet ] && ls $d/device/net; done; true")
    return sorted(out.split())


def test_healthy_node_converged_failed_nodes_untouched(host):
    name = host.backend.get_hostname()
    managed = host.file("/etc/rdma-fabric").exists or host.file("/etc/nccl.conf").exists
    writes = host.check_output("fabricsim log --writes --json")
    if name == "onboard-good":
        assert managed
        for netdev in roce_netdevs(host):
            report = host.check_output("mlnx_qos -i %s" % netdev)
            assert "Priority trust state: dscp" in report, (netdev, report)
            enabled = re.search(r"^\s*enabled\s+(.*)$", report, re.M).group(1).split()
            assert enabled == ["0", "0", "0", "1", "0", "0", "0", "0"], (netdev, enabled)
    else:
        assert not managed, name
        assert writes.strip() == "", (name, writes)
        for netdev in roce_netdevs(host):
            report = host.check_output("mlnx_qos -i %s" % netdev)
            assert "Priority trust state: pcp" in report, (netdev, report)
