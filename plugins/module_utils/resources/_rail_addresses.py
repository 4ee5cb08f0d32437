# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live state of a rail interface: its addresses, link state, the per-interface IPv4 sysctls
multi-NIC RoCE hosts need (arp_ignore, arp_announce, rp_filter) and per-rail source policy
routing (one table per rail: the rail's connected routes, optionally a default via the leaf,
and one ``from ADDRESS lookup TABLE`` rule per address).

Reader (the only I/O seam, ``read_state``): ``ip -j addr show dev IF``, ``ip -j -4|-6 rule show``,
``ip -j -4|-6 route show table T`` (a table that does not exist yet reads as empty: iproute2 6.x
answers "FIB table does not exist"), and ``/proc/sys/net/ipv4/conf/IF/{arp_ignore,arp_announce,
rp_filter}``. Commands are ``ip`` argv lists and ``("sysctl", PATH, VALUE)`` writes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import json
import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError, check_name, read_text
from ansible_collections.rdma.fabric.plugins.module_utils.parsers._iproute import parse_addr
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError, int_in_range
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import Resource

SYSCTLS = {"arp_ignore": (0, 8), "arp_announce": (0, 2), "rp_filter": (0, 2)}
RESERVED_TABLES = {0: "unspec", 253: "default", 254: "main", 255: "local"}
_NO_TABLE = re.compile(r"FIB table does not exist")


class RailAddressError(ValidationError):
    pass


def _text(value):
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _iface(field, value):
    if not isinstance(value, str) or "/" not in value:
        raise RailAddressError("%s=%r: expected ADDRESS/PREFIX (10.10.0.1/31, fd00::1/127)" % (field, value))
    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        raise RailAddressError("%s=%r: not an ADDRESS/PREFIX" % (field, value))
    width = iface.max_prefixlen
    edges = (iface.network.network_address, iface.network.broadcast_address)
    if iface.network.prefixlen < width - 1 and iface.ip in edges:
        raise RailAddressError("%s=%r: the network or broadcast address of %s is not a host address"
                               % (field, value, iface.network))
    return iface


def _ip(field, value):
    try:
        return ipaddress.ip_address(_text(value))
    except ValueError:
        raise RailAddressError("%s=%r: not an IP address" % (field, value))


def _host(ip):
    return str(ip)


# --------------------------------------------------------------------------- want
def normalize(entry, field, state):
    """One config entry -> want (complete, with the routes and rules it implies)."""
    interface = check_name(field + ".interface", entry.get("interface"))
    want = {"interface": interface}
    if state == "gathered":
        want.update(table=_table(field, entry.get("table")), only_read=True)
        return want
    addresses = entry.get("addresses")
    if addresses is None:
        addresses = []
    if not isinstance(addresses, list):
        raise RailAddressError("%s.addresses=%r: expected a list of ADDRESS/PREFIX" % (field, addresses))
    ifaces, seen = [], set()
    for index, value in enumerate(addresses):
        iface = _iface("%s.addresses[%d]" % (field, index), value)
        if iface.ip in seen:
            raise RailAddressError("%s.addresses[%d]=%r: address %s is given twice" % (field, index, value, iface.ip))
        seen.add(iface.ip)
        ifaces.append(iface)
    want["addresses"] = sorted(str(i) for i in ifaces)
    link_up = entry.get("link_up")
    want["link_up"] = True if link_up is None else bool(link_up)
    sysctls = {}
    for name, (low, high) in SYSCTLS.items():
        if entry.get(name) is not None:
            sysctls[name] = int_in_range("%s.%s" % (field, name), entry[name], low, high, name)
    want["sysctls"] = sysctls
    table = _table(field, entry.get("table"))
    want["table"] = table
    gateways = entry.get("gateways") or []
    if not isinstance(gateways, list):
        raise RailAddressError("%s.gateways=%r: expected a list of addresses" % (field, gateways))
    if gateways and table is None:
        raise RailAddressError("%s.gateways=%r: a default route per rail needs table" % (field, gateways))
    priority = entry.get("rule_priority")
    if table is None:
        if priority is not None:
            raise RailAddressError("%s.rule_priority=%r: needs table" % (field, priority))
        want.update(routes=[], rules=[], rule_priority=None)
        return want
    priority = 1000 + table % 30000 if priority is None else int_in_range(
        field + ".rule_priority", priority, 1, 32765, "rule priority")
    want["rule_priority"] = priority
    routes = []
    for iface in ifaces:
        routes.append({"dst": str(iface.network), "gateway": None, "src": str(iface.ip), "dev": interface})
    families = set()
    for index, value in enumerate(gateways):
        gw = _ip("%s.gateways[%d]" % (field, index), value)
        owner = [i for i in ifaces if i.version == gw.version and gw in i.network and gw != i.ip]
        if not owner:
            raise RailAddressError("%s.gateways[%d]=%r: not in the subnet of any address of %s (%s)"
                                   % (field, index, value, interface, ", ".join(want["addresses"]) or "none"))
        if gw.version in families:
            raise RailAddressError("%s.gateways[%d]=%r: one default route per address family" % (field, index, value))
        families.add(gw.version)
        routes.append({"dst": "default" if gw.version == 4 else "default6", "gateway": str(gw), "src": None,
                       "dev": interface})
    want["routes"] = sorted(routes, key=_route_key)
    want["rules"] = sorted(({"priority": priority, "from": _host(i.ip), "table": table} for i in ifaces),
                           key=_rule_key)
    return want


