# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Facts about the RDMA devices, GIDs, PCIe placement and GPU rails of one host.

Layout:
- ``read_host`` is the only I/O seam: it reads sysfs (under ``$SYSFS_PATH``) and runs
  ``nvidia-smi`` (the only thing sysfs lacks: GPU indexes and the GPU<->NIC matrix);
- ``parse_*`` read captured tool texts (support bundles, tests) into the same model;
- ``derive`` is pure: it joins devices, topology and GPUs into rails and NIC roles.
Standard library only: this runs on the target with Python >= 3.8.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import ipaddress
import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common import _bdf, _guid
from ansible_collections.rdma.fabric.plugins.module_utils.facts import _bundle
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import (
    read_sysfs, run_tool, sysfs_path, sysfs_root,
)
from ansible_collections.rdma.fabric.plugins.module_utils.parsers._topo import (
    TopoParseError, assign_rails, natural_sorted, parse_topo,
)

SUBSETS = ("all", "devices", "gids", "pci", "gpus", "counters")
# `all` is every subset but counters: dozens of values per port that only the health gate
# needs. The live QoS of a port is read by the QoS modules' own readers (state: gathered).
ALL_SUBSETS = ("devices", "gids", "pci", "gpus")
CAPTURED_KEYS = ("nvidia_smi_topo", "nvidia_smi_gpus", "ibstat", "show_gids", "ibdev2netdev")

NVIDIA_SMI_TOPO = ["topo", "-m"]
NVIDIA_SMI_GPUS = ["--query-gpu=index,pci.bus_id,name,uuid", "--format=csv,noheader"]

_ZERO_GIDS = ("0000:0000:0000:0000:0000:0000:0000:0000", "fe80:0000:0000:0000:0000:0000:0000:0000")
_NVIDIA_VENDOR = "0x10de"
_GPU_CLASSES = ("0x0300", "0x0302")  # VGA and 3D controllers (NVSwitches are 0x0680: bridges)

# ibstat and ibdev2netdev spell port states differently from sysfs; facts use the sysfs words.
_STATE_WORDS = {"active": "ACTIVE", "down": "DOWN", "initializing": "INIT", "init": "INIT",
                "armed": "ARMED", "active_defer": "ACTIVE_DEFER", "nop": "NOP"}
_LINK_LAYERS = {"ib": "InfiniBand", "infiniband": "InfiniBand", "ethernet": "Ethernet"}


# ---------------------------------------------------------------- small normalisers

def normalize_bdf(text):
    """PCI address as sysfs names it (``_bdf``), or None for a missing or refused one: a fact
    that cannot be read is null, the other facts still stand."""
    try:
        return _bdf.normalize_bdf(text)
    except ValueError:
        return None


def normalize_guid(text):
    """GUID as ``_guid`` writes it, or None for a missing or refused one (sysfs prints
    a088:c203:00e3:142a, ibstat 0xa088c20300e3142a)."""
    try:
        return _guid.normalize_guid(text)
    except ValueError:
        return None


def normalize_gid(text):
    """GID in the sysfs form (8 groups of 4 hex digits); accepts compressed IPv6 (ibv_devinfo)."""
    try:
        return ipaddress.IPv6Address((text or "").strip()).exploded
    except ValueError:
        return None


def gid_ipv4(gid):
    """The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), else None."""
    try:
        mapped = ipaddress.IPv6Address(gid).ipv4_mapped
    except ValueError:
        return None
    return str(mapped) if mapped else None


def gid_type(raw_type, link_layer):
    """IB, RoCE v1 or RoCE v2 from sysfs gid_attrs/types ('IB/RoCE v1' | 'RoCE v2') or show_gids VER."""
    raw = (raw_type or "").strip().lower()
    if raw in ("roce v2", "v2"):
        return "RoCE v2"
    if link_layer == "InfiniBand":
        return "IB"
    if raw in ("ib/roce v1", "roce v1", "v1"):
        return "RoCE v1" if link_layer == "Ethernet" else "IB/RoCE v1"
    return None


def state_word(text):
    """'4: ACTIVE' (sysfs), 'Active' (ibstat), 'DOWN  ' (ibdev2netdev -v) -> 'ACTIVE' / 'DOWN'."""
    if not text:
        return None
    word = text.split(":", 1)[-1].strip()
    return _STATE_WORDS.get(word.lower(), word.upper())


