"""Live QoS state after converge, read through the tools and sysfs of each node."""
import json
import re

import pytest

from molecule_hosts import hosts_of

testinfra_hosts = hosts_of("roce_nodes")
SYSFS = "/run/fabricsim/sys"


def roce_netdevs(host):
    """Netdevs of RDMA devices whose port 1 link layer is Ethernet, read from sysfs."""
    out = host.check_output(
        "for d in %s/class/infiniband/*; do "
        "[ \"$(cat $d/ports/1/link_layer)\" = Ethernet ] && ls $d/device/net; done; true" % SYSFS)
    return sorted(out.split())


def mlnx_qos_report(host, netdev):
    return host.check_output("mlnx_qos -i %s" % netdev)


def runs(host):
    """The writes of each converge run, as fabricsim logged them."""
    names = sorted(host.check_output("ls /var/lib/fabricsim-runs").split(),
                   key=lambda n: int(re.search(r"\d+", n).group()))
    out = []
    for name in names:
        text = host.file("/var/lib/fabricsim-runs/" + name).content_string
        out.append([json.loads(line) for line in text.splitlines() if line.strip()])
    return out


def test_every_roce_port_is_lossless_on_priority_3(host):
    netdevs = roce_netdevs(host)
    assert netdevs, "no RoCE port found"
    for netdev in netdevs:
        report = mlnx_qos_report(host, netdev)
        assert "Priority trust state: dscp" in report, (netdev, report)
        enabled = re.search(r"^\s*enabled\s+(.*)$", report, re.M).group(1).split()
        assert enabled == ["0", "0", "0", "1", "0", "0", "0", "0"], (netdev, enabled)
        # DSCP 26 (RoCE) maps to priority 3, DSCP 48 (CNP) to priority 6
        prio3 = " ".join(re.findall(r"prio:3 dscp:([\d,]+)", report))
        prio6 = " ".join(re.findall(r"prio:6 dscp:([\d,]+)", report))
        assert "26" in re.findall(r"\d+", prio3), (netdev, report)
        assert "48" in re.findall(r"\d+", prio6), (netdev, report)


def test_dcqcn_and_tos_in_sysfs(host):
    for netdev in roce_netdevs(host):
        ecn = "%s/class/net/%s/ecn" % (SYSFS, netdev)
        assert host.file(ecn + "/roce_np/enable/3").content_string.strip() == "1"
        assert host.file(ecn + "/roce_rp/enable/3").content_string.strip() == "1"
        for prio in (0, 1, 2, 4, 5, 6, 7):
            assert host.file("%s/roce_np/enable/%d" % (ecn, prio)).content_string.strip() == "0"
        assert host.file(ecn + "/roce_np/cnp_dscp").content_string.strip() == "48"
        assert host.file(ecn + "/roce_np/cnp_802p_prio").content_string.strip() == "6"
    tclass = host.check_output("cat %s/class/infiniband/*/tc/1/traffic_class" % SYSFS)
    assert set(re.findall(r"\d+", tclass)) == {"106"}, tclass


def test_rdma_cm_default_tos(host):
    devices = host.check_output("ls %s/class/infiniband" % SYSFS).split()
    for netdev in roce_netdevs(host):
        device = [d for d in devices
                  if netdev in host.check_output("ls %s/class/infiniband/%s/device/net" % (SYSFS, d)).split()][0]
        tos = host.file("%s/kernel/config/rdma_cm/%s/ports/1/default_roce_tos" % (SYSFS, device))
        assert tos.content_string == "106\n", (netdev, device, tos.content_string)


def test_first_converge_made_the_fewest_writes_and_the_second_none(host):
    netdevs = roce_netdevs(host)
    first, second = runs(host)[:2]
    qos_calls = [r for r in first if r["tool"] == "mlnx_qos"]
    # trust and the DSCP map cannot share one mlnx_qos call: two calls per interface
    assert len(qos_calls) == 2 * len(netdevs), [r["argv"] for r in qos_calls]
    for netdev in netdevs:
        assert sum(1 for r in qos_calls if r["argv"][2] == netdev) == 2
    sysfs_writes = [r["path"] for r in first if r["tool"] == "sysfs"]
    assert len(sysfs_writes) == len(set(sysfs_writes)), "a sysfs file was written twice"
    wanted = ("roce_np/enable/3", "roce_rp/enable/3", "roce_np/cnp_dscp",
              "roce_np/cnp_802p_prio", "tc/1/traffic_class", "ports/1/default_roce_tos")
    assert [p for p in sysfs_writes if not p.endswith(wanted)] == []
    # firmware defaults: ECN off on every priority, traffic class 0 -> these always change
    for netdev in netdevs:
        for leaf in ("roce_np/enable/3", "roce_rp/enable/3"):
            assert sum(1 for p in sysfs_writes if p.endswith("%s/ecn/%s" % (netdev, leaf))) == 1
    assert sum(1 for p in sysfs_writes if p.endswith("tc/1/traffic_class")) == len(netdevs)
    assert sum(1 for p in sysfs_writes if p.endswith("ports/1/default_roce_tos")) == len(netdevs)
    assert second == [], "the converged re-run wrote: %s" % second


def test_boot_unit_is_enabled_and_its_state_file_covers_every_port(host):
    assert host.service("rdma-fabric-roce-qos.service").is_enabled
    state = host.file("/etc/rdma-fabric/roce_qos/desired.conf")
    assert state.exists and state.user == "root" and state.mode == 0o644
    lines = [ln.split() for ln in state.content_string.splitlines() if ln and not ln.startswith("#")]
    for netdev in roce_netdevs(host):
        mine = [ln for ln in lines if ln[0] == netdev]
        # trust+PFC+ETS, then the DSCP map: the two mlnx_qos calls of a first converge
        assert [ln[1] for ln in mine].count("mlnx_qos") == 2, mine
        assert all(ln[3] == netdev for ln in mine if ln[1] == "mlnx_qos")
        assert any(ln[1] == "sysfs" and ln[2].endswith("/ecn/roce_np/enable/3=1") for ln in mine), mine
    assert not host.file("/etc/rdma-fabric/roce_qos/desired.sha256").exists


def test_no_write_failed(host):
    failed = [r for run in runs(host) for r in run if r.get("rc") not in (0, None)]
    assert failed == []


def test_lldp_tlvs_where_lldpad_runs(host):
    if host.check_output("fabricsim lldpad status").strip() != "running":
        pytest.skip("lldpad does not run on this node: the role leaves LLDP alone")
    for netdev in roce_netdevs(host):
        pfc = host.check_output("lldptool -t -i %s -V PFC -c enabled" % netdev)
        assert pfc.strip() == "enabled=8", (netdev, pfc)          # bitmask: priority 3 only
        app = host.check_output("lldptool -t -i %s -V APP" % netdev)
        assert re.search(r"Prio 3\s+\S*\s*Sel 3\s.*4791", app), (netdev, app)
