# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel command line arguments in the boot configuration (logic of ``kernel_cmdline``).

Layers, from pure to I/O:

* kernel words: ``split_kernel_cmdline`` (the kernel's own rules, for /proc/cmdline and
  ``grubby --info``), ``validate_arguments`` (names and the values this module knows);
* the edit plan: ``plan_edits`` turns a list of current words and the wanted arguments
  into per-word operations (keep, replace, delete, append); ``satisfied`` says whether a
  running command line already has the effect wanted (``reboot_required``);
* GRUB defaults files: ``parse_grub_assignments`` keeps every token's raw span so that an
  edit touches only the words it must, ``edit_grub_files`` renders the new texts;
* grubby: ``parse_grubby_info`` and ``grubby_commands``;
* ``read_state`` is the only reader; ``apply_grub`` / ``apply_grubby`` write.

Semantics of repeated arguments (documented in the module):

* ``pci=``: the kernel parses every ``pci=`` argument (each is a comma list of sub-options),
  so several ``pci=`` words add up.  ``present`` merges the wanted sub-options (identity =
  text before ``=``; ``realloc`` and ``realloc=off`` are the same sub-option) into the
  existing ones, keeping the others and their order; when a change is needed all ``pci=``
  words are folded into one, at the place of the last one.
* any other name: the last occurrence wins for ``__setup``/``early_param`` handlers, so a
  name is treated as single-valued: ``present`` leaves exactly one ``name[=value]`` (the last
  occurrence is replaced in place, earlier ones are deleted).
* ``absent`` without a value deletes every occurrence; with a value only the occurrences
  with that value (for ``pci``, the listed sub-options; a sub-option given without ``=``
  matches any value of it).

Quoting of ``;`` (and other GRUB script metacharacters):
``GRUB_CMDLINE_LINUX`` is sourced by /bin/sh, then util/grub.d/10_linux writes
``linux ... ro ${args}`` through an unquoted here-document: the *shell value* lands
verbatim in grub.cfg, where GRUB's script lexer treats ``;`` as a command separator and
silently cuts the kernel command line there (the cloud-init ``ds=nocloud;s=...`` bug: a
shell-quoted ``GRUB_CMDLINE_LINUX='ds=nocloud;s=...'`` boots with ``ds=nocloud``).  RHEL's
blscfg module builds ``linux <kernel> <options>`` as script source the same way from BLS
entries.  The quoting must therefore be *inside* the value: a word that needs it is wrapped
in GRUB double quotes, which GRUB's lexer removes (grub_create_loader_cmdline re-adds
quotes only around words with spaces) and which the kernel itself also strips when a BLS
entry is booted by something else than GRUB.  In /etc/default/grub, inside the shell's
double-quoted string, those quotes are written ``\\"``::

    GRUB_CMDLINE_LINUX="quiet \\"pci=disable_acs_redir=0000:17:00.0;0000:18:00.0\\""
    grub.cfg:   linux /vmlinuz-... ro quiet "pci=disable_acs_redir=0000:17:00.0;0000:18:00.0"
    /proc/cmdline:               ... quiet pci=disable_acs_redir=0000:17:00.0;0000:18:00.0
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils._common import ToolError, run_tool


class ArgumentError(ValueError):
    """A wanted argument is malformed; the message names the field and the value."""


# --------------------------------------------------------------------------------------
# kernel words
# --------------------------------------------------------------------------------------

def split_kernel_cmdline(text):
    """Split a command line the way the kernel's next_arg() does: whitespace separates
    words, double quotes group (and are dropped)."""
    words, cur, in_quote, have = [], [], False, False
    for ch in text or "":
        if ch == '"':
            in_quote = not in_quote
            have = True
            continue
        if ch.isspace() and not in_quote:
            if have:
                words.append("".join(cur))
            cur, have = [], False
            continue
        cur.append(ch)
        have = True
    if have:
        words.append("".join(cur))
    return words


def word_name(word):
    return word.split("=", 1)[0]


def word_value(word):
    return word.split("=", 1)[1] if "=" in word else None


def make_word(name, value):
    return name if value is None else "%s=%s" % (name, value)


# --------------------------------------------------------------------------------------
# validation of the values this module knows
# --------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
# characters a value may hold; quotes and backslashes would need a second quoting layer
# through sh, GRUB and the kernel that nothing reads back reliably.
_BAD_VALUE_CHARS = re.compile(r"[\"'\\`\s$]")

