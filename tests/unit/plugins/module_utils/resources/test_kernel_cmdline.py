# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_kernel_args (validation, edit plan) and _grub_config (GRUB file editing, grubby); fixtures tests/unit/fixtures/grub."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _grub_config as grub
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _kernel_args as ka

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "grub")
DEV_LIST = "disable_acs_redir=0000:17:00.0;0000:18:00.0"


def fixture(*parts):
    with open(os.path.join(FIX, *parts)) as handle:
        return handle.read()


def wants(*items):
    result, dummy = ka.validate_arguments([dict(zip(("name", "value", "state"), item)) for item in items])
    return result


def edit(files, *items):
    return grub.edit_grub_files(files, wants(*items))


def grub_line(text, name="GRUB_CMDLINE_LINUX"):
    return [line for line in text.splitlines() if line.startswith(name + "=")]


def shell_value(text):
    """What /bin/sh assigns (as grub-mkconfig sources the file), via the real shell."""
    import subprocess
    out = subprocess.run(["sh", "-c", text + '\nprintf "%s" "$GRUB_CMDLINE_LINUX"'],
                         stdout=subprocess.PIPE, check=True, universal_newlines=True,
                         env={"PATH": "/usr/bin:/bin"})
    return out.stdout


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize("name,value", [
    ("pci", DEV_LIST),
    ("pci", "disable_acs_redir=17:00.0"),
    ("pci", "disable_acs_redir=0000:00:01.0/00.0/02.0"),
    ("pci", "disable_acs_redir=pci:10b5:c030"),
    ("pci", "disable_acs_redir=pci:10b5:c030:10de:1234;0001:a0:1f.7"),
    ("pci", "realloc,noats"),
    ("pci", "realloc=off,hpmemsize=64M,ecrc=on"),
    ("pci", "config_acs=111x0@0000:17:00.0;10x@pci:0:0"),
    ("iommu", "pt"),
    ("iommu", "off"),
    ("iommu", "force,nomerge"),
    ("intel_iommu", "on"),
    ("intel_iommu", "on,sm_on"),
    ("amd_iommu", "force_enable"),
    ("iommu.passthrough", "1"),
    ("quiet", None),
    ("console", "ttyS0,115200n8"),
])
def test_good_values_accepted(name, value):
    result, warnings = ka.validate_arguments([{"name": name, "value": value, "state": "present"}])
    assert result == [{"name": name, "value": value, "state": "present"}]
    assert warnings == []


@pytest.mark.parametrize("name,value,words", [
    ("pci", "realloc,disable_acs_redir", "names no device"),
    ("pci", "disable_acs_redir=", "needs a device list"),
    ("pci", "disable_acs_redir=0000:17:00.0,0000:18:00.0", "separate the devices of a list with"),
    ("pci", "disable_acs_redir=0000:17:00.8", "'0000:17:00.8' is not a PCI device (BDF '0000:17:00.8': function number 8"),
    ("pci", "disable_acs_redir=0000:17:20.0", "(BDF '0000:17:20.0': device number 20 is above 1f)"),
    ("pci", "disable_acs_redir=0000:16:01.0/20.0", "(BDF '20.0': device number 20 is above 1f)"),
    ("pci", "disable_acs_redir=0000:16:01.0/", "(BDF '': not a <device>.<function> pair"),
    ("pci", "disable_acs_redir=17:00.0;", "not a PCI device"),
    ("pci", "disable_acs_redir=pci:10de", "not a PCI device"),
    ("pci", "config_acs=0000:17:00.0", "<flags>@<pci_dev>"),
    ("pci", "config_acs=12@0000:17:00.0", "<flags>@<pci_dev>"),
    ("pci", "realloc=yes", "on or off"),
    ("pci", "noats=1", "takes no value"),
    ("pci", "hpmemsize", "needs a value"),
    ("pci", "realloc,,noats", "empty sub-option"),
    ("pci", None, "needs a value"),
    ("iommu", "on", "iommu=pt for passthrough"),
    ("iommu", "passthrough", "not a value"),
    ("intel_iommu", "enable", "not a value"),
    ("amd_iommu", "on", "no amd_iommu=on"),
    ("iommu.strict", "maybe", "boolean"),
    ("console", "tty0 quiet", "whitespace"),
    ("console", 'a"b', "quote"),
])
def test_malformed_values_refused(name, value, words):
    with pytest.raises(ka.ArgumentError) as exc:
        ka.validate_arguments([{"name": name, "value": value, "state": "present"}])
    assert words in str(exc.value)
    assert "arguments[0]" in str(exc.value) or "argument %s" % name in str(exc.value)


