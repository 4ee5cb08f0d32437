"""ethtool -S (mlx5 counter names; rx_prioN_pause* only for PFC-enabled priorities), -i, plain."""
from .. import health_faults


def is_write(tool, args):
    return bool(args) and args[0] in ("-s", "-A", "-K", "-G", "-L", "--set-priv-flags", "-C")


def run(tool, args, ctx):
    if not args:
        return "", "ethtool: bad command line argument(s)\nFor more information run ethtool -h\n", 1
    opt, dev = (args[0], args[1] if len(args) > 1 else None) if args[0].startswith("-") else (None, args[0])
    nic, port = ctx.profile.port_by_netdev(dev) if dev else (None, None)
    if port is None:
        if opt in ("-S", "--statistics"):
            return "", "Cannot get stats strings information: No such device\n", 96
        return "", "netlink error: no device matches name (offset 24)\nnetlink error: No such device\n", 1
    if opt in ("-S", "--statistics"):
        return stats(ctx, nic, port), "", 0
    if opt in ("-i", "--driver"):
        return ("driver: mlx5_core\nversion: 24.10-1.1.4\nfirmware-version: %s (%s)\nexpansion-rom-version: \n"
                "bus-info: %s\nsupports-statistics: yes\nsupports-test: yes\nsupports-eeprom-access: no\n"
                "supports-register-dump: no\nsupports-priv-flags: yes\n" % (nic["fw"], nic["board_id"], nic["bdf"])), "", 0
    if opt is None:
        up = not port.get("down")
        return ("Settings for %s:\n\tSpeed: %s\n\tDuplex: %s\n\tAuto-negotiation: on\n\tPort: Direct Attach Copper\n"
                "\tLink detected: %s\n" % (dev, ("%dMb/s" % (port["rate"] * 1000)) if up else "Unknown!",
                                           "Full" if up else "Unknown! (255)", "yes" if up else "no")), "", 0
    if ctx.fail_now:
        return "", "Cannot set device settings: Device or resource busy\n", 1
    return "", "", 0


def stats(ctx, nic, port):
    over = dict(ctx.profile.faults.get("counters", {}).get(port["netdev"], {}))
    over.update(health_faults.values(ctx.profile.faults, port["netdev"]))
    names = ["rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_csum_unnecessary", "rx_out_of_buffer",
             "rx_if_down_packets", "rx_steer_missed_packets", "rx_vport_unicast_packets", "rx_vport_unicast_bytes",
             "tx_vport_unicast_packets", "tx_vport_unicast_bytes", "rx_vport_rdma_unicast_packets",
             "rx_vport_rdma_unicast_bytes", "tx_vport_rdma_unicast_packets", "tx_vport_rdma_unicast_bytes",
             "rx_packets_phy", "rx_bytes_phy", "tx_packets_phy", "tx_bytes_phy", "rx_discards_phy",
             "tx_discards_phy", "rx_crc_errors_phy", "rx_symbol_err_phy", "link_down_events_phy",
             "rx_pcs_symbol_err_phy", "rx_corrected_bits_phy", "rx_buffer_passed_thres_phy"]
    q = ctx.nic.get("qos", {}).get(port["netdev"]) or {"pfc_en": 0}
    for prio in range(8):
        names += ["rx_prio%d_bytes" % prio, "rx_prio%d_packets" % prio, "rx_prio%d_discards" % prio,
                  "tx_prio%d_bytes" % prio, "tx_prio%d_packets" % prio]
        if q["pfc_en"] >> prio & 1:
            names += ["rx_prio%d_pause" % prio, "rx_prio%d_pause_duration" % prio, "tx_prio%d_pause" % prio,
                      "tx_prio%d_pause_duration" % prio, "rx_prio%d_pause_transition" % prio]
    if not q["pfc_en"]:
        names += ["rx_global_pause", "rx_global_pause_duration", "tx_global_pause", "tx_global_pause_duration",
                  "rx_global_pause_transition"]
    names += [n for n in over if n not in names]
    return "NIC statistics:\n" + "".join("     %s: %d\n" % (n, over.get(n, 0)) for n in names)
