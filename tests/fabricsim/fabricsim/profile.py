"""Node profiles: load the JSON data file and derive what follows from it (GIDs, names...)."""
import ipaddress
import json
import os

from . import health_faults, paths

# Per NIC model: PCI ids and the strings the tools print.
MODELS = {
    "cx7": {
        "device": "0x1021", "mt": "MT4129", "ca_type": "MT4129",
        "lspci_name": "Mellanox Technologies MT2910 Family [ConnectX-7]",
        "part": "MCX75310AAS-NEAT",
        "desc": "NVIDIA ConnectX-7 HHHL Adapter card, 400GbE / NDR IB (default mode), Single-port OSFP, "
                "PCIe 5.0 x16, Crypto Disabled, Secure Boot Enabled",
        "hw_rev": "0x0", "vendor_part_id": 4129,
        # firmware tools (tools/mlxtools.py): dm_dev_type2str name, physical ports, GUIDs allocated
        "mlx_type": "ConnectX7", "ports": 1, "guids_num": 16,
        # mlnx_qos receive buffers (bytes): firmware default split, total
        "buffer_size": [0, 1047424, 0, 0, 0, 0, 0, 0], "tot_size": 1047424,
        "prio2buffer": [1, 1, 1, 1, 1, 1, 1, 1],
    },
    "cx7-2p": {
        "device": "0x1021", "mt": "MT4129", "ca_type": "MT4129",
        "lspci_name": "Mellanox Technologies MT2910 Family [ConnectX-7]",
        "part": "MCX755106AS-HEAT",
        "desc": "NVIDIA ConnectX-7 HHHL Adapter Card, 200GbE (default mode) / NDR200 IB, Dual-port QSFP112, "
                "PCIe 5.0 x16 with x16 PCIe extension option, Crypto Disabled, Secure Boot Enabled",
        "hw_rev": "0x0", "vendor_part_id": 4129,
        "mlx_type": "ConnectX7", "ports": 2, "guids_num": 16,
        "buffer_size": [0, 523712, 0, 0, 0, 0, 0, 0], "tot_size": 523712,
        "prio2buffer": [1, 1, 1, 1, 1, 1, 1, 1],
    },
    "cx6dx": {
        "device": "0x101d", "mt": "MT4125", "ca_type": "MT4125",
        "lspci_name": "Mellanox Technologies MT2892 Family [ConnectX-6 Dx]",
        "part": "MCX623106AN-CDAT",
        "desc": "ConnectX-6 Dx EN adapter card, 100GbE, Dual-port QSFP56, PCIe 4.0 x16, No Crypto",
        "hw_rev": "0x0", "vendor_part_id": 4125,
        "mlx_type": "ConnectX6DX", "ports": 2, "guids_num": 8,
        "buffer_size": [0, 262016, 0, 0, 0, 0, 0, 0], "tot_size": 262016,
        "prio2buffer": [1, 1, 1, 1, 1, 1, 1, 1],
    },
}

NAMES = ["dgx-h100-ib", "hgx-h100-roce", "small-roce", "dgx-h100-ib-misplaced", "hgx-h100-roce-nogid"]


def available():
    return sorted(n[:-5] for n in os.listdir(paths.PROFILES_DIR) if n.endswith(".json"))


def load_named(name):
    path = os.path.join(paths.PROFILES_DIR, name + ".json")
    if not os.path.exists(path):
        raise KeyError(name)
    with open(path) as handle:
        return json.load(handle)


def mac_to_link_local(mac):
    """fe80::/64 + modified EUI-64 of the MAC, as the kernel derives it."""
    b = [int(x, 16) for x in mac.split(":")]
    b[0] ^= 0x02
    eui = b[:3] + [0xFF, 0xFE] + b[3:]
    return ipaddress.IPv6Address(bytes([0xFE, 0x80] + [0] * 6 + eui))


def guid_to_gid(guid):
    raw = bytes.fromhex(guid.replace(":", ""))
    return ipaddress.IPv6Address(bytes([0xFE, 0x80] + [0] * 6) + raw)


def gid_full(addr):
    """sysfs spelling: eight 4-digit groups (%pI6)."""
    return addr.exploded


