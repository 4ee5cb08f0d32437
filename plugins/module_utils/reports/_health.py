# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric health judging: the ONE implementation behind the ``health_findings`` filter
(the onboarding gate, ``health_gate``) and the ``health`` role (on demand, periodic timer,
support bundle). Pure: observations in, findings out.

Input: either ``ansible_facts.rdma`` (rdma_facts; the gate) or the observations of
``rdma_health`` (``{"facts": <rdma facts>, "ports": {...}, "sm": {...}, "gdr": {...},
"nccl": {...}, "interval": s}``). Each finding is ``{check, subject, severity, expected,
actual, diagnosis, remedy}``: the diagnosis command and remedy as the operators'
troubleshooting table words them. Thresholds are data (``checks``), per GPU and NIC model
in ``gpu_models`` / ``nic_models``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import math

from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import RDMA_DEVICE_MAX, check_name

SEVERITIES = ("error", "warning")

# check -> (severity, diagnosis, remedy). The rows of the troubleshooting table first.
CHECKS = {
    "link": ("error", "ibstatus; ibdiagnet (IB) / ethtool IF, ip link show IF (RoCE)",
             "check the cable and optics, then reset the port (ibportstate DEV PORT reset / ip link set IF down; up)"),
    "sm": ("error", "ibstat (SM lid); sminfo -C DEV -P PORT",
           "restart OpenSM (systemctl restart opensm) or check the SM node and its port"),
    "sm_master": ("error", "sminfo; saquery SMIR (every SM and its state)",
                  "keep exactly one MASTER: disable the switch-embedded SM or give OpenSM the highest priority"),
    "sm_priority": ("warning", "sminfo; saquery SMIR", "set the intended sm_priority in opensm.conf and restart OpenSM"),
    "pfc_storm": ("error", "ethtool -S IF | grep -E 'prio[0-7]_pause|global_pause|pause_storm'",
                  "adjust the PFC buffers / burst (mlnx_qos --buffer_size, switch headroom); find the host that "
                  "does not drain (a stuck receiver sends pause frames for ever)"),
    "ecn": ("warning", "cat /sys/class/infiniband/DEV/ports/N/hw_counters/{np_cnp_sent,rp_cnp_handled}",
            "raise the switch ECN thresholds (min/max KB on the RoCE queue)"),
    "discards": ("warning", "ethtool -S IF | grep discards_phy",
                 "check PFC on the RoCE priority (host and switch) and the receive buffers"),
    "symbol_errors": ("warning", "ethtool -S IF | grep symbol_err; perfquery DEV PORT (SymbolErrors)",
                      "check the cable and optics (reseat, clean, replace); watch for a flapping link"),
    "flap": ("error", "cat /sys/class/infiniband/DEV/ports/N/counters/link_downed; journalctl -k | grep -i 'link'",
             "check the cable and optics and the switch port; a link that flaps drops NCCL jobs"),
    "gid_table": ("error", "ibv_devinfo -v -d DEV (GID[...] lines vs gid_tbl_len); show_gids",
                  "enlarge the GID table / drop unneeded GIDs (addresses, VLANs, macvlans on the port)"),
    "gid_ipv4": ("error", "show_gids DEV; ip -4 addr show IF",
                 "give the netdev its IPv4 address (the kernel then adds the RoCE v2 GID); set NCCL_IB_GID_INDEX "
                 "to that GID's index"),
    "gdr": ("error", "GPU-NIC topology (nvidia-smi topo -m), ACS (lspci -vvv | grep ACSCtl), peer memory "
                     "(lsmod | grep nvidia_peermem)",
            "fix ACS / BIOS (disable ACS redirect on the switch ports between GPU and NIC), load nvidia_peermem "
            "or use dma-buf; check nvidia-smi topo -m"),
    "nccl_gdr": ("error", "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET: 'NET/IB : GPU Direct RDMA' and "
                          "'via NET/IB/N/GDRDMA' lines",
                 "fix ACS / BIOS, load peer memory (nvidia_peermem or dma-buf with NCCL_DMABUF_ENABLE=1), "
                 "check nvidia-smi topo -m and NCCL_NET_GDR_LEVEL"),
    "nccl_hca": ("error", "NCCL_DEBUG=INFO: the 'NET/IB : Using [i]hca:port/...' line",
                 "check NCCL_IB_HCA (prefix vs '=' exact names) and that every rail is ACTIVE"),
    "dmabuf": ("warning", "grep NCCL_DMABUF_ENABLE /etc/nccl.conf; GPU driver (open kernel module) and kernel >= 5.12",
               "set NCCL_DMABUF_ENABLE to match what the node supports (rdma.fabric.nccl_env)"),
    "lossless_agreement": ("error", "lldptool -t -n -i IF (the switch's PFC / ETS / APP TLVs); mlnx_qos -i IF",
                           "make host and switch agree on the RoCE priority: PFC, its ETS class and the APP entry"),
    "lossless_unverified": ("warning", "lldptool -t -n -i IF; mlnx_qos -i IF (DCBX mode)",
                            "let the host see the switch's DCBX TLVs, or check the switch port from the switch"),
    "rdma_cm_roce_mode": ("error", "cma_roce_mode -d DEV -p PORT (rdma_cm configfs default_roce_mode)",
                          "set RoCE v2, what NCCL and routed RoCE need: cma_roce_mode -d DEV -p PORT -m 2, or "
                          "rdma.fabric.dcqcn rdma_cm_roce_mode: v2 (the roce_qos role: roce_qos_rdma_cm_roce_mode: v2)"),
    "nv_pending": ("warning", "mlxconfig -d BDF -e query (Current against Next Boot)",
                   "reboot the node (or mlxfwreset) to make the values current: playbooks/nic_firmware.yml "
                   "-e nic_firmware_reboot=if_required; a value still not current after that is one the firmware does not take"),
    "firmware": ("warning", "flint -d BDF q; cat /sys/class/infiniband/DEV/fw_ver /sys/class/infiniband/DEV/board_id",
                 "update the NIC to the version its PSID should run (mlxfwmanager -u), then reboot"),
    "pcie": ("error", "lspci -vv -s BDF | grep -E 'LnkCap|LnkSta'", "check the slot, riser and BIOS PCIe settings"),
    "rate": ("error", "ibstat DEV PORT (Rate) / ethtool IF (Speed)", "check the cable, optics and the switch port speed"),
    "ports": ("error", "ibstat; ibdev2netdev", "every rail must be ACTIVE at the model's rate: check the missing ones"),
    "counters": ("warning", "perfquery DEV PORT; ethtool -S IF", "check the cable and optics, then clear the counters"),
    "numa": ("warning", "nvidia-smi topo -m; cat /sys/class/infiniband/DEV/device/numa_node",
             "move the NIC to a slot on its GPU's NUMA node / PCIe switch"),
    "rails": ("error", "nvidia-smi topo -m", "every GPU needs a NIC on its PCIe switch: check the cabling of the slots"),
    "devices": ("error", "ibv_devices; ibstat", "check that every NIC is seated and its driver (mlx5_core) loaded"),
    "gpus": ("error", "nvidia-smi -L", "check the GPU driver and that every GPU is seen"),
    "facts": ("error", "run the named tool by hand", "fix the tool (install it, run as root)"),
}

