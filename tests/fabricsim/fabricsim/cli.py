"""The `fabricsim` command (everything that is not a tool shim)."""
import argparse
import json
import glob
import os
import shlex
import sys

from . import health_faults, log, paths, profile as profiles, state

FAULT_HELP = """faults (persistent, survive `reset` and a container restart; `clear` removes them):
  link-down DEV[:PORT]          port DOWN (IB: Polling; Ethernet: Disabled), netdev carrier 0
  pcie-degrade BDF SPEED WIDTH  LnkSta / current_link_* below capability (e.g. 16GT/s 8)
  counters DEV NAME=VALUE...    hw_counters (mlx5_N) or ethtool -S counters (netdev)
  tool-missing TOOL             shim removed from the shim dir; a direct call answers rc 127
  fail-after TOOL N             the Nth write call of TOOL from now fails after part of its change
  numa BDF NODE                 numa_node of a PCI device
  acs-redir BDF on|off          ACS redirect bits set/cleared in a bridge's ACSCtl at boot
  grow DEV NAME=RATE...         a counter growing RATE per second (fabric health faults, health_faults.py:
  pause-storm NETDEV [RATE]     also these; `fabricsim tick` rewrites the growing sysfs counters now)
  cnp-surge DEV [RATE]
  flap DEV[:PORT] [PERIOD]
  gid-full DEV[:PORT]
  sm-gone
  peermem-absent
  addr-no-gid NETDEV ADDR/LEN
  switch-pfc NETDEV PRIOS|none
  rail-degrade DEV FACTOR       a dirty optic: perftest/nccl-tests bandwidth x FACTOR on that rail
  nv-refuse DEV PARAM           mlxconfig set of PARAM fails (firmware answers "Bad parameter"), nothing written
  nv-stuck DEV PARAM            mlxconfig set of PARAM is stored as next boot, but a boot/reset leaves the
                                current value as it was (the firmware does not take the value)
  fw-version DEV VERSION        the card of DEV reports firmware VERSION (flint, mlxfwmanager, ethtool -i, sysfs)
DEV for the NV/firmware faults: mlx5_N, a PCI address, an mst device or a netdev (the whole card).
"""


def _fail(msg, rc=1):
    sys.stderr.write("fabricsim: %s\n" % msg)
    return rc


def _rebuild(reset=False):
    with state.locked():
        state.rebuild(reset=reset)


def cmd_init(args):
    try:
        data = profiles.load_named(args.profile)
    except KeyError:
        return _fail("unknown profile %r (have: %s)" % (args.profile, ", ".join(profiles.available())))
    from . import links
    with state.locked():
        state.save_profile_data(data)
        state.save_faults({})
        state.save_lldpad({})
        state.save_nv({})           # NV configuration back to the firmware defaults
        if args.links:
            try:
                links.create(state.load_profile(), seed=True)
            except links.LinkError as exc:
                links.disable()
                return _fail("%s (rail links need CAP_NET_ADMIN in the container)" % exc)
        else:
            links.disable()
        state.rebuild(reset=True)
    _restore_shims()
    if not os.path.exists(os.path.join(paths.run_dir(), "proc", "cmdline")):
        write_proc_cmdline()
    from . import watch
    if watch.drain() is False:
        return _fail("the sysfs daemon did not handle the node's writes in time (fabricsim watch drain)")
    print("fabricsim: node initialised with profile %s" % args.profile)
    return 0


def cmd_profiles(args):
    for name in profiles.available():
        data = profiles.load_named(name)
        print("%-24s %s" % (name, data.get("description", "")))
    return 0


def _shim_root():
    return os.environ.get("FABRICSIM_SHIM_DIR") or "/usr/local/sbin"


def _restore_shims():
    """Put back shims hidden by tool-missing (only where an install happened)."""
    sbin = _shim_root()
    for name in os.listdir(sbin) if os.path.isdir(sbin) else []:
        if name.startswith(".fabricsim-missing-"):
            os.rename(os.path.join(sbin, name), os.path.join(sbin, name[len(".fabricsim-missing-"):]))


