# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``rdma link [show]`` parser.

Follows iproute2 ``rdma/link.c`` ``link_parse_cb`` and its ``link_print_*`` helpers
(github.com/iproute2/iproute2, v4.13 (7fc75744) to v7.1 (ee2a4a86)), samples
``tests/unit/fixtures/samples/rdma_link.txt``:

* iproute2 >= 5.5 (b0a688a5): ``link DEV/PORT `` then ``key value `` pairs, each with a
  trailing space: ``subnet_prefix``, ``lid``, ``sm_lid``, ``lmc`` (IB only), ``state``,
  ``physical_state``, ``netdev`` (absent without a netdev); ``-d`` adds ``netdev_index N``
  and, on a SECOND line, ``    caps: <A, B>`` (``"\\n    caps: <"``; with ``-oneline``,
  iproute2 >= 6.7, ``"\\    caps: <"`` on the same line).
* before 5.5: ``IDX/PORT: DEV/PORT: state ... physical_state ... netdev ...``.
* ``rdma -j link``: a JSON list of objects; since 5.5 ``ifname`` is the device and ``port``
  separate, before 5.5 ``ifname`` is ``DEV/PORT``; >= 6.7 ends each object with a newline.
* pasted copies may be indented or aligned with several spaces: tokens split on whitespace.
* errors (``Failed to open NETLINK_RDMA socket``, ``Wrong device name``) are not link lines.
* support-bundle annotations (``$ command``, ``[rc=N]``, ``[stdout]``, ``[stderr]``) are skipped.

Any other line, a key without its value, a non-numeric LID or a port seen twice raises
ValueError naming the line; a text without one link line is an error, never "no links".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

_NEW = re.compile(r"link (?P<dev>[^\s/]+)/(?P<port>\d+)(?P<rest>(?:\s.*)?)\Z")
_OLD = re.compile(r"\d+/\d+: (?P<dev>[^\s/]+)/(?P<port>\d+):(?P<rest>(?:\s.*)?)\Z")
_ANNOTATION = re.compile(r"\$ .*|\[rc=-?\d+\]\Z|\[(?:stdout|stderr)\]\Z")
_JSON = re.compile(r"\[\s*[{\]]")
_CAPS = re.compile(r"caps: <(?P<caps>[^<>]*)>\Z")
INT_KEYS = ("lid", "sm_lid", "lmc", "netdev_index")
KNOWN_KEYS = ("subnet_prefix", "state", "physical_state", "netdev") + INT_KEYS


def _caps(words):
    return [w.strip("<>,") for w in words if w.strip("<>,")]


def _new_link(device, port):
    return {"device": device, "port": port, "state": None, "physical_state": None, "netdev": None, "lid": None,
            "sm_lid": None, "lmc": None, "subnet_prefix": None, "netdev_index": None, "caps": None}


def parse_json(text, source="rdma -j link output"):
    """``rdma -j link`` (any iproute2 with -j) -> the same list as ``parse``."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError("%s: not JSON (%s): %r" % (source, exc, text[:120]))
    if not isinstance(data, list) or not data:
        raise ValueError("%s: not a non-empty JSON list of links (rdma -j link): %r" % (source, text[:120]))
    links, seen = [], set()
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("ifname"), str) or "port" not in entry:
            raise ValueError("%s: %r is not an rdma link object (ifname, port)" % (source, entry))
        device = entry["ifname"]
        if "/" in device:  # before iproute2 5.5: "DEV/PORT"
            device, dummy, port_text = device.partition("/")
            if port_text != str(entry["port"]):
                raise ValueError("%s: %r: ifname port and port differ" % (source, entry))
        link = _new_link(device, entry["port"])
        for key in ("state", "physical_state", "netdev", "subnet_prefix") + INT_KEYS:
            if key in entry:
                link[key] = entry[key]
        if "caps" in entry:
            link["caps"] = list(entry["caps"])
        for key in INT_KEYS + ("port",):
            if link[key] is not None and not isinstance(link[key], int):
                raise ValueError("%s: %r: %s is not a number" % (source, entry, key))
        if link["state"] is None or (link["device"], link["port"]) in seen:
            raise ValueError("%s: %r: %s" % (source, entry, "no state" if link["state"] is None else "appears twice"))
        seen.add((link["device"], link["port"]))
        links.append(link)
    return links


def parse(text, source="rdma link output"):
    """``rdma link [-d] [-o]`` text (or ``rdma -j link`` JSON) -> [{device, port, state,
    physical_state, netdev, lid, sm_lid, lmc, subnet_prefix, netdev_index, caps}] in print order."""
    if _JSON.match((text or "").lstrip()):
        return parse_json(text.strip(), source)
    links, seen = [], set()
    for number, line in enumerate((text or "").splitlines(), 1):
        stripped = line.strip()
        if not stripped or _ANNOTATION.match(stripped):
            continue
        caps = _CAPS.match(stripped)
        if caps and line[:1].isspace():
            if not links or links[-1]["caps"] is not None:
                raise ValueError("%s line %d %r: a 'caps:' line without its link line (rdma link -d prints it "
                                 "under the link)" % (source, number, stripped[:80]))
            links[-1]["caps"] = _caps(caps.group("caps").split())
            continue
        match = _NEW.match(stripped) or _OLD.match(stripped)
        if not match:
            raise ValueError("%s line %d %r: not an 'rdma link' line ('link DEV/PORT state ...')"
                             % (source, number, stripped[:80]))
        link = _new_link(match.group("dev"), int(match.group("port")))
        tokens = match.group("rest").split()
        while tokens:
            key = tokens.pop(0)
            if key == "\\" and tokens and tokens[0] == "caps:":  # -oneline: _SL_ is a backslash
                continue
            if key == "caps:":
                words = []
                while tokens:
                    words.append(tokens.pop(0))
                    if words[-1].endswith(">"):
                        break
                link["caps"] = _caps(words)
                continue
            if key not in KNOWN_KEYS or not tokens:
                raise ValueError("%s line %d %r: %s" % (
                    source, number, stripped[:80],
                    "unknown field %r" % key if key not in KNOWN_KEYS else "field %r without a value" % key))
            value = tokens.pop(0)
            if key in INT_KEYS:
                if not re.match(r"\d+\Z", value):
                    raise ValueError("%s line %d %r: %s=%r is not a number" % (source, number, stripped[:80], key, value))
                value = int(value)
            link[key] = value
        if link["state"] is None:
            raise ValueError("%s line %d %r: no 'state' field" % (source, number, stripped[:80]))
        if (link["device"], link["port"]) in seen:
            raise ValueError("%s line %d: %s/%d appears twice" % (source, number, link["device"], link["port"]))
        seen.add((link["device"], link["port"]))
        links.append(link)
    if not links:
        raise ValueError("%s: no 'link DEV/PORT' line in it (expected 'rdma link' output)" % source)
    return links
