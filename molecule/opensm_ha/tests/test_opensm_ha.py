"""Live OpenSM HA state after converge, read inside the SM containers through umad2sim.

opensm-sm1 (Hca1) must be the MASTER with priority 14, opensm-sm2 (Hca3) the STANDBY with
priority 13 (master priority minus rank 1), both with the shared sm_key.
"""
import re

import pytest
from molecule_hosts import hosts_of

testinfra_hosts = hosts_of("opensm")

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
IBSIM_SERVER = "opensm-fabric"
EXPECTED = {
    "opensm-sm1": {"node": "Hca1", "guid": "0x0000000000100001", "priority": 14,
                   "state": "SMINFO_MASTER"},
    "opensm-sm2": {"node": "Hca3", "guid": "0x0000000000100007", "priority": 13,
                   "state": "SMINFO_STANDBY"},
}
# sminfo.c: "sminfo: sm lid %d sm guid 0x%" PRIx64 ", activity count %u priority %d state %d %s"
SMINFO = re.compile(r"sm lid (\d+) sm guid (0x[0-9a-f]+), activity count (\d+) "
                    r"priority (\d+) state (\d+) (\S+)")


def name(host):
    return host.backend.get_hostname()


def sim(host, command):
    """Run an infiniband-diags command attached at this container's ibsim node."""
    env = "LD_PRELOAD=%s SIM_HOST=%s IBSIM_SERVER_NAME=%s" % (
        UMAD2SIM, EXPECTED[name(host)]["node"], IBSIM_SERVER)
    return host.check_output("env %s timeout 10 %s" % (env, command))


def sminfo(host, lid=None):
    out = sim(host, "sminfo" + ("" if lid is None else " %d" % lid))
    match = SMINFO.search(out)
    assert match, out
    return {"lid": int(match.group(1)), "guid": int(match.group(2), 16),
            "priority": int(match.group(4)), "state": match.group(6)}


def own_lid(host):
    out = sim(host, "ibstat")
    return int(re.search(r"Base lid:\s*(\d+)", out).group(1))


def test_this_sm_answers_with_its_role_priority_and_guid(host):
    want = EXPECTED[name(host)]
    got = sminfo(host, own_lid(host))
    assert got["guid"] == int(want["guid"], 16), got
    assert got["priority"] == want["priority"], got
    assert got["state"] == want["state"], got


def test_the_fabric_master_is_sm1(host):
    got = sminfo(host)
    assert got["guid"] == int(EXPECTED["opensm-sm1"]["guid"], 16), got
    assert got["state"] == "SMINFO_MASTER", got
    assert got["priority"] == 14, got


def test_the_sa_lists_one_master_and_one_standby(host):
    # saquery -s: PortInfo records of the ports with the IsSM capability, then the
    # IsSMdisabled ones; ask every IsSM port for its SMInfo.
    out = sim(host, "saquery -s").split("IsSMdisabled")[0]
    lids = sorted(int(lid) for lid in re.findall(r"^\s*base_lid\.+(\d+)", out, re.M))
    assert len(lids) == 2, out
    states = sorted(sminfo(host, lid)["state"] for lid in lids)
    assert states == ["SMINFO_MASTER", "SMINFO_STANDBY"], (lids, states)


def test_opensm_conf(host):
    want = EXPECTED[name(host)]
    conf = host.file("/etc/opensm/opensm.conf")
    assert conf.mode == 0o600
    options = dict(line.split(None, 1) for line in conf.content_string.splitlines()
                   if line.strip() and not line.startswith("#"))
    assert options["guid"] == want["guid"]
    assert options["sm_priority"] == str(want["priority"])
    assert int(options["sm_key"], 16) == 0xC0FFEE01
    assert options["sminfo_polling_timeout"] == "1000"
    assert options["polling_retry_number"] == "3"
    assert options["honor_guid2lid_file"] == "TRUE"
    assert host.file("/etc/default/opensm").contains('PORTS="%s"' % want["guid"])


@pytest.mark.parametrize("unit", ["opensm.service"])
def test_service_enabled_and_running(host, unit):
    want = EXPECTED[name(host)]
    assert host.service(unit).is_enabled
    instance = host.service("opensm@%s.service" % want["guid"])
    assert instance.is_running
    assert host.process.filter(comm="opensm")


def test_opensm_runs_with_the_umad2sim_timeout_shim(host):
    # Simulation only: the MAD timeouts umad2sim lacks (tests/ibsim/umad2sim_timeouts.c,
    # docs/opensm.md "The stuck handback on ibsim"). The shim must come before umad2sim.
    pid = host.process.get(comm="opensm").pid
    maps = host.file("/proc/%d/maps" % pid).content_string
    assert "umad2sim_timeouts.so" in maps
    assert "libumad2sim.so" in maps
    environ = host.file("/proc/%d/environ" % pid).content_string
    preload = [v for v in environ.split("\0") if v.startswith("LD_PRELOAD=")]
    assert preload and preload[0].index("umad2sim_timeouts.so") < preload[0].index("libumad2sim.so"), preload