DEFAULT_CHECKS = {
    "expected_devices": None,
    "expected_gpus": None,
    "gpus_required": False,
    "ignore_devices": [],
    "min_rate_gbps": None,
    "pcie": True,
    "gpu_pcie_speed": False,
    "numa": True,
    "rails": True,
    "counter_limits": {
        "symbol_error": 0, "link_error_recovery": 0, "link_downed": 0, "port_rcv_errors": 0,
        "local_link_integrity_errors": 0, "excessive_buffer_overrun_errors": 0,
        "port_rcv_remote_physical_errors": 0,
    },
    # ethtool -S counters judged by value (the RoCE side of the basics)
    "ethtool_limits": {"rx_crc_errors_phy": 0, "rx_symbol_err_phy": 0},
    # rails (GPU-nearest ports) expected ACTIVE at >= min_rate_gbps; null: not checked
    "expected_ports": None,
    # per model, matched as a substring of the GPU model (nvidia-smi name) / the NIC hca_type:
    # {"H100": {"ports": 8, "min_rate_gbps": 400}}; values override the ones above
    "gpu_models": {},
    "nic_models": {},
    # rates, per second over the module's sampling interval
    "max_pause_per_s": 1000,
    "max_cnp_per_s": 20000,
    "max_discards_per_s": 0,
    "max_symbol_errors_per_s": 0,
    # link_downed increments within the sampling interval plus those kept over the flap window
    "max_flaps": 0,
    "gid_occupancy_max": 0.9,
    "sm": True,
    "sm_priority": None,
    "gdr": True,
    # what nccl_env sets NCCL_DMABUF_ENABLE to on the node (null: not judged)
    "dmabuf_enable": None,
    # host/switch agreement on PFC, the lossless priorities' ETS and the APP entries (lldptool -t -n)
    "lossless": True,
    # the RDMA-CM default RoCE mode of RoCE ports (rdma_cm configfs), where the node's configfs shows it
    "rdma_cm_roce_mode": True,
    # NIC non-volatile values set and not yet current (mlxconfig, where installed)
    "nv_pending": True,
    # PSID (board_id) -> the firmware version its NICs should run; without a pin, NICs of one PSID on
    # the node that run different versions are a finding
    "firmware_versions": {},
    "severity": {},
}
# nvidia-smi topo relations across the CPU interconnect: a rail there crosses sockets
CROSS_SOCKET = ("SYS",)
_NUMBER_KEYS = ("expected_devices", "expected_gpus", "min_rate_gbps", "expected_ports", "max_pause_per_s",
                "max_cnp_per_s", "max_discards_per_s", "max_symbol_errors_per_s", "max_flaps", "gid_occupancy_max",
                "sm_priority")


# The dictionaries of limits: one given merges over the default (a counter left out keeps its
# default limit), unless it holds ``replace: true`` (then it is the whole set: a counter left
# out is not judged). Replacing by accident would silently turn the other counters' checks off.
LIMIT_DICTS = ("counter_limits", "ethtool_limits", "gpu_models", "nic_models")
REPLACE = "replace"


class HealthError(ValueError):
    pass


def merge_checks(checks, field=None):
    """DEFAULT_CHECKS with ``checks`` over it, validated: unknown keys and bad values are
    refused naming the key and the value (as ``FIELD.key`` with ``field``, the option or the
    variable that holds ``checks``). A dict of LIMIT_DICTS merges over its default unless it
    holds ``replace: true``."""
    at = field + "." if field else ""
    merged = copy.deepcopy(DEFAULT_CHECKS)
    if not isinstance(checks or {}, dict):
        raise HealthError("%s=%r: a dict of check: value" % (field or "checks", checks))
    for key, value in (checks or {}).items():
        if key not in DEFAULT_CHECKS:
            raise HealthError("%sunknown check %r; known: %s" % (field + ": " if field else "", key,
                                                                 ", ".join(sorted(DEFAULT_CHECKS))))
        if key in LIMIT_DICTS and isinstance(value, dict):
            given = dict(value)
            replace = given.pop(REPLACE, False)
            if not isinstance(replace, bool):
                raise HealthError("%s%s.%s=%r: true (the dict is the whole set) or false (merged over the defaults)"
                                  % (at, key, REPLACE, replace))
            value = given if replace else copy.deepcopy(DEFAULT_CHECKS[key])
            if not replace:
                value.update(given)
        merged[key] = value
    for key in _NUMBER_KEYS:
        value = merged[key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or math.isnan(value) or value < 0):
            raise HealthError("%s%s=%r: a number >= 0 or null" % (at, key, value))
    for key in ("counter_limits", "ethtool_limits"):
        limits = merged[key] or {}
        if not isinstance(limits, dict):
            raise HealthError("%s%s=%r: a dict counter name: max value" % (at, key, limits))
        for name, value in limits.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise HealthError("%s%s.%s=%r: an integer >= 0" % (at, key, name, value))
    for key in ("gpu_models", "nic_models"):
        models = merged[key] or {}
        if not isinstance(models, dict):
            raise HealthError("%s%s=%r: a dict model: {ports, min_rate_gbps}" % (at, key, models))
        for model, spec in models.items():
            if not isinstance(spec, dict) or set(spec) - set(("ports", "min_rate_gbps", "gpus")):
                raise HealthError("%s%s.%s=%r: a dict with ports, gpus and/or min_rate_gbps" % (at, key, model, spec))
            for name, value in spec.items():
                if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                    raise HealthError("%s%s.%s.%s=%r: a number >= 0 or null" % (at, key, model, name, value))
    if merged["sm_priority"] is not None and merged["sm_priority"] > 15:
        raise HealthError("%ssm_priority=%r: an SM priority 0-15 or null" % (at, merged["sm_priority"]))
    versions = merged["firmware_versions"]
    if not isinstance(versions, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in versions.items()):
        raise HealthError("%sfirmware_versions=%r: a dict PSID: firmware version (strings)" % (at, versions))
    if merged["dmabuf_enable"] not in (None, 0, 1):
        raise HealthError("%sdmabuf_enable=%r: 0, 1 or null" % (at, merged["dmabuf_enable"]))
    ignored = merged["ignore_devices"] or []
    if not isinstance(ignored, list):
        raise HealthError("%signore_devices=%r: a list of RDMA device names" % (at, ignored))
    for index, name in enumerate(ignored):
        try:
            check_name("%signore_devices[%d]" % (at, index), name, "RDMA device", RDMA_DEVICE_MAX)
        except ValueError as exc:
            raise HealthError(str(exc))
    for name, severity in (merged["severity"] or {}).items():
        if name not in CHECKS or severity not in SEVERITIES:
            raise HealthError("%sseverity.%s=%r: a check (%s) and error or warning"
                              % (at, name, severity, ", ".join(sorted(CHECKS))))
    return merged


