# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The opensm area's drift records: the node_files result (opensm.conf key by key, a key shown as
"(hidden, differs)") and the fabric's SMs (sm_info: one master, this SM in its role's state at
its priority), named as the role's verify and the drift check both name them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.common import _secrets
from ansible_collections.rdma.fabric.plugins.module_utils.areas._opensm_node import FAMILIES


# ------------------------------------------------------------------ records
NAME = "opensm"
HIDDEN = "(hidden, differs)"
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
