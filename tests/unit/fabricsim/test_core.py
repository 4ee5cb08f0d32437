"""fabricsim core: profiles, sysfs tree, ECN attributes, watcher, write log, install."""
import json
import os
import subprocess
import sys

import pytest

from conftest import SIM_ROOT

IF = "enp24s0np0"


def test_profiles_listed(sim, capsys):
    assert sim.cli("profiles") == 0
    out = capsys.readouterr().out
    for name in ("dgx-h100-ib", "hgx-h100-roce", "small-roce", "dgx-h100-ib-misplaced", "hgx-h100-roce-nogid"):
        assert name in out


def test_unknown_profile(sim):
    assert sim.cli("init", "--profile", "nope") == 1


def test_no_profile_tool_says_so(sim):
    out, err, rc = sim.run("mlnx_qos", "-i", IF)
    assert rc == 1 and "fabricsim init --profile" in err


def test_sysfs_tree_hgx(sim):
    sim.init("hgx-h100-roce")
    base = "class/infiniband/mlx5_0/ports/1/"
    assert sim.sysfs(base + "state") == "4: ACTIVE\n"
    assert sim.sysfs(base + "phys_state") == "5: LinkUp\n"
    assert sim.sysfs(base + "rate") == "400 Gb/sec (4X NDR)\n"
    assert sim.sysfs(base + "link_layer") == "Ethernet\n"
    assert sim.sysfs(base + "gid_attrs/types/1") == "RoCE v2\n"
    assert sim.sysfs(base + "gid_attrs/ndevs/3") == IF + "\n"
    assert sim.sysfs(base + "gids/3") == "0000:0000:0000:0000:0000:ffff:0a0a:000b\n"   # ::ffff:10.10.0.11
    assert sim.sysfs(base + "gids/0").startswith("fe80:0000:0000:0000:a288:c2ff:feb8:")
    link = os.readlink(os.path.join(sim.sys, "class/infiniband/mlx5_0/device"))
    # as the kernel lays it out: the function under its host bridge and bridges, and
    # bus/pci/devices/<bdf> a link to the same place
    function = "devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0"
    assert link == "../../../" + function
    assert os.path.realpath(os.path.join(sim.sys, "class/infiniband/mlx5_0/device")) == \
        os.path.realpath(os.path.join(sim.sys, "bus/pci/devices/0000:18:00.0")) == \
        os.path.join(os.path.realpath(sim.sys), function)
    assert os.path.realpath(os.path.join(sim.sys, function, "infiniband/mlx5_0")) == \
        os.path.join(os.path.realpath(sim.sys), "class/infiniband/mlx5_0")
    pci = "bus/pci/devices/0000:18:00.0/"
    assert sim.sysfs(pci + "numa_node") == "0\n"
    assert sim.sysfs(pci + "current_link_speed") == "32.0 GT/s PCIe\n"
    assert sim.sysfs(pci + "max_link_width") == "16\n"
    assert sim.sysfs("bus/pci/devices/0000:c0:00.0/numa_node") == "1\n"
    assert sim.sysfs("class/net/%s/address" % IF).startswith("a0:88:c2:b8:")
    assert sim.sysfs("class/infiniband/mlx5_0/tc/1/traffic_class") == "0\n"


def test_sysfs_ecn_defaults_no_params_dir(sim):
    sim.init("hgx-h100-roce")
    ecn = "class/net/%s/ecn/" % IF
    for prio in range(8):
        assert sim.sysfs(ecn + "roce_np/enable/%d" % prio) == "0\n"
        assert sim.sysfs(ecn + "roce_rp/enable/%d" % prio) == "0\n"
    assert sim.sysfs(ecn + "roce_np/cnp_dscp") == "48\n"
    assert sim.sysfs(ecn + "roce_np/cnp_802p_prio") == "6\n"
    assert sim.sysfs(ecn + "roce_rp/rpg_gd") == "11\n"       # DOCA PCC note default
    assert not os.path.exists(os.path.join(sim.sys, ecn, "roce_np", "params"))


def test_sysfs_ib_profile(sim):
    sim.init("dgx-h100-ib")
    base = "class/infiniband/mlx5_0/ports/1/"
    assert sim.sysfs(base + "link_layer") == "InfiniBand\n"
    assert sim.sysfs(base + "gids/0") == "fe80:0000:0000:0000:a088:c203:00b8:a028\n"
    assert not os.path.exists(os.path.join(sim.sys, "class/net/ibp24s0/ecn"))
    assert os.path.exists(os.path.join(sim.sys, "class/net/enp228s0f0np0/ecn/roce_np/enable/3"))


def test_ecn_volatile_survives_fault_rebuild_but_not_reset(sim):
    sim.init("hgx-h100-roce")
    sim.write_sysfs("class/net/%s/ecn/roce_np/enable/3" % IF, "1\n")
    assert sim.cli("fault", "numa", "0000:18:00.0", "1") == 0
    assert sim.sysfs("class/net/%s/ecn/roce_np/enable/3" % IF) == "1\n"
    assert sim.cli("reset") == 0
    assert sim.sysfs("class/net/%s/ecn/roce_np/enable/3" % IF) == "0\n"
    assert sim.sysfs("bus/pci/devices/0000:18:00.0/numa_node") == "1\n"      # faults persist


# ---- watcher ---------------------------------------------------------------
@pytest.fixture
def watcher(sim):
    from fabricsim import watch
    sim.init("hgx-h100-roce")
    w = watch.Watcher().start()
    yield w
    w.ino.close()