def phys_state_word(text):
    """'5: LinkUp' (sysfs) or 'LinkUp' (ibstat) -> 'LinkUp'."""
    if not text:
        return None
    return text.split(":", 1)[-1].strip() or None


def link_layer_word(text):
    if not text:
        return None
    return _LINK_LAYERS.get(text.strip().lower(), text.strip())


def rate_gbps(text):
    """'400 Gb/sec (4X NDR)' (sysfs) or '400' (ibstat) -> 400; '2.5 Gb/sec' -> 2.5."""
    match = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)", text or "")
    if not match:
        return None
    value = float(match.group(1))
    return int(value) if value.is_integer() else value


def _int(text, base=10):
    try:
        return int(str(text).strip(), base)
    except (TypeError, ValueError):
        return None


def _speed_gts(text):
    """'32.0 GT/s PCIe' / '8 GT/s' / '2.5 GT/s' -> float; 'Unknown' -> None."""
    match = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*GT/s", text or "")
    return float(match.group(1)) if match else None


def new_device(name):
    return {"name": name, "node_guid": None, "sys_image_guid": None, "fw_ver": None,
            "hca_type": None, "board_id": None, "node_type": None, "pci_address": None,
            "numa_node": None, "pcie": None, "netdevs": [], "role": None, "ports": []}


def new_port(number):
    return {"port": number, "state": None, "phys_state": None, "rate": None, "rate_gbps": None,
            "link_layer": None, "port_guid": None, "lid": None, "sm_lid": None, "netdev": None,
            "gids": [], "ipv4": []}


def _device(devices, name):
    if name not in devices:
        devices[name] = new_device(name)
    return devices[name]


def _port(device, number):
    for port in device["ports"]:
        if port["port"] == number:
            return port
    port = new_port(number)
    device["ports"].append(port)
    device["ports"].sort(key=lambda item: item["port"])
    return port


def gid_entry(index, gid, gtype, netdev):
    return {"index": index, "gid": gid, "type": gtype, "netdev": netdev or None, "ipv4": gid_ipv4(gid)}


def finish_device(device):
    """Fill the derived per-port lists (IPv4 addresses, sorted GIDs) and the device netdevs."""
    netdevs = []
    for port in device["ports"]:
        port["gids"].sort(key=lambda entry: entry["index"])
        port["ipv4"] = []
        for entry in port["gids"]:
            if entry["ipv4"] and entry["ipv4"] not in port["ipv4"]:
                port["ipv4"].append(entry["ipv4"])
        for name in [port["netdev"]] + [entry["netdev"] for entry in port["gids"]]:
            if name and name not in netdevs:
                netdevs.append(name)
    device["netdevs"] = netdevs
    return device


# ---------------------------------------------------------------- sysfs reader (I/O)

def _read(*parts):
    """One sysfs attribute or None; attributes of unused GID slots fail with EINVAL."""
    try:
        return read_sysfs(sysfs_path(*parts))
    except (IOError, OSError):
        return None


def _listdir(*parts):
    try:
        return natural_sorted(os.listdir(sysfs_path(*parts)))
    except (IOError, OSError):
        return []


def read_pci_function(pci_dir, with_link):
    """NUMA node and PCIe link of a PCI function directory (absolute path)."""
    def attr(name):
        try:
            return read_sysfs(os.path.join(pci_dir, name))
        except (IOError, OSError):
            return None
    numa = _int(attr("numa_node"))
    info = {"numa_node": numa if numa is not None and numa >= 0 else None, "pcie": None}
    if with_link:
        current, maximum = _speed_gts(attr("current_link_speed")), _speed_gts(attr("max_link_speed"))
        width, max_width = _int(attr("current_link_width")), _int(attr("max_link_width"))
        # A link trains to what both ends can do: a Gen4 NIC in a Gen3 slot runs at 8 GT/s
        # and is not degraded. The upstream port is the parent directory of the function.
        upstream = os.path.dirname(os.path.realpath(pci_dir))
        up_speed = up_width = None
        if _bdf.is_bdf(os.path.basename(upstream)):
            up_speed = _speed_gts(read_sysfs(os.path.join(upstream, "max_link_speed"), ""))
            up_width = _int(read_sysfs(os.path.join(upstream, "max_link_width"), ""))
        downgraded = None
        if None not in (current, maximum, width, max_width):
            downgraded = (current < min(s for s in (maximum, up_speed) if s is not None)
                          or width < min(w for w in (max_width, up_width) if w is not None))
        info["pcie"] = {"current_link_speed": current, "current_link_width": width,
                        "max_link_speed": maximum, "max_link_width": max_width,
                        "upstream_max_link_speed": up_speed, "upstream_max_link_width": up_width,
                        "downgraded": downgraded}
    return info


