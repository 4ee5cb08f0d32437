# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``kernel_cmdline`` on the resource engine: the boot configuration read, the wanted kernel
arguments planned into it, the files written and the boot loader updated.

* ``read_state`` is the only reader (the GRUB defaults files and drop-ins, or
  ``grubby --info=ALL``); ``write_file_atomic`` and the update command (``update-grub`` /
  ``grub-mkconfig``, ``resolve_update_command``) write; ``update_pending_marker`` is the file
  that says a write has not reached grub.cfg yet;
* ``KernelCmdlineResource``: the ``kernel_cmdline`` module on the resource engine (``_resource``).

The text of the boot configuration (GRUB's shell and script quoting, grubby's entries) is
parsed and edited in ``_grub_config``; the kernel-argument model (split, validate, plan,
``/proc/cmdline``) is ``_kernel_args``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio
from ansible_collections.rdma.fabric.plugins.module_utils.resources import _kernel_args as ka
from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError, run_tool
from ansible_collections.rdma.fabric.plugins.module_utils.resources._grub_config import (
    edit_grub_files, effective_words, grub_d_files, grubby_commands, parse_grub_assignments,
    parse_grubby_info,
)
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import Resource


# --------------------------------------------------------------------------------------
# reader and apply (the only I/O)
# --------------------------------------------------------------------------------------

def _read_text(path):
    with open(path) as handle:
        return handle.read()


def update_pending_marker(grub_file):
    """The file that says a run wrote the GRUB files and the boot-loader update (update-grub)
    has not finished since: made before the first write, removed once the update command
    succeeded. A run killed, or a node that lost power, in between leaves it, and the next run
    runs the update again although the files already hold the arguments (without it, the files
    would look done while grub.cfg, what the node boots, never got the arguments: every
    reboot would come back without them)."""
    return grub_file + ".rdma-fabric-update-pending"


def read_state(module, backend, grub_file, grubby=None):
    """The only reader: the boot configuration as text/entries (grub: and whether an update
    of the boot loader is still pending, ``update_pending``)."""
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
    return {"backend": "grub", "files": files,
            "update_pending": os.path.lexists(update_pending_marker(grub_file))}


def write_file_atomic(module, path, text):
    """Write ``text`` to ``path`` through ``_fileio.write_atomic`` (a temporary file next to
    it, mode and owner set on its descriptor, fsync, rename; no symlink followed): an existing
    file keeps its mode, owner and SELinux context (a new one is 0644), a reader never sees
    half a file, and a failure leaves the previous file in place."""
    mode, uid, gid, context = 0o644, None, None, None
    try:
        info = os.lstat(path)
        if stat.S_ISREG(info.st_mode):
            mode, uid, gid = stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid
            if module.selinux_enabled():
                context = module.selinux_context(path)
    except OSError:
        pass
    _fileio.write_atomic(path, text, mode, uid, gid)
    if context:
        module.set_context_if_different(path, context, False)


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


# --------------------------------------------------------------------------------------
# the kernel_cmdline resource (the engine in _resource runs it)
# --------------------------------------------------------------------------------------