def cmd_fault(args):
    try:
        prof = state.load_profile()
    except state.NoProfile as exc:
        return _fail(str(exc))
    with state.locked():
        faults = state.faults()
        kind, rest = args.kind, args.args
        if kind == "link-down":
            if len(rest) != 1:
                return _fail("usage: fault link-down DEV[:PORT]")
            dev = rest[0].split(":")[0]
            if not prof.nic(dev):
                return _fail("no RDMA device %s" % dev)
            faults.setdefault("link_down", []).append(rest[0])
        elif kind == "pcie-degrade":
            if len(rest) != 3 or rest[0] not in prof.pci:
                return _fail("usage: fault pcie-degrade BDF SPEED WIDTH (BDF one of the profile's)")
            speed = rest[1] if rest[1].endswith("GT/s") else rest[1] + "GT/s"
            faults.setdefault("pcie_degrade", {})[rest[0]] = [speed, int(rest[2].lstrip("x"))]
        elif kind == "counters":
            if len(rest) < 2:
                return _fail("usage: fault counters DEV NAME=VALUE...")
            dev = rest[0]
            if not prof.nic(dev) and dev not in prof.netdevs():
                return _fail("no device or netdev %s" % dev)
            for item in rest[1:]:
                name, dummy, value = item.partition("=")
                faults.setdefault("counters", {}).setdefault(dev, {})[name] = int(value)
        elif kind == "tool-missing":
            if len(rest) != 1:
                return _fail("usage: fault tool-missing TOOL")
            faults.setdefault("tool_missing", []).append(rest[0])
            shim = os.path.join(_shim_root(), rest[0])
            if os.path.islink(shim):
                os.rename(shim, os.path.join(_shim_root(), ".fabricsim-missing-" + rest[0]))
        elif kind == "fail-after":
            if len(rest) != 2:
                return _fail("usage: fault fail-after TOOL N")
            faults.setdefault("fail_after", {})[rest[0]] = {"n": int(rest[1]), "count": 0}
        elif kind == "numa":
            if len(rest) != 2 or rest[0] not in prof.pci:
                return _fail("usage: fault numa BDF NODE")
            faults.setdefault("numa", {})[rest[0]] = int(rest[1])
        elif kind == "acs-redir":
            if len(rest) != 2 or rest[0] not in prof.pci or rest[1] not in ("on", "off"):
                return _fail("usage: fault acs-redir BDF on|off (a bridge with ACS)")
            if not prof.pci[rest[0]].get("acs_cap"):
                return _fail("%s has no ACS capability" % rest[0])
            faults.setdefault("acs_redir", {})[rest[0]] = rest[1] == "on"
            nic = state.nic_state()
            ctl = nic["acs"].get(rest[0], 0)
            nic["acs"][rest[0]] = (ctl | 0x1D) if rest[1] == "on" else (ctl & ~0x0C)
            state.save_nic_state(nic)
        elif kind in ("nv-refuse", "nv-stuck", "fw-version"):
            from .tools import mlxtools
            card = mlxtools.card_of(prof, rest[0]) if len(rest) == 2 else None
            if card is None:
                return _fail("usage: fault %s DEV %s (DEV an RDMA device, PCI address or mst device)"
                             % (kind, "VERSION" if kind == "fw-version" else "PARAM"))
            if kind == "fw-version":
                faults.setdefault("fw_version", {})[card["key"]] = rest[1]
            else:
                name = rest[1].upper()
                if name not in mlxtools.param_names(card):
                    return _fail("%s has no NV parameter %s" % (rest[0], rest[1]))
                names = faults.setdefault(kind.replace("-", "_"), {}).setdefault(card["key"], [])
                if name not in names:
                    names.append(name)
        elif kind in health_faults.KINDS:
            error = health_faults.add(faults, prof, kind, rest)
            if error:
                return _fail(error)
            if kind == "peermem-absent":
                from .tools import kmod
                kmod.unload("nvidia_peermem")
        else:
            return _fail("unknown fault %r\n%s" % (kind, FAULT_HELP))
        state.save_faults(faults)
        state.rebuild(reset=False)
    return 0


def cmd_tick(args):
    health_faults.tick()
    return 0


def cmd_clear(args):
    with state.locked():
        state.save_faults({})
        state.rebuild(reset=False)
    _restore_shims()
    return 0


def cmd_reset(args):
    _rebuild(reset=True)
    from . import watch
    if watch.drain() is False:
        return _fail("the sysfs daemon did not handle the reset's writes in time (fabricsim watch drain)")
    return 0


GRUB_FILE = "/etc/default/grub"
GRUB_KEYS = ("GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT")