class _Findings(object):
    """The findings of one judging and, when ``unknown_skips``, the checks it could not run
    for want of a value (``skips``, each {check, subject, reason}): rdma_health's observations
    have a skipped-checks report; the gate's bare rdma facts have none, so there an unread
    value stays a finding (a node is let in on what was seen, never on what was not)."""

    def __init__(self, checks, unknown_skips=False):
        self.items = []
        self.skips = []
        self.unknown_skips = unknown_skips
        self.severity = checks["severity"] or {}

    def skip(self, check, subject, reason):
        """A check not run for a value that was not read; ports of one check and reason are
        merged into one entry (subjects joined), in the order first met."""
        for entry in self.skips:
            if entry["check"] == check and entry["reason"] == reason:
                entry["subject"] += ", " + subject
                return
        self.skips.append({"check": check, "subject": subject, "reason": reason})

    def add(self, check, subject, expected, actual, severity=None, diagnosis=None, remedy=None):
        default, diagnosis_, remedy_ = CHECKS[check]
        diagnosis, remedy = diagnosis or diagnosis_, remedy or remedy_
        self.items.append({"check": check, "subject": subject,
                           "severity": self.severity.get(check, severity or default),
                           "expected": expected, "actual": actual, "diagnosis": diagnosis, "remedy": remedy})


def _possible(pcie, key):
    values = [v for v in (pcie.get("max_link_" + key), pcie.get("upstream_max_link_" + key)) if v is not None]
    return min(values) if values else None


def _pcie(out, kind, name, pcie, judge_speed=True):
    if not pcie or not pcie.get("downgraded"):
        return
    speed, width = _possible(pcie, "speed"), _possible(pcie, "width")
    if not judge_speed and (width is None or pcie.get("current_link_width") is None
                            or pcie["current_link_width"] >= width):
        return
    out.add("pcie", "%s %s" % (kind, name), "%s GT/s x%s" % (speed, width),
            "%s GT/s x%s" % (pcie.get("current_link_speed"), pcie.get("current_link_width")))


def port_subject(name, port):
    return "%s port %s%s" % (name, port.get("port"), " (%s)" % port["netdev"] if port.get("netdev") else "")


def _model_spec(models, text):
    """The entry of ``models`` whose key is in ``text`` (the longest key wins), else {}."""
    keys = [key for key in (models or {}) if text and key.lower() in text.lower()]
    return models[max(keys, key=len)] if keys else {}


def _num(value):
    return "%g" % value if isinstance(value, float) else str(value)


def judge(observations, checks=None):
    """Findings (empty = healthy) for rdma facts or rdma_health observations."""
    return _judged(observations, checks).items


def _judged(observations, checks=None):
    """The :class:`_Findings` of rdma facts or rdma_health observations."""
    if not isinstance(observations, dict):
        raise HealthError("the input must be ansible_facts.rdma (rdma_facts) or rdma_health's observations")
    if "facts" in observations:
        obs = observations
    elif "devices" in observations:
        obs = {"facts": observations}
    else:
        raise HealthError("the input must be ansible_facts.rdma (rdma_facts) or rdma_health's observations")
    facts = obs["facts"] or {}
    if not isinstance(facts.get("devices"), dict):
        raise HealthError("facts.devices: missing; the input must come from rdma_facts or rdma_health")
    checks = merge_checks(checks)
    # rdma_health's observations (they hold "facts") report what could not be judged
    out = _Findings(checks, unknown_skips="facts" in observations)
    # with sampled ports, symbol errors and link downs are judged as deltas (rates, flaps),
    # not as values counted since boot
    _basics(out, facts, checks, ("symbol_error", "link_downed") if obs.get("ports") else ())
    _rates(out, facts, obs.get("ports") or {}, checks)
    _gid_tables(out, facts, obs.get("ports") or {}, checks)
    _subnet_manager(out, facts, obs.get("sm") or {}, checks)
    _gpudirect(out, facts, obs.get("gdr"), obs.get("nccl"), checks)
    _lossless(out, facts, obs.get("lossless"), checks)
    _roce_modes(out, facts, obs.get("rdma_cm_roce_mode"), checks)
    _firmware(out, facts, checks)
    _nv_pending(out, obs.get("nv"), checks)
    return out