_HEX = r"[0-9A-Fa-f]"
# [<domain>:]<bus>:<dev>.<fn>[/<dev>.<fn>]*  (drivers/pci/pci.c pci_dev_str_match_path)
_PCI_PATH_RE = re.compile(r"^(?:(%s{1,4}):)?(%s{1,2}):(%s{1,2})\.(%s)((?:/%s{1,2}\.%s)*)$"
                          % (_HEX, _HEX, _HEX, "[0-7]", _HEX, "[0-7]"))
# pci:<vendor>:<device>[:<subvendor>:<subdevice>]  (pci_dev_str_match, 0 = any)
_PCI_IDS_RE = re.compile(r"^pci:(%s{1,4}):(%s{1,4})(?::(%s{1,4}):(%s{1,4}))?$" % ((_HEX,) * 4))
_ACS_FLAGS_RE = re.compile(r"^[01xX]{1,7}$")

# pci= sub-options from Documentation/admin-guide/kernel-parameters.txt; "=" marks
# those that take a value.  Unknown sub-options are warned about, not refused: the
# kernel adds some every few releases and ignores unknown ones with a message.
PCI_FLAG_OPTIONS = frozenset("""
off bios nobios conf1 conf2 noaer nodomains nommconf nomsi noioapicquirk ioapicreroute
noioapicreroute nobar rom norom nocrs use_crs use_e820 no_e820 earlydump routeirq
skip_isa_align noacpi assign-busses firmware realloc noari nomio noats pcie_bus_tune_off
pcie_bus_safe pcie_bus_perf pcie_bus_peer2peer pcie_scan_all big_root_window
force_floating check_enable_amd_mmconf nocheck_enable_amd_mmconf biosirq
""".split())
PCI_VALUE_OPTIONS = frozenset("""
realloc lastbus irqmask hpiosize hpmmiosize hpmmioprefsize hpmemsize hpbussize cbiosize
cbmemsize resource_alignment ecrc disable_acs_redir config_acs
""".split())

IOMMU_TOKENS = frozenset("""
off force noforce biomerge merge nomerge panic nopanic forcesac allowdac nodac usedac
soft pt nopt calgary fullflush nofullflush noagp noaperture noaperture_init memaper
allowed
""".split())
INTEL_IOMMU_TOKENS = frozenset("""
on off igfx_off forcedac strict sp_off sm_on sm_off tboot_noforce nobounce
""".split())
AMD_IOMMU_TOKENS = frozenset("""
fullflush off force_enable force_isolation pgtbl_v1 pgtbl_v2 irtcachedis nohugepages
v2_pgsizes_only
""".split())
_BOOL_WORDS = frozenset(["0", "1", "y", "n", "Y", "N", "on", "off", "yes", "no"])


def _check_pci_dev(text, where):
    if _PCI_PATH_RE.match(text):
        match = _PCI_PATH_RE.match(text)
        if int(match.group(3), 16) > 0x1f:
            raise ArgumentError("%s: device number in %r is above 1f" % (where, text))
        for part in match.group(5).split("/")[1:]:
            if int(part.split(".")[0], 16) > 0x1f:
                raise ArgumentError("%s: device number in %r is above 1f" % (where, text))
        return
    if _PCI_IDS_RE.match(text):
        return
    raise ArgumentError(
        "%s: %r is not a PCI device; the kernel accepts "
        "[<domain>:]<bus>:<dev>.<fn>[/<dev>.<fn>]* (e.g. 0000:17:00.0) or "
        "pci:<vendor>:<device>[:<subvendor>:<subdevice>] (hex)" % (where, text))


def _check_device_list(value, where):
    if not value:
        raise ArgumentError("%s: empty device list" % where)
    for item in value.split(";"):
        _check_pci_dev(item, where)


