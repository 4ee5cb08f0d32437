# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rails area: multi-rail addressing of a GPU node. The rail plan itself (every node's
address, gateway, leaf and leaf port on every rail, stable against the allocation file) sees the
whole fleet and is made once on the controller (plugins/plugin_utils/_rail_plan.py, the
``rail_plan`` filter); this object takes the host's slice of it and decides everything the
rdma.fabric.rails role does on the node, as pure functions with no host I/O:

- ``settings(variables)``: the role's settings (every option of ``roles/rails/meta/argument_specs.yml``,
  keys without the ``rails_`` prefix), the host, the play's hosts, and ``node``, the host's slice
  of the fleet's rail plan (``__rails_node``, once the role planned the fleet);
- ``config_errors(settings)``: every problem, each naming the ``rails_*`` variable and its value
  (with ``planner_errors``: the planner's own checks of its parameters, run on the controller
  where the planner is, plugin_utils/_rails_role.py ``spec_inputs``);
- ``spec(variables, render, planner_errors=())``: the settings and the host's slice of the plan
  (no facts);
- ``plan(facts, spec)``: from ``ansible_facts`` (``rdma.rails``, ``os_family``): ``nics``, the
  node's rail NICs the controller plans the fleet with; once the spec holds the node's slice,
  also the ``rail_addresses`` config (``interfaces``), the persistent files (``backend``,
  ``files``: systemd-networkd or NetworkManager keyfiles and a sysctl.d file), the LLDP config
  and the expected ``neighbors`` of the cabling check, and ``requests`` in the role's order;
- ``records(host, results)``: the verify findings (area ``rails``) and the cabling findings
  (area ``rails_cabling``), ``{host, area, object, setting, expected, actual}`` with ``object``
  ``rail N NETDEV``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re


from ansible_collections.rdma.fabric.plugins.module_utils.common._common import IFNAME_MAX, PlanError, check_name
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings

NAME = "rails"
PREFIX = "rails_"
# the host, the play's hosts (rails_release may not name them) and the host's slice of the
# fleet's rail plan, which the role sets once it planned the fleet (None before)
OTHER_VARIABLES = ("inventory_hostname", "ansible_play_hosts_all", "__rails_node")
FLAGS = ("allocation_write", "policy_routing", "verify", "fail_on_findings")
BACKENDS = ("networkd", "networkmanager")
# the OS families whose default network stack is NetworkManager (rails_backend auto)
NETWORKMANAGER_FAMILIES = ("RedHat", "Rocky", "AlmaLinux")
SYSCTL_NAMES = ("arp_ignore", "arp_announce", "rp_filter")
NETWORKD_DIR = "/etc/systemd/network"
NM_DIR = "/etc/NetworkManager/system-connections"
SYSCTL_FILE = "/etc/sysctl.d/60-rdma-rails.conf"
DEFAULT_HEADER = "Managed by Ansible (rdma.fabric.rails)"


def settings(variables, planner_errors=()):
    """The role's settings (keys without ``rails_``), ``host``, ``hosts`` (the play's),
    ``node`` (the host's slice of the rail plan, or None) and ``planner_errors``."""
    out = role_settings(variables, PREFIX, FLAGS)
    out["host"] = variables.get("inventory_hostname")
    out["hosts"] = list(variables.get("ansible_play_hosts_all") or [])
    out["node"] = variables.get("__rails_node")
    out["planner_errors"] = list(planner_errors or [])
    return out


# A rail interface name as the rail files can hold it: the kernel's rules (dev_valid_name():
# IFNAMSIZ - 1 = 15 bytes, no '/', ':' or whitespace, not '.' or '..') and, since the name is
# written into systemd-networkd / NetworkManager files, sysctl paths and ip(8) argv, only
# letters, digits, '_', '.' and '-' (no ';', '$', quotes, '*', '%', '=' or '#'), not starting with '-'.
_IFNAME = re.compile(r"[A-Za-z0-9_.-]+")