def skipped(observations, checks=None):
    """Checks that could not run, each {check, reason}: never a healthy verdict made up."""
    checks = merge_checks(checks)
    out = []
    unknown = (observations or {}).get("unknown_ipv4") or {}
    ignored = set(checks["ignore_devices"] or [])
    facts = (observations or {}).get("facts") or {}
    netdevs = set(p.get("netdev") for n, d in (facts.get("devices") or {}).items() if n not in ignored
                  for p in d.get("ports") or [])
    unknown_netdevs = [n for n in unknown.get("netdevs") or [] if n in netdevs or not facts]
    if unknown_netdevs:
        out.append({"check": "gid_ipv4", "subject": ", ".join(sorted(set(unknown_netdevs))),
                    "reason": "IPv4 addresses unknown (%s): no address checked for its RoCE v2 GID"
                              % unknown["reason"]})
    lossless = (observations or {}).get("lossless") or {}
    if checks["lossless"] and lossless.get("skipped"):
        out.append({"check": "lossless_agreement", "reason": lossless["skipped"]})
    out.extend(_roce_modes_skipped(facts, (observations or {}).get("rdma_cm_roce_mode"), checks))
    nv = (observations or {}).get("nv")
    if checks["nv_pending"] and isinstance(nv, dict):
        if isinstance(nv.get("skipped"), str):
            out.append({"check": "nv_pending", "reason": nv["skipped"]})
        else:
            reasons = {}
            for name, seen in sorted(nv.items()):
                if isinstance(seen, dict) and seen.get("skipped"):
                    reasons.setdefault(seen["skipped"], []).append(name)
            out.extend({"check": "nv_pending", "subject": ", ".join(names), "reason": reason}
                       for reason, names in sorted(reasons.items()))
    # the ports whose state, rate or SM LID was not read (the judge's own skips)
    if isinstance(facts.get("devices"), dict):
        out.extend(_judged(observations, checks).skips)
    return out


def _firmware(out, facts, checks):
    """Each NIC's running firmware (sysfs ``fw_ver``) against the version pinned for its PSID
    (``board_id``) in ``firmware_versions``; without a pin, the NICs of one PSID on the node that
    do not run the version most of them run."""
    ignored = set(checks["ignore_devices"] or [])
    pins = checks["firmware_versions"] or {}
    by_psid = {}
    for name, device in sorted((facts.get("devices") or {}).items()):
        if name in ignored or not device.get("board_id") or not device.get("fw_ver"):
            continue
        by_psid.setdefault(device["board_id"], []).append((name, device["fw_ver"]))
    for psid, nics in sorted(by_psid.items()):
        if psid in pins:
            for name, version in nics:
                if version != pins[psid]:
                    out.add("firmware", name, "%s (pinned for %s)" % (pins[psid], psid), version)
            continue
        counts = {}
        for _name, version in nics:
            counts[version] = counts.get(version, 0) + 1
        if len(counts) < 2:
            continue
        common = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        for name, version in nics:
            if version != common:
                out.add("firmware", name, "%s (as %d of the node's %d %s NICs)" % (common, counts[common], len(nics), psid),
                        version)


def _nv_pending(out, nv, checks):
    """NIC non-volatile values set and not yet current (``read_nv_pending``): a reset is owed."""
    if not checks["nv_pending"] or not isinstance(nv, dict) or isinstance(nv.get("skipped"), str):
        return
    for name, seen in sorted(nv.items()):
        for key, value in sorted(((seen or {}).get("pending") or {}).items()):
            out.add("nv_pending", "%s %s" % (name, key), "%s current (set for next boot)" % value.get("next_boot"),
                    "%s until a reboot or firmware reset" % value.get("current"))


# the RDMA-CM default RoCE mode texts (drivers/infiniband/core/cache.c gid_type_str[])
ROCE_V2, ROCE_V1 = "RoCE v2", "IB/RoCE v1"


def _roce_ports(facts, checks):
    """(name, port) of every RoCE (Ethernet link layer) port not ignored, in name order."""
    ignored = set(checks["ignore_devices"] or [])
    for name, device in sorted((facts.get("devices") or {}).items()):
        if name in ignored:
            continue
        for port in device.get("ports") or []:
            if port.get("link_layer") == "Ethernet":
                yield name, port


def _roce_modes(out, facts, modes, checks):
    """The RDMA-CM default RoCE mode of each RoCE port: IB/RoCE v1 is an error (RDMA-CM
    connections that pick no GID type use RoCE v1, which NCCL over rdma_cm and routed RoCE
    cannot use). A port whose mode was not read is skipped (``skipped``), never passed."""
    if not checks["rdma_cm_roce_mode"] or modes is None:
        return
    for name, port in _roce_ports(facts, checks):
        seen = modes.get("%s/%s" % (name, port.get("port"))) or {}
        if seen.get("mode") == ROCE_V1:
            out.add("rdma_cm_roce_mode", port_subject(name, port), ROCE_V2, ROCE_V1,
                    diagnosis="cma_roce_mode -d %s -p %s" % (name, port.get("port")),
                    remedy="set RoCE v2, what NCCL and routed RoCE need: cma_roce_mode -d %s -p %s -m 2, or "
                           "rdma.fabric.dcqcn rdma_cm_roce_mode: v2 (the roce_qos role: roce_qos_rdma_cm_roce_mode: "
                           "v2)" % (name, port.get("port")))


def _roce_modes_skipped(facts, modes, checks):
    """The RoCE ports whose RDMA-CM default RoCE mode was not read (or reads as neither mode),
    one entry per reason, the ports as its subject."""
    if not checks["rdma_cm_roce_mode"] or modes is None:
        return []
    reasons = []
    subjects = {}
    for name, port in _roce_ports(facts, checks):
        seen = modes.get("%s/%s" % (name, port.get("port")))
        if seen is None:
            reason = "the RDMA-CM default RoCE mode was not read"
        elif seen.get("mode") in (ROCE_V2, ROCE_V1):
            continue
        elif seen.get("mode") is not None:
            reason = "default_roce_mode reads %r, neither %s nor %s" % (seen["mode"], ROCE_V2, ROCE_V1)
        else:
            reason = seen.get("skipped") or "the RDMA-CM default RoCE mode was not read"
        if reason not in subjects:
            reasons.append(reason)
        subjects.setdefault(reason, []).append(port_subject(name, port))
    return [{"check": "rdma_cm_roce_mode", "subject": ", ".join(subjects[r]), "reason": r} for r in reasons]