def _netdev_by_dev_port(device_dir, port_number):
    """Fallback when gid_attrs/ndevs is absent (IPoIB, old kernels): the netdev of the PCI
    function whose dev_port (dev_id on old kernels) is port - 1, as ibdev2netdev does."""
    net_dir = os.path.join(device_dir, "device", "net")
    try:
        names = natural_sorted(os.listdir(net_dir))
    except (IOError, OSError):
        return None
    for name in names:
        try:
            dev_port = _int(read_sysfs(os.path.join(net_dir, name, "dev_port")))
            if dev_port is None:
                dev_port = _int(read_sysfs(os.path.join(net_dir, name, "dev_id")) or "", 16)
        except (IOError, OSError):
            dev_port = None
        if dev_port is None or dev_port == port_number - 1:
            return name
    return None


def read_port_counters(port_base):
    """``counters/*`` (IB PortCounters: symbol_error, link_downed, port_rcv_errors...) and
    ``hw_counters/*`` (mlx5: out_of_buffer, np_cnp_sent...) of one port, as integers; a
    name present in both keeps the ``counters/`` value."""
    values = {}
    for directory in ("hw_counters", "counters"):
        for name in _listdir(*port_base + (directory,)):
            value = _int(_read(*port_base + (directory, name)) or "")
            if value is not None:
                values[name] = value
    return dict(sorted(values.items()))


def read_rdma_sysfs(subsets):
    """Devices under /sys/class/infiniband, naturally sorted; {} when there are none."""
    with_gids = "gids" in subsets
    with_link = "pci" in subsets
    with_counters = "counters" in subsets
    devices = {}
    for name in _listdir("class", "infiniband"):
        dev_dir = sysfs_path("class", "infiniband", name)
        device = _device(devices, name)
        device["fw_ver"] = _read("class", "infiniband", name, "fw_ver")
        device["node_guid"] = normalize_guid(_read("class", "infiniband", name, "node_guid"))
        device["sys_image_guid"] = normalize_guid(_read("class", "infiniband", name, "sys_image_guid"))
        device["hca_type"] = _read("class", "infiniband", name, "hca_type")
        device["board_id"] = _read("class", "infiniband", name, "board_id")
        device["node_type"] = phys_state_word(_read("class", "infiniband", name, "node_type"))
        pci_dir = os.path.realpath(os.path.join(dev_dir, "device"))
        if os.path.isdir(pci_dir):
            device["pci_address"] = normalize_bdf(os.path.basename(pci_dir))
            if device["pci_address"]:
                info = read_pci_function(pci_dir, with_link)
                device["numa_node"], device["pcie"] = info["numa_node"], info["pcie"]
                # an SR-IOV virtual function: its physical function (the nic_firmware area never
                # configures a VF); the key is there only for a VF
                physfn = os.path.join(pci_dir, "physfn")
                if os.path.islink(physfn) or os.path.isdir(physfn):
                    device["physfn"] = normalize_bdf(os.path.basename(os.path.realpath(physfn))) or "unknown"
        for port_name in _listdir("class", "infiniband", name, "ports"):
            number = _int(port_name)
            if number is None:
                continue
            port = _port(device, number)
            base = ("class", "infiniband", name, "ports", port_name)
            port["state"] = state_word(_read(*base + ("state",)))
            port["phys_state"] = phys_state_word(_read(*base + ("phys_state",)))
            port["rate"] = _read(*base + ("rate",))
            port["rate_gbps"] = rate_gbps(port["rate"])
            port["link_layer"] = link_layer_word(_read(*base + ("link_layer",)))
            port["lid"] = _int(_read(*base + ("lid",)) or "", 16)
            port["sm_lid"] = _int(_read(*base + ("sm_lid",)) or "", 16)
            gid0 = normalize_gid(_read(*base + ("gids", "0")))
            # No port_guid attribute: the port GUID is the interface ID of GID 0 (what ibstat shows).
            if gid0 and gid0 not in _ZERO_GIDS:
                port["port_guid"] = normalize_guid(gid0[20:])
            port["netdev"] = _read(*base + ("gid_attrs", "ndevs", "0")) or _netdev_by_dev_port(dev_dir, number)
            if with_counters:
                port["counters"] = read_port_counters(base)
            if with_gids:
                for index_name in _listdir(*base + ("gids",)):
                    index = _int(index_name)
                    gid = normalize_gid(_read(*base + ("gids", index_name)))
                    if index is None or not gid or gid in _ZERO_GIDS:
                        continue
                    gtype = gid_type(_read(*base + ("gid_attrs", "types", index_name)), port["link_layer"])
                    ndev = _read(*base + ("gid_attrs", "ndevs", index_name))
                    port["gids"].append(gid_entry(index, gid, gtype, ndev))
        finish_device(device)
    return devices


