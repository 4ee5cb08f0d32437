# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_guid, the one GUID normaliser: every form the tools print (samples sminfo.txt, saquery.txt,
ibstat.txt, ibv_devinfo.txt) and every refusal with its message."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common._guid import is_guid, normalize_guid
from ansible_collections.rdma.fabric.tests.unit import samples

SMINFO = samples.load("sminfo.txt")
SAQUERY = samples.load("saquery.txt")
IBSTAT = samples.load("ibstat.txt")
DEVINFO = samples.load("ibv_devinfo.txt")


def _found(sample_set, pattern):
    """Every GUID text ``pattern`` (one group) finds in a samples file, with the sample id."""
    out = []
    for sample_id, sample in sorted(sample_set.items()):
        out.extend((sample_id, m) for m in re.findall(pattern, sample.raw))
    assert out, "pattern %r found nothing: the samples moved" % pattern
    return out


def test_sminfo_unpadded_guids():
    # sminfo prints PRIx64: 0x100001 is port GUID 0x0000000000100001 of the simulated SM
    found = {text for dummy, text in _found(SMINFO, r"sm guid (0x[0-9a-fA-F]+),")}
    assert {"0x100001", "0x100007"} <= found      # the ibsim runs; public pastes add their own
    for text in found:
        assert len(normalize_guid(text)) == 18 and int(normalize_guid(text), 16) == int(text, 16)
    assert normalize_guid("0x100001") == "0x0000000000100001"
    assert normalize_guid("0x100007") == "0x0000000000100007"


@pytest.mark.parametrize("sample_id, text", _found(SAQUERY, r"(?:GUID|guid)\.+(0x[0-9a-fA-F]+)"))
def test_saquery_zero_padded_guids_are_already_canonical(sample_id, text):
    assert normalize_guid(text) == text.lower()


@pytest.mark.parametrize("sample_id, text", _found(IBSTAT, r"(?:Node|System image|Port) GUID: (\S+)"))
def test_ibstat_guids_are_already_canonical(sample_id, text):
    assert len(text) == 18
    assert normalize_guid(text) == text.lower()


@pytest.mark.parametrize("sample_id, text", _found(DEVINFO, r"(?:node_guid|sys_image_guid):\s+([0-9a-f:]{19})"))
def test_ibv_devinfo_and_sysfs_colon_groups(sample_id, text):
    assert normalize_guid(text) == "0x" + text.replace(":", "")


@pytest.mark.parametrize("text, want", [
    ("a088:c203:00e3:142a", "0xa088c20300e3142a"),        # sysfs node_guid, ibv_devinfo
    ("A088:C203:00E3:142A", "0xa088c20300e3142a"),
    ("0XA088C20300DA6342", "0xa088c20300da6342"),
    ("0x0", "0x0000000000000000"),
    ("0xffffffffffffffff", "0xffffffffffffffff"),
    ("0000000000100001", "0x0000000000100001"),           # 16 digits without 0x
    (" 0x100001\n", "0x0000000000100001"),                 # a sysfs read with its newline
    (0x100001, "0x0000000000100001"),                      # YAML reads an unquoted 0x100001 as an int
    ((1 << 64) - 1, "0xffffffffffffffff"),
])
def test_accepted_forms(text, want):
    assert normalize_guid(text) == want
    assert is_guid(text)


@pytest.mark.parametrize("value, message", [
    ("0x10000000000000000", "GUID '0x10000000000000000': 17 hex digits, a GUID has at most 16"),
    ("0x", "GUID '0x': not a 64-bit GUID (0x and 1-16 hex digits, 16 hex digits, or 4 colon-separated groups"),
    ("", "GUID '': empty"),
    ("   ", "GUID '   ': empty"),
    ("0xZZ", "GUID '0xZZ': not a 64-bit GUID"),
    ("guid", "GUID 'guid': not a 64-bit GUID"),
    ("100007", "GUID '100007': not a 64-bit GUID"),           # bare but not 16 digits: ambiguous
    ("00000000001000011", "GUID '00000000001000011': not a 64-bit GUID"),
    ("a088:c203:00e3", "GUID 'a088:c203:00e3': not a 64-bit GUID"),
    ("a088:c203:00e3:142a:0001", "GUID 'a088:c203:00e3:142a:0001': not a 64-bit GUID"),
    ("0x 100001", "GUID '0x 100001': not a 64-bit GUID"),
    ("0x100001\nx", "not a 64-bit GUID"),
    (-1, "GUID '-1': outside 0 to 2**64-1"),
    (1 << 64, "GUID '18446744073709551616': outside 0 to 2**64-1"),
    (True, "GUID 'True': a boolean is not a GUID"),
    (None, "GUID 'None': a NoneType is not a GUID"),
    (1.5, "GUID '1.5': a float is not a GUID"),
])
def test_refused_with_the_value_named(value, message):
    with pytest.raises(ValueError) as exc:
        normalize_guid(value)
    assert message in str(exc.value)
    assert not is_guid(value)