def _basics(out, facts, checks, as_deltas=()):
    subsets = set(facts.get("gather_subset") or [])
    ignored = set(checks["ignore_devices"] or [])
    devices = facts.get("devices") or {}
    gpus = facts.get("gpus") or []
    gpu_model = next((g.get("model") or g.get("name") for g in gpus if g.get("model") or g.get("name")), None)
    gpu_spec = _model_spec(checks["gpu_models"], gpu_model)
    expected_gpus = checks["expected_gpus"] if checks["expected_gpus"] is not None else gpu_spec.get("gpus")
    gpus_required = bool(checks["gpus_required"] or expected_gpus)
    for error in facts.get("errors") or []:
        if error.get("tool") == "nvidia-smi" and not gpus_required:
            continue
        out.add("facts", error.get("tool") or "tool", "readable", error.get("msg"))
    if checks["expected_devices"] is not None and len(devices) != checks["expected_devices"]:
        out.add("devices", "RDMA devices", checks["expected_devices"],
                "%d (%s)" % (len(devices), ", ".join(devices) or "none"))
    if expected_gpus is not None and len(gpus) != expected_gpus:
        out.add("gpus", "GPUs", expected_gpus, len(gpus))
    elif checks["gpus_required"] and not gpus:
        out.add("gpus", "GPUs", "at least one", 0)

    fastest = {}
    for name, device in devices.items():
        for port in device.get("ports") or []:
            key = (device.get("hca_type"), port.get("link_layer"))
            if port.get("rate_gbps") is not None and port.get("state") == "ACTIVE":
                fastest[key] = max(fastest.get(key, 0), port["rate_gbps"])

    rail_devices = set(r["device"] for r in facts.get("rails") or [])
    for name, device in devices.items():
        if name in ignored:
            continue
        nic_spec = _model_spec(checks["nic_models"], device.get("hca_type"))
        for port in device.get("ports") or []:
            subject = port_subject(name, port)
            if port.get("state") is None and out.unknown_skips:
                out.skip("link", subject, UNREAD_STATE)
                continue
            # a logical ACTIVE needs a physical LinkUp: an unread phys_state of an ACTIVE port is no finding
            if port.get("state") != "ACTIVE" or port.get("phys_state") not in ("LinkUp", None):
                out.add("link", subject, "ACTIVE/LinkUp", "%s/%s" % (_known(port.get("state")),
                                                                     _known(port.get("phys_state"))))
                continue
            wanted = checks["min_rate_gbps"]
            if wanted is None and name in rail_devices:
                wanted = gpu_spec.get("min_rate_gbps")
            if wanted is None:
                wanted = nic_spec.get("min_rate_gbps")
            if wanted is None:
                wanted = fastest.get((device.get("hca_type"), port.get("link_layer")))
            if wanted is not None and port.get("rate_gbps") is None and out.unknown_skips:
                out.skip("rate", subject, "the port's rate was not read (sysfs ports/N/rate): not judged "
                                          "against >= %s Gb/s" % _num(wanted))
            elif wanted is not None and port.get("rate_gbps") is not None and port["rate_gbps"] < wanted:
                out.add("rate", subject, ">= %s Gb/s" % _num(wanted), "%s Gb/s" % _num(port["rate_gbps"]))
            if "counters" in subsets:
                counters = port.get("counters") or {}
                for counter, limit in sorted((checks["counter_limits"] or {}).items()):
                    if counter not in as_deltas and counters.get(counter, 0) > limit:
                        out.add("counters", "%s %s" % (subject, counter), "<= %d" % limit, counters[counter])
        if checks["pcie"] and "pci" in subsets:
            _pcie(out, "NIC", "%s (%s)" % (name, device.get("pci_address")), device.get("pcie"))

    expected_ports = checks["expected_ports"] if checks["expected_ports"] is not None else gpu_spec.get("ports")
    if expected_ports is not None and gpus:
        floor = checks["min_rate_gbps"] if checks["min_rate_gbps"] is not None else gpu_spec.get("min_rate_gbps")
        good, unknown = [], []
        for name in sorted(rail_devices - ignored):
            for port in (devices.get(name) or {}).get("ports") or []:
                where = "%s/%s" % (name, port.get("port"))
                if port.get("state") == "ACTIVE" and (floor is None or (port.get("rate_gbps") or 0) >= floor):
                    good.append(where)
                elif port.get("state") is None or (port.get("state") == "ACTIVE" and port.get("rate_gbps") is None):
                    unknown.append(where)
        subject = "rail ports (%s)" % (gpu_model or "GPU node")
        wanted = "%d ACTIVE%s" % (expected_ports, " at >= %s Gb/s" % _num(floor) if floor else "")
        if len(good) < expected_ports <= len(good) + len(unknown) and out.unknown_skips:
            out.skip("ports", subject, "%s: %d seen (%s), %s not read (state or rate)"
                     % (wanted, len(good), ", ".join(good) or "none", ", ".join(unknown)))
        elif len(good) < expected_ports:
            out.add("ports", subject, wanted, "%d (%s)%s" % (len(good), ", ".join(good) or "none",
                                                             "; not read: %s" % ", ".join(unknown) if unknown else ""))

    if checks["pcie"] and "pci" in subsets:
        for gpu in gpus:
            _pcie(out, "GPU", "%s (%s)" % (gpu.get("name"), gpu.get("pci_address")), gpu.get("pcie"),
                  checks["gpu_pcie_speed"])
    rails = dict((rail["gpu"], rail) for rail in facts.get("rails") or [])
    for gpu in gpus:
        rail = rails.get(gpu.get("name"))
        if checks["rails"] and rail is None:
            out.add("rails", gpu.get("name"), "a NIC near the GPU", "none")
            continue
        if not checks["numa"] or rail is None:
            continue
        nic_numa = (devices.get(rail["device"]) or {}).get("numa_node")
        if rail.get("relation") in CROSS_SOCKET or (
                gpu.get("numa_node") is not None and nic_numa is not None and gpu["numa_node"] != nic_numa):
            out.add("numa", "%s -> %s" % (gpu.get("name"), rail["device"]), "GPU and NIC on one NUMA node",
                    "GPU on %s, NIC on %s (%s)" % (gpu.get("numa_node"), nic_numa, rail.get("relation")))


UNREAD_STATE = ("the port state was not read (sysfs ports/N/state): no check that needs an ACTIVE port "
                "(link, rate, counter rates, subnet manager, lossless agreement) is judged")


def _known(value):
    """A read value as text; an unread one (None) as 'unknown'."""
    return "unknown" if value is None else value


