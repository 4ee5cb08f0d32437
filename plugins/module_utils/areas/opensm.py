# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opensm area: OpenSM subnet managers in active/standby on the SM nodes (opensm.conf with
the SM_Key and the other keys, partitions.conf, the service's systemd drop-in, the service;
the priorities of HA). Everything the rdma.fabric.opensm role decides is here, as pure
functions with no host I/O:

- ``settings(variables)``: the role's settings from its variables (every option of
  ``roles/opensm/meta/argument_specs.yml``, the contract and the only list of them), plus the
  names of ``opensm_ha_hosts`` the inventory (``groups``) does not hold;
- ``config_errors(settings)``: every problem, each naming the ``opensm_*`` variable and its
  value (a key by its name only: module_utils/common/_secrets.py);
- ``spec(variables, render)``: what the controller hands the node: the settings, the priority,
  each OS family's paths, the one read's files and units, and the files rendered from the
  role's templates with slots (``SLOTS``) for what only the node knows (the port GUID, the
  family's partitions file). No facts;
- ``plan(facts, spec)``: everything the role does on the node from its read: the OS family,
  the port OpenSM binds to, the files (slots filled) and the unit, what differs from the read
  (install, change, reasons), and ``requests``: the one node_files call;
- ``records(host, results)``: the drift records of the node_files result (opensm.conf key by
  key, a key shown as "(hidden, differs)") and of the fabric's SMs (sm_info: one master, this
  SM in its role's state at its priority), named as the role's verify and the drift check
  both name them.

``ha_errors(members)`` is the cross-host check (one master per fabric, distinct priorities,
standbys below the master, distinct GUIDs) the role's preflight runs once per play.

The role (``rdma.fabric.area_*`` filters), the drift check (``state_check`` on the node) call
these. Errors are PlanError (the filters make them AnsibleFilterError with the same message)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import math
import re


from ansible_collections.rdma.fabric.plugins.module_utils.drift import _drift_spec
from ansible_collections.rdma.fabric.plugins.module_utils.common import _guid, _secrets
from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstat
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import RDMA_DEVICE_MAX, PlanError, check_name
from ansible_collections.rdma.fabric.plugins.module_utils.common._guid import normalize_guid
from ansible_collections.rdma.fabric.plugins.module_utils.areas._settings import role_settings


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


# ------------------------------------------------------------------ the role's variables
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


# ------------------------------------------------------------------ the area object
NAME = "opensm"
PREFIX = "opensm_"
# read besides the role's own variables: the inventory, which every name of opensm_ha_hosts
# must be in (only the names it lacks are kept)
OTHER_VARIABLES = ("groups",)
# the role's boolean variables (converted as ``| bool`` converts them)
FLAGS = ("honor_guid2lid_file", "keep_default_partition", "allow_equal_priority", "install", "service_enabled",
         "verify")
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
# The files: family path key, role template, mode (opensm.conf holds the keys: 0600).
FILES = (
    ("config_file", "opensm/opensm.conf.j2", "0600"),
    ("partitions_file", "opensm/partitions.conf.j2", "0644"),
    ("dropin_file", "opensm/opensm-dropin.conf.j2", "0644"),
    ("ports_file", "opensm/opensm.default.j2", "0644"),
)
# The files are rendered on the controller with a slot where a value only the node knows goes
# (its port GUID from ibstat, its OS family's partitions file): plan key -> slot.
SLOTS = {"guid": "@RDMA_FABRIC_OPENSM_GUID@", "partitions_file": "@RDMA_FABRIC_OPENSM_PARTITIONS_FILE@"}
HIDDEN = "(hidden, differs)"


def _read_arguments(settings):
    """The OS family's markers, and ibstat's ports when the port GUID is to be discovered."""
    return {"ibstat": not settings.get("guid")}


def _sm_arguments(settings):
    """sminfo from a port with no SM, in its own environment (opensm_query_environment)."""
    return {"environment": settings.get("query_environment") or {}}


# What the area reads of the node (the drift check gathers it there, _state_check.gather_facts):
# (key, reader, arguments, or arguments(settings)). plan() takes facts[PLAN_FACTS]; ``sm``, the
# fabric's SMs as sm_info reads them, is judged by records (one master, this SM's state).
FACTS = (("opensm", "opensm", _read_arguments), ("sm", "sm_info", _sm_arguments))
PLAN_FACTS = "opensm"