def read_gpu_pci(bdfs, with_link):
    """NUMA node and PCIe link of each GPU PCI address (sysfs /sys/bus/pci/devices)."""
    result = {}
    for bdf in bdfs:
        pci_dir = sysfs_path("bus", "pci", "devices", bdf)
        if os.path.isdir(pci_dir):
            result[bdf] = read_pci_function(pci_dir, with_link)
    return result


def list_nvidia_gpus_sysfs():
    """PCI addresses of NVIDIA display/3D controllers in bus order: nvidia-smi's index order."""
    found = []
    for bdf in _listdir("bus", "pci", "devices"):
        if (_read("bus", "pci", "devices", bdf, "vendor") or "").lower() != _NVIDIA_VENDOR:
            continue
        if (_read("bus", "pci", "devices", bdf, "class") or "")[:6].lower() in _GPU_CLASSES:
            found.append(bdf)
    return sorted(found)


def _run_optional(module, argv, errors):
    """Output of a tool, or None with an ``errors`` entry when it fails (not a crash)."""
    rc, out, err = run_tool(module, argv, check_rc=False)
    if rc != 0:
        words = (err or "").strip() or (out or "").strip()
        errors.append({"tool": os.path.basename(argv[0]), "cmd": argv, "rc": rc,
                       "stderr": (err or "").strip(), "msg": "%s failed (rc=%s): %s" % (" ".join(argv), rc, words)})
        return None
    return out


def read_host(module, subsets):
    """The only I/O seam: sysfs plus nvidia-smi. Returns the raw inputs of ``derive``."""
    errors = []
    devices = read_rdma_sysfs(subsets)
    topo_text = gpus_text = None
    if "gpus" in subsets:
        nvidia_smi = module.get_bin_path("nvidia-smi", required=False)
        if nvidia_smi:  # absent: no GPU on this host, a normal answer
            topo_text = _run_optional(module, [nvidia_smi] + NVIDIA_SMI_TOPO, errors)
            if topo_text is not None:
                gpus_text = _run_optional(module, [nvidia_smi] + NVIDIA_SMI_GPUS, errors)
    gpu_list = parse_gpu_query(gpus_text) if gpus_text else None
    if topo_text is not None and not gpu_list:
        gpu_list = [{"index": i, "pci_address": bdf, "model": None, "uuid": None}
                    for i, bdf in enumerate(list_nvidia_gpus_sysfs())]
    gpu_pci = {}
    if gpu_list:
        gpu_pci = read_gpu_pci([g["pci_address"] for g in gpu_list if g["pci_address"]], "pci" in subsets)
    raw = {"devices": devices, "topo_text": topo_text, "gpu_list": gpu_list,
           "gpu_pci": gpu_pci, "errors": errors}
    return raw


def read_bundle(path, subsets):
    """The raw inputs of ``derive`` from a support bundle (``playbooks/collect.yml``): the
    node's own ``read_host`` record (``raw["rdma"]``, every subset), kept to ``subsets`` as
    ``read_host`` would have read them, so ``derive`` gives the facts the node gave. Also
    returns the node's sysfs root (None when the bundle does not say)."""
    bundle = _bundle.read_bundle(path)
    raw = bundle["rdma"]
    if not isinstance(raw, dict) or not isinstance(raw.get("devices"), dict):
        raise ValueError("bundle=%r: its rdma record has no devices" % (path,))
    for device in raw["devices"].values():
        device["role"] = None     # derived (the node's derive wrote it into its record)
        if "pci" not in subsets:
            device["pcie"] = None
        for port in device.get("ports") or []:
            if "counters" not in subsets:
                port.pop("counters", None)
            if "gids" not in subsets:
                port["gids"] = []
        finish_device(device)
    if "gpus" not in subsets:
        raw.update(topo_text=None, gpu_list=None, gpu_pci={}, errors=[])
    elif "pci" not in subsets:
        for info in (raw.get("gpu_pci") or {}).values():
            info["pcie"] = None
    raw.setdefault("gpu_pci", {})
    raw.setdefault("errors", [])
    return raw, bundle.get("sysfs_root")


