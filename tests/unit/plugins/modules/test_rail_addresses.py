# -*- coding: utf-8 -*-
"""rdma.fabric.rail_addresses main() against a fake kernel: `ip -j` answers in iproute2 6.1's
layout (captured on Debian bookworm: ip -j addr/rule/route, "FIB table does not exist" for an
empty table) and a tmp /proc/sys."""
from __future__ import absolute_import, division, print_function

import ipaddress
import json

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _rail_addresses as R
from ansible_collections.rdma.fabric.plugins.modules import rail_addresses
from ansible_collections.rdma.fabric.tests.unit import helpers

IF0, IF1 = "enp24s0np0", "enp64s0np0"


class Kernel(object):
    """The links, addresses, rules and routes `ip` sees; logs every mutating call."""

    def __init__(self, proc, links=(IF0, IF1)):
        self.proc = proc
        self.links = dict((name, {"up": False, "addrs": []}) for name in links)
        self.rules = {4: [{"priority": 0, "src": "all", "table": "local"},
                          {"priority": 32766, "src": "all", "table": "main"},
                          {"priority": 32767, "src": "all", "table": "default"}],
                      6: [{"priority": 0, "src": "all", "table": "local"},
                          {"priority": 32766, "src": "all", "table": "main"}]}
        self.routes = {}
        self.writes = []
        for name in links:
            for key, value in (("arp_ignore", 0), ("arp_announce", 0), ("rp_filter", 1)):
                path = proc / "net/ipv4/conf" / name
                path.mkdir(parents=True, exist_ok=True)
                (path / key).write_text("%d\n" % value)

    def __call__(self, argv, **kwargs):
        assert argv[0] == "/sbin/ip", argv
        args = list(argv[1:])
        if args[:1] == ["-j"]:
            return self.show(args[1:])
        self.writes.append(" ".join(args))
        family = 4
        if args[0] in ("-4", "-6"):
            family = int(args[0][1])
            args = args[1:]
        if args[:3] == ["link", "set", "dev"]:
            self.links[args[3]]["up"] = args[4] == "up"
        elif args[:2] == ["addr", "add"]:
            self.links[args[4]]["addrs"].append(args[2])
        elif args[:2] == ["addr", "del"]:
            self.links[args[4]]["addrs"].remove(args[2])
            ip = args[2].split("/")[0]
            for key in list(self.routes):   # the kernel drops routes that use the address as source
                self.routes[key] = [r for r in self.routes[key] if r.get("prefsrc") != ip]
        elif args[0] == "route":
            opts = dict(zip(args[3::2], args[4::2]))
            key = (family, int(opts["table"]))
            route = {"dst": args[2], "dev": opts.get("dev")}
            if "via" in opts:
                route["gateway"] = opts["via"]
            if "src" in opts:
                route["prefsrc"] = opts["src"]
            if args[1] == "add":
                self.routes.setdefault(key, []).append(route)
            else:
                self.routes[key] = [r for r in self.routes[key] if not (r["dst"] == route["dst"])]
        elif args[0] == "rule":
            opts = dict(zip(args[2::2], args[3::2]))
            rule = {"priority": int(opts["priority"]), "src": opts["from"], "table": opts["table"]}
            if args[1] == "add":
                self.rules[family].append(rule)
            else:
                self.rules[family].remove(rule)
        else:
            raise AssertionError("unexpected ip call %r" % argv)
        return 0, "", ""

    def show(self, args):
        if args[:3] == ["addr", "show", "dev"]:
            name = args[3]
            if name not in self.links:
                return 1, "", 'Device "%s" does not exist.\n' % name
            link = self.links[name]
            infos = []
            for addr in link["addrs"]:
                iface = ipaddress.ip_interface(addr)
                infos.append({"family": "inet" if iface.version == 4 else "inet6", "local": str(iface.ip),
                              "prefixlen": iface.network.prefixlen, "scope": "global"})
            infos.append({"family": "inet6", "local": "fe80::a288:c2ff:feb8:a028", "prefixlen": 64, "scope": "link"})
            flags = ["BROADCAST", "MULTICAST"] + (["UP", "LOWER_UP"] if link["up"] else [])
            return 0, json.dumps([{"ifindex": 4, "ifname": name, "flags": flags, "addr_info": infos}]), ""
        family = int(args[0][1])
        if args[1:] == ["rule", "show"]:
            return 0, json.dumps(sorted(self.rules[family], key=lambda r: r["priority"])), ""
        if args[1:3] == ["route", "show"]:
            key = (family, int(args[4]))
            if key not in self.routes:
                return 2, "[", "Error: ipv%d: FIB table does not exist.\nDump terminated\n" % family
            return 0, json.dumps(self.routes[key]), ""
        raise AssertionError("unexpected ip -j call %r" % args)


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    monkeypatch.setattr(R.RailAddressesResource, "proc_sys", str(tmp_path))
    return Kernel(tmp_path)


