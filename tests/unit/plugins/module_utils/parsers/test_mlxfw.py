# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""flint query and mlxfwmanager --query parsers: real samples (flint.txt, mlxfwmanager.txt)
pinned, error outputs, outputs generated from the printing formats (hypothesis) read back,
near-misses refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxfw as fw
from ansible_collections.rdma.fabric.tests.unit import samples

FLINT = samples.load("flint.txt")
MGR = samples.load("mlxfwmanager.txt")
FAST = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


def test_samples_present_and_cited():
    assert len(FLINT) >= 5 and len(MGR) >= 5
    for sample in list(FLINT.values()) + list(MGR.values()):
        assert "source: " in sample.meta and "kind: " in sample.meta, sample.id


def test_flint_bluefield_secure_fw():
    r = fw.parse_flint_query(FLINT["FLINT-LSHCA54-BLUEFIELD2-SECUREFW"].raw)
    assert (r["image_type"], r["fw_version"], r["fw_release_date"], r["product_version"]) == (
        "FS4", "24.33.1048", "29.4.2022", "24.33.1048")
    assert r["rom_info"] == ["type=UEFI Virtio net version=21.2.10 cpu=AMD64", "type=UEFI Virtio blk version=22.2.10 cpu=AMD64",
                             "type=UEFI version=14.26.17 cpu=AMD64,AARCH64", "type=PXE version=3.6.502 cpu=AMD64"]
    assert (r["base_guid"], r["base_mac"]) == ("08c0eb030053eaec", "08c0eb53eaec")
    assert (r["image_vsd"], r["device_vsd"], r["psid"], r["security_attributes"]) == (None, None, "MT_0000000723", "secure-fw")
    assert r["description"] is None and r["errors"] == []


def test_flint_cx4_fs3():
    r = fw.parse_flint_query(FLINT["FLINT-TERRENCEMIAO-CX4-FS3"].raw)
    assert (r["image_type"], r["fw_version"], r["psid"], r["security_attributes"]) == ("FS3", "12.28.2006", "LNV2180110032", "N/A")
    assert r["base_guid"] == "ec0d9a030076eae2" and r["base_mac"] == "ec0d9a76eae2"
    assert r["rom_info"] == ["type=UEFI version=14.21.17 cpu=AMD64", "type=PXE version=3.6.102 cpu=AMD64"]
    assert r["other"]["Base GUID"] == "ec0d9a030076eae2        4"


def test_flint_markdown_refused_then_read():
    raw = FLINT["FLINT-INNOVA2-7-CX5-MARKDOWN"].raw
    with pytest.raises(ValueError, match=r"\*\*FW Version"):
        fw.parse_flint_query(raw)
    r = fw.parse_flint_query(raw.replace("**", ""))
    assert r["fw_version"] == "16.28.2006" and r["psid"] == "MT_0000000158" and r["base_guid"] == "e41d2d0300e70f8e"


def test_flint_orig_base_fragment():
    r = fw.parse_flint_query(FLINT["FLINT-MSTFLINT-PR917-ORIG-BASE"].raw)
    assert r["base_guid"] is None and r["fw_version"] is None
    assert r["other"] == {"Orig Base GUID": "b8599f030023f954        1024", "Orig Base MAC": "b8599f23f954            1024"}


def test_flint_q_full():
    r = fw.parse_flint_query(FLINT["FLINT-RECON-QFULL-CX7"].raw)
    assert r["description"].startswith("NVIDIA ConnectX-7 HHHL Adapter Card;")
    assert r["other"]["Part Number"] == "MCX755106AS-HEA_Ax" and r["other"]["Default Update Method"] == "fw_ctrl"
    assert r["other"]["Orig PSID"] == "N/A" and r["other"]["Secure Boot Capable"] == "Enabled"
    assert r["psid"] == "MT_0000000834" and r["base_mac"] == "a088c2123456" and len(r["rom_info"]) == 2


def test_flint_cannot_open():
    with pytest.raises(ValueError, match="Cannot open Device: 0000:99:00.0"):
        fw.parse_flint_query(FLINT["FLINT-RECON-CANNOT-OPEN"].raw)


def test_mgr_cx3pro_port_guids():
    (d,) = fw.parse_mlxfwmanager_query(MGR["MLXFWMANAGER-SKYAO-CX3PRO-PORTGUIDS"].raw)
    assert (d["device_type"], d["part_number"], d["psid"], d["pci_device_name"], d["status"]) == (
        "ConnectX3Pro", "764285-B21_Ax", "HP_1380110017", "mt4103_pci_cr0", "Up to date")
    assert d["base_mac"] is None and d["base_guid"] is None
    assert d["other"] == {"Port1 GUID": "24be05ffffbd0801", "Port2 GUID": "24be05ffffbd0802"}
    assert d["versions"] == {
        "FW": {"current": "2.42.5700", "available": "2.42.5700"}, "CLP": {"current": "8025", "available": "8025"},
        "FW (Running)": {"current": "2.42.5016", "available": None}, "PXE": {"current": "3.4.0754", "available": "3.4.0754"},
        "UEFI": {"current": "14.11.0049", "available": "14.11.0049"}}