def _port_views(facts, ports, ignored):
    """(name, port fact, observation) for every port that has an observation."""
    for name, device in (facts.get("devices") or {}).items():
        if name in ignored:
            continue
        for port in device.get("ports") or []:
            seen = ports.get("%s/%s" % (name, port.get("port")))
            if seen:
                yield name, port, seen


def _rates(out, facts, ports, checks):
    ignored = set(checks["ignore_devices"] or [])
    for name, port, seen in _port_views(facts, ports, ignored):
        subject = port_subject(name, port)
        rates = seen.get("rates") or {}
        interval = seen.get("interval")
        over = " over %gs" % interval if interval else ""
        for counter, limit in sorted((checks["ethtool_limits"] or {}).items()):
            value = (seen.get("ethtool") or {}).get(counter)
            if value is not None and value > limit:
                out.add("counters", "%s %s" % (subject, counter), "<= %d" % limit, value)
        if port.get("state") != "ACTIVE":
            continue     # a down port has no traffic: its link finding says it all
        pause = max(rates.get("rx_pause") or 0, rates.get("tx_pause") or 0)
        storm = (seen.get("deltas") or {}).get("pause_storm_events") or 0
        if pause > checks["max_pause_per_s"] or storm:
            out.add("pfc_storm", subject, "<= %s pause frames/s, no pause storm event" % _num(checks["max_pause_per_s"]),
                    "rx %s/s, tx %s/s%s, %d storm event(s)" % (_num(rates.get("rx_pause") or 0),
                                                               _num(rates.get("tx_pause") or 0), over, storm))
        cnp = max(rates.get("cnp_sent") or 0, rates.get("cnp_handled") or 0)
        if cnp > checks["max_cnp_per_s"]:
            out.add("ecn", subject, "<= %s CNPs/s" % _num(checks["max_cnp_per_s"]),
                    "%s sent/s, %s handled/s%s" % (_num(rates.get("cnp_sent") or 0),
                                                   _num(rates.get("cnp_handled") or 0), over))
        if (rates.get("rx_discards_phy") or 0) > checks["max_discards_per_s"]:
            out.add("discards", subject, "<= %s rx_discards_phy/s" % _num(checks["max_discards_per_s"]),
                    "%s/s%s" % (_num(rates["rx_discards_phy"]), over))
        if (rates.get("symbol_errors") or 0) > checks["max_symbol_errors_per_s"]:
            out.add("symbol_errors", subject, "<= %s symbol errors/s" % _num(checks["max_symbol_errors_per_s"]),
                    "%s/s%s" % (_num(rates["symbol_errors"]), over))
        flaps = seen.get("flaps")
        if flaps and not flaps.get("grace") and (flaps.get("count") or 0) > checks["max_flaps"]:
            out.add("flap", subject, "<= %d link down event(s) in %s" % (checks["max_flaps"], flaps.get("window")),
                    "%d (link_downed %s)" % (flaps["count"], flaps.get("value")))


def _gid_tables(out, facts, ports, checks):
    ignored = set(checks["ignore_devices"] or [])
    rails = set((r["device"], r.get("port")) for r in facts.get("rails") or [])
    for name, port, seen in _port_views(facts, ports, ignored):
        table = seen.get("gid_table")
        if not table or port.get("link_layer") != "Ethernet":
            continue
        subject = port_subject(name, port)
        size, used = table.get("size"), table.get("used")
        if size and used is not None and (used >= size or float(used) / size > checks["gid_occupancy_max"]):
            out.add("gid_table", subject, "<= %d%% of %d GIDs used" % (round(checks["gid_occupancy_max"] * 100), size),
                    "%d of %d used%s" % (used, size, " (full)" if used >= size else ""),
                    severity=None if used >= size else "warning")
        # the netdev's own IPv4 addresses (ip -j addr), not the GIDs': an address the kernel gave no
        # RoCE v2 GID (a full table, say) is what keeps a node out and makes NCCL pick a wrong index
        missing = [a for a in table.get("ipv4_addresses") or [] if a not in (table.get("roce_v2_ipv4") or [])]
        if missing:
            out.add("gid_ipv4", subject, "a RoCE v2 GID for each IPv4 address", "none for %s" % ", ".join(missing))
        elif (name, port.get("port")) in rails and port.get("state") == "ACTIVE" and not table.get("roce_v2_ipv4"):
            out.add("gid_ipv4", subject, "a RoCE v2 GID with the rail's IPv4 address", "no IPv4 RoCE v2 GID")


def _subnet_manager(out, facts, sm, checks):
    if not checks["sm"]:
        return
    ignored = set(checks["ignore_devices"] or [])
    for name, device in (facts.get("devices") or {}).items():
        if name in ignored:
            continue
        for port in device.get("ports") or []:
            # an unread state: the link check's skip names the SM among what is not judged
            if port.get("link_layer") != "InfiniBand" or port.get("state") != "ACTIVE":
                continue
            subject = port_subject(name, port)
            answer = sm.get("%s/%s" % (name, port.get("port")))
            if port.get("sm_lid") is None and answer is None and out.unknown_skips:
                out.skip("sm", subject, "the port's SM LID was not read (sysfs ports/N/sm_lid) and sminfo was not "
                                        "run: its subnet manager is not judged")
                continue
            if port.get("sm_lid") == 0 or (answer is None and not port.get("sm_lid")):
                out.add("sm", subject, "an SM LID", "SM lid %s" % _known(port.get("sm_lid")))
                continue
            if answer is None:
                continue       # sminfo not run (absent): the SM LID is all there is
            if answer.get("error"):
                out.add("sm", subject, "SM lid %s answers sminfo" % _known(port.get("sm_lid")), answer["error"])
                continue
            facts_ = answer.get("facts") or {}
            count = facts_.get("master_count")
            if count is not None and count != 1:
                out.add("sm_master", subject, "exactly one MASTER SM", "%d MASTER (%s)" % (count, ", ".join(
                    "lid %s priority %s" % (e.get("lid"), e.get("priority"))
                    for e in facts_.get("sm_ports") or [] if e.get("state") == "master") or "none"))
            master = facts_.get("master") or {}
            if checks["sm_priority"] is not None and master and master.get("priority") != checks["sm_priority"]:
                out.add("sm_priority", subject, "MASTER priority %s" % checks["sm_priority"],
                        "lid %s priority %s" % (master.get("lid"), master.get("priority")))


