# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the rdma.fabric.nccl_env role writes, decided from the node's rdma_facts (and
gdr_readiness) and the role's variables: the variable checks, the per-node decision and the
check of what the files hold. Pure functions with no host I/O, run by the role's filters on the
controller and by state_check (the drift check) on the node. Errors are PlanError."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import ipaddress
import re

from ansible_collections.rdma.fabric.plugins.module_utils._common import PlanError

from ansible_collections.rdma.fabric.plugins.module_utils import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils import _nccl_consistency

# NCCL variables the role sets through its own options; nccl_env_extra must not set them.
MANAGED = {
    "NCCL_IB_HCA": "nccl_env_ib_hca_ports / nccl_env_ib_hca_exclude (derived from the rails)",
    "NCCL_IB_GID_INDEX": "nccl_env_gid_selection (index, resolved per node)",
    "NCCL_IB_ADDR_FAMILY": "nccl_env_gid_selection (address_family)",
    "NCCL_IB_ROCE_VERSION_NUM": "nccl_env_gid_selection (address_family)",
    "NCCL_IB_TC": "nccl_env_roce_dscp / nccl_env_roce_ecn",
    "NCCL_IB_SL": "nccl_env_ib_sl",
    "NCCL_NET_GDR_LEVEL": "nccl_env_net_gdr_level",
    "NCCL_SOCKET_IFNAME": "nccl_env_socket_ifname",
    "NCCL_IB_QPS_PER_CONNECTION": "nccl_env_ib_qps_per_connection",
    "NCCL_CROSS_NIC": "nccl_env_cross_nic",
    "NCCL_IB_TIMEOUT": "nccl_env_ib_timeout",
    "NCCL_DMABUF_ENABLE": "nccl_env_dmabuf_enable (auto: from the node's dma-buf support and peer memory)",
}
# Settings that come from variables alone (the same on every node given the same variables).
OPTIONS = {
    "NCCL_NET_GDR_LEVEL": "nccl_env_net_gdr_level",
    "NCCL_SOCKET_IFNAME": "nccl_env_socket_ifname",
    "NCCL_IB_QPS_PER_CONNECTION": "nccl_env_ib_qps_per_connection",
    "NCCL_CROSS_NIC": "nccl_env_cross_nic",
    "NCCL_IB_TIMEOUT": "nccl_env_ib_timeout",
}
RANGES = (("nccl_env_roce_dscp", 0, 63), ("nccl_env_ib_sl", 0, 15), ("nccl_env_ib_qps_per_connection", 1, 128),
          ("nccl_env_ib_timeout", 1, 31), ("nccl_env_cross_nic", 0, 2))
CHOICES = (("nccl_env_gid_selection", ("index", "address_family", "none")),
           ("nccl_env_ib_hca_ports", ("auto", "always", "never")),
           ("nccl_env_no_rails", ("fail", "skip")),
           ("nccl_env_fleet_check", ("fail", "warn", "skip")),
           ("nccl_env_roce_ecn", ("ect0", "ect1", "not-ect")),
           ("nccl_env_dmabuf_enable", ("auto", "unset")))
# Values that systemd EnvironmentFile= and a shell both read verbatim.
PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.,:=^/+@%-]+")
_INT = re.compile(r"[+-]?[0-9]+")


def _none(value):
    return value is None or (isinstance(value, str) and value.strip() in ("", "None"))


