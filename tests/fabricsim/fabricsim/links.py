"""Rail NICs as real kernel interfaces (opt-in: `fabricsim init --profile NAME --links`).

Each RoCE netdev of the profile becomes a dummy link of the same name, MAC and MTU in the
node's network namespace (the container needs CAP_NET_ADMIN; where the host kernel has no dummy
module, a veth whose peer ``fspN`` stays in the namespace, up), so addresses, routes, rules
and per-interface sysctls set on it are real kernel state. The simulated GID table of the
port then follows the addresses the link actually has, as the kernel's RoCE GID cache does:

- index 0/1: the default GID (link-local of the MAC, RoCE v1 / v2), always there;
- each IPv4 address (IPv4-mapped, ``::ffff:a.b.c.d``) and each global IPv6 address takes
  the lowest free pair of indexes (v1 at the even one, v2 at the odd one) when it appears
  and frees it when it goes; an address keeps its indexes while it stays (slots in
  run_dir/gid_slots.json).

At init the profile's fixed IPv4 (``ipv4`` of the port) is put on the link (the "seed"
addresses, kept in state_dir/links.json), and put back at boot while it is still there
when fabricsim last looked: an operator who removes or replaces it owns the interface.

The only I/O seam is ``run_ip(args)`` (the `ip` tool); tests replace it.
Without ``--links`` nothing here runs and GIDs come from the profile's fixed IPv4.
"""
import ipaddress
import json
import os
import shutil
import subprocess

from . import paths

MAX_GIDS = 16          # the rendered GID table (sysfs.GID_TABLE)


class LinkError(Exception):
    pass


def _ip_binary():
    for cand in (shutil.which("ip"), "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"):
        if cand and os.path.exists(cand):
            return cand
    raise LinkError("fabricsim: the ip tool (iproute2) is missing; rail links need it")


