"""lldptool shim vs tests/unit/fixtures/samples/lldptool.txt."""
import re

import samples

LL = samples.load("lldptool.txt")
IF = "enp24s0np0"


def blocks(sample_id):
    """[(argv, expected stdout)] from a sample holding one or more '$ lldptool ...' runs."""
    out, cur = [], None
    for line in LL[sample_id].raw.splitlines(True):
        if line.startswith("$ lldptool"):
            cur = [line[2:].split()[1:], ""]
            out.append(cur)
        elif line.startswith("#####") or re.match(r"^\[rc=\d+\]", line):
            continue
        elif cur is not None:
            cur[1] += line
    return [(a, t.rstrip("\n") + "\n" if t.strip() else "") for a, t in out]


def raw(sample_id):
    return "".join(l for l in LL[sample_id].raw.splitlines(True) if not re.match(r"^\[rc=\d+\]", l))


def lldp(sim, *args):
    return sim.run("lldptool", *args)


def on(sim, profile="hgx-h100-roce"):
    sim.init(profile)
    sim.cli("lldpad", "start")
    return sim


def test_admin_status_get_set_get(sim):
    on(sim)
    for sample_id in ("LLDP-GET-ADMIN-1", "LLDP-SET-ADMIN-1", "LLDP-GET-ADMIN-2", "LLDP-GET-ADMIN-NCB"):
        (argv, expected), = blocks(sample_id)
        argv = [IF if a == "vethA" else a for a in argv]
        assert lldp(sim, *argv) == (expected, "", 0), sample_id
    assert lldp(sim, "-l", "-i", IF, "adminStatus")[0] == "adminStatus=rxtx\n"


def test_shortopt_get(sim):
    on(sim)
    (argv, expected), = blocks("LLDP-GET-ADMIN-SHORTOPT")
    assert lldp(sim, *[IF if a == "vethA" else a for a in argv]) == (expected, "", 0)


def test_errors(sim):
    on(sim)
    assert lldp(sim, "-t", "-i", "nosuchdev", "-V", "PFC") == (raw("ERR-NODEV-TLV").split("\n", 1)[1], "", 1)
    assert lldp(sim, "get-lldp", "-i", "nosuchdev", "adminStatus") == ("Device not found or inactive \n", "", 1)
    out, err, rc = lldp(sim, "-t", "-i", IF, "-V", "PFC", "-c", "bogus")
    assert (out, rc) == ("Command not applicable b\n", 1)
    assert lldp(sim, "-t", "-i", IF, "-V", "IEEE-DCBX", "-c", "mode") == ("mode=auto\n", "", 0)


def test_not_capable_on_ipoib(sim):
    on(sim, "dgx-h100-ib")
    assert lldp(sim, "-T", "-i", "ibp24s0", "-V", "PFC", "willing=no", "enabled=3") == ("Device not capable b\n", "", 1)
    assert lldp(sim, "-T", "-i", "ibp24s0", "-V", "ETS-CFG", "willing=no") == ("Device not capable 9\n", "", 1)
    assert lldp(sim, "-t", "-i", "ibp24s0", "-V", "PFC") == ("", "", 0)     # PFC-TLV-EMPTY


def test_lldpad_not_running(sim):
    sim.init("hgx-h100-roce")
    out, err, rc = lldp(sim, "-t", "-i", IF, "-V", "PFC", "-c", "enabled")
    assert (out + err, rc) == (raw("ERR-LLDPAD-NOT-RUNNING").split("\n", 1)[1], 255)


def test_version(sim):
    sim.init("hgx-h100-roce")
    assert lldp(sim, "-v")[0] == raw("VERSION").split("\n", 1)[1]


def test_pfc_mask8_args(sim):
    on(sim)
    assert lldp(sim, "-T", "-i", IF, "-V", "PFC", "willing=no", "enabled=3", "enableTx=yes")[2] == 0
    for argv, expected in blocks("PFC-C-MASK8"):
        if "-r" in argv:
            continue
        argv = [IF if a == "vethA" else a for a in argv]
        assert lldp(sim, *argv) == (expected, "", 0), argv


def test_pfc_mask255_truncated(sim):
    on(sim)
    lldp(sim, "-T", "-i", IF, "-V", "PFC", "willing=no", "enabled=0,1,2,3,4,5,6,7", "enableTx=yes")
    for argv, expected in blocks("PFC-C-MASK255"):
        if "-r" in argv:
            continue
        argv = [IF if a == "vethA" else a for a in argv]
        assert lldp(sim, *argv) == (expected, "", 0), argv


