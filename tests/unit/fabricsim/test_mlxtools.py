"""mlxconfig / flint / mlxfwmanager shims and the NV (next-boot) firmware configuration."""
import importlib

import pytest

ETH = "mlx5_0"          # small-roce: one dual-port CX-6 Dx card, functions 3b:00.0 (mlx5_0) and .1 (mlx5_1)


def query(sim, dev, *names, **kw):
    args = ["-d", dev] + (["-e"] if kw.get("e") else []) + ["q"] + list(names)
    return sim.out("mlxconfig", *args)


def rows(out):
    """{name: [values]} of a query table."""
    table = {}
    for line in out.splitlines():
        if line[:8].strip() in ("", "*") and len(line) > 52 and line[8:52].strip():
            table[line[8:52].strip()] = line[52:].split()
    return table


def test_query_layout_next_boot(sim):
    sim.init("small-roce")
    out = query(sim, "0000:3b:00.0")
    lines = out.splitlines()
    assert lines[:9] == ["", "Device #1:", "----------", "",
                         "Device type:        ConnectX6DX         ",
                         "Name:               MCX623106AN-CDA_Ax  ",
                         "Description:        ConnectX-6 Dx EN adapter card; 100GbE; Dual-port QSFP56; PCIe 4.0 x16; No Crypto",
                         "Device:             0000:3b:00.0        ", ""]
    assert lines[9] == "Configurations:" + " " * 42 + "Next Boot"
    assert "        LINK_TYPE_P1" + " " * 32 + "ETH(2)" + " " * 14 + "\n" in out
    t = rows(out)
    assert t["ROCE_CC_PRIO_MASK_P1"] == ["255"] and t["ROCE_CC_PRIO_MASK_P2"] == ["255"]
    assert t["CNP_DSCP_P1"] == ["48"] and t["CNP_802P_PRIO_P2"] == ["6"]
    assert t["PCI_WR_ORDERING"] == ["per_mkey(0)"] and t["ADVANCED_PCI_SETTINGS"] == ["False(0)"]
    assert t["MAX_ACC_OUT_READ"] == ["0"] and t["ATS_ENABLED"] == ["False(0)"]
    assert t["SRIOV_EN"] == ["False(0)"] and t["NUM_OF_VFS"] == ["0"]
    assert len(t) > 40
    assert "The '*'" not in out


def test_query_e_layout_and_ports(sim):
    sim.init("dgx-h100-ib")          # single-port CX-7 IB rails, dual-port CX-7 Ethernet mlx5_8/9
    out = query(sim, "mlx5_0", e=True)
    header = [l for l in out.splitlines() if l.startswith("Configurations:")][0]
    assert header.index("Default") == 57 and header.index("Current") == 77 and header.index("Next Boot") == 93
    t = rows(out)
    assert t["LINK_TYPE_P1"] == ["IB(1)"] * 3
    assert "LINK_TYPE_P2" not in t and "ROCE_CC_PRIO_MASK_P2" not in t
    assert "Device type:        ConnectX7" in out
    t8 = rows(query(sim, "mlx5_9"))
    assert t8["LINK_TYPE_P1"] == ["ETH(2)"] and t8["LINK_TYPE_P2"] == ["ETH(2)"]
    # every device without -d
    everything = sim.out("mlxconfig", "q")
    assert everything.count("Device #") == 9 and "Device #9:" in everything
    assert "Device:             /dev/mst/mt4129_pciconf0\n" in everything


