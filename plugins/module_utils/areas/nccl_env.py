# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl_env area: /etc/nccl.conf (and an optional environment file with the same lines)
decided per node from its topology (the rails, the GIDs, dma-buf support) and the role's
variables. Everything the rdma.fabric.nccl_env role decides is here, as pure functions with no
host I/O (the NCCL rules themselves are the libraries ``_nccl`` and ``_nccl_consistency``):

- ``settings(variables)``: the role's settings (keys without the ``nccl_env_`` prefix) from
  its variables, every option of ``roles/nccl_env/meta/argument_specs.yml``;
- ``config_errors(settings)``: every problem, each naming the ``nccl_env_*`` variable and its
  value;
- ``spec(variables, render)``: what the controller hands the node: the settings and the host
  name the messages carry (no facts, no templates: the files' text depends on the node);
- ``plan(facts, spec)``: everything the role does on a node from its facts (``ansible_facts``
  with ``rdma`` and ``gdr``, or ``ansible_facts.rdma`` alone): the rails, the NCCL settings,
  the files with path, mode, owner, group and content, ``state`` (those files as node_files
  reports them) and ``requests``, the one node_files call;
- ``records(host, results)``: the drift records of node_files results (``before`` actual,
  ``after`` expected), one per NCCL variable, mode, owner or group that differs;
- ``fleet(entries, options)``: the comparison of the play's hosts (the role's fleet check).

The role (``rdma.fabric.area_*`` filters) and the drift check (``state_check`` on the node)
call these. Errors are PlanError."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import ipaddress
import re


from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError
from ansible_collections.rdma.fabric.plugins.module_utils.areas import _spec
from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils.nccl import _nccl_consistency
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings
from ansible_collections.rdma.fabric.plugins.module_utils.common._records import config_records

NAME = "nccl_env"
PREFIX = "nccl_env_"
# read besides the role's own variables: the host the messages name
OTHER_VARIABLES = ("inventory_hostname",)
# The spec's keys that are the host's own: host_fields sets them from the host's name. Nothing else
# of the spec reads it, so the drift check's run cache shares the rest between hosts with the same
# settings (plugin_utils/_role_specs.spec_key) and sets these for each host.
HOST_FIELDS = ("host",)
# the role's boolean variables (converted as ``| bool`` converts them)
FLAGS = ("header_rails", "refresh_facts", "verify")
# No file comes from a role template and no unit is enabled: the files' text is the node's.
FILES = ()
UNITS = ()
# What plan() reads of the node (the drift check gathers it there, _state_check.gather_facts):
# (key, reader, arguments). plan() takes them as ansible_facts (PLAN_FACTS None: {rdma, gdr}):
# the rails with their GIDs and GPUs, and gdr_readiness' peer_memory, which no gdr_level changes
# (the level is gpudirect's when that area is checked too).
FACTS = (("rdma", "rdma_facts", {"gather_subset": ["devices", "gids", "gpus"]}),
         ("gdr", "gdr_readiness", {}))
PLAN_FACTS = None
MODE = "0644"               # every job reads the files

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


def _key(variable):
    return variable[len(PREFIX):]


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


def _options(settings):
    """The NCCL settings of the plain options with their values as given (null: left out)."""
    return dict((name, None if _none(settings.get(_key(var))) else settings.get(_key(var)))
                for name, var in OPTIONS.items())


def _extra(settings):
    extra = settings.get("extra") or {}
    return extra if isinstance(extra, dict) else {}


# ------------------------------------------------------------------ settings and their checks


def settings(variables):
    """The role's settings (keys without the ``nccl_env_`` prefix) from ``variables``, the
    templated value of every variable of the role's argument spec."""
    return role_settings(variables, PREFIX, FLAGS)


def spec(variables, render):
    """What the controller hands the node (the role's ``__nccl_env_spec``, the drift check's
    area spec): the settings and the host the messages name. No facts: ``plan`` takes the
    node's; no template: the files' text is the node's (``render`` is not called)."""
    out = {"settings": settings(variables), "files": [], "units": []}
    out.update(host_fields(variables))
    return out


def host_fields(variables):
    """The spec's HOST_FIELDS for the host whose variables these are: the name messages give it."""
    return {"host": variables.get("inventory_hostname") or "this node"}