def test_bad_names_and_duplicates_refused():
    with pytest.raises(ka.ArgumentError, match=r"arguments\[0\]\.name: 'iommu=pt'"):
        ka.validate_arguments([{"name": "iommu=pt"}])
    with pytest.raises(ka.ArgumentError, match=r"arguments\[1\].*already wanted present in arguments\[0\]"):
        ka.validate_arguments([{"name": "iommu", "value": "pt"}, {"name": "iommu", "value": "off"}])


def test_unknown_pci_suboption_is_a_warning():
    dummy, warnings = ka.validate_arguments([{"name": "pci", "value": "realloc,brandnew"}])
    assert warnings == ["argument pci sub-option 'brandnew': not a pci= sub-option this module knows; "
                        "the kernel ignores unknown ones with 'PCI: Unknown option'"]


# ---------------------------------------------------------------- kernel words and plan

def test_split_kernel_cmdline_quotes():
    text = 'BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=ab ro "dyndbg=file a.c +p" foo="x y" pci=disable_acs_redir=17:00.0;18:00.0\n'
    assert ka.split_kernel_cmdline(text) == [
        "BOOT_IMAGE=/vmlinuz-6.8.0", "root=UUID=ab", "ro", "dyndbg=file a.c +p", "foo=x y",
        "pci=disable_acs_redir=17:00.0;18:00.0"]


def test_plan_single_valued_last_replaced_earlier_deleted():
    words = ["iommu=nopt", "quiet", "iommu=pt", "iommu=soft"]
    assert ka.plan_edits(words, wants(("iommu", "pt", "present"))) == (
        [None, "quiet", None, "iommu=pt"], [])


def test_plan_pci_merge_keeps_other_suboptions_and_folds():
    words = ["pci=realloc=off,hpmemsize=64M", "ro", "pci=noats"]
    slots, appended = ka.plan_edits(words, wants(("pci", "realloc," + DEV_LIST, "present")))
    assert slots == [None, "ro", "pci=realloc,hpmemsize=64M,noats," + DEV_LIST]
    assert appended == []


def test_plan_pci_already_satisfied_across_two_words_is_untouched():
    words = ["pci=realloc", "pci=" + DEV_LIST]
    assert ka.plan_edits(words, wants(("pci", DEV_LIST, "present"))) == (words, [])


def test_plan_pci_absent_suboption():
    words = ["pci=realloc,noats,disable_acs_redir=17:00.0", "pci=noats"]
    slots, dummy = ka.plan_edits(words, wants(("pci", "noats,disable_acs_redir", "absent")))
    assert slots == ["pci=realloc", None]


def test_plan_absent_with_value_only_matching():
    words = ["console=tty0", "console=ttyS0,115200", "quiet"]
    assert ka.plan_edits(words, wants(("console", "tty0", "absent"))) == ([None, "console=ttyS0,115200", "quiet"], [])
    assert ka.plan_edits(words, wants(("console", None, "absent"))) == ([None, None, "quiet"], [])


def test_satisfied_uses_kernel_semantics():
    running = ka.split_kernel_cmdline("ro iommu=nopt iommu=pt pci=realloc pci=noats quiet")
    assert ka.satisfied(running, wants(("iommu", "pt", "present"))[0])
    assert ka.satisfied(running, wants(("pci", "noats,realloc", "present"))[0])
    assert not ka.satisfied(running, wants(("pci", DEV_LIST, "present"))[0])
    assert not ka.satisfied(running, wants(("quiet", None, "absent"))[0])
    assert ka.satisfied(running, wants(("pci", "hpmemsize", "absent"))[0])


