# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the rdma.fabric.opensm role decides from the node: the port OpenSM binds to (from
``ibstat``), the priority, the OS family (its marker files) and opensm.conf's value syntax. Pure
functions with no host I/O, run by the role's filters on the controller and by state_check (the
drift check) on the node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils._guid import normalize_guid


def usable_ib_ports(ports):
    """InfiniBand ports whose link is up. Before any SM runs a port stays 'Initializing' with
    physical state LinkUp, so the physical state decides, not the logical one."""
    out = []
    for port in ports:
        if port.get("link_layer") not in ("InfiniBand", "IB"):
            continue
        if not str(port.get("physical_state", "")).startswith("LinkUp"):
            continue
        out.append(port)
    return out


def select_port(ports, guid="", ca="", port=None):
    """The port OpenSM binds to: the one with ``guid`` if given, else the first usable
    InfiniBand port (optionally on CA ``ca`` / port number ``port``).

    Returns {"port": <port dict>} or {"error": <message naming what was looked for>}.
    """
    listed = ", ".join("%s/%s %s (%s, %s)" % (p.get("ca"), p.get("port"), p.get("port_guid"), p.get("link_layer"),
                                              p.get("physical_state")) for p in ports) or "no ports"
    if guid:
        want = normalize_guid(guid)
        for candidate in ports:
            if candidate.get("port_guid") == want:
                return {"port": candidate}
        return {"error": "opensm_guid %s is not a port of this host; ibstat lists: %s" % (want, listed)}
    for candidate in usable_ib_ports(ports):
        if ca and candidate.get("ca") != ca:
            continue
        if port not in (None, "") and candidate.get("port") != int(port):
            continue
        return {"port": candidate}
    where = "".join([" on CA %s" % ca if ca else "", " port %s" % port if port not in (None, "") else ""])
    return {"error": "no InfiniBand port with the physical link up%s; set opensm_guid or check the link. "
                     "ibstat lists: %s" % (where, listed)}


def sm_priority(role, standby_rank=1, explicit=None, master_priority=14):
    """Priority an SM gets: the explicit one, else master_priority for the master and
    master_priority - rank for the rank-th standby (rank 1 is the first to take over)."""
    if explicit is not None and explicit != "":
        return int(explicit)
    if role == "master":
        return int(master_priority)
    return int(master_priority) - int(standby_rank)


def conf_value(value):
    """Python/YAML value -> opensm.conf text (TRUE/FALSE booleans, (null) for unset)."""
    if value is None:
        return "(null)"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)


# Files whose presence tells the OS family when facts were not gathered (the role's one read
# stats them with everything else; no setup task).
FAMILY_MARKERS = (("/etc/debian_version", "Debian"), ("/etc/redhat-release", "RedHat"))


def os_family(gathered, facts_family=None):
    """The OS family from the facts when gathered, else from the marker files in ``gathered``
    (rdma.fabric.node_files state=gathered). Returns {"family": "Debian"|"RedHat"} or
    {"error": <message naming what was seen>}."""
    if facts_family:
        if facts_family in ("Debian", "RedHat"):
            return {"family": facts_family}
        return {"error": "OS family %r is not supported by rdma.fabric.opensm (Debian or RedHat)" % (facts_family,)}
    files = (gathered or {}).get("files") or {}
    for path, family in FAMILY_MARKERS:
        if (files.get(path) or {}).get("state") == "present":
            return {"family": family}
    return {"error": "cannot tell the OS family: none of %s exists on the node and facts were not gathered"
                     % ", ".join(path for path, _family in FAMILY_MARKERS)}
