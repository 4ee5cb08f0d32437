"""Regenerate fabricsim/profiles/*.json (the JSON files are the source of truth once written;
this script only saves typing for the 8-rail boxes).  Run: python3 tools/gen_profiles.py"""
import copy
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fabricsim", "profiles")

# ACS capability / control bits (PCIe spec 7.7.8): SrcValid TransBlk ReqRedir CmpltRedir UpstreamFwd EgressCtrl DirectTrans
ACS_CAP_SWITCH = 0x5F   # SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans+
ACS_CAP_ROOT = 0x1F     # SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
ACS_CTL_ROOT = 0x1D     # what Linux enables on root ports with the IOMMU on
ACS_REDIR_ON = 0x1D     # SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+ (kernel default on switch ports)

RAIL_BUSES = [0x18, 0x40, 0x4F, 0x5E, 0x9A, 0xC0, 0xCE, 0xDC]


def bdf(bus, dev=0, fn=0):
    return "0000:%02x:%02x.%x" % (bus, dev, fn)


def rail_tree(pci, rail, bus, numa, nic_link, gpu=True):
    host = bus - 3
    root = bdf(host, 1, 0)
    usp = bdf(host + 1, 0, 0)
    dsp_nic = bdf(host + 2, 0, 0)
    dsp_gpu = bdf(host + 2, 3, 0)
    pci.append({"bdf": root, "kind": "root_port", "parent": None, "host_bridge": "pci0000:%02x" % host,
                "numa": numa, "name": "Intel Corporation Device 352a (rev 04)", "vendor": "0x8086", "device": "0x352a",
                "class": "0x060400", "link_cap": ["32GT/s", 16], "link_sta": ["32GT/s", 16],
                "acs_cap": ACS_CAP_ROOT, "acs_ctl": ACS_CTL_ROOT, "acs_offset": "0x220"})
    sw = {"kind": "switch", "numa": numa, "name": "Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)",
          "vendor": "0x1000", "device": "0xc030", "class": "0x060400", "link_cap": ["32GT/s", 16],
          "link_sta": ["32GT/s", 16], "acs_cap": ACS_CAP_SWITCH, "acs_ctl": 0, "acs_offset": "0x230"}
    pci.append(dict(sw, bdf=usp, parent=root, kind="switch_up", acs_cap=0, acs_ctl=0, acs_offset=None))
    pci.append(dict(sw, bdf=dsp_nic, parent=usp, kind="switch_down"))
    if gpu:
        pci.append(dict(sw, bdf=dsp_gpu, parent=usp, kind="switch_down"))
    pci.append({"bdf": bdf(bus), "kind": "nic", "parent": dsp_nic, "numa": numa,
                "link_cap": nic_link, "link_sta": list(nic_link)})
    if gpu:
        pci.append({"bdf": bdf(bus + 3), "kind": "gpu", "parent": dsp_gpu, "numa": numa,
                    "name": "NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)", "vendor": "0x10de",
                    "device": "0x2330", "class": "0x030200", "link_cap": ["32GT/s", 16], "link_sta": ["32GT/s", 16]})
    return bdf(bus), bdf(bus + 3)


def eth_guid(mac):
    b = mac.split(":")
    return "%s%s:%s03:00%s:%s%s" % (b[0], b[1], b[2], b[3], b[4], b[5])


