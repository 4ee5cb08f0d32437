# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_bdf, the one PCI address normaliser: the forms lspci, ibdev2netdev -v, sysfs and
nvidia-smi print (samples lspci_pcie.txt, ibdev2netdev.txt) and every refusal with its message."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import _bdf
from ansible_collections.rdma.fabric.tests.unit import samples

LSPCI = samples.load("lspci_pcie.txt")
IB2N = samples.load("ibdev2netdev.txt")


def _headers(sample_set, pattern):
    out = []
    for sample_id, sample in sorted(sample_set.items()):
        out.extend((sample_id, m) for m in re.findall(pattern, sample.raw, re.M))
    assert out
    return out


@pytest.mark.parametrize("sample_id, text", _headers(LSPCI, r"^([0-9a-fA-F:]+:[0-9a-fA-F]{2}\.[0-7]) "))
def test_lspci_header_addresses(sample_id, text):
    # lspci without -D omits the domain: domain 0
    want = text if text.count(":") == 2 else "0000:" + text
    assert _bdf.normalize_bdf(text) == want.lower()


@pytest.mark.parametrize("sample_id, text", _headers(IB2N, r"^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) "))
def test_ibdev2netdev_verbose_addresses_are_canonical(sample_id, text):
    assert _bdf.normalize_bdf(text) == text


@pytest.mark.parametrize("text, want", [
    ("0000:1a:00.0", "0000:1a:00.0"),      # sysfs /sys/bus/pci/devices
    ("0000:1A:00.0", "0000:1a:00.0"),
    ("00000000:1A:00.0", "0000:1a:00.0"),  # nvidia-smi --query-gpu=pci.bus_id
    ("1a:00.0", "0000:1a:00.0"),           # lspci without -D
    ("1b:1f.7", "0000:1b:1f.7"),
    ("0001:1a:00.0", "0001:1a:00.0"),
    ("1:1a:00.0", "0001:1a:00.0"),
    ("10000:e1:00.0", "10000:e1:00.0"),    # VMD domain, 5 digits in sysfs
    ("0:1a:0.0", "0000:1a:00.0"),          # the kernel's sscanf("%x:%x:%x.%x") spelling
    (" 0000:1a:00.0\n", "0000:1a:00.0"),
])
def test_accepted_forms(text, want):
    assert _bdf.normalize_bdf(text) == want
    assert _bdf.is_bdf(text)


def test_parse_bdf_gives_integers():
    assert _bdf.parse_bdf("0000:17:01.2") == (0, 0x17, 1, 2)
    assert _bdf.format_bdf(0, 0x17, 1, 2) == "0000:17:01.2"


@pytest.mark.parametrize("value, message", [
    ("1a:20.0", "BDF '1a:20.0': device number 20 is above 1f"),
    ("0000:1a:00.8", "BDF '0000:1a:00.8': function number 8 is above 7"),
    ("1a:00", "BDF '1a:00': not a PCI address ([<domain>:]<bus>:<device>.<function> in hex, e.g. 0000:17:00.0)"),
    ("", "BDF '': not a PCI address"),
    ("0000:1a:00.0/00.0", "BDF '0000:1a:00.0/00.0': not a PCI address"),
    ("g0:00.0", "BDF 'g0:00.0': not a PCI address"),
    ("000000000:1a:00.0", "BDF '000000000:1a:00.0': not a PCI address"),
    ("0000:1a:00.0\nx", "not a PCI address"),
    ("pci0000:16", "BDF 'pci0000:16': not a PCI address"),    # a sysfs root bus directory
    (None, "BDF 'None': a NoneType is not a PCI address"),
    (26, "BDF '26': a int is not a PCI address"),
])
def test_refused_with_the_value_named(value, message):
    with pytest.raises(ValueError) as exc:
        _bdf.normalize_bdf(value)
    assert message in str(exc.value)
    assert not _bdf.is_bdf(value)


def test_devfn_steps():
    assert _bdf.parse_devfn("1f.7") == (0x1f, 7)
    with pytest.raises(ValueError, match=r"BDF '20.0': device number 20 is above 1f"):
        _bdf.parse_devfn("20.0")
    with pytest.raises(ValueError, match=r"BDF '00': not a <device>.<function> pair"):
        _bdf.parse_devfn("00")


def test_bdf_text_fragment_finds_what_normalize_accepts():
    line = "0000:02:00.5 mlx5_2 (MT4116 - NA)  fw 12.23.1020 port 1 (DOWN  ) ==> ib2 (Down)"
    match = re.match("(" + _bdf.BDF_TEXT + r")\s", line)
    assert _bdf.normalize_bdf(match.group(1)) == "0000:02:00.5"
