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
from ansible_collections.rdma.fabric.plugins.module_utils._common import RDMA_DEVICE_MAX, check_name
from ansible_collections.rdma.fabric.plugins.module_utils._opensm_plan import (  # noqa: F401 (filters)
    conf_value as conf_text, os_family, select_port, sm_priority, usable_ib_ports)

PKEY_MIN = 0x0001
PKEY_MAX = 0x7FFF
DEFAULT_PKEY = 0x7FFF
PARTITION_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]+\Z")
# partitions.conf flags (OpenSM osm_prtn_config.c): ipoib, rate, mtu, sl, scope, qkey, tclass,
# defmember (full|limited|both), indx0.
IB_MTUS = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
IB_RATES = set(range(2, 23))
PARTITION_KEYS = ("name", "pkey", "ipoib", "mtu", "rate", "sl", "scope", "defmember", "members")
MEMBER_KEYS = ("guid", "membership")
MEMBERSHIPS = ("full", "limited", "both")


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
        unknown = sorted((str(k) for k in part if k not in PARTITION_KEYS))
        if unknown:
            errors.append("%s: %s %s not a partition key the role writes (%s)"
                          % (where, ", ".join(repr(k) for k in unknown), "is" if len(unknown) == 1 else "are",
                             ", ".join(PARTITION_KEYS)))
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
        if part.get("ipoib") is not None and not isinstance(part.get("ipoib"), bool):
            errors.append("%s.ipoib %r must be true or false" % (where, part.get("ipoib")))
        mtu = part.get("mtu")
        if mtu is not None and (isinstance(mtu, bool) or mtu not in IB_MTUS):
            errors.append("%s.mtu %r must be an IB MTU code 1-5 (1=256 .. 5=4096)" % (where, mtu))
        rate = part.get("rate")
        if rate is not None and (isinstance(rate, bool) or rate not in IB_RATES):
            errors.append("%s.rate %r must be an IB rate code 2-22 (e.g. 3=10G, 7=40G, 16=56G)" % (where, rate))
        # the partition definition's own syntax (',', '=', ':', ';', '#') or a line break in a
        # flag value would start another flag, member list or partition: numbers and words only
        sl = part.get("sl")
        if sl is not None and (isinstance(sl, bool) or not isinstance(sl, int) or not 0 <= sl <= 15):
            errors.append("%s.sl %r must be a service level 0-15" % (where, sl))
        scope = part.get("scope")
        if scope is not None and (isinstance(scope, bool) or not isinstance(scope, int) or not 1 <= scope <= 15):
            errors.append("%s.scope %r must be an IB multicast scope 1-15 (2=link-local, 5=site-local, "
                          "8=organization-local, 14=global)" % (where, scope))
        defmember = part.get("defmember")
        if defmember is not None and defmember not in MEMBERSHIPS:
            errors.append("%s.defmember %r must be full, limited or both" % (where, defmember))
        members = part.get("members")
        if members is not None and not isinstance(members, list):
            errors.append("%s.members %r must be a list of dicts with guid and membership" % (where, members))
            members = []
        for member_index, member in enumerate(members or []):
            mwhere = "%s.members[%d]" % (where, member_index)
            if not isinstance(member, dict):
                errors.append("%s must be a dict with guid and membership, got %r" % (mwhere, member))
                continue
            unknown = sorted(str(k) for k in member if k not in MEMBER_KEYS)
            if unknown:
                errors.append("%s: %s %s not a member key (guid, membership)"
                              % (mwhere, ", ".join(repr(k) for k in unknown), "is" if len(unknown) == 1 else "are"))
            guid = member.get("guid")
            if guid not in ("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"):
                try:
                    normalize_guid(guid)
                except ValueError:
                    errors.append("%s.guid %r must be a port GUID (0x...) or ALL, ALL_CAS, ALL_SWITCHES, "
                                  "ALL_ROUTERS, SELF" % (mwhere, guid))
            if member.get("membership", "full") not in MEMBERSHIPS:
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
    """partitions.conf lines: ``Name=0xPKEY[,flag=v...] : GUID=full|limited|both, ... ;``.
    Partitions ``partition_errors`` refuses are an error here too (the drift check renders the
    file without the role's preflight): no value reaches the file that could add a partition,
    a member or a line."""
    errors = partition_errors(partitions)
    if errors:
        raise AnsibleFilterError("opensm_partition_lines: %s" % "; ".join(errors))
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


