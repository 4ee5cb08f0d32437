"""Topology tools vs samples, and faults."""
import os
import re

import samples


def body(fname, sample_id):
    return "".join(l for l in samples.load(fname)[sample_id].raw.splitlines(True)
                   if not re.match(r"^\$ |^\[rc=\d+\]", l))


def set_nic0(sim, **kw):
    def fn(data):
        nic = [n for n in data["nics"] if n["dev"] == "mlx5_0"][0]
        port = kw.pop("port", {})
        nic.update(kw)
        nic["ports"][0].update(port)
    sim.edit_profile(fn)


def test_ibv_devinfo_nonverbose_ib_exact(sim):
    """IBVDEV-RECON-NONVERBOSE-IB (reconstructed from devinfo.c print statements)."""
    sim.init("dgx-h100-ib")
    set_nic0(sim, node_guid="a088:c203:00e3:142a", sys_image_guid="a088:c203:00e3:142a",
             port={"lid": 75})
    assert sim.out("ibv_devinfo", "-d", "mlx5_0") == body("ibv_devinfo.txt", "IBVDEV-RECON-NONVERBOSE-IB")


def test_ibv_devinfo_verbose_gid_suffixes(sim):
    """IBVDEV-REAL-COMMIT-BBCE02EA3 GID lines (tabs turned to spaces in the commit message)."""
    sim.init("hgx-h100-roce")
    set_nic0(sim, port={"mac": "b0:26:28:d3:b0:f0", "ipv4": "192.170.1.101/24"})
    out = sim.out("ibv_devinfo", "-v", "-d", "mlx5_0")
    gids = [" ".join(l.split()) for l in out.splitlines() if "GID[" in l]
    want = [" ".join(l.split()) for l in body("ibv_devinfo.txt", "IBVDEV-REAL-COMMIT-BBCE02EA3").splitlines()
            if "GID[" in l]
    assert gids == want


def test_ibstat_layout_matches_real_h100(sim):
    """IBSTAT-REAL-H100-ACTIVE2 (tabs expanded in capture): first CA block, whitespace-normalised."""
    sim.init("dgx-h100-ib")
    set_nic0(sim, fw="28.41.1000", node_guid="58a2:e103:00a7:820e", sys_image_guid="58a2:e103:00a7:820e",
             port={"lid": 128, "port_guid": "58a2:e103:00a7:820e"})
    out = sim.out("ibstat", "mlx5_0")
    assert "\tPort 1:\n\t\tState: Active\n" in out
    want = body("ibstat.txt", "IBSTAT-REAL-H100-ACTIVE2").splitlines()[:17]
    assert [l.split() for l in out.splitlines()] == [l.split() for l in want]


def test_show_gids_layout(sim):
    sim.init("hgx-h100-roce")
    out = sim.out("show_gids", "mlx5_1")
    synth = body("show_gids.txt", "SHOWGIDS-EXEC-SYNTH").splitlines(True)
    assert out.splitlines(True)[:2] == synth[:2]
    assert "\t0000:0000:0000:0000:0000:ffff:0a0a:010b\t10.10.1.11  \tv2\tenp64s0np0\n" in out
    assert out.endswith("n_gids_found=4\n")


def test_nogid_profile(sim):
    sim.init("hgx-h100-roce-nogid")
    assert sim.out("show_gids", "mlx5_2").endswith("n_gids_found=2\n")
    assert not os.path.exists(os.path.join(sim.sys, "class/infiniband/mlx5_2/ports/1/gid_attrs/types/3"))


def test_ibdev2netdev(sim):
    sim.init("dgx-h100-ib")
    out = sim.out("ibdev2netdev")
    assert out.splitlines()[0] == "mlx5_0 port 1 ==> ibp24s0 (Up)"
    assert sim.out("ibdev2netdev", "-v").startswith(
        "0000:18:00.0 mlx5_0 (MT4129 - MCX75310AAS-NEAT) NVIDIA ConnectX-7 HHHL")