# ---------------------------------------------------------------- captured text parsers

def parse_gpu_query(text):
    """``nvidia-smi --query-gpu=index,pci.bus_id,name,uuid --format=csv,noheader``."""
    gpus = []
    for row in csv.reader((text or "").splitlines(), skipinitialspace=True):
        if len(row) < 2 or not row[0].strip().isdigit():
            continue
        gpus.append({"index": int(row[0]), "pci_address": normalize_bdf(row[1]),
                     "model": row[2].strip() if len(row) > 2 else None,
                     "uuid": row[3].strip() if len(row) > 3 else None})
    return sorted(gpus, key=lambda gpu: gpu["index"])


def parse_ibstat(text, devices, errors):
    """``ibstat`` text (``_ibstat``, the one parser) into the device model. Its ``ibpanic`` /
    ``ibwarn`` lines, or the parser's refusal of text that is not ibstat's layout, become
    ``errors`` entries; a refused text adds no device."""
    def error(line):
        errors.append({"tool": "ibstat", "cmd": None, "rc": None, "stderr": line, "msg": line})

    try:
        parsed = _ibstat.parse(text)
    except _ibstat.IbstatParseError as exc:
        error(str(exc))
        return devices
    for line in parsed["errors"]:
        error(line)
    for ca in parsed["cas"]:
        device = _device(devices, ca["name"])
        fields = ca["fields"]
        if "Firmware version" in fields:
            device["fw_ver"] = fields["Firmware version"]
        for key in ("node_guid", "sys_image_guid"):
            if ca[key]:
                device[key] = ca[key]
        kind_type = fields.get("%s type" % ca["kind"])          # CA, Switch, Router, iWARP RNIC
        if kind_type is not None:
            device["hca_type"] = kind_type
        for entry in ca["ports"]:
            port = _port(device, entry["port"])
            fields = entry["fields"]
            if "State" in fields:
                port["state"] = state_word(fields["State"])
            if "Physical state" in fields:
                port["phys_state"] = phys_state_word(fields["Physical state"])
            if "Rate" in fields:
                port["rate"], port["rate_gbps"] = fields["Rate"], rate_gbps(fields["Rate"])
            for key, target in (("Base lid", "lid"), ("SM lid", "sm_lid")):
                if key in fields:
                    try:
                        port[target] = int(fields[key])
                    except ValueError:
                        raise ValueError("ibstat CA '%s' port %s '%s: %s': not a LID (a decimal number)"
                                         % (ca["name"], entry["port"], key, fields[key]))
            if entry["port_guid"]:
                port["port_guid"] = entry["port_guid"]
            if "Link layer" in fields:
                port["link_layer"] = link_layer_word(fields["Link layer"])
    return devices


_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}\Z")


_SHOW_GIDS_HEADER = re.compile(r"^DEV\s+PORT\s+INDEX\s+GID\s+IPv4\s+VER\s+DEV\s*\Z")
_SHOW_GIDS_RULE = re.compile(r"^-{3}\s+-{4}\s+-{5}\s+-{3}\s+-{12}\s+-{3}\s+-{3}\s*\Z")
_SHOW_GIDS_FOOTER = re.compile(r"^n_gids_found=\d+\s*\Z")
_ANNOTATION = re.compile(r"^\s*(?:\$ .*|#.*|\[rc=-?\d+\])\s*\Z")


def _refuse_line(tool, number, line, layout):
    raise ValueError("%s line %d '%s': not a line %s prints (%s)" % (tool, number, line.strip()[:120], tool, layout))


