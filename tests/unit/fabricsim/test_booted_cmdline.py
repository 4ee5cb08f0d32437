# -*- coding: utf-8 -*-
"""fabricsim's simulated /proc/cmdline: what the node booted with, from its GRUB files."""
from __future__ import absolute_import, division, print_function

from fabricsim import cli


def test_booted_cmdline_follows_grub_and_grub_d(tmp_path):
    grub = tmp_path / "grub"
    grub.write_text('GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX="iommu=pt"\n')
    (tmp_path / "grub.d").mkdir()
    (tmp_path / "grub.d" / "50-x.cfg").write_text('GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX pci=disable_acs_redir=0000:15:01.0"\n')
    line = cli.booted_cmdline(str(grub))
    assert line == "BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro iommu=pt pci=disable_acs_redir=0000:15:01.0 quiet\n"


def test_missing_grub_gives_a_bare_command_line(tmp_path):
    assert cli.booted_cmdline(str(tmp_path / "none")) == "BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro\n"