def eight_gpu(name, link_layer):
    pci, nics, gpus = [], [], []
    for rail, bus in enumerate(RAIL_BUSES):
        numa = 0 if bus < 0x80 else 1
        nic_bdf, gpu_bdf = rail_tree(pci, rail, bus, numa, ["32GT/s", 16])
        gpus.append({"index": rail, "bdf": gpu_bdf, "name": "NVIDIA H100 80GB HBM3",
                     "uuid": "GPU-5e1c%04x-2b3c-4d5e-8f90-a1b2c3d4e5%02x" % (bus, rail)})
        mac = "a0:88:c2:b8:%02x:%02x" % (0xa0 + rail, 0x10 + bus % 0x40)
        if link_layer == "InfiniBand":
            guid = "a088:c203:00b8:%02x%02x" % (0xa0 + rail, 0x10 + bus % 0x40)
            port = {"port": 1, "netdev": "ibp%ds0" % bus, "link_layer": "InfiniBand", "state": "ACTIVE",
                    "rate": 400, "lid": 10 + rail, "sm_lid": 1, "port_guid": guid, "mtu": 4096,
                    "ipv4": "192.168.%d.11/24" % (100 + rail)}
        else:
            guid = eth_guid(mac)
            port = {"port": 1, "netdev": "enp%ds0np0" % bus, "link_layer": "Ethernet", "state": "ACTIVE",
                    "rate": 400, "mac": mac, "ipv4": "10.10.%d.11/24" % rail, "mtu": 4200}
        nics.append({"dev": "mlx5_%d" % rail, "bdf": nic_bdf, "model": "cx7", "fw": "28.39.1002",
                     "node_guid": guid, "sys_image_guid": guid, "board_id": "MT_0000000838",
                     "serial": "MT2340J887%02d" % rail, "rail": True, "ports": [port]})
    return pci, nics, gpus


def dgx():
    pci, nics, gpus = eight_gpu("dgx-h100-ib", "InfiniBand")
    # storage / in-band dual-port ConnectX-7 on NUMA 1, straight under a root port
    pci.append({"bdf": "0000:e1:01.0", "kind": "root_port", "parent": None, "host_bridge": "pci0000:e1", "numa": 1,
                "name": "Intel Corporation Device 352a (rev 04)", "vendor": "0x8086", "device": "0x352a",
                "class": "0x060400", "link_cap": ["32GT/s", 16], "link_sta": ["32GT/s", 16],
                "acs_cap": ACS_CAP_ROOT, "acs_ctl": ACS_CTL_ROOT, "acs_offset": "0x220"})
    for fn in (0, 1):
        b = "0000:e4:00.%d" % fn
        mac = "a0:88:c2:b9:00:%02x" % (0x40 + fn)
        pci.append({"bdf": b, "kind": "nic", "parent": "0000:e1:01.0", "numa": 1,
                    "link_cap": ["32GT/s", 16], "link_sta": ["32GT/s", 16]})
        nics.append({"dev": "mlx5_%d" % (8 + fn), "bdf": b, "model": "cx7-2p", "fw": "28.39.1002",
                     "node_guid": eth_guid(mac), "sys_image_guid": eth_guid("a0:88:c2:b9:00:40"),
                     "board_id": "MT_0000000834", "serial": "MT2340J88800", "rail": False,
                     "ports": [{"port": 1, "netdev": "enp228s0f%dnp%d" % (fn, fn), "link_layer": "Ethernet",
                                "state": "ACTIVE", "rate": 200, "mac": mac, "mtu": 9000,
                                "ipv4": "172.20.%d.11/16" % (fn + 1)}]})
    return {
        "name": "dgx-h100-ib",
        "description": "DGX H100: 8x H100 SXM5, 8x ConnectX-7 NDR InfiniBand rails (one per GPU, GPU and NIC "
                       "under a shared PCIe Gen5 switch), 1x dual-port ConnectX-7 for storage/in-band, 2 NUMA nodes",
        "hostname": "dgx01",
        "mlnx_qos_variant": "2023",
        "dcbx_default": "fw",
        "ecn_sysfs": True,
        "topo_format": "legend_numa_id",
        "numa_cpus": {"0": "0-55,112-167", "1": "56-111,168-223"},
        "pci": pci, "gpus": gpus, "nics": nics,
        "lldp_neighbour": {"chassis_mac": "b8:ce:f6:6a:10:00", "pfc": [3], "app": [[3, 3, 4791]], "willing": False},
    }


