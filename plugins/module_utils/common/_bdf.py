# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one home of PCI addresses (BDF: domain, bus, device, function).

Canonical form, as sysfs names ``/sys/bus/pci/devices/*``: ``dddd:bb:dd.f`` in lower case,
the domain at least 4 hex digits (``%04x``: VMD domains such as ``10000`` keep 5).
Accepted input forms:

* ``dddd:bb:dd.f`` (sysfs, ``lspci -D``), any case;
* ``dddddddd:bb:dd.f`` (nvidia-smi's 8-digit domain, ``00000000:1A:00.0``);
* ``bb:dd.f`` (``lspci`` without ``-D``): domain 0;
* the kernel's own ``sscanf("%x:%x:%x.%x")`` spelling with 1-digit bus or device
  (``0:1a:0.0``), as ``pci=`` arguments are written.

Device numbers are 0-0x1f and functions 0-7 (PCI: 32 devices of 8 functions on a bus);
anything else raises ``ValueError("BDF '<value>': <reason>")``. Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# A regex fragment for BDFs inside a tool's line (lspci headers, ibdev2netdev -v); the
# match is then handed to normalize_bdf, which checks the ranges.
BDF_TEXT = r"(?:[0-9a-fA-F]{1,8}:)?[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}\.[0-7]"

_BDF = re.compile(r"(?:(?P<domain>[0-9a-fA-F]{1,8}):)?(?P<bus>[0-9a-fA-F]{1,2}):"
                  r"(?P<dev>[0-9a-fA-F]{1,2})\.(?P<fn>[0-9a-fA-F]+)")
_DEVFN = re.compile(r"(?P<dev>[0-9a-fA-F]{1,2})\.(?P<fn>[0-9a-fA-F]+)")
FORM = "[<domain>:]<bus>:<device>.<function> in hex, e.g. 0000:17:00.0"


def _device_function(value, dev, fn):
    device, function = int(dev, 16), int(fn, 16)
    if device > 0x1f:
        raise ValueError("BDF '%s': device number %s is above 1f" % (value, dev))
    if function > 7:
        raise ValueError("BDF '%s': function number %s is above 7" % (value, fn))
    return device, function


def parse_bdf(value):
    """BDF text -> (domain, bus, device, function) integers; ValueError naming the value."""
    if not isinstance(value, str):
        raise ValueError("BDF '%s': a %s is not a PCI address (%s)" % (value, type(value).__name__, FORM))
    match = _BDF.fullmatch(value.strip())
    if not match:
        raise ValueError("BDF '%s': not a PCI address (%s)" % (value, FORM))
    device, function = _device_function(value, match.group("dev"), match.group("fn"))
    return int(match.group("domain") or "0", 16), int(match.group("bus"), 16), device, function


def parse_devfn(value):
    """``<device>.<function>`` (a step of a kernel ``pci=`` device path) -> (device, function)."""
    match = _DEVFN.fullmatch(value.strip()) if isinstance(value, str) else None
    if not match:
        raise ValueError("BDF '%s': not a <device>.<function> pair (e.g. 00.0)" % (value,))
    return _device_function(value, match.group("dev"), match.group("fn"))


def format_bdf(domain, bus, device, function):
    return "%04x:%02x:%02x.%x" % (domain, bus, device, function)


def normalize_bdf(value):
    """Any accepted form -> ``dddd:bb:dd.f`` lower case; ValueError naming the value."""
    return format_bdf(*parse_bdf(value))


def is_bdf(value):
    """True when ``value`` is a PCI address in an accepted form (the whole string)."""
    try:
        parse_bdf(value)
    except ValueError:
        return False
    return True