def validate_pci_value(value, where="pci"):
    """Check a ``pci=`` value (comma list of sub-options); return a list of warnings."""
    warnings = []
    if not value:
        raise ArgumentError("%s: pci= needs at least one sub-option" % where)
    for option in value.split(","):
        key, sep, arg = option.partition("=")
        here = "%s sub-option %r" % (where, option)
        if not key:
            raise ArgumentError("%s: empty sub-option in %r (stray comma?)" % (where, value))
        if key == "disable_acs_redir":
            if not sep or not arg:
                raise ArgumentError(
                    "%s: disable_acs_redir needs a device list, disable_acs_redir=<pci_dev>[;<pci_dev>]* "
                    "(e.g. disable_acs_redir=0000:17:00.0;0000:18:00.0). The often quoted "
                    "'pci=realloc,disable_acs_redir' names no device: the kernel only knows "
                    "'disable_acs_redir=' followed by devices, logs 'PCI: Unknown option' for the bare "
                    "word and leaves ACS redirect on. List the bridges or switch ports between GPU and "
                    "NIC, or clear ACS at runtime with rdma.fabric.pcie_acs." % here)
            _check_device_list(arg, here)
        elif key == "config_acs":
            if not sep or not arg:
                raise ArgumentError("%s: config_acs needs <ACS flags>@<pci_dev>[;<ACS flags>@<pci_dev>]*" % here)
            for item in arg.split(";"):
                flags, at, dev = item.rpartition("@")
                if not at or not _ACS_FLAGS_RE.match(flags):
                    raise ArgumentError(
                        "%s: %r must be <flags>@<pci_dev> with 1 to 7 flags of 0/1/x, bit 0 "
                        "(SrcValid) rightmost, e.g. 111x0@0000:17:00.0" % (here, item))
                _check_pci_dev(dev, here)
        elif key == "realloc":
            if sep and arg not in ("on", "off"):
                raise ArgumentError("%s: realloc takes on or off, not %r" % (here, arg))
        elif key == "ecrc":
            if arg not in ("on", "off", "bios"):
                raise ArgumentError("%s: ecrc takes on, off or bios, not %r" % (here, arg))
        elif key in PCI_VALUE_OPTIONS:
            if not sep or not arg:
                raise ArgumentError("%s: %s needs a value (%s=...)" % (here, key, key))
        elif _PCI_PATH_RE.match(option) or _PCI_IDS_RE.match(option):
            raise ArgumentError("%s: looks like a PCI device on its own; pci= sub-options are split at ',', "
                                "so separate the devices of a list with ';'" % here)
        elif key in PCI_FLAG_OPTIONS:
            if sep:
                raise ArgumentError("%s: %s takes no value" % (here, key))
        else:
            warnings.append("%s: not a pci= sub-option this module knows; the kernel ignores "
                            "unknown ones with 'PCI: Unknown option'" % here)
    return warnings


def _validate_token_list(name, value, allowed, hint=""):
    if not value:
        raise ArgumentError("argument %s: needs a value" % name)
    for token in value.split(","):
        base = token.split("=", 1)[0]
        if base not in allowed:
            raise ArgumentError("argument %s: %r is not a value the kernel accepts (%s)%s"
                                % (name, token, ", ".join(sorted(allowed)), hint))


def validate_value(name, value):
    """Validate the value of an argument this module knows; return warnings."""
    if value is not None and _BAD_VALUE_CHARS.search(value):
        raise ArgumentError("argument %s: value %r holds a quote, backslash, '$', '`' or whitespace, "
                            "which cannot be passed through sh, GRUB and the kernel unchanged" % (name, value))
    if name == "pci":
        if value is None:
            raise ArgumentError("argument pci: needs a value (comma list of sub-options)")
        return validate_pci_value(value, "argument pci")
    if name == "iommu":
        _validate_token_list(name, value, IOMMU_TOKENS,
                             "; 'on' does not exist here: enable with intel_iommu=on or amd_iommu "
                             "(on by default) and use iommu=pt for passthrough" if value and "on" in value.split(",") else "")
    elif name == "intel_iommu":
        _validate_token_list(name, value, INTEL_IOMMU_TOKENS)
    elif name == "amd_iommu":
        _validate_token_list(name, value, AMD_IOMMU_TOKENS,
                             "; the AMD IOMMU is on by default, there is no amd_iommu=on"
                             if value and "on" in value.split(",") else "")
    elif name in ("iommu.passthrough", "iommu.strict"):
        if value not in _BOOL_WORDS:
            raise ArgumentError("argument %s: takes a boolean (0 or 1), not %r" % (name, value))
    return []