def parse_show_gids(text, devices, strict=False):
    """``show_gids``: DEV PORT INDEX GID [IPv4] VER [DEV]; TABs or spaces, lexicographic order.

    Follows Mellanox/mlnx-tools ``sbin/show_gids`` (and the MLNX_OFED 4.x-5.x ofed_scripts copy):
    the header and ``---`` rule, one row per non-zero GID (``$dev\t$port\t$index\t$gid\t$ipv4  \t$ver\t$ndev``,
    the IPv4 column empty unless the GID is IPv4-mapped, DEV empty on InfiniBand ports), the
    ``n_gids_found=N`` footer. ``strict``: a line show_gids cannot print (not the header, rule,
    footer, a row with a GID of 8 hex groups and v1/v2, or a ``$``/``#``/``[rc=N]`` annotation)
    raises ValueError naming it; text with no row and no footer raises too."""
    rows = footer = 0
    for number, raw in enumerate((text or "").splitlines(), 1):
        tokens = raw.split()
        if strict and tokens and not (_SHOW_GIDS_HEADER.match(raw.strip()) or _SHOW_GIDS_RULE.match(raw.strip())
                                      or _ANNOTATION.match(raw)):
            if _SHOW_GIDS_FOOTER.match(raw.strip()):
                footer += 1
            elif not _show_gids_row(tokens):
                _refuse_line("show_gids", number, raw, "DEV PORT INDEX GID [IPv4] VER [DEV], the header, n_gids_found=N")
        if len(tokens) < 5 or not tokens[1].isdigit() or not tokens[2].isdigit():
            continue
        name, port_number, index, gid = tokens[0], int(tokens[1]), int(tokens[2]), normalize_gid(tokens[3])
        rest = tokens[4:]
        if gid is None:
            continue
        if rest and _IPV4.match(rest[0]):
            rest = rest[1:]
        if not rest or rest[0] not in ("v1", "v2"):
            continue
        rows += 1
        version, netdev = rest[0], (rest[1] if len(rest) > 1 else None)
        port = _port(_device(devices, name), port_number)
        if port["link_layer"] is None and netdev:
            port["link_layer"] = "Ethernet"
        # show_gids prints v1 with an empty DEV column for InfiniBand GIDs.
        link_layer = port["link_layer"] or ("Ethernet" if netdev else "InfiniBand")
        port["gids"] = [entry for entry in port["gids"] if entry["index"] != index]
        port["gids"].append(gid_entry(index, gid, gid_type(version, link_layer), netdev))
        if index == 0 and netdev and not port["netdev"]:
            port["netdev"] = netdev
    if strict and not rows and not footer:
        refuse_unrecognised("show_gids", text or "", False, "'show_gids' output (DEV PORT INDEX GID [IPv4] VER [DEV])")
    return devices


_GID_TEXT = re.compile(r"^[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}\Z")


def _show_gids_row(tokens):
    """A show_gids row: DEV PORT INDEX GID [IPv4] v1|v2 [DEV], nothing after."""
    if len(tokens) < 5 or not tokens[1].isdigit() or not tokens[2].isdigit() or not _GID_TEXT.match(tokens[3]):
        return False
    rest = tokens[4:]
    if _IPV4.match(rest[0]):
        rest = rest[1:]
    return bool(rest) and rest[0] in ("v1", "v2") and len(rest) <= 2


_IB2N = re.compile(
    r"^(?:(?P<bdf>" + _bdf.BDF_TEXT + r")\s+)?(?P<dev>\S+)\s"
    r"(?:.*?\sfw (?P<fw>\S+)\s)?.*?\bport (?P<port>\d+)(?: \((?P<state>[A-Za-z_]+)\s*\))?"
    r" ==> (?P<netdev>\S+) \((?P<carrier>\w+)\)\s*\Z")


def parse_ibdev2netdev(text, devices, strict=False):
    """``ibdev2netdev`` and ``ibdev2netdev -v`` (anchored on ' fw ', ' port ', ' ==> ': the
    -v description may hold spaces, commas and parentheses).

    Follows MLNX_OFED ofed_scripts ``ibdev2netdev`` (4.x-24.x; mlnx-tools ``sbin/ibdev2netdev``):
    ``$ibdev port $port ==> $ndev ($state)`` and with ``-v``
    ``$pci $ibdev ($type - $board_id) $description fw $fw port $port ($port_state) ==> $ndev ($state)``.
    ``strict``: a line that is none of these (nor a blank, ``$``/``#`` annotation) raises ValueError
    naming it; text with no line of the tool raises too."""
    found = 0
    for number, raw in enumerate((text or "").splitlines(), 1):
        line = re.sub(r"^\s*#\s*", "", raw).rstrip()
        match = _IB2N.match(line)
        if not match:
            if strict and raw.strip() and not _ANNOTATION.match(raw):
                _refuse_line("ibdev2netdev", number, raw, "DEV port N ==> NETDEV (Up|Down), or the -v layout")
            continue
        found += 1
        device = _device(devices, match.group("dev"))
        port = _port(device, int(match.group("port")))
        port["netdev"] = match.group("netdev")
        if match.group("bdf"):
            device["pci_address"] = normalize_bdf(match.group("bdf"))
        if match.group("fw") and not device["fw_ver"]:
            device["fw_ver"] = match.group("fw")
        if match.group("state") and not port["state"]:
            port["state"] = state_word(match.group("state"))
    if strict and not found:
        refuse_unrecognised("ibdev2netdev", text or "", False, "'ibdev2netdev' output (DEV port N ==> NETDEV (Up|Down))")
    return devices