def interface_error(field, value):
    """The problem of a rail interface name ``value``, naming ``field``; None when it is good."""
    try:
        check_name(field, value, "interface", IFNAME_MAX)
    except ValueError as exc:
        return str(exc)
    if not _IFNAME.fullmatch(value):
        bad = next(c for c in value if not _IFNAME.fullmatch(c))
        return ("%s=%r: a rail interface name holds only letters, digits, '_', '.' and '-' (it is written into "
                "the rail files and commands), not %r" % (field, value, bad))
    return None


def _rails(node_plan, field="node_plan"):
    if not isinstance(node_plan, dict) or not isinstance(node_plan.get("rails"), list):
        raise PlanError("%s: expected one node of the rail plan (rail_plan(...).nodes[NAME]), got %r"
                        % (field, node_plan if not isinstance(node_plan, dict) else sorted(node_plan)))
    for index, row in enumerate(node_plan["rails"]):
        if not row.get("netdev"):
            raise PlanError("%s.rails[%d]: rail %s has no netdev (give rails_nics with netdev names)"
                            % (field, index, row.get("rail")))
        error = interface_error("%s.rails[%d].netdev" % (field, index), row["netdev"])
        if error:
            raise PlanError(error + " (from rails_nics or the node's rdma facts)")
    return node_plan["rails"]


def _int(value, field, low, high):
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise PlanError("%s=%r: expected a number %d-%d" % (field, value, low, high))
    if isinstance(value, bool) or number < low or number > high:
        raise PlanError("%s=%r: expected a number %d-%d" % (field, value, low, high))
    return number


def interfaces(node_plan, sysctls=None, table_base=100, rule_priority_base=1000, policy_routing=True):
    """The ``rail_addresses`` config of one node: one entry per rail, its table
    ``table_base + rail`` and rule priority ``rule_priority_base + rail`` with the leaf as the
    table's default route (when ``policy_routing``)."""
    rows = _rails(node_plan)
    sysctls = sysctls or {}
    if not isinstance(sysctls, dict):
        raise PlanError("rails_sysctls=%r: expected a dict of %s" % (sysctls, ", ".join(SYSCTL_NAMES)))
    for name in sysctls:
        if name not in SYSCTL_NAMES:
            raise PlanError("rails_sysctls.%s: unknown; the rail sysctls are %s" % (name, ", ".join(SYSCTL_NAMES)))
    table_base = _int(table_base, "rails_table_base", 1, 4294967000)
    rule_priority_base = _int(rule_priority_base, "rails_rule_priority_base", 1, 32000)
    out = []
    for row in rows:
        entry = {"interface": row["netdev"], "addresses": [row["cidr"]], "link_up": True}
        for name in SYSCTL_NAMES:
            if sysctls.get(name) is not None:
                entry[name] = sysctls[name]
        if policy_routing:
            table = table_base + int(row["rail"])
            if table in (253, 254, 255):
                raise PlanError("rails_table_base=%r: rail %s would use the kernel's table %d"
                                % (table_base, row["rail"], table))
            entry["table"] = table
            entry["rule_priority"] = rule_priority_base + int(row["rail"])
            entry["gateways"] = [row["gateway"]]
        out.append(entry)
    return out