def _table(field, value):
    if value is None:
        return None
    table = int_in_range(field + ".table", value, 1, 4294967295, "routing table")
    if table in RESERVED_TABLES:
        raise RailAddressError("%s.table=%r: table %d is the kernel's %s table; pick another number"
                               % (field, value, table, RESERVED_TABLES[table]))
    return table


def validate_all(wants):
    tables, addresses = {}, {}
    for key, want in wants.items():
        if want.get("table") is not None and not want.get("only_read"):
            if want["table"] in tables:
                raise RailAddressError("config: table %d is given to %s and %s; one table per rail interface"
                                       % (want["table"], tables[want["table"]], key))
            tables[want["table"]] = key
        for addr in want.get("addresses", []):
            ip = addr.split("/")[0]
            if ip in addresses:
                raise RailAddressError("config: address %s is given to %s and %s" % (ip, addresses[ip], key))
            addresses[ip] = key


# --------------------------------------------------------------------------- have
def _json(text, argv):
    try:
        data = json.loads(text or "")
    except ValueError:
        raise ToolError("%s printed no JSON: %r" % (" ".join(argv), (text or "")[:200]), argv=argv, stdout=text)
    if not isinstance(data, list):
        raise ToolError("%s printed %r, not a JSON list" % (" ".join(argv), (text or "")[:200]), argv=argv)
    return data


def _entries(data, what):
    if not isinstance(data, list):
        raise ValueError("ip -j %s show printed %r, not a JSON list" % (what, data))
    for entry in data:
        if not isinstance(entry, dict):
            raise ValueError("%s entry %r is not a JSON object (ip -j %s show)" % (what, entry, what))
    return data


# Keys iproute2 ip/iprule.c print_rule prints (4.17 .. ee2a4a86) that parse_rules does not model:
# selectors (to, tos, fwmark, iif, oif, uidrange, ipproto, sport, dport, tun_id, dscp, flowlabel),
# lookup options (suppress_*), realms, actions (goto, nop, blackhole ...: no table then) and the
# protocol. A rule with any of them is not the plain "from ADDRESS lookup TABLE" a rail wants; the
# kernel keeps both (it compares them all, protocol included), so they are carried in "selectors".
RULE_SELECTORS = ("dst", "dstlen", "tos", "fwmark", "fwmask", "iif", "iif_detached", "oif", "oif_detached", "l3mdev",
                  "uid_start", "uid_end", "ipproto", "sport", "sport_mask", "sport_start", "sport_end", "dport",
                  "dport_mask", "dport_start", "dport_end", "tun_id", "suppress_prefixlen", "suppress_ifgroup",
                  "flow_from", "flow_to", "nat_gateway", "masquerade", "goto", "unresolved", "nop", "action", "to_tbl",
                  "protocol", "dscp", "dscp_mask", "flowlabel", "flowlabel_mask")
_RULE_KEYS = frozenset(("priority", "not", "src", "srclen", "table") + RULE_SELECTORS)