def _gpudirect(out, facts, gdr, nccl, checks):
    if checks["gdr"] and gdr and gdr.get("gpu_count"):
        peer = gdr.get("peer_memory") or {}
        if not peer.get("method"):
            out.add("gdr", "peer memory", "nvidia_peermem loaded or dma-buf (open GPU kernel module, kernel >= 5.12)",
                    "none (modules loaded: %s)" % (", ".join(peer.get("modules_loaded") or []) or "none"))
        for gpu in gdr.get("gpus") or []:
            if gpu.get("acs_redirect"):
                bridges = [e["bdf"] for e in gpu.get("acs_path") or [] if e.get("redirect")]
                out.add("gdr", "%s -> %s ACS" % (gpu.get("gpu"), gpu.get("nic")), "ACS redirect off on the path",
                        "redirect on at %s" % ", ".join(bridges))
        if checks["dmabuf_enable"] is not None and "dma_buf" in peer:
            wanted = _nccl.dmabuf_enable(peer)       # the decision nccl_env writes
            if int(bool(checks["dmabuf_enable"])) != wanted:
                why = "dma-buf %ssupported%s" % ("" if peer.get("dma_buf") else "not ",
                                                 ", %s loaded" % ", ".join(peer["modules_loaded"])
                                                 if peer.get("modules_loaded") else "")
                out.add("dmabuf", "NCCL_DMABUF_ENABLE", "%d (%s)" % (wanted, why),
                        "%d" % bool(checks["dmabuf_enable"]))
    if not nccl:
        return
    rails = [r["device"] for r in facts.get("rails") or []]
    for host, node in sorted((nccl.get("nodes") or {}).items()):
        where = "NCCL log%s" % (" (%s)" % host if host else "")
        if node.get("no_device"):
            out.add("nccl_hca", where, "NCCL uses the IB/RoCE HCAs", "NET/IB : No device found (network %s)"
                    % node.get("network"))
            continue
        chosen = [h["name"] for h in node.get("hcas") or []]
        missing = [r for r in rails if r not in chosen]
        if chosen and missing:
            out.add("nccl_hca", where, "NCCL uses every rail (%s)" % ", ".join(rails),
                    "uses %s; not %s" % (", ".join(chosen), ", ".join(missing)), severity="warning")
        for hca in node.get("hcas") or []:
            if hca.get("gdr_used") is False or (hca.get("gdr_used") is None and hca.get("gdr_enabled") is False):
                out.add("nccl_gdr", "%s HCA %s" % (where, hca["name"]), "GPUDirect RDMA (GDRDMA) on the HCA",
                        "not used (%s)" % ("channels without /GDRDMA" if hca.get("channels") else
                                           "NET/IB : GPU Direct RDMA Disabled"))


SELECTOR_WORDS = {1: "ethertype", 2: "TCP port", 3: "UDP port", 4: "TCP/UDP port", 5: "DSCP"}
# lldptool -V names of the TLVs (CEE switches: one "CEE DCBX TLV" holds them all)
_TLV_V = {"pfc": "PFC", "ets": "ETS-CFG", "app": "APP"}


def _ets_of(ets, prio):
    """(TSA, bandwidth %) of a priority's traffic class; CEE priority groups (``tsa`` None):
    PGID 15 is strict, any other an ETS share. None when unknown."""
    if not ets or ets.get("up2tc") is None:
        return None
    tc = ets["up2tc"][prio]
    tcbw = ets.get("tcbw") or [None] * 16
    if ets.get("tsa") is None:
        return ("strict", None) if tc == 15 else ("ets", tcbw[tc] if tc < len(tcbw) else None)
    if tc >= len(ets["tsa"]):
        return None
    tsa = ets["tsa"][tc]
    return tsa, (tcbw[tc] if tsa == "ets" and tc < len(tcbw) else None)


def _ets_text(value):
    return "%s %s%%" % value if value[1] is not None else value[0]


def _prios(prios):
    return ", ".join(str(p) for p in prios) if prios else "none"


def _intent_pfc(lossless):
    """The PFC priorities of the switch_qos intent when the ``lossless`` check holds one
    (``{"pfc_priorities": [...]}``, areas/switch_qos.intent); None for true/false."""
    if isinstance(lossless, dict) and isinstance(lossless.get("pfc_priorities"), list):
        return sorted(p for p in lossless["pfc_priorities"] if isinstance(p, int) and not isinstance(p, bool))
    return None