def booted_cmdline(grub_file=GRUB_FILE):
    """The kernel command line a node booted from its GRUB configuration would have:
    BOOT_IMAGE and root, then GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT as
    /etc/default/grub and grub.d/*.cfg (sourced in order, later assignments win) set them."""
    values = dict((key, "") for key in GRUB_KEYS)
    files = [grub_file] + sorted(glob.glob(grub_file + ".d/*.cfg"))
    for path in files:
        try:
            with open(path) as handle:
                text = handle.read()
        except (IOError, OSError):
            continue
        for line in text.splitlines():
            line = line.strip()
            for key in GRUB_KEYS:
                if line.startswith(key + "="):
                    try:
                        words = shlex.split(line[len(key) + 1:].replace("$" + key, values[key]))
                    except ValueError:
                        continue
                    values[key] = " ".join(words)
    words = ["BOOT_IMAGE=/boot/vmlinuz", "root=/dev/sda1", "ro"]
    words += values["GRUB_CMDLINE_LINUX"].split() + values["GRUB_CMDLINE_LINUX_DEFAULT"].split()
    return " ".join(words) + "\n"


def write_proc_cmdline():
    """$FABRICSIM_RUN_DIR/proc/cmdline: what /proc/cmdline reads on the simulated node (the
    container shares the host's kernel, so the real one says nothing about this node)."""
    target = os.path.join(paths.run_dir(), "proc", "cmdline")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = target + ".tmp"
    with open(tmp, "w") as handle:
        handle.write(booted_cmdline())
    os.rename(tmp, target)


def cmd_boot(args):
    write_proc_cmdline()        # the node "booted" with its boot configuration
    from . import links
    try:
        if links.enabled():     # a new network namespace: the rail links come back, with their seed
            with state.locked():
                links.create(state.load_profile(), seed=False)
        _rebuild(reset=True)
    except state.NoProfile:
        print("fabricsim: no profile yet; nothing to build")
    return 0


def cmd_log(args):
    from . import watch
    if watch.drain() is False:
        return _fail("the sysfs daemon did not handle the writes made so far in time: the call log would miss them")
    recs = log.records(writes_only=args.writes)
    if args.tool:
        recs = [r for r in recs if r["tool"] == args.tool]
    for rec in recs:
        print(json.dumps(rec, sort_keys=True) if args.json else log.format_record(rec))
    if args.clear:
        log.clear()
    return 0


def cmd_install(args):
    from . import install
    changes = install.install(root=args.root, run=paths.run_dir(), systemctl=not args.no_systemctl)
    for path in changes:
        print("fabricsim: installed %s" % path)
    return 0


def cmd_watch(args):
    from . import watch
    if args.cleanup:
        watch.cleanup()
        return 0
    if args.wait_ready:             # raises NotReady after the timeout (main: rc 1, the reason)
        watch.wait_ready(timeout=args.timeout)
        return 0
    if args.once:
        w = watch.Watcher().start()
        w.process(timeout=0.5 if args.timeout is None else args.timeout)
        return 0
    try:
        watch.run_forever(mode=args.mode)
    except Exception as exc:        # fusefs.Unavailable with --mode fuse
        return _fail(str(exc))
    return 0


def cmd_lldpad(args):
    with state.locked():
        cfg = state.lldpad()
        if args.action == "status":
            running = cfg.get("running", state.load_profile().data.get("lldpad_running", False))
            print("running" if running else "stopped")
            return 0
        cfg["running"] = args.action == "start"
        state.save_lldpad(cfg)
    return 0


def cmd_cable(args):
    from . import cabling
    prof = state.load_profile()
    with state.locked():
        data = cabling.overrides()
        if args.clear:
            data = {}
        elif len(args.args) == 3 and args.args[0] in prof.netdevs():
            data[args.args[0]] = {"switch": args.args[1], "port": args.args[2]}
        else:
            return _fail("usage: cable NETDEV SWITCH PORT (NETDEV one of %s) | cable --clear"
                         % ", ".join(prof.netdevs()))
        cabling.save(data)
    return 0


def cmd_nv_set(args):
    """A change made behind Ansible's back (someone ran mlxconfig by hand): stored as next boot
    (with --current also as current, as if the node had rebooted since).  Logged as tool
    "fabricsim", kind "nv-set": not a write (`log --writes` does not count it)."""
    from .tools import mlxtools
    prof = state.load_profile()
    card = mlxtools.card_of(prof, args.dev)
    if card is None:
        return _fail("no device %s" % args.dev)
    by_name = dict((p.name, p) for p in mlxtools.params(card))
    values = {}
    for item in args.items:
        name, eq, text = item.partition("=")
        param = by_name.get(name.upper())
        if not eq or param is None:
            return _fail("nv-set: %r is not NAME=VALUE with NAME one of %s's parameters" % (item, args.dev))
        try:
            values[param.name] = param.parse(text)[0]
        except ValueError as exc:
            return _fail("nv-set %s: %s" % (item, exc))
    with state.locked():
        mlxtools.store(card, values, current=args.current)
    log.append("fabricsim", "nv-set", argv=["fabricsim", "nv-set", args.dev] + list(args.items)
               + (["--current"] if args.current else []), rc=0)
    return 0