def conf_value(value, option=None):
    """Python/YAML value -> opensm.conf text (TRUE/FALSE booleans, (null) for unset). With
    ``option`` (the template passes each line's option name), a name that is not an option
    name or a value with a line break (or NUL) is an error naming the variable it comes from:
    each is one line of opensm.conf, whichever way the template is reached (the role's
    preflight, or the drift check, which renders the file without it)."""
    text = conf_text(value)
    if option is None:
        return text
    if not isinstance(option, str) or not OPTION_NAME_RE.fullmatch(option):
        raise AnsibleFilterError("opensm_extra_options[%r]: not an opensm.conf option name (lower-case letters, "
                                 "digits and '_', no space or line break)" % (option,))
    if any(ch in LINE_BREAKS for ch in text) or "\x00" in text:
        source = MANAGED_OPTIONS.get(option) or "opensm_extra_options[%r]" % (option,)
        raise AnsibleFilterError("%s: the opensm.conf value of %s, %s, holds a line break (or NUL), which would add "
                                 "lines to opensm.conf" % (source, option, _shown(option, value)))
    return text


# ------------------------------------------------------------------ the role's other variables
# Each check: the variable's value -> messages naming the variable and the value (empty: good).
# The preflight runs them (opensm_config_errors); the templates run the ones of the values they
# write (opensm_checked), so a value the preflight did not see (the drift check renders the
# files without it) cannot add a line either.
# A path the role writes into the systemd drop-in (Environment=, ExecStartPre=) and opensm.conf:
# no blank (opensm and systemd split there), no quote, '%' or '$' (systemd specifiers and
# variables), no line break.
PATH_RE = re.compile(r"/[A-Za-z0-9._+@:/-]*")
ROUTING_ENGINE_RE = re.compile(r"[A-Za-z0-9_-]+(?: *, *[A-Za-z0-9_-]+)*")
ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LOG_FLAGS_RE = re.compile(r"0x[0-9a-fA-F]{1,2}")