def config_errors(settings):
    """Every problem of the role's settings, each naming the ``rails_*`` variable and the value:
    the planner's own checks (``planner_errors``, of its parameters and of ``rails_nics`` as one
    node's NICs), then the role's of what it builds from them; [] when they are good."""
    if not isinstance(settings, dict):
        raise PlanError("rails: expected the role's settings dict, got %s" % type(settings).__name__)
    errors = []
    pools = settings.get("pools")
    if not isinstance(pools, list) or not pools:
        errors.append("rails_pools=%r: one network per rail (CIDR) must be set" % (pools,))
    errors.extend(settings.get("planner_errors") or [])
    release = settings.get("release")
    for name in ([release] if isinstance(release, str) else release if isinstance(release, list) else []):
        if not isinstance(name, str) or not name:
            errors.append("rails_release=%r: expected node names, got %r" % (release, name))
        elif name in (settings.get("hosts") or ()):
            errors.append("rails_release: node %s is still in the play; remove it from the inventory before "
                          "releasing its addresses" % name)
    nics = settings.get("nics")
    if nics is not None and not isinstance(nics, list):
        errors.append("rails_nics=%r: expected a list of rail NICs (names or dicts with netdev/device)" % (nics,))
    for index, nic in enumerate(nics if isinstance(nics, list) else []):
        field, name = "rails_nics[%d]" % index, nic
        if isinstance(nic, dict):
            field, name = field + ".netdev", nic.get("netdev")
            if name is None:
                continue    # a NIC given by its RDMA device: the node's netdev is checked when planned
        elif not isinstance(nic, str) or not nic:
            continue        # the planner's checks name it
        error = interface_error(field, name)
        if error:
            errors.append(error)
    rows = [{"rail": index, "netdev": "rail%d" % index, "cidr": None, "gateway": None}
            for index in range(len(pools) if isinstance(pools, list) and pools else 1)]
    try:
        interfaces({"rails": rows}, sysctls=settings.get("sysctls"), table_base=settings.get("table_base"),
                   rule_priority_base=settings.get("rule_priority_base"), policy_routing=True)
    except PlanError as exc:
        errors.append(str(exc))
    backend = settings.get("backend")
    if backend not in ("auto", "none") + BACKENDS:
        errors.append("rails_backend=%r: expected auto, %s or none" % (backend, ", ".join(BACKENDS)))
    if settings.get("lldp_check") not in ("auto", "always", "never"):
        errors.append("rails_lldp_check=%r: expected auto, always or never" % (settings.get("lldp_check"),))
    for name in ("allocation_file", "header"):
        value = settings.get(name)
        if value is not None and (not isinstance(value, str) or any(c in value for c in "\r\n\x00")):
            errors.append("rails_%s=%r: expected one line of text" % (name, value))
    port_format = settings.get("leaf_port_format")
    try:
        port_format.format(port=1, rail=0)
    except (AttributeError, KeyError, IndexError, ValueError):
        errors.append("rails_leaf_port_format=%r: expected a format of {port} (and {rail}), such as swp{port}"
                      % (port_format,))
    return errors


def spec(variables, render=None, planner_errors=()):
    """What the controller hands the node: the settings (with the host's slice of the fleet's
    rail plan as ``node``, None before the role planned the fleet). ``planner_errors``: the rail
    planner's checks of the role's variables, which run on the controller (the planner is
    controller code); nothing is rendered from templates (``render`` is not called)."""
    current = settings(variables, planner_errors)
    return {"settings": current, "node": current["node"]}


def _network_of(cidr):
    return str(ipaddress.ip_interface(cidr).network)


def _networkd(row, entry, header):
    lines = []
    if header:
        lines += ["# " + header]
    lines += ["[Match]", "Name=%s" % entry["interface"], "", "[Link]", "RequiredForOnline=no", "",
              "[Network]", "LinkLocalAddressing=ipv6", "IPv6AcceptRA=no", "ConfigureWithoutCarrier=yes"]
    for addr in entry["addresses"]:
        lines.append("Address=%s" % addr)
    if entry.get("table") is not None:
        for addr in entry["addresses"]:
            ip = addr.split("/")[0]
            lines += ["", "[Route]", "Destination=%s" % _network_of(addr), "PreferredSource=%s" % ip,
                      "Scope=link", "Table=%d" % entry["table"]]
        for gw in entry.get("gateways") or []:
            lines += ["", "[Route]", "Gateway=%s" % gw, "Table=%d" % entry["table"]]
        for addr in entry["addresses"]:
            lines += ["", "[RoutingPolicyRule]", "From=%s" % addr.split("/")[0], "Table=%d" % entry["table"],
                      "Priority=%d" % entry["rule_priority"]]
    return "\n".join(lines) + "\n"