def validate_arguments(items):
    """Normalise the ``arguments`` option into a list of {name, value, state}; raise
    ArgumentError naming the item for anything malformed.  Returns (wants, warnings)."""
    wants, warnings, seen = [], [], {}
    for index, item in enumerate(items or []):
        where = "arguments[%d]" % index
        name = item.get("name")
        value = item.get("value")
        state = item.get("state") or "present"
        if not name or not _NAME_RE.match(name):
            raise ArgumentError("%s.name: %r is not a kernel parameter name (letters, digits, _ . -; "
                                "give the value in 'value', not as name=value)" % (where, name))
        if value is not None:
            value = str(value)
            if value == "":
                raise ArgumentError("%s.value: empty string for %s; omit value for a bare flag" % (where, name))
        if state == "present":
            warnings.extend(validate_value(name, value))
        elif value is not None:
            if _BAD_VALUE_CHARS.search(value):
                raise ArgumentError("%s.value: %r holds a quote, backslash, '$', '`' or whitespace" % (where, value))
            if name == "pci" and any(not part for part in value.split(",")):
                raise ArgumentError("%s.value: empty sub-option in %r" % (where, value))
        if name != "pci" and state == "present" and (name, "present") in seen:
            raise ArgumentError("%s: %s is already wanted present in arguments[%d]; a name other than "
                                "pci is single-valued" % (where, name, seen[(name, "present")]))
        seen[(name, state)] = index
        wants.append({"name": name, "value": value, "state": state})
    return wants, warnings


# --------------------------------------------------------------------------------------
# the edit plan (pure)
# --------------------------------------------------------------------------------------

def _pci_options(value):
    return [opt for opt in (value or "").split(",") if opt]


def _pci_key(option):
    return option.split("=", 1)[0]


def _pci_effective(words):
    """Effective pci sub-options {key: option} over every pci= word, later ones winning."""
    effective = {}
    for word in words:
        if word_name(word) == "pci":
            for option in _pci_options(word_value(word)):
                effective[_pci_key(option)] = option
    return effective


def satisfied(words, want):
    """Does a command line (list of kernel words) already have the *effect* wanted?

    Used against /proc/cmdline: the kernel's own semantics (last occurrence wins, pci=
    adds up), not the canonical single-occurrence form ``plan_edits`` writes."""
    name, value, state = want["name"], want["value"], want["state"]
    if name == "pci" and value is not None:
        effective = _pci_effective(words)
        options = _pci_options(value)
        if state == "present":
            return all(effective.get(_pci_key(opt)) == opt for opt in options)
        for opt in options:
            have = effective.get(_pci_key(opt))
            if have is not None and ("=" not in opt or have == opt):
                return False
        return True
    same = [word for word in words if word_name(word) == name]
    if state == "present":
        return bool(same) and same[-1] == make_word(name, value)
    if value is None:
        return not same
    return make_word(name, value) not in same


def plan_edits(words, wants):
    """Edit plan turning ``words`` into the wanted state, touching as few words as possible.

    Returns ``(slots, appended)``: ``slots[i]`` is the new text of word i (``None`` =
    delete it, unchanged text = keep it); ``appended`` are new words to add at the end.
    """
    slots = list(words)
    appended = []

    def live():
        return [(i, w) for i, w in enumerate(slots) if w is not None] + \
               [(len(slots) + j, w) for j, w in enumerate(appended) if w is not None]

    def set_word(pos, text):
        if pos < len(slots):
            slots[pos] = text
        else:
            appended[pos - len(slots)] = text

    for want in wants:
        name, value, state = want["name"], want["value"], want["state"]
        matches = [(i, w) for i, w in live() if word_name(w) == name]
        if name == "pci" and value is not None:
            current = [w for dummy, w in matches]
            if state == "present":
                if satisfied(current, want):
                    continue
                merged = []
                for word in current:
                    for option in _pci_options(word_value(word)):
                        # later occurrences win, like the kernel applying each in turn
                        merged = [o for o in merged if _pci_key(o) != _pci_key(option)] + [option]
                # replace in place, keeping the position of the options already there
                for option in _pci_options(value):
                    keys = [_pci_key(o) for o in merged]
                    if _pci_key(option) in keys:
                        merged[keys.index(_pci_key(option))] = option
                    else:
                        merged.append(option)
                new_word = make_word("pci", ",".join(merged))
                if matches:
                    for pos, dummy in matches[:-1]:
                        set_word(pos, None)
                    set_word(matches[-1][0], new_word)
                else:
                    appended.append(new_word)
            else:
                drop = _pci_options(value)
                for pos, word in matches:
                    kept = [o for o in _pci_options(word_value(word))
                            if not any(o == d or ("=" not in d and _pci_key(o) == d) for d in drop)]
                    if kept != _pci_options(word_value(word)):
                        set_word(pos, make_word("pci", ",".join(kept)) if kept else None)
            continue
        wanted_word = make_word(name, value)
        if state == "present":
            if [w for dummy, w in matches] == [wanted_word]:
                continue
            if matches:
                for pos, dummy in matches[:-1]:
                    set_word(pos, None)
                set_word(matches[-1][0], wanted_word)
            else:
                appended.append(wanted_word)
        else:
            for pos, word in matches:
                if value is None or word == wanted_word:
                    set_word(pos, None)
    return slots, [w for w in appended if w is not None]


