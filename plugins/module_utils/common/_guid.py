# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one home of InfiniBand GUIDs (port, node, system image GUIDs; also the 64-bit SM and
M keys, which OpenSM prints the same way).

Canonical form: ``0x`` followed by 16 lower-case hex digits (what ``ibstat``, ``saquery``
and OpenSM's config print). Accepted input forms, one per tool that prints a GUID:

* ``0x`` + 1 to 16 hex digits, either case: ``ibstat`` and ``saquery`` (zero padded),
  ``sminfo`` (``PRIx64``, no padding: ``0x100001``), OpenSM config and logs;
* 4 colon-separated groups of 4 hex digits: sysfs ``node_guid`` / ``sys_image_guid``,
  ``ibv_devinfo`` (``a088:c203:00e3:142a``) and the interface ID of a GID;
* exactly 16 hex digits without ``0x``;
* a non-negative integer below 2**64 (a YAML ``0x...`` scalar arrives as an int).

Anything else raises ``ValueError("GUID '<value>': <reason>")``; callers decide what a
refused value means for them (a facts reader records None, a filter fails the task).
Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_PREFIXED = re.compile(r"0[xX](?P<hex>[0-9a-fA-F]{1,16})")
_COLON = re.compile(r"[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){3}")
_BARE = re.compile(r"[0-9a-fA-F]{16}")
_MAX = (1 << 64) - 1

FORMS = "0x and 1-16 hex digits, 16 hex digits, or 4 colon-separated groups of 4 hex digits"


def normalize_guid(value):
    """GUID in any accepted form -> ``0x`` + 16 lower-case hex digits; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError("GUID '%s': a boolean is not a GUID" % (value,))
    if isinstance(value, int):
        if not 0 <= value <= _MAX:
            raise ValueError("GUID '%s': outside 0 to 2**64-1" % (value,))
        return "0x%016x" % value
    if not isinstance(value, str):
        raise ValueError("GUID '%s': a %s is not a GUID (%s)" % (value, type(value).__name__, FORMS))
    text = value.strip()
    if not text:
        raise ValueError("GUID '%s': empty (%s)" % (value, FORMS))
    match = _PREFIXED.fullmatch(text)
    if match:
        return "0x%016x" % int(match.group("hex"), 16)
    if _COLON.fullmatch(text):
        return "0x" + text.replace(":", "").lower()
    if _BARE.fullmatch(text):
        return "0x" + text.lower()
    if text[:2].lower() == "0x" and re.fullmatch(r"[0-9a-fA-F]+", text[2:]):
        raise ValueError("GUID '%s': %d hex digits, a GUID has at most 16" % (value, len(text) - 2))
    raise ValueError("GUID '%s': not a 64-bit GUID (%s)" % (value, FORMS))


def is_guid(value):
    """True when ``normalize_guid`` accepts ``value``."""
    try:
        normalize_guid(value)
    except ValueError:
        return False
    return True
