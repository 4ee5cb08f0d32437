"""mlnx_qos shim vs the real captured outputs (tests/unit/fixtures/samples/mlnx_qos.txt)."""
import re

import pytest

import samples

MQ = samples.load("mlnx_qos.txt")
IF = "enp24s0np0"          # hgx-h100-roce rail 0


def raw_output(sample_id):
    """The sample's tool output: without the '$ cmd' line and the [rc=N] annotation."""
    lines = MQ[sample_id].raw.splitlines(True)
    lines = [l for l in lines if not re.match(r"^\$ ?(\./)?mlnx_qos|^\$ echo|^\[rc=\d+\]", l)]
    return "".join(lines)


def sample_rc(sample_id):
    m = re.search(r"^\[rc=(\d+)\]", MQ[sample_id].raw, re.M)
    return int(m.group(1)) if m else 0


def set_variant(sim, variant):
    sim.edit_profile(lambda d: d.__setitem__("mlnx_qos_variant", variant), reset=False)


def set_q(sim, **values):
    def fn(nic):
        nic["qos"][IF].update(values)
    sim.edit(fn)


ASCENDING_DEFAULT = [[5, d >> 3, d] for d in range(64)]


def test_mock_a_default_byte_exact(sim):
    """MQ-MOCK-A-DEFAULT: FW DCBX, pcp, vendor TSA, mlx5 default prio_tc, buffers ok."""
    sim.init("hgx-h100-roce")
    set_q(sim, dcbx="fw", buffer_size=[0, 262016, 0, 0, 0, 0, 0, 0], tot_size=262016)
    out, err, rc = sim.run("mlnx_qos", "-i", IF)
    assert (out, err, rc) == (raw_output("MQ-MOCK-A-DEFAULT"), "", 0)


def test_mock_b_roce_byte_exact(sim):
    """MQ-MOCK-B-ROCE: OS DCBX, dscp trust with an ascending map, PFC 3, ETS 50/50, tc6 strict, tc0 25 Gbps."""
    sim.init("hgx-h100-roce")
    set_q(sim, dcbx="os", apps=ASCENDING_DEFAULT, pfc_en=8, buffer_size=[130944, 130944, 0, 0, 0, 0, 0, 0],
          tot_size=262016, prio2buffer=[0, 0, 0, 1, 0, 0, 0, 0], prio_tc=[0, 0, 0, 3, 0, 0, 6, 0],
          tsa=["ets", "vendor", "vendor", "ets", "vendor", "vendor", "strict", "vendor"],
          tcbw=[50, 0, 0, 50, 0, 0, 0, 0], maxrate=[25000000, 0, 0, 0, 0, 0, 0, 0])
    out, err, rc = sim.run("mlnx_qos", "-i", IF)
    assert out.splitlines(True) == raw_output("MQ-MOCK-B-ROCE").splitlines(True)
    assert rc == 0


def test_mock_d_norate_byte_exact(sim):
    """MQ-MOCK-D-NORATE-VENDOR: rate limit unsupported -> bare TSA lines, bare-comma buffer line."""
    sim.init("hgx-h100-roce")
    set_variant(sim, "norate")
    set_q(sim, dcbx="os", pfc_en=8, buffer_size=[32768, 229120, 0, 0, 0, 0, 0, 0],
          prio2buffer=[0, 1, 1, 1, 1, 1, 0, 0])
    out, err, rc = sim.run("mlnx_qos", "-i", IF)
    assert out.splitlines(True) == raw_output("MQ-MOCK-D-NORATE-VENDOR").splitlines(True)


def test_real_commit_2023_whitespace_normalised(sim):
    """MQ-REAL-COMMIT-B8C08C5: pasted in a commit message, tabs turned into spaces and trailing
    spaces stripped by the author -> compare after normalising whitespace only."""
    sim.init("hgx-h100-roce")
    set_variant(sim, "2023")
    set_q(sim, dcbx="os", buffer_size=[0, 187200, 0, 0, 0, 0, 0, 0], tot_size=2044224)
    out = sim.out("mlnx_qos", "-i", "enp24s0np0")

    def norm(text):
        return [" ".join(line.split()) for line in text.splitlines()]
    assert norm(out) == norm(raw_output("MQ-REAL-COMMIT-B8C08C5"))
    assert "default priority:" in out and "\tenabled     0   0   0   0   0   0   0   0   \n" in out


