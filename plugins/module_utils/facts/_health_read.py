# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading and deriving for ``rdma_health``: the one I/O seam (``read_host``), the pure
derivation of the observations ``_health.judge`` takes (``derive``), and the flap state.

``read_host`` returns ``raw``: JSON-serialisable, every tool output and sysfs value the
checks read (rdma_facts' and gdr_readiness' own raw inputs, two counter samples, ethtool
texts, ``ibv_devinfo -v``, sminfo captures, the NCCL log, uptime, boot id, the flap state
before this run). A support bundle is that ``raw``; ``derive(raw)`` gives the same
observations from it on any machine, so offline findings are the online ones.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import re
import socket
import time

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _bundle, _gdr_readiness
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ethtool_stats, _ibv_devinfo
from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _iproute
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _lldptool, _sm_info
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _mlnx_qos
from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts
from ansible_collections.rdma.fabric.plugins.module_utils.common import _secrets
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError, read_text, run_tool, sysfs_path, sysfs_root

RAW_VERSION = _bundle.RAW_VERSION
SUBSETS = ("devices", "gids", "pci", "gpus", "counters")
BUNDLE_FILE = _bundle.BUNDLE_FILE
# sysfs counters/ and hw_counters/ sampled twice (name -> meaning)
SYSFS_RATE_COUNTERS = ("symbol_error", "link_downed", "port_rcv_errors", "port_xmit_discards",
                       "np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets", "out_of_buffer")
ETHTOOL_RATE_COUNTERS = ("rx_discards_phy", "rx_symbol_err_phy", "link_down_events_phy", "rx_pause_ctrl_phy",
                         "tx_pause_ctrl_phy", "tx_pause_storm_warning_events", "tx_pause_storm_error_events")


def _ports(devices):
    for name, device in devices.items():
        for port in device.get("ports") or []:
            yield name, port


def _sample(module, devices, ethtool):
    """One counter sample: sysfs counters per port, ``ethtool -S`` text per Ethernet netdev."""
    sample = {"time": time.time(), "sysfs": {}, "ethtool": {}}
    for name, port in _ports(devices):
        key = "%s/%s" % (name, port["port"])
        sample["sysfs"][key] = _rdma_facts.read_port_counters(("class", "infiniband", name, "ports", str(port["port"])))
        if ethtool and port.get("link_layer") == "Ethernet" and port.get("netdev"):
            rc, out, err = run_tool(module, [ethtool, "-S", port["netdev"]], check_rc=False)
            sample["ethtool"][key] = out if rc == 0 else {"rc": rc, "error": (err or out or "").strip()}
    return sample


def read_state(path):
    """The flap state kept on the node; {} when absent; a corrupt file is {} plus a warning."""
    if not path:
        return {}, None
    text = read_text(path)
    if text is None:
        return {}, None
    try:
        state = json.loads(text)
        if not isinstance(state, dict):
            raise ValueError("not an object")
        return state, None
    except ValueError as exc:
        return {}, "state file %s is not JSON (%s): starting a new one" % (path, exc)


def write_state(path, state):
    """Atomically (``_fileio.write_atomic``: temp file in the same directory, fsync, rename, no
    symlink followed), mode 0644; ``observe`` made the directory (the lock file lives there)."""
    _fileio.write_atomic(path, json.dumps(state, sort_keys=True, indent=1) + "\n", 0o644)


def observe(module, params, save_state=True):
    """``(raw, observations)``: ``read_host`` then ``derive``. With ``save_state`` and a
    ``state_file``, the read of the flap state, the derivation and the write of the new state
    happen under the state's lock (``_fileio.locked``), so the node timer and an Ansible run
    that race never lose each other's flap events."""
    path = (params.get("state_file") or None) if save_state else None
    if path:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            try:
                os.makedirs(directory, 0o755)
            except OSError as exc:   # the node timer and a run may create it at once
                if exc.errno != errno.EEXIST or not os.path.isdir(directory):
                    raise
    with _fileio.locked(path):
        raw = read_host(module, params)
        observations, state = derive(raw, params.get("flap_window", 21600), params.get("boot_grace", 600))
        if path:
            write_state(path, state)
    return raw, observations


# An NCCL debug log can grow to gigabytes: its last 16 MiB are read (the newest lines).
NCCL_LOG_LIMIT = 16 * _fileio.MiB


