"""After onboarding: the nodes that passed the health gate carry the QoS and the boot unit (the
fabric test ran after the converge: onboard-slow was converged, then not admitted); the nodes
that failed the health gate are as they were (firmware QoS, no rdma.fabric file, no fabricsim write)."""
import re

from molecule_hosts import hosts_of

testinfra_hosts = hosts_of("all")
CONVERGED = ("onboard-good", "onboard-slow", "fleet-a", "fleet-b")


def roce_netdevs(host):
    out = host.check_output(
        "for d in /run/fabricsim/sys/class/infiniband/*; do "
        "[ \"$(cat $d/ports/1/link_layer)\" = Ethernet ] && ls $d/device/net; done; true")
    return sorted(out.split())


def test_gate_passing_nodes_converged_failed_nodes_untouched(host):
    name = host.backend.get_hostname()
    managed = host.file("/etc/rdma-fabric").exists or host.file("/etc/nccl.conf").exists
    writes = host.check_output("fabricsim log --writes --json")
    if name in CONVERGED:
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


def test_no_perftest_left_running(host):
    """Every perftest server and client of the fabric test runs are gone."""
    out = host.check_output("ps -eo args= | grep -E '(^|/)ib_write_(bw|lat)( |$)' | grep -v grep || true")
    assert out.strip() == "", out