def test_set_then_query_next_changed_current_not(sim):
    sim.init("small-roce")
    out = sim.out("mlxconfig", "-d", "3b:00.0", "-y", "set", "ROCE_CC_PRIO_MASK_P1=8", "PCI_WR_ORDERING=1",
                  "CNP_DSCP_P1=26", "ADVANCED_PCI_SETTINGS=True")
    assert "Configurations:" + " " * 42 + "Next Boot       New\n" in out
    assert "        PCI_WR_ORDERING" + " " * 29 + "per_mkey(0)" + " " * 10 + "force_relax(1)" in out
    assert out.endswith("\n Apply new Configuration? (y/n) [n] : y\nApplying... Done!\n"
                        "-I- Please reboot machine to load new configurations.\n")
    e = query(sim, "mlx5_0", "ROCE_CC_PRIO_MASK_P1", "PCI_WR_ORDERING", "CNP_DSCP_P1", "CNP_DSCP_P2", e=True)
    t = rows(e)
    assert t["ROCE_CC_PRIO_MASK_P1"] == ["255", "255", "8"]
    assert t["PCI_WR_ORDERING"] == ["per_mkey(0)", "per_mkey(0)", "force_relax(1)"]
    assert t["CNP_DSCP_P2"] == ["48", "48", "48"]
    assert "*       CNP_DSCP_P1" in e and "        CNP_DSCP_P2" in e
    assert e.endswith("The '*' shows parameters with next value different from default/current value.\n")
    # the other function of the card sees the same NV configuration
    assert rows(query(sim, "mlx5_1", "CNP_DSCP_P1"))["CNP_DSCP_P1"] == ["26"]
    # a boot makes it current; still '*' against the default
    assert sim.cli("reset") == 0
    t = rows(query(sim, "mlx5_0", "ROCE_CC_PRIO_MASK_P1", "ADVANCED_PCI_SETTINGS", e=True))
    assert t["ROCE_CC_PRIO_MASK_P1"] == ["255", "8", "8"]
    assert t["ADVANCED_PCI_SETTINGS"] == ["False(0)", "True(1)", "True(1)"]


def test_nv_survives_run_dir_loss_and_boot(sim):
    import shutil
    sim.init("small-roce")
    sim.out("mlxconfig", "-d", ETH, "-y", "s", "SRIOV_EN=1", "NUM_OF_VFS=8")
    shutil.rmtree(sim.run_dir)          # container restart: /run is gone, /var/lib stays
    t = rows(query(sim, ETH, "SRIOV_EN", "NUM_OF_VFS", e=True))
    assert t["SRIOV_EN"] == ["False(0)", "True(1)", "True(1)"] and t["NUM_OF_VFS"] == ["0", "8", "8"]
    assert sim.cli("boot") == 0
    assert rows(query(sim, ETH, "NUM_OF_VFS", e=True))["NUM_OF_VFS"] == ["0", "8", "8"]
    # init --profile: NV back to defaults
    sim.init("small-roce")
    assert rows(query(sim, ETH, "NUM_OF_VFS", e=True))["NUM_OF_VFS"] == ["0", "0", "0"]


def test_set_without_y_does_not_block(sim):
    sim.init("small-roce")
    out, err, rc = sim.run("mlxconfig", "-d", ETH, "set", "CNP_DSCP_P1=26")
    assert rc == 2 and out.endswith("\n Apply new Configuration? (y/n) [n] : -E- Aborted by user.\n")
    assert rows(query(sim, ETH, "CNP_DSCP_P1"))["CNP_DSCP_P1"] == ["48"]


@pytest.mark.parametrize("item,error", [
    ("CNP_DSCP_P1=64", "-E- The value 64 is not valid,  as its size is 6 bits\n"),
    ("CNP_802P_PRIO_P1=8", "-E- The value 8 is not valid,  as its size is 3 bits\n"),
    ("ROCE_CC_PRIO_MASK_P1=256", "-E- The value 256 is not valid,  as its size is 8 bits\n"),
    ("ROCE_CC_PRIO_MASK_P1=abc", "-E- Cannot parse the value\n"),
    ("LINK_TYPE_P1=VPI", "-E- Unknown value VPI\n"),
    ("LINK_TYPE_P1=3", "-E- Unknown value 3\n"),
    ("PCI_WR_ORDERING=relaxed", "-E- Unknown value relaxed\n"),
    ("SRIOV_EN=2", "-E- Unknown value 2\n"),
    ("NO_SUCH_PARAM=1", "-E- Unknown Parameter: NO_SUCH_PARAM\n"),
])
def test_bad_values_refused_nothing_written(sim, item, error):
    sim.init("small-roce")
    before = query(sim, ETH, e=True)
    out, err, rc = sim.run("mlxconfig", "-d", ETH, "-y", "set", item)
    assert rc == 3 and out.endswith("Configurations:" + " " * 42 + "Next Boot       New\n" + error)
    assert "Applying" not in out
    assert query(sim, ETH, e=True) == before


