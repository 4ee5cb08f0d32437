"""fabricsim lldptool: the older APP layout and a CEE neighbour, read back by the module's parser."""
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _lldptool as L

IF = "enp24s0np0"


def lldp(sim, *args):
    out, err, rc = sim.run("lldptool", *args)
    assert rc == 0, (out, err)
    return out


def on(sim, **profile):
    sim.init("hgx-h100-roce")
    sim.cli("lldpad", "start")
    if profile:
        sim.edit_profile(lambda data: data.update(profile), reset=False)
    return sim


def _apps(sim):
    lldp(sim, "-T", "-i", IF, "-V", "APP", "app=3,3,4791", "enableTx=yes")
    lldp(sim, "-T", "-i", IF, "-V", "APP", "app=3,5,26")
    lldp(sim, "-T", "-i", IF, "-V", "APP", "app=4,1,35078")


def test_old_app_layout_matches_printing_code(sim):
    # openlldp lldp_8021qaz_clif.c ieee8021qaz_print_app_tlv() @706d0ee (RECON-OLD-APP-ALL-SELECTORS)
    on(sim, lldpad_app_layout="old")
    _apps(sim)
    out = lldp(sim, "-t", "-i", IF, "-V", "APP")
    assert out == ("IEEE 8021QAZ APP TLV\n\tApp#0:\n\t Priority: 3\n\t Sel: 3\n\t UDP or DCCP Port: 4791\n\n"
                   "\tApp#1:\n\t Priority: 3\n\t Sel: 5\n\t Reserved Port: 26\n\n"
                   "\tApp#2:\n\t Priority: 4\n\t Sel: 1\n\t Ethertype: 0x8906\n\n")
    want = [{"priority": 4, "selector": 1, "protocol": 0x8906}, {"priority": 3, "selector": 3, "protocol": 4791},
            {"priority": 3, "selector": 5, "protocol": 26}]
    assert L.parse_tlvs(out)["app"] == want
    assert L.parse_tlvs(lldp(sim, "-t", "-i", IF))["app"] == want


def test_new_layout_indexes_and_labels_as_printed(sim):
    # @218a515: the index counts DSCP entries, DSCP printed last as ' %02i,' + backspace
    on(sim)
    _apps(sim)
    out = lldp(sim, "-t", "-i", IF, "-V", "APP")
    assert out == ("IEEE 8021QAZ APP TLV\n\tApp#   0 \t Prio 3 \t Sel 3 \t P-ID\t UDP or DCCP Port: 4791\n"
                   "\tApp#   2 \t Prio 4 \t Sel 1 \t P-ID\t Ethertype: 0x8906\n\tPrio:3 \t dscp:  26,\b \n")
    assert len(L.parse_tlvs(out)["app"]) == 3


def test_cee_neighbour(sim):
    # lldp_dcbx_clif.c print_dcbx_v2() layout (RECON-CEE-ROCE-NEIGHBOR)
    on(sim)
    sim.edit_profile(lambda data: data["lldp_neighbour"].update(dcbx="cee"), reset=False)
    full = lldp(sim, "-t", "-n", "-i", IF)
    assert "CEE DCBX TLV\n\tControl TLV:\n" in full and "IEEE 8021QAZ" not in full
    assert "\t  TCP/UDP Port: 0x12b7, Priority Map: 0x08\n" in full
    assert lldp(sim, "-t", "-n", "-i", IF, "-V", "PFC") == ""          # no IEEE PFC TLV from a CEE switch
    tlvs = L.parse_tlvs(full)
    assert tlvs["dcbx"] == "cee"
    assert tlvs["pfc"] == {"enabled": [3], "willing": False, "feature_enabled": True, "error": False}
    assert tlvs["app"] == [{"priority": 3, "selector": 4, "protocol": 4791}]
    assert tlvs["ets_cfg"]["up2tc"] == [0, 0, 0, 3, 0, 0, 6, 0]


def test_c_app_lists_entries_even_when_the_tlv_is_not_sent(sim):
    # get_arg_app() @00b3c78f: 'app=(prio,sel,proto)' then 'i:(p,s,proto) local hw (set)'
    on(sim)
    _apps(sim)
    lldp(sim, "-T", "-i", IF, "-V", "APP", "enableTx=no")
    assert lldp(sim, "-t", "-i", IF, "-V", "APP") == ""                  # not transmitted: -t shows nothing
    out = lldp(sim, "-t", "-i", IF, "-V", "APP", "-c", "app")
    assert out == ("app=(prio,sel,proto)\n0:(3,3,4791) local hw (set)\n1:(3,5,26) local hw (set)\n"
                   "2:(4,1,0x8906) local hw (set)\n\n")
    assert L.parse_app_config(out)["local"] == [
        {"priority": 4, "selector": 1, "protocol": 0x8906}, {"priority": 3, "selector": 3, "protocol": 4791},
        {"priority": 3, "selector": 5, "protocol": 26}]