def config_errors(settings):
    """Every problem of the role's settings, one message each naming the ``nccl_env_*``
    variable and the value; [] when they are good."""
    if not isinstance(settings, dict):
        raise PlanError("nccl_env: expected the role's settings dict, got %s" % type(settings).__name__)
    errors = []
    for name, low, high in RANGES:
        value = settings.get(_key(name))
        if _none(value):
            continue
        number = _int(value)
        if number is None or not low <= number <= high:
            errors.append("%s must be an integer %d-%d or null (null leaves the NCCL variable out), got %r"
                          % (name, low, high, value))
    for name, allowed in CHOICES:
        if settings.get(_key(name)) not in allowed:
            errors.append("%s must be one of %s, got %r" % (name, ", ".join(allowed), settings.get(_key(name))))
    for name in ("nccl_env_conf_path", "nccl_env_environment_file"):
        value = settings.get(_key(name))
        if name == "nccl_env_environment_file" and _none(value):
            continue
        if not isinstance(value, str) or not value.startswith("/") or "\n" in value:
            errors.append("%s must be an absolute path, got %r" % (name, value))
    for name in ("nccl_env_file_owner", "nccl_env_file_group"):
        value = settings.get(_key(name))
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", value):
            errors.append("%s must be a user or group name, got %r" % (name, value))
    for name in ("nccl_env_ib_hca_exclude", "nccl_env_allow_unknown", "nccl_env_fleet_groups",
                 "nccl_env_fleet_per_node"):
        value = settings.get(_key(name))
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            errors.append("%s must be a list of names, got %r" % (name, value))
    extra = settings.get("extra")
    if not isinstance(extra, dict):
        errors.append("nccl_env_extra must be a dict of NAME: value, got %r" % (extra,))
        extra = {}
    managed = sorted(name for name in extra if name in MANAGED)
    if managed:
        errors.append("nccl_env_extra sets %s, which the role sets itself; use %s"
                      % (", ".join(managed), "; ".join("%s: %s" % (name, MANAGED[name]) for name in managed)))
    allowed = settings.get("allow_unknown") if isinstance(settings.get("allow_unknown"), list) else []
    allowed = [name for name in allowed if isinstance(name, str)]     # any other item is named above
    wanted = dict(_options(settings))
    wanted.update((name, value) for name, value in extra.items() if name not in MANAGED)
    present = dict((name, value) for name, value in wanted.items() if value is not None)
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
    addresses = settings.get("gid_addresses")
    if not isinstance(addresses, dict):
        errors.append("nccl_env_gid_addresses must map a device name to an IPv4 address, got %r" % (addresses,))
    elif addresses:
        if settings.get("gid_selection") != "index":
            errors.append("nccl_env_gid_addresses (%s) choose the GID of NCCL_IB_GID_INDEX and need "
                          "nccl_env_gid_selection: index (it is %s)" % (addresses, settings.get("gid_selection")))
        for device, address in sorted(addresses.items()):
            try:
                ipaddress.IPv4Address(str(address))
            except ValueError:
                errors.append("nccl_env_gid_addresses.%s: %r is not an IPv4 address" % (device, address))
    return errors


# ------------------------------------------------------------------ the node's decision


def _header(settings, rails):
    lines = [str(settings.get("header") or "")]
    if settings.get("header_rails") in (True, "true", "True", "yes"):
        lines.append("Rails (GPU -> device:port netdev, PCIe relation):")
        for rail in rails:
            lines.append("  %s -> %s:%s %s %s" % (rail.get("gpu"), rail.get("device"), rail.get("port"),
                                                  rail.get("netdev") or "-", rail.get("relation")))
    return "\n".join(lines)


def _v4_gids(rail, addresses):
    """The GIDs the GID index is picked from: the chosen address, else the rail's own netdev."""
    gids = [g for g in rail.get("ipv4_gids") or [] if g.get("type") == "RoCE v2"]
    if rail.get("device") in addresses:
        return [g for g in gids if g.get("ipv4") == str(addresses[rail["device"]])]
    if rail.get("netdev"):
        return [g for g in gids if g.get("netdev") == rail["netdev"]]
    return gids