def _keyfile(row, entry, header):
    lines = []
    if header:
        lines += ["# " + header]
    lines += ["[connection]", "id=rdma-rail%s-%s" % (row["rail"], entry["interface"]), "type=ethernet",
              "interface-name=%s" % entry["interface"], "autoconnect=true", "", "[ethernet]", ""]
    for family in (4, 6):
        addrs = [a for a in entry["addresses"] if ipaddress.ip_interface(a).version == family]
        section = "ipv%d" % family
        if not addrs:
            lines += ["[%s]" % section, "method=%s" % ("disabled" if family == 4 else "link-local"), ""]
            continue
        lines += ["[%s]" % section, "method=manual", "never-default=true"]
        for index, addr in enumerate(addrs, 1):
            lines.append("address%d=%s" % (index, addr))
        if entry.get("table") is not None:
            number = 0
            for addr in addrs:
                number += 1
                lines.append("route%d=%s" % (number, _network_of(addr)))
                lines.append("route%d_options=table=%d,src=%s" % (number, entry["table"], addr.split("/")[0]))
            for gw in entry.get("gateways") or []:
                if ipaddress.ip_address(gw).version == family:
                    number += 1
                    lines.append("route%d=%s,%s" % (number, "0.0.0.0/0" if family == 4 else "::/0", gw))
                    lines.append("route%d_options=table=%d" % (number, entry["table"]))
            for index, addr in enumerate(addrs, 1):
                lines.append("routing-rule%d=priority %d from %s table %d"
                             % (index, entry["rule_priority"], addr.split("/")[0], entry["table"]))
        lines.append("")
    return "\n".join(lines)


def persistent_files(node_plan, config, backend, header=DEFAULT_HEADER):
    """The ``node_files`` files of one node: one .network file (networkd) or keyfile
    (NetworkManager, mode 0600 as NetworkManager requires) per rail, and the sysctl.d file."""
    if backend not in BACKENDS:
        raise PlanError("rails_backend=%r: expected one of %s (or auto)" % (backend, ", ".join(BACKENDS)))
    rows = dict((row["netdev"], row) for row in _rails(node_plan))
    files, sysctl_lines = [], []
    for entry in config:
        row = rows.get(entry["interface"])
        if row is None:
            raise PlanError("config: interface %s is not a rail of the plan" % entry["interface"])
        if backend == "networkd":
            files.append({"path": "%s/60-rdma-rail%s-%s.network" % (NETWORKD_DIR, row["rail"], entry["interface"]),
                          "content": _networkd(row, entry, header), "mode": "0644"})
        else:
            files.append({"path": "%s/rdma-rail%s-%s.nmconnection" % (NM_DIR, row["rail"], entry["interface"]),
                          "content": _keyfile(row, entry, header), "mode": "0600"})
        for name in SYSCTL_NAMES:
            if entry.get(name) is not None:
                sysctl_lines.append("net.ipv4.conf.%s.%s = %s" % (entry["interface"], name, entry[name]))
    if sysctl_lines:
        files.append({"path": SYSCTL_FILE, "mode": "0644",
                      "content": "\n".join((["# " + header] if header else []) + sysctl_lines) + "\n"})
    return files


def backend_of(backend, os_family):
    """``rails_backend``, with auto resolved from the OS family (NetworkManager on the RHEL
    family, systemd-networkd elsewhere)."""
    if backend != "auto":
        return backend
    if not os_family:
        raise PlanError("rails_backend=auto: the node's OS family is unknown (ansible_facts.os_family); "
                        "read it first or set rails_backend")
    return "networkmanager" if os_family in NETWORKMANAGER_FAMILIES else "networkd"


def node_nics(facts, current):
    """The node's rail NICs the fleet is planned with: ``rails_nics``, else the rails
    ``rdma_facts`` read (``ansible_facts.rdma.rails``)."""
    nics = current.get("nics")
    if nics is None:
        nics = ((facts or {}).get("rdma") or {}).get("rails")
    if nics is None:
        raise PlanError("%s: no rail NICs: set rails_nics or let rdma_facts read the rails" % current.get("host"))
    return list(nics)