@pytest.mark.parametrize("rel,value,ok", [
    ("roce_np/enable/3", "1", True),
    ("roce_np/enable/3", "2", False),
    ("roce_np/enable/3", "yes", False),
    ("roce_rp/enable/0", "0", True),
    ("roce_np/cnp_dscp", "26", True),
    ("roce_np/cnp_dscp", "64", False),
    ("roce_np/cnp_802p_prio", "7", True),
    ("roce_np/cnp_802p_prio", "8", False),
    ("roce_rp/rpg_gd", "16", False),
    ("roce_rp/rpg_time_reset", "100", True),
])
def test_watcher_validates_like_kernel(sim, watcher, rel, value, ok):
    path = "class/net/%s/ecn/%s" % (IF, rel)
    before = sim.sysfs(path)
    sim.write_sysfs(path, value + "\n")
    recs = watcher.process(timeout=2)
    assert len(recs) == 1
    rec = recs[0]
    assert rec["kind"] == "write" and rec["path"] == "/sys/" + path and rec["value"] == value
    if ok:
        assert "errno" not in rec and sim.sysfs(path) == value + "\n"
    else:
        assert rec["errno"] == 22 and sim.sysfs(path) == before      # reverted
    assert watcher.process(timeout=0.2) == []                          # own revert not logged


def test_watcher_traffic_class_and_same_value_write_counts(sim, watcher):
    tc = "class/infiniband/mlx5_0/tc/1/traffic_class"
    recs = []
    for value in ("106", "106", "256"):
        sim.write_sysfs(tc, value)
        recs += watcher.process(timeout=2)
    assert [(r["value"], r.get("errno")) for r in recs] == [("106", None), ("106", None), ("256", 22)]
    assert sim.sysfs(tc) == "106\n"
    assert len(sim.log(writes=True)) == 3


def test_watcher_burst_counts_every_write(sim, watcher):
    """Back-to-back writes handled late: the count is exact (OPEN events keep inotify from
    merging them); the values logged are what the file held when the event was read."""
    path = "class/net/%s/ecn/roce_np/enable/3" % IF
    for dummy in range(5):
        sim.write_sysfs(path, "1")
    recs = watcher.process(timeout=2) + watcher.process(timeout=0.3)
    assert len(recs) == 5 and all(r["value"] == "1" for r in recs)


def test_watch_once_cli(sim):
    sim.init("hgx-h100-roce")
    assert sim.cli("watch", "--once", "--timeout", "0.1") == 0


# ---- write log -------------------------------------------------------------
def test_log_counts_reads_and_writes(sim, capsys):
    sim.init("hgx-h100-roce")
    sim.out("mlnx_qos", "-i", IF)
    sim.out("mlnx_qos", "-i", IF, "--trust", "dscp")
    sim.out("mlnx_qos", "-i", IF, "--dscp2prio", "set,26,3", "--dscp2prio", "set,48,6")
    sim.run("mlnx_qos", "-i", IF, "-P", "3")
    sim.run("mlnx_qos", "-i", IF, "-d", "get")
    writes = sim.log(writes=True)
    assert len(sim.log()) == 5 and len(writes) == 2
    assert writes[0]["argv"] == ["mlnx_qos", "-i", IF, "--trust", "dscp"]
    capsys.readouterr()
    assert sim.cli("log", "--writes") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and " mlnx_qos write mlnx_qos -i %s --trust dscp" % IF in lines[0]
    assert sim.cli("log", "--json", "--clear") == 0
    assert len([json.loads(l) for l in capsys.readouterr().out.splitlines()]) == 5
    assert sim.log() == []


# ---- install / entry script ----------------------------------------------------
def test_install_is_idempotent(sim, tmp_path):
    from fabricsim import install
    root = str(tmp_path / "root")
    first = install.install(root=root, systemctl=False)
    assert install.install(root=root, systemctl=False) == []
    sbin = os.path.join(root, "usr/local/sbin")
    for tool in ("mlnx_qos", "lldptool", "ibstat", "ibstatus", "ibv_devinfo", "ibdev2netdev", "show_gids",
                 "cma_roce_mode", "ethtool", "nvidia-smi", "lspci", "setpci", "fabricsim"):
        assert os.path.realpath(os.path.join(sbin, tool)) == os.path.join(SIM_ROOT, "bin", "fabricsim")
    unit = open(os.path.join(root, "etc/systemd/system/fabricsim.service")).read()
    assert "DefaultDependencies=no" in unit and "Before=sysinit.target" in unit and "Type=oneshot" in unit
    assert os.path.islink(os.path.join(root, "etc/systemd/system/sysinit.target.wants/fabricsim-sysfsd.service"))
    conf = open(os.path.join(root, "etc/systemd/system.conf.d/fabricsim.conf")).read()
    assert "DefaultEnvironment=SYSFS_PATH=/run/fabricsim/sys" in conf
    assert len(first) > 13


def test_entry_script_dispatches_on_argv0(sim, tmp_path):
    link = tmp_path / "mlnx_qos"
    os.symlink(os.path.join(SIM_ROOT, "bin", "fabricsim"), str(link))
    env = dict(os.environ)
    subprocess.check_call([sys.executable, os.path.join(SIM_ROOT, "bin", "fabricsim"), "init", "--profile",
                           "small-roce"], env=env, stdout=subprocess.DEVNULL)
    proc = subprocess.run([str(link), "-i", "ens1f1np1"], env=env, stdout=subprocess.PIPE, universal_newlines=True,
                          check=False)
    assert proc.returncode == 0 and "Priority trust state: pcp" in proc.stdout