def test_doc_community_values_whitespace_normalised(sim):
    """MQ-DOC-COMMUNITY-2792 (HTML scrape: whitespace collapsed, blank lines added): values only.
    That 2017 build had no buffer support and no default-priority line."""
    sim.init("hgx-h100-roce")
    set_variant(sim, {"base": "head", "buffers": False})
    desc = [[5, d >> 3, d] for d in range(64)][::-1]
    set_q(sim, dcbx="os", apps=desc, delay=10, pfc_en=0b11000101,
          tsa=["ets"] * 6 + ["strict", "ets"], tcbw=[10] * 6 + [0, 40])
    out = sim.out("mlnx_qos", "-i", IF)

    def norm(text):
        return [" ".join(line.split()) for line in text.splitlines()
                if line.strip() and not line.strip().startswith("#")]
    assert norm(out) == norm(raw_output("MQ-DOC-COMMUNITY-2792"))


@pytest.mark.parametrize("sample_id,args,lldpad", [
    ("MQ-LOCAL-NODCB", ["-i", "vethA"], False),
    ("MQ-LOCAL-NOSUCHDEV", ["-i", "nosuchdev0"], False),
    ("MQ-REAL-ERR-VLAN", ["-i", "vlan401"], False),
    ("MQ-LOCAL-LLDPAD-WARN", ["-i", "vethA"], True),
    ("MQ-LOCAL-NOIF", [], False),
    ("MQ-LOCAL-BADARGS", ["-i", "vethA", "extra"], False),
    ("MQ-LOCAL-ARG-_trust_foo", ["-i", "vethA", "--trust", "foo"], True),
    ("MQ-LOCAL-ARG-_pfc_0_0_0_1", ["-i", "vethA", "--pfc", "0,0,0,1"], True),
    ("MQ-LOCAL-ARG-_pfc_0_0_0_1_0_0_0_0_0", ["-i", "vethA", "--pfc", "0,0,0,1,0,0,0,0,0"], True),
    ("MQ-LOCAL-ARG-_pfc_0_0_0_2_0_0_0_0", ["-i", "vethA", "--pfc", "0,0,0,2,0,0,0,0"], True),
    ("MQ-LOCAL-ARG-_d_bogus", ["-i", "vethA", "-d", "bogus"], True),
    ("MQ-LOCAL-ARG-_dscp2prio_set_70_1", ["-i", "vethA", "--dscp2prio", "set,70,1"], True),
    ("MQ-LOCAL-ARG-_dscp2prio_set_26_3_trust_dscp", ["-i", "vethA", "--dscp2prio", "set,26,3", "--trust", "dscp"], True),
    ("MQ-LOCAL-ARG-_version", ["-i", "vethA", "--version"], True),
    ("MQ-LOCAL-HELP", ["--help"], False),
    ("MQ-LOCAL-NOLLDPAD-_cable_len_70000", ["-i", "vethA", "--cable_len", "70000"], False),
    ("MQ-LOCAL-NOLLDPAD-_trust_dscp", ["-i", "vethA", "--trust", "dscp"], False),
    ("MQ-LOCAL-NOLLDPAD-_prio2buffer_0_0_0_1_0_0_0_0", ["-i", "vethA", "--prio2buffer", "0,0,0,1,0,0,0,0"], False),
])
def test_error_paths_match_real_runs(sim, sample_id, args, lldpad):
    sim.init("hgx-h100-roce")
    sim.cli("lldpad", "start" if lldpad else "stop")
    out, err, rc = sim.run("mlnx_qos", *args)
    expected = raw_output(sample_id)
    if sample_id == "MQ-REAL-ERR-VLAN":
        expected = "".join(expected.splitlines(True)[:4])   # drop the pasted echo of rc
    assert out == expected
    assert rc == (1 if sample_id == "MQ-REAL-ERR-VLAN" else sample_rc(sample_id))


@pytest.mark.parametrize("sample_id,args", [
    ("MQ-LOCAL-NOLLDPAD-_pfc_0_0_0_1_0_0_0_0", ["-i", "vethA", "--pfc", "0,0,0,1,0,0,0,0"]),
    ("MQ-LOCAL-NOLLDPAD-_P_3", ["-i", "vethA", "-P", "3"]),
    ("MQ-LOCAL-NOLLDPAD-_dscp2prio_bogus", ["-i", "vethA", "--dscp2prio", "bogus"]),
])
def test_head_tracebacks_on_stderr(sim, sample_id, args):
    """Same traceback shape as the real HEAD crash (file paths differ: /usr/sbin vs /opt/mlnx-tools)."""
    sim.init("hgx-h100-roce")
    out, err, rc = sim.run("mlnx_qos", *args)

    def strip(text):
        return [re.sub(r'File "[^"]*/', 'File "', line) for line in text.splitlines()]
    assert (out, rc) == ("", 1)
    assert strip(err) == strip(raw_output(sample_id))


def test_get_pfc(sim):
    sim.init("hgx-h100-roce")
    assert sim.out("mlnx_qos", "-i", IF, "-P", "3") == "0\n"
    sim.out("mlnx_qos", "-i", IF, "--pfc", "0,0,0,1,0,0,0,0")
    assert sim.out("mlnx_qos", "-i", IF, "-P", "3") == raw_output("MQ-RECON-GETPFC")
    out, dummy, rc = sim.run("mlnx_qos", "-i", IF, "-P", "9")
    assert (out, rc) == ("pfc index must be in range of 0-7\n", 1)