def run_ip(args):
    """Run `ip ARGS`; (rc, stdout, stderr)."""
    proc = subprocess.run([_ip_binary()] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=dict(os.environ, LANG="C", LC_ALL="C"), check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _ip(args):
    rc, out, err = run_ip(args)
    if rc != 0:
        raise LinkError("fabricsim: ip %s failed (rc=%d): %s" % (" ".join(args), rc, (err or out).strip()))
    return out


# --- persistent config ------------------------------------------------------
def _read(path, default):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return default


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp.%d" % os.getpid()
    with open(tmp, "w") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
    os.rename(tmp, path)


def config():
    """{"enabled": bool, "seed": {netdev: [ADDR/PREFIX...]}}."""
    return _read(paths.state_file("links.json"), {"enabled": False, "seed": {}})


def save_config(data):
    _write(paths.state_file("links.json"), data)


def enabled():
    return bool(config().get("enabled"))


def disable():
    save_config({"enabled": False, "seed": {}})


# --- kernel state -------------------------------------------------------------
def link_addresses(text):
    """`ip -j addr show` output -> {ifname: {"up": bool, "addrs": [IPvXInterface...]}} (kernel order).
    Link-local IPv6 addresses are left out (the default GID covers them)."""
    try:
        data = json.loads(text or "[]")
    except ValueError:
        raise LinkError("fabricsim: cannot read `ip -j addr` output: %r" % (text[:200],))
    out = {}
    for link in data:
        addrs = []
        for info in link.get("addr_info", []):
            if info.get("family") not in ("inet", "inet6"):
                continue
            iface = ipaddress.ip_interface("%s/%s" % (info["local"], info["prefixlen"]))
            if iface.version == 6 and (iface.ip.is_link_local or info.get("scope") == "link"):
                continue
            addrs.append(iface)
        out[link["ifname"]] = {"up": "UP" in link.get("flags", []), "addrs": addrs}
    return out


def kernel_links():
    return link_addresses(_ip(["-j", "addr", "show"]))


def _add_link(name, peer):
    """A dummy link; where the kernel has no dummy driver (a container cannot load it), one end
    of a veth pair whose other end (``peer``, the "switch port") is up, so the carrier is on."""
    rc, out, err = run_ip(["link", "add", name, "type", "dummy"])
    if rc == 0:
        return
    if "Unknown device type" not in (err + out):
        raise LinkError("fabricsim: ip link add %s type dummy failed (rc=%d): %s" % (name, rc, (err or out).strip()))
    _ip(["link", "add", name, "type", "veth", "peer", "name", peer])
    _ip(["link", "set", "dev", peer, "up"])


def create(profile, seed=True):
    """Create the dummy links of every RoCE netdev (missing ones only); put the seed addresses
    on. With ``seed`` (init) the seed is the profile's IPv4; at boot it is what links.json keeps."""
    cfg = config()
    seeds = cfg.get("seed", {}) if not seed else {}
    have = kernel_links()
    for nic in profile.nics:
        for port in nic["ports"]:
            if port["link_layer"] != "Ethernet":
                continue
            name = port["netdev"]
            if name not in have:
                _add_link(name, "fsp%d" % profile.roce_netdevs().index(name))
                _ip(["link", "set", "dev", name, "address", port["mac"], "mtu", str(port.get("mtu", 1500))])
            if not port.get("down"):
                _ip(["link", "set", "dev", name, "up"])
            if seed:
                seeds[name] = [port["ipv4"]] if port.get("ipv4") else []
            present = [str(a) for a in have.get(name, {}).get("addrs", [])]
            for addr in seeds.get(name, []):
                if addr not in present:
                    _ip(["addr", "add", addr, "dev", name])
    save_config({"enabled": True, "seed": seeds})
    save_slots({})


# --- GID slots ----------------------------------------------------------------
def slots():
    return _read(paths.run_file("gid_slots.json"), {})


def save_slots(data):
    _write(paths.run_file("gid_slots.json"), data)


def assign(current, addrs):
    """Pure: {addr: first index} kept for addresses still there, the lowest free even index
    (from 2) for new ones, in kernel order; addresses beyond the table get none."""
    keep = dict((a, i) for a, i in current.items() if a in addrs)
    used = set(keep.values())
    for addr in addrs:
        if addr in keep:
            continue
        index = 2
        while index in used:
            index += 2
        if index + 1 >= MAX_GIDS:
            continue
        keep[addr] = index
        used.add(index)
    return keep


def refresh(profile):
    """Read the kernel's addresses once; update the slots; return {netdev: [(index, IPvXInterface)]}
    (None when links are off). Drops seed addresses that are gone. Caller may hold the state lock."""
    cfg = config()
    if not cfg.get("enabled"):
        return None
    try:
        have = kernel_links()
    except LinkError:
        return None
    table = slots()
    result, changed = {}, False
    seeds = cfg.get("seed", {})
    seed_changed = False
    for name in profile.roce_netdevs():
        link = have.get(name)
        addrs = [str(a) for a in (link or {}).get("addrs", [])]
        new = assign(table.get(name, {}), addrs)
        if new != table.get(name, {}):
            table[name] = new
            changed = True
        result[name] = sorted((index, ipaddress.ip_interface(addr)) for addr, index in new.items())
        kept = [a for a in seeds.get(name, []) if a in addrs]
        if link is not None and kept != seeds.get(name, []):   # a missing link (boot) keeps its seed
            seeds[name] = kept
            seed_changed = True
    if changed:
        save_slots(table)
    if seed_changed:
        cfg["seed"] = seeds
        save_config(cfg)
    return result


def gid_entries(live, port):
    """The GID entries of one Ethernet port from the live addresses: [(index, IPv6Address, type)]."""
    out = []
    for index, iface in live.get(port["netdev"], []):
        if iface.version == 4:
            addr = ipaddress.IPv6Address("::ffff:" + str(iface.ip))
        else:
            addr = iface.ip
        out.append((index, addr, "IB/RoCE v1"))
        out.append((index + 1, addr, "RoCE v2"))
    return out


# --- the simulated sysfs GID table ----------------------------------------------
def _put(path, value):
    """Write a backing file only when its content differs (a converged table is not rewritten)."""
    text = value + "\n"
    try:
        with open(path) as handle:
            if handle.read() == text:
                return False
    except (IOError, OSError):
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    return True


def _drop(path):
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def sync_sysfs(profile):
    """Re-render the GID files of the RoCE ports from ``profile.gids`` (live addresses) where they
    differ; returns how many files changed."""
    if getattr(profile, "live", None) is None:
        return 0
    root = paths.sys_backing()
    changed = 0
    for nic in profile.nics:
        for port in nic["ports"]:
            if port["link_layer"] != "Ethernet":
                continue
            pdir = os.path.join(root, "class/infiniband", nic["dev"], "ports", str(port["port"]))
            if not os.path.isdir(pdir):
                continue
            gids = dict((idx, (addr, gtype, ndev)) for idx, addr, gtype, ndev in profile.gids(nic, port))
            for idx in range(MAX_GIDS):
                entry = gids.get(idx)
                addr = entry[0] if entry else ipaddress.IPv6Address(0)
                changed += _put(os.path.join(pdir, "gids", str(idx)), addr.exploded)
                types = os.path.join(pdir, "gid_attrs/types", str(idx))
                ndevs = os.path.join(pdir, "gid_attrs/ndevs", str(idx))
                if entry:
                    changed += _put(types, entry[1])
                    changed += _put(ndevs, entry[2]) if entry[2] else _drop(ndevs)
                else:
                    changed += _drop(types) + _drop(ndevs)
    return changed


# --- follow address changes (fabricsim-sysfsd) --------------------------------------
RTMGRP_LINK, RTMGRP_IPV4_IFADDR, RTMGRP_IPV6_IFADDR = 0x1, 0x10, 0x100


def follow(sync, sock=None, stop=None):
    """Call ``sync()`` after every burst of rtnetlink link/address events (the kernel's GID
    cache follows netdev events the same way). Runs until ``stop()`` is true or the socket fails."""
    import select
    import socket
    if sock is None:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        sock.bind((0, RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR))
    sync()
    while not (stop and stop()):
        ready, _w, _x = select.select([sock], [], [], 1.0)
        if not ready:
            continue
        try:
            while True:
                sock.recv(65536, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            pass
        sync()


def start_follower():
    """A daemon thread that keeps the GID files in step with the kernel (while links are on:
    checked at every event, so an `init --links` after the daemon started is followed too)."""
    import threading
    from . import state

    def sync():
        if not enabled():
            return
        try:
            with state.locked():
                sync_sysfs(state.load_profile())
        except Exception as exc:     # never take the sysfs daemon down
            import sys
            sys.stderr.write("fabricsim: GID sync failed: %s\n" % exc)

    def run():
        try:
            follow(sync)
        except OSError as exc:      # no rtnetlink here: shim calls still sync
            import sys
            sys.stderr.write("fabricsim: not following address changes: %s\n" % exc)

    thread = threading.Thread(target=run, name="fabricsim-gids", daemon=True)
    thread.start()
    return thread
