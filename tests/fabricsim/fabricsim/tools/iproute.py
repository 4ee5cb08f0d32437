"""ip (iproute2), reads only: ``ip -j addr show [dev IF]`` of the profile's Ethernet netdevs.

Without ``init --links`` the RoCE netdevs are no kernel links: this renders them as iproute2
prints them (ip/ipaddress.c print_linkinfo/print_addrinfo, JSON): lo, then each netdev with its
profile IPv4 (``ipv4``) and the addresses of ``fault addr-no-gid`` (which get no GID: the
GID table does not follow them). Not a shim (containers keep the real ip); the unit tests and
``fabricsim ip ...`` call it. With links on, the kernel's ip answers: this refuses.
"""
import ipaddress
import json

FOREVER = 4294967295


def is_write(tool, args):
    return False


def _addr(iface, label, secondary=False):
    entry = {"family": "inet" if iface.version == 4 else "inet6", "local": str(iface.ip),
             "prefixlen": iface.network.prefixlen}
    if iface.version == 4 and iface.network.prefixlen < 31:
        entry["broadcast"] = str(iface.network.broadcast_address)
    entry["scope"] = "host" if iface.ip.is_loopback else "global"
    if secondary:
        entry["secondary"] = True
    if iface.version == 4:
        entry["label"] = label
    entry.update(valid_life_time=FOREVER, preferred_life_time=FOREVER)
    return entry


def links(profile):
    out = [{"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536, "qdisc": "noqueue",
            "operstate": "UNKNOWN", "group": "default", "txqlen": 1000, "link_type": "loopback",
            "address": "00:00:00:00:00:00", "broadcast": "00:00:00:00:00:00",
            "addr_info": [_addr(ipaddress.ip_interface("127.0.0.1/8"), "lo")]}]
    extra = profile.faults.get("addr_no_gid") or {}
    for nic in profile.nics:
        for port in nic["ports"]:
            if port["link_layer"] != "Ethernet" or not port.get("netdev"):
                continue
            name = port["netdev"]
            addrs = [ipaddress.ip_interface(port["ipv4"])] if port.get("ipv4") else []
            info = [_addr(a, name) for a in addrs]
            for text in extra.get(name, []):
                iface = ipaddress.ip_interface(text)
                info.append(_addr(iface, name, secondary=any(iface.ip in a.network for a in addrs)))
            down = bool(port.get("down"))
            out.append({"ifindex": len(out) + 1, "ifname": name,
                        "flags": ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"] if down
                        else ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"],
                        "mtu": port.get("mtu", 1500), "qdisc": "mq", "operstate": "DOWN" if down else "UP",
                        "group": "default", "txqlen": 1000, "link_type": "ether",
                        "address": port.get("mac", "00:00:00:00:00:00"), "broadcast": "ff:ff:ff:ff:ff:ff",
                        "addr_info": info})
    return out


def run(tool, args, ctx):
    if ctx.profile.live is not None:
        return "", "fabricsim ip: links are on (init --links): the kernel's ip answers\n", 1
    words = [a for a in args if a not in ("-j", "-json", "--json")]
    json_out = len(words) < len(args)
    if not words or words[0] not in ("a", "addr", "address"):
        return "", "fabricsim ip: only 'ip -j addr show [dev IF]' is simulated\n", 1
    words = words[1:]
    if words and words[0] in ("show", "list", "ls"):
        words = words[1:]
    dev = None
    if len(words) == 2 and words[0] == "dev":
        dev = words[1]
    elif len(words) == 1:
        dev = words[0]
    elif words:
        return "", "fabricsim ip: only 'ip -j addr show [dev IF]' is simulated\n", 1
    if not json_out:
        return "", "fabricsim ip: only the JSON output (-j) is simulated\n", 1
    found = links(ctx.profile)
    if dev is not None:
        found = [link for link in found if link["ifname"] == dev]
        if not found:
            return "", 'Device "%s" does not exist.\n' % dev, 1
    return json.dumps(found, separators=(",", ":")) + "\n", "", 0