def _is_int(value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not re.fullmatch(r"-?[0-9]+", str(value)):
        return False
    number = int(str(value))
    return number >= low and (high is None or number <= high)


def _fabric_errors(value):
    text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    if not text or any(ch in LINE_BREAKS or ord(ch) < 32 or ch == "\x7f" for ch in text):
        return ["opensm_fabric=%r: expected a fabric name on one line (not empty, no line break or control "
                "character: it names the HA group and is written into opensm.conf and partitions.conf)" % (value,)]
    return []


def _role_errors(value):
    return [] if value in ("master", "standby") else ["opensm_role=%r: expected master or standby" % (value,)]


def _standby_rank_errors(value):
    return [] if _is_int(value, 1) else ["opensm_standby_rank=%r: expected an integer >= 1" % (value,)]


def _guid_errors(value):
    if value in (None, ""):
        return []
    try:
        normalize_guid(value)
    except ValueError as exc:
        return ["opensm_guid=%r: %s" % (value, str(exc).split(": ", 1)[-1])]
    return []


def _ca_errors(value):
    if value in (None, ""):
        return []
    try:
        check_name("opensm_ca", value, "CA", RDMA_DEVICE_MAX)
    except ValueError as exc:
        return [str(exc)]
    return []


def _ca_port_errors(value):
    if value in (None, "") or _is_int(value, 1, 254):
        return []
    return ["opensm_ca_port=%r: expected a port number 1-254 (or empty)" % (value,)]


def _path_errors(variable):
    def check(value):
        if isinstance(value, str) and PATH_RE.fullmatch(value):
            return []
        return ["%s=%r: expected an absolute path of letters, digits and . _ + @ : / - (no blank, quote, %%, $ or line "
                "break: it is written into opensm.conf and the service's drop-in)" % (variable, value)]
    return check


def _routing_engine_errors(value):
    if value in (None, "") or (isinstance(value, str) and ROUTING_ENGINE_RE.fullmatch(value)):
        return []
    return ["opensm_routing_engine=%r: expected routing engine names separated by commas (minhop, updn, ftree, "
            "dfsssp, ...), or empty for OpenSM's default" % (value,)]


def _log_flags_errors(value):
    if isinstance(value, str) and LOG_FLAGS_RE.fullmatch(value):
        return []
    return ["opensm_log_flags=%r: expected a hex byte 0x00-0xff" % (value,)]


def _count_errors(variable, low, what):
    def check(value):
        return [] if _is_int(value, low) else ["%s=%r: expected %s" % (variable, value, what)]
    return check


def _environment_errors(value):
    if value is None:
        return []
    if not isinstance(value, dict):
        return ["opensm_query_environment=%r: expected a dict of environment variable: value" % (value,)]
    errors = []
    for name in sorted(value, key=str):
        item = value[name]
        if not isinstance(name, str) or not ENV_NAME_RE.fullmatch(name):
            errors.append("opensm_query_environment: %r is not an environment variable name (letters, digits and "
                          "'_', not starting with a digit)" % (name,))
        elif isinstance(item, (dict, list)) or item is None or "\x00" in str(item):
            errors.append("opensm_query_environment.%s=%s: expected a string or a number" % (name, _shown(name, item)))
    return errors


def _ha_hosts_errors(value, hosts=None):
    if not isinstance(value, list):
        return ["opensm_ha_hosts=%r: expected a list of inventory host names (empty: the play's hosts)" % (value,)]
    errors = []
    known = None if hosts is None else set(str(h) for h in hosts)
    for index, host in enumerate(value):
        if not isinstance(host, str) or not host:
            errors.append("opensm_ha_hosts[%d]=%r: expected an inventory host name" % (index, host))
        elif known is not None and host not in known:
            errors.append("opensm_ha_hosts[%d]=%r: not a host of the inventory (the HA check would judge an SM that "
                          "does not exist)" % (index, host))
    return errors


VARIABLE_CHECKS = {
    "opensm_fabric": _fabric_errors,
    "opensm_role": _role_errors,
    "opensm_standby_rank": _standby_rank_errors,
    "opensm_guid": _guid_errors,
    "opensm_ca": _ca_errors,
    "opensm_ca_port": _ca_port_errors,
    "opensm_cache_dir": _path_errors("opensm_cache_dir"),
    "opensm_log_file": _path_errors("opensm_log_file"),
    "opensm_routing_engine": _routing_engine_errors,
    "opensm_log_flags": _log_flags_errors,
    "opensm_verify_retries": _count_errors("opensm_verify_retries", 1, "a number of attempts >= 1"),
    "opensm_verify_delay": _count_errors("opensm_verify_delay", 0, "a number of seconds >= 0"),
    "opensm_query_environment": _environment_errors,
    "opensm_ha_hosts": _ha_hosts_errors,
    "opensm_partitions": partition_errors,
}


def config_errors(config, hosts=None):
    """Every problem of the role's variables in ``config`` (variable name -> value; those of
    VARIABLE_CHECKS), each message naming the variable and the value. ``hosts``: the inventory's
    host names, which every name of opensm_ha_hosts must be."""
    if not isinstance(config, dict):
        raise AnsibleFilterError("opensm_config_errors: expected a dict of role variables, got %s"
                                 % type(config).__name__)
    unknown = sorted(str(k) for k in config if k not in VARIABLE_CHECKS)
    if unknown:
        raise AnsibleFilterError("opensm_config_errors: no check for %s; it checks %s"
                                 % (", ".join(unknown), ", ".join(sorted(VARIABLE_CHECKS))))
    errors = []
    for variable in sorted(config):
        if variable == "opensm_ha_hosts":
            errors.extend(_ha_hosts_errors(config[variable], hosts))
        else:
            errors.extend(VARIABLE_CHECKS[variable](config[variable]))
    return errors


def checked(value, variable):
    """``value`` of the role's variable ``variable``, unchanged; an error naming the variable and
    the value when its check refuses it (what a template calls for each variable it writes)."""
    if variable not in VARIABLE_CHECKS:
        raise AnsibleFilterError("opensm_checked: no check for %r; it checks %s"
                                 % (variable, ", ".join(sorted(VARIABLE_CHECKS))))
    errors = VARIABLE_CHECKS[variable](value)
    if errors:
        raise AnsibleFilterError("; ".join(errors))
    return value


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
            "opensm_config_errors": config_errors,
            "opensm_checked": checked,
            "opensm_with_default_partition": with_default_partition,
            "opensm_partition_lines": partition_lines,
            "opensm_conf_value": conf_value,
            "opensm_os_family": os_family,
            "opensm_node_plan": node_plan,
            "opensm_read_spec": read_spec,
        }