def _int(value):
    """An integer from an int or a decimal string (templated variables), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT.fullmatch(value.strip()):
        return int(value.strip())
    return None


def _options(config):
    """The settings of the plain options with their values as given (null: left out)."""
    return dict((name, None if _none(config.get(var)) else config.get(var)) for name, var in OPTIONS.items())


def _extra(config):
    extra = config.get("nccl_env_extra") or {}
    return extra if isinstance(extra, dict) else {}


def config_errors(config):
    """Every problem of the role's variables (``config``: dict variable name -> value), one
    message each naming the variable and the value; empty when they are sound."""
    if not isinstance(config, dict):
        raise PlanError("nccl_env_config_errors: expected a dict of role variables, got %s"
                        % type(config).__name__)
    errors = []
    for name, low, high in RANGES:
        value = config.get(name)
        if _none(value):
            continue
        number = _int(value)
        if number is None or not low <= number <= high:
            errors.append("%s must be an integer %d-%d or null (null leaves the NCCL variable out), got %r"
                          % (name, low, high, value))
    for name, allowed in CHOICES:
        if config.get(name) not in allowed:
            errors.append("%s must be one of %s, got %r" % (name, ", ".join(allowed), config.get(name)))
    for name in ("nccl_env_conf_path", "nccl_env_environment_file"):
        value = config.get(name)
        if name == "nccl_env_environment_file" and _none(value):
            continue
        if not isinstance(value, str) or not value.startswith("/") or "\n" in value:
            errors.append("%s must be an absolute path, got %r" % (name, value))
    for name in ("nccl_env_file_owner", "nccl_env_file_group"):
        value = config.get(name)
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", value):
            errors.append("%s must be a user or group name, got %r" % (name, value))
    for name in ("nccl_env_ib_hca_exclude", "nccl_env_allow_unknown", "nccl_env_fleet_groups",
                 "nccl_env_fleet_per_node"):
        value = config.get(name)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            errors.append("%s must be a list of names, got %r" % (name, value))
    extra = config.get("nccl_env_extra")
    if not isinstance(extra, dict):
        errors.append("nccl_env_extra must be a dict of NAME: value, got %r" % (extra,))
        extra = {}
    managed = sorted(name for name in extra if name in MANAGED)
    if managed:
        errors.append("nccl_env_extra sets %s, which the role sets itself; use %s"
                      % (", ".join(managed), "; ".join("%s: %s" % (name, MANAGED[name]) for name in managed)))
    allowed = config.get("nccl_env_allow_unknown") if isinstance(config.get("nccl_env_allow_unknown"), list) else []
    settings = dict(_options(config))
    settings.update((name, value) for name, value in extra.items() if name not in MANAGED)
    present = dict((name, value) for name, value in settings.items() if value is not None)
    try:
        _nccl.validate_names(list(present), allowed)
    except _nccl.NcclError as exc:
        errors.append("nccl_env_extra: %s" % exc)
    for name, value in sorted(present.items()):
        where = OPTIONS.get(name) or "nccl_env_extra.%s" % name
        try:
            _nccl.format_value(name, value)
            if name == "NCCL_NET_GDR_LEVEL":
                _nccl.gdr_level(value)
        except _nccl.NcclError as exc:
            errors.append("%s=%r: %s" % (where, value, exc))
    addresses = config.get("nccl_env_gid_addresses")
    if not isinstance(addresses, dict):
        errors.append("nccl_env_gid_addresses must map a device name to an IPv4 address, got %r" % (addresses,))
    elif addresses:
        if config.get("nccl_env_gid_selection") != "index":
            errors.append("nccl_env_gid_addresses (%s) choose the GID of NCCL_IB_GID_INDEX and need "
                          "nccl_env_gid_selection: index (it is %s)" % (addresses, config.get("nccl_env_gid_selection")))
        for device, address in sorted(addresses.items()):
            try:
                ipaddress.IPv4Address(str(address))
            except ValueError:
                errors.append("nccl_env_gid_addresses.%s: %r is not an IPv4 address" % (device, address))
    return errors


def _header(config, rails):
    lines = [str(config.get("nccl_env_header") or "")]
    if config.get("nccl_env_header_rails") in (True, "true", "True", "yes"):
        lines.append("Rails (GPU -> device:port netdev, PCIe relation):")
        for rail in rails:
            lines.append("  %s -> %s:%s %s %s" % (rail.get("gpu"), rail.get("device"), rail.get("port"),
                                                  rail.get("netdev") or "-", rail.get("relation")))
    return "\n".join(lines)


def _v4_gids(rail, addresses):
    """The GIDs nccl_gid_index would pick from: the chosen address, else the rail's own netdev."""
    gids = [g for g in rail.get("ipv4_gids") or [] if g.get("type") == "RoCE v2"]
    if rail.get("device") in addresses:
        return [g for g in gids if g.get("ipv4") == str(addresses[rail["device"]])]
    if rail.get("netdev"):
        return [g for g in gids if g.get("netdev") == rail["netdev"]]
    return gids