def settings(variables):
    """The role's settings (keys without the ``opensm_`` prefix) from ``variables``, the templated
    value of every variable of the role's argument spec, plus ``groups`` when defined:
    ``unknown_ha_hosts`` is then the names of opensm_ha_hosts the inventory does not hold."""
    out = role_settings(variables, PREFIX, FLAGS)
    groups = variables.get("groups")
    ha_hosts = out.get("ha_hosts")
    out["unknown_ha_hosts"] = None
    if isinstance(groups, dict) and isinstance(ha_hosts, list):
        known = set(str(h) for h in groups.get("all") or ())
        out["unknown_ha_hosts"] = sorted(set(h for h in ha_hosts if isinstance(h, str) and h and h not in known))
    return out


def options(settings, priority):
    """opensm.conf's options, in the order written (the role's, then opensm_extra_options), as
    opensm.conf text; the port GUID and the partitions file are slots the node fills."""
    wanted = [
        ("guid", SLOTS["guid"]),
        ("sm_priority", priority),
        ("sm_key", normalize_key(settings["sm_key"], "opensm_sm_key")),
        ("sminfo_polling_timeout", int(settings["sminfo_polling_timeout"])),
        ("polling_retry_number", int(settings["polling_retry_number"])),
        ("honor_guid2lid_file", bool(settings.get("honor_guid2lid_file"))),
        ("partition_config_file", SLOTS["partitions_file"]),
        ("log_file", settings["log_file"]),
        ("log_flags", settings["log_flags"]),
        ("log_max_size", int(settings["log_max_size"])),
    ]
    if settings.get("routing_engine"):
        wanted.append(("routing_engine", settings["routing_engine"]))
    if settings.get("m_key"):
        wanted += [("m_key", normalize_key(settings["m_key"], "opensm_m_key")),
                   ("m_key_protection_level", int(settings["m_key_protection_level"])),
                   ("m_key_lease_period", int(settings["m_key_lease_period"]))]
    wanted += list((settings.get("extra_options") or {}).items())
    out = {}
    for key, value in wanted:
        out[key] = conf_value(value, key)
    return out


def read_files():
    """node_files options (state=gathered) of the role's one read: every family's files, markers
    and unit, and the binaries."""
    return read_spec(FAMILIES, [path for path, _family in FAMILY_MARKERS], BINARIES)


def spec(variables, render):
    """What the controller hands the node (the role's ``__opensm_spec``, the drift check's area
    spec): the settings, the priority, each family's paths, the one read, and the files rendered
    from the role's templates by ``render(template, template_vars)``, with slots (``SLOTS``) for
    what only the node knows. Settings ``config_errors`` refuses are rendered into no file
    (``files`` is None; the preflight and the plan report them). No facts: ``plan`` takes the
    node's."""
    values = settings(variables)
    out = {"settings": values, "families": FAMILIES, "read": read_files(), "slots": dict(SLOTS),
           "priority": None, "files": None}
    if config_errors(values):
        return out
    priority = effective_priority(values)
    partitions = with_default_partition(values.get("partitions"), values.get("keep_default_partition"))
    template_vars = {"__opensm_options": options(values, priority), "__opensm_priority": priority,
                     "__opensm_guid": SLOTS["guid"], "__opensm_partition_lines": partition_lines(partitions)}
    out["priority"] = priority
    out["files"] = {
        "config": render("opensm/opensm.conf.j2", template_vars),
        "partitions": render("opensm/partitions.conf.j2", template_vars),
        "ports": render("opensm/opensm.default.j2", template_vars),
        "dropins": dict((name, render("opensm/opensm-dropin.conf.j2",
                                      dict(template_vars, __opensm_dropin_execstart=family["dropin_execstart"])))
                        for name, family in sorted(FAMILIES.items())),
    }
    return out


def _fill(text, values):
    for key, slot in sorted(SLOTS.items()):
        text = text.replace(slot, str(values[key]))
    return text


def _ports(facts):
    if facts.get("ports") is not None:
        return facts["ports"]
    if facts.get("ibstat") is not None:
        try:
            return _ibstat.port_list(facts["ibstat"])
        except ValueError as exc:
            raise PlanError("opensm: ibstat: %s" % exc)
    return None


def _decide(gathered, files, units, values):
    try:
        return node_plan(gathered, files, units, BINARIES, values.get("install"))
    except ValueError as exc:
        raise PlanError("opensm: %s" % exc)


def _not_planned(errors):
    return {"errors": errors, "files": [], "units": [], "requests": [], "install": False, "change": False,
            "reasons": [], "port": {}, "guid": "", "priority": None, "service": None, "packages": [],
            "ports_needed": False}