def read_nccl_log(path):
    """The last ``NCCL_LOG_LIMIT`` bytes of the NCCL log at ``path``: a regular file only (no
    symlink followed, no FIFO opened); ValueError naming ``nccl_log`` and the reason."""
    try:
        return _fileio.read_text(path, NCCL_LOG_LIMIT, tail=True, what="nccl_log=%r:" % path)
    except OSError as exc:
        raise ValueError(str(exc) if isinstance(exc, _fileio.FileError) else "nccl_log=%r: cannot be read: %s" % (path, exc))


# what rdma_health keeps of ``mlnx_qos -i IF -a`` (the NIC's own lossless settings)
MLNX_QOS_KEYS = ("dcbx", "trust", "pfc", "prio_tc", "tsa", "tcbw")


def _tool_error(rc, out, err):
    return {"rc": rc, "error": _lldptool._clean(err) or _lldptool._clean(out) or "(no output)"}


def one_line(text):
    """A tool's message on one line (its lines joined by '; '): a skipped check's reason is
    one table cell and one JUnit/Prometheus value."""
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def read_lossless(module, devices):
    """Host/switch lossless agreement inputs, per RoCE netdev: the switch's DCB TLVs as lldpad
    sees them (``lldptool -t -n -i IF``: ONE call gives PFC, ETS and APP, IEEE or CEE, where
    ``-V PFC`` prints nothing for a CEE switch), lldpad's admin status and own TLVs
    (``lldptool -t -i IF``), and the NIC's settings and DCBX mode (``mlnx_qos -i IF -a``, its one
    reader). None without RoCE ports; ``{"skipped": reason}`` without lldptool or lldpad."""
    netdevs = sorted(set(p["netdev"] for _n, p in _ports(devices)
                         if p.get("link_layer") == "Ethernet" and p.get("netdev")))
    if not netdevs:
        return None
    tool = module.get_bin_path(_lldptool.TOOL, required=False)
    if not tool:
        return {"skipped": "lldptool (lldpad) is not installed: the switch's PFC/ETS/APP TLVs cannot be read"}
    qos = module.get_bin_path(_mlnx_qos.TOOL, required=False)
    out = {"interfaces": {}}
    for netdev in netdevs:
        entry = {}
        rc, text, err = run_tool(module, [tool, "-t", "-n", "-i", netdev], check_rc=False)
        if rc == 255 or "Failed to connect to lldpad" in (text or "") + (err or ""):
            return {"skipped": "lldpad is not running (lldptool -t -n -i %s: %s): the switch's PFC/ETS/APP "
                               "TLVs cannot be read; start it (systemctl start lldpad) to check the agreement"
                               % (netdev, one_line(_tool_error(rc, text, err)["error"]))}
        entry["peer"] = text if rc == 0 else _tool_error(rc, text, err)
        rc, text, err = run_tool(module, [tool, "get-lldp", "-i", netdev, "adminStatus"], check_rc=False)
        entry["admin_status"] = _lldptool.parse_arg(text, "adminStatus") if rc == 0 else None
        rc, text, err = run_tool(module, [tool, "-t", "-i", netdev], check_rc=False)
        entry["local"] = text if rc == 0 else _tool_error(rc, text, err)
        entry["mlnx_qos"] = None
        if qos:
            try:
                state = _mlnx_qos.read_state(module, qos, netdev)
                entry["mlnx_qos"] = dict((k, state.get(k)) for k in MLNX_QOS_KEYS)
            except ToolError as exc:
                entry["mlnx_qos"] = {"error": exc.msg}
        out["interfaces"][netdev] = entry
    return out


def read_ip_addr(module, devices):
    """``ip -j addr show`` (every link, one call) where a port has an Ethernet netdev: the
    netdevs' own IPv4 addresses for the gid_ipv4 check. None without such a port or without
    ``ip``; a failure is kept as {rc, error}."""
    if not any(p.get("link_layer") == "Ethernet" and p.get("netdev") for _n, p in _ports(devices)):
        return None
    ip = module.get_bin_path("ip", required=False)
    if not ip:
        return None
    rc, out, err = run_tool(module, [ip, "-j", "addr", "show"], check_rc=False)
    return out if rc == 0 else {"rc": rc, "error": (err or out or "").strip() or "(no output)"}