# ---------------------------------------------------------------- GRUB files

def test_ubuntu_empty_value_gets_args_default_untouched():
    text = fixture("ubuntu2204", "grub")
    changed, before, after, notes = edit([("/etc/default/grub", text)],
                                         ("iommu", "pt", "present"), ("pci", DEV_LIST, "present"))
    new = changed["/etc/default/grub"]
    assert before == []
    assert after == ["iommu=pt", "pci=" + DEV_LIST]
    assert grub_line(new) == ['GRUB_CMDLINE_LINUX="iommu=pt \\"pci=%s\\""' % DEV_LIST]
    assert grub_line(new, "GRUB_CMDLINE_LINUX_DEFAULT") == ['GRUB_CMDLINE_LINUX_DEFAULT="quiet splash"']
    # only that one line differs
    assert [a for a, b in zip(text.splitlines(), new.splitlines()) if a != b] == ['GRUB_CMDLINE_LINUX=""']
    assert notes == []


def test_semicolon_survives_shell_into_grub_cfg():
    """The shell value (what 10_linux writes after 'ro') holds GRUB double quotes around
    the ';' word, so grub.cfg's lexer keeps it in one argument."""
    new = edit([("g", fixture("ubuntu2204", "grub"))], ("pci", DEV_LIST, "present"))[0]["g"]
    value = shell_value("\n".join(grub_line(new)))
    assert value == '"pci=%s"' % DEV_LIST
    # what GRUB's lexer makes of that grub.cfg text: one word, quotes dropped
    grub_words = grub._grub_words([(ch, i, i + 1) for i, ch in enumerate(value)])
    assert [w.text for w in grub_words] == ["pci=" + DEV_LIST]


def test_idempotent_second_run_no_change():
    text = fixture("ubuntu2204", "grub")
    items = (("iommu", "pt", "present"), ("pci", "realloc," + DEV_LIST, "present"), ("quiet", None, "present"))
    first = edit([("g", text)], *items)[0]["g"]
    changed, before, after, dummy = edit([("g", first)], *items)
    assert changed == {}
    assert before == after == ["iommu=pt", "pci=realloc," + DEV_LIST, "quiet"]


def test_hand_edited_file_keeps_quoting_comment_and_spacing():
    text = fixture("dgx_quoted_grub")
    changed, before, after, dummy = edit([("g", text)], ("iommu", "pt", "present"), ("pci", DEV_LIST, "present"),
                                         ("intel_iommu", None, "absent"))
    assert before == ["console=tty0", "console=ttyS0,115200n8", "ds=nocloud;s=http://10.0.0.1/seed/",
                      "pci=realloc=off,hpmemsize=64M", "intel_iommu=on", "iommu=nopt", "iommu=pt",
                      "rd.driver.blacklist=nouveau"]
    line = grub_line(changed["g"])[0]
    assert line == ('GRUB_CMDLINE_LINUX="console=tty0   console=ttyS0,115200n8 \'ds=nocloud;s=http://10.0.0.1/seed/\' '
                    '\\"pci=realloc=off,hpmemsize=64M,%s\\" iommu=pt rd.driver.blacklist=nouveau"  # site tuning' % DEV_LIST)
    assert grub_line(changed["g"], "GRUB_CMDLINE_LINUX_DEFAULT") == ['GRUB_CMDLINE_LINUX_DEFAULT="quiet splash pci=noats"']
    assert after == ["console=tty0", "console=ttyS0,115200n8", "ds=nocloud;s=http://10.0.0.1/seed/",
                     "pci=realloc=off,hpmemsize=64M," + DEV_LIST, "iommu=pt", "rd.driver.blacklist=nouveau"]