def parse_rules(data):
    """``ip -j rule show`` -> [{"priority", "from", "table"[, "selectors"]}] (table numbers as int
    where numeric).

    Follows iproute2 ip/iprule.c print_rule (JSON since v4.17, 0dd4ccc5; read at ee2a4a86):
    ``priority`` always, ``src`` always ("all", an address, or "0" with ``srclen``), ``table``
    a name or a decimal string, absent for ``goto``/``action`` rules (then None here);
    ``not`` (null) marks an inverted selector: its ``from`` reads ``not ADDRESS``. Every other
    key print_rule prints (RULE_SELECTORS) is kept, as printed, in ``selectors`` (absent when
    there is none), so that a rule with a fwmark, an iif, a tos ... never equals the plain rule
    a rail wants. A key print_rule never prints (``deleted`` is ``ip monitor``'s) or a value it
    cannot print is refused. Samples: tests/unit/fixtures/samples/ip_rule_json.txt."""
    out = []
    for rule in _entries(data, "rule"):
        priority = rule.get("priority")
        if isinstance(priority, bool) or not isinstance(priority, int) or priority < 0:
            raise ValueError("rule entry without a numeric priority (ip -j rule always prints it): %r" % (rule,))
        src = rule.get("src", "all")
        if not isinstance(src, str) or (rule.get("srclen") is not None and not isinstance(rule["srclen"], int)):
            raise ValueError("rule entry with a src/srclen ip -j rule cannot print: %r" % (rule,))
        if rule.get("srclen") is not None:
            src = "%s/%s" % (src, rule["srclen"])
        if "not" in rule:
            src = "not " + src
        table = rule.get("table")
        if table is not None and (isinstance(table, bool) or not isinstance(table, (str, int))):
            raise ValueError("rule entry with a table ip -j rule cannot print: %r" % (rule,))
        table = int(table) if isinstance(table, str) and table.isdigit() else table
        unknown = sorted(key for key in rule if key not in _RULE_KEYS)
        if unknown:
            raise ValueError("rule entry with key(s) %s, which ip -j rule show never prints: %r" % (", ".join(unknown), rule))
        selectors = dict((key, rule[key]) for key in RULE_SELECTORS if key in rule)
        for key, value in selectors.items():
            if isinstance(value, bool) or not (value is None or isinstance(value, (str, int))):
                raise ValueError("rule entry with a %s ip -j rule cannot print (a string, number or null): %r"
                                 % (key, rule))
        entry = {"priority": priority, "from": src, "table": table}
        if selectors:
            entry["selectors"] = selectors
        out.append(entry)
    return out


def parse_routes(data, family):
    """``ip -j route show`` -> [{"dst", "gateway", "src", "dev"}].

    Follows iproute2 ip/iproute.c print_route (JSON since v4.17; read at ee2a4a86): ``dst``
    always ("default", ADDR/LEN, or a host address without /LEN), optional ``type`` for
    non-unicast routes, ``gateway``, ``dev``, ``prefsrc``; a multipath route has ``nexthops``
    instead of a top-level gateway/dev (None here). Samples:
    tests/unit/fixtures/samples/ip_route_json.txt."""
    out = []
    for route in _entries(data, "route"):
        dst = route.get("dst")
        if not isinstance(dst, str) or not dst:
            raise ValueError("route entry without dst (ip -j route always prints it): %r" % (route,))
        for key in ("gateway", "dev", "prefsrc", "type"):
            if route.get(key) is not None and not isinstance(route[key], str):
                raise ValueError("route entry with a %s ip -j route cannot print: %r" % (key, route))
        if "nexthops" in route and not isinstance(route["nexthops"], list):
            raise ValueError("route entry whose nexthops is not a list: %r" % (route,))
        if dst == "default":
            dst = "default" if family == 4 else "default6"
        elif "/" not in dst:
            dst = "%s/%d" % (dst, 32 if family == 4 else 128)
        out.append({"dst": dst, "gateway": route.get("gateway"), "src": route.get("prefsrc"), "dev": route.get("dev")})
    return out


def _route_key(route):
    return (route["dst"], route["gateway"] or "", route["src"] or "", route["dev"] or "")


def _rule_key(rule):
    return (rule["priority"], str(rule["from"]), str(rule["table"]), json.dumps(rule.get("selectors"), sort_keys=True))


