# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opensm area's variables: partitions, opensm.conf options (opensm_extra_options and the
options the role manages), the keys and every other variable's checks, each message naming the
``opensm_*`` variable and its value (a key by its name only), and the HA layout's cross-host check.
Pure functions (areas/opensm.py is the area object)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common import _guid
from ansible_collections.rdma.fabric.plugins.module_utils.common import _secrets
from ansible_collections.rdma.fabric.plugins.module_utils.common._guid import normalize_guid
from ansible_collections.rdma.fabric.plugins.module_utils.areas._opensm_node import conf_text, sm_priority
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError, RDMA_DEVICE_MAX, check_name


# ------------------------------------------------------------------ the role's variables
PREFIX = "opensm_"
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


def normalize_key(value, variable="the key"):
    """An OpenSM key (``opensm_sm_key``, ``opensm_m_key``) as ``normalize_guid`` gives it; a value
    that is not a 64-bit key fails naming ``variable``, never printing the value (a mistyped key
    is still close to the real one)."""
    if not _guid.is_guid(value):
        raise PlanError("%s: not a 64-bit key (0x and 1-16 hex digits); the value is not printed"
                        % (variable,))
    return _guid.normalize_guid(value)


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
        raise PlanError("opensm_partition_lines: %s" % "; ".join(errors))
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
    secret (module_utils/common/_secrets.py, the one list)."""
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
        raise PlanError("opensm_extra_options[%r]: not an opensm.conf option name (lower-case letters, "
                        "digits and '_', no space or line break)" % (option,))
    if any(ch in LINE_BREAKS for ch in text) or "\x00" in text:
        source = MANAGED_OPTIONS.get(option) or "opensm_extra_options[%r]" % (option,)
        raise PlanError("%s: the opensm.conf value of %s, %s, holds a line break (or NUL), which would add "
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
    return [] if _is_int(value, 1) else ["opensm_standby_rank=%s: expected an integer >= 1" % (_v(value),)]


def _guid_errors(value):
    if value in (None, ""):
        return []
    try:
        normalize_guid(value)
    except ValueError as exc:
        return ["opensm_guid=%s: %s" % (_v(value), str(exc).split(": ", 1)[-1])]
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
    return ["opensm_log_flags=%s: expected a hex byte 0x00-0xff" % (_v(value),)]


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


def _ha_hosts_errors(value, unknown=None):
    """``unknown``: the names of opensm_ha_hosts the inventory does not hold (``settings``)."""
    if not isinstance(value, list):
        return ["opensm_ha_hosts=%r: expected a list of inventory host names (empty: the play's hosts)" % (value,)]
    errors = []
    for index, host in enumerate(value):
        if not isinstance(host, str) or not host:
            errors.append("opensm_ha_hosts[%d]=%r: expected an inventory host name" % (index, host))
        elif unknown and host in unknown:
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


def _v(value):
    """A value as a message shows it: a plain word as it is (``opensm_priority=16``), anything
    else (a line break, a quote, a blank) as its repr."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value and value.isprintable() and not any(c in value for c in " '\"\\"):
        return value
    return repr(value)


def _int_errors(variable, value, low, high, what):
    if _is_int(value, low, high):
        return []
    return ["%s=%s: expected %s" % (variable, _v(value), what)]


def _key_errors(settings):
    """opensm_sm_key (required, never 0x0 or OpenSM's well-known 0x1) and opensm_m_key (empty or
    a 64-bit key): messages name the variable, never the value."""
    errors = []
    sm_key = settings.get("sm_key")
    text = "" if sm_key is None else str(sm_key)
    if not _guid.is_guid(text) or int(text, 16) in (0, 1):
        got = "(empty)" if text == "" else ("0x1" if re.fullmatch(r"0[xX]0*1", text) else
                                            ("0x0" if re.fullmatch(r"0[xX]0+", text) else "a value that is not 64-bit hex"))
        errors.append("opensm_sm_key must be set to a 64-bit hex value (0x...) kept in Ansible Vault, the same on every "
                      "SM of fabric %s; 0x0 and OpenSM's default 0x1 are refused (any SM that knows 0x1 can take part "
                      "in the handover). Got: %s" % (settings.get("fabric"), got))
    m_key = settings.get("m_key")
    if m_key not in (None, "") and not _guid.is_guid(str(m_key)):
        errors.append("opensm_m_key must be empty or 0x + 1-16 hex digits (got a value that is not; it is not printed)")
    return errors


def effective_priority(settings):
    """The SM priority the settings give (opensm_priority, else from opensm_role, the rank and
    opensm_master_priority)."""
    return sm_priority(settings.get("role"), settings.get("standby_rank"), settings.get("priority"),
                       settings.get("master_priority"))


def _priority_errors(settings):
    errors = _int_errors("opensm_master_priority", settings.get("master_priority"), 0, 15, "a priority 0-15")
    if settings.get("priority") not in (None, ""):
        errors += _int_errors("opensm_priority", settings.get("priority"), 0, 15, "empty or a priority 0-15")
    if errors or settings.get("role") not in ("master", "standby") or not _is_int(settings.get("standby_rank"), 1):
        return errors
    priority = effective_priority(settings)
    if not 0 <= priority <= 15:
        errors.append("the effective SM priority %d is outside 0-15 (opensm_role=%s, opensm_standby_rank=%s, "
                      "opensm_master_priority=%s)" % (priority, settings.get("role"), settings.get("standby_rank"),
                                                      settings.get("master_priority")))
    return errors


def config_errors(settings):
    """Every problem of the role's settings (``settings(variables)``), each message naming the
    ``opensm_*`` variable and the value (a key by its name only); [] when they are good. What
    the preflight asserts, and what the drift check records before it plans."""
    if not isinstance(settings, dict):
        raise PlanError("opensm config_errors: expected the role's settings dict, got %s" % type(settings).__name__)
    errors = []
    for variable in sorted(VARIABLE_CHECKS):
        key = variable[len(PREFIX):]
        if key == "ha_hosts":
            errors.extend(_ha_hosts_errors(settings.get(key), settings.get("unknown_ha_hosts")))
        elif key in settings:
            errors.extend(VARIABLE_CHECKS[variable](settings[key]))
    errors.extend(_priority_errors(settings))
    errors.extend(_int_errors("opensm_sminfo_polling_timeout", settings.get("sminfo_polling_timeout"), 100, None,
                              "a number of ms >= 100"))
    errors.extend(_int_errors("opensm_polling_retry_number", settings.get("polling_retry_number"), 1, None,
                              "a number of polls >= 1"))
    errors.extend(_int_errors("opensm_log_max_size", settings.get("log_max_size"), 0, None, "a size in MB >= 0"))
    errors.extend(_int_errors("opensm_m_key_protection_level", settings.get("m_key_protection_level"), 0, 3,
                              "a protection level 0-3"))
    errors.extend(_int_errors("opensm_m_key_lease_period", settings.get("m_key_lease_period"), 0, 65535,
                              "a lease period 0-65535 s"))
    errors.extend(_key_errors(settings))
    errors.extend(extra_option_errors(settings.get("extra_options")))
    return errors
