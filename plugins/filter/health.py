# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma.fabric.health_findings: what keeps a GPU node out of the fabric, judged from one
rdma_facts gather (devices, pci, gpus, counters). Pure; documentation in health_findings.yml.

Each finding names the check, the subject (device, port, GPU), what was expected and what
was found, so an operator can act on it without reading the facts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

DEFAULT_CHECKS = {
    "expected_devices": None,
    "expected_gpus": None,
    # a GPU node: no GPU found, or nvidia-smi failing, is a finding (elsewhere nvidia-smi
    # failing for want of a driver is normal)
    "gpus_required": False,
    "ignore_devices": [],
    "min_rate_gbps": None,
    "pcie": True,
    # GPUs lower their PCIe link speed when idle (power saving); judge their width only
    # unless the check runs under load.
    "gpu_pcie_speed": False,
    "numa": True,
    "rails": True,
    # IB PortCounters that a healthy new link keeps at zero (max allowed value)
    "counter_limits": {
        "symbol_error": 0, "link_error_recovery": 0, "link_downed": 0, "port_rcv_errors": 0,
        "local_link_integrity_errors": 0, "excessive_buffer_overrun_errors": 0,
        "port_rcv_remote_physical_errors": 0,
    },
}
# nvidia-smi topo relations across the CPU interconnect: a rail there crosses sockets
CROSS_SOCKET = ("SYS",)


def _finding(check, subject, expected, actual):
    return {"check": check, "subject": subject, "expected": expected, "actual": actual}


def _checks(checks):
    merged = dict(DEFAULT_CHECKS)
    for key, value in (checks or {}).items():
        if key not in DEFAULT_CHECKS:
            raise AnsibleFilterError("health_findings: unknown check %r; known: %s"
                                     % (key, ", ".join(sorted(DEFAULT_CHECKS))))
        merged[key] = value
    for key in ("expected_devices", "expected_gpus", "min_rate_gbps"):
        value = merged[key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            raise AnsibleFilterError("health_findings: %s=%r: a number >= 0 or null" % (key, value))
    limits = merged["counter_limits"] or {}
    if not isinstance(limits, dict):
        raise AnsibleFilterError("health_findings: counter_limits=%r: a dict counter name: max value" % (limits,))
    for name, value in limits.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise AnsibleFilterError("health_findings: counter_limits.%s=%r: an integer >= 0" % (name, value))
    return merged


def _possible(pcie, key):
    """What the link can train to: the lower capability of the function and its upstream port."""
    values = [v for v in (pcie.get("max_link_" + key), pcie.get("upstream_max_link_" + key)) if v is not None]
    return min(values) if values else None


def _pcie_findings(kind, name, pcie, judge_speed=True):
    if not pcie or not pcie.get("downgraded"):
        return []
    speed, width = _possible(pcie, "speed"), _possible(pcie, "width")
    if not judge_speed and (width is None or pcie.get("current_link_width") is None
                            or pcie["current_link_width"] >= width):
        return []
    return [_finding("pcie", "%s %s" % (kind, name), "%s GT/s x%s" % (speed, width),
                     "%s GT/s x%s" % (pcie.get("current_link_speed"), pcie.get("current_link_width")))]


def health_findings(facts, checks=None):
    """List of findings (empty = healthy) for ``ansible_facts.rdma``."""
    if not isinstance(facts, dict) or "devices" not in facts:
        raise AnsibleFilterError("health_findings: the input must be ansible_facts.rdma (rdma.fabric.rdma_facts)")
    checks = _checks(checks)
    subsets = set(facts.get("gather_subset") or [])
    ignored = set(checks["ignore_devices"] or [])
    devices = facts.get("devices") or {}
    findings = []

    gpus_required = bool(checks["gpus_required"] or checks["expected_gpus"])
    for error in facts.get("errors") or []:
        if error.get("tool") == "nvidia-smi" and not gpus_required:
            continue
        findings.append(_finding("facts", error.get("tool") or "tool", "readable", error.get("msg")))
    if checks["expected_devices"] is not None and len(devices) != checks["expected_devices"]:
        findings.append(_finding("devices", "RDMA devices", checks["expected_devices"],
                                 "%d (%s)" % (len(devices), ", ".join(devices) or "none")))
    gpus = facts.get("gpus") or []
    if checks["expected_gpus"] is not None and len(gpus) != checks["expected_gpus"]:
        findings.append(_finding("gpus", "GPUs", checks["expected_gpus"], len(gpus)))
    elif checks["gpus_required"] and not gpus:
        findings.append(_finding("gpus", "GPUs", "at least one", 0))

    # Peer rate: a port slower than the fastest port of the same model and link layer trained down.
    fastest = {}
    for name, device in devices.items():
        for port in device.get("ports") or []:
            key = (device.get("hca_type"), port.get("link_layer"))
            if port.get("rate_gbps") is not None and port.get("state") == "ACTIVE":
                fastest[key] = max(fastest.get(key, 0), port["rate_gbps"])

    for name, device in devices.items():
        if name in ignored:
            continue
        for port in device.get("ports") or []:
            subject = "%s port %s%s" % (name, port.get("port"), " (%s)" % port["netdev"] if port.get("netdev") else "")
            if port.get("state") != "ACTIVE" or port.get("phys_state") != "LinkUp":
                findings.append(_finding("link", subject, "ACTIVE/LinkUp",
                                         "%s/%s" % (port.get("state"), port.get("phys_state"))))
                continue
            wanted = checks["min_rate_gbps"]
            if wanted is None:
                wanted = fastest.get((device.get("hca_type"), port.get("link_layer")))
            if wanted is not None and port.get("rate_gbps") is not None and port["rate_gbps"] < wanted:
                findings.append(_finding("rate", subject, ">= %s Gb/s" % wanted, "%s Gb/s" % port["rate_gbps"]))
            if "counters" in subsets:
                counters = port.get("counters") or {}
                for counter, limit in sorted((checks["counter_limits"] or {}).items()):
                    if counters.get(counter, 0) > limit:
                        findings.append(_finding("counters", "%s %s" % (subject, counter),
                                                 "<= %d" % limit, counters[counter]))
        if checks["pcie"] and "pci" in subsets:
            findings.extend(_pcie_findings("NIC", "%s (%s)" % (name, device.get("pci_address")), device.get("pcie")))

    if checks["pcie"] and "pci" in subsets:
        for gpu in gpus:
            findings.extend(_pcie_findings("GPU", "%s (%s)" % (gpu.get("name"), gpu.get("pci_address")),
                                           gpu.get("pcie"), checks["gpu_pcie_speed"]))
    rails = dict((rail["gpu"], rail) for rail in facts.get("rails") or [])
    for gpu in gpus:
        rail = rails.get(gpu.get("name"))
        if checks["rails"] and rail is None:
            findings.append(_finding("rails", gpu.get("name"), "a NIC near the GPU", "none"))
            continue
        if not checks["numa"] or rail is None:
            continue
        nic_numa = (devices.get(rail["device"]) or {}).get("numa_node")
        if rail.get("relation") in CROSS_SOCKET or (
                gpu.get("numa_node") is not None and nic_numa is not None and gpu["numa_node"] != nic_numa):
            findings.append(_finding("numa", "%s -> %s" % (gpu.get("name"), rail["device"]),
                                     "GPU and NIC on one NUMA node",
                                     "GPU on %s, NIC on %s (%s)" % (gpu.get("numa_node"), nic_numa, rail.get("relation"))))
    return findings


class FilterModule(object):
    def filters(self):
        return {"health_findings": health_findings}