def read_state(run, read_file, proc_sys, interface, table):
    """The only I/O seam. ``run(argv) -> (rc, out, err)``; ``read_file(path)`` -> text."""
    argv = ["ip", "-j", "addr", "show", "dev", interface]
    rc, out, err = run(argv)
    if rc != 0:
        raise ToolError("%s failed (rc=%s): %s" % (" ".join(argv), rc, (err or out).strip()), argv=argv, rc=rc,
                        stdout=out, stderr=err)
    try:
        up, addresses = parse_addr(_json(out, argv), interface)
    except ValueError as exc:
        raise ToolError("%s: %s" % (" ".join(argv), exc), argv=argv, stdout=out)
    have = {"link_up": up, "addresses": addresses, "sysctls": {}, "rules": [], "routes": []}
    for name in sorted(SYSCTLS):
        path = os.path.join(proc_sys, "net/ipv4/conf", interface, name)
        text = read_file(path)
        if text is None or not text.strip().lstrip("-").isdigit():
            raise ToolError("%s reads %r, not a number" % (path, text))
        have["sysctls"][name] = int(text.strip())
    ips = set(a.split("/")[0] for a in addresses)
    for family in (4, 6):
        argv = ["ip", "-j", "-%d" % family, "rule", "show"]
        rc, out, err = run(argv)
        if rc != 0:
            raise ToolError("%s failed (rc=%s): %s" % (" ".join(argv), rc, (err or out).strip()), argv=argv, rc=rc)
        try:
            rules = parse_rules(_json(out, argv))
        except ValueError as exc:
            raise ToolError("%s: %s" % (" ".join(argv), exc), argv=argv, stdout=out)
        have["rules"].extend(r for r in rules if (table is not None and r["table"] == table) or r["from"] in ips)
        if table is None:
            continue
        argv = ["ip", "-j", "-%d" % family, "route", "show", "table", str(table)]
        rc, out, err = run(argv)
        if rc != 0 and _NO_TABLE.search(err or ""):
            continue
        if rc != 0:
            raise ToolError("%s failed (rc=%s): %s" % (" ".join(argv), rc, (err or out).strip()), argv=argv, rc=rc)
        try:
            have["routes"].extend(parse_routes(_json(out, argv), family))
        except ValueError as exc:
            raise ToolError("%s: %s" % (" ".join(argv), exc), argv=argv, stdout=out)
    have["rules"] = sorted(have["rules"], key=_rule_key)
    have["routes"] = sorted(have["routes"], key=_route_key)
    return have


_SYSCTL_LINE = re.compile(r"(?:.*/)?net/ipv4/conf/([^/]+)/(arp_ignore|arp_announce|rp_filter):(-?[0-9]+)\Z")


def parse_running_config(text):
    """Captured ``ip -j addr show dev IF; ip -j -4 rule show; ip -j -6 rule show;
    ip -j -4 route show table T; ip -j -6 route show table T; grep -H . /proc/sys/net/ipv4/conf/IF/*``
    (the ``grep`` lines for arp_ignore, arp_announce and rp_filter) -> the state of that interface."""
    if not isinstance(text, str) or not text.strip():
        raise RailAddressError("running_config: empty; give the captured ip -j and /proc/sys output")
    have = {"link_up": None, "addresses": None, "sysctls": {}, "rules": [], "routes": []}
    interface = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("["):
            try:
                data = json.loads(line)
            except ValueError:
                raise RailAddressError("running_config line %d: %r is not JSON" % (lineno, line[:80]))
            if not data:
                continue
            first = data[0] if isinstance(data[0], dict) else {}
            try:
                if "addr_info" in first:
                    interface = first.get("ifname")
                    have["link_up"], have["addresses"] = parse_addr(data, interface)
                elif "dst" in first:
                    family = 6 if ":" in (first.get("dst", "") + (first.get("gateway") or "")) else 4
                    have["routes"].extend(parse_routes(data, family))
                elif "priority" in first:
                    have["rules"].extend(parse_rules(data))
                else:
                    raise ValueError("neither addresses, routes nor rules")
            except (ValueError, TypeError) as exc:
                raise RailAddressError("running_config line %d: %s" % (lineno, exc))
            continue
        match = _SYSCTL_LINE.match(line)
        if not match:
            raise RailAddressError("running_config line %d: %r is neither ip -j JSON nor a "
                                   ".../net/ipv4/conf/IF/NAME:VALUE line" % (lineno, line[:80]))
        have["sysctls"][match.group(2)] = int(match.group(3))
    if have["addresses"] is None:
        raise RailAddressError("running_config: holds no ip -j addr show output (a JSON list with addr_info)")
    ips = set(a.split("/")[0] for a in have["addresses"])
    tables = set(r["table"] for r in have["rules"] if r["from"] in ips)
    have["rules"] = sorted((r for r in have["rules"] if r["from"] in ips or r["table"] in tables), key=_rule_key)
    have["routes"] = sorted(have["routes"], key=_route_key)
    return dict(have, interface=interface)