def read_roce_modes(devices):
    """The RDMA-CM default RoCE mode of every RoCE (Ethernet) port, ``{"DEV/PORT": {"mode":
    text}}``, read from the rdma_cm configfs (``kernel/config/rdma_cm/DEV/ports/PORT/
    default_roce_mode`` under the sysfs root). Read-only: the device's configfs group exists
    only after a ``mkdir`` (``cma_roce_mode``, ``cma_roce_tos`` and the dcqcn module make it and
    remove it again), and this never makes it; a port it cannot read is ``{"skipped": reason}``.
    None without RoCE ports."""
    roce = [(name, port) for name, port in _ports(devices) if port.get("link_layer") == "Ethernet"]
    if not roce:
        return None
    base = sysfs_path("kernel", "config", "rdma_cm")
    out = {}
    for name, port in roce:
        key = "%s/%s" % (name, port["port"])
        if not os.path.isdir(base):
            out[key] = {"skipped": "%s does not exist: configfs is not mounted or the rdma_cm module is not loaded"
                                   % base}
            continue
        if not os.path.isdir(os.path.join(base, name)):
            out[key] = {"skipped": "the device's rdma_cm configfs group (%s/DEV) does not exist: it appears only "
                                   "after a mkdir, which this read-only check does not make (cma_roce_mode -d DEV "
                                   "-p PORT makes it, shows the mode and removes it again)" % base}
            continue
        path = os.path.join(base, name, "ports", str(port["port"]), "default_roce_mode")
        try:
            with open(path) as handle:
                out[key] = {"mode": handle.read().strip()}
        except (IOError, OSError) as exc:
            out[key] = {"skipped": "default_roce_mode cannot be read: %s" % (os.strerror(exc.errno) if exc.errno else exc)}
    return out


def derive_roce_modes(raw, facts):
    """The RDMA-CM default RoCE modes of ``raw`` (``read_roce_modes``); a support bundle recorded
    before they were read gives each RoCE port a skipped entry saying so."""
    if "rdma_cm_roce_mode" in raw:
        return raw["rdma_cm_roce_mode"]
    if raw.get("source") != "bundle":
        return None
    return dict(("%s/%s" % (name, port["port"]),
                 {"skipped": "the support bundle holds no RDMA-CM default RoCE mode (recorded before it was read)"})
                for name, port in _ports(facts.get("devices") or {}) if port.get("link_layer") == "Ethernet") or None


def read_nv_pending(module, devices):
    """The NIC non-volatile values set and not yet current, one ``mlxconfig -d BDF -e query`` per
    adapter (its lowest PCI function): ``{DEV: {"pending": {NAME: {current, next_boot}}}}`` or
    ``{DEV: {"skipped": reason}}``; ``{"skipped": reason}`` when neither mlxconfig (NVIDIA MFT) nor
    mstconfig (mstflint) is installed; None without a device with a PCI address. Read-only."""
    from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxconfig
    functions = sorted((d.get("pci_address"), name) for name, d in (devices or {}).items() if d.get("pci_address"))
    if not functions:
        return None
    tool = module.get_bin_path("mlxconfig", required=False) or module.get_bin_path("mstconfig", required=False)
    if not tool:
        return {"skipped": "neither mlxconfig (NVIDIA MFT) nor mstconfig (mstflint) is installed"}
    out, cards = {}, set()
    for bdf, name in functions:
        card = bdf.rsplit(".", 1)[0]
        if card in cards:
            continue
        cards.add(card)
        argv = [tool, "-d", bdf, "-e", "query"]
        rc, text, err = run_tool(module, argv, check_rc=False)
        try:
            if rc != 0:
                raise ValueError("rc=%s: %s" % (rc, "; ".join(_mlxconfig.errors((text or "") + "\n" + (err or "")))
                                                or (err or text or "").strip()))
            parsed = _mlxconfig.parse_query(text)
            params = parsed[0]["params"] if parsed else {}
        except ValueError as exc:
            out[name] = {"skipped": "%s failed: %s" % (" ".join(argv[1:]), one_line(exc))}
            continue
        out[name] = {"pending": dict((key, {"current": params[key].get("current"), "next_boot": params[key].get("next_boot")})
                                     for key in _mlxconfig.pending_of(params))}
    return out