def plan(facts, spec):
    """Everything the role does on the node from its read. ``facts``: ``gathered`` (the one
    node_files read, ``read_files()``) or ``markers`` (the family's marker files), ``os_family``
    (the facts' when gathered), ``ports`` (``ibstat`` parsed) or ``ibstat`` (its text; needed
    when opensm_guid is empty, and read when the plan changes something to check a bound GUID).

    Returns ``{errors, family, service, packages, config_file, guid, port, priority, role, files,
    units, install, change, reasons, sm_expected, ports_needed, requests}``; with ``errors`` (the
    settings, an unknown OS family, no port) nothing else is planned; with ``ports_needed``
    (opensm_guid empty, ibstat not read) only the family and ``install``.
    ``install``/``change``/``reasons``: what differs from ``gathered`` (``change`` None without it)."""
    values = spec["settings"]
    errors = config_errors(values)
    if errors or spec.get("files") is None:
        return _not_planned(errors or ["opensm: the spec holds no files (its settings were refused)"])
    try:
        read = facts.get("gathered") if facts.get("gathered") is not None else facts.get("markers")
        choice = os_family(read, facts.get("os_family") or None)
        if "error" in choice:
            return _not_planned([choice["error"]])
        family = spec["families"][choice["family"]]
        guid = normalize_guid(values["guid"]) if values.get("guid") else ""
        ports, port = _ports(facts), {}
        if ports is not None:
            found = select_port(ports, guid, values.get("ca") or "", values.get("ca_port"))
            if "error" in found:
                return _not_planned([found["error"]])
            port = found["port"]
            guid = guid or port["port_guid"]
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanError("opensm: %s: %s" % (type(exc).__name__, exc))
    units = [{"name": family["service"], "enabled": bool(values.get("service_enabled")),
              "active": values.get("service_state") == "started"}]
    result = {"errors": [], "family": choice["family"], "service": family["service"], "packages": family["packages"],
              "config_file": family["config_file"], "guid": guid, "port": port, "priority": spec["priority"],
              "role": values["role"], "files": [], "units": units, "ports_needed": False,
              "sm_expected": {"guid": guid, "role": values["role"], "priority": spec["priority"]},
              "install": False, "change": None, "reasons": [], "requests": [],
              # the spec the node's own drift check reads (_drift_spec: 0600, it holds the keys)
              "drift_spec": _drift_spec.node_files(NAME, spec)}
    if not guid:
        # discovery before ibstat was read (the packages that bring it may not be installed
        # yet): the install decision only
        if facts.get("gathered") is not None:
            result["install"] = _decide(facts["gathered"], [], units, values)["install"]
        result["ports_needed"] = True
        return result
    filled = {"guid": guid, "partitions_file": family["partitions_file"]}
    texts = {"config_file": spec["files"]["config"], "partitions_file": spec["files"]["partitions"],
             "dropin_file": spec["files"]["dropins"][choice["family"]], "ports_file": spec["files"]["ports"]}
    files = [{"path": family[key], "content": _fill(texts[key], filled), "mode": mode}
             for key, _template, mode in FILES if family.get(key)]
    result["files"] = files
    if facts.get("gathered") is not None:
        decided = _decide(facts["gathered"], files, units, values)
        result.update(install=decided["install"], change=decided["change"], reasons=decided["reasons"])
    result["requests"] = [{"resource": "node_files", "name": "OpenSM files", "options": {"content": True},
                           "config": {"files": files, "units": units}}]
    return result


# ------------------------------------------------------------------ records
_OPTION_LINE = re.compile(r"[ \t]*(?P<name>[^ \t]+)[ \t]*(?P<value>.*)\Z", re.S)
_OPTION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_KEY_LIKE = re.compile(r"0[xX][0-9a-fA-F]+|[0-9a-fA-F]{8,}")
CONFIG_FILES = frozenset(family["config_file"] for family in FAMILIES.values())


def _record(host, obj, setting, expected, actual):
    return {"host": host, "area": NAME, "object": obj, "setting": setting, "expected": expected, "actual": actual}


def conf_options(text):
    """opensm.conf as ``{name: value}``, read as OpenSM reads it (osm_subn_parse_conf_file):
    ``#`` starts a comment anywhere on a line, the name is the first word (split on spaces and
    tabs: ``sm_key<TAB>0x..`` is the name ``sm_key``), the value the rest without its blanks and
    one pair of quotes around it (clean_val); the last line of a name wins."""
    found_options = {}
    for line in (text or "").splitlines():
        found = _OPTION_LINE.match(line.split("#", 1)[0])
        if not found:
            continue
        value = found.group("value").strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        found_options[found.group("name")] = value
    return found_options


def _hidden(key, value):
    return _secrets.hide(key, value, HIDDEN)


def _setting(key):
    """The record's setting for a name of opensm.conf: the name; for a line that is no option
    name (a key on a line of its own, ``sa_key=0x..``), the line with its secrets and every
    value that could be a key hidden."""
    if _OPTION_NAME.match(key):
        return key
    return _KEY_LIKE.sub("(hidden)", _secrets.redact_text(key, "(hidden)"))


