# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests from the printing code of flint query (Mellanox/mstflint flint/subcommands.cpp
QuerySubCommand::printInfo, displayFs3Uids, displayExpRomInfo) and mlxfwmanager --query
(mlxfwupdate/mlxfwmanager.cpp printDeviceInfoQuery): outputs they could print are read back,
near-misses are refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxfw

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings = hypothesis.given, hypothesis.settings
SET = settings(max_examples=40, deadline=None)

VERSION = st.tuples(st.integers(12, 32), st.integers(10, 45), st.integers(1000, 9999)).map(lambda v: "%d.%d.%d" % v)
HEX = st.integers(0, 2 ** 48 - 1)
PSID = st.from_regex(r"\A(?:MT|LNV|HP|DEL)_[0-9]{10}\Z")
ROMS = st.lists(st.sampled_from(["type=UEFI version=14.32.12 cpu=AMD64,AARCH64", "type=PXE version=3.7.201 cpu=AMD64",
                                 "type=UEFI Virtio net version=21.4.10 cpu=AMD64"]), max_size=3, unique=True)


def _kv(key, value):
    return "%-23s%s" % (key + ":", value)


@st.composite
def flint_outputs(draw):
    fw, psid, mac, roms = draw(VERSION), draw(PSID), draw(HEX), draw(ROMS)
    guid = "%06x0300%06x" % (mac >> 24, mac & 0xffffff)
    lines = [_kv("Image type", draw(st.sampled_from(["FS3", "FS4"]))), _kv("FW Version", fw),
             _kv("FW Release Date", "%d.%d.%d" % (draw(st.integers(1, 31)), draw(st.integers(1, 12)), draw(st.integers(2015, 2026)))),
             _kv("Product Version", fw)]
    for i, rom in enumerate(roms):
        lines.append(_kv("Rom Info", rom) if i == 0 else " " * 23 + rom)
    lines += [_kv("Description", "UID                GuidsNumber"), _kv("Base GUID", "%s        %d" % (guid, 16)),
              _kv("Base MAC", "%012x            %d" % (mac, 16)), _kv("Image VSD", "N/A"), _kv("Device VSD", "N/A"),
              _kv("PSID", psid), _kv("Security Attributes", draw(st.sampled_from(["N/A", "secure-fw", "secure-fw, dev"])))]
    return "\n".join(lines) + "\n", fw, psid, guid, "%012x" % mac, roms


@SET
@given(flint_outputs())
def test_flint_outputs_read_back(case):
    text, fw, psid, guid, mac, roms = case
    res = _mlxfw.parse_flint_query(text)
    assert res["fw_version"] == fw and res["psid"] == psid
    assert res["base_guid"] == guid and res["base_mac"] == mac
    assert res["rom_info"] == roms and res["image_vsd"] is None


@st.composite
def manager_outputs(draw):
    lines, want = ["Querying Mellanox devices firmware ...", ""], []
    for index in range(1, draw(st.integers(1, 3)) + 1):
        cur, avail, psid = draw(VERSION), draw(st.one_of(st.just("N/A"), VERSION)), draw(PSID)
        lines += ["Device #%d:" % index, "----------", "",
                  "  Device Type:      ConnectX7", "  Part Number:      MCX75310AAS-NEA_Ax",
                  "  Description:      NVIDIA ConnectX-7 HHHL Adapter card; 400GbE / NDR IB (default mode); Single-port OSFP",
                  "  PSID:             %s" % psid, "  PCI Device Name:  0000:%02x:00.0" % draw(st.integers(0, 255)),
                  "  Base GUID:        %016x" % draw(st.integers(0, 2 ** 64 - 1)),
                  "  Versions:         Current        Available     ",
                  "     %-12s   %-14s %-14s" % ("FW", cur, avail), "", "  Status:           %s"
                  % ("No matching image found" if avail == "N/A" else "Update required"), ""]
        want.append((index, psid, cur, None if avail == "N/A" else avail))
    return "\n".join(lines) + "\n", want


@SET
@given(manager_outputs())
def test_mlxfwmanager_outputs_read_back(case):
    text, want = case
    got = _mlxfw.parse_mlxfwmanager_query(text)
    assert [(d["index"], d["psid"], d["versions"]["FW"]["current"], d["versions"]["FW"]["available"]) for d in got] == want


@SET
@given(flint_outputs(), st.sampled_from(["**FW Version:            16.28.2006**", "random words without a colon",
                                         "FW Version 16.28.2006 (no colon)"]))
def test_flint_near_misses_are_refused(case, bad):
    lines = case[0].splitlines()
    lines.insert(2, bad)
    with pytest.raises(ValueError):
        _mlxfw.parse_flint_query("\n".join(lines) + "\n")


@pytest.mark.parametrize("text", ["", "\n", "-E- No devices found or specified, mst might be stopped, run 'mst start' to load MST modules\n",
                                  "hello world\n"])
def test_no_device_is_refused(text):
    with pytest.raises(ValueError):
        _mlxfw.parse_mlxfwmanager_query(text)
    with pytest.raises(ValueError):
        _mlxfw.parse_flint_query(text)


@SET
@given(manager_outputs(), st.data())
def test_mlxup_online_release_notes_do_not_change_the_query(case, data):
    """mlxup/mlxfwmanager --online: a release-notes block (displayReleaseNoteMFAs: title, 41 dashes,
    blank line, '  %s' with the server's free text) after a device that needs an update, then the
    summary line; the devices read are those of the query without it, the note text is kept."""
    text, want = case
    blocks = text.split("\nDevice #")
    note_lines = data.draw(st.lists(st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9 :;,./_()-]{0,60}\Z"), min_size=1, max_size=4))
    at = data.draw(st.integers(1, len(blocks) - 1))     # block 0 is the "Querying" preamble
    notes = ("Release notes for the available Firmware:\n" + "-" * 41 + "\n\n"
             + "".join("  %s\n" % line for line in note_lines))
    blocks[at] = blocks[at].rstrip("\n") + "\n\n" + notes
    noisy = "\nDevice #".join(blocks) + "Found 1 device(s) requiring firmware update. Please use -u flag to perform the update.\n"
    got = _mlxfw.parse_mlxfwmanager_query(noisy)
    assert [(d["index"], d["psid"], d["versions"]["FW"]["current"], d["versions"]["FW"]["available"]) for d in got] == want
    if at > 0:
        assert got[at - 1]["release_notes"] == "\n".join(line.strip() for line in note_lines).strip()