def edited_words(words, wants):
    slots, appended = plan_edits(words, wants)
    return [w for w in slots if w is not None] + appended


def needs_change(words, wants):
    slots, appended = plan_edits(words, wants)
    return bool(appended) or slots != list(words)


# --------------------------------------------------------------------------------------
# GRUB defaults files
# --------------------------------------------------------------------------------------

_ASSIGN_RE = re.compile(r"^(?P<lead>[ \t]*(?:export[ \t]+)?)GRUB_CMDLINE_LINUX=")
# characters a word may hold in grub.cfg without quoting (GRUB script lexer)
_GRUB_SAFE_RE = re.compile(r"^[A-Za-z0-9_.,:=/+@%^~!\-]+$")


class GrubParseError(ValueError):
    pass


class GrubWord(object):
    """One GRUB-level word of an assignment: its raw span in the line and kernel text."""

    def __init__(self, start, end, text, opaque=False, ref=None):
        self.start = start
        self.end = end
        self.text = text          # the kernel word (all quoting removed)
        self.opaque = opaque      # holds an expansion: never matched nor edited
        self.ref = ref            # name of the variable it expands, if it is only that

    def __repr__(self):
        return "GrubWord(%r, %d, %d%s)" % (self.text, self.start, self.end, ", opaque" if self.opaque else "")


class Assignment(object):
    """A ``GRUB_CMDLINE_LINUX=`` line of one file."""

    def __init__(self, path, line_no, line, value_start, value_end, style, inner_start, inner_end, words):
        self.path = path
        self.line_no = line_no      # index in splitlines(True)
        self.line = line            # without its line ending
        self.value_start = value_start
        self.value_end = value_end
        self.style = style          # '"', "'" or '' (unquoted)
        self.inner_start = inner_start  # raw span inside the outer quotes
        self.inner_end = inner_end
        self.words = words

    @property
    def appends(self):
        """References $GRUB_CMDLINE_LINUX: builds on the earlier value."""
        return any(w.ref == "GRUB_CMDLINE_LINUX" for w in self.words)


def _shell_chars(line, pos):
    """Scan one shell word from ``pos``; return (chars, end, style, inner_start, inner_end).

    chars: list of (char, raw_start, raw_end) with char None for a ``$NAME`` expansion
    (then a 4th item holds the name)."""
    chars = []
    i, n = pos, len(line)
    segments = []
    while i < n:
        ch = line[i]
        if ch in " \t;&|" or (ch == "#" and i == pos):
            break
        if ch == "'":
            close = line.find("'", i + 1)
            if close < 0:
                raise GrubParseError("unterminated single quote")
            segments.append(("'", i, close + 1))
            for k in range(i + 1, close):
                chars.append((line[k], k, k + 1))
            i = close + 1
            continue
        if ch == '"':
            seg_start = i
            i += 1
            while True:
                if i >= n:
                    raise GrubParseError("unterminated double quote (a value spread over several lines "
                                         "is not supported)")
                ch = line[i]
                if ch == '"':
                    break
                if ch == "\\" and i + 1 < n and line[i + 1] in '$`"\\':
                    chars.append((line[i + 1], i, i + 2))
                    i += 2
                    continue
                if ch == "`" or (ch == "$" and line[i + 1:i + 2] == "("):
                    raise GrubParseError("command substitution in the value")
                if ch == "$":
                    i = _expansion(line, i, chars)
                    continue
                chars.append((ch, i, i + 1))
                i += 1
            segments.append(('"', seg_start, i + 1))
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            segments.append(("", i, i + 2))
            chars.append((line[i + 1], i, i + 2))
            i += 2
            continue
        if ch == "`" or (ch == "$" and line[i + 1:i + 2] == "("):
            raise GrubParseError("command substitution in the value")
        if ch == "$":
            start = i
            i = _expansion(line, i, chars)
            segments.append(("", start, i))
            continue
        segments.append(("", i, i + 1))
        chars.append((ch, i, i + 1))
        i += 1
    if not segments:
        return chars, i, "", i, i
    if len(segments) == 1 and segments[0][0] in ("'", '"'):
        quote, start, end = segments[0]
        return chars, i, quote, start + 1, end - 1
    if all(seg[0] == "" for seg in segments):
        return chars, i, "", segments[0][1], i
    return chars, i, "mixed", pos, i