def test_mgr_mlxup_update_required():
    (d,) = fw.parse_mlxfwmanager_query(MGR["MLXFWMANAGER-EMPOVIT-MLXUP-CX6LX-UPDATE"].raw)
    assert d["description"].endswith("Secure Boot; No Crypto;")
    assert (d["base_guid"], d["base_mac"], d["pci_device_name"]) == ("e8ebd3030070cf12", "e8ebd370cf12", "0002:01:00.0")
    assert d["versions"]["FW"] == {"current": "26.33.1048", "available": "26.43.1014"}
    assert d["versions"]["UEFI"] == {"current": "14.26.0017", "available": "14.36.0016"}
    assert d["status"] == "Update required" and d["index"] == 1


def test_mgr_no_matching_image_device4():
    (d,) = fw.parse_mlxfwmanager_query(MGR["MLXFWMANAGER-INNOVA2-5-MLXUP-NOMATCH"].raw)
    assert d["index"] == 4 and d["base_guid"] is None and d["base_mac"] is None
    assert d["versions"] == {"FW": {"current": "16.24.4020", "available": None}}
    assert d["status"] == "No matching image found" and d["pci_device_name"] == "pci0:6:0:0"


def test_mgr_two_devices():
    devs = fw.parse_mlxfwmanager_query(MGR["MLXFWMANAGER-RECON-TWO-DEVICES-VIRTIO-RUNNING"].raw)
    assert [d["device_type"] for d in devs] == ["ConnectX7", "BlueField3"]
    assert devs[0]["base_guid"] == "9c63c00300abe882" and devs[0]["base_mac"] is None
    assert devs[0]["versions"]["UEFI Virtio net"] == {"current": "21.4.0010", "available": None}
    assert devs[1]["versions"]["FW (Running)"] == {"current": "32.38.1002", "available": None}
    assert devs[1]["versions"]["FW"]["available"] == "32.41.1000" and devs[1]["status"] == "Update required"


def test_mgr_no_devices():
    with pytest.raises(ValueError, match="No devices found"):
        fw.parse_mlxfwmanager_query(MGR["MLXFWMANAGER-RECON-NO-DEVICES"].raw)


@pytest.mark.parametrize("text", ["", "\n", "hello\n", "FW Version 16.28.2006\n", "   indented: text\n"])
def test_flint_refused(text):
    with pytest.raises(ValueError):
        fw.parse_flint_query(text)


@pytest.mark.parametrize("text", [
    "", "hello\n", "Device #1:\n----------\n\n",
    "Device #1:\n  Device Type:      ConnectX5\n  Versions:         Currnt        Available\n",
    "Device #1:\n  Device Type:      ConnectX5\n  Versions:         Current        Available\n     FW\n",
    "Device #1:\n  Device Type:      ConnectX5\nrandom words here\n",
])
def test_mgr_refused(text):
    with pytest.raises(ValueError):
        fw.parse_mlxfwmanager_query(text)


# ---- generated outputs ----

HEX = st.text(alphabet="0123456789abcdef", min_size=12, max_size=12)
VER = st.from_regex(r"\A\d{1,2}\.\d{1,2}\.\d{4}\Z")
TYPE = st.sampled_from(["FS3", "FS4", "FS5"])
ROM = st.builds(lambda t, v: "type=%s version=%s cpu=AMD64" % (t, v), st.sampled_from(["UEFI", "PXE", "UEFI Virtio net"]), VER)


@FAST
@given(TYPE, VER, st.lists(ROM, min_size=0, max_size=4), HEX, st.sampled_from(["N/A", "secure-fw", "secure-fw, dev"]),
       st.from_regex(r"\A[A-Z]{2,3}_?\d{10}\Z"), st.booleans())
def test_flint_generated(img, ver, roms, mac, sec, psid, with_desc):
    lines = ["%-23s%s" % ("Image type:", img), "%-23s%s" % ("FW Version:", ver), "%-23s%s" % ("FW Release Date:", "1.2.2024")]
    if with_desc:
        lines.append("%-23s%s" % ("Description:", "Some adapter; 2 ports; PCIe"))
    for i, rom in enumerate(roms):
        lines.append(("%-23s" % ("Rom Info:" if i == 0 else "")) + rom)
    lines += ["Description:           UID                GuidsNumber",
              "%-18s     %016s        %d" % ("Base GUID:", mac[:6] + "0300" + mac[6:], 8),
              "%-18s     %012s            %d" % ("Base MAC:", mac, 8),
              "%-23s%s" % ("Image VSD:", "N/A"), "%-23s%s" % ("Device VSD:", "N/A"), "%-23s%s" % ("PSID:", psid),
              "%-23s%s" % ("Security Attributes:", sec)]
    r = fw.parse_flint_query("\n".join(lines) + "\n")
    assert (r["image_type"], r["fw_version"], r["psid"], r["security_attributes"], r["base_mac"]) == (img, ver, psid, sec, mac)
    assert r["base_guid"] == mac[:6] + "0300" + mac[6:] and r["rom_info"] == roms
    assert r["description"] == ("Some adapter; 2 ports; PCIe" if with_desc else None)


