"""Faults of the fabric-health table (rdma.fabric.rdma_health): counters that grow with time,
a full GID table, the subnet manager gone, a flapping link, peer memory absent.

Kept in fabricsim's fault mechanism (``faults.json``, ``fabricsim fault KIND ...``, removed by
``fabricsim clear``):

  grow DEV NAME=RATE...       a counter growing RATE per second from now: DEV = mlx5_N (sysfs
                              counters/ or hw_counters/) or a netdev (ethtool -S)
  pause-storm NETDEV [RATE]   rx_prio3_pause and tx_prio3_pause growing (default 20000/s)
  cnp-surge DEV [RATE]        np_cnp_sent and rp_cnp_handled growing (default 100000/s)
  flap DEV[:PORT] [PERIOD]    the port goes down and back every PERIOD seconds (default 2):
                              counters/link_downed (and link_down_events_phy) grow 1 per period
  gid-full DEV[:PORT]         the port's GID table full (extra RoCE v1/v2 GIDs, as macvlans make)
  sm-gone                     no subnet manager: every InfiniBand port's SM lid 0
  peermem-absent              nvidia_peermem not shipped: modinfo and modprobe fail, unloaded
  addr-no-gid NETDEV ADDR/LEN an IPv4 address on the netdev that the kernel gave no GID (as when it
                              came while the GID table was full): ``fabricsim ip -j addr`` shows it,
                              the GID table does not (without --links)
  switch-pfc NETDEV PRIOS     the switch port facing NETDEV advertises PFC on PRIOS (0-7, comma
                              separated, or "none") instead of the profile's lldp_neighbour.pfc
  rail-degrade DEV FACTOR     a dirty optic on DEV's rail: traffic tests (ib_write_bw, all_reduce_perf
                              over the rails) get FACTOR (0 < FACTOR <= 1) of the bandwidth, latency a
                              little higher; port state and rate are unchanged (tools/perftest.py)

Growing sysfs counters are rewritten in sys.backing by ``tick()``: on every shim call, in the
sysfs daemon's loop (both modes) and by ``fabricsim tick``; ethtool computes them when called.
"""
import ipaddress
import os
import time

GID_TABLE_SIZE = 16       # the GID indexes sysfs.build renders (sysfs.GID_TABLE)
KINDS = ("grow", "pause-storm", "cnp-surge", "flap", "gid-full", "sm-gone", "peermem-absent", "addr-no-gid",
         "switch-pfc", "rail-degrade")


def _grow(faults, dev, name, rate, now):
    faults.setdefault("grow", {}).setdefault(dev, {})[name] = {"rate": float(rate), "since": now}


def add(faults, prof, kind, rest, now=None):
    """Record fault ``kind`` in ``faults``; returns an error message or None."""
    now = time.time() if now is None else now

    def number(index, default):
        return float(rest[index]) if len(rest) > index else default

    try:
        if kind == "grow":
            if len(rest) < 2 or not (prof.nic(rest[0]) or rest[0] in prof.netdevs()):
                return "usage: fault grow DEV|NETDEV NAME=RATE..."
            for item in rest[1:]:
                name, dummy, rate = item.partition("=")
                _grow(faults, rest[0], name, float(rate), now)
        elif kind == "pause-storm":
            if not rest or rest[0] not in prof.roce_netdevs():
                return "usage: fault pause-storm NETDEV [RATE] (a RoCE netdev)"
            for name in ("rx_prio3_pause", "tx_prio3_pause"):
                _grow(faults, rest[0], name, number(1, 20000.0), now)
        elif kind == "cnp-surge":
            if not rest or not prof.nic(rest[0]):
                return "usage: fault cnp-surge DEV [RATE]"
            for name in ("np_cnp_sent", "rp_cnp_handled"):
                _grow(faults, rest[0], name, number(1, 100000.0), now)
        elif kind == "flap":
            dev = rest[0].split(":")[0] if rest else None
            if not dev or not prof.nic(dev):
                return "usage: fault flap DEV[:PORT] [PERIOD]"
            rate = 1.0 / number(1, 2.0)
            _grow(faults, dev, "link_downed", rate, now)
            for port in prof.nic(dev)["ports"]:
                if port["link_layer"] == "Ethernet":
                    _grow(faults, port["netdev"], "link_down_events_phy", rate, now)
        elif kind == "gid-full":
            if not rest or not prof.nic(rest[0].split(":")[0]):
                return "usage: fault gid-full DEV[:PORT]"
            faults.setdefault("gid_full", []).append(rest[0])
        elif kind == "addr-no-gid":
            if len(rest) != 2 or rest[0] not in prof.roce_netdevs():
                return "usage: fault addr-no-gid NETDEV ADDR/PREFIX (a RoCE netdev)"
            if ipaddress.ip_interface(rest[1]).version != 4:
                return "fault addr-no-gid: %s is not an IPv4 address" % rest[1]
            faults.setdefault("addr_no_gid", {}).setdefault(rest[0], []).append(rest[1])
        elif kind == "switch-pfc":
            if len(rest) != 2 or rest[0] not in prof.roce_netdevs():
                return "usage: fault switch-pfc NETDEV PRIO[,PRIO...]|none (a RoCE netdev)"
            prios = [] if rest[1] == "none" else sorted(set(int(p) for p in rest[1].split(",")))
            if any(p < 0 or p > 7 for p in prios):
                return "fault switch-pfc: priorities 0-7, not %s" % rest[1]
            faults.setdefault("switch_pfc", {})[rest[0]] = prios
        elif kind == "rail-degrade":
            if len(rest) != 2 or not prof.nic(rest[0]):
                return "usage: fault rail-degrade DEV FACTOR (DEV an RDMA device, 0 < FACTOR <= 1)"
            factor = float(rest[1])
            if not 0 < factor <= 1:
                return "fault rail-degrade: FACTOR is a fraction of the bandwidth, 0 < FACTOR <= 1, not %s" % rest[1]
            faults.setdefault("rail_degrade", {})[rest[0]] = factor
        elif kind in ("sm-gone", "peermem-absent"):
            faults[kind.replace("-", "_")] = True
        else:
            return "unknown fault %r" % kind
    except ValueError as exc:
        return "fault %s: %s" % (kind, exc)
    return None


