# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the rdma.fabric.opensm role (rdma.fabric.opensm_*): ibstat ports, SM priorities,
HA and partition validation; documentation in the opensm_NAME.yml files. Pure functions; the
role's preflight asserts on what they return. Collection filters, not role filter_plugins:
Ansible loads a role's embedded plugins only for legacy (non-collection) roles.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import math
import re

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils import _guid, _ibstat, _secrets
from ansible_collections.rdma.fabric.plugins.module_utils._opensm_plan import (  # noqa: F401 (filters)
    conf_value, os_family, select_port, sm_priority, usable_ib_ports)

PKEY_MIN = 0x0001
PKEY_MAX = 0x7FFF
DEFAULT_PKEY = 0x7FFF
PARTITION_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]+\Z")
# partitions.conf flags (OpenSM osm_prtn_config.c): ipoib, rate, mtu, sl, scope, qkey, tclass,
# defmember (full|limited|both), indx0.
IB_MTUS = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
IB_RATES = set(range(2, 23))


def normalize_guid(value):
    """'0x100001' -> '0x0000000000100001' (rdma.fabric's one GUID normaliser, module_utils/_guid);
    ValueError naming the value when it is not a 64-bit GUID."""
    return _guid.normalize_guid(value)


def normalize_key(value, variable="the key"):
    """An OpenSM key (``opensm_sm_key``, ``opensm_m_key``) as ``normalize_guid`` gives it; a value
    that is not a 64-bit key fails naming ``variable``, never printing the value (a mistyped key
    is still close to the real one)."""
    if not _guid.is_guid(value):
        raise AnsibleFilterError("%s: not a 64-bit key (0x and 1-16 hex digits); the value is not printed"
                                 % (variable,))
    return _guid.normalize_guid(value)


def ibstat_ports(text):
    """``ibstat`` output -> list of ports (rdma.fabric's one ibstat parser, module_utils/_ibstat):
    {ca, port, state, physical_state, rate, base_lid, lmc, sm_lid, capability_mask, port_guid,
    link_layer}; ValueError naming the line when the text is not ibstat's layout."""
    return _ibstat.port_list(text)


def ha_errors(members, allow_equal_priority=False):
    """Cross-host checks. ``members``: dicts with host, fabric, role, standby_rank, priority
    (explicit or None), master_priority and guid (may be empty: discovered later).

    Returns a list of messages; empty when the HA layout is sound.
    """
    errors = []
    fabrics = {}
    for member in members:
        host = member.get("host")
        role = member.get("role")
        if role not in ("master", "standby"):
            errors.append("%s: opensm_role must be master or standby, got %r" % (host, role))
            continue
        try:
            prio = sm_priority(role, member.get("standby_rank", 1), member.get("priority"),
                               member.get("master_priority", 14))
        except (TypeError, ValueError):
            errors.append("%s: priority is not a number (opensm_priority=%r, opensm_standby_rank=%r)"
                          % (host, member.get("priority"), member.get("standby_rank")))
            continue
        if not 0 <= prio <= 15:
            errors.append("%s: SM priority %d is outside 0-15 (opensm_role=%s, opensm_standby_rank=%s, "
                          "opensm_priority=%s, opensm_master_priority=%s)"
                          % (host, prio, role, member.get("standby_rank"), member.get("priority"),
                             member.get("master_priority")))
        guid = member.get("guid")
        if guid:
            try:
                guid = normalize_guid(guid)
            except ValueError as exc:
                errors.append("%s: opensm_guid %s" % (host, exc))
                guid = None
        entry = dict(member, effective_priority=prio, guid=guid or None)
        fabrics.setdefault(member.get("fabric"), []).append(entry)

    for fabric in sorted(fabrics, key=str):
        sms = fabrics[fabric]
        masters = [m["host"] for m in sms if m["role"] == "master"]
        if len(masters) != 1:
            errors.append("fabric %s: exactly one host must have opensm_role=master, found %d (%s)"
                          % (fabric, len(masters), ", ".join(masters) or "none"))
        by_prio = {}
        for m in sms:
            by_prio.setdefault(m["effective_priority"], []).append(m["host"])
        for prio in sorted(by_prio):
            if len(by_prio[prio]) > 1 and not allow_equal_priority:
                errors.append("fabric %s: SMs %s share priority %d; OpenSM then elects by GUID, which is "
                              "hard to predict. Give each a distinct opensm_standby_rank or opensm_priority, "
                              "or set opensm_allow_equal_priority: true"
                              % (fabric, ", ".join(sorted(by_prio[prio])), prio))
        master_prio = [m["effective_priority"] for m in sms if m["role"] == "master"]
        for m in sms:
            if m["role"] == "standby" and master_prio and m["effective_priority"] > master_prio[0]:
                errors.append("fabric %s: standby %s has priority %d above the master's %d; it would take "
                              "over as soon as it starts"
                              % (fabric, m["host"], m["effective_priority"], master_prio[0]))
        by_guid = {}
        for m in sms:
            if m["guid"]:
                by_guid.setdefault(m["guid"], []).append(m["host"])
        for guid in sorted(by_guid):
            if len(by_guid[guid]) > 1:
                errors.append("fabric %s: hosts %s bind the same port GUID %s"
                              % (fabric, ", ".join(sorted(by_guid[guid])), guid))
    return errors