def test_specific_pfc_silent_and_keeps_others(sim):
    sim.init("hgx-h100-roce")
    sim.out("mlnx_qos", "-i", IF, "--pfc", "1,0,0,0,0,0,0,0")
    assert sim.out("mlnx_qos", "-i", IF, "-F", "x,x,x,1,x,x,x,x") == ""
    assert sim.qos(IF)["pfc_en"] == 0b1001


# ---- every set option changes the next report --------------------------------
def report_after(sim, *args):
    sim.out("mlnx_qos", "-i", IF, *args)
    return sim.out("mlnx_qos", "-i", IF)


def test_set_trust_dscp_then_pcp(sim):
    sim.init("hgx-h100-roce")
    out = report_after(sim, "--trust", "dscp")
    assert "Priority trust state: dscp\ndscp2prio mapping:\n\tprio:0 dscp:07,06,05,04,03,02,01,00,\n" in out
    assert "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n" in out
    out = report_after(sim, "--trust", "pcp")
    assert "Priority trust state: pcp\n" in out and "dscp2prio" not in out


def test_set_trust_prints_report_after_set(sim):
    sim.init("hgx-h100-roce")
    out = sim.out("mlnx_qos", "-i", IF, "--trust", "dscp")
    assert out.startswith("DCBX mode: OS controlled\nPriority trust state: dscp\n")
    assert out == sim.out("mlnx_qos", "-i", IF)


def test_dscp2prio_set_repeats_and_order(sim):
    sim.init("hgx-h100-roce")
    sim.out("mlnx_qos", "-i", IF, "--trust", "dscp")
    out = report_after(sim, "--dscp2prio", "set,26,5", "--dscp2prio", "set,48,6", "--dscp2prio", "set,10,3")
    # re-added apps go to the head of the kernel list: printed first in their priority
    assert "\tprio:3 dscp:10,31,30,29,28,27,25,24,\n" in out
    assert "\tprio:5 dscp:26,47,46,45,44,43,42,41,\n\tprio:5 dscp:40,\n" in out   # wraps every 8
    assert "\tprio:1 dscp:15,14,13,12,11,09,08,\n" in out


def test_dscp2prio_on_pcp_port_switches_trust_with_one_entry(sim):
    sim.init("hgx-h100-roce")
    out = report_after(sim, "--dscp2prio", "set,26,3")
    assert "Priority trust state: dscp\ndscp2prio mapping:\n\tprio:3 dscp:26,\n" in out


def test_dscp2prio_del_last_flips_trust_to_pcp(sim):
    sim.init("hgx-h100-roce")
    sim.out("mlnx_qos", "-i", IF, "--dscp2prio", "set,26,3", "--dscp2prio", "set,48,6")
    out = report_after(sim, "--dscp2prio", "del,26,3")
    assert "Priority trust state: dscp\ndscp2prio mapping:\n\tprio:6 dscp:48,\n" in out
    out = report_after(sim, "--dscp2prio", "del,48,6")
    assert "Priority trust state: pcp\n" in out


def test_dscp2prio_flush_flips_trust(sim):
    sim.init("hgx-h100-roce")
    sim.out("mlnx_qos", "-i", IF, "--trust", "dscp")
    assert "Priority trust state: pcp\n" in report_after(sim, "--dscp2prio", "flush")


def test_dscp2prio_del_wrong_prio_fails_midway(sim):
    sim.init("hgx-h100-roce")
    out, dummy, rc = sim.run("mlnx_qos", "-i", IF, "--dscp2prio", "set,26,3", "--dscp2prio", "del,26,4")
    assert (out, rc) == ("dscp2prio command failed\n", 1)
    assert "\tprio:3 dscp:26,\n" in sim.out("mlnx_qos", "-i", IF)    # first op stayed applied


def test_set_pfc_and_cable_len(sim):
    sim.init("hgx-h100-roce")
    out = report_after(sim, "--pfc", "0,0,0,1,0,0,0,0")
    assert "\tenabled     0   0   0   1   0   0   0   0   \n" in out and "Cable len: 7\n" in out
    out = report_after(sim, "--cable_len", "30")
    assert "Cable len: 30\n" in out and "\tenabled     0   0   0   1   0   0   0   0   \n" in out