def cmd_state(args):
    print(json.dumps(state.nic_state(), indent=1, sort_keys=True))
    return 0


def build_parser():
    p = argparse.ArgumentParser(prog="fabricsim", description="GPU/RDMA node simulator",
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=FAULT_HELP)
    sub = p.add_subparsers(dest="cmd")
    s = sub.add_parser("init", help="persist a profile and boot the node with it")
    s.add_argument("--profile", required=True)
    s.add_argument("--links", action="store_true",
                   help="RoCE netdevs as dummy kernel links (CAP_NET_ADMIN); GIDs follow their addresses")
    s.set_defaults(func=cmd_init)
    sub.add_parser("profiles", help="list profiles").set_defaults(func=cmd_profiles)
    s = sub.add_parser("fault", help="inject a fault", epilog=FAULT_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("kind")
    s.add_argument("args", nargs="*")
    s.set_defaults(func=cmd_fault)
    sub.add_parser("clear", help="remove all faults").set_defaults(func=cmd_clear)
    sub.add_parser("tick", help="rewrite the growing counters now").set_defaults(func=cmd_tick)
    sub.add_parser("reset", help="NICs back to firmware defaults (a reboot)").set_defaults(func=cmd_reset)
    sub.add_parser("boot", help="what fabricsim.service runs at boot").set_defaults(func=cmd_boot)
    s = sub.add_parser("log", help="show the call/write log")
    s.add_argument("--writes", action="store_true")
    s.add_argument("--json", action="store_true")
    s.add_argument("--clear", action="store_true")
    s.add_argument("--tool")
    s.set_defaults(func=cmd_log)
    s = sub.add_parser("install", help="install shims and systemd units")
    s.add_argument("--root", default="/")
    s.add_argument("--no-systemctl", action="store_true")
    s.set_defaults(func=cmd_install)
    s = sub.add_parser("watch", help="sysfs write daemon (fabricsim-sysfsd.service): FUSE or inotify")
    s.add_argument("--once", action="store_true", help="arm, handle what arrives within --timeout, exit")
    s.add_argument("--timeout", type=float, default=None,
                   help="s: --once 0.5; --wait-ready $FABRICSIM_READY_TIMEOUT or 60")
    s.add_argument("--wait-ready", action="store_true",
                   help="wait until the running daemon serves (run_dir/watch.ready), started or not "
                        "yet; rc 1 naming the node and what it waited for after --timeout")
    s.add_argument("--mode", choices=["auto", "fuse", "inotify"],
                   default=os.environ.get("FABRICSIM_SYSFSD_MODE") or "auto",
                   help="fuse: FUSE view where invalid writes fail; inotify: watch plain files and "
                        "revert; auto (default): fuse when /dev/fuse and mount work, else inotify")
    s.add_argument("--cleanup", action="store_true", help="remove a stale FUSE mount, restore the plain view")
    s.set_defaults(func=cmd_watch)
    s = sub.add_parser("lldpad", help="start/stop the simulated lldpad daemon")
    s.add_argument("action", choices=["start", "stop", "status"])
    s.set_defaults(func=cmd_lldpad)
    s = sub.add_parser("cable", help="recable a port: the LLDP neighbour (switch, port) lldptool -n reports")
    s.add_argument("args", nargs="*")
    s.add_argument("--clear", action="store_true")
    s.set_defaults(func=cmd_cable)
    sub.add_parser("state", help="dump the volatile NIC state (debug)").set_defaults(func=cmd_state)
    s = sub.add_parser("nv-set", help="change NV firmware config behind Ansible's back (drift; not a logged write)")
    s.add_argument("dev")
    s.add_argument("items", nargs="+", metavar="NAME=VALUE")
    s.add_argument("--current", action="store_true", help="also make it current (as if rebooted since)")
    s.set_defaults(func=cmd_nv_set)
    return p


def main(argv):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from . import watch
    try:
        return args.func(args)
    except state.NoProfile as exc:
        return _fail(str(exc))
    except watch.NotReady as exc:   # a started sysfs daemon that never got ready (drain, --wait-ready)
        return _fail(str(exc))