def _first_line(text):
    for number, line in enumerate((text or "").splitlines(), 1):
        if line.strip():
            return number, line.strip()[:80]
    return None


def refuse_unrecognised(name, text, found, layout):
    """Captured text that holds nothing its parser recognises is an error, never an empty
    result: ValueError naming the input (``captured.NAME``) and its first line."""
    if found or text is None:
        return
    first = _first_line(text)
    if first is None:
        raise ValueError("captured.%s: empty (expected %s)" % (name, layout))
    raise ValueError("captured.%s line %d '%s': nothing in the text is %s" % (name, first[0], first[1], layout))


def _captured(name, parser, captured, devices):
    """A captured text read strictly (a line the tool cannot print, or no line of it, is an
    error), the message naming the input: ``captured.NAME line N '...': ...``."""
    try:
        parser(captured[name], devices, strict=True)
    except ValueError as exc:
        text = str(exc)
        raise ValueError(text if text.startswith("captured.") else "captured." + text)


def read_captured(captured, subsets):
    """Raw inputs of ``derive`` from captured tool texts; touches nothing on the host.
    A text given that holds nothing its parser recognises raises ValueError naming it."""
    errors = []
    devices = {}
    parse_ibstat(captured.get("ibstat"), devices, errors)
    if captured.get("ibstat") is not None and not devices:
        refused = [e["msg"] for e in errors if e["msg"].startswith("ibstat line")]
        if refused:
            raise ValueError("captured.%s" % refused[0])
        refuse_unrecognised("ibstat", captured.get("ibstat"), False, "'ibstat' output (CA 'name' blocks)")
    show_gids = captured.get("show_gids")
    # a show_gids text given is read; an empty one only when the gids subset asks for GIDs
    if show_gids is not None and (show_gids or "gids" in subsets):
        _captured("show_gids", parse_show_gids, captured, devices)
    if captured.get("ibdev2netdev") is not None:
        _captured("ibdev2netdev", parse_ibdev2netdev, captured, devices)
    if "gids" not in subsets:
        for device in devices.values():
            for port in device["ports"]:
                port["gids"] = []
    for name in list(devices):
        finish_device(devices[name])
    devices = dict((name, devices[name]) for name in natural_sorted(devices))
    topo_text = captured.get("nvidia_smi_topo") if "gpus" in subsets else None
    if topo_text is not None:
        refuse_unrecognised("nvidia_smi_topo", topo_text, parse_topo(topo_text)["gpus"],
                            "'nvidia-smi topo -m' output (a GPU0 ... header and rows)")
    gpu_list = parse_gpu_query(captured.get("nvidia_smi_gpus")) if topo_text else None
    if gpu_list is not None or (captured.get("nvidia_smi_gpus") is not None and "gpus" in subsets):
        refuse_unrecognised("nvidia_smi_gpus", captured.get("nvidia_smi_gpus"),
                            parse_gpu_query(captured.get("nvidia_smi_gpus")),
                            "'nvidia-smi --query-gpu=index,pci.bus_id,... --format=csv,noheader' output")
    return {"devices": devices, "topo_text": topo_text, "gpu_list": gpu_list, "gpu_pci": {},
            "errors": errors}


# ---------------------------------------------------------------- pure derivation

def _rail_port(device):
    """The port a rail uses: the first ACTIVE one, else the first."""
    if not device or not device["ports"]:
        return None
    active = [port for port in device["ports"] if port["state"] == "ACTIVE"]
    return (active or device["ports"])[0]


