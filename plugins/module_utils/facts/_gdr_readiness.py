# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA readiness facts (logic of ``gdr_readiness``).

One read of the host (``read_host``, the only I/O seam) joins what the other modules
already know how to read:

* ``_rdma_facts.gather`` - GPUs, their nearest NIC (rail), relation code and NUMA nodes;
* ``_pcie_acs`` - ``lspci -D -nn -vvv`` and the ACS audit of the bridges between each GPU
  and NIC (the same endpoints and paths as ``pcie_acs``), kept to the paths GPUDirect
  RDMA uses: each GPU to its nearest NIC(s);
* peer memory - ``$SYSFS_PATH/module/<name>/initstate`` (``/proc/modules`` when that
  sysfs has no ``module`` directory)
  (``nvidia_peermem``, the MLNX_OFED ``nv_peer_mem``), the NVIDIA driver's own
  ``/proc/driver/nvidia/version`` (open kernel module or not) and the kernel release
  (dma-buf GPUDirect needs the open kernel module and Linux >= 5.12);
* ``/run/systemd/system`` - whether systemd is the service manager (``sd_booted``);
* ``/proc/cmdline`` for the IOMMU mode (reported, not a blocker: with ACS redirect off,
  GPU-NIC traffic below a switch does not reach the IOMMU).

``derive`` is pure: it turns those raw inputs into the ``gdr`` facts, per GPU a verdict
from ``_pcie_acs.gdr_verdict`` with every reason.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError, read_sysfs, read_text, run_tool, sysfs_path
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _bundle
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _pcie_acs as acs
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _rdma_facts as rdma

PEER_MEMORY_MODULES = ("nvidia_peermem", "nv_peer_mem")
GDR_LEVELS = ("PIX", "PXB", "PHB", "SYS")
DMA_BUF_MIN_KERNEL = (5, 12)
CAPTURED_KEYS = ("nvidia_smi_topo", "nvidia_smi_gpus", "ibdev2netdev", "ibstat", "lspci", "proc_modules",
                 "nvidia_driver_version", "kernel_release", "proc_cmdline")


# --------------------------------------------------------------------------------------
# small parsers (pure)
# --------------------------------------------------------------------------------------