class Profile(object):
    """A loaded profile plus applied faults (numa, pcie-degrade, link-down)."""

    def __init__(self, data, faults=None):
        self.data = data
        self.faults = faults or {}
        self.name = data["name"]
        self.pci = {d["bdf"]: dict(d) for d in data["pci"]}
        for bdf, node in self.faults.get("numa", {}).items():
            if bdf in self.pci:
                self.pci[bdf]["numa"] = node
        for bdf, (speed, width) in self.faults.get("pcie_degrade", {}).items():
            if bdf in self.pci:
                self.pci[bdf]["link_sta"] = [speed, int(width)]
        self.nics = sorted(data["nics"], key=lambda n: n["dev"])   # ls order (lexicographic)
        self.gpus = data.get("gpus", [])
        # {netdev: [(index, IPvXInterface)]} from the kernel when rail links are on (links.py)
        self.live = None
        down = self.faults.get("link_down", [])
        for nic in self.nics:
            model = MODELS[nic["model"]]
            pdev = self.pci[nic["bdf"]]
            pdev.setdefault("name", model["lspci_name"])
            pdev.setdefault("vendor", "0x15b3")
            pdev.setdefault("device", model["device"])
            pdev.setdefault("class", "0x020000" if nic["ports"][0]["link_layer"] == "Ethernet" else "0x020700")
            for port in nic["ports"]:
                key = "%s:%d" % (nic["dev"], port["port"])
                port["down"] = key in down or nic["dev"] in down
        health_faults.apply(self)
        # fault fw-version: every function of the faulted card reports that version (flint, ethtool -i, sysfs)
        for card, version in self.faults.get("fw_version", {}).items():
            for nic in self.nics:
                if nic["bdf"].rsplit(".", 1)[0] == card:
                    nic["fw"] = version

    # --- lookups -----------------------------------------------------
    def variant(self):
        return self.data.get("mlnx_qos_variant", "head")

    def model(self, nic):
        return MODELS[nic["model"]]

    def nic(self, dev):
        for nic in self.nics:
            if nic["dev"] == dev:
                return nic
        return None

    def port_by_netdev(self, netdev):
        for nic in self.nics:
            for port in nic["ports"]:
                if port["netdev"] == netdev:
                    return nic, port
        return None, None

    def netdevs(self):
        return [p["netdev"] for n in self.nics for p in n["ports"]]

    def roce_netdevs(self):
        return [p["netdev"] for n in self.nics for p in n["ports"] if p["link_layer"] == "Ethernet"]

    def numa_of(self, bdf):
        return self.pci[bdf].get("numa", -1)

    def port_state(self, port):
        """(state word, state num, phys word, phys num)"""
        if port.get("down"):
            return ("DOWN", 1, "Disabled", 3) if port["link_layer"] == "Ethernet" else ("DOWN", 1, "Polling", 2)
        state = port.get("state", "ACTIVE")
        num = {"DOWN": 1, "INIT": 2, "ARMED": 3, "ACTIVE": 4}[state]
        return state, num, "LinkUp", 5

    def gids(self, nic, port):
        """[(index, IPv6Address, type, ndev-or-None)] in GID-table order."""
        if port["link_layer"] == "InfiniBand":
            gid0 = [(0, guid_to_gid(port["port_guid"]), "IB/RoCE v1", None)]
            return health_faults.fill_gids(port, gid0, health_faults.GID_TABLE_SIZE)
        out = []
        ll = mac_to_link_local(port["mac"])
        out.append((0, ll, "IB/RoCE v1", port["netdev"]))
        out.append((1, ll, "RoCE v2", port["netdev"]))
        if self.live is not None and port["netdev"] in self.live:
            from . import links
            return out + [(idx, addr, gtype, port["netdev"]) for idx, addr, gtype in links.gid_entries(self.live, port)]
        if port.get("ipv4"):
            v4 = ipaddress.IPv4Interface(port["ipv4"]).ip
            mapped = ipaddress.IPv6Address("::ffff:" + str(v4))
            out.append((2, mapped, "IB/RoCE v1", port["netdev"]))
            out.append((3, mapped, "RoCE v2", port["netdev"]))
        return health_faults.fill_gids(port, out, health_faults.GID_TABLE_SIZE)

    def ancestors(self, bdf):
        """Bridges from the device up to its root port (nearest first)."""
        out = []
        cur = self.pci.get(bdf, {}).get("parent")
        while cur:
            out.append(cur)
            cur = self.pci[cur].get("parent")
        return out

    def host_bridge(self, bdf):
        chain = [bdf] + self.ancestors(bdf)
        return self.pci[chain[-1]].get("host_bridge")