def values(faults, dev, now=None):
    """{counter: value} of the growing counters of ``dev`` (device or netdev) at ``now``."""
    now = time.time() if now is None else now
    base = (faults.get("counters") or {}).get(dev, {})
    return dict((name, int(base.get(name, 0) + spec["rate"] * max(0.0, now - spec["since"])))
                for name, spec in ((faults.get("grow") or {}).get(dev) or {}).items())


def apply(profile):
    """Profile-time faults: SM gone, GID tables marked full."""
    full = profile.faults.get("gid_full") or []
    for nic in profile.nics:
        for port in nic["ports"]:
            if profile.faults.get("sm_gone") and port["link_layer"] == "InfiniBand":
                port["sm_lid"] = 0
            port["gid_full"] = nic["dev"] in full or "%s:%d" % (nic["dev"], port["port"]) in full


def fill_gids(port, gids, size):
    """The GIDs of a full table: ``gids`` then RoCE v1/v2 pairs of unique local addresses."""
    if not port.get("gid_full"):
        return gids
    out = list(gids)
    n = 0
    while len(out) < size:
        addr = ipaddress.IPv6Address("fd00:%x::%x" % (port["port"], n // 2 + 1))
        out.append((len(out), addr, "IB/RoCE v1" if n % 2 == 0 else "RoCE v2", port.get("netdev")))
        n += 1
    return out


def peermem_refused(faults, name):
    """modprobe/modinfo answer when peer memory is absent, else None."""
    if faults.get("peermem_absent") and name.replace("-", "_") == "nvidia_peermem":
        return "Module nvidia_peermem not found in directory /lib/modules/%s" % os.uname().release
    return None


_LAST = [0.0]


def tick(now=None, throttle=0.0):
    """Rewrite the growing sysfs counters in sys.backing (atomically, no write log); at most
    once per ``throttle`` seconds (the daemons' loops)."""
    from . import paths, state
    if throttle and time.time() - _LAST[0] < throttle:
        return 0
    _LAST[0] = time.time()
    faults = state.faults()
    grow = faults.get("grow") or {}
    if not grow:
        return 0
    root = paths.sys_backing()
    written = 0
    for dev in grow:
        base = os.path.join(root, "class", "infiniband", dev, "ports")
        if not os.path.isdir(base):
            continue
        current = values(faults, dev, now)
        for port in os.listdir(base):
            for sub in ("counters", "hw_counters"):
                for name, value in current.items():
                    path = os.path.join(base, port, sub, name)
                    if os.path.exists(path):
                        tmp = path + ".fabricsim-tick"
                        with open(tmp, "w") as handle:
                            handle.write("%d\n" % value)
                        os.rename(tmp, path)
                        written += 1
    return written
