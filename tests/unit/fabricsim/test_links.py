"""Rail links (fabricsim init --links): dummy links in the kernel, GIDs that follow their
addresses. The kernel is a fake `ip` here (links.run_ip is the only I/O seam)."""
import ipaddress
import json

import pytest

IF0, IF1 = "enp24s0np0", "enp64s0np0"
MAPPED = "0000:0000:0000:0000:0000:ffff:%s"


class FakeIp(object):
    """Enough of `ip` for links.py: -j addr show, link add/set, addr add/del; logs the calls."""

    def __init__(self, net_admin=True, dummy=True):
        self.links = {"lo": {"up": True, "addrs": ["127.0.0.1/8"]}}
        self.dummy = dummy
        self.calls = []
        self.net_admin = net_admin

    def __call__(self, args):
        args = list(args)
        self.calls.append(args)
        if args[:3] == ["-j", "addr", "show"]:
            out = []
            for name, link in self.links.items():
                infos = []
                for addr in link["addrs"]:
                    iface = ipaddress.ip_interface(addr)
                    infos.append({"family": "inet" if iface.version == 4 else "inet6", "local": str(iface.ip),
                                  "prefixlen": iface.network.prefixlen,
                                  "scope": "link" if iface.ip.is_link_local else "global"})
                out.append({"ifname": name, "flags": ["BROADCAST", "UP"] if link["up"] else ["BROADCAST"],
                            "addr_info": infos})
            return 0, json.dumps(out), ""
        if not self.net_admin:
            return 2, "", "RTNETLINK answers: Operation not permitted\n"
        if args[:2] == ["link", "add"]:
            if args[4] == "dummy" and not self.dummy:
                return 2, "", "Error: Unknown device type.\n"
            self.links[args[2]] = {"up": False, "addrs": []}
            if args[4] == "veth":
                self.links[args[-1]] = {"up": False, "addrs": []}
        elif args[:3] == ["link", "set", "dev"]:
            if args[-1] == "up":
                self.links[args[3]]["up"] = True
        elif args[:2] == ["addr", "add"]:
            self.links[args[-1]]["addrs"].append(args[2])
        elif args[:2] == ["addr", "del"]:
            self.links[args[-1]]["addrs"].remove(args[2])
        else:
            raise AssertionError("unexpected ip call %r" % args)
        return 0, "", ""

    def add(self, name, addr):
        self.links[name]["addrs"].append(addr)

    def remove(self, name, addr):
        self.links[name]["addrs"].remove(addr)


@pytest.fixture
def fake_ip(monkeypatch):
    from fabricsim import links
    fake = FakeIp()
    monkeypatch.setattr(links, "run_ip", fake)
    return fake


def init_links(sim):
    assert sim.cli("init", "--profile", "hgx-h100-roce", "--links") == 0


def gid_file(sim, dev, index):
    return sim.sysfs("class/infiniband/%s/ports/1/gids/%d" % (dev, index)).strip()


def test_init_links_creates_every_roce_netdev_with_the_profile_ipv4(sim, fake_ip):
    init_links(sim)
    from fabricsim import state
    netdevs = state.load_profile().roce_netdevs()
    assert sorted(n for n in fake_ip.links if n != "lo") == sorted(netdevs)
    assert not any(c[:2] == ["link", "add"] and "veth" in c for c in fake_ip.calls)
    assert fake_ip.links[IF0] == {"up": True, "addrs": ["10.10.0.11/24"]}
    mac = [c for c in fake_ip.calls if c[:4] == ["link", "set", "dev", IF0] and "address" in c][0]
    assert mac[5].startswith("a0:88:c2:b8:") and mac[-1] == "4200"
    # GIDs as before: the profile's address is the kernel's
    assert gid_file(sim, "mlx5_0", 3) == MAPPED % "0a0a:000b"


def test_init_links_falls_back_to_veth_without_the_dummy_driver(sim, monkeypatch):
    from fabricsim import links
    fake = FakeIp(dummy=False)
    monkeypatch.setattr(links, "run_ip", fake)
    init_links(sim)
    assert ["link", "add", IF0, "type", "veth", "peer", "name", "fsp0"] in fake.calls
    assert fake.links[IF0] == {"up": True, "addrs": ["10.10.0.11/24"]} and fake.links["fsp0"]["up"]
    assert gid_file(sim, "mlx5_0", 3) == MAPPED % "0a0a:000b"


def test_init_links_without_net_admin_fails_and_leaves_links_off(sim, monkeypatch, capsys):
    from fabricsim import links
    monkeypatch.setattr(links, "run_ip", FakeIp(net_admin=False))
    assert sim.cli("init", "--profile", "hgx-h100-roce", "--links") == 1
    assert "CAP_NET_ADMIN" in capsys.readouterr().err
    assert not links.enabled()


def test_without_links_gids_come_from_the_profile_and_ip_is_not_called(sim, monkeypatch):
    from fabricsim import links

    def boom(args):
        raise AssertionError("ip called without --links")
    monkeypatch.setattr(links, "run_ip", boom)
    sim.init("hgx-h100-roce")
    assert gid_file(sim, "mlx5_0", 3) == MAPPED % "0a0a:000b"
    assert "10.10.0.11" in sim.out("show_gids", "mlx5_0")


