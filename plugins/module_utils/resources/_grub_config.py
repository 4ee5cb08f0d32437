# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GRUB's boot configuration as text, for ``kernel_cmdline``: the GRUB defaults files and
grubby's kernel entries, parsed and their edits planned; pure but for ``grub_d_files``, which
lists the drop-ins. The kernel-argument model the edits use (split, validate, plan) is
``_kernel_args``; reading and writing the files, the boot-loader update and the resource are
``_kernel_cmdline``.

* GRUB defaults files: a shell lexer (``_shell_chars``) and GRUB's word splitting
  (``_grub_words``) behind ``parse_grub_assignments``, which keeps every token's raw span so
  that an edit touches only the words it must; ``edit_grub_files`` renders the new texts;
  ``grub_d_files`` lists the drop-ins grub-mkconfig sources;
* grubby: ``parse_grubby_info`` (``grubby --info=ALL``) and ``grubby_commands``;
  ``render_grub_word`` and ``grubby_word`` share the quoting rule below.

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

from ansible_collections.rdma.fabric.plugins.module_utils.resources._kernel_args import (
    edited_words, plan_edits, split_kernel_cmdline, word_name,
)


# --------------------------------------------------------------------------------------
# GRUB defaults files
# --------------------------------------------------------------------------------------

_ASSIGN_RE = re.compile(r"^(?P<lead>[ \t]*(?:export[ \t]+)?)GRUB_CMDLINE_LINUX=")
# characters a word may hold in grub.cfg without quoting (GRUB script lexer)
_GRUB_SAFE_RE = re.compile(r"^[A-Za-z0-9_.,:=/+@%^~!\-]+\Z")


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
    if _GRUB_SAFE_RE.fullmatch(word):
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
    return word if _GRUB_SAFE_RE.fullmatch(word) else '"%s"' % word


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