def test_set_pfc_echo_and_tlv_view(sim):
    on(sim)
    assert lldp(sim, "-T", "-i", IF, "-V", "PFC", "willing=no", "enabled=3") == (raw("RECON-SET-PFC-OK"), "", 0)
    assert lldp(sim, "-t", "-i", IF, "-V", "PFC") == ("", "", 0)          # not transmitted yet
    lldp(sim, "-T", "-i", IF, "-V", "PFC", "enableTx=yes")
    assert lldp(sim, "-t", "-i", IF, "-V", "PFC")[0] == raw("RECON-PFC-TLV")
    lldp(sim, "-T", "-i", IF, "-V", "PFC", "enabled=none")
    assert "\t PFC enabled: none\n" in lldp(sim, "-t", "-i", IF, "-V", "PFC")[0]


def test_set_ets_cfg_and_tlv_view(sim):
    on(sim)
    out, dummy, rc = lldp(sim, "-T", "-i", IF, "-V", "ETS-CFG", "willing=no", "enableTx=yes",
                          "up2tc=0:0,1:0,2:0,3:3,4:0,5:0,6:6,7:0", "tcbw=50,0,0,50,0,0,0,0",
                          "tsa=0:ets,1:strict,2:strict,3:ets,4:strict,5:strict,6:strict,7:strict")
    assert rc == 0 and "tcbw = 50% 0% 0% 50% 0% 0% 0% 0% \n" in out
    assert lldp(sim, "-t", "-i", IF, "-V", "ETS-CFG")[0] == raw("RECON-ETSCFG-TLV")


def test_os_mode_pushes_to_nic_fw_mode_does_not(sim):
    on(sim)                                                   # hgx: OS DCBX
    lldp(sim, "-T", "-i", IF, "-V", "PFC", "enabled=3")
    assert "\tenabled     0   0   0   1   0   0   0   0   \n" in sim.out("mlnx_qos", "-i", IF)
    lldp(sim, "-T", "-i", IF, "-V", "ETS-CFG", "tsa=0:ets,1:strict,2:strict,3:ets,4:strict,5:strict,6:strict,7:strict",
         "tcbw=50,0,0,50,0,0,0,0")
    assert "tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%\n" in sim.out("mlnx_qos", "-i", IF)
    sim.out("mlnx_qos", "-i", "enp64s0np0", "-d", "fw")
    lldp(sim, "-T", "-i", "enp64s0np0", "-V", "PFC", "enabled=3")
    assert "\tenabled     0   0   0   0   0   0   0   0   \n" in sim.out("mlnx_qos", "-i", "enp64s0np0")
    assert lldp(sim, "-t", "-i", "enp64s0np0", "-V", "PFC", "-c", "enabled")[0] == "enabled=8\n"   # stored


def test_app_tlv_and_dscp_app_flips_trust(sim):
    on(sim)
    lldp(sim, "-T", "-i", IF, "-V", "APP", "app=3,3,4791", "enableTx=yes")
    out = lldp(sim, "-t", "-i", IF, "-V", "APP")[0]
    assert out == "IEEE 8021QAZ APP TLV\n\tApp#   0 \t Prio 3 \t Sel 3 \t P-ID\t UDP or DCCP Port: 4791\n"
    lldp(sim, "-T", "-i", IF, "-V", "APP", "app=3,5,26")
    assert "\tPrio:3 \t dscp:  26,\b \n" in lldp(sim, "-t", "-i", IF, "-V", "APP")[0]    # RECON-APP-TLV-DSCP
    assert "Priority trust state: dscp\ndscp2prio mapping:\n\tprio:3 dscp:26,\n" in sim.out("mlnx_qos", "-i", IF)
    lldp(sim, "-T", "-d", "-i", IF, "-V", "APP", "app=3,5,26")
    assert "Priority trust state: pcp\n" in sim.out("mlnx_qos", "-i", IF)


def test_neighbour_switch(sim):
    on(sim)
    out = lldp(sim, "-t", "-n", "-i", IF, "-V", "PFC")[0]
    assert out.endswith("\t PFC enabled: 3 \n")
    out = lldp(sim, "-t", "-n", "-i", IF, "-V", "APP")[0]
    assert "P-ID\t UDP or DCCP Port: 4791\n" in out
    full = lldp(sim, "-t", "-n", "-i", IF)[0]
    assert full.startswith("Chassis ID TLV\n\tMAC: ") and full.endswith("End of LLDPDU TLV\n")


def test_writes_logged(sim):
    on(sim)
    lldp(sim, "-t", "-i", IF, "-V", "PFC")
    lldp(sim, "-T", "-i", IF, "-V", "PFC", "enabled=3")
    lldp(sim, "set-lldp", "-i", IF, "adminStatus=rxtx")
    assert [r["kind"] for r in sim.log() if r["tool"] == "lldptool"] == ["read", "write", "write"]