def hgx():
    pci, nics, gpus = eight_gpu("hgx-h100-roce", "Ethernet")
    return {
        "name": "hgx-h100-roce",
        "description": "HGX H100 8-GPU: 8x H100 SXM5, 8x ConnectX-7 400GbE RoCE rails (one per GPU under a shared "
                       "PCIe Gen5 switch), IPv4 per rail, 2 NUMA nodes",
        "hostname": "hgx01",
        "mlnx_qos_variant": "head",
        "dcbx_default": "os",
        "ecn_sysfs": True,
        "topo_format": "legend_numa_id",
        "numa_cpus": {"0": "0-55,112-167", "1": "56-111,168-223"},
        "pci": pci, "gpus": gpus, "nics": nics,
        "lldp_neighbour": {"chassis_mac": "b8:ce:f6:6a:20:00", "pfc": [3], "app": [[3, 3, 4791]], "willing": False},
    }


def small():
    pci = [{"bdf": "0000:3a:00.0", "kind": "root_port", "parent": None, "host_bridge": "pci0000:3a", "numa": 0,
            "name": "Intel Corporation Sky Lake-E PCI Express Root Port A (rev 04)", "vendor": "0x8086",
            "device": "0x2030", "class": "0x060400", "link_cap": ["8GT/s", 16], "link_sta": ["8GT/s", 16],
            "acs_cap": ACS_CAP_ROOT, "acs_ctl": ACS_CTL_ROOT, "acs_offset": "0x110"}]
    nics = []
    for fn in (0, 1):
        b = "0000:3b:00.%d" % fn
        mac = "0c:42:a1:5e:7a:%02x" % (0x30 + fn)
        pci.append({"bdf": b, "kind": "nic", "parent": "0000:3a:00.0", "numa": 0,
                    "link_cap": ["16GT/s", 16], "link_sta": ["8GT/s", 16]})
        nics.append({"dev": "mlx5_%d" % fn, "bdf": b, "model": "cx6dx", "fw": "22.36.1010",
                     "node_guid": eth_guid(mac), "sys_image_guid": eth_guid("0c:42:a1:5e:7a:30"),
                     "board_id": "MT_0000000359", "serial": "MT2146X12345", "rail": False,
                     "ports": [{"port": 1, "netdev": "ens1f%dnp%d" % (fn, fn), "link_layer": "Ethernet",
                                "state": "ACTIVE", "rate": 100, "mac": mac, "mtu": 1500,
                                "ipv4": "192.168.%d.11/24" % (100 + fn)}]})
    return {
        "name": "small-roce",
        "description": "One dual-port ConnectX-6 Dx 100GbE (RoCE) on a Gen3 root port, no GPU, 1 NUMA node; "
                       "prints an older mlnx_qos layout (default priority line, bare-comma buffer line, unsorted TCs)",
        "hostname": "roce01",
        "mlnx_qos_variant": "old",
        "lldpad_running": True,
        "dcbx_default": "os",
        "ecn_sysfs": True,
        "topo_format": "legend",
        "numa_cpus": {"0": "0-15"},
        "pci": pci, "gpus": [], "nics": nics,
        "lldp_neighbour": {"chassis_mac": "b8:ce:f6:6a:30:00", "pfc": [3], "app": [[3, 3, 4791]], "willing": False},
    }


def misplaced():
    p = copy.deepcopy(dgx())
    p["name"] = "dgx-h100-ib-misplaced"
    p["description"] = ("dgx-h100-ib with two mistakes: ACS redirect still on at the switch port above mlx5_3 "
                        "(0000:5d:00.0) and mlx5_5 (0000:c0:00.0) reported on the wrong NUMA node (0)")
    for dev in p["pci"]:
        if dev["bdf"] == "0000:5d:00.0":
            dev["acs_ctl"] = ACS_REDIR_ON
        if dev["bdf"] == "0000:c0:00.0":
            dev["numa"] = 0
    return p


def nogid():
    p = copy.deepcopy(hgx())
    p["name"] = "hgx-h100-roce-nogid"
    p["description"] = "hgx-h100-roce where mlx5_2 (enp79s0np0) has no IPv4 address, so no IPv4 RoCE GIDs"
    del p["nics"][2]["ports"][0]["ipv4"]
    return p


if __name__ == "__main__":
    for prof in (dgx(), hgx(), small(), misplaced(), nogid()):
        with open(os.path.join(OUT, prof["name"] + ".json"), "w") as handle:
            json.dump(prof, handle, indent=1, sort_keys=True)
            handle.write("\n")
        print(prof["name"])