def run(monkeypatch, kernel, args, check_mode=False, diff=False):
    return helpers.run_module(monkeypatch, rail_addresses.main, args, check_mode=check_mode, diff=diff,
                              run_command=kernel, bin_dir="/sbin/")


def rail(interface, address, table, **extra):
    entry = {"interface": interface, "addresses": [address], "arp_ignore": 1, "arp_announce": 2,
             "rp_filter": 2, "table": table}
    entry.update(extra)
    return entry


CONFIG = [rail(IF0, "10.10.0.1/31", 101, gateways=["10.10.0.0"]), rail(IF1, "10.10.1.1/31", 102)]


def test_merged_from_scratch_then_converged_zero_writes(monkeypatch, kernel):
    kind, result = run(monkeypatch, kernel, {"config": CONFIG})
    assert kind == "exit" and result["changed"], result
    assert result["commands"][:6] == [
        "ip link set dev %s up" % IF0,
        "%s/net/ipv4/conf/%s/arp_announce=2" % (kernel.proc, IF0),
        "%s/net/ipv4/conf/%s/arp_ignore=1" % (kernel.proc, IF0),
        "%s/net/ipv4/conf/%s/rp_filter=2" % (kernel.proc, IF0),
        "ip addr add 10.10.0.1/31 dev %s" % IF0,
        "ip -4 route add 10.10.0.0/31 dev %s src 10.10.0.1 table 101" % IF0,
    ]
    assert "ip -4 route add default via 10.10.0.0 dev %s table 101" % IF0 in result["commands"]
    assert "ip -4 rule add priority 1102 from 10.10.1.1 table 102" in result["commands"]
    after = dict((entry["interface"], entry) for entry in result["after"])
    assert after[IF0]["addresses"] == ["10.10.0.1/31"] and after[IF0]["link_up"] is True
    assert after[IF0]["sysctls"] == {"arp_ignore": 1, "arp_announce": 2, "rp_filter": 2}
    assert after[IF0]["rules"] == [{"priority": 1101, "from": "10.10.0.1", "table": 101}]
    assert after[IF0]["routes"] == [
        {"dst": "10.10.0.0/31", "gateway": None, "src": "10.10.0.1", "dev": IF0},
        {"dst": "default", "gateway": "10.10.0.0", "src": None, "dev": IF0}]
    assert (kernel.proc / "net/ipv4/conf" / IF1 / "rp_filter").read_text() == "2\n"
    writes = len(kernel.writes)
    kind, again = run(monkeypatch, kernel, {"config": CONFIG})
    assert kind == "exit" and not again["changed"] and again["commands"] == []
    assert len(kernel.writes) == writes


def test_check_mode_predicts_what_the_real_run_reads_back(monkeypatch, kernel):
    kind, checked = run(monkeypatch, kernel, {"config": CONFIG}, check_mode=True, diff=True)
    assert kind == "exit" and checked["changed"] and kernel.writes == []
    assert len(checked["diff"]) == 2 and checked["diff"][0]["before_header"] == "rail_addresses %s (before)" % IF0
    kind, real = run(monkeypatch, kernel, {"config": CONFIG})
    assert real["after"] == checked["after"] and real["commands"] == checked["commands"]