def node(facts, config, host="this node", gdr=None):
    """What the role writes on one node, from its ``ansible_facts.rdma`` and the variables
    (and ``gdr``, its ``ansible_facts.gdr`` of rdma.fabric.gdr_readiness: NCCL_DMABUF_ENABLE
    with ``nccl_env_dmabuf_enable: auto``).

    Returns active (the node has rails), rails, fabric, settings, text (of nccl.conf and the
    environment file), errors (stop this node), notes and warnings (printed)."""
    if not isinstance(facts, dict) or "rails" not in facts:
        raise PlanError("nccl_env_node: expected ansible_facts.rdma of rdma.fabric.rdma_facts")
    exclude = set(config.get("nccl_env_ib_hca_exclude") or [])
    rails = [rail for rail in facts.get("rails") or [] if rail.get("device") not in exclude]
    layers = sorted(set(rail.get("link_layer") for rail in rails if rail.get("link_layer")))
    roce, ib = "Ethernet" in layers, "InfiniBand" in layers
    fabric = "mixed" if roce and ib else "roce" if roce else "infiniband" if ib else "unknown"
    result = {"host": host, "active": bool(rails), "rails": rails, "fabric": fabric, "settings": {}, "text": None,
              "errors": [], "notes": [], "warnings": []}
    if not rails:
        topology = " (no nvidia-smi or no GPU topology)" if facts.get("topology") is None else ""
        excluded = ("rails excluded by nccl_env_ib_hca_exclude: %s; " % ", ".join(sorted(exclude))
                    if facts.get("rails") else "")
        what = ("%s has no NCCL rail (a GPU with a nearest RDMA NIC): RDMA devices: %s; GPUs: %d%s; %stool errors: %s."
                % (host, ", ".join(facts.get("device_names") or []) or "none", len(facts.get("gpus") or []), topology,
                   excluded, " | ".join(e.get("msg", "") for e in facts.get("errors") or []) or "none"))
        if config.get("nccl_env_no_rails") == "skip":
            result["notes"].append(what + " nccl_env_no_rails is skip, so its NCCL files are left as they are and it "
                                          "is not part of the fleet check.")
        else:
            result["errors"].append(what + " Set nccl_env_no_rails: skip for nodes that should keep no NCCL "
                                           "configuration, or take the node out of the group.")
        return result
    addresses = config.get("nccl_env_gid_addresses") or {}
    selection = config.get("nccl_env_gid_selection")
    if roce and selection != "none":
        for rail in rails:
            if rail.get("link_layer") != "Ethernet" or _v4_gids(rail, addresses):
                continue
            wanted = ("IPv4 %s (nccl_env_gid_addresses)" % addresses[rail["device"]] if rail.get("device") in addresses
                      else "an IPv4 address on that netdev")
            port_gids = ", ".join("%s %s %s %s" % (g.get("index"), g.get("type"), g.get("ipv4"), g.get("netdev"))
                                  for g in rail.get("ipv4_gids") or []) or "none"
            result["errors"].append(
                "%s: rail %s -> %s port %s (netdev %s) has no RoCE v2 GID with %s (IPv4 GIDs of the port: %s). NCCL "
                "could not reach it over RoCE v2: configure an IPv4 address on %s, or leave %s out with "
                "nccl_env_ib_hca_exclude." % (host, rail.get("gpu"), rail.get("device"), rail.get("port"),
                                              rail.get("netdev") or "unknown", wanted, port_gids,
                                              rail.get("netdev") or "its netdev", rail.get("device")))
    if result["errors"]:
        return result
    settings = {}
    try:
        settings["NCCL_IB_HCA"] = _nccl.ib_hca(rails, ports=config.get("nccl_env_ib_hca_ports", "auto"))
        if roce and selection == "index":
            settings["NCCL_IB_GID_INDEX"] = _nccl.gid_index(rails, addresses)
        if roce and selection == "address_family":
            settings["NCCL_IB_ADDR_FAMILY"] = "AF_INET"
            settings["NCCL_IB_ROCE_VERSION_NUM"] = 2
        if roce and not _none(config.get("nccl_env_roce_dscp")):
            settings["NCCL_IB_TC"] = _nccl.traffic_class(_int(config["nccl_env_roce_dscp"]),
                                                         ecn=config.get("nccl_env_roce_ecn", "ect0"))
        if ib and not _none(config.get("nccl_env_ib_sl")):
            settings["NCCL_IB_SL"] = _int(config["nccl_env_ib_sl"])
        settings.update(_options(config))
        if config.get("nccl_env_dmabuf_enable", "auto") == "auto":
            peer = (gdr or {}).get("peer_memory") if isinstance(gdr, dict) else None
            if peer is None:
                result["notes"].append("%s: no GPUDirect RDMA facts (rdma.fabric.gdr_readiness), so NCCL_DMABUF_ENABLE "
                                       "is left out" % host)
            else:
                settings["NCCL_DMABUF_ENABLE"] = _nccl.dmabuf_enable(peer)
        settings.update((name, value) for name, value in _extra(config).items() if name not in MANAGED)
        settings = dict((name, value) for name, value in settings.items() if value is not None)
        text = _nccl.render_conf(settings, allowed=config.get("nccl_env_allow_unknown"),
                                 header=_header(config, rails))
    except _nccl.NcclError as exc:
        result["errors"].append("%s: %s" % (host, exc))
        return result
    if not _none(config.get("nccl_env_environment_file")):
        unsafe = sorted(name for name, value in settings.items()
                        if not PLAIN_VALUE.fullmatch(_nccl_consistency.as_text(value)))
        if unsafe:
            result["errors"].append(
                "nccl_env_environment_file is set, but the values of %s hold characters that systemd EnvironmentFile= "
                "or a shell would not read verbatim (allowed: letters, digits and _ . , : = ^ / + @ %% -)"
                % ", ".join(unsafe))
    down = [rail for rail in rails if rail.get("state") != "ACTIVE"]
    if down:
        result["warnings"].append(
            "WARNING: %s (%s) are listed in NCCL_IB_HCA but their port is not ACTIVE; NCCL skips them and jobs on "
            "this node lose bandwidth." % (", ".join(sorted(set(r.get("device") for r in down))),
                                           ", ".join(str(r.get("gpu")) for r in down)))
    result.update(settings=settings, text=text)
    return result