# --------------------------------------------------------------------------- plan
def _family(value):
    return 6 if ":" in value else 4


def plan(interface, want, have, state, proc_sys):
    """Pure: the commands that take ``have`` (None: from scratch) to ``want``."""
    cmds = []
    have = have or {"link_up": None, "addresses": [], "sysctls": {}, "rules": [], "routes": []}
    if want["link_up"] and not have["link_up"]:
        cmds.append(["ip", "link", "set", "dev", interface, "up"])
    elif not want["link_up"] and have["link_up"] is not False:
        cmds.append(["ip", "link", "set", "dev", interface, "down"])
    for name in sorted(want["sysctls"]):
        if have["sysctls"].get(name) != want["sysctls"][name]:
            cmds.append(("sysctl", os.path.join(proc_sys, "net/ipv4/conf", interface, name), want["sysctls"][name]))
    if state == "replaced":
        for addr in have["addresses"]:
            if addr not in want["addresses"]:
                cmds.append(["ip", "addr", "del", addr, "dev", interface])
    for addr in want["addresses"]:
        if addr not in have["addresses"]:
            extra = ["nodad"] if _family(addr) == 6 else []
            cmds.append(["ip", "addr", "add", addr, "dev", interface] + extra)
    table = want["table"]
    if table is not None:
        have_routes = list(have["routes"])
        if state == "replaced":
            for route in have_routes:
                if route not in want["routes"]:
                    cmds.append(_route_cmd("del", route, table))
        for route in want["routes"]:
            if route not in have_routes:
                cmds.append(_route_cmd("add", route, table))
    if state == "replaced":
        for rule in have["rules"]:
            if rule not in want["rules"]:
                cmds.append(_rule_cmd("del", rule))
    for rule in want["rules"]:
        if rule not in have["rules"]:
            cmds.append(_rule_cmd("add", rule))
    return cmds


def _route_cmd(verb, route, table):
    default = route["dst"] in ("default", "default6")
    family = 6 if route["dst"] == "default6" or ":" in route["dst"] + (route["gateway"] or "") else 4
    argv = ["ip", "-%d" % family, "route", verb, "default" if default else route["dst"]]
    if route["gateway"]:
        argv += ["via", route["gateway"]]
    if route["dev"]:
        argv += ["dev", route["dev"]]
    if route["src"] and verb == "add":
        argv += ["src", route["src"]]
    return argv + ["table", str(table)]


def _rule_cmd(verb, rule):
    """``ip rule add|del`` of one rule, with every selector it was read with: the kernel deletes
    the first rule that matches the attributes given, so a ``del`` without the fwmark of a
    foreign rule could delete the rail's own plain rule at the same priority."""
    source = str(rule["from"])
    invert = source.startswith("not ")
    source = source[4:] if invert else source
    argv = ["ip", "-%d" % _family(source), "rule", verb, "priority", str(rule["priority"])]
    argv += (["not"] if invert else []) + ["from", source] + _selector_args(rule.get("selectors") or {})
    return argv if rule["table"] is None else argv + ["table", str(rule["table"])]