def test_nvidia_smi_topo(sim):
    sim.init("dgx-h100-ib")
    out = sim.out("nvidia-smi", "topo", "-m")
    rows = [l.split("\t") for l in out.split("\n\n")[0].splitlines()]
    assert rows[0][0] == "" and rows[0][-3:] == ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    assert rows[1][1] == " X " and rows[1][9] == "PXB" and rows[1][10] == "NODE" and rows[1][13] == "SYS"
    assert rows[1][-4:] == ["0-55,112-167", "0", "", "N/A"]
    assert rows[17][17:19] == [" X ", "PIX"]          # the dual-port storage NIC
    sample = body("nvidia_smi_topo.txt", "TOPO-REAL-A100-10NIC")
    assert out[out.index("\nLegend:"):] == sample[sample.index("\nLegend:"):]
    sim.init("small-roce")
    assert sim.run("nvidia-smi", "topo", "-m")[2] == 9


def test_setpci_and_lspci_acs(sim):
    sim.init("dgx-h100-ib-misplaced")
    assert sim.out("setpci", "-s", "5d:00.0", "ECAP_ACS+0x6.w") == "001d\n"
    assert "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+" in sim.out("lspci", "-vvv", "-s", "5d:00.0")
    assert sim.out("setpci", "-v", "-s", "5d:00.0", "ECAP_ACS+0x6.w=0000") == "0000:5d:00.0 (ecap 000d @230) @236 0000\n"
    assert "\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir-" in sim.out("lspci", "-vvv", "-s", "5d:00.0")
    out, err, rc = sim.run("setpci", "-v", "-s", "18:00.0", "ECAP_ACS+0x6.w")
    assert (out, rc) == ("0000:18:00.0 ", 1) and "Extended capability 000d not found" in err
    assert sim.sysfs("bus/pci/devices/0000:c0:00.0/numa_node") == "0\n"      # misplaced rail NIC
    sim.cli("reset")
    assert sim.out("setpci", "-s", "5d:00.0", "ECAP_ACS+0x6.w") == "001d\n"   # runtime change lost
    assert [r["kind"] for r in sim.log() if r["tool"] == "setpci"][:3] == ["read", "write", "read"]


def test_cma_roce_mode(sim):
    sim.init("hgx-h100-roce")
    assert sim.out("cma_roce_mode", "-d", "mlx5_0", "-p", "1") == "RoCE v2\n"
    assert sim.out("cma_roce_mode", "-d", "mlx5_0", "-p", "1", "-m", "1") == "IB/RoCE v1\n"
    assert sim.out("cma_roce_mode", "-d", "mlx5_0") == "IB/RoCE v1\n"


def test_ethtool_pause_counters_follow_pfc(sim):
    sim.init("hgx-h100-roce")
    out = sim.out("ethtool", "-S", "enp24s0np0")
    assert out.startswith("NIC statistics:\n     rx_packets: 0\n") and "rx_prio3_pause" not in out
    sim.out("mlnx_qos", "-i", "enp24s0np0", "--pfc", "0,0,0,1,0,0,0,0")
    out = sim.out("ethtool", "-S", "enp24s0np0")
    assert "     rx_prio3_pause: 0\n" in out and "rx_prio2_pause" not in out
    assert sim.run("ethtool", "-S", "nosuch") == ("", "Cannot get stats strings information: No such device\n", 96)


# ---- faults ------------------------------------------------------------------
def test_fault_link_down(sim):
    sim.init("dgx-h100-ib")
    assert sim.cli("fault", "link-down", "mlx5_1:1") == 0
    assert "mlx5_1 port 1 ==> ibp64s0 (Down)" in sim.out("ibdev2netdev")
    assert "\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 10\n" in sim.out("ibstat", "mlx5_1")
    assert sim.sysfs("class/infiniband/mlx5_1/ports/1/state") == "1: DOWN\n"
    sim.cli("clear")
    assert sim.sysfs("class/infiniband/mlx5_1/ports/1/state") == "4: ACTIVE\n"


def test_fault_pcie_degrade_and_numa(sim):
    sim.init("hgx-h100-roce")
    assert sim.cli("fault", "pcie-degrade", "0000:18:00.0", "16GT/s", "8") == 0
    assert "\t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x8 (downgraded)\n" in sim.out("lspci", "-vv", "-s", "18:00.0")
    assert sim.sysfs("bus/pci/devices/0000:18:00.0/current_link_speed") == "16.0 GT/s PCIe\n"
    assert sim.sysfs("bus/pci/devices/0000:18:00.0/current_link_width") == "8\n"
    assert sim.cli("fault", "numa", "0000:18:00.0", "1") == 0
    assert sim.sysfs("bus/pci/devices/0000:18:00.0/numa_node") == "1\n"
    assert "\tNUMA node: 1\n" in sim.out("lspci", "-vv", "-s", "18:00.0")


