# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``rdma link [show]`` parser (iproute2 rdma/link.c, samples ``rdma_link.txt``).

* iproute2 >= 5.5: ``link DEV/PORT `` then ``key value `` pairs, each with a trailing
  space: ``subnet_prefix``, ``lid``, ``sm_lid``, ``lmc`` (IB only), ``state``,
  ``physical_state``, ``netdev`` (absent without a netdev); ``-d`` adds ``netdev_index N``
  and ``caps: <A, B>``.
* before 5.5: ``IDX/PORT: DEV/PORT: state ... physical_state ... netdev ...``.
* pasted copies may be indented or aligned with several spaces: tokens split on whitespace.
* errors (``Failed to open NETLINK_RDMA socket``, ``Wrong device name``) are not link lines.
* support-bundle annotations (``$ command``, ``[rc=N]``) are skipped.

Any other line, a key without its value, a non-numeric LID or a port seen twice raises
ValueError naming the line; a text without one link line is an error, never "no links".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NEW = re.compile(r"link (?P<dev>[^\s/]+)/(?P<port>\d+)(?P<rest>(?:\s.*)?)\Z")
_OLD = re.compile(r"\d+/\d+: (?P<dev>[^\s/]+)/(?P<port>\d+):(?P<rest>(?:\s.*)?)\Z")
_ANNOTATION = re.compile(r"\$ .*|\[rc=-?\d+\]\Z")
INT_KEYS = ("lid", "sm_lid", "lmc", "netdev_index")
KNOWN_KEYS = ("subnet_prefix", "state", "physical_state", "netdev") + INT_KEYS


def parse(text, source="rdma link output"):
    """``rdma link`` text -> [{device, port, state, physical_state, netdev, lid, sm_lid,
    lmc, subnet_prefix, caps}] in print order."""
    links, seen = [], set()
    for number, line in enumerate((text or "").splitlines(), 1):
        stripped = line.strip()
        if not stripped or _ANNOTATION.match(stripped):
            continue
        match = _NEW.match(stripped) or _OLD.match(stripped)
        if not match:
            raise ValueError("%s line %d %r: not an 'rdma link' line ('link DEV/PORT state ...')"
                             % (source, number, stripped[:80]))
        link = {"device": match.group("dev"), "port": int(match.group("port")), "state": None,
                "physical_state": None, "netdev": None, "lid": None, "sm_lid": None, "lmc": None,
                "subnet_prefix": None, "netdev_index": None, "caps": None}
        tokens = match.group("rest").split()
        while tokens:
            key = tokens.pop(0)
            if key == "caps:":
                words = []
                while tokens:
                    words.append(tokens.pop(0))
                    if words[-1].endswith(">"):
                        break
                link["caps"] = [w.strip("<>,") for w in words if w.strip("<>,")]
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