def parse_proc_modules(text, source="proc_modules"):
    """Module names of ``/proc/modules`` (``name size refcount deps state address``); a
    line of another layout raises ValueError naming ``source``, the line and its number."""
    names = []
    for number, line in enumerate((text or "").splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 3 or not fields[1].isdigit() or not (fields[2].isdigit() or fields[2] == "-"):
            raise ValueError("%s line %d '%s': not a /proc/modules line (name size refcount deps state "
                             "address)" % (source, number, line.strip()[:80]))
        names.append(fields[0])
    return names


def kernel_version(release):
    """``5.15.0-91-generic`` -> (5, 15); None when unreadable."""
    match = re.match(r"^\s*(\d+)\.(\d+)", release or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def parse_driver_version(text):
    """``/proc/driver/nvidia/version``: (version, open kernel module?).

    ``NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.129.03  Release Build ...``
    (the proprietary module prints ``NVIDIA UNIX x86_64 Kernel Module  535.129.03 ...``)."""
    for line in (text or "").splitlines():
        if line.startswith("NVRM version:"):
            match = re.search(r"\s(\d+\.\d+(?:\.\d+)?)\s", line + " ")
            return (match.group(1) if match else None), ("Open Kernel Module" in line)
    return None, False


def iommu_state(cmdline):
    """IOMMU mode from the running command line: passthrough True/False, None when the
    command line does not say (the kernel's build default applies)."""
    words = (cmdline or "").split()
    passthrough = None
    for word in words:      # the kernel keeps the last occurrence
        name, dummy, value = word.partition("=")
        if name == "iommu" and value in ("pt", "nopt", "off"):
            passthrough = value == "pt"
        elif name == "iommu.passthrough" and value in ("1", "0", "y", "n", "on", "off"):
            passthrough = value in ("1", "y", "on")
    arguments = [w for w in words if w.split("=", 1)[0] in ("iommu", "iommu.passthrough", "intel_iommu", "amd_iommu")
                 or w.startswith("pci=")]
    return {"passthrough": passthrough, "arguments": arguments}


def peer_memory_state(loaded_modules, open_kernel_module, release):
    """Which peer-memory path GPUDirect RDMA can use: a loaded peer-memory module wins;
    else dma-buf when the NVIDIA open kernel module runs on Linux >= 5.12."""
    loaded = [name for name in PEER_MEMORY_MODULES if name in loaded_modules]
    version = kernel_version(release)
    dma_buf = bool(open_kernel_module and version is not None and version >= DMA_BUF_MIN_KERNEL)
    method = loaded[0] if loaded else ("dma_buf" if dma_buf else None)
    return {"method": method, "modules_loaded": loaded, "dma_buf": dma_buf}


# --------------------------------------------------------------------------------------
# derivation (pure)
# --------------------------------------------------------------------------------------

def acs_audit(lspci_text, chains, source="lspci output"):
    """ACS audit like ``pcie_acs`` (default endpoints: every NVIDIA GPU and ConnectX NIC).

    Returns (devices, audit dict with ``bridges`` and ``pairs``)."""
    if lspci_text is None:
        return {}, {"audited": False, "bridges": {}, "pairs": {}, "rails": {}}
    devices = acs.parse_lspci(lspci_text, source)
    endpoints = [b for b, d in devices.items() if acs.is_gpu(d) or acs.is_rdma_nic(d)]
    bridges, ups = acs.audit(devices, endpoints, dict((b, chains.get(b)) for b in endpoints), acs.REDIRECT_MASK)
    return devices, {"audited": True, "bridges": bridges, "pairs": acs.pair_paths(devices, ups),
                     "rails": acs.rail_paths(devices, ups)}


def gdr_paths(facts, audit):
    """The GPU-NIC paths GPUDirect RDMA uses: each GPU with each of its nearest NICs (ties
    included: NCCL may pick any of them) that shares a PCIe switch with it (``rails``, the
    pairs pcie_acs may write).  A path across the root complex to a far NIC, or to a NIC
    that meets the GPU only at a root port, is not one: root ports keep their ACS isolation.

    Returns [{gpu, nic, gpu_pci_address, nic_pci_address, bridges, redirect}]; bridges hold
    only those with the ACS capability (the ones a write or the kernel can change)."""
    paths = []
    for gpu in facts.get("gpus") or []:
        for nic in gpu.get("nearest_nics") or []:
            device = facts["devices"].get(nic) or {}
            gpu_bdf, nic_bdf = gpu.get("pci_address"), device.get("pci_address")
            bdfs = (audit.get("rails") or {}).get(gpu_bdf, {}).get(nic_bdf)
            if bdfs is None:
                continue
            capable = [b for b in bdfs if b in audit["bridges"] and audit["bridges"][b]["acs"] is not False]
            paths.append({"gpu": gpu["name"], "nic": nic, "gpu_pci_address": gpu_bdf, "nic_pci_address": nic_bdf,
                          "bridges": capable,
                          "redirect": any(audit["bridges"][b]["redirect"] is not False for b in capable)})
    return paths


def _numa(value, fallback):
    if value is not None and value >= 0:
        return value
    if fallback is not None and fallback >= 0:
        return fallback
    return None


def gpu_verdict(gpu, facts, lspci_devices, audit, peer, gdr_level):
    """Readiness entry of one GPU (an ``ansible_facts.rdma.gpus`` item)."""
    nic = gpu.get("rail")
    device = facts["devices"].get(nic) if nic else None
    gpu_bdf = gpu.get("pci_address")
    nic_bdf = device["pci_address"] if device else None
    gpu_numa = _numa(gpu.get("numa_node"), lspci_devices.get(gpu_bdf, {}).get("numa_node"))
    nic_numa = _numa(device["numa_node"] if device else None, lspci_devices.get(nic_bdf, {}).get("numa_node"))
    entry = {"gpu": gpu["name"], "index": gpu["index"], "pci_address": gpu_bdf, "numa_node": gpu_numa,
             "nic": nic, "nic_pci_address": nic_bdf, "nic_numa_node": nic_numa,
             "relation": gpu.get("nearest_relation"), "acs_path": None, "acs_redirect": None,
             "peer_memory": peer["method"]}
    if not nic:
        entry.update(expected_to_work=False, reasons=["no RDMA NIC in the GPU's topology row"])
        return entry
    extra = []
    path = None
    if not audit["audited"]:
        extra.append("ACS along the GPU-NIC path not audited (%s)" % audit.get("error", "no lspci output"))
    elif gpu_bdf is None or nic_bdf is None:
        extra.append("ACS along the GPU-NIC path not audited: PCI address of %s unknown"
                     % (gpu["name"] if gpu_bdf is None else nic))
    else:
        bdfs = audit["pairs"].get(gpu_bdf, {}).get(nic_bdf)
        if bdfs is None:
            extra.append("ACS along the GPU-NIC path not audited: %s or %s not in lspci output" % (gpu_bdf, nic_bdf))
        else:
            path = [audit["bridges"][b] for b in bdfs if b in audit["bridges"]]
    if path is not None:
        entry["acs_path"] = [dict((k, e[k]) for k in ("bdf", "port_type", "acs", "ctl_word", "redirect"))
                             for e in path]
        unknown = [e for e in path if e["acs"] is None]
        entry["acs_redirect"] = None if unknown else any(e["redirect"] for e in path)
    verdict = acs.gdr_verdict(entry["relation"], gpu_numa, nic_numa, path, peer["method"], gdr_level)
    entry.update(expected_to_work=verdict["expected_to_work"] and not extra, reasons=verdict["reasons"] + extra)
    return entry


def summary_line(entry):
    where = "%s -> %s (%s, NUMA %s/%s)" % (entry["gpu"], entry["nic"] or "no NIC", entry["relation"] or "?",
                                           "?" if entry["numa_node"] is None else entry["numa_node"],
                                           "?" if entry["nic_numa_node"] is None else entry["nic_numa_node"])
    if entry["expected_to_work"]:
        return "%s: GDR expected to work (peer memory %s)" % (where, entry["peer_memory"])
    return "%s: NOT ready - %s" % (where, "; ".join(entry["reasons"]))


def derive(raw, gdr_level="PXB"):
    """The ``gdr`` facts from the raw inputs of ``read_host``/``read_captured``."""
    facts = raw["rdma"]
    errors = list(facts.get("errors") or []) + list(raw.get("errors") or [])
    lspci_devices, audit = acs_audit(raw.get("lspci_text"), raw.get("chains") or {},
                                     raw.get("lspci_source") or "lspci output")
    if not audit["audited"]:
        audit["error"] = raw.get("lspci_error") or "no lspci output"
    loaded_modules = set(parse_proc_modules(raw.get("proc_modules"))) | set(raw.get("sysfs_live_modules") or [])
    version, open_module = parse_driver_version(raw.get("nvidia_driver_version"))
    peer = peer_memory_state(loaded_modules, open_module, raw.get("kernel_release"))
    driver_loaded = "nvidia" in loaded_modules or bool(raw.get("nvidia_sysfs_module"))
    driver = {"loaded": driver_loaded, "installed": driver_loaded or bool(raw.get("modinfo", {}).get("nvidia")),
              "version": version, "open_kernel_module": open_module,
              "peermem_available": bool(raw.get("modinfo", {}).get("nvidia_peermem"))
              or "nvidia_peermem" in loaded_modules}
    gpus = [gpu_verdict(gpu, facts, lspci_devices, audit, peer, gdr_level) for gpu in facts.get("gpus") or []]
    not_ready = [g["gpu"] for g in gpus if not g["expected_to_work"]]
    paths = gdr_paths(facts, audit)
    # The runtime write, the boot unit and pci=disable_acs_redir= all use this one list.
    targets = sorted(set(b for path in paths for b in path["bridges"]))
    acs_facts = {"audited": audit["audited"], "error": audit.get("error"), "bridges": audit["bridges"],
                 "paths": paths, "targets": targets,
                 "redirect_enabled": sorted(b for b, e in audit["bridges"].items() if e["redirect"]),
                 "targets_redirect_enabled": [b for b in targets if audit["bridges"][b]["redirect"] is not False]}
    return {
        "source": facts.get("source"),
        "gdr_level": gdr_level,
        "ready": bool(gpus) and not not_ready,
        "gpu_count": len(gpus),
        "not_ready": not_ready,
        "gpus": gpus,
        "summary": [summary_line(g) for g in gpus] or ["no GPU found (nvidia-smi absent or failing): nothing to check"],
        "peer_memory": peer,
        "nvidia_driver": driver,
        "acs": acs_facts,
        "iommu": iommu_state(raw.get("proc_cmdline")),
        "systemd": raw.get("systemd"),
        "errors": errors,
    }


# --------------------------------------------------------------------------------------
# readers
# --------------------------------------------------------------------------------------

def _modinfo(module, name):
    modinfo = module.get_bin_path("modinfo", required=False)
    if not modinfo:
        return False
    rc, dummy, dummy = run_tool(module, [modinfo, "-F", "filename", name], check_rc=False)
    return rc == 0


def read_host(module, proc_root="/proc", run_root="/run"):
    """The only I/O seam: rdma facts, lspci and the sysfs chains, /proc files, modinfo."""
    if not os.path.isdir(proc_root) or not os.path.exists(os.path.join(proc_root, "modules")) \
            and not os.path.isdir(sysfs_path("module")):
        raise ValueError("proc_root=%r: no such procfs (no directory, or no 'modules' in it): nothing "
                         "says which drivers are loaded" % (proc_root,))
    raw = {"rdma": rdma.gather(module, ["devices", "gpus"]), "errors": []}
    lspci = module.get_bin_path("lspci", required=False)
    raw["lspci_text"] = None
    if not lspci:
        raw["lspci_error"] = "lspci not found (install pciutils)"
    else:
        try:
            raw["lspci_text"] = acs.read_lspci(module, lspci)
        except ToolError as exc:
            raw["lspci_error"] = exc.msg
            raw["errors"].append({"tool": "lspci", "cmd": exc.argv, "rc": exc.rc, "stderr": (exc.stderr or "").strip(),
                                  "msg": exc.msg})
    chains = {}
    if raw["lspci_text"]:
        for bdf, device in acs.parse_lspci(raw["lspci_text"]).items():
            if acs.is_gpu(device) or acs.is_rdma_nic(device):
                chains[bdf] = acs.sysfs_chain(bdf)
        if "<access denied>" in raw["lspci_text"]:
            module.warn("lspci printed '<access denied>': run as root (become) to see ACS")
    raw["chains"] = chains
    # sysfs says which modules are loaded (module/<name>/initstate = live); /proc/modules only
    # when that sysfs has no module directory (a container's /proc/modules is the host's).
    raw["proc_modules"] = None if os.path.isdir(sysfs_path("module")) \
        else read_text(os.path.join(proc_root, "modules"))
    raw["sysfs_live_modules"] = [name for name in ("nvidia",) + PEER_MEMORY_MODULES
                                 if read_sysfs(sysfs_path("module", name, "initstate")) == "live"]
    raw["nvidia_sysfs_module"] = os.path.isdir(sysfs_path("module", "nvidia"))
    raw["nvidia_driver_version"] = read_text(os.path.join(proc_root, "driver", "nvidia", "version"))
    raw["kernel_release"] = read_text(os.path.join(proc_root, "sys", "kernel", "osrelease"))
    raw["proc_cmdline"] = read_text(os.path.join(proc_root, "cmdline"))
    # sd_booted(3): systemd is the service manager when /run/systemd/system is a directory.
    raw["systemd"] = os.path.isdir(run_root + "/systemd/system")
    # modinfo only tells whether a module could be loaded; ask it only when /proc and sysfs do not say.
    has_nvidia = raw["nvidia_sysfs_module"] or "nvidia" in parse_proc_modules(raw["proc_modules"]) \
        or _modinfo(module, "nvidia")
    raw["modinfo"] = {"nvidia": has_nvidia, "nvidia_peermem": bool(has_nvidia) and _modinfo(module, "nvidia_peermem")}
    return raw


def read_bundle(path):
    """Raw inputs from a support bundle (``playbooks/collect.yml``): the record ``read_host``
    gave on the node (``raw["gdr"]`` of rdma_health's ``health-raw.json``), so ``derive``
    gives the node's facts; the host is not read."""
    bundle = _bundle.read_bundle(path)
    raw = bundle.get("gdr")
    if not isinstance(raw, dict) or not isinstance(raw.get("rdma"), dict):
        failed = [e.get("msg") for e in bundle.get("errors") or [] if e.get("tool") == "gdr_readiness"]
        why = failed[0] if failed else "collected with gdr disabled, or by an older collect.yml on a node without GPUs"
        raise ValueError("bundle=%r: holds no gdr_readiness record (%s)" % (path, why))
    raw["rdma"]["source"] = "bundle"
    return raw


def read_captured(module, captured):
    """Raw inputs from captured texts (support bundles, tests); the host is not read."""
    rdma_captured = dict((k, captured[k]) for k in ("nvidia_smi_topo", "nvidia_smi_gpus", "ibstat", "ibdev2netdev")
                         if captured.get(k))
    facts = rdma.gather(module, ["devices", "gpus"], rdma_captured) if rdma_captured else \
        rdma.derive({"devices": {}, "topo_text": None, "gpu_list": None, "gpu_pci": {}, "errors": []},
                    {"devices", "gpus"})
    facts["source"] = "captured"
    if captured.get("proc_modules") is not None:
        parse_proc_modules(captured["proc_modules"], "captured.proc_modules")
    if captured.get("nvidia_driver_version") is not None and \
            parse_driver_version(captured["nvidia_driver_version"])[0] is None:
        raise ValueError("captured.nvidia_driver_version %r: no 'NVRM version: ... N.N[.N] ...' line "
                         "(expected /proc/driver/nvidia/version)" % (captured["nvidia_driver_version"][:80],))
    if captured.get("kernel_release") is not None and kernel_version(captured["kernel_release"]) is None:
        raise ValueError("captured.kernel_release %r: not a kernel release (e.g. 5.15.0-91-generic)"
                         % (captured["kernel_release"][:80],))
    return {"rdma": facts, "lspci_source": "captured.lspci", "errors": [], "lspci_text": captured.get("lspci"),
            "lspci_error": None if captured.get("lspci") else "no lspci text captured",
            "chains": {}, "proc_modules": captured.get("proc_modules"), "sysfs_live_modules": [],
            "nvidia_sysfs_module": False, "nvidia_driver_version": captured.get("nvidia_driver_version"),
            "kernel_release": captured.get("kernel_release"), "proc_cmdline": captured.get("proc_cmdline"),
            "modinfo": {}, "systemd": None}