def _selector_args(sel):
    """RULE_SELECTORS back to ``ip rule`` arguments (iprule.c iprule_modify's keywords); state flags
    (``iif_detached``, ``oif_detached``, ``unresolved``) are not arguments."""
    def pair(key, mask_key=None, hexed=False):
        value = sel[key] if not hexed else "%#x" % sel[key]
        return "%s/%s" % (value, sel[mask_key]) if mask_key and sel.get(mask_key) is not None else str(value)

    args = []
    if "dst" in sel:
        args += ["to", "%s/%s" % (sel["dst"], sel["dstlen"]) if "dstlen" in sel else sel["dst"]]
    for key, word in (("tos", "tos"), ("iif", "iif"), ("oif", "oif"), ("ipproto", "ipproto"),
                      ("tun_id", "tun_id"), ("protocol", "protocol"), ("suppress_prefixlen", "suppress_prefixlength"),
                      ("suppress_ifgroup", "suppress_ifgroup"), ("goto", "goto"), ("nat_gateway", "map-to")):
        if key in sel:
            args += [word, str(sel[key])]
    if "dscp" in sel:
        args += ["dscp", pair("dscp", "dscp_mask")]
    if "fwmark" in sel:
        args += ["fwmark", pair("fwmark", "fwmask")]
    if "flowlabel" in sel:
        args += ["flowlabel", pair("flowlabel", "flowlabel_mask")]
    if "l3mdev" in sel:
        args.append("l3mdev")
    if "uid_start" in sel:
        args += ["uidrange", "%s-%s" % (sel["uid_start"], sel.get("uid_end", sel["uid_start"]))]
    for port in ("sport", "dport"):
        if port in sel:
            args += [port, pair(port, port + "_mask", hexed=sel.get(port + "_mask") is not None)]
        elif port + "_start" in sel:
            args += [port, "%s-%s" % (sel[port + "_start"], sel.get(port + "_end", sel[port + "_start"]))]
    if "flow_to" in sel:
        args += ["realms", "%s/%s" % (sel["flow_from"], sel["flow_to"]) if "flow_from" in sel else str(sel["flow_to"])]
    for key in ("action", "to_tbl"):
        if key in sel:
            args.append(str(sel[key]))
    args += [key for key in ("nop", "masquerade") if key in sel]
    return args


def predict(want, have, state):
    have = have or {"link_up": None, "addresses": [], "sysctls": {}, "rules": [], "routes": []}
    after = {"link_up": want["link_up"], "sysctls": dict(have["sysctls"], **want["sysctls"])}
    if state == "replaced":
        after["addresses"] = list(want["addresses"])
        after["routes"] = list(want["routes"]) if want["table"] is not None else []
        after["rules"] = list(want["rules"])
    else:
        after["addresses"] = sorted(set(have["addresses"]) | set(want["addresses"]))
        routes = list(have["routes"]) + [r for r in want["routes"] if r not in have["routes"]]
        after["routes"] = sorted(routes, key=_route_key)
        after["rules"] = sorted(list(have["rules"]) + [r for r in want["rules"] if r not in have["rules"]],
                                key=_rule_key)
    return after


def render(command):
    if isinstance(command, tuple) and command[0] == "sysctl":
        return "%s=%s" % (command[1], command[2])
    return " ".join(command)


class RailAddressesResource(Resource):
    """rail_addresses on the engine: one object per rail interface."""

    name = "rail_addresses"
    key_field = "interface"
    proc_sys = "/proc/sys"

    def __init__(self, module):
        super(RailAddressesResource, self).__init__(module)
        self.ip = None

    def _ip_tool(self):
        if self.ip is None:
            self.ip = self.module.get_bin_path("ip", required=False)
            if not self.ip:
                raise ToolError("required tool ip (iproute2) was not found in PATH or /sbin, /usr/sbin")
        return self.ip

    def _run(self, argv):
        from ansible_collections.rdma.fabric.plugins.module_utils.common._common import C_LOCALE
        return self.module.run_command([self._ip_tool()] + list(argv[1:]), environ_update=C_LOCALE)

    def check_key(self, field, value):
        return check_name(field, value)

    def normalize(self, entry, field):
        return normalize(entry, field, self.state)

    def validate_all(self, wants):
        validate_all(wants)

    def read(self, key, want):
        return read_state(self._run, read_text, self.proc_sys, key, want.get("table"))

    def parse(self, text):
        return parse_running_config(text)

    def plan(self, key, want, have, state):
        return plan(key, want, have, state, self.proc_sys)

    def predict(self, key, want, have, state):
        return predict(want, have, state)

    def apply(self, key, command):
        if isinstance(command, tuple) and command[0] == "sysctl":
            path, value = command[1], command[2]
            try:
                with open(path, "w") as handle:
                    handle.write("%s\n" % value)
            except (IOError, OSError) as exc:
                raise ToolError("writing %s to %s failed: %s" % (value, path, exc))
            return
        argv = [self._ip_tool()] + list(command[1:])
        from ansible_collections.rdma.fabric.plugins.module_utils.common._common import C_LOCALE
        rc, out, err = self.module.run_command(argv, environ_update=C_LOCALE)
        if rc != 0:
            raise ToolError("%s failed (rc=%s): %s" % (render(command), rc, (err or out).strip()),
                            argv=argv, rc=rc, stdout=out, stderr=err)

    def render(self, command):
        return render(command)