def _expansion(line, i, chars):
    match = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))").match(line, i)
    if not match:
        chars.append(("$", i, i + 1))
        return i + 1
    chars.append((None, match.start(), match.end(), match.group(1) or match.group(2)))
    return match.end()


def _grub_words(chars):
    """Split shell-level characters into GRUB words (what grub.cfg's lexer sees)."""
    words = []
    cur, start, end, opaque, refs, quote = [], None, None, False, [], None
    pending_escape = False

    def flush():
        if start is not None:
            ref = refs[0] if len(refs) == 1 and not cur else None
            words.append(GrubWord(start, end, "".join(cur), opaque or bool(refs), ref))

    for item in chars:
        ch, raw_start, raw_end = item[0], item[1], item[2]
        if ch is None:                       # shell expansion: opaque part of the word
            if start is None:
                start = raw_start
            end = raw_end
            refs.append(item[3])
            continue
        if quote is None and not pending_escape and ch in " \t\n":
            flush()
            cur, start, end, opaque, refs = [], None, None, False, []
            continue
        if start is None:
            start = raw_start
        end = raw_end
        if pending_escape:
            cur.append(ch)
            pending_escape = False
        elif quote == "'":
            if ch == "'":
                quote = None
            else:
                cur.append(ch)
        elif quote == '"':
            if ch == '"':
                quote = None
            elif ch == "\\":
                pending_escape = True
            elif ch == "$":
                opaque = True
                cur.append(ch)
            else:
                cur.append(ch)
        elif ch in "'\"":
            quote = ch
        elif ch == "\\":
            pending_escape = True
        elif ch == "$":
            opaque = True            # a GRUB variable, expanded at boot
            cur.append(ch)
        else:
            cur.append(ch)
    if quote is not None:
        raise GrubParseError("unbalanced GRUB-level %s quote inside the value" % quote)
    flush()
    return words


def parse_grub_assignments(text, path):
    """Every ``GRUB_CMDLINE_LINUX=`` assignment of one file (``_DEFAULT`` is another variable)."""
    result = []
    for line_no, raw_line in enumerate(text.splitlines(True)):
        line = raw_line.rstrip("\r\n")
        match = _ASSIGN_RE.match(line)
        if not match:
            continue
        try:
            chars, end, style, inner_start, inner_end = _shell_chars(line, match.end())
            words = _grub_words(chars)
        except GrubParseError as exc:
            raise GrubParseError("%s line %d: cannot edit GRUB_CMDLINE_LINUX: %s" % (path, line_no + 1, exc))
        result.append(Assignment(path, line_no, line, match.end(), end, style, inner_start, inner_end, words))
    return result


def effective_chain(assignments):
    """The assignments that make up the value grub-mkconfig sees: the last one that does
    not build on ``$GRUB_CMDLINE_LINUX`` and every later one."""
    start = 0
    for index, assignment in enumerate(assignments):
        if not assignment.appends:
            start = index
    return assignments[start:]


def effective_words(assignments):
    """The kernel words of the effective value, in order (expansions other than the
    chained ``$GRUB_CMDLINE_LINUX`` are skipped: their value is not known here)."""
    out = []
    for assignment in effective_chain(assignments):
        out.extend(w.text for w in assignment.words if not w.opaque)
    return out


def render_grub_word(word, style):
    """Raw text of a kernel word inside an assignment quoted with ``style``."""
    if _GRUB_SAFE_RE.match(word):
        grub = word
    else:
        # GRUB double quotes: survive grub.cfg's lexer (';' '&' '|' '<' '>' '#' ...)
        grub = '"%s"' % word
    if style == '"':
        return re.sub(r'([\\"$`])', r"\\\1", grub)
    return grub   # single-quoted shell string: everything is literal