def _pkey(value):
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, int):
        return value
    text = str(value).strip().lower()
    return int(text, 16) if text.startswith("0x") else int(text)


def partition_errors(partitions):
    """Validate ``opensm_partitions`` as the user wrote them (list of dicts, see the role's
    argument_specs); indexes in the messages are the user's."""
    errors = []
    names, keys = {}, {}
    if not isinstance(partitions, list):
        return ["opensm_partitions must be a list of dicts, got %r" % (partitions,)]
    for index, part in enumerate(partitions):
        where = "opensm_partitions[%d]" % index
        if not isinstance(part, dict):
            errors.append("%s must be a dict, got %r" % (where, part))
            continue
        name = part.get("name")
        if not name or not PARTITION_NAME_RE.match(str(name)):
            errors.append("%s.name %r must be letters, digits, '_', '.', '-'" % (where, name))
        elif name in names:
            errors.append("%s.name %r is already used by opensm_partitions[%d]" % (where, name, names[name]))
        else:
            names[name] = index
        try:
            pkey = _pkey(part.get("pkey"))
        except (TypeError, ValueError):
            errors.append("%s.pkey %r is not a number" % (where, part.get("pkey")))
            continue
        if not PKEY_MIN <= pkey <= PKEY_MAX:
            errors.append("%s.pkey 0x%04x is outside 0x0001-0x7fff (the full-membership bit 0x8000 is set "
                          "by 'membership', not in the key)" % (where, pkey))
        elif pkey in keys:
            errors.append("%s.pkey 0x%04x is already used by opensm_partitions[%d]" % (where, pkey, keys[pkey]))
        else:
            keys[pkey] = index
        if name == "Default" and pkey != DEFAULT_PKEY:
            errors.append("%s: the partition named Default must use pkey 0x7fff, got 0x%04x" % (where, pkey))
        if pkey == DEFAULT_PKEY and name != "Default":
            errors.append("%s: pkey 0x7fff is the Default partition; name it Default, got %r" % (where, name))
        mtu = part.get("mtu")
        if mtu is not None and mtu not in IB_MTUS:
            errors.append("%s.mtu %r must be an IB MTU code 1-5 (1=256 .. 5=4096)" % (where, mtu))
        rate = part.get("rate")
        if rate is not None and rate not in IB_RATES:
            errors.append("%s.rate %r must be an IB rate code 2-22 (e.g. 3=10G, 7=40G, 16=56G)" % (where, rate))
        for member_index, member in enumerate(part.get("members") or []):
            mwhere = "%s.members[%d]" % (where, member_index)
            if not isinstance(member, dict):
                errors.append("%s must be a dict with guid and membership, got %r" % (mwhere, member))
                continue
            guid = member.get("guid")
            if guid not in ("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"):
                try:
                    normalize_guid(guid)
                except ValueError:
                    errors.append("%s.guid %r must be a port GUID (0x...) or ALL, ALL_CAS, ALL_SWITCHES, "
                                  "ALL_ROUTERS, SELF" % (mwhere, guid))
            if member.get("membership", "full") not in ("full", "limited", "both"):
                errors.append("%s.membership %r must be full, limited or both"
                              % (mwhere, member.get("membership")))
    return errors


def with_default_partition(partitions, keep_default=True):
    """Prepend the stock Default partition (0x7fff, ALL full, IPoIB) unless one is given or
    the user dropped it."""
    partitions = list(partitions or [])
    if not keep_default:
        return partitions
    for part in partitions:
        try:
            if isinstance(part, dict) and _pkey(part.get("pkey")) == DEFAULT_PKEY:
                return partitions
        except (TypeError, ValueError):
            continue
    default = {"name": "Default", "pkey": DEFAULT_PKEY, "ipoib": True,
               "members": [{"guid": "ALL", "membership": "full"}]}
    return [default] + partitions