def derive(raw, subsets):
    """Join devices, topology and GPUs into the ``ansible_facts.rdma`` dict."""
    devices = raw["devices"]
    errors = list(raw["errors"])
    topo = None
    if raw.get("topo_text"):
        try:
            # text with no GPU row is an error, never "no GPUs": the reader names why (the
            # matrix it read, if any, is still the topology reported)
            topo = parse_topo(raw["topo_text"], require_gpus=True)
        except TopoParseError as exc:
            topo = getattr(exc, "topo", None)
            errors.append({"tool": "nvidia-smi", "cmd": ["nvidia-smi"] + NVIDIA_SMI_TOPO, "rc": 0,
                           "stderr": "", "msg": str(exc)})

    gpus, rails = [], []
    compute, extra = [], []
    if topo and topo["gpus"]:
        by_index = dict((g["index"], g) for g in raw.get("gpu_list") or [])
        usable = set(devices) if devices else None
        if usable is not None:
            for nic in topo["nics"]:
                if nic["device"] not in usable:
                    errors.append({"tool": "nvidia-smi", "cmd": ["nvidia-smi"] + NVIDIA_SMI_TOPO, "rc": 0,
                                   "stderr": "", "msg": "NIC %s of the topology matrix is not an RDMA device "
                                   "of this host; it is not used as a rail" % nic["device"]})
        assigned, compute_set = assign_rails(topo, usable)
        for gpu, rail in zip(topo["gpus"], assigned):
            known = by_index.get(gpu["index"], {})
            pci = raw.get("gpu_pci", {}).get(known.get("pci_address"), {})
            numa = pci.get("numa_node")
            if numa is None:
                numa = gpu["numa_affinity"]
            gpus.append({"index": gpu["index"], "name": gpu["name"], "model": known.get("model"),
                         "uuid": known.get("uuid"), "pci_address": known.get("pci_address"),
                         "numa_node": numa, "gpu_numa_id": gpu["gpu_numa_id"],
                         "cpu_affinity": gpu["cpu_affinity"], "pcie": pci.get("pcie"),
                         "nearest_nics": rail["nearest"], "nearest_relation": rail["relation"],
                         "rail": rail["device"]})
            if rail["device"] is None:
                continue
            device = devices.get(rail["device"])
            port = _rail_port(device)
            rails.append({
                "gpu": gpu["name"], "gpu_index": gpu["index"], "device": rail["device"],
                "port": port["port"] if port else None,
                "port_count": len(device["ports"]) if device else None,
                "netdev": port["netdev"] if port else None,
                "link_layer": port["link_layer"] if port else None,
                "state": port["state"] if port else None,
                "numa_node": device["numa_node"] if device else None,
                "relation": rail["relation"],
                "ipv4_gids": [entry for entry in (port["gids"] if port else []) if entry["ipv4"]],
            })
        names = set(devices) | set(nic["device"] for nic in topo["nics"])
        compute = natural_sorted(compute_set)
        extra = natural_sorted(name for name in names if name not in compute_set)
        for name, device in devices.items():
            device["role"] = "compute" if name in compute_set else "extra"

    topology = None
    if topo is not None:
        topology = {"nics": [nic["device"] for nic in topo["nics"]], "nic_legend": topo["nic_legend"],
                    "matrix": topo["matrix"]}
    return {
        "gather_subset": sorted(subsets, key=SUBSETS.index),
        "device_names": natural_sorted(devices),
        "devices": dict((name, devices[name]) for name in natural_sorted(devices)),
        "gpus": gpus,
        "topology": topology,
        "rails": rails,
        "compute_nics": compute,
        "extra_nics": extra,
        "errors": errors,
    }


def expand_subsets(requested):
    subsets = set(requested or ["all"])
    if "all" in subsets:
        subsets = (subsets - set(["all"])) | set(ALL_SUBSETS)
    subsets.add("devices")  # cheap, and every other subset hangs off it
    return subsets


def gather(module, gather_subset, captured=None, bundle=None):
    """Facts for ``ansible_facts.rdma``: from the host, from captured texts, or from a
    support bundle (its path) when given."""
    subsets = expand_subsets(gather_subset)
    if bundle:
        raw, root = read_bundle(bundle, subsets)
        facts = derive(raw, subsets)
        facts["source"] = "bundle"
        if root:
            facts["sysfs_root"] = root
    elif captured:
        raw = read_captured(captured, subsets)
        facts = derive(raw, subsets)
        facts["source"] = "captured"
    else:
        raw = read_host(module, subsets)
        facts = derive(raw, subsets)
        facts["source"] = "host"
        # where this host's sysfs is ($SYSFS_PATH or /sys): controller-side rendering of
        # sysfs paths (the boot applier's state file) uses the node's, not its own
        facts["sysfs_root"] = sysfs_root()
    return facts