def read_host(module, params):
    """The only I/O seam of rdma_health. ``params``: interval, state_file, sm, gdr, lossless,
    nccl_log (a path on the node), nccl_log_text."""
    raw = {"version": RAW_VERSION, "source": "host", "errors": []}
    raw["rdma"] = _rdma_facts.read_host(module, set(SUBSETS))
    raw["sysfs_root"] = sysfs_root()
    devices = raw["rdma"]["devices"]
    raw["gid_table_size"] = dict(("%s/%s" % (n, p["port"]), len(os.listdir(
        sysfs_path("class", "infiniband", n, "ports", str(p["port"]), "gids")))
        if os.path.isdir(sysfs_path("class", "infiniband", n, "ports", str(p["port"]), "gids")) else None)
        for n, p in _ports(devices))
    ibv_devinfo = module.get_bin_path("ibv_devinfo", required=False)
    raw["ibv_devinfo"] = None
    if ibv_devinfo and devices:
        rc, out, err = run_tool(module, [ibv_devinfo, "-v"], check_rc=False)
        raw["ibv_devinfo"] = out if rc == 0 else None
        if rc != 0:
            raw["errors"].append({"tool": "ibv_devinfo", "msg": "ibv_devinfo -v failed (rc=%s): %s"
                                  % (rc, (err or out or "").strip())})
    raw["ip_addr"] = read_ip_addr(module, devices)
    ethtool = module.get_bin_path("ethtool", required=False)
    interval = float(params.get("interval") or 0)
    raw["samples"] = [_sample(module, devices, ethtool)]
    if interval > 0:
        time.sleep(interval)
        raw["samples"].append(_sample(module, devices, ethtool))
    raw["sm"] = {}
    sminfo = module.get_bin_path("sminfo", required=False)
    if params.get("sm", True) and sminfo:
        for name, port in _ports(devices):
            if port.get("link_layer") != "InfiniBand" or port.get("state") != "ACTIVE" or not port.get("sm_lid"):
                continue
            key = "%s/%s" % (name, port["port"])
            try:
                facts, text = _sm_info.gather(module, ca=name, port=port["port"], discover=True)
                raw["sm"][key] = {"facts": facts, "text": text}
            except ToolError as exc:
                raw["sm"][key] = {"error": exc.msg, "text": exc.stdout}
    raw["gdr"] = None
    # GPUDirect RDMA: GPU nodes only; a bundle (return_raw) holds gdr_readiness' record on every node
    if params.get("gdr", True) and (raw["rdma"].get("gpu_list") or params.get("return_raw")):
        try:
            raw["gdr"] = _gdr_readiness.read_host(module)
        except (ValueError, ToolError) as exc:
            raw["errors"].append({"tool": "gdr_readiness", "msg": str(exc)})
    raw["lldp"] = read_lossless(module, devices) if params.get("lossless", True) else None
    raw["nv"] = read_nv_pending(module, devices) if params.get("nv", True) else None
    raw["rdma_cm_roce_mode"] = read_roce_modes(devices)
    raw["nccl_log"] = params.get("nccl_log_text")
    if raw["nccl_log"] is None and params.get("nccl_log"):
        raw["nccl_log"] = read_nccl_log(params["nccl_log"])
    uptime = read_text("/proc/uptime")
    raw["uptime"] = float(uptime.split()[0]) if uptime else None
    raw["boot_id"] = (read_text("/proc/sys/kernel/random/boot_id") or "").strip() or None
    raw["now"] = time.time()
    raw["hostname"] = socket.gethostname()
    raw["state_before"], warning = read_state(params.get("state_file"))
    if warning:
        module.warn(warning)
    return raw


def read_bundle(path):
    """``raw`` from a support bundle (directory, its JSON file or its archive): ``_bundle``."""
    return _bundle.read_bundle(path)


# ---------------------------------------------------------------- pure derivation

def _ethtool_counters(text, key, errors):
    if text is None:
        return None
    if isinstance(text, dict):
        msg = "ethtool -S for %s failed (rc=%s): %s" % (key, text.get("rc"), text.get("error"))
        errors.append({"tool": "ethtool", "msg": msg})
        return None
    try:
        return _ethtool_stats.parse(text, "ethtool -S output of %s" % key)
    except ValueError as exc:
        errors.append({"tool": "ethtool", "msg": str(exc)})
        return None