def test_rule_maximum_and_unknown_query_param(sim):
    sim.init("dgx-h100-ib")
    out, err, rc = sim.run("mlxconfig", "-d", "mlx5_0", "-y", "set", "NUM_OF_VFS=200")
    assert rc == 3 and out.endswith("Applying... Failed!\n-E- Parameter NUM_OF_VFS' value is larger than "
                                    "maximum allowed 127\n")
    out, err, rc = sim.run("mlxconfig", "-d", "mlx5_0", "q", "LINK_TYPE_P2")     # single-port card
    assert rc == 3 and out.endswith("-E- Unknown Parameter: LINK_TYPE_P2\n")
    out, err, rc = sim.run("mlxconfig", "-d", "0000:99:00.0", "q")
    assert (out, rc) == ("-E- Failed to open the device\n", 3)


def test_write_log_counts(sim):
    sim.init("small-roce")
    sim.log()
    from fabricsim import log
    log.clear()
    query(sim, ETH)
    query(sim, ETH, e=True)
    sim.out("flint", "-d", ETH, "q")
    sim.out("mlxfwmanager", "--query")
    assert [r["kind"] for r in sim.log()] == ["read"] * 4
    sim.out("mlxconfig", "-d", ETH, "-y", "set", "CNP_DSCP_P1=26")
    sim.out("mlxconfig", "-d", "mlx5_1", "-y", "s", "CNP_DSCP_P2=26")
    writes = sim.log(writes=True)
    assert len(writes) == 2 and all(r["tool"] == "mlxconfig" and r["rc"] == 0 for r in writes)
    # nv-set: behind Ansible's back, logged distinctly, not a write
    assert sim.cli("nv-set", ETH, "ROCE_CC_PRIO_MASK_P1=0") == 0
    assert len(sim.log(writes=True)) == 2
    assert sim.log()[-1]["kind"] == "nv-set" and sim.log()[-1]["tool"] == "fabricsim"
    t = rows(query(sim, ETH, "ROCE_CC_PRIO_MASK_P1", e=True))
    assert t["ROCE_CC_PRIO_MASK_P1"] == ["255", "255", "0"]
    assert sim.cli("nv-set", ETH, "ROCE_CC_PRIO_MASK_P2=16", "--current") == 0
    assert rows(query(sim, ETH, "ROCE_CC_PRIO_MASK_P2", e=True))["ROCE_CC_PRIO_MASK_P2"] == ["255", "16", "16"]


def test_nv_stuck_keeps_current(sim):
    sim.init("small-roce")
    assert sim.cli("fault", "nv-stuck", ETH, "ROCE_CC_PRIO_MASK_P1") == 0
    sim.out("mlxconfig", "-d", ETH, "-y", "set", "ROCE_CC_PRIO_MASK_P1=8", "CNP_DSCP_P1=26")
    assert sim.cli("reset") == 0
    t = rows(query(sim, ETH, "ROCE_CC_PRIO_MASK_P1", "CNP_DSCP_P1", e=True))
    assert t["ROCE_CC_PRIO_MASK_P1"] == ["255", "255", "8"]      # next boot kept, not current
    assert t["CNP_DSCP_P1"] == ["48", "26", "26"]
    assert sim.cli("boot") == 0
    assert rows(query(sim, ETH, "ROCE_CC_PRIO_MASK_P1", e=True))["ROCE_CC_PRIO_MASK_P1"] == ["255", "255", "8"]
    assert sim.cli("clear") == 0
    assert sim.cli("reset") == 0
    assert rows(query(sim, ETH, "ROCE_CC_PRIO_MASK_P1", e=True))["ROCE_CC_PRIO_MASK_P1"] == ["255", "8", "8"]


