# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opensm area's node side: the InfiniBand port OpenSM binds to, the SM priority, the OS family
and its paths and units, the one read's spec and the plan of what differs from it. Pure
functions (areas/opensm.py is the area object)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib

from ansible_collections.rdma.fabric.plugins.module_utils.common._guid import normalize_guid


# ------------------------------------------------------------------ the node: ports, priority, family
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


def conf_text(value):
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


def read_spec(families, markers=(), binaries=()):
    """node_files options (state=gathered) for the role's one read: the family markers, the
    binaries and every file of every family in ``families`` (the role's ``__opensm_families``),
    and every family's service unit. Paths once each, in a stable order."""
    paths = []
    for path in list(markers) + list(binaries):
        if path and path not in paths:
            paths.append(path)
    units = []
    for name in sorted(families or {}):
        family = families[name]
        for key in ("config_file", "partitions_file", "dropin_file", "ports_file"):
            path = family.get(key)
            if path and path not in paths:
                paths.append(path)
        if family.get("service") and family["service"] not in units:
            units.append(family["service"])
    return {"files": [{"path": path, "state": "absent"} for path in paths],
            "units": [{"name": name} for name in units]}


def _mode_int(value):
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(str(value), 8)


def node_plan(gathered, files, units=None, binaries=None, install=True):
    """Pure decision of the role on the controller: what differs between the node as read
    (``gathered``: rdma.fabric.node_files state=gathered, ``{files: {path: {state, checksum, mode,
    owner, group}}, units: {name: {enabled, active, unit_state}}}``) and what the role wants.

    ``files``: node_files entries (path, content or state absent, mode, owner, group);
    ``units``: node_files unit entries (name, enabled, active); ``binaries``: paths the packages
    install (absent -> install); a wanted unit that systemctl reports ``not-found`` also means
    install. Returns ``{install, files, units, change, reasons}``: the
    install step runs when ``install``, the node_files write step when ``change``.
    """
    have_files = (gathered or {}).get("files") or {}
    have_units = (gathered or {}).get("units") or {}
    reasons = []
    missing = [path for path in (binaries or []) if (have_files.get(path) or {}).get("state") != "present"]
    # A unit systemd does not know comes with a package that is not installed.
    missing += ["%s (unit not found)" % unit["name"] for unit in units or []
                if (have_units.get(unit["name"]) or {}).get("unit_state") == "not-found"]
    need_install = bool(install) and bool(missing)
    if need_install:
        reasons.append("not installed: %s" % ", ".join(missing))
    differ = []
    for entry in files or []:
        path = entry["path"]
        cur = have_files.get(path)
        if cur is None:
            raise ValueError("node_plan: %s was not read (add it to the read)" % path)
        if entry.get("state", "present") == "absent":
            if cur.get("state") == "present":
                differ.append(path)
                reasons.append("%s: present, should be absent" % path)
            continue
        if cur.get("state") != "present":
            differ.append(path)
            reasons.append("%s: missing" % path)
            continue
        want_sum = hashlib.sha256(entry["content"].encode("utf-8")).hexdigest()
        if cur.get("checksum") != want_sum:
            differ.append(path)
            reasons.append("%s: content differs" % path)
            continue
        want_mode = _mode_int(entry.get("mode", "0644"))
        if _mode_int(cur.get("mode", "0")) != want_mode:
            differ.append(path)
            reasons.append("%s: mode %s, should be %04o" % (path, cur.get("mode"), want_mode))
            continue
        owner = (entry.get("owner", "root"), entry.get("group", "root"))
        if (cur.get("owner"), cur.get("group")) != owner:
            differ.append(path)
            reasons.append("%s: owner %s:%s, should be %s:%s" % ((path, cur.get("owner"), cur.get("group")) + owner))
    units_differ = []
    for unit in units or []:
        cur = have_units.get(unit["name"])
        if cur is None:
            raise ValueError("node_plan: unit %s was not read (add it to the read)" % unit["name"])
        for key in ("enabled", "active"):
            if unit.get(key) is not None and bool(unit[key]) != bool(cur.get(key)):
                units_differ.append(unit["name"])
                reasons.append("%s: %s is %s, should be %s" % (unit["name"], key, cur.get(key), unit[key]))
                break
    return {"install": need_install, "files": differ, "units": units_differ,
            "change": need_install or bool(differ) or bool(units_differ), "reasons": reasons}


# Paths and units per OS family; the plan picks one from the node's read (the facts when
# gathered, else /etc/debian_version or /etc/redhat-release).
#
# Debian/Ubuntu opensm package (checked on Debian opensm 3.3.23-2): opensm.service is a
# oneshot that reads PORTS from /etc/default/opensm and starts opensm@<GUID>.service per
# port (PartOf=opensm.service, so restarting opensm restarts the instances). The instance
# runs `opensm --guid %I --log_file /var/log/opensm.%I.log` without --config: OpenSM then
# reads its compiled-in /etc/opensm/opensm.conf, but --log_file overrides the config's
# log_file, so the role's drop-in replaces ExecStart to pass --config only.
#
# RHEL family opensm package: config under /etc/rdma, one opensm.service that runs the
# opensm binary itself (started through /usr/libexec/opensm-launch), so the drop-in only
# adds the environment and keeps the package's ExecStart.
FAMILIES = {
    "Debian": {
        "packages": ["opensm", "infiniband-diags"],
        "config_file": "/etc/opensm/opensm.conf",
        "partitions_file": "/etc/opensm/partitions.conf",
        "service": "opensm.service",
        "dropin_file": "/etc/systemd/system/opensm@.service.d/10-rdma-fabric.conf",
        "dropin_execstart": "/usr/sbin/opensm --guid %I --config /etc/opensm/opensm.conf",
        # environment file with PORTS="<GUID ...>" read by opensm.service
        "ports_file": "/etc/default/opensm",
    },
    "RedHat": {
        "packages": ["opensm", "infiniband-diags"],
        "config_file": "/etc/rdma/opensm.conf",
        "partitions_file": "/etc/rdma/partitions.conf",
        "service": "opensm.service",
        "dropin_file": "/etc/systemd/system/opensm.service.d/10-rdma-fabric.conf",
        "dropin_execstart": "",
        "ports_file": "",
    },
}
# What infiniband-diags installs (both families): missing means install. The opensm package is
# judged by its unit (systemctl: not-found), so the read does not hash the 1 MB opensm binary.
BINARIES = ("/usr/sbin/ibstat",)
