# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every file the collection writes, and every file a user names that it reads, goes through here.

Writes (:func:`write_atomic`): a temporary file created in the target's own directory
(``O_CREAT|O_EXCL|O_NOFOLLOW``, mode 0600), its mode and owner set on the open descriptor
(``fchmod``/``fchown``: a name swapped for a symlink in between is never chmod'ed or chown'ed),
written, ``fsync``'ed, renamed over the target (``rename`` replaces a symlink at the target,
never writes through it), then the directory ``fsync``'ed. A reader sees the old file or the
new one, never half of one; a failure leaves the old file and no temporary file.

Pipes (:func:`read_fd_tail`, :class:`TailBuffer`): a tool's output read in chunks keeping only
the last ``limit`` bytes (results are printed last), counting what was dropped.

Reads (:func:`read_regular`): ``O_NOFOLLOW|O_NONBLOCK`` (a symlink is refused, a FIFO is
opened without blocking and then refused), regular files only (``fstat`` on the descriptor),
at most ``limit`` bytes (more is an error, or with ``tail`` only the last ``limit`` bytes).

:func:`locked` serialises read-modify-write cycles (the health flap state) between the node
timer and Ansible runs with ``flock`` on a lock file next to the state.

Standard library only: the node timer runs it without Ansible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import contextlib
import errno
import fcntl
import os
import select
import stat
import sys
import tempfile
import time

MiB = 1024 * 1024
DEFAULT_READ_LIMIT = 16 * MiB


class FileError(OSError):
    """A refused or failed read or write; ``str()`` names the path and why."""

    def __str__(self):
        return str(self.strerror)


def _fsync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path, data, mode=0o644, uid=None, gid=None, make_dirs=None):
    """Replace ``path`` with ``data`` (bytes, or str written as UTF-8), mode ``mode`` set on the
    descriptor, owner ``uid``/``gid`` (None: the writer's) set on the descriptor when running
    as root. ``make_dirs``: a mode to create missing parent directories with (None: a missing
    directory is an error). Raises :class:`FileError` naming the path; the previous file, if
    any, is then unchanged."""
    if not isinstance(data, bytes):
        data = data.encode("utf-8")
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    if make_dirs is not None and not os.path.isdir(directory):
        try:
            os.makedirs(directory, make_dirs)
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise FileError(exc.errno, "creating %s failed: %s" % (directory, os.strerror(exc.errno)))
    if os.path.isdir(path) and not os.path.islink(path):
        raise FileError(errno.EISDIR, "%s is a directory" % path)
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise FileError(exc.errno, "writing %s failed: %s" % (path, os.strerror(exc.errno) if exc.errno else exc))
    try:
        try:
            os.fchmod(fd, mode)
            if os.geteuid() == 0 and (uid is not None or gid is not None):
                os.fchown(fd, -1 if uid is None else uid, -1 if gid is None else gid)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            mine = os.fstat(fd)
            there = os.lstat(tmp)
            if (there.st_dev, there.st_ino) != (mine.st_dev, mine.st_ino):
                raise FileError(errno.EEXIST, "writing %s failed: its temporary file %s was replaced behind "
                                              "our back: refused" % (path, tmp))
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, FileError):
            raise FileError(exc.errno, "writing %s failed: %s (the previous file, if any, is unchanged)"
                            % (path, os.strerror(exc.errno) if exc.errno else exc))
        raise
    _fsync_dir(directory)


def write_textfile(path, text):
    """A node timer's Prometheus textfile: ``path`` replaced atomically, 0644 (node_exporter's
    textfile collector reads it under its own account), parents made 0755; no path: stdout.
    Raises OSError/ValueError as write_atomic does."""
    if path:
        write_atomic(path, text, 0o644, make_dirs=0o755)
    else:
        sys.stdout.write(text)


def read_regular(path, limit=DEFAULT_READ_LIMIT, tail=False, what="file"):
    """The bytes of the regular file ``path``: no symlink followed, no FIFO or device opened
    for reading, at most ``limit`` bytes. Larger: :class:`FileError`, or with ``tail`` the last
    ``limit`` bytes. Raises :class:`FileError` (errno set, message naming ``what`` and the path)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileError(exc.errno, "%s %s is a symlink: refused (name the file itself)" % (what, path))
        raise FileError(exc.errno, "%s %s: %s" % (what, path, os.strerror(exc.errno) if exc.errno else exc))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileError(errno.EINVAL, "%s %s is not a regular file: refused" % (what, path))
        if tail and info.st_size > limit:
            os.lseek(fd, info.st_size - limit, os.SEEK_SET)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 * MiB, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        if not tail:
            raise FileError(errno.EFBIG, "%s %s is larger than %d bytes: refused" % (what, path, limit))
        data = data[-limit:]
    return data


def read_text(path, limit=DEFAULT_READ_LIMIT, tail=False, what="file"):
    """:func:`read_regular` decoded as UTF-8 (undecodable bytes replaced)."""
    return read_regular(path, limit, tail, what).decode("utf-8", "replace")


@contextlib.contextmanager
def locked(path, timeout=300.0):
    """Hold an exclusive ``flock`` on ``path + '.lock'`` (made 0600, no symlink followed) for
    the ``with`` block; waits at most ``timeout`` seconds, then :class:`FileError`. ``path``
    None: no lock (the caller keeps no state)."""
    if path is None:
        yield
        return
    lock = path + ".lock"
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(lock, flags, 0o600)
    except OSError as exc:
        raise FileError(exc.errno, "lock %s: %s" % (lock, os.strerror(exc.errno) if exc.errno else exc))
    try:
        deadline = time.time() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except (IOError, OSError) as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.time() > deadline:
                    raise FileError(errno.ETIMEDOUT, "lock %s still held by another run after %ds" % (lock, timeout))
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


class TailBuffer(object):
    """The last ``limit`` bytes of a stream kept in a deque of chunks (memory bounded by
    ``limit`` plus one chunk), with the count of bytes dropped from the front."""

    def __init__(self, limit):
        self.limit = max(0, int(limit))
        self.chunks = collections.deque()
        self.size = 0
        self.dropped = 0

    def add(self, chunk):
        if not chunk:
            return
        self.chunks.append(chunk)
        self.size += len(chunk)
        while self.size > self.limit and self.chunks:
            excess = self.size - self.limit
            first = self.chunks[0]
            if len(first) <= excess:
                self.chunks.popleft()
                self.size -= len(first)
                self.dropped += len(first)
            else:
                self.chunks[0] = first[excess:]
                self.size -= excess
                self.dropped += excess

    def data(self):
        return b"".join(self.chunks)


def read_fd_tail(fd, buf, deadline=None, chunk=64 * 1024):
    """Read the file descriptor ``fd`` (a pipe) into the :class:`TailBuffer` ``buf`` until end of
    file or ``deadline`` (a ``time.time()`` value; None: no bound). Returns True at end of file,
    False when the deadline came first (the caller kills the writer and may call again to drain).
    Memory stays within the buffer's limit plus one chunk, however much the writer prints."""
    while True:
        wait = None if deadline is None else deadline - time.time()
        if wait is not None and wait <= 0:
            return False
        try:
            ready = select.select([fd], [], [], wait)[0]
        except (IOError, OSError, select.error) as exc:
            if getattr(exc, "errno", None) == errno.EINTR or (exc.args and exc.args[0] == errno.EINTR):
                continue
            raise
        if not ready:
            continue
        try:
            data = os.read(fd, chunk)
        except OSError as exc:
            if exc.errno in (errno.EINTR, errno.EAGAIN):
                continue
            raise
        if not data:
            return True
        buf.add(data)