def partition_lines(partitions):
    """partitions.conf lines: ``Name=0xPKEY[,flag=v...] : GUID=full|limited|both, ... ;``."""
    lines = []
    for part in partitions:
        pkey = _pkey(part["pkey"])
        head = "%s=0x%04x" % (part["name"], pkey)
        flags = []
        if part.get("ipoib"):
            flags.append("ipoib")
        for key in ("mtu", "rate", "sl", "scope"):
            if part.get(key) is not None:
                flags.append("%s=%s" % (key, part[key]))
        if part.get("defmember"):
            flags.append("defmember=%s" % part["defmember"])
        if flags:
            head += "," + ",".join(flags)
        members = []
        for member in part.get("members") or []:
            guid = member["guid"]
            if guid not in ("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"):
                guid = normalize_guid(guid)
            members.append("%s=%s" % (guid, member.get("membership", "full")))
        lines.append("%s : %s ;" % (head, ", ".join(members)) if members else "%s : ;" % head)
    return lines


# opensm.conf options the role writes from its own, checked variables: opensm_extra_options
# may not set them (combine() would let the extra value win past the preflight checks).
MANAGED_OPTIONS = {
    "guid": "opensm_guid", "sm_priority": "opensm_priority / opensm_role / opensm_standby_rank",
    "sm_key": "opensm_sm_key", "m_key": "opensm_m_key",
    "m_key_protection_level": "opensm_m_key_protection_level", "m_key_lease_period": "opensm_m_key_lease_period",
    "sminfo_polling_timeout": "opensm_sminfo_polling_timeout", "polling_retry_number": "opensm_polling_retry_number",
    "honor_guid2lid_file": "opensm_honor_guid2lid_file", "partition_config_file": "opensm_partitions",
    "log_file": "opensm_log_file", "log_flags": "opensm_log_flags", "log_max_size": "opensm_log_max_size",
    "routing_engine": "opensm_routing_engine",
}
OPTION_NAME_RE = re.compile(r"[a-z0-9_]+")
# What str.splitlines() breaks on: any of them would start a new opensm.conf line.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _shown(key, value):
    """A value for a message; never one of an option whose name says it holds a key or another
    secret (module_utils/_secrets.py, the one list)."""
    secret = "key" in str(key).lower() or _secrets.is_secret(str(key).strip())
    return "(not printed: the option may hold a key)" if secret else repr(value)


def extra_option_errors(extra):
    """Problems of ``opensm_extra_options`` (the role's preflight fails on any): not a dict; a
    key that is not an opensm.conf option name (lower case, digits, ``_``: no space, no line
    break); a key the role manages, also written with other case or surrounding space; a
    value that is not a plain scalar, or that holds a line break (it would add lines to
    opensm.conf, past the role's checks). Each message names opensm_extra_options, the key
    and the value (a value whose option name holds "key" is not printed)."""
    if extra is None:
        return []
    if not isinstance(extra, dict):
        return ["opensm_extra_options=%r: expected a dict of opensm.conf option: value" % (extra,)]
    errors = []
    for key in sorted(extra, key=str):
        value = extra[key]
        name = str(key)
        field = "opensm_extra_options[%r]" % (name,)
        canonical = name.strip().lower()
        if canonical in MANAGED_OPTIONS:
            errors.append("%s: %s is set by the role from %s (checked there); opensm_extra_options may not set "
                          "it%s" % (field, canonical, MANAGED_OPTIONS[canonical],
                                    "" if name == canonical else " (written %r)" % (name,)))
            continue
        if not isinstance(key, str) or not OPTION_NAME_RE.fullmatch(name):
            errors.append("%s: not an opensm.conf option name (lower-case letters, digits and '_', no space or "
                          "line break)" % field)
            continue
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            errors.append("%s=%s: not a number opensm takes" % (field, value))
            continue
        if not isinstance(value, (str, int, float)):
            errors.append("%s=%s: expected a string, number or boolean, got %s"
                          % (field, _shown(name, value), type(value).__name__))
            continue
        text = str(value)
        if any(ch in LINE_BREAKS for ch in text) or "\x00" in text:
            errors.append("%s=%s: holds a line break (or NUL), which would add lines to opensm.conf"
                          % (field, _shown(name, value)))
    return errors


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


class FilterModule(object):
    def filters(self):
        return {
            "opensm_normalize_guid": normalize_guid,
            "opensm_normalize_key": normalize_key,
            "opensm_ibstat_ports": ibstat_ports,
            "opensm_usable_ib_ports": usable_ib_ports,
            "opensm_select_port": select_port,
            "opensm_sm_priority": sm_priority,
            "opensm_ha_errors": ha_errors,
            "opensm_partition_errors": partition_errors,
            "opensm_extra_option_errors": extra_option_errors,
            "opensm_with_default_partition": with_default_partition,
            "opensm_partition_lines": partition_lines,
            "opensm_conf_value": conf_value,
            "opensm_os_family": os_family,
            "opensm_node_plan": node_plan,
            "opensm_read_spec": read_spec,
        }