def _mask(found, secrets):
    """``found`` (records) with every known secret value hidden wherever it stands (a last guard:
    the records of a broken file must not print a key either)."""
    secrets = sorted((s for s in secrets if len(s) >= _secrets.MIN_SECRET_LENGTH), key=len, reverse=True)
    if not secrets:
        return found

    def clean(value):
        if isinstance(value, str):
            for secret in secrets:
                value = value.replace(secret, "(hidden)")
        return value
    return [dict((k, clean(v)) for k, v in r.items()) for r in found]


def _conf_secrets(found_options, text):
    """The secret values of an opensm.conf: those of its secret names and any secret its lines
    (comments left out, as OpenSM leaves them) hold in another layout."""
    lines = "\n".join(line.split("#", 1)[0] for line in (text or "").splitlines())
    return set(v for k, v in found_options.items() if _secrets.is_secret(k)) | _secrets.secret_values(lines)


def _file_records(host, result):
    """node_files (check mode, with content): each file missing, opensm.conf key by key (a key
    hidden), another file's content, and mode/owner/group; each unit's enabled/active."""
    out = []
    before, after = result.get("before") or {}, result.get("after") or {}
    for path in sorted(after.get("files") or {}):
        have, want = (before.get("files") or {}).get(path) or {}, after["files"][path] or {}
        if want.get("state", "present") == "absent":
            if have.get("state") == "present":
                out.append(_record(host, path, "state", "absent", "present"))
            continue
        if have.get("state") != "present":
            out.append(_record(host, path, "state", "present", have.get("state")))
            continue
        if path in CONFIG_FILES and want.get("content") is not None:
            expected, found = conf_options(want["content"]), conf_options(have.get("content"))
            conf = [_record(host, path, _setting(key), _hidden(key, expected.get(key)), _hidden(key, found.get(key)))
                    for key in sorted(set(expected) | set(found)) if expected.get(key) != found.get(key)]
            out.extend(_mask(conf, _conf_secrets(expected, want["content"]) | _conf_secrets(found, have.get("content"))))
        elif have.get("checksum") != want.get("checksum"):
            out.append(_record(host, path, "content", want.get("checksum"), have.get("checksum")))
        for key in ("mode", "owner", "group"):
            if have.get(key) != want.get(key):
                out.append(_record(host, path, key, want.get(key), have.get(key)))
    for name in sorted(after.get("units") or {}):
        have, want = (before.get("units") or {}).get(name) or {}, after["units"][name]
        for key in ("enabled", "active"):
            if have.get(key) != want.get(key):
                out.append(_record(host, name, key, want.get(key), have.get(key)))
    return out


def _sm_records(host, result):
    """The fabric's SMs (sm_info's ``gathered``, or the drift check's ``sm``) against
    ``expected`` (the plan's ``sm_expected``): exactly one MASTER, this SM in its role's state,
    at its priority (where the fabric reports one)."""
    expected = result.get("expected") or {}
    if "gathered" in result:
        sm = result["gathered"]
    elif "sm" in result:
        sm = result["sm"]
        if sm is None:
            return []
    else:
        return [_record(host, "subnet", "sm_info", "readable", result.get("msg"))]
    sm = sm or {}
    guid, role, priority = expected.get("guid"), expected.get("role"), expected.get("priority")
    out = []
    if sm.get("master_count") != 1:
        out.append(_record(host, "subnet", "masters", 1, sm.get("master_count")))
    mine = [p for p in sm.get("sm_ports") or [] if p.get("guid") == guid]
    if not mine:
        out.append(_record(host, guid, "state", role, "absent"))
    for port in mine:
        if port.get("state") != role:
            out.append(_record(host, guid, "state", role, port.get("state")))
        if priority is not None and port.get("priority") is not None and int(port["priority"]) != int(priority):
            out.append(_record(host, guid, "priority", int(priority), port["priority"]))
    return out


def records(host, results):
    """Drift records ``{host, area, object, setting, expected, actual}`` of ``[(resource,
    result)]``: ``node_files`` (check mode: ``after`` expected, ``before`` actual; opensm.conf
    key by key, a key never shown: "(hidden, differs)"), and ``sm_info`` (its result with
    ``expected``: the plan's ``sm_expected``). The role's verify and the drift check both name
    settings here. A skipped or failed module result has none (the run reports the failure)."""
    out = []
    for resource, result in results:
        if not isinstance(result, dict) or result.get("skipped"):
            continue
        if resource == "sm_info":
            out.extend(_sm_records(host, result))
        elif resource == "node_files" and not result.get("failed"):
            out.extend(_file_records(host, result))
    return out