def _edit_line(assignment, edits, appended):
    """New text of an assignment line. ``edits``: {GrubWord: new kernel word or None}."""
    line = assignment.line
    style = assignment.style
    if style == "mixed":
        raise GrubParseError("%s line %d: GRUB_CMDLINE_LINUX mixes quoting styles; edit it by hand "
                             "or write it as one double-quoted string" % (assignment.path, assignment.line_no + 1))
    inner_start, inner_end = assignment.inner_start, assignment.inner_end
    words = assignment.words
    if style == "" and (edits or appended):
        # unquoted value: a second word needs quotes; re-render the value double-quoted
        if len(words) > 1 or any(w.opaque for w in words):
            raise GrubParseError("%s line %d: unquoted GRUB_CMDLINE_LINUX value with expansions"
                                 % (assignment.path, assignment.line_no + 1))
        body = " ".join(render_grub_word(w.text, '"') for w in words)
        line = line[:assignment.value_start] + '"' + body + '"' + line[assignment.value_end:]
        new = Assignment(assignment.path, assignment.line_no, line, assignment.value_start,
                         assignment.value_start + len(body) + 2, '"', assignment.value_start + 1,
                         assignment.value_start + 1 + len(body), [])
        reparsed = parse_grub_assignments(line, assignment.path)[0]
        mapping = dict(zip(words, reparsed.words))
        new.words = reparsed.words
        return _edit_line(new, dict((mapping[w], t) for w, t in edits.items()), appended)
    inner = line[inner_start:inner_end]
    # right to left so earlier offsets stay valid
    for word in sorted(edits, key=lambda w: w.start, reverse=True):
        s, e = word.start - inner_start, word.end - inner_start
        text = edits[word]
        if text is not None:
            inner = inner[:s] + render_grub_word(text, style) + inner[e:]
            continue
        # delete the word and one run of blanks next to it (the one before, else after)
        before = inner[:s]
        after = inner[e:]
        stripped = before.rstrip(" \t")
        if stripped != before:
            inner = stripped + after
        else:
            inner = before + after.lstrip(" \t")
    for text in appended:
        rendered = render_grub_word(text, style)
        inner = (inner + " " + rendered) if inner.strip(" \t") else rendered
    return line[:inner_start] + inner + line[inner_end:]


def edit_grub_files(files, wants):
    """Plan the edit of GRUB defaults files.

    ``files``: list of (path, text) in the order grub-mkconfig sources them (the main
    file, then grub.d/*.cfg sorted).  Returns (new_texts {path: text} for changed files
    only, before_words, after_words, notes)."""
    assignments = []
    for path, text in files:
        assignments.extend(parse_grub_assignments(text, path))
    notes = []
    if not assignments:
        main_path, main_text = files[0]
        before = []
        after = edited_words([], wants)
        if not after:
            return {}, before, after, notes
        body = " ".join(render_grub_word(w, '"') for w in after)
        sep = "" if not main_text or main_text.endswith("\n") else "\n"
        notes.append("%s had no GRUB_CMDLINE_LINUX line; one was added" % main_path)
        return {main_path: main_text + sep + 'GRUB_CMDLINE_LINUX="%s"\n' % body}, before, after, notes

    chain = effective_chain(assignments)
    tokens = [(a, w) for a in chain for w in a.words if not w.opaque]
    before = [w.text for dummy, w in tokens]
    slots, appended = plan_edits(before, wants)
    after = [w for w in slots if w is not None] + appended
    per_assignment = {}
    for (assignment, word), new in zip(tokens, slots):
        if new != word.text:
            per_assignment.setdefault(id(assignment), {})[word] = new
    target = chain[-1]
    changed = {}
    if appended:
        per_assignment.setdefault(id(target), {})
    if not per_assignment:
        return {}, before, after, notes
    texts = dict(files)
    by_path = {}
    for assignment in chain:
        if id(assignment) in per_assignment:
            by_path.setdefault(assignment.path, []).append(assignment)
    for path, items in by_path.items():
        lines = texts[path].splitlines(True)
        for assignment in items:
            new_line = _edit_line(assignment, per_assignment[id(assignment)],
                                  appended if assignment is target else [])
            old = lines[assignment.line_no]
            ending = old[len(old.rstrip("\r\n")):]
            lines[assignment.line_no] = new_line + ending
        changed[path] = "".join(lines)
    if target.path != files[0][0]:
        notes.append("GRUB_CMDLINE_LINUX is (re)defined in %s, which grub-mkconfig reads after %s; "
                     "the arguments were edited there" % (target.path, files[0][0]))
    return changed, before, after, notes


def grub_d_files(grub_file):
    """The drop-in files grub-mkconfig sources after ``grub_file`` (Debian: grub.d/*.cfg)."""
    return sorted(glob.glob(os.path.join(grub_file + ".d", "*.cfg")))