def _meanings(sysfs, ethtool):
    """Counter values by meaning: pause frames, CNPs, discards, symbol errors, link downs."""
    out = {}
    if ethtool:
        pause = _ethtool_stats.pause_frames(ethtool)
        out["rx_pause"] = pause["rx"] or ethtool.get("rx_pause_ctrl_phy", 0)
        out["tx_pause"] = pause["tx"] or ethtool.get("tx_pause_ctrl_phy", 0)
        out["pause_storm_events"] = ethtool.get("tx_pause_storm_warning_events", 0) + \
            ethtool.get("tx_pause_storm_error_events", 0)
        if "rx_discards_phy" in ethtool:
            out["rx_discards_phy"] = ethtool["rx_discards_phy"]
    symbol = [v for v in ((sysfs or {}).get("symbol_error"), (ethtool or {}).get("rx_symbol_err_phy")) if v is not None]
    if symbol:
        out["symbol_errors"] = sum(symbol)
    for name, meaning in (("np_cnp_sent", "cnp_sent"), ("rp_cnp_handled", "cnp_handled")):
        if (sysfs or {}).get(name) is not None:
            out[meaning] = sysfs[name]
    downed = (sysfs or {}).get("link_downed")
    if downed is None:
        downed = (ethtool or {}).get("link_down_events_phy")
    if downed is not None:
        out["link_downed"] = downed
    return out


def update_flaps(state, ports, now, uptime, boot_id, window, grace):
    """New flap state and per-port flaps: link_downed increments seen run to run (and within
    this run's sampling interval), kept for ``window`` seconds. ``ports``: {port: value, or
    (first sample, last sample)}. Within ``grace`` seconds of boot the baseline moves and
    nothing is counted (links train and retrain while a node boots); a new boot id or a
    counter that went down (reset) starts a new baseline."""
    old_ports = (state or {}).get("ports") or {}
    same_boot = boot_id is not None and (state or {}).get("boot_id") == boot_id
    in_grace = uptime is not None and uptime < grace
    new = {"version": 1, "boot_id": boot_id, "updated": now, "ports": {}}
    flaps = {}
    for key, value in sorted(ports.items()):
        first, value = value if isinstance(value, (list, tuple)) else (None, value)
        if value is None:
            continue
        before = old_ports.get(key) if same_boot else None
        events = [e for e in (before or {}).get("events") or [] if now - e[0] <= window]
        baseline = before.get("link_downed") if before is not None else first
        if baseline is not None and not in_grace and value > baseline:
            events.append([now, value - baseline])
        new["ports"][key] = {"link_downed": value, "events": events}
        flaps[key] = {"count": sum(e[1] for e in events), "value": value, "grace": in_grace,
                      "window": "%gh" % (window / 3600.0)}
    return new, flaps