def _lossless(out, facts, lossless, checks):
    """Host and switch agree on the lossless settings of every ACTIVE RoCE port: PFC enabled
    priorities, the ETS (TSA, share) of each PFC priority and the host's APP entries (priority
    per protocol / DSCP) against the TLVs the switch sends (IEEE 802.1Qaz or CEE DCBX). When
    the host cannot see them (firmware DCBX, lldpad not receiving, a switch sending none) that
    is said (lossless_unverified), not taken for a disagreement. With the switch_qos intent as the
    check's value (a dict with ``pfc_priorities``), ends that agree with each other but not with
    the intent are a finding too."""
    if not checks["lossless"] or not lossless or lossless.get("skipped"):
        return
    ignored = set(checks["ignore_devices"] or [])
    active = {}
    for name, device in (facts.get("devices") or {}).items():
        for port in device.get("ports") or []:
            if port.get("netdev") and port.get("link_layer") == "Ethernet" and name not in ignored:
                active[port["netdev"]] = port.get("state") == "ACTIVE" or active.get(port["netdev"], False)
    for netdev, view in sorted(lossless.items()):
        if not active.get(netdev):
            continue        # down (its link finding says it) or ignored
        peer, host = view.get("peer"), view.get("host") or {}
        if peer is None:
            continue        # unreadable: a facts finding names the tool's error
        diag = "lldptool -t -n -i %s" % netdev
        cee = peer.get("dcbx") in ("cee", "cin")
        if peer.get("dcbx") is None:
            _unverified(out, netdev, view, peer, diag)
            continue
        if view.get("local_dcbx") and view["local_dcbx"] != peer["dcbx"]:
            out.add("lossless_agreement", "%s DCBX" % netdev, "the same DCBX version on host and switch",
                    "host %s, switch %s" % (view["local_dcbx"].upper(), peer["dcbx"].upper()),
                    diagnosis="lldptool -t -i %s; %s" % (netdev, diag),
                    remedy="set one DCBX version on both ends: the switch port's DCBX mode (IEEE or CEE) or the "
                           "host's (lldptool -T -i %s -V IEEE-DCBX mode=reset for IEEE)" % netdev)
        src = host.get("source") or "host"

        def add(setting, expected, actual, tlv, remedy):
            out.add("lossless_agreement", "%s %s" % (netdev, setting), expected, actual,
                    diagnosis="%s%s; %s" % (diag, "" if cee else " -V %s" % _TLV_V[tlv], src), remedy=remedy)

        pfc = host.get("pfc")
        theirs = (peer.get("pfc") or {}).get("enabled")
        want = _intent_pfc(checks["lossless"])
        if pfc is not None and want is not None and theirs is not None and sorted(pfc) == sorted(theirs) != want:
            # both ends agree with each other, not with the intent (switch_qos: the hosts' roce_qos settings)
            add("PFC", "PFC on priorities %s (switch_qos intent)" % _prios(want), "host and switch: %s" % _prios(pfc),
                "pfc", "converge both ends to the intent: rdma.fabric.roce_qos on the host, playbooks/switch_qos.yml "
                       "on the switch")
        elif pfc is not None:
            if peer.get("pfc") is None:
                add("PFC", "PFC on priorities %s (host)" % _prios(pfc), "the switch sends no PFC TLV", "pfc",
                    "enable PFC (and its DCBX advertisement) on the switch port for priorities %s" % _prios(pfc))
            elif theirs != pfc:
                add("PFC", "PFC on priorities %s (host)" % _prios(pfc), "switch: %s" % _prios(theirs), "pfc",
                    "enable PFC on the same priorities on both ends: on the switch port priorities %s, or on the "
                    "host (mlnx_qos -i %s --pfc ..., rdma.fabric.roce_qos)" % (_prios(pfc), netdev))
        for prio in pfc or []:
            mine, other = _ets_of(host.get("ets"), prio), _ets_of(peer.get("ets_cfg"), prio)
            if mine is None:
                continue
            if peer.get("ets_cfg") is None:
                add("ETS priority %d" % prio, "%s (host)" % _ets_text(mine),
                    "the switch sends no %s" % ("priority groups" if cee else "ETS-CFG TLV"), "ets",
                    "advertise ETS from the switch port (DCBX ETS configuration)")
            elif other is not None and (mine[0] != other[0] or (
                    mine[1] is not None and other[1] is not None and mine[1] != other[1])):
                add("ETS priority %d" % prio, "%s (host)" % _ets_text(mine), "switch: %s" % _ets_text(other), "ets",
                    "give the lossless priority the same class on both ends: its TSA and bandwidth share on the "
                    "switch port, or on the host (mlnx_qos -i %s --tsa ... --tcbw ...)" % netdev)
        apps = host.get("app") or []
        for app in apps:
            if cee and app["selector"] == 5:
                continue    # CEE has no DSCP APP entries
            what = "%s %s" % (SELECTOR_WORDS.get(app["selector"], "selector %d" % app["selector"]),
                              "0x%04x" % app["protocol"] if app["selector"] == 1 else app["protocol"])
            if peer.get("app") is None:
                add("APP %s" % what, "priority %d (host)" % app["priority"], "the switch sends no APP TLV", "app",
                    "advertise the APP table from the switch port (%s -> priority %d)" % (what, app["priority"]))
                break
            # CEE has one TCP/UDP port selector (mapped to IEEE 4): it stands for IEEE 2, 3 and 4
            sels = (2, 3, 4) if cee and app["selector"] in (2, 3, 4) else (app["selector"],)
            prios = sorted(set(a["priority"] for a in peer["app"]
                               if a["selector"] in sels and a["protocol"] == app["protocol"]))
            if app["priority"] not in prios or len(prios) > 1:
                add("APP %s" % what, "priority %d (host)" % app["priority"],
                    "switch: %s" % ("priority %s" % _prios(prios) if prios else "no entry"), "app",
                    "map %s to priority %d on both ends: the switch's APP table, or the host's (lldptool -T -i %s "
                    "-V APP app=%d,%d,%d)" % (what, app["priority"], netdev, app["priority"], app["selector"],
                                              app["protocol"]))


def _unverified(out, netdev, view, peer, diag):
    """Why the host sees no DCB TLV from the switch: firmware DCBX, lldpad not receiving, no
    LLDP neighbour, or a neighbour that sends LLDP without DCBX."""
    status = view.get("admin_status")
    if view.get("dcbx_mode") == "fw":
        out.add("lossless_unverified", "%s DCBX" % netdev, "DCBX in the OS (lldpad) to compare host and switch",
                "DCBX is firmware-controlled (mlnx_qos: 'DCBX mode: Firmware controlled'): the NIC answers the "
                "switch itself and lldpad sees no DCB TLVs; agreement not checked",
                diagnosis="mlnx_qos -i %s; %s" % (netdev, diag),
                remedy="check the switch port's PFC/ETS/APP on the switch, or hand DCBX to the OS (mlnx_qos -i %s "
                       "--dcbx os; rdma.fabric.lldp_dcb switch_dcbx_to_os) to check it here" % netdev)
    elif status in ("disabled", "tx"):
        out.add("lossless_unverified", "%s LLDP" % netdev, "lldpad receives LLDP (adminStatus rx or rxtx)",
                "adminStatus=%s: the switch's TLVs are not read; agreement not checked" % status,
                diagnosis="lldptool get-lldp -i %s adminStatus" % netdev,
                remedy="lldptool set-lldp -i %s adminStatus=rxtx" % netdev)
    elif not peer.get("chassis_id"):
        out.add("lossless_unverified", "%s LLDP" % netdev, "an LLDP neighbour (the switch)", "none seen by lldpad",
                diagnosis="%s; lldptool -S -i %s" % (diag, netdev),
                remedy="enable LLDP on the switch port (and check the cabling to it)")
    else:
        out.add("lossless_unverified", "%s DCBX" % netdev, "the switch sends DCBX TLVs (PFC, ETS, APP)",
                "switch %s sends LLDP without DCBX TLVs; agreement not checked"
                % (peer.get("system_name") or peer.get("chassis_id")),
                diagnosis=diag, remedy="enable DCBX (IEEE or CEE) on the switch port, or check its PFC/ETS/APP there")