class KernelCmdlineResource(Resource):
    """``kernel_cmdline`` on the resource engine: one object, the boot configuration.

    want: the validated arguments and the backend; have: the files (grub) or entries
    (grubby) as read; commands: ``("write", path, text)`` and ``("run", argv)``. The
    running command line (``/proc/cmdline``) is read with the state and gives
    ``reboot_required`` and ``running``; ``backend``, ``changed_files``, ``notes`` and
    ``backup_files`` are the module's other result keys."""

    name = "kernel_cmdline"
    multi = False

    def __init__(self, module):
        super(KernelCmdlineResource, self).__init__(module)
        self.extras = {"backend": None, "changed_files": [], "notes": []}
        self.planned = self.backup = False
        self.previous = {}          # path -> text before this run's write (grub backend)
        self.written = []
        self.grub_file = None
        self.marked = False         # this run made the update-pending marker

    # --- want
    def normalize(self, entry, field):
        wants, warnings = ka.validate_arguments(entry["arguments"])
        for key in ("grub_file", "proc_cmdline"):
            path = entry[key]
            if path is not None and (not isinstance(path, str) or not os.path.isabs(path)
                                     or any(c in path for c in "\r\n\x00")):
                raise ValidationError("%s=%r: expected an absolute path" % (key, path))
        command = entry["update_command"]
        if command and not all(isinstance(word, str) and word.strip() for word in command):
            raise ValidationError("update_command=%r: expected the command as a list of non-empty words (argv)"
                                  % (command,))
        for warning in warnings:
            self.module.warn(warning)
        backend = entry["backend"]
        grubby = self.module.get_bin_path("grubby") if backend in ("auto", "grubby") else None
        if backend == "auto":
            backend = "grubby" if grubby else "grub"
        if backend == "grubby" and not grubby:
            raise ValidationError("backend=grubby but grubby was not found in PATH")
        self.extras["backend"] = backend
        self.backup = entry["backup"]
        self.grub_file = entry["grub_file"]
        return {"arguments": wants, "backend": backend, "grubby": grubby, "grub_file": entry["grub_file"],
                "update_command": entry["update_command"], "backup": entry["backup"],
                "proc_cmdline": entry["proc_cmdline"]}

    # --- have
    def read(self, key, want):
        if "running" not in self.extras:
            proc_text = ka.read_proc_cmdline(want["proc_cmdline"])
            if proc_text is None:
                self.module.warn("cannot read %s; reboot_required assumes the running kernel lacks every wanted "
                                 "argument" % want["proc_cmdline"])
                words = None
            else:
                words = ka.split_kernel_cmdline(proc_text)
            running = [w for w in want["arguments"] if words is None or not ka.satisfied(words, w)]
            self.extras.update(running=running, reboot_required=bool(running))
        return read_state(self.module, want["backend"], want["grub_file"], want["grubby"])

    def export(self, key, have):
        if have["backend"] == "grubby":
            entries = have["entries"]
            return {"arguments": entries[0]["words"] if entries else [],
                    "entries": [{"kernel": e["kernel"], "arguments": e["words"]} for e in entries]}
        assignments = []
        for path, text in have["files"]:
            assignments.extend(parse_grub_assignments(text, path))
        state = {"arguments": effective_words(assignments)}
        if have.get("update_pending"):
            state["boot_loader_update_pending"] = True
        return state

    # --- plan
    def _check_contradiction(self, want, have):
        """The command line after the edit must not ask for opposite things through a
        wanted argument and one already there (``iommu=nopt`` with ``iommu.passthrough=1``)."""
        if have["backend"] == "grubby":
            lines = [ka.edited_words(e["words"], want["arguments"]) for e in have["entries"]]
        else:
            lines = [self.export(None, self.predict(None, want, have, "merged"))["arguments"]]
        names = set(w["name"] for w in want["arguments"] if w["state"] == "present")
        for words in lines:
            conflict = ka.contradiction(words)
            if conflict and names & set(ka.word_name(w) for w, dummy in conflict):
                raise ValidationError("arguments: the command line would hold both %s and %s, which "
                                      "contradict each other: %s" % (conflict[0][0], conflict[1][0], conflict[0][1]))

    def plan(self, key, want, have, state):
        first = not self.planned
        self.planned = True
        self._check_contradiction(want, have)
        if have["backend"] == "grubby":
            return [("run", argv) for argv in grubby_commands(want["grubby"], have["entries"], want["arguments"])]
        new_texts, dummy, dummy, notes = edit_grub_files(have["files"], want["arguments"])
        order = [path for path, dummy in have["files"] if path in new_texts]
        if first:
            self.extras.update(changed_files=order, notes=notes)
            self.previous = dict((path, text) for path, text in have["files"] if path in new_texts)
            for note in notes:
                if "grub-mkconfig reads after" in note:
                    self.module.warn(note)
        if not new_texts and not have.get("update_pending"):
            return []
        if not new_texts and first:
            marker = update_pending_marker(want["grub_file"])
            self.extras["notes"].append("the boot-loader update after an earlier run's write of %s did not finish "
                                        "(%s is there): running it again" % (want["grub_file"], marker))
        try:
            update = resolve_update_command(self.module, want["update_command"])
        except ToolError as exc:
            raise ValidationError(exc.msg)
        return [("write", path, new_texts[path]) for path in order] + [("run", update)]

    def predict(self, key, want, have, state):
        if have["backend"] == "grubby":
            return dict(have, entries=[dict(e, words=ka.edited_words(e["words"], want["arguments"]))
                                       for e in have["entries"]])
        new_texts = edit_grub_files(have["files"], want["arguments"])[0]
        return dict(have, files=[(path, new_texts.get(path, text)) for path, text in have["files"]],
                    update_pending=False)

    # --- apply
    def apply(self, key, command):
        if command[0] == "write":
            dummy, path, text = command
            if not self.written:
                self._mark_update_pending()
            if self.backup and os.path.exists(path):
                self.extras.setdefault("backup_files", []).append(self.module.backup_local(path))
            try:
                write_file_atomic(self.module, path, text)
            except (IOError, OSError) as exc:
                raise ToolError("writing %s failed (%s); grub.cfg not regenerated%s"
                                % (path, exc, self._restore()))
            self.written.append(path)
            return
        argv = command[1]
        try:
            run_tool(self.module, argv)
        except ToolError as exc:
            if self.written and self.extras["backend"] == "grub":
                exc.msg = "regenerating grub.cfg failed (%s)%s" % (exc.msg, self._restore())
            raise
        if self.extras["backend"] == "grub":
            self._unmark(always=True)

    def _mark_update_pending(self):
        """Before the first write: the marker that the boot loader is not yet updated. It
        stays when the run ends between the write and a successful update (killed, power lost,
        the update failed and the previous files could not be put back), so that the next run
        runs the update again."""
        marker = update_pending_marker(self.grub_file)
        if not os.path.lexists(marker):
            try:
                _fileio.write_atomic(marker, "# rdma.fabric.kernel_cmdline wrote %s; the boot-loader update (update-grub) "
                                             "has not finished since. The next run runs it again.\n" % self.grub_file)
            except (IOError, OSError) as exc:
                raise ToolError("writing %s failed (%s); nothing written" % (marker, exc))
            self.marked = True

    def _unmark(self, always=False):
        """Remove the marker: after the update succeeded (``always``), or after the files were put
        back when this run made it (one an earlier run left stays: its write is still not booted)."""
        if always or self.marked:
            try:
                os.unlink(update_pending_marker(self.grub_file))
            except OSError:
                pass
            self.marked = False

    def _restore(self):
        """After a failed write or boot-loader update: put the previous text of every GRUB
        file this run wrote back in place (atomically), so the files match the grub.cfg the
        next boot reads. Returns the sentence the failure message ends with."""
        if not self.written:
            self._unmark()
            return ""
        restored, failed = [], []
        for path in self.written:
            try:
                write_file_atomic(self.module, path, self.previous[path])
                restored.append(path)
            except (IOError, OSError, KeyError) as exc:
                failed.append("%s (%s)" % (path, exc))
        self.written = []
        if not failed:
            self._unmark()
        backups = self.extras.get("backup_files") or []
        kept = "; backup kept: %s" % ", ".join(backups) if backups else "; no backup (backup=false)"
        text = ""
        if restored:
            text += "; the previous %s put back in place, the boot configuration is unchanged" % ", ".join(restored)
        if failed:
            text += "; putting back the previous text FAILED for %s: it holds the new arguments" % ", ".join(failed)
        return text + kept

    def render(self, command):
        if command[0] == "write":
            return "write %s" % command[1]
        return " ".join(command[1])

    def extra_result(self):
        return dict(self.extras)
