"""Live GPUDirect state after converge: ACS through lspci, the GRUB file, the role's report,
peer memory and the boot unit, read on each node."""
import json
import re

from molecule_hosts import hosts_of

testinfra_hosts = hosts_of("gpu_nodes")
SYSFS = "/run/fabricsim/sys"
REDIRECT_BITS = ("ReqRedir", "CmpltRedir", "EgressCtrl")
# dgx-h100-ib-misplaced: the switch port above mlx5_3 left with ACS redirect on, mlx5_5 on NUMA 0
MISPLACED_BRIDGE = "0000:5d:00.0"


def lspci_devices(host):
    """{bdf: {"port": port type, "ctl": {flag: bool}}} from ``lspci -D -vvv``."""
    devices, cur = {}, None
    for line in host.check_output("lspci -D -vvv").splitlines():
        if line and not line[0].isspace():
            cur = devices.setdefault(line.split()[0], {"port": None, "ctl": None, "class": line.split(":", 3)[-2]})
        elif cur is not None and "Express (v2)" in line:
            cur["port"] = re.search(r"Express \(v2\) (.*? Port|Endpoint)", line).group(1)
        elif cur is not None and line.strip().startswith("ACSCtl:"):
            cur["ctl"] = dict((n, v == "+") for n, v in re.findall(r"(\w+)([+-])", line.split(":", 1)[1]))
    return devices


def report(host):
    return json.loads(host.file("/var/lib/gdr-molecule/report.json").content_string)


def runs(host):
    names = sorted(host.check_output("ls /var/lib/gdr-molecule").split())
    names = sorted((n for n in names if n.startswith("run-")), key=lambda n: int(re.search(r"\d+", n).group()))
    out = []
    for name in names:
        text = host.file("/var/lib/gdr-molecule/" + name).content_string
        out.append([json.loads(line) for line in text.splitlines() if line.strip()])
    return out


def test_acs_redirect_off_on_every_switch_port_between_gpu_and_nic(host):
    devices = lspci_devices(host)
    downstream = dict((b, d) for b, d in devices.items() if d["port"] == "Downstream Port" and d["ctl"])
    assert len(downstream) == 16, sorted(downstream)       # two switch ports (GPU, NIC) per rail
    for bdf, device in downstream.items():
        assert not any(device["ctl"][bit] for bit in REDIRECT_BITS), (bdf, device["ctl"])
    # the root ports above the shared switches keep their ACS isolation
    roots = dict((b, d) for b, d in devices.items() if d["port"] == "Root Port" and d["ctl"])
    assert roots
    for bdf, device in roots.items():
        assert device["ctl"]["ReqRedir"] and device["ctl"]["CmpltRedir"], (bdf, device["ctl"])


def test_the_role_wrote_acs_only_where_redirect_was_on_and_the_rerun_nothing(host):
    first, second = runs(host)[:2]
    setpci = [r["argv"] for r in first if r["tool"] == "setpci"]
    if host.backend.get_hostname() == "gdr-misplaced":
        assert setpci == [["setpci", "-s", MISPLACED_BRIDGE, "ECAP_ACS+0x6.w=0000:002c"]], setpci
    else:
        assert setpci == []
    assert [r for r in first if r["tool"] not in ("setpci", "modprobe")] == []
    assert [r["argv"] for r in first if r["tool"] == "modprobe"] == [["modprobe", "nvidia_peermem"]]
    assert second == [], "the converged re-run wrote: %s" % second
    assert [r for run in runs(host) for r in run if r.get("rc") not in (0, None)] == []


def test_grub_has_iommu_pt_and_the_default_line_untouched(host):
    text = host.file("/etc/default/grub").content_string
    linux = re.findall(r"^GRUB_CMDLINE_LINUX=(.*)$", text, re.M)
    default = re.findall(r"^GRUB_CMDLINE_LINUX_DEFAULT=(.*)$", text, re.M)
    assert linux == ['"iommu=pt"'], linux
    assert default == ['"quiet"'], default
    assert "GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`" in text


def test_reboot_required_is_reported(host):
    # the command line the simulated node booted with (fabricsim; the container shares the host kernel)
    running = host.file("/run/fabricsim/proc/cmdline").content_string.split()
    data = report(host)
    assert data["reboot_required"] is ("iommu=pt" not in running)
    if data["reboot_required"]:
        assert [a["name"] for a in data["pending_arguments"]] == ["iommu"], data["pending_arguments"]


def test_readiness_verdict_of_every_gpu(host):
    gdr = report(host)["gdr"]
    gpus = dict((g["gpu"], g) for g in gdr["gpus"])
    assert sorted(gpus) == ["GPU%d" % i for i in range(8)]
    misplaced = host.backend.get_hostname() == "gdr-misplaced"
    for name, gpu in gpus.items():
        assert gpu["peer_memory"] == "nvidia_peermem", gpu
        assert gpu["relation"] == "PXB", gpu
        assert gpu["acs_redirect"] is False, gpu      # GPU3's bridge was cleared by the role
        if misplaced and name == "GPU5":
            assert gpu["nic"] == "mlx5_5"
            assert gpu["expected_to_work"] is False
            assert gpu["reasons"] == ["NIC on NUMA node 0, GPU on NUMA node 1"], gpu["reasons"]
        else:
            assert gpu["expected_to_work"] is True, (name, gpu["reasons"])
    assert gdr["not_ready"] == (["GPU5"] if misplaced else [])


def test_peer_memory_loaded_and_persisted(host):
    assert host.file(SYSFS + "/module/nvidia_peermem/initstate").content_string.strip() == "live"
    conf = host.file("/etc/modules-load.d/nvidia-peermem.conf")
    assert conf.exists
    assert "nvidia_peermem" in conf.content_string.splitlines()


def test_boot_unit_is_enabled(host):
    assert host.service("rdma-fabric-acs.service").is_enabled
    script = host.file("/usr/local/sbin/rdma-fabric-acs").content_string
    bridges = re.search(r'^BRIDGES="([^"]*)"', script, re.M).group(1).split()
    assert len(bridges) == 16 and MISPLACED_BRIDGE in bridges, bridges
    unit = host.file("/etc/systemd/system/rdma-fabric-acs.service").content_string
    assert "After=fabricsim.service" in unit
