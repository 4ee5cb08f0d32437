"""fabricsim pieces the gpudirect role reads: lspci -nn and Bus: lines, setpci VALUE:MASK,
nvidia-smi --query-gpu, and the NVIDIA modules (modprobe, modinfo, boot via modules-load.d)."""
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _pcie_acs as acs


@pytest.fixture
def no_modules_load(monkeypatch, tmp_path):
    conf = tmp_path / "modules-load.d"
    conf.mkdir()
    monkeypatch.setenv("FABRICSIM_MODULES_LOAD_DIRS", str(conf))
    return conf


def test_lspci_nn_ids_and_bridge_bus_numbers(sim):
    sim.init("dgx-h100-ib")
    out = sim.out("lspci", "-D", "-nn", "-vvv")
    assert ("0000:1b:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)"
            in out.splitlines())
    devices = acs.parse_lspci(out)
    assert devices["0000:17:03.0"]["bus"] == (0x1b, 0x1b)
    assert devices["0000:16:00.0"]["bus"] == (0x17, 0x1b)          # switch upstream port: every bus below
    assert devices["0000:15:01.0"]["bus"] == (0x16, 0x1b)
    assert devices["0000:18:00.0"]["vendor_id"] == "15b3"
    # the module's lspci walk finds the switch ports between GPU0 and mlx5_0
    ups = dict((b, acs.upstream_bridges(b, devices)) for b in ("0000:1b:00.0", "0000:18:00.0"))
    assert acs.path_between(ups["0000:1b:00.0"], ups["0000:18:00.0"]) == \
        ["0000:17:03.0", "0000:17:00.0", "0000:16:00.0"]


def test_setpci_value_mask_changes_only_the_masked_bits(sim):
    sim.init("dgx-h100-ib-misplaced")
    assert sim.out("setpci", "-s", "0000:5d:00.0", "ECAP_ACS+0x6.w") == "001d\n"
    sim.out("setpci", "-s", "0000:5d:00.0", "ECAP_ACS+0x6.w=0000:002c")
    assert sim.out("setpci", "-s", "0000:5d:00.0", "ECAP_ACS+0x6.w") == "0011\n"
    out, err, rc = sim.run("setpci", "-s", "0000:5d:00.0", "ECAP_ACS+0x6.w=zz")
    assert rc == 1 and "Invalid value" in err


def test_nvidia_smi_query_gpu(sim):
    sim.init("dgx-h100-ib")
    lines = sim.out("nvidia-smi", "--query-gpu=index,pci.bus_id,name,uuid", "--format=csv,noheader").splitlines()
    assert len(lines) == 8
    assert lines[0].split(", ")[:3] == ["0", "00000000:1B:00.0", "NVIDIA H100 80GB HBM3"]
    header = sim.out("nvidia-smi", "--query-gpu=index,pci.bus_id", "--format=csv").splitlines()[0]
    assert header == "index, pci.bus_id"


def test_nvidia_modules_modprobe_and_modinfo(sim, no_modules_load):
    sim.init("dgx-h100-ib")
    module = os.path.join(sim.sys, "module")
    assert sorted(os.listdir(module)) == ["nvidia", "nvidia_drm", "nvidia_modeset", "nvidia_uvm"]
    assert sim.sysfs("module/nvidia/initstate").strip() == "live"
    assert sim.out("modinfo", "-F", "filename", "nvidia_peermem").strip().endswith("/nvidia-peermem.ko")
    sim.out("modprobe", "nvidia-peermem")
    assert sim.sysfs("module/nvidia_peermem/initstate").strip() == "live"
    out, err, rc = sim.run("modprobe", "-r", "nvidia")
    assert rc == 1 and "in use" in err
    sim.out("modprobe", "-r", "nvidia_peermem")
    assert not os.path.exists(os.path.join(module, "nvidia_peermem"))


def test_peermem_is_volatile_unless_in_modules_load_d(sim, no_modules_load):
    sim.init("dgx-h100-ib")
    sim.out("modprobe", "nvidia_peermem")
    assert sim.cli("boot") == 0
    assert not os.path.exists(os.path.join(sim.sys, "module", "nvidia_peermem"))
    (no_modules_load / "nvidia-peermem.conf").write_text("# comment\nnvidia_peermem\n")
    assert sim.cli("boot") == 0
    assert sim.sysfs("module/nvidia_peermem/initstate").strip() == "live"


def test_no_gpu_no_nvidia_modules(sim, no_modules_load):
    sim.init("small-roce")
    assert not os.path.exists(os.path.join(sim.sys, "module", "nvidia"))
    out, err, rc = sim.run("modinfo", "nvidia_peermem")
    assert rc != 0