def test_ipv6_added_with_nodad_and_its_own_rule(monkeypatch, kernel):
    kind, result = run(monkeypatch, kernel, {"config": [
        {"interface": IF0, "addresses": ["fd00:10::1/127", "10.10.0.1/31"], "table": 101}]})
    assert "ip addr add fd00:10::1/127 dev %s nodad" % IF0 in result["commands"]
    assert "ip -6 rule add priority 1101 from fd00:10::1 table 101" in result["commands"]
    assert "ip -6 route add fd00:10::/127 dev %s src fd00:10::1 table 101" % IF0 in result["commands"]
    kind, again = run(monkeypatch, kernel, {"config": [
        {"interface": IF0, "addresses": ["10.10.0.1/31", "fd00:10::1/127"], "table": 101}]})
    assert again["commands"] == [], again


def test_hand_removed_address_comes_back_with_its_route(monkeypatch, kernel):
    run(monkeypatch, kernel, {"config": CONFIG})
    kernel(["/sbin/ip", "addr", "del", "10.10.1.1/31", "dev", IF1])
    kind, result = run(monkeypatch, kernel, {"config": CONFIG})
    assert result["changed"] and result["commands"] == [
        "ip addr add 10.10.1.1/31 dev %s" % IF1,
        "ip -4 route add 10.10.1.0/31 dev %s src 10.10.1.1 table 102" % IF1]


def test_replaced_removes_other_addresses_routes_and_rules(monkeypatch, kernel):
    kernel.links[IF0]["addrs"].append("10.10.0.11/24")     # the old fixed address
    run(monkeypatch, kernel, {"config": [rail(IF0, "10.99.0.1/31", 101)]})
    kind, merged = run(monkeypatch, kernel, {"config": [rail(IF0, "10.10.0.1/31", 101)]})
    assert "ip addr del" not in " ".join(merged["commands"])
    kind, result = run(monkeypatch, kernel, {"state": "replaced", "config": [rail(IF0, "10.10.0.1/31", 101)]})
    assert "ip addr del 10.10.0.11/24 dev %s" % IF0 in result["commands"]
    assert "ip addr del 10.99.0.1/31 dev %s" % IF0 in result["commands"]
    assert "ip -4 rule del priority 1101 from 10.99.0.1 table 101" in result["commands"]
    after = result["after"][0]
    assert after["addresses"] == ["10.10.0.1/31"]
    assert after["rules"] == [{"priority": 1101, "from": "10.10.0.1", "table": 101}]
    assert after["routes"] == [{"dst": "10.10.0.0/31", "gateway": None, "src": "10.10.0.1", "dev": IF0}]
    kind, again = run(monkeypatch, kernel, {"state": "replaced", "config": [rail(IF0, "10.10.0.1/31", 101)]})
    assert again["commands"] == []


def test_gathered_and_rendered(monkeypatch, kernel):
    run(monkeypatch, kernel, {"config": CONFIG})
    kind, result = run(monkeypatch, kernel, {"state": "gathered", "config": [{"interface": IF1, "table": 102}]})
    assert result["gathered"][0]["addresses"] == ["10.10.1.1/31"]
    assert result["gathered"][0]["rules"] == [{"priority": 1102, "from": "10.10.1.1", "table": 102}]
    writes = len(kernel.writes)
    kind, result = run(monkeypatch, kernel, {"state": "rendered", "config": CONFIG})
    assert "ip addr add 10.10.1.1/31 dev %s" % IF1 in result["rendered"] and len(kernel.writes) == writes


@pytest.mark.parametrize("entry, words", [
    ({"interface": IF0, "addresses": ["10.10.0.1"]}, "config[0].addresses[0]='10.10.0.1': expected ADDRESS/PREFIX"),
    ({"interface": IF0, "addresses": ["10.10.0.300/24"]}, "config[0].addresses[0]='10.10.0.300/24': not an ADDRESS"),
    ({"interface": IF0, "addresses": ["10.10.0.0/24"]}, "network or broadcast address"),
    ({"interface": IF0, "addresses": ["10.0.0.1/31", "10.0.0.1/24"]}, "address 10.0.0.1 is given twice"),
    ({"interface": IF0, "table": 254}, "config[0].table=254: table 254 is the kernel's main table"),
    ({"interface": IF0, "arp_ignore": 9}, "config[0].arp_ignore=9: arp_ignore must be 0-8"),
    ({"interface": IF0, "rp_filter": 3}, "config[0].rp_filter=3: rp_filter must be 0-2"),
    ({"interface": IF0, "addresses": ["10.0.0.1/31"], "gateways": ["10.0.0.0"]}, "needs table"),
    ({"interface": IF0, "addresses": ["10.0.0.1/31"], "table": 5, "gateways": ["10.0.1.0"]},
     "config[0].gateways[0]='10.0.1.0': not in the subnet"),
    ({"interface": "bad/name"}, "config[0].interface='bad/name'"),
])
def test_bad_input_names_field_and_value_and_runs_nothing(monkeypatch, kernel, entry, words):
    kind, result = run(monkeypatch, kernel, {"config": [entry]})
    assert kind == "fail" and words in result["msg"], result["msg"]
    assert kernel.writes == []