def text_errors(text, plan, extra_nics=None):
    """What is wrong with ``text`` (a file as NCCL reads it) for the node ``plan``
    (``nccl_env_node``): values other than intended, NCCL_IB_HCA not exactly the rails (or
    listing a NIC that is not a rail), a GID index that is not a RoCE v2 IPv4 GID on every
    RoCE rail. Empty when the text is right."""
    problems = _nccl_consistency.conf_diff(text, plan["settings"])
    found = _nccl.parse_conf(text)
    rails = plan["rails"]
    hca = found.get("NCCL_IB_HCA")
    if hca is not None:
        devices = [item.split(":", 1)[0] for item in re.sub(r"^\^?=?", "", hca).split(",")]
        wanted = []
        for rail in rails:
            if rail.get("device") not in wanted:
                wanted.append(rail.get("device"))
        strays = [d for d in devices if d in (extra_nics or [])]
        if devices != wanted or strays:
            problems.append("NCCL_IB_HCA=%s lists %s; the rails in GPU order are %s and the NICs that are not rails "
                            "are %s" % (hca, ", ".join(devices), ", ".join(wanted), ", ".join(extra_nics or []) or "none"))
    index = found.get("NCCL_IB_GID_INDEX")
    if index is not None:
        for rail in rails:
            if rail.get("link_layer") != "Ethernet":
                continue
            gids = [g for g in rail.get("ipv4_gids") or [] if str(g.get("index")) == index.strip()]
            if len(gids) != 1 or gids[0].get("type") != "RoCE v2":
                problems.append("NCCL_IB_GID_INDEX=%s is not a RoCE v2 GID with an IPv4 address on %s port %s (IPv4 "
                                "GIDs there: %s)" % (index, rail.get("device"), rail.get("port"),
                                                     ", ".join("%s=%s" % (g.get("index"), g.get("type"))
                                                               for g in rail.get("ipv4_gids") or []) or "none"))
    return problems


def verify_errors(files, plan, extra_nics=None, owner="root", group="root"):
    """Check the files from what node_files read back (``files``: its ``after.files``, path ->
    state, checksum, mode, owner, group; a plain string is taken as the text of one file):
    each holds exactly the node's text (same SHA-256), mode 0644 and owner:group, and that
    text holds the intended settings (``text_errors``). Messages start with the path."""
    if isinstance(files, str):
        return text_errors(files, plan, extra_nics)
    if not isinstance(files, dict) or not files:
        raise PlanError("nccl_env_verify_errors: expected after.files of rdma.fabric.node_files, got %r"
                        % (files,))
    if not isinstance(plan, dict) or not isinstance(plan.get("text"), str):
        raise PlanError("nccl_env_verify_errors: expected the nccl_env_node result of this node")
    digest = hashlib.sha256(plan["text"].encode("utf-8")).hexdigest()
    problems = ["the intended text: %s" % problem for problem in text_errors(plan["text"], plan, extra_nics)]
    for path in sorted(files):
        entry = files[path] or {}
        if entry.get("state") != "present":
            problems.append("%s: missing" % path)
            continue
        if entry.get("checksum") != digest:
            problems.append("%s: content differs from the intended text (sha256 %s, intended %s)"
                            % (path, entry.get("checksum"), digest))
        if str(entry.get("mode")) != "0644":
            problems.append("%s: mode %s, intended 0644" % (path, entry.get("mode")))
        if (entry.get("owner"), entry.get("group")) != (owner, group):
            problems.append("%s: owned by %s:%s, intended %s:%s" % (path, entry.get("owner"), entry.get("group"),
                                                                    owner, group))
    return problems
