"""The foundation scenario: nodes boot with systemd and fabricsim, and site.yml converges.

Live state is read through the simulated tools, the way an operator would on a real node.
"""
import json
import re

from molecule_hosts import hosts_of

testinfra_hosts = hosts_of()


def test_systemd_is_pid1_and_running(host):
    assert host.file("/proc/1/comm").content_string.strip() == "systemd"
    state = host.run("systemctl is-system-running").stdout.strip()
    assert state in ("running", "degraded"), state


def test_tools_answer_like_a_real_node(host):
    profile = json.loads(host.file("/var/lib/fabricsim/profile.json").content_string)
    ibstat = host.check_output("ibstat")
    cas = re.findall(r"^CA '(mlx5_\d+)'$", ibstat, re.M)
    assert cas and cas[0] == "mlx5_0", ibstat[:300]
    assert len(cas) == len(profile["nics"]), (cas, len(profile["nics"]))
    netdev = host.check_output("ls /run/fabricsim/sys/class/infiniband/mlx5_0/device/net").split()[0]
    link_layer = host.file("/run/fabricsim/sys/class/infiniband/mlx5_0/ports/1/link_layer").content_string
    qos = host.run("mlnx_qos -i %s" % netdev)
    if link_layer.strip() == "Ethernet":
        assert qos.rc == 0, qos.stdout
        assert re.search(r"^Priority trust state: (pcp|dscp)$", qos.stdout, re.M), qos.stdout
        assert re.search(r"^\tpriority    0   1   2   3   4   5   6   7$", qos.stdout, re.M), qos.stdout
    else:
        # IPoIB has no DCB: the real tool says so on stdout and exits 1
        assert qos.rc == 1 and "not supported on your system" in qos.stdout, qos.stdout
    if profile["gpus"]:
        topo = host.check_output("nvidia-smi topo -m")
        assert topo.startswith("\tGPU0\tGPU1"), topo[:200]
        assert "NIC Legend:" in topo
        assert len(re.findall(r"^GPU\d+\t", topo, re.M)) == len(profile["gpus"])
    else:
        assert host.run("nvidia-smi topo -m").rc != 0


def test_nccl_conf_follows_the_topology(host):
    name = host.backend.get_hostname()
    if "small" in name:
        assert not host.file("/etc/nccl.conf").exists
        return
    conf = dict(line.split("=", 1) for line in host.file("/etc/nccl.conf").content_string.splitlines()
                if line and not line.startswith("#"))
    hcas = conf["NCCL_IB_HCA"]
    assert hcas.startswith("=mlx5_0"), hcas          # GPU0's nearest NIC first, exact match
    assert "mlx5_8" not in hcas and "mlx5_9" not in hcas   # storage ports left out
    assert len(hcas.lstrip("=").split(",")) == 8
    if "hgx" in name:
        assert conf["NCCL_IB_TC"] == "106"
        index = conf["NCCL_IB_GID_INDEX"]
        gids = host.check_output("show_gids mlx5_0")
        row = [l for l in gids.splitlines() if re.match(r"^mlx5_0\s+1\s+%s\s" % index, l)]
        assert row and "v2" in row[0] and re.search(r"\d+\.\d+\.\d+\.\d+", row[0]), (index, gids)
    else:
        assert "NCCL_IB_GID_INDEX" not in conf


WRITE_SEVEN = ("import sys\n"
               "try:\n"
               "    with open(sys.argv[1], \"w\") as handle:\n"
               "        handle.write(\"7\\n\")\n"
               "except OSError as exc:\n"
               "    print(exc.errno)\n"
               "else:\n"
               "    print(\"accepted\")\n")


def test_sysfs_refuses_an_invalid_write_with_einval(host):
    """fabricsim-sysfsd serves the simulated sysfs over FUSE: the writer gets EINVAL, as from
    mlx5's sysfs, and the value stays.  The log is put back as it was afterwards."""
    assert host.file("/run/fabricsim/sysfsd.mode").content_string.strip() == "fuse"
    mounts = host.file("/proc/self/mounts").content_string
    assert re.search(r"^\S+ /run/fabricsim/sys fuse ", mounts, re.M), mounts
    ecn = host.check_output("ls -d /run/fabricsim/sys/class/net/*/ecn 2>/dev/null || true").split()
    assert ecn, "no netdev with ECN sysfs"            # every profile has an Ethernet port
    path = ecn[0] + "/roce_np/enable/3"
    before = host.file(path).content_string
    log = "/var/lib/fabricsim/log.jsonl"
    size = int(host.check_output("stat -c %%s %s 2>/dev/null || echo 0" % log))
    try:
        out = host.check_output("python3 -c '%s' %s" % (WRITE_SEVEN, path))
        assert out.strip() == "22", out                 # EINVAL, from the writer's close()
        assert host.file(path).content_string == before
        recs = [json.loads(line) for line in host.check_output("fabricsim log --writes --json").splitlines()]
        assert recs and recs[-1]["path"] == path.replace("/run/fabricsim", "") and recs[-1]["errno"] == 22, recs
    finally:
        host.run("truncate -s %d %s" % (size, log))