def neighbors_of(node_plan, port_format="swp{port}"):
    """The LLDP neighbour each rail NIC must see: the plan's leaf and its port as the leaf
    names it (``rails_leaf_port_format``)."""
    return [{"rail": row["rail"], "netdev": row["netdev"], "switch": row["leaf"],
             "port": port_format.format(port=row["leaf_port"], rail=row["rail"])} for row in _rails(node_plan)]


def plan(facts, spec):
    """Everything the role does on the node with these ``ansible_facts``: ``nics`` always;
    with the host's slice of the rail plan in the spec (``node``), also ``interfaces``
    (rail_addresses), ``backend`` and ``files`` (node_files), ``lldp`` (lldp_dcb gathered),
    ``neighbors`` (the expected LLDP neighbours) and ``requests``."""
    if not isinstance(facts, dict):
        raise PlanError("rails: expected ansible_facts, got %s" % type(facts).__name__)
    current = spec["settings"]
    out = {"nics": node_nics(facts, current), "requests": []}
    node = spec.get("node")
    if node is None:
        return out
    config = interfaces(node, sysctls=current.get("sysctls"), table_base=current.get("table_base", 100),
                        rule_priority_base=current.get("rule_priority_base", 1000),
                        policy_routing=current.get("policy_routing", True))
    backend = current.get("backend") or "auto"
    backend = "none" if backend == "none" else backend_of(backend, facts.get("os_family"))
    header = current.get("header")
    files = [] if backend == "none" else persistent_files(node, config, backend, header=header)
    lldp = [{"interface": entry["interface"]} for entry in config]
    out.update(node=node, interfaces=config, backend=backend, files=files, lldp=lldp,
               neighbors=neighbors_of(node, current.get("leaf_port_format") or "swp{port}"))
    requests = [{"resource": "rail_addresses", "state": "replaced", "config": config, "name": "rail addresses"}]
    if backend != "none":
        requests.append({"resource": "node_files", "state": "present", "config": {"files": files},
                         "name": "persistent rail configuration (%s)" % backend})
    if current.get("lldp_check") != "never":
        requests.append({"resource": "lldp_dcb", "state": "gathered", "config": lldp, "name": "rail LLDP neighbours"})
    out["requests"] = requests
    return out


def _record(host, area, row, setting, expected, actual):
    return {"host": host, "area": area, "object": "rail %s %s" % (row["rail"], row["netdev"]),
            "setting": setting, "expected": expected, "actual": actual}