def test_removal_of_first_and_last_words():
    text = 'GRUB_CMDLINE_LINUX="quiet splash iommu=pt"\n'
    new = edit([("g", text)], ("quiet", None, "absent"), ("iommu", None, "absent"))[0]["g"]
    assert new == 'GRUB_CMDLINE_LINUX="splash"\n'
    new = edit([("g", new)], ("splash", None, "absent"))[0]["g"]
    assert new == 'GRUB_CMDLINE_LINUX=""\n'


def test_single_quoted_value_without_final_newline():
    text = fixture("single_quoted_grub")
    assert not text.endswith("\n")
    new = edit([("g", text)], ("pci", DEV_LIST, "present"), ("mitigations", None, "absent"))[0]["g"]
    assert new == "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX='console=ttyS1,115200 \"pci=%s\"'" % DEV_LIST
    assert shell_value(new) == 'console=ttyS1,115200 "pci=%s"' % DEV_LIST


def test_unquoted_value_is_requoted():
    new = edit([("g", "GRUB_CMDLINE_LINUX=quiet\n")], ("iommu", "pt", "present"))[0]["g"]
    assert new == 'GRUB_CMDLINE_LINUX="quiet iommu=pt"\n'


def test_missing_assignment_is_appended_after_a_newline():
    changed, before, after, notes = edit([("g", "GRUB_DEFAULT=0")], ("iommu", "pt", "present"))
    assert changed == {"g": 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX="iommu=pt"\n'}
    assert notes == ["g had no GRUB_CMDLINE_LINUX line; one was added"]


def test_rhel_grub_commas_and_colons_kept():
    text = fixture("rhel9_grub")
    new = edit([("g", text)], ("rhgb", None, "absent"), ("iommu", "pt", "present"))[0]["g"]
    assert grub_line(new) == ['GRUB_CMDLINE_LINUX="crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M '
                              'resume=/dev/mapper/rhel-swap rd.lvm.lv=rhel/root rd.lvm.lv=rhel/swap quiet iommu=pt"']
    # the $(sed ...) GRUB_DISTRIBUTOR line is not ours and stays
    assert "GRUB_DISTRIBUTOR=\"$(sed 's, release .*$,,g' /etc/system-release)\"" in new


def test_grub_d_without_cmdline_edits_main_file():
    files = [("grub", fixture("ubuntu-cloud", "grub")),
             ("grub.d/40-force-partuuid.cfg", fixture("ubuntu-cloud", "grub.d", "40-force-partuuid.cfg")),
             ("grub.d/50-cloudimg-settings.cfg", fixture("ubuntu-cloud", "grub.d", "50-cloudimg-settings.cfg"))]
    changed, dummy, after, notes = edit(files, ("iommu", "pt", "present"))
    assert list(changed) == ["grub"]
    assert after == ["iommu=pt"]
    assert notes == []


def test_grub_d_replacing_assignment_is_the_one_edited():
    files = [("grub", fixture("override", "grub")),
             ("grub.d/60-append.cfg", fixture("override", "grub.d", "60-append.cfg")),
             ("grub.d/70-replace.cfg", fixture("override", "grub.d", "70-replace.cfg"))]
    changed, before, after, notes = edit(files, ("pci", DEV_LIST, "present"), ("intel_iommu", "on", "present"))
    assert before == ["console=ttyS0,115200n8", "iommu=pt", "pci=noats"]
    assert list(changed) == ["grub.d/70-replace.cfg"]
    assert grub_line(changed["grub.d/70-replace.cfg"]) == [
        'GRUB_CMDLINE_LINUX="console=ttyS0,115200n8 iommu=pt \\"pci=noats,%s\\" intel_iommu=on"' % DEV_LIST]
    assert notes and "grub.d/70-replace.cfg" in notes[0]


def test_grub_d_appending_chain_removes_where_found_and_adds_last():
    files = [("grub", fixture("override", "grub")),
             ("grub.d/60-append.cfg", fixture("override", "grub.d", "60-append.cfg"))]
    changed, before, after, dummy = edit(files, ("intel_iommu", None, "absent"), ("iommu", "pt", "present"))
    assert before == ["console=tty0", "intel_iommu=on", "net.ifnames=0"]
    assert grub_line(changed["grub"]) == ['GRUB_CMDLINE_LINUX="console=tty0"']
    assert grub_line(changed["grub.d/60-append.cfg"]) == ['GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX net.ifnames=0 iommu=pt"']
    assert after == ["console=tty0", "net.ifnames=0", "iommu=pt"]


def test_multiline_value_is_refused_clearly():
    with pytest.raises(grub.GrubParseError, match=r"g line 1: cannot edit GRUB_CMDLINE_LINUX: unterminated double quote"):
        edit([("g", 'GRUB_CMDLINE_LINUX="quiet\n splash"\n')], ("iommu", "pt", "present"))


def test_command_substitution_is_refused():
    with pytest.raises(grub.GrubParseError, match="command substitution"):
        edit([("g", 'GRUB_CMDLINE_LINUX="$(cat /etc/cmdline)"\n')], ("iommu", "pt", "present"))


def test_grub_files_lists_dropins_sorted(tmp_path):
    main = tmp_path / "grub"
    main.write_text("")
    (tmp_path / "grub.d").mkdir()
    for name in ("70-b.cfg", "10-a.cfg", "README"):
        (tmp_path / "grub.d" / name).write_text("")
    assert [os.path.basename(p) for p in grub.grub_d_files(str(main))] == ["10-a.cfg", "70-b.cfg"]


# ---------------------------------------------------------------- grubby

def test_parse_grubby_bls_and_c_layouts():
    entries = grub.parse_grubby_info(fixture("grubby_info_rhel9.txt"))
    assert [e["kernel"] for e in entries] == [
        "/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64", "/boot/vmlinuz-5.14.0-362.8.1.el9_3.x86_64",
        "/boot/vmlinuz-0-rescue-6a8f2f4a0e8b4d1c9d55a0b3e2c7f1d2"]
    assert entries[0]["words"][-3:] == ["rhgb", "quiet", "pci=realloc"]
    old = grub.parse_grubby_info(fixture("grubby_info_c.txt"))
    assert len(old) == 1 and old[0]["kernel"] == "/boot/vmlinuz-3.10.0-1160.el7.x86_64"
    assert old[0]["words"] == ["ro", "crashkernel=auto", "rd.lvm.lv=centos/root", "rhgb", "quiet", "LANG=en_US.UTF-8"]


def test_grubby_one_call_for_all_with_quoted_semicolon_word():
    entries = grub.parse_grubby_info(fixture("grubby_info_rhel9.txt"))
    cmds = grub.grubby_commands("/usr/sbin/grubby", entries,
                                wants(("pci", DEV_LIST, "present"), ("iommu", "pt", "present"), ("rhgb", None, "absent")))
    assert cmds == [["/usr/sbin/grubby", "--update-kernel=ALL", "--remove-args=rhgb pci",
                     "--args=\"pci=realloc,%s\" iommu=pt" % DEV_LIST]]


def test_grubby_converged_no_call_and_per_entry_when_different():
    entries = grub.parse_grubby_info(fixture("grubby_info_rhel9.txt"))
    assert grub.grubby_commands("grubby", entries, wants(("pci", "realloc", "present"), ("quiet", None, "present"))) == []
    entries[1]["words"] = [w for w in entries[1]["words"] if w != "quiet"]
    cmds = grub.grubby_commands("grubby", entries, wants(("quiet", None, "absent")))
    assert cmds == [["grubby", "--update-kernel=/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64", "--remove-args=quiet"],
                    ["grubby", "--update-kernel=/boot/vmlinuz-0-rescue-6a8f2f4a0e8b4d1c9d55a0b3e2c7f1d2",
                     "--remove-args=quiet"]]


def test_render_grub_word_escapes_for_shell_double_quotes():
    assert grub.render_grub_word("iommu=pt", '"') == "iommu=pt"
    assert grub.render_grub_word("a;b", '"') == '\\"a;b\\"'
    assert grub.render_grub_word("a;b", "'") == '"a;b"'
    assert re.match(r'^\\"', grub.render_grub_word("x&y", '"'))