def node(facts, settings, host="this node", gdr=None):
    """What the role writes on one node, from its ``ansible_facts.rdma`` and the settings (and
    ``gdr``, its ``ansible_facts.gdr`` of rdma.fabric.gdr_readiness: NCCL_DMABUF_ENABLE with
    ``nccl_env_dmabuf_enable: auto``).

    Returns host, active (the node has rails), rails, fabric, settings (the NCCL variables),
    text (of nccl.conf and the environment file), errors (stop this node), notes and warnings
    (printed)."""
    if not isinstance(facts, dict) or "rails" not in facts:
        raise PlanError("nccl_env: expected ansible_facts.rdma of rdma.fabric.rdma_facts (with the GIDs and GPUs)")
    exclude = set(settings.get("ib_hca_exclude") or [])
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
        if settings.get("no_rails") == "skip":
            result["notes"].append(what + " nccl_env_no_rails is skip, so its NCCL files are left as they are and it "
                                          "is not part of the fleet check.")
        else:
            result["errors"].append(what + " Set nccl_env_no_rails: skip for nodes that should keep no NCCL "
                                           "configuration, or take the node out of the group.")
        return result
    addresses = settings.get("gid_addresses") or {}
    selection = settings.get("gid_selection")
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
    wanted = {}
    try:
        wanted["NCCL_IB_HCA"] = _nccl.ib_hca(rails, ports=settings.get("ib_hca_ports", "auto"))
        if roce and selection == "index":
            wanted["NCCL_IB_GID_INDEX"] = _nccl.gid_index(rails, addresses)
        if roce and selection == "address_family":
            wanted["NCCL_IB_ADDR_FAMILY"] = "AF_INET"
            wanted["NCCL_IB_ROCE_VERSION_NUM"] = 2
        if roce and not _none(settings.get("roce_dscp")):
            wanted["NCCL_IB_TC"] = _nccl.traffic_class(_int(settings["roce_dscp"]),
                                                       ecn=settings.get("roce_ecn", "ect0"))
        if ib and not _none(settings.get("ib_sl")):
            wanted["NCCL_IB_SL"] = _int(settings["ib_sl"])
        wanted.update(_options(settings))
        if settings.get("dmabuf_enable", "auto") == "auto":
            peer = (gdr or {}).get("peer_memory") if isinstance(gdr, dict) else None
            if peer is None:
                result["notes"].append("%s: no GPUDirect RDMA facts (rdma.fabric.gdr_readiness), so NCCL_DMABUF_ENABLE "
                                       "is left out" % host)
            else:
                wanted["NCCL_DMABUF_ENABLE"] = _nccl.dmabuf_enable(peer)
        wanted.update((name, value) for name, value in _extra(settings).items() if name not in MANAGED)
        wanted = dict((name, value) for name, value in wanted.items() if value is not None)
        text = _nccl.render_conf(wanted, allowed=settings.get("allow_unknown"), header=_header(settings, rails))
    except _nccl.NcclError as exc:
        result["errors"].append("%s: %s" % (host, exc))
        return result
    if not _none(settings.get("environment_file")):
        unsafe = sorted(name for name, value in wanted.items()
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
    result.update(settings=wanted, text=text)
    return result


def text_errors(text, decided, extra_nics=None):
    """What is wrong with ``text`` (a file as NCCL reads it) for the node's decision
    ``decided`` (``node``): values other than intended, NCCL_IB_HCA not exactly the rails (or
    listing a NIC that is not a rail), a GID index that is not a RoCE v2 IPv4 GID on every
    RoCE rail. Empty when the text is right."""
    problems = _nccl_consistency.conf_diff(text, decided["settings"])
    found = _nccl.parse_conf(text)
    rails = decided["rails"]
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


# ------------------------------------------------------------------ the area object


def _facts(facts):
    """``(rdma, gdr)`` from ``ansible_facts`` (its ``rdma`` and ``gdr``) or ``ansible_facts.rdma``."""
    if isinstance(facts, dict) and isinstance(facts.get("rdma"), dict):
        return facts["rdma"], facts.get("gdr")
    return facts, None


def paths(settings):
    """The files the role writes: nccl.conf, and the environment file when one is set."""
    environment_file = settings.get("environment_file")
    return [settings["conf_path"]] + ([] if _none(environment_file) else [environment_file])


def plan(facts, spec):
    """Everything the role does on the node with these facts (``ansible_facts``: ``rdma`` of
    rdma_facts with the GIDs and GPUs, ``gdr`` of gdr_readiness when there is one; or
    ``ansible_facts.rdma`` alone): the node's decision (``node``: host, active, rails, fabric,
    settings, text, errors, notes, warnings), ``files`` (path, content, mode, owner, group),
    ``state`` (those files as node_files reports them: what ``records`` expects), ``fleet``
    (the options of the fleet check) and ``requests``, the node_files call (none on a node
    without rails or with errors)."""
    settings = spec["settings"]
    errors = config_errors(settings)
    if errors:
        raise PlanError("nccl_env: " + "; ".join(errors))
    rdma, gdr = _facts(facts)
    result = node(rdma, settings, spec.get("host") or "this node", gdr)
    if result["active"] and not result["errors"]:
        # the planner's own check of its text: every rail, a RoCE v2 IPv4 GID on each
        result["errors"] = ["the intended text: %s" % problem
                            for problem in text_errors(result["text"], result, rdma.get("extra_nics"))]
    owner, group = settings.get("file_owner") or "root", settings.get("file_group") or "root"
    files = []
    if result["active"] and not result["errors"]:
        files = [{"path": path, "content": result["text"], "mode": MODE, "owner": owner, "group": group}
                 for path in paths(settings)]
    result["files"] = files
    result["state"] = {"files": dict((f["path"], {"state": "present", "mode": MODE, "owner": owner, "group": group,
                                                  "content": f["content"],
                                                  "checksum": hashlib.sha256(f["content"].encode("utf-8")).hexdigest()})
                                     for f in files), "units": {}}
    result["fleet"] = {"groups": list(settings.get("fleet_groups") or []),
                       "per_node": list(settings.get("fleet_per_node") or [])}
    result["requests"] = [{"resource": "node_files", "name": "NCCL files", "options": {"content": True},
                           "config": {"files": files, "units": []}}] if files else []
    result["drift_spec"] = _spec.node_files(NAME, spec)
    return result


def _record(host, obj, setting, expected, actual):
    return {"host": host, "area": NAME, "object": obj, "setting": setting, "expected": expected, "actual": actual}


def records(host, results):
    """Drift records ``{host, area, object, setting, expected, actual}`` of node_files results
    (``[(resource, result)]``: ``before`` is what the files hold, ``after`` what they should:
    the drift check's check-mode result, or the role's verify, the files read back against the
    plan's ``state``). Per file: a missing file is a record per NCCL variable it should hold;
    a present one a record per NCCL variable whose value differs (comments aside: NCCL skips
    them), or ``content`` when the text was not read, and one per mode, owner or group. A
    skipped or failed result has none (the run reports the failure)."""
    out = []
    for resource, result in results:
        if resource != "node_files" or not isinstance(result, dict) or result.get("skipped") or result.get("failed"):
            continue
        before = (result.get("before") or {}).get("files") or {}
        after = (result.get("after") or {}).get("files") or {}
        for path in sorted(after):
            want, have = after[path] or {}, before.get(path) or {}
            if want.get("state") != "present":
                continue
            expected = _nccl.parse_conf(want["content"]) if isinstance(want.get("content"), str) else None
            if have.get("state") != "present":
                if expected is None:
                    out.append(_record(host, path, "state", "present", have.get("state")))
                else:
                    out.extend(_record(host, path, key, value, None) for key, value in sorted(expected.items()))
                continue
            if expected is not None and isinstance(have.get("content"), str):
                found = _nccl.parse_conf(have["content"])
                out.extend(_record(host, path, key, expected.get(key), found.get(key))
                           for key in sorted(set(expected) | set(found)) if expected.get(key) != found.get(key))
            elif have.get("checksum") != want.get("checksum"):
                out.append(_record(host, path, "content", want.get("checksum"), have.get("checksum")))
            for key in ("mode", "owner", "group"):
                if have.get(key) != want.get(key):
                    out.append(_record(host, path, key, want.get(key), have.get(key)))
    return out


def fleet(plans, options=None):
    """The fleet check over the play's hosts: ``plans`` is ``[{host, plan, groups}]`` (each
    host's ``plan`` and its group_names; a host without a plan or without rails is left out),
    ``options`` the ``fleet`` of a plan (the groups to compare within, the per-node settings).
    Returns ``_nccl_consistency.fleet_diff``'s report (consistent, summary, messages per host)."""
    options = options or {}
    entries = []
    for item in plans or []:
        decided = item.get("plan")
        if not isinstance(decided, dict) or not decided.get("active"):
            continue
        entries.append({"host": item["host"], "settings": decided["settings"], "groups": list(item.get("groups") or []),
                        "fabric": decided["fabric"]})
    try:
        return _nccl_consistency.fleet_diff(entries, groups=options.get("groups"), per_node=options.get("per_node"))
    except _nccl.NcclError as exc:
        raise PlanError("nccl_env fleet: %s" % exc)


def apply_requests(plan):
    """The module calls the role makes on the node, in its order, from the same ``plan``: the
    NCCL files' node_files (the plan's ``requests``) and the drift spec's node_files; none on a
    node the role does not render (no rails, or errors: the role fails such a node)."""
    if not plan.get("requests"):
        return []
    return [dict(request) for request in plan["requests"]] + [
        {"resource": "node_files", "name": "drift spec", "config": plan["drift_spec"]}]


def drift_requests(inputs, host):
    """The drift check's requests on the node (``drift/_drift_areas``): the plan's node_files
    call (nccl.conf and the environment file with the text the node's topology gives today), the
    call the role makes; none on a node without rails. A missing file is drift of every NCCL
    variable it should hold; a problem of the settings or the plan is a config record."""
    errors = list(inputs.get("errors") or []) + list((inputs.get("plan") or {}).get("errors") or [])
    if errors:
        return [{"records": config_records(host, NAME, errors)}]
    return [dict(request, area=NAME) for request in inputs["plan"]["requests"]]