def test_cross_interface_rules(monkeypatch, kernel):
    kind, result = run(monkeypatch, kernel, {"config": [rail(IF0, "10.0.0.1/31", 101), rail(IF1, "10.0.1.1/31", 101)]})
    assert kind == "fail" and "table 101 is given to %s and %s" % (IF0, IF1) in result["msg"]
    kind, result = run(monkeypatch, kernel, {"config": [rail(IF0, "10.0.0.1/31", 101), rail(IF1, "10.0.0.1/24", 102)]})
    assert kind == "fail" and "address 10.0.0.1 is given to" in result["msg"]


def test_missing_interface_is_named(monkeypatch, kernel):
    kind, result = run(monkeypatch, kernel, {"config": [rail("ens9np0", "10.0.0.1/31", 101)]})
    assert kind == "fail" and result["msg"].startswith("interface=ens9np0: ip -j addr show dev ens9np0 failed")
    assert 'Device "ens9np0" does not exist' in result["msg"] and kernel.writes == []


def test_unreadable_ip_output_is_an_error(monkeypatch, kernel):
    def broken(argv, **kwargs):
        return 0, "garbage", ""
    kind, result = helpers.run_module(monkeypatch, rail_addresses.main, {"config": CONFIG}, run_command=broken,
                                      bin_dir="/sbin/")
    assert kind == "fail" and "printed no JSON" in result["msg"]


CAPTURED = "\n".join([
    json.dumps([{"ifname": IF0, "flags": ["BROADCAST", "UP"], "addr_info": [
        {"family": "inet", "local": "10.10.0.1", "prefixlen": 31, "scope": "global"},
        {"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link"}]}]),
    json.dumps([{"priority": 0, "src": "all", "table": "local"}, {"priority": 1101, "src": "10.10.0.1", "table": "101"}]),
    "[]",
    json.dumps([{"dst": "10.10.0.0/31", "dev": IF0, "scope": "link", "prefsrc": "10.10.0.1", "flags": []}]),
    "/proc/sys/net/ipv4/conf/%s/arp_ignore:1" % IF0,
    "/proc/sys/net/ipv4/conf/%s/arp_announce:2" % IF0,
    "/proc/sys/net/ipv4/conf/%s/rp_filter:2" % IF0,
])


def test_parsed(monkeypatch, kernel):
    kind, result = run(monkeypatch, kernel, {"state": "parsed", "running_config": CAPTURED})
    assert kind == "exit", result
    assert result["parsed"] == {
        "interface": IF0, "link_up": True, "addresses": ["10.10.0.1/31"],
        "sysctls": {"arp_ignore": 1, "arp_announce": 2, "rp_filter": 2},
        "rules": [{"priority": 1101, "from": "10.10.0.1", "table": 101}],
        "routes": [{"dst": "10.10.0.0/31", "gateway": None, "src": "10.10.0.1", "dev": IF0}]}


@pytest.mark.parametrize("text, words", [
    ("hello", "running_config line 1: 'hello' is neither"),
    ("[{\"priority\": 1}]", "holds no ip -j addr show output"),
    ("[not json", "running_config line 1: '[not json' is not JSON"),
])
def test_parsed_refuses_what_it_cannot_read(monkeypatch, kernel, text, words):
    kind, result = run(monkeypatch, kernel, {"state": "parsed", "running_config": text})
    assert kind == "fail" and words in result["msg"], result["msg"]


def test_documentation_matches_argument_spec():
    helpers.assert_doc_matches_argspec(rail_addresses)