NAME = st.sampled_from(["PXE", "UEFI", "CLP", "FW (Running)", "UEFI Virtio blk", "UEFI Virtio net"])
AVAIL = st.one_of(VER, st.just("N/A"))


def _mgr_device(i, typ, psid, fwv, rows, status):
    s = "Device #%d:\n----------\n\n  Device Type:      %s\n  Part Number:      X_Ax\n  Description:      d; e\n" % (i, typ)
    s += "  PSID:             %s\n  PCI Device Name:  0000:%02x:00.0\n  Base MAC:         0c42a1000000\n" % (psid, i)
    s += "  Versions:         %-14s %-14s\n     FW             %-14s %-14s\n" % ("Current", "Available", fwv[0], fwv[1])
    for name, cur, av in rows:
        s += "     %-12s   %-14s %-14s\n" % (name, cur, av)
    return s + "\n  Status:           %s\n\n" % status


@FAST
@given(st.lists(st.tuples(st.sampled_from(["ConnectX5", "ConnectX7", "BlueField3"]), st.from_regex(r"\AMT_\d{10}\Z"),
                          st.tuples(VER, AVAIL), st.lists(st.tuples(NAME, VER, AVAIL), max_size=4, unique_by=lambda r: r[0]),
                          st.sampled_from(["Up to date", "Update required", "No matching image found"])),
                min_size=1, max_size=4))
def test_mgr_generated(devices):
    text = "Querying Mellanox devices firmware ...\n\n" + "".join(
        _mgr_device(i + 1, *d) for i, d in enumerate(devices))
    parsed = fw.parse_mlxfwmanager_query(text)
    assert len(parsed) == len(devices)
    for (typ, psid, fwv, rows, status), d in zip(devices, parsed):
        assert (d["device_type"], d["psid"], d["status"], d["base_mac"]) == (typ, psid, status, "0c42a1000000")

        def na(value):
            return None if value == "N/A" else value
        assert d["versions"]["FW"] == {"current": fwv[0], "available": na(fwv[1])}
        for name, cur, av in rows:
            assert d["versions"][name] == {"current": cur, "available": na(av)}


@FAST
@given(st.text(max_size=200))
def test_any_text_gives_result_or_clear_error(text):
    for function in (fw.parse_flint_query, fw.parse_mlxfwmanager_query):
        try:
            function(text)
        except ValueError as exc:
            assert str(exc)


# ------------------------------------------------------------ mlxup --online (issue #39)

def test_mlxup_online_release_notes_are_read():
    from ansible_collections.rdma.fabric.tests.unit import samples as _samples
    raw = _samples.load("mlxfwmanager.txt")["MLXFWMANAGER-RECON-MLXUP-ONLINE-RELEASE-NOTES"].raw
    devices = _mlxfw_mod().parse_mlxfwmanager_query(raw)
    assert len(devices) == 1 and devices[0]["status"] == "Update required"
    assert devices[0]["versions"]["FW"] == {"current": "26.33.1048", "available": "26.43.1014"}
    assert devices[0]["release_notes"].splitlines() == [
        "https://docs.nvidia.com/networking/display/connectx6lxfirmwarev26431014",
        "Security, stability and feature fixes; see the release notes."]


def test_release_notes_end_at_the_next_device():
    text = ("Querying Mellanox devices firmware ...\n\nDevice #1:\n----------\n\n  Device Type:      ConnectX7\n"
            "  PSID:             MT_0000000834\n  Versions:         Current        Available\n"
            "     FW             28.39.1002     28.43.1014\n\n  Status:           Update required\n\n"
            "Release notes for the available Firmware:\n-----------------------------------------\n\n  N/A\n"
            "Device #2:\n----------\n\n  Device Type:      ConnectX7\n  PSID:             MT_0000000834\n"
            "  Versions:         Current        Available\n     FW             28.43.1014     28.43.1014\n\n"
            "  Status:           Up to date\n\n"
            "Found 1 device(s) requiring firmware update. Please use -u flag to perform the update.\n")
    devices = _mlxfw_mod().parse_mlxfwmanager_query(text)
    assert [d["release_notes"] for d in devices] == ["N/A", None]
    assert devices[1]["status"] == "Up to date"


def test_release_notes_without_a_device_are_refused():
    import pytest as _pytest
    with _pytest.raises(ValueError):
        _mlxfw_mod().parse_mlxfwmanager_query("Release notes for the available Firmware:\n  text\n")


def _mlxfw_mod():
    from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxfw
    return _mlxfw