def test_set_ets_options(sim):
    sim.init("hgx-h100-roce")
    out = report_after(sim, "--prio_tc", "0,0,0,3,0,0,6,0")
    assert out.endswith("tc: 0 ratelimit: unlimited, tsa: vendor\n\t priority:  0\n\t priority:  1\n"
                        "\t priority:  2\n\t priority:  4\n\t priority:  5\n\t priority:  7\n"
                        "tc: 3 ratelimit: unlimited, tsa: vendor\n\t priority:  3\n"
                        "tc: 6 ratelimit: unlimited, tsa: vendor\n\t priority:  6\n")
    out = report_after(sim, "--tsa", "ets,vendor,vendor,ets,vendor,vendor,strict,vendor",
                       "--tcbw", "50,0,0,50,0,0,0,0")
    assert "tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%\n" in out and "tc: 6 ratelimit: unlimited, tsa: strict\n" in out
    out = report_after(sim, "--tcbw", "40,0,0,60,0,0,0,0")
    assert "tc: 3 ratelimit: unlimited, tsa: ets, bw: 60%\n" in out


def test_ets_bw_sum_refused_by_kernel(sim):
    sim.init("hgx-h100-roce")
    out, dummy, rc = sim.run("mlnx_qos", "-i", IF, "--tsa", "ets,ets,ets,ets,ets,ets,ets,ets",
                             "--tcbw", "10,10,10,10,10,10,10,10")
    assert (out, rc) == ("Netlink error: Invalid argument (22)\n", 1)
    out, dummy, rc = sim.run("mlnx_qos", "-i", IF, "--tcbw", "50,0,0,50,0,0,0,0")
    assert out.startswith("ETS BW for a strict/vendor TC must be 0\nUsage: mlnx_qos") and rc == 1


def test_set_buffers_and_ratelimit_and_dcbx(sim):
    sim.init("hgx-h100-roce")
    out = report_after(sim, "--buffer_size", "524288,523136,0,0,0,0,0,0", "--prio2buffer", "0,0,0,1,0,0,0,0")
    assert "Receive buffer size (bytes): 524288,523136,0,0,0,0,0,0,max_buffer_size=1047424\n" in out
    assert "\tbuffer      0   0   0   1   0   0   0   0   \n" in out
    out = report_after(sim, "-r", "0,25,0,0,0,0,0,0")
    assert "tc: 1 ratelimit: 25.0 Gbps, tsa: vendor\n" in out
    assert report_after(sim, "--dcbx", "fw").startswith("DCBX mode: Firmware controlled\n")
    assert report_after(sim, "-d", "os").startswith("DCBX mode: OS controlled\n")


def test_old_variant_small_roce(sim):
    """small-roce prints the pre-2022-05 layout: lldpad warning, default priority, bare comma, tc 1 first."""
    sim.init("small-roce")
    out = sim.out("mlnx_qos", "-i", "ens1f0np0")
    lines = out.splitlines()
    assert lines[:5] == ["****** WARNING: lldpad service is running and may overwrite your settings ******", "",
                         "DCBX mode: OS controlled", "Priority trust state: pcp", "default priority:"]
    assert lines[5] == "Receive buffer size (bytes): 0,262016,0,0,0,0,0,0,"
    assert lines[11:13] == ["tc: 1 ratelimit: unlimited, tsa: vendor", "\t priority:  0"]
    out = report_after_if(sim, "ens1f0np0", "--defltprio", "set,3")
    assert "default priority:\n\tprio:3\n" in out


def report_after_if(sim, netdev, *args):
    sim.out("mlnx_qos", "-i", netdev, *args)
    return sim.out("mlnx_qos", "-i", netdev)


def test_old_variant_dscp2prio_errors_are_messages(sim):
    sim.init("small-roce")
    out, dummy, rc = sim.run("mlnx_qos", "-i", "ens1f0np0", "--dscp2prio", "set,70,1")
    assert out.endswith("Invalid dscp2prio command. Refer to the help.\n") and rc == 1


def test_ib_netdev_has_no_dcb(sim):
    sim.init("dgx-h100-ib")
    out, dummy, rc = sim.run("mlnx_qos", "-i", "ibp24s0")
    assert (out, rc) == (raw_output("MQ-LOCAL-NODCB"), 1)


def test_volatile_reset_returns_firmware_defaults(sim):
    sim.init("hgx-h100-roce")
    before = sim.out("mlnx_qos", "-i", IF)
    sim.out("mlnx_qos", "-i", IF, "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0")
    assert sim.out("mlnx_qos", "-i", IF) != before
    assert sim.cli("reset") == 0
    assert sim.out("mlnx_qos", "-i", IF) == before


def test_run_dir_missing_is_rebuilt_from_profile(sim):
    import shutil
    sim.init("hgx-h100-roce")
    sim.out("mlnx_qos", "-i", IF, "--trust", "dscp")
    shutil.rmtree(sim.run_dir)             # container restart: /run is a fresh tmpfs
    assert "Priority trust state: pcp\n" in sim.out("mlnx_qos", "-i", IF)