# --------------------------------------------------------------------------------------
# grubby
# --------------------------------------------------------------------------------------

def parse_grubby_info(text):
    """``grubby --info=ALL`` (C grubby and the grubby-bls script) -> list of entries
    {index, kernel, args (raw string), words}. Non-linux entries are skipped."""
    entries, cur = [], None
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key == "index":
            cur = {"index": value.strip(), "kernel": None, "args": None}
            entries.append(cur)
            continue
        if cur is None:
            continue
        if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
            value = value[1:-1]
        if key in ("kernel", "args", "root", "title", "id"):
            cur[key] = value
    out = []
    for entry in entries:
        if entry.get("kernel") and entry.get("args") is not None:
            entry["words"] = [w for w in split_kernel_cmdline(entry["args"]) if not w.startswith("$")]
            out.append(entry)
    return out


def grubby_word(word):
    """A word as written into a BLS ``options`` line: GRUB double quotes when it holds a
    character grub.cfg's lexer would act on (blscfg feeds the line to that lexer)."""
    return word if _GRUB_SAFE_RE.match(word) else '"%s"' % word


def _grubby_change(words, wants):
    """(names to remove, words to add) turning one entry's words into the wanted state.

    A changed name is removed then added back with its new value: grubby-bls finds the old
    value by the text before '=', which a quoted word would not match."""
    after = edited_words(words, wants)
    changed = []
    for word in words + after:
        name = word_name(word)
        if name not in changed and [w for w in words if word_name(w) == name] != \
                [w for w in after if word_name(w) == name]:
            changed.append(name)
    present_before = set(word_name(w) for w in words)
    return [n for n in changed if n in present_before], [w for w in after if word_name(w) in changed]


def grubby_commands(grubby, entries, wants):
    """grubby calls making every kernel entry converge; none when all are.

    One ``--update-kernel=ALL`` call when every entry needs the same change, else one
    call per entry that needs one (``--update-kernel=<kernel path>``)."""
    changes = [(entry, _grubby_change(entry["words"], wants)) for entry in entries]
    needed = [(entry, change) for entry, change in changes if change[0] or change[1]]
    if not needed:
        return []

    def argv(target, change):
        names, add = change
        cmd = [grubby, "--update-kernel=%s" % target]
        if names:
            cmd.append("--remove-args=%s" % " ".join(names))
        if add:
            cmd.append("--args=%s" % " ".join(grubby_word(w) for w in add))
        return cmd

    if len(needed) == len(changes) and all(change == needed[0][1] for dummy, change in needed):
        return [argv("ALL", needed[0][1])]
    return [argv(entry["kernel"], change) for entry, change in needed]


# --------------------------------------------------------------------------------------
# reader and apply (the only I/O)
# --------------------------------------------------------------------------------------

def _read_text(path):
    with open(path) as handle:
        return handle.read()


def read_proc_cmdline(path):
    try:
        return _read_text(path).strip()
    except (IOError, OSError):
        return None


def read_state(module, backend, grub_file, grubby=None):
    """The only reader: the boot configuration as text/entries."""
    if backend == "grubby":
        rc, out, err = run_tool(module, [grubby, "--info=ALL"])
        return {"backend": "grubby", "entries": parse_grubby_info(out)}
    files = []
    if os.path.exists(grub_file):
        files.append((grub_file, _read_text(grub_file)))
    else:
        files.append((grub_file, ""))
    for path in grub_d_files(grub_file):
        files.append((path, _read_text(path)))
    return {"backend": "grub", "files": files}


def write_file_atomic(module, path, text):
    """Write ``text`` next to ``path`` and atomic_move it in place (keeps owner/mode)."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, ".%s.rdma-fabric.tmp" % os.path.basename(path))
    with open(tmp, "w") as handle:
        handle.write(text)
    module.atomic_move(tmp, path)


def resolve_update_command(module, update_command):
    if update_command:
        return list(update_command)
    for name in ("update-grub",):
        path = module.get_bin_path(name)
        if path:
            return [path]
    for name, target in (("grub-mkconfig", "/boot/grub/grub.cfg"), ("grub2-mkconfig", "/boot/grub2/grub.cfg")):
        path = module.get_bin_path(name)
        if path:
            return [path, "-o", target]
    raise ToolError("neither update-grub nor grub-mkconfig/grub2-mkconfig was found; set update_command")