def verify(host, node_plan, config, live, facts):
    """Findings (area ``rails``) where the live state misses the plan: interface down, address
    missing, its RoCE v2 GID missing on the rail's RDMA device, a route or rule of the rail's
    table missing. ``live``: rail_addresses ``after`` (or ``gathered``); ``facts``:
    ``ansible_facts.rdma`` read after the apply (devices with GID tables)."""
    rows = dict((row["netdev"], row) for row in _rails(node_plan))
    live = dict((item.get("interface"), item) for item in (live or []))
    devices = (facts or {}).get("devices") or {}
    out = []
    for entry in config:
        row = rows[entry["interface"]]
        have = live.get(entry["interface"])
        if have is None:
            out.append(_record(host, "rails", row, "interface", entry["interface"], None))
            continue
        if not have.get("link_up"):
            out.append(_record(host, "rails", row, "link_up", True, have.get("link_up")))
        for addr in entry["addresses"]:
            if addr not in (have.get("addresses") or []):
                out.append(_record(host, "rails", row, "addresses", addr, have.get("addresses")))
        for name in SYSCTL_NAMES:
            if entry.get(name) is not None and (have.get("sysctls") or {}).get(name) != entry[name]:
                out.append(_record(host, "rails", row, "sysctls.%s" % name, entry[name],
                                   (have.get("sysctls") or {}).get(name)))
        if entry.get("table") is not None:
            routes = have.get("routes") or []
            for addr in entry["addresses"]:
                want = {"dst": _network_of(addr), "gateway": None, "src": addr.split("/")[0], "dev": entry["interface"]}
                if want not in routes:
                    out.append(_record(host, "rails", row, "routes.%s" % want["dst"], want, routes))
            for gw in entry.get("gateways") or []:
                dst = "default" if ipaddress.ip_address(gw).version == 4 else "default6"
                want = {"dst": dst, "gateway": gw, "src": None, "dev": entry["interface"]}
                if want not in routes:
                    out.append(_record(host, "rails", row, "routes.default", want, routes))
            rules = have.get("rules") or []
            for addr in entry["addresses"]:
                want = {"priority": entry["rule_priority"], "from": addr.split("/")[0], "table": entry["table"]}
                if want not in rules:
                    out.append(_record(host, "rails", row, "rules.%s" % want["from"], want, rules))
        device = row.get("device")
        if device:
            ports = (devices.get(device) or {}).get("ports") or []
            gids = [g for port in ports for g in (port.get("gids") or [])]
            for addr in entry["addresses"]:
                ip = ipaddress.ip_interface(addr).ip
                wanted = ("::ffff:%s" % ip) if ip.version == 4 else str(ip)
                wanted = ipaddress.IPv6Address(wanted).exploded
                found = [g for g in gids if g.get("gid") == wanted and g.get("type") == "RoCE v2"
                         and g.get("netdev") in (None, entry["interface"])]
                if not found:
                    out.append(_record(host, "rails", row, "gids.%s" % device,
                                       "RoCE v2 GID %s (%s)" % (wanted, ip),
                                       sorted(set("%s %s" % (g.get("index"), g.get("ipv4") or g.get("gid"))
                                                  for g in gids if g.get("type") == "RoCE v2"))))
    return out


def cabling(host, expected, neighbors):
    """Findings (area ``rails_cabling``) where a rail NIC's LLDP neighbour (switch name, port)
    is not the plan's leaf and leaf port. ``expected``: the plan's ``neighbors``;
    ``neighbors``: lldp_dcb ``gathered`` (each interface's ``neighbor``, with ``system_name``
    and ``port_id``); a rail without a neighbour is a finding too."""
    seen_by = dict((item.get("interface"), item.get("neighbor") or {}) for item in (neighbors or []))
    out = []
    for row in expected:
        seen = seen_by.get(row["netdev"])
        want = {"switch": row["switch"], "port": row["port"]}
        if not seen or not (seen.get("system_name") or seen.get("port_id")):
            out.append(_record(host, "rails_cabling", row, "neighbor", want, None))
            continue
        have = {"switch": seen.get("system_name"), "port": seen.get("port_id")}
        for key in ("switch", "port"):
            if want[key] != have[key]:
                out.append(_record(host, "rails_cabling", row, "neighbor.%s" % key, want[key], have[key]))
    return out


def _usable(result):
    return isinstance(result, dict) and result and not result.get("skipped") and not result.get("failed")


def records(host, results):
    """The findings of ``[(name, result)]``: ``plan`` (this area's plan, with the node's slice),
    ``rail_addresses`` (its registered result: ``after``, else ``before``, the live state) with
    ``rdma_facts`` (the GID tables read after the apply: its result or ``ansible_facts.rdma``)
    give the verify findings; ``lldp_dcb`` (state gathered) the cabling findings. A skipped or
    failed result, or a missing one, gives none."""
    by_name = dict(results)
    current = by_name.get("plan")
    if not isinstance(current, dict) or current.get("node") is None:
        return []
    out = []
    applied, gids = by_name.get("rail_addresses"), by_name.get("rdma_facts")
    if _usable(applied) and _usable(gids):
        facts = (gids.get("ansible_facts") or {}).get("rdma") if "ansible_facts" in gids else gids
        live = applied.get("after") if applied.get("after") is not None else applied.get("before")
        out.extend(verify(host, current["node"], current["interfaces"], live, facts))
    lldp = by_name.get("lldp_dcb")
    if _usable(lldp) and lldp.get("gathered") is not None:
        out.extend(cabling(host, current["neighbors"], lldp["gathered"]))
    return out
