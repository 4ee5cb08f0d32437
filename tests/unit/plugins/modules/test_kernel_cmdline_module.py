# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""main() of rdma.fabric.kernel_cmdline (on the resource engine): grub (tmp copies of fixtures/grub) and grubby
with a fake run_command."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil

import pytest

from ansible_collections.rdma.fabric.plugins.modules import kernel_cmdline
from ansible_collections.rdma.fabric.tests.unit import helpers

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "grub")
DEV_LIST = "disable_acs_redir=0000:17:00.0;0000:18:00.0"
ARGS = [{"name": "iommu", "value": "pt"}, {"name": "pci", "value": DEV_LIST}]


def run_main(capsys, args):
    return helpers.run_main_json(capsys, kernel_cmdline.main, args)


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A host with the Ubuntu 22.04 defaults file; records every command run."""
    shutil.copy(os.path.join(FIX, "ubuntu2204", "grub"), str(tmp_path / "grub"))
    (tmp_path / "cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=1c2d ro quiet splash\n")
    calls = []

    def fake_run(self, argv, **kwargs):
        if os.path.basename(str(argv[0])) not in ("lsattr", "chattr"):     # backup_local() copies attributes
            calls.append(list(argv))
        return 0, "", ""

    monkeypatch.setattr(kernel_cmdline.AnsibleModule, "run_command", fake_run)
    monkeypatch.setattr(kernel_cmdline.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **kw: None if name == "grubby" else "/usr/sbin/" + name)
    return tmp_path, calls


def grub_args(tmp_path, **extra):
    args = {"arguments": ARGS, "grub_file": str(tmp_path / "grub"), "proc_cmdline": str(tmp_path / "cmdline")}
    args.update(extra)
    return args


def test_grub_change_then_idempotent(capsys, host):
    tmp_path, calls = host
    rc, result = run_main(capsys, grub_args(tmp_path, _ansible_diff=True))
    assert rc == 0, result
    assert result["changed"] is True
    assert result["backend"] == "grub"
    assert result["commands"] == ["write %s" % (tmp_path / "grub"), "/usr/sbin/update-grub"]
    assert calls == [["/usr/sbin/update-grub"]]
    assert result["before"] == {"arguments": []}
    assert result["after"] == {"arguments": ["iommu=pt", "pci=" + DEV_LIST]}      # read back from the file
    assert result["changed_files"] == [str(tmp_path / "grub")]
    assert result["reboot_required"] is True
    assert result["running"] == [dict(a, state="present") for a in ARGS]
    assert result["diff"] == {"before": {"arguments": []}, "after": result["after"],
                              "before_header": "kernel_cmdline (before)", "after_header": "kernel_cmdline (after)"}
    assert 'GRUB_CMDLINE_LINUX="iommu=pt \\"pci=%s\\""\n' % DEV_LIST in (tmp_path / "grub").read_text()
    rc, again = run_main(capsys, grub_args(tmp_path))
    assert (again["changed"], again["commands"], calls) == (False, [], [["/usr/sbin/update-grub"]])
    assert again["reboot_required"] is True          # still not booted with them


def test_grub_check_mode_writes_nothing(capsys, host):
    tmp_path, calls = host
    original = (tmp_path / "grub").read_text()
    rc, result = run_main(capsys, grub_args(tmp_path, _ansible_check_mode=True))
    assert result["changed"] is True
    assert result["changed_files"] == [str(tmp_path / "grub")]
    assert result["commands"] == ["write %s" % (tmp_path / "grub"), "/usr/sbin/update-grub"]
    assert result["after"] == {"arguments": ["iommu=pt", "pci=" + DEV_LIST]}      # predicted
    assert calls == []
    assert (tmp_path / "grub").read_text() == original


def test_reboot_not_required_when_running_has_them(capsys, host):
    tmp_path, dummy = host
    (tmp_path / "cmdline").write_text("BOOT_IMAGE=/vmlinuz ro iommu=pt pci=%s\n" % DEV_LIST)
    rc, result = run_main(capsys, grub_args(tmp_path))
    assert result["reboot_required"] is False
    assert result["running"] == []


def test_update_command_override_and_backup(capsys, host):
    tmp_path, calls = host
    rc, result = run_main(capsys, grub_args(tmp_path, update_command=["grub-mkconfig", "-o", "/boot/grub/grub.cfg"],
                                            backup=True))
    # backup_local() copies attributes with lsattr/chattr through run_command too
    assert [c for c in calls if "lsattr" not in c[0]] == [["grub-mkconfig", "-o", "/boot/grub/grub.cfg"]]
    assert len(result["backup_files"]) == 1 and os.path.exists(result["backup_files"][0])


def test_update_failure_puts_the_previous_file_back_and_keeps_the_backup(capsys, host, monkeypatch):
    tmp_path, dummy = host
    original = (tmp_path / "grub").read_text()

    def fake_run(self, argv, **kw):
        if "lsattr" in argv[0] or "chattr" in argv[0]:
            return 0, "", ""
        return 1, "", "/usr/sbin/grub-probe: error: failed to get canonical path"
    monkeypatch.setattr(kernel_cmdline.AnsibleModule, "run_command", fake_run)
    rc, result = run_main(capsys, grub_args(tmp_path))
    assert rc == 1
    grub = str(tmp_path / "grub")
    assert ("Applied: write %s. Failed: /usr/sbin/update-grub (regenerating grub.cfg failed (" % grub) in result["msg"]
    assert "canonical path" in result["msg"]
    assert "the previous %s put back in place, the boot configuration is unchanged" % grub in result["msg"]
    assert len(result["backup_files"]) == 1 and "backup kept: %s" % result["backup_files"][0] in result["msg"]
    with open(result["backup_files"][0]) as handle:
        assert handle.read() == original
    assert (tmp_path / "grub").read_text() == original
    assert result["applied"] == ["write %s" % grub]
    assert result["failed_command"] == "/usr/sbin/update-grub"
    assert result["after"] == result["before"] == {"arguments": []}
    assert result["changed"] is False                # read back: the previous file is in place
    assert not (tmp_path / "grub.rdma-fabric-update-pending").exists()    # files and grub.cfg agree again


def test_update_pending_marker_during_the_update_and_gone_after(capsys, host, monkeypatch):
    tmp_path, calls = host
    marker = tmp_path / "grub.rdma-fabric-update-pending"
    seen = []

    def fake_run(self, argv, **kw):
        if str(argv[0]).endswith("update-grub"):
            seen.append(marker.exists())     # made before the GRUB file was written
        return 0, "", ""
    monkeypatch.setattr(kernel_cmdline.AnsibleModule, "run_command", fake_run)
    rc, result = run_main(capsys, grub_args(tmp_path))
    assert rc == 0 and seen == [True]
    assert not marker.exists()
    assert result["before"] == {"arguments": []}
    assert result["after"] == {"arguments": ["iommu=pt", "pci=" + DEV_LIST]}


def test_write_whose_update_never_finished_is_updated_by_the_next_run(capsys, host):
    """A run killed (or the node losing power) after writing the GRUB file and before update-grub
    finished: the file holds the arguments, grub.cfg does not. The next run updates the boot
    loader; the one after does nothing."""
    tmp_path, calls = host
    rc, done = run_main(capsys, grub_args(tmp_path))
    del calls[:]
    marker = tmp_path / "grub.rdma-fabric-update-pending"
    marker.write_text("left by a killed run\n")
    rc, check = run_main(capsys, grub_args(tmp_path, _ansible_check_mode=True))
    assert (check["changed"], check["commands"], calls) == (True, ["/usr/sbin/update-grub"], [])
    rc, result = run_main(capsys, grub_args(tmp_path))
    assert rc == 0, result
    assert result["changed"] is True
    assert result["commands"] == ["/usr/sbin/update-grub"]
    assert calls == [["/usr/sbin/update-grub"]]
    assert result["before"] == {"arguments": ["iommu=pt", "pci=" + DEV_LIST], "boot_loader_update_pending": True}
    assert result["after"] == {"arguments": ["iommu=pt", "pci=" + DEV_LIST]}
    assert any("did not finish" in note for note in result["notes"])
    assert not marker.exists()
    rc, again = run_main(capsys, grub_args(tmp_path))
    assert (again["changed"], again["commands"], calls) == (False, [], [["/usr/sbin/update-grub"]])


def test_failed_update_keeps_an_earlier_runs_marker(capsys, host, monkeypatch):
    tmp_path, dummy = host
    rc, done = run_main(capsys, grub_args(tmp_path))
    marker = tmp_path / "grub.rdma-fabric-update-pending"
    marker.write_text("left by a killed run\n")
    monkeypatch.setattr(kernel_cmdline.AnsibleModule, "run_command", lambda self, argv, **kw: (1, "", "no space left"))
    rc, result = run_main(capsys, grub_args(tmp_path))
    assert rc == 1 and result["failed_command"] == "/usr/sbin/update-grub"
    assert marker.exists()


def test_malformed_refused_before_anything(capsys, host):
    tmp_path, calls = host
    rc, result = run_main(capsys, grub_args(tmp_path, arguments=[{"name": "pci", "value": "realloc,disable_acs_redir"}]))
    assert rc == 1
    assert "names no device" in result["msg"]
    assert calls == []


GRUBBY_INFO = """index=0
kernel="/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64"
args="ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rhgb quiet pci=realloc"
root="/dev/mapper/rhel-root"
"""


def test_grubby_backend(capsys, tmp_path, monkeypatch):
    (tmp_path / "cmdline").write_text("BOOT_IMAGE=(hd0,gpt2)/vmlinuz ro rhgb quiet pci=realloc\n")
    state = {"info": GRUBBY_INFO}
    calls = []

    def fake_run(self, argv, **kwargs):
        calls.append(list(argv))
        if argv[1] == "--info=ALL":
            return 0, state["info"], ""
        state["info"] = GRUBBY_INFO.replace("pci=realloc", "iommu=pt \"pci=realloc,%s\"" % DEV_LIST)
        return 0, "", ""

    monkeypatch.setattr(kernel_cmdline.AnsibleModule, "run_command", fake_run)
    monkeypatch.setattr(kernel_cmdline.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: "/usr/sbin/" + name)
    rc, result = run_main(capsys, {"arguments": ARGS, "proc_cmdline": str(tmp_path / "cmdline")})
    assert rc == 0, result
    assert result["backend"] == "grubby"
    update = ["/usr/sbin/grubby", "--update-kernel=ALL", "--remove-args=pci",
              "--args=\"pci=realloc,%s\" iommu=pt" % DEV_LIST]
    assert result["commands"] == [" ".join(update)]
    assert calls == [["/usr/sbin/grubby", "--info=ALL"], update, ["/usr/sbin/grubby", "--info=ALL"]]
    assert result["after"]["arguments"][-2:] == ["iommu=pt", "pci=realloc," + DEV_LIST]   # as grubby re-reads
    assert result["reboot_required"] is True
    rc, again = run_main(capsys, {"arguments": ARGS, "proc_cmdline": str(tmp_path / "cmdline")})
    assert again["changed"] is False and again["commands"] == []