def test_gids_follow_added_and_removed_addresses_keeping_indexes(sim, fake_ip):
    init_links(sim)
    fake_ip.add(IF0, "10.20.0.1/31")
    fake_ip.add(IF0, "fd00:10::5/127")
    out = sim.out("show_gids", "mlx5_0")     # a shim call syncs the table
    assert "\t0000:0000:0000:0000:0000:ffff:0a14:0001\t10.20.0.1  \tv2\t%s\n" % IF0 in out
    assert gid_file(sim, "mlx5_0", 5) == MAPPED % "0a14:0001"
    assert gid_file(sim, "mlx5_0", 7) == "fd00:0010:0000:0000:0000:0000:0000:0005"
    assert sim.sysfs("class/infiniband/mlx5_0/ports/1/gid_attrs/types/7") == "RoCE v2\n"
    # the first address goes: its indexes free, the others keep theirs
    fake_ip.remove(IF0, "10.10.0.11/24")
    sim.out("show_gids", "mlx5_0")
    assert gid_file(sim, "mlx5_0", 3) == "0000:0000:0000:0000:0000:0000:0000:0000"
    assert not __import__("os").path.exists(sim.sys + "/class/infiniband/mlx5_0/ports/1/gid_attrs/types/3")
    assert gid_file(sim, "mlx5_0", 5) == MAPPED % "0a14:0001"
    # a new one takes the lowest free pair
    fake_ip.add(IF0, "10.30.0.1/31")
    sim.out("ibv_devinfo", "-v", "-d", "mlx5_0")
    assert gid_file(sim, "mlx5_0", 3) == MAPPED % "0a1e:0001"
    assert "GID[  3]:\t\t::ffff:10.30.0.1, RoCE v2" in sim.out("ibv_devinfo", "-v", "-d", "mlx5_0")
    # other NICs untouched
    assert gid_file(sim, "mlx5_1", 3) == MAPPED % "0a0a:010b"


def test_sync_writes_nothing_when_converged(sim, fake_ip):
    init_links(sim)
    from fabricsim import links, state
    profile = state.load_profile()
    assert links.sync_sysfs(profile) == 0
    fake_ip.add(IF1, "10.20.1.1/31")
    assert links.sync_sysfs(state.load_profile()) == 6      # gids/4, gids/5, their types and ndevs
    assert links.sync_sysfs(state.load_profile()) == 0


def test_seed_dropped_once_removed_and_not_restored_at_boot(sim, fake_ip):
    init_links(sim)
    from fabricsim import links
    fake_ip.remove(IF0, "10.10.0.11/24")
    fake_ip.add(IF0, "10.20.0.1/31")
    sim.out("show_gids")
    assert links.config()["seed"][IF0] == []
    assert links.config()["seed"][IF1] == ["10.10.1.11/24"]
    # a reboot: a new network namespace without the links
    fake_ip.links = {"lo": {"up": True, "addrs": []}}
    assert sim.cli("boot") == 0
    assert fake_ip.links[IF0]["addrs"] == []
    assert fake_ip.links[IF1]["addrs"] == ["10.10.1.11/24"]


def test_assign_lowest_free_pair_and_table_limit():
    from fabricsim import links
    addrs = ["10.0.0.%d/31" % i for i in range(9)]
    table = links.assign({}, addrs)
    assert sorted(table.values()) == [2, 4, 6, 8, 10, 12, 14]      # 16 GIDs rendered: 7 pairs after 0/1
    assert links.assign({"b": 4}, ["a", "b"]) == {"b": 4, "a": 2}


def test_link_addresses_skips_link_local_and_rejects_garbage():
    from fabricsim import links
    text = json.dumps([{"ifname": "x", "flags": ["UP"], "addr_info": [
        {"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link"},
        {"family": "inet", "local": "10.0.0.1", "prefixlen": 31, "scope": "global"}]}])
    assert links.link_addresses(text) == {"x": {"up": True, "addrs": [ipaddress.ip_interface("10.0.0.1/31")]}}
    with pytest.raises(links.LinkError):
        links.link_addresses("not json")


def test_follow_syncs_after_events():
    from fabricsim import links
    import socket
    a, b = socket.socketpair()
    calls = []
    stops = iter([False, False, True])
    b.send(b"event")
    links.follow(lambda: calls.append(1), sock=a, stop=lambda: next(stops))
    assert len(calls) == 2          # once at start, once after the event


def test_cable_moves_the_lldp_neighbour(sim):
    sim.init("small-roce")
    out = sim.out("lldptool", "-t", "-n", "-i", "ens1f0np0")
    assert "Port ID TLV\n\tIfname: swp1\n" in out and "System Name TLV\n\tleaf01\n" in out
    assert sim.cli("cable", "ens1f0np0", "rail1-leaf0", "swp7") == 0
    out = sim.out("lldptool", "-t", "-n", "-i", "ens1f0np0")
    assert "Port ID TLV\n\tIfname: swp7\n" in out and "System Name TLV\n\trail1-leaf0\n" in out
    assert sim.cli("cable", "nosuch", "a", "b") == 1
    assert sim.cli("cable", "--clear") == 0
    assert "Ifname: swp1\n" in sim.out("lldptool", "-t", "-n", "-i", "ens1f0np0")
