# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rails role's logic, on the controller: one node's plan (``rail_plan`` ``nodes[NAME]``) ->
the ``rail_addresses`` config, the persistent files (systemd-networkd or NetworkManager keyfiles,
and a sysctl.d file), the verify findings and the LLDP cabling check.

Findings are flat records in the drift record shape of ``module_utils/_report.py``:
``{host, area, object, setting, expected, actual}`` (``area`` ``rails`` or ``rails_cabling``,
``object`` ``rail N NETDEV``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

BACKENDS = ("networkd", "networkmanager")
SYSCTL_NAMES = ("arp_ignore", "arp_announce", "rp_filter")


class RailsRoleError(ValueError):
    """Bad input; the message names the field and the value."""


def _rails(node_plan, field="node_plan"):
    if not isinstance(node_plan, dict) or not isinstance(node_plan.get("rails"), list):
        raise RailsRoleError("%s: expected one node of the rail plan (rail_plan(...).nodes[NAME]), got %r"
                             % (field, node_plan if not isinstance(node_plan, dict) else sorted(node_plan)))
    for index, row in enumerate(node_plan["rails"]):
        if not row.get("netdev"):
            raise RailsRoleError("%s.rails[%d]: rail %s has no netdev (give rails_nics with netdev names)"
                                 % (field, index, row.get("rail")))
    return node_plan["rails"]


def _int(value, field, low, high):
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise RailsRoleError("%s=%r: expected a number %d-%d" % (field, value, low, high))
    if isinstance(value, bool) or number < low or number > high:
        raise RailsRoleError("%s=%r: expected a number %d-%d" % (field, value, low, high))
    return number


def interfaces(node_plan, sysctls=None, table_base=100, rule_priority_base=1000, policy_routing=True):
    """The ``rail_addresses`` config of one node: one entry per rail, its table
    ``table_base + rail`` and rule priority ``rule_priority_base + rail`` with the leaf as the
    table's default route (when ``policy_routing``)."""
    rows = _rails(node_plan)
    sysctls = sysctls or {}
    if not isinstance(sysctls, dict):
        raise RailsRoleError("rails_sysctls=%r: expected a dict of %s" % (sysctls, ", ".join(SYSCTL_NAMES)))
    for name in sysctls:
        if name not in SYSCTL_NAMES:
            raise RailsRoleError("rails_sysctls.%s: unknown; the rail sysctls are %s" % (name, ", ".join(SYSCTL_NAMES)))
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
                raise RailsRoleError("rails_table_base=%r: rail %s would use the kernel's table %d"
                                     % (table_base, row["rail"], table))
            entry["table"] = table
            entry["rule_priority"] = rule_priority_base + int(row["rail"])
            entry["gateways"] = [row["gateway"]]
        out.append(entry)
    return out


# the planner's fields and the role variables that give them
_PLAN_FIELDS = (("pools", "rails_pools"), ("management", "rails_management"), ("scheme", "rails_scheme"),
                ("release", "rails_release"), ("leaf_ports", "rails_leaf_ports"),
                ("oversubscription", "rails_oversubscription"), ("subnet_prefix", "rails_subnet_prefix"))


def config_errors(config, hosts=None):
    """Every problem of the role's variables (``config``: dict variable name -> value), each
    named as the variable: the rail planner's own checks of its parameters (a plan of no node),
    of ``rails_nics`` (as one node's NICs) and of the interfaces and files the role builds.
    ``hosts``: the play's hosts, which ``rails_release`` may not name."""
    if not isinstance(config, dict):
        raise RailsRoleError("rails_config_errors: expected a dict of role variables, got %s" % type(config).__name__)
    from ansible_collections.rdma.fabric.plugins.plugin_utils import _rail_plan
    errors = []

    def named(exc):
        text = str(exc)
        for field, variable in _PLAN_FIELDS:
            if re.match(r"%s\b" % field, text):
                return variable + text[len(field):]
        return re.sub(r"^nodes\.node\.rails", "rails_nics", text)

    pools = config.get("rails_pools")
    try:
        _rail_plan.plan({}, pools, scheme=config.get("rails_scheme"), management=config.get("rails_management"),
                        release=config.get("rails_release"), leaf_ports=config.get("rails_leaf_ports"),
                        oversubscription=config.get("rails_oversubscription"),
                        subnet_prefix=config.get("rails_subnet_prefix"))
    except ValueError as exc:
        errors.append(named(exc))
    release = config.get("rails_release")
    for name in ([release] if isinstance(release, str) else release if isinstance(release, list) else []):
        if not isinstance(name, str) or not name:
            errors.append("rails_release=%r: expected node names, got %r" % (release, name))
        elif name in (hosts or ()):
            errors.append("rails_release: node %s is still in the play; remove it from the inventory before "
                          "releasing its addresses" % name)
    nics = config.get("rails_nics")
    if nics is not None:
        if not isinstance(nics, list):
            errors.append("rails_nics=%r: expected a list of rail NICs (names or dicts with netdev/device)" % (nics,))
        else:
            try:
                _rail_plan.normalize_nodes({"node": {"rails": nics}})
            except ValueError as exc:
                errors.append(named(exc))
    rows = [{"rail": index, "netdev": "rail%d" % index, "cidr": None, "gateway": None}
            for index in range(len(pools) if isinstance(pools, list) else 1)]
    try:
        interfaces({"rails": rows}, sysctls=config.get("rails_sysctls"), table_base=config.get("rails_table_base"),
                   rule_priority_base=config.get("rails_rule_priority_base"), policy_routing=True)
    except ValueError as exc:
        errors.append(str(exc))
    for name in ("rails_allocation_file", "rails_header"):
        value = config.get(name)
        if value is not None and (not isinstance(value, str) or any(c in value for c in "\r\n\x00")):
            errors.append("%s=%r: expected one line of text" % (name, value))
    port_format = config.get("rails_leaf_port_format")
    try:
        port_format.format(port=1, rail=0)
    except (AttributeError, KeyError, IndexError, ValueError):
        errors.append("rails_leaf_port_format=%r: expected a format of {port} (and {rail}), such as swp{port}"
                      % (port_format,))
    return errors


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


def persistent_files(node_plan, config, backend, header="Managed by Ansible (rdma.fabric.rails)",
                     networkd_dir="/etc/systemd/network", nm_dir="/etc/NetworkManager/system-connections",
                     sysctl_file="/etc/sysctl.d/60-rdma-rails.conf"):
    """The ``node_files`` files of one node: one .network file (networkd) or keyfile
    (NetworkManager, mode 0600 as NetworkManager requires) per rail, and the sysctl.d file."""
    if backend not in BACKENDS:
        raise RailsRoleError("rails_backend=%r: expected one of %s (or auto)" % (backend, ", ".join(BACKENDS)))
    rows = dict((row["netdev"], row) for row in _rails(node_plan))
    files, sysctl_lines = [], []
    for entry in config:
        row = rows.get(entry["interface"])
        if row is None:
            raise RailsRoleError("config: interface %s is not a rail of the plan" % entry["interface"])
        if backend == "networkd":
            files.append({"path": "%s/60-rdma-rail%s-%s.network" % (networkd_dir, row["rail"], entry["interface"]),
                          "content": _networkd(row, entry, header), "mode": "0644"})
        else:
            files.append({"path": "%s/rdma-rail%s-%s.nmconnection" % (nm_dir, row["rail"], entry["interface"]),
                          "content": _keyfile(row, entry, header), "mode": "0600"})
        for name in SYSCTL_NAMES:
            if entry.get(name) is not None:
                sysctl_lines.append("net.ipv4.conf.%s.%s = %s" % (entry["interface"], name, entry[name]))
    if sysctl_lines:
        files.append({"path": sysctl_file, "mode": "0644",
                      "content": "\n".join((["# " + header] if header else []) + sysctl_lines) + "\n"})
    return files


def _record(host, area, row, setting, expected, actual):
    return {"host": host, "area": area, "object": "rail %s %s" % (row["rail"], row["netdev"]),
            "setting": setting, "expected": expected, "actual": actual}


def verify(host, node_plan, config, live, facts):
    """Findings (drift records) where the live state misses the plan: interface down, address
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


_NUMBER = re.compile(r"([0-9]+)\Z")


def cabling(host, node_plan, neighbors, port_format="swp{port}"):
    """Findings where a rail NIC's LLDP neighbour (switch name, port) is not the plan's leaf and
    leaf port. ``neighbors``: {netdev: {"system_name", "port_id"}} (lldp_dcb gathered
    ``neighbor``); a rail without a neighbour is a finding too."""
    out = []
    for row in _rails(node_plan):
        seen = (neighbors or {}).get(row["netdev"])
        want = {"switch": row["leaf"], "port": port_format.format(port=row["leaf_port"], rail=row["rail"])}
        if not seen or not (seen.get("system_name") or seen.get("port_id")):
            out.append(_record(host, "rails_cabling", row, "neighbor", want, None))
            continue
        have = {"switch": seen.get("system_name"), "port": seen.get("port_id")}
        for key in ("switch", "port"):
            if want[key] != have[key]:
                out.append(_record(host, "rails_cabling", row, "neighbor.%s" % key, want[key], have[key]))
    return out


def summary(records):
    """One line per record: ``HOST rail N NETDEV: SETTING expected X, found Y``."""
    return ["%s %s: %s expected %s, found %s" % (r["host"], r["object"], r["setting"], r["expected"], r["actual"])
            for r in records]


def nodes(hosts, hostvars):
    """``{host: rail NICs}`` for the planner: each host's ``rails_nics``, else the rails
    ``rdma_facts`` read (``ansible_facts.rdma.rails``)."""
    out = {}
    for host in hosts:
        hvars = hostvars[host]
        nics = hvars.get("rails_nics")
        if nics is None:
            facts = hvars.get("ansible_facts") or {}
            nics = (facts.get("rdma") or {}).get("rails")
        if nics is None:
            raise RailsRoleError("%s: no rail NICs: set rails_nics or let rdma_facts read the rails" % host)
        out[str(host)] = list(nics)
    return out


def lldp_config(config):
    """The lldp_dcb gathered config of the rail interfaces."""
    return [{"interface": entry["interface"]} for entry in config]


def neighbors(gathered):
    """lldp_dcb ``gathered`` -> ``{interface: neighbor}``."""
    return dict((item.get("interface"), item.get("neighbor") or {}) for item in (gathered or []))