def test_nv_refuse(sim):
    sim.init("small-roce")
    assert sim.cli("fault", "nv-refuse", "0000:3b:00.1", "pci_wr_ordering") == 0
    out, err, rc = sim.run("mlxconfig", "-d", ETH, "-y", "set", "CNP_DSCP_P1=26", "PCI_WR_ORDERING=force_relax")
    assert rc == 3 and out.endswith("Applying... Failed!\n-E- Failed to set nv_hca_conf settings Bad parameter\n")
    t = rows(query(sim, ETH, "CNP_DSCP_P1", "PCI_WR_ORDERING"))
    assert t == {"CNP_DSCP_P1": ["48"], "PCI_WR_ORDERING": ["per_mkey(0)"]}
    sim.out("mlxconfig", "-d", ETH, "-y", "set", "CNP_DSCP_P1=26")      # other parameters still work
    assert sim.cli("fault", "nv-refuse", ETH, "NO_SUCH") == 1


def test_fail_after_partial(sim):
    sim.init("small-roce")
    assert sim.cli("fault", "fail-after", "mlxconfig", "1") == 0
    out, err, rc = sim.run("mlxconfig", "-d", ETH, "-y", "set", "ROCE_CC_PRIO_MASK_P1=8", "CNP_DSCP_P1=26")
    assert rc == 3 and out.endswith("Applying... Failed!\n-E- Failed to set nv_roce_cc_ecn settings Device is busy\n")
    t = rows(query(sim, ETH, "ROCE_CC_PRIO_MASK_P1", "CNP_DSCP_P1"))
    assert t == {"ROCE_CC_PRIO_MASK_P1": ["8"], "CNP_DSCP_P1": ["48"]}     # first TLV written, second not
    sim.out("mlxconfig", "-d", ETH, "-y", "set", "CNP_DSCP_P1=26")       # one-shot


def test_flint_query(sim):
    sim.init("dgx-h100-ib")
    out = sim.out("flint", "-d", "0000:18:00.0", "q")
    assert out == ("Image type:            FS4\n"
                   "FW Version:            28.39.1002\n"
                   "FW Release Date:       24.10.2023\n"
                   "Product Version:       28.39.1002\n"
                   "Rom Info:              type=UEFI version=14.32.17 cpu=AMD64,AARCH64\n"
                   "                       type=PXE version=3.7.201 cpu=AMD64\n"
                   "Description:           UID                GuidsNumber\n"
                   "Base GUID:             a088c20300b8a028        16\n"
                   "Base MAC:              a088c2b8a028            16\n"
                   "Image VSD:             N/A\n"
                   "Device VSD:            N/A\n"
                   "PSID:                  MT_0000000838\n"
                   "Security Attributes:   secure-fw\n")
    full = sim.out("flint", "-d", "mlx5_0", "q", "full")
    assert "Part Number:           MCX75310AAS-NEA_Ax\n" in full and "Default Update Method: fw_ctrl\n" in full
    out, err, rc = sim.run("flint", "-d", "mlx5_42", "q")
    assert rc == 1 and err.startswith("-E- Cannot open Device: mlx5_42.")