def derive(raw, window=21600, grace=600):
    """Observations for ``_health.judge`` and the new flap state: (observations, state)."""
    errors = list(raw.get("errors") or [])
    facts = _rdma_facts.derive(raw["rdma"], set(SUBSETS))
    devinfo = None
    if raw.get("ibv_devinfo"):
        try:
            devinfo = _ibv_devinfo.parse(raw["ibv_devinfo"], "ibv_devinfo -v output")
        except ValueError as exc:
            errors.append({"tool": "ibv_devinfo", "msg": str(exc)})
    ipv4, unknown_ipv4 = _netdev_ipv4(raw, errors)
    samples = raw.get("samples") or []
    first, last = (samples[0], samples[-1]) if samples else ({}, {})
    elapsed = (last.get("time", 0) - first.get("time", 0)) if len(samples) > 1 else 0
    ports, downed = {}, {}
    for name, device in facts["devices"].items():
        for port in device["ports"]:
            key = "%s/%s" % (name, port["port"])
            sysfs0, sysfs1 = (first.get("sysfs") or {}).get(key), (last.get("sysfs") or {}).get(key)
            eth0 = _ethtool_counters((first.get("ethtool") or {}).get(key), key, errors)
            eth1 = eth0 if len(samples) < 2 else _ethtool_counters((last.get("ethtool") or {}).get(key), key, errors)
            m0, m1 = _meanings(sysfs0, eth0), _meanings(sysfs1, eth1)
            deltas = dict((k, m1[k] - m0[k]) for k in m1 if k in m0 and m1[k] >= m0[k])
            rates = dict((k, round(v / elapsed, 3)) for k, v in deltas.items()) if elapsed > 0 else {}
            size = raw.get("gid_table_size", {}).get(key)
            info_port = ((devinfo or {}).get(name) or {}).get("ports", {}).get(port["port"])
            if info_port and info_port.get("gid_tbl_len"):
                table = _ibv_devinfo.gid_table(info_port)
            else:
                gids = [{"index": g["index"], "gid": g["gid"], "type": g["type"], "ipv4": g["ipv4"]}
                        for g in port.get("gids") or []]
                table = _ibv_devinfo.gid_table({"gid_tbl_len": size, "gids": gids})
            # sysfs says each GID's type (gid_attrs/types); ibv_devinfo before rdma-core 28 does not
            table["roce_v2_ipv4"] = sorted(set(table["roce_v2_ipv4"]) | set(
                g["ipv4"] for g in port.get("gids") or [] if g.get("ipv4") and g.get("type") == "RoCE v2"))
            if port.get("link_layer") == "Ethernet" and port.get("netdev"):
                table["ipv4_addresses"] = ipv4.get(port["netdev"]) if ipv4 is not None else None
                if table["ipv4_addresses"] is None:
                    unknown_ipv4.setdefault("netdevs", []).append(port["netdev"])
            ports[key] = {"interval": round(elapsed, 3), "deltas": deltas, "rates": rates, "gid_table": table,
                          "ethtool": dict((k, v) for k, v in (eth1 or {}).items()
                                          if k in ETHTOOL_RATE_COUNTERS or k.endswith("_errors_phy")),
                          "counters": m1}
            downed[key] = (m0.get("link_downed"), m1.get("link_downed"))
    state, flaps = update_flaps(raw.get("state_before") or {}, downed, raw.get("now") or 0, raw.get("uptime"),
                                raw.get("boot_id"), window, grace)
    for key, flap in flaps.items():
        ports[key]["flaps"] = flap
    gdr = None
    if raw.get("gdr"):
        try:
            gdr = _gdr_readiness.derive(raw["gdr"])
        except ValueError as exc:
            errors.append({"tool": "gdr_readiness", "msg": str(exc)})
    nccl = None
    if raw.get("nccl_log") is not None:
        nccl = _nccl.parse_log(raw["nccl_log"], "nccl_log")
    lossless = derive_lossless(raw.get("lldp"), errors)
    facts["errors"] = list(facts.get("errors") or []) + errors
    observations = {"facts": facts, "ports": ports, "sm": raw.get("sm") or {}, "gdr": gdr, "nccl": nccl,
                    "lossless": lossless, "rdma_cm_roce_mode": derive_roce_modes(raw, facts), "nv": raw.get("nv"),
                    "interval": round(elapsed, 3), "source": raw.get("source"),
                    "unknown_ipv4": unknown_ipv4 if unknown_ipv4.get("netdevs") else None}
    return observations, state


def _netdev_ipv4(raw, errors):
    """({netdev: [IPv4]} from ``ip -j addr`` or None, {"reason": why a netdev's are unknown})."""
    text = raw.get("ip_addr")
    if text is None:
        return None, {"reason": "ip (iproute2) not installed"}
    if isinstance(text, dict):
        errors.append({"tool": "ip", "msg": "ip -j addr show failed (rc=%s): %s" % (text.get("rc"), text.get("error"))})
        return None, {"reason": "ip -j addr show failed"}
    try:
        return _iproute.ipv4_by_link(_iproute.parse_json(text, "ip -j addr show output")), {
            "reason": "not in this network namespace's 'ip -j addr show': a container sees the host's sysfs, not "
                      "its links"}
    except ValueError as exc:
        errors.append({"tool": "ip", "msg": str(exc)})
        return None, {"reason": "ip -j addr show printed what is not its JSON layout"}


def _dump(text, what, errors):
    """A parsed ``lldptool -t [-n]`` dump, or None (the failure or parse error into ``errors``)."""
    if text is None:
        return None
    if isinstance(text, dict):
        errors.append({"tool": "lldptool", "msg": "%s failed (rc=%s): %s" % (what, text.get("rc"), text.get("error"))})
        return None
    try:
        dump = _lldptool.parse_tlvs(text)
        dump.update(_lldptool.parse_identity(text))
        return dump
    except ValueError as exc:
        errors.append({"tool": "lldptool", "msg": "%s: %s" % (what, exc)})
        return None


