# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The address a node's peers reach it at without name resolution: the IPv4 address of the
interface its default route leaves by (``/proc/net/route``: the kernel's routing table, one line
per route, ``Iface Destination Gateway Flags ...`` in hex; net/ipv4/fib_trie.c fib_route_seq_show),
read with the ``SIOCGIFADDR`` ioctl. Used by rdma.fabric.perftest ``state=gathered`` for the
fabric test's out-of-band TCP exchange. Standard library only (runs on the node).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket
import struct

try:
    import fcntl
except ImportError:   # pragma: no cover - not a Linux node
    fcntl = None

SIOCGIFADDR = 0x8915
RTF_UP = 0x0001


def default_interfaces(text):
    """The interfaces of the default routes in ``/proc/net/route`` text, lowest metric first.
    ValueError when the text has no header of the table."""
    lines = (text or "").splitlines()
    if not lines or lines[0].split()[:4] != ["Iface", "Destination", "Gateway", "Flags"]:
        raise ValueError("not /proc/net/route: no 'Iface Destination Gateway Flags' header")
    found = []
    for line in lines[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        try:
            destination, flags, metric, mask = int(fields[1], 16), int(fields[3], 16), int(fields[6]), int(fields[7], 16)
        except ValueError:
            continue
        if destination == 0 and mask == 0 and flags & RTF_UP:
            found.append((metric, fields[0]))
    return [name for _metric, name in sorted(found)]


def interface_ipv4(name):
    """The primary IPv4 address of interface ``name``, or None."""
    if fcntl is None or not name or len(name) > 15:
        return None
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        raw = fcntl.ioctl(sock.fileno(), SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
    except (IOError, OSError):
        return None
    finally:
        sock.close()
    return socket.inet_ntoa(raw[20:24])


def node_address(route_path="/proc/net/route"):
    """The IPv4 address of the default route's interface, or None (no default route, no IPv4)."""
    try:
        with open(route_path) as handle:
            text = handle.read(1024 * 1024)
        names = default_interfaces(text)
    except (IOError, OSError, ValueError):
        return None
    for name in names:
        address = interface_ipv4(name)
        if address and not address.startswith("127."):
            return address
    return None