def test_fault_counters(sim):
    sim.init("hgx-h100-roce")
    assert sim.cli("fault", "counters", "mlx5_0", "np_cnp_sent=1200", "out_of_buffer=7") == 0
    assert sim.sysfs("class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent") == "1200\n"
    assert sim.cli("fault", "counters", "enp24s0np0", "rx_discards_phy=5") == 0
    assert "     rx_discards_phy: 5\n" in sim.out("ethtool", "-S", "enp24s0np0")


def test_fault_tool_missing(sim, tmp_path):
    sim.init("hgx-h100-roce")
    sbin = tmp_path / "sbin"
    sbin.mkdir()
    os.symlink("/bin/true", str(sbin / "lldptool"))
    assert sim.cli("fault", "tool-missing", "lldptool") == 0
    assert not os.path.lexists(str(sbin / "lldptool"))            # `command -v lldptool` fails
    assert sim.run("lldptool", "-v") == ("", "lldptool: command not found\n", 127)
    sim.cli("clear")
    assert os.path.islink(str(sbin / "lldptool"))


def test_fault_fail_after_mlnx_qos_partial(sim):
    sim.init("hgx-h100-roce")
    IF = "enp24s0np0"
    assert sim.cli("fault", "fail-after", "mlnx_qos", "2") == 0
    sim.out("mlnx_qos", "-i", IF, "--pfc", "0,0,0,1,0,0,0,0")            # write 1: fine
    sim.out("mlnx_qos", "-i", IF)                                         # reads do not count
    out, dummy, rc = sim.run("mlnx_qos", "-i", IF, "--trust", "dscp")        # write 2: fails midway
    assert (out, rc) == ("Priority trust state is not supported on your system\n", 1)
    dscp = [a for a in sim.qos(IF)["apps"] if a[0] == 5]
    assert 0 < len(dscp) < 64                                             # part applied
    # one-shot; and like the real tool, trust already reads "dscp" so a re-run changes nothing:
    # the half-written map stays until the caller repairs it (set/flush)
    assert sim.run("mlnx_qos", "-i", IF, "--trust", "dscp")[2] == 0
    assert len([a for a in sim.qos(IF)["apps"] if a[0] == 5]) == len(dscp)


def test_fault_fail_after_lldptool_and_setpci(sim):
    sim.init("dgx-h100-ib-misplaced")
    sim.cli("fault", "fail-after", "setpci", "1")
    out, err, rc = sim.run("setpci", "-s", "5d:00.0", "ECAP_ACS+0x6.w=0000")
    assert rc == 1 and "Device or resource busy" in err
    sim.init("hgx-h100-roce")
    sim.cli("lldpad", "start")
    sim.cli("fault", "fail-after", "lldptool", "1")
    out, dummy, rc = sim.run("lldptool", "-T", "-i", "enp24s0np0", "-V", "PFC", "enabled=3")
    assert rc == 1
    assert sim.run("lldptool", "-t", "-i", "enp24s0np0", "-V", "PFC", "-c", "enabled")[0] == "enabled=8\n"  # stored
    assert "\tenabled     0   0   0   0   0   0   0   0   \n" in sim.out("mlnx_qos", "-i", "enp24s0np0")      # not pushed


def test_fault_acs_redir(sim):
    sim.init("dgx-h100-ib")
    assert sim.out("setpci", "-s", "17:00.0", "ECAP_ACS+0x6.w") == "0000\n"
    assert sim.cli("fault", "acs-redir", "0000:17:00.0", "on") == 0
    assert sim.out("setpci", "-s", "17:00.0", "ECAP_ACS+0x6.w") == "001d\n"
    sim.cli("reset")
    assert sim.out("setpci", "-s", "17:00.0", "ECAP_ACS+0x6.w") == "001d\n"     # persists like BIOS setup
