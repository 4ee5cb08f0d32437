# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel command line arguments: the argument model of ``kernel_cmdline`` (pure, but for
``read_proc_cmdline``). The boot-configuration side: GRUB defaults files and grubby in
``_grub_config``, reading, writing and the boot-loader update in ``_kernel_cmdline``.

* kernel words: ``split_kernel_cmdline`` (the kernel's own rules, for /proc/cmdline and
  ``grubby --info``), ``validate_arguments`` (names and the values this module knows; PCI
  addresses through ``_bdf``);
* the edit plan: ``plan_edits`` turns a list of current words and the wanted arguments
  into per-word operations (keep, replace, delete, append); ``satisfied`` says whether a
  running command line already has the effect wanted (``reboot_required``).

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
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.rdma.fabric.plugins.module_utils.common import _bdf
from ansible_collections.rdma.fabric.plugins.module_utils.common import _lazy_re


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

_NAME_RE = _lazy_re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
# characters a value may hold; quotes and backslashes would need a second quoting layer
# through sh, GRUB and the kernel that nothing reads back reliably.
_BAD_VALUE_CHARS = _lazy_re.compile(r"[\"'\\`\s$]")

_HEX = r"[0-9A-Fa-f]"
# pci:<vendor>:<device>[:<subvendor>:<subdevice>]  (pci_dev_str_match, 0 = any)
_PCI_IDS_RE = _lazy_re.compile(r"^pci:(%s{1,4}):(%s{1,4})(?::(%s{1,4}):(%s{1,4}))?\Z" % ((_HEX,) * 4))
_ACS_FLAGS_RE = _lazy_re.compile(r"^[01xX]{1,7}\Z")

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


def _pci_path(text):
    """``[<domain>:]<bus>:<dev>.<fn>[/<dev>.<fn>]*`` (drivers/pci/pci.c pci_dev_str_match_path):
    a PCI address (``_bdf``) and the device.function steps below it; ValueError naming the
    part that is refused."""
    head, sep, path = text.partition("/")
    _bdf.parse_bdf(head)
    if sep:
        for step in path.split("/"):
            _bdf.parse_devfn(step)


def _is_pci_dev(text):
    if _PCI_IDS_RE.fullmatch(text):
        return True
    try:
        _pci_path(text)
    except ValueError:
        return False
    return True


def _check_pci_dev(text, where):
    if _PCI_IDS_RE.fullmatch(text):
        return
    try:
        _pci_path(text)
    except ValueError as exc:
        raise ArgumentError(
            "%s: %r is not a PCI device (%s); the kernel accepts "
            "[<domain>:]<bus>:<dev>.<fn>[/<dev>.<fn>]* (e.g. 0000:17:00.0) or "
            "pci:<vendor>:<device>[:<subvendor>:<subdevice>] (hex)" % (where, text, exc))


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
                if not at or not _ACS_FLAGS_RE.fullmatch(flags):
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
        elif _is_pci_dev(option):
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
        if not name or not _NAME_RE.fullmatch(name):
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
    present = dict((w["name"], (i, w["value"])) for i, w in enumerate(wants) if w["state"] == "present")
    conflict = contradiction([make_word(n, v) for n, (dummy, v) in present.items()])
    if conflict:
        first, second = conflict
        raise ArgumentError("arguments[%d] %s and arguments[%d] %s contradict each other: %s"
                            % (present[word_name(first[0])][0], first[0], present[word_name(second[0])][0],
                               second[0], first[1]))
    return wants, warnings


_TRUE_WORDS = frozenset(["1", "y", "Y", "on", "yes"])
_FALSE_WORDS = frozenset(["0", "n", "N", "off", "no"])


def _passthrough_of(word):
    """What one word says about IOMMU passthrough: True, False or None (nothing)."""
    name, value = word_name(word), word_value(word)
    if name == "iommu" and value:
        tokens = value.split(",")
        if "pt" in tokens:
            return True
        if "nopt" in tokens:
            return False
    if name == "iommu.passthrough" and value is not None:
        if value in _TRUE_WORDS:
            return True
        if value in _FALSE_WORDS:
            return False
    return None


def contradiction(words):
    """The first pair of kernel words that ask for opposite things (``iommu=nopt`` with
    ``iommu.passthrough=1``, ``iommu=pt`` with ``iommu.passthrough=0``), as
    ``((word, reason), (word, reason))``, or None."""
    said = [(w, _passthrough_of(w)) for w in words]
    said = [(w, v) for w, v in said if v is not None]
    for word, value in said:
        for other, other_value in said:
            if word_name(word) != word_name(other) and value != other_value:
                return ((word, "one turns IOMMU passthrough %s, the other %s; keep one of them"
                         % ("on" if value else "off", "on" if other_value else "off")), (other, ""))
    return None


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


def _read_text(path):
    with open(path) as handle:
        return handle.read()


def read_proc_cmdline(path):
    try:
        return _read_text(path).strip()
    except (IOError, OSError):
        return None