def derive_lossless(lldp, errors):
    """Per netdev {admin_status, dcbx_mode, peer, local, host}: ``peer`` the switch's TLVs
    (None: unreadable), ``local`` lldpad's own, ``host`` the host's lossless settings
    {pfc, ets: {up2tc, tsa, tcbw}, app, source} from the NIC (mlnx_qos) when it printed them,
    else from lldpad's own TLVs. ``{"skipped": reason}`` passes through."""
    if not lldp:
        return None
    if lldp.get("skipped"):
        return {"skipped": lldp["skipped"]}
    out = {}
    for netdev, entry in sorted((lldp.get("interfaces") or {}).items()):
        peer = _dump(entry.get("peer"), "lldptool -t -n -i %s" % netdev, errors)
        local = _dump(entry.get("local"), "lldptool -t -i %s" % netdev, errors)
        qos = entry.get("mlnx_qos") or {}
        if qos.get("error"):
            errors.append({"tool": "mlnx_qos", "msg": qos["error"]})
            qos = {}
        host = {"pfc": None, "ets": None, "app": (local or {}).get("app"), "source": None}
        if qos.get("pfc") is not None:
            host.update(pfc=qos["pfc"], source="mlnx_qos -i %s" % netdev)
            if qos.get("prio_tc") is not None and qos.get("tsa") is not None:
                host["ets"] = {"up2tc": qos["prio_tc"], "tsa": qos["tsa"], "tcbw": qos.get("tcbw")}
        elif local and (local.get("pfc") or local.get("ets_cfg")):
            host.update(pfc=(local.get("pfc") or {}).get("enabled"), ets=local.get("ets_cfg"),
                        source="lldptool -t -i %s" % netdev)
        out[netdev] = {"admin_status": entry.get("admin_status"), "dcbx_mode": qos.get("dcbx"),
                       "peer": peer, "local_dcbx": (local or {}).get("dcbx"), "host": host}
    return out


# ---------------------------------------------------------------- support bundle

def redact(value):
    """``value`` (raw, nested) with every secret hidden by ``_secrets`` (the one list: OpenSM's
    ``sm_key``, ``sa_key``, ``m_key``, ``cc_key``, any ``*_key``, passwords, tokens, secrets,
    credentials), in every text layout (``name value``, ``NAME=value``, ``"name": "value"``,
    ``SM_Key.....value``, anywhere in a line) and under a dict key that is such a name: nothing
    secret leaves the node; the names stay visible."""
    return _secrets.redact(value)


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def bundle_files(raw):
    """[{name, content}]: ``health-raw.json`` and every tool output of ``raw`` as text."""
    if not isinstance(raw, dict) or raw.get("version") != RAW_VERSION:
        raise ValueError("not an rdma_health raw record (return_raw: true)")
    out = [{"name": BUNDLE_FILE, "content": json.dumps(raw, indent=1, sort_keys=True) + "\n"}]
    for number, sample in enumerate(raw.get("samples") or []):
        for port, text in sorted((sample.get("ethtool") or {}).items()):
            if isinstance(text, str):
                out.append({"name": "ethtool-S.%s.sample%d.txt" % (_safe(port), number), "content": text})
        out.append({"name": "sysfs-counters.sample%d.json" % number,
                    "content": json.dumps(sample.get("sysfs") or {}, indent=1, sort_keys=True) + "\n"})
    if raw.get("ibv_devinfo"):
        out.append({"name": "ibv_devinfo-v.txt", "content": raw["ibv_devinfo"]})
    if isinstance(raw.get("ip_addr"), str):
        out.append({"name": "ip-j-addr-show.json", "content": raw["ip_addr"]})
    for port, answer in sorted((raw.get("sm") or {}).items()):
        if answer.get("text"):
            out.append({"name": "sminfo.%s.txt" % _safe(port), "content": answer["text"]})
    gdr = raw.get("gdr") or {}
    for key, name in (("lspci_text", "lspci-vvv.txt"), ("proc_modules", "proc-modules.txt"),
                      ("proc_cmdline", "proc-cmdline.txt"), ("nvidia_driver_version", "nvidia-driver-version.txt")):
        if gdr.get(key):
            out.append({"name": name, "content": gdr[key]})
    if (raw.get("rdma") or {}).get("topo_text"):
        out.append({"name": "nvidia-smi-topo-m.txt", "content": raw["rdma"]["topo_text"]})
    for netdev, entry in sorted(((raw.get("lldp") or {}).get("interfaces") or {}).items()):
        for key, name in (("peer", "lldptool-t-n"), ("local", "lldptool-t")):
            if isinstance(entry.get(key), str):
                out.append({"name": "%s.%s.txt" % (name, _safe(netdev)), "content": entry[key]})
    if raw.get("nccl_log"):
        out.append({"name": "nccl.log", "content": raw["nccl_log"]})
    return out
