"""Multi-call entry point: the tool is chosen by argv[0] (shims are symlinks)."""
import os
import sys

from . import health_faults, log, state
from .tools import perftest as _perftest

TOOLS = ["mlnx_qos", "lldptool", "ibstat", "ibstatus", "ibv_devinfo", "ibdev2netdev", "show_gids",
         "cma_roce_mode", "ethtool", "nvidia-smi", "lspci", "setpci", "modprobe", "modinfo",
         # NIC firmware tools (tools/mlxtools.py): NV configuration (persistent) and firmware identity
         "mlxconfig", "flint", "mlxfwmanager",
         # traffic tests (tools/perftest.py, tools/nccltests.py): reads, they run without the state lock
         "all_reduce_perf"] + list(_perftest.TOOLS)
# simulated but not installed as shims (the node's real tool stays first in PATH): `fabricsim ip ...`
READ_ONLY_TOOLS = ["ip"]


class Context(object):
    """What a tool sees: the profile, the volatile NIC state and the fault switches."""

    def __init__(self, tool, profile, nic_state, fail_now=False):
        self.tool = tool
        self.profile = profile
        self.nic = nic_state
        self.fail_now = fail_now
        self.dirty = False


def tool_module(name):
    from .tools import mlnx_qos, lldptool, ib, ethtool, nvsmi, pci, kmod, iproute, perftest, nccltests, mlxtools
    return {
        "all_reduce_perf": nccltests, "ip": iproute,
        "mlnx_qos": mlnx_qos, "lldptool": lldptool, "ibstat": ib, "ibstatus": ib, "ibv_devinfo": ib,
        "ibdev2netdev": ib, "show_gids": ib, "cma_roce_mode": ib, "ethtool": ethtool,
        "nvidia-smi": nvsmi, "lspci": pci, "setpci": pci,
        "modprobe": kmod, "modinfo": kmod,
        "mlxconfig": mlxtools, "flint": mlxtools, "mlxfwmanager": mlxtools,
    }[name] if name not in perftest.TOOLS else perftest


def run_tool(tool, args):
    """Run one shim call: returns (stdout, stderr, rc).  Logs it; honours faults."""
    faults = state.faults()
    if tool in faults.get("tool_missing", []):
        log.append(tool, "read", argv=[tool] + list(args), rc=127)
        return "", "%s: command not found\n" % tool, 127
    try:
        state.ensure()
    except state.NoProfile as exc:
        return "", str(exc) + "\n", 1
    health_faults.tick()    # counters growing with time (health faults)
    mod = tool_module(tool)
    write = bool(mod.is_write(tool, args))
    if getattr(mod, "UNLOCKED", False):
        # a perftest server waits for its client: it must not hold the state lock meanwhile
        profile = state.load_profile()
        ctx = Context(tool, profile, state.nic_state())
        out, err, rc = mod.run(tool, list(args), ctx)
        log.append(tool, "read", argv=[tool] + list(args), rc=rc)
        return out, err, rc
    with state.locked():
        faults = state.faults()
        fail_now = False
        fa = faults.get("fail_after", {}).get(tool)
        if write and fa:
            fa["count"] = fa.get("count", 0) + 1
            if fa["count"] >= fa["n"]:
                fail_now = True
                del faults["fail_after"][tool]
            state.save_faults(faults)
        profile = state.load_profile()
        if profile.live is not None:
            from . import links
            links.sync_sysfs(profile)
        ctx = Context(tool, profile, state.nic_state(), fail_now)
        out, err, rc = mod.run(tool, list(args), ctx)
        if ctx.dirty:
            state.save_nic_state(ctx.nic)
    log.append(tool, "write" if write else "read", argv=[tool] + list(args), rc=rc)
    return out, err, rc


def emit(out, err, rc):
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return rc


def main(argv=None):
    argv = list(sys.argv if argv is None else argv)
    name = os.path.basename(argv[0])
    if name.endswith(".py"):
        name = name[:-3]
    if name in TOOLS:
        return emit(*run_tool(name, argv[1:]))
    # "fabricsim TOOL args" runs a tool too (handy without shims)
    if len(argv) > 1 and argv[1] in TOOLS + READ_ONLY_TOOLS:
        return emit(*run_tool(argv[1], argv[2:]))
    from . import cli
    return cli.main(argv[1:])