def test_mlxfwmanager_and_fw_version_fault(sim):
    sim.init("small-roce")
    out = sim.out("mlxfwmanager", "--query")
    assert out == ("Querying Mellanox devices firmware ...\n\n"
                   "Device #1:\n----------\n\n"
                   "  Device Type:      ConnectX6DX\n"
                   "  Part Number:      MCX623106AN-CDA_Ax\n"
                   "  Description:      ConnectX-6 Dx EN adapter card; 100GbE; Dual-port QSFP56; PCIe 4.0 x16; No Crypto\n"
                   "  PSID:             MT_0000000359\n"
                   "  PCI Device Name:  /dev/mst/mt4125_pciconf0\n"
                   "  Base MAC:         0c42a15e7a30\n"
                   "  Versions:         Current        Available     \n"
                   "     FW             22.36.1010     N/A           \n"
                   "     PXE            3.6.0902       N/A           \n"
                   "     UEFI           14.29.0015     N/A           \n\n"
                   "  Status:           No matching image found\n\n")
    assert sim.cli("fault", "fw-version", "mlx5_1", "22.35.1012") == 0
    assert "FW Version:            22.35.1012\n" in sim.out("flint", "-d", ETH, "q")
    assert "     FW             22.35.1012 " in sim.out("mlxfwmanager", "--query", "-d", "3b:00.0")
    assert "firmware-version: 22.35.1012 (MT_0000000359)" in sim.out("ethtool", "-i", "ens1f0np0")
    assert sim.cli("clear") == 0
    assert "FW Version:            22.36.1010\n" in sim.out("flint", "-d", ETH, "q")


def test_ib_profile_mlxfwmanager_guid(sim):
    sim.init("dgx-h100-ib")
    out = sim.out("mlxfwmanager", "--query", "-d", "mlx5_0")
    assert "  PCI Device Name:  mlx5_0\n  Base GUID:        a088c20300b8a028\n" in out
    assert out.count("Device #") == 1


def test_installed_shims(sim, tmp_path):
    from fabricsim import install
    install.install(root=str(tmp_path / "root"), run=sim.run_dir, systemctl=False)
    for tool in ("mlxconfig", "flint", "mlxfwmanager"):
        assert (tmp_path / "root" / "usr/local/sbin" / tool).is_symlink()


def _parser(name):
    try:
        return importlib.import_module("ansible_collections.rdma.fabric.plugins.module_utils.parsers." + name)
    except ImportError:
        return None


def test_query_through_parser(sim):
    mc = _parser("_mlxconfig")
    if mc is None:
        pytest.skip("plugins/module_utils/parsers/_mlxconfig.py not there yet")
    sim.init("small-roce")
    sim.out("mlxconfig", "-d", ETH, "-y", "set", "CNP_DSCP_P1=26")
    text = repr(mc.parse_query(query(sim, ETH, e=True)))
    assert "CNP_DSCP_P1" in text and "26" in text and "ROCE_CC_PRIO_MASK_P2" in text
    text = repr(mc.parse_query(query(sim, ETH)))
    assert "LINK_TYPE_P1" in text and "ETH(2)" in text


def test_set_through_parser(sim):
    mc = _parser("_mlxconfig")
    if mc is None:
        pytest.skip("plugins/module_utils/parsers/_mlxconfig.py not there yet")
    sim.init("small-roce")
    out = sim.out("mlxconfig", "-d", ETH, "-y", "set", "CNP_DSCP_P2=26")
    try:
        parsed = mc.parse_set(out)
    except ValueError as exc:
        if "Apply new Configuration" in str(exc):
            # the parser reads the prompt line after the table's blank line as a row (the
            # public sample in canonical/maas-commissioning-scripts#2 has that blank line too)
            pytest.xfail("_mlxconfig.parse_set: %s" % exc)
        raise
    assert parsed["applied"] is True and parsed["reboot_needed"] is True


def test_firmware_through_parser(sim):
    fw = _parser("_mlxfw")
    if fw is None:
        pytest.skip("plugins/module_utils/parsers/_mlxfw.py not there yet")
    sim.init("small-roce")
    assert "22.36.1010" in repr(fw.parse_flint_query(sim.out("flint", "-d", ETH, "q")))
    assert "22.36.1010" in repr(fw.parse_flint_query(sim.out("flint", "-d", ETH, "q", "full")))
    assert "MT_0000000359" in repr(fw.parse_mlxfwmanager_query(sim.out("mlxfwmanager", "--query")))
