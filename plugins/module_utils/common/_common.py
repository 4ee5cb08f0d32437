# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by every rdma.fabric module.

Each module keeps one reader as its only I/O seam; these helpers are what that reader and
the apply step call, so that tool invocation, locale and the sysfs root are handled the
same way everywhere.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio

# Tools print localized numbers and messages otherwise; parsers expect the C locale.
C_LOCALE = {"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}


class PlanError(ValueError):
    """A role's inputs that cannot be planned (a variable, or facts of the wrong shape); the
    message names the variable and the value. The roles' filters raise it as
    AnsibleFilterError, state_check reports it as the area's config record."""


class ToolError(Exception):
    """A tool was missing or failed; carries what an operator needs to see."""

    def __init__(self, msg, argv=None, rc=None, stdout="", stderr=""):
        super(ToolError, self).__init__(msg)
        self.msg = msg
        self.argv = argv
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr

    def as_result(self):
        return {"msg": self.msg, "cmd": self.argv, "rc": self.rc,
                "stdout": self.stdout, "stderr": self.stderr}


def sysfs_root():
    """The sysfs mount point: ``$SYSFS_PATH`` as libibverbs honours it, else ``/sys``."""
    return os.environ.get("SYSFS_PATH") or "/sys"


def sysfs_path(*parts):
    return os.path.join(sysfs_root(), *parts)


def read_sysfs(path, default=None):
    """Read one sysfs attribute, stripped; ``default`` when it does not exist."""
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError) as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) and default is not None:
            return default
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise


def write_sysfs(path, value):
    """Write one sysfs attribute the way ``echo VALUE > PATH`` does, then read it back.

    Returns the value read back; raises ToolError naming the path when the kernel refuses
    the write or keeps a different value.
    """
    text = "%s\n" % value
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except (IOError, OSError) as exc:
        raise ToolError("writing %r to %s failed: %s" % (str(value), path, os.strerror(exc.errno) if exc.errno else exc))
    back = read_sysfs(path)
    if back != str(value).strip():
        raise ToolError("wrote %r to %s but it reads back %r" % (str(value), path, back))
    return back


def find_tool(module, name, required=True):
    """Path of a tool, or ToolError that names it (and where it was looked for)."""
    path = module.get_bin_path(name, required=False)
    if not path and required:
        raise ToolError("required tool %s was not found in PATH or /sbin, /usr/sbin, /usr/local/sbin" % name)
    return path


def run_tool(module, argv, check_rc=True):
    """Run a tool in the C locale; return (rc, stdout, stderr).

    With ``check_rc`` a non-zero exit raises ToolError with the tool's own words, taken
    from stderr or, for tools such as mlnx_qos that print errors on stdout, from stdout.
    """
    rc, out, err = module.run_command(argv, environ_update=C_LOCALE)
    if check_rc and rc != 0:
        words = (err or "").strip() or (out or "").strip()
        raise ToolError("%s failed (rc=%s): %s" % (" ".join(argv), rc, words),
                        argv=argv, rc=rc, stdout=out, stderr=err)
    return rc, out, err


def umad_address(ca=None, port=None, timeout=None):
    """infiniband-diags' common options for the local port a query goes out of and its MAD
    timeout (ibdiag_common.c: -C ca, -P port, -t ms), as argv; an unset one is left out."""
    argv = []
    if ca:
        argv += ["-C", ca]
    if port:
        argv += ["-P", str(port)]
    if timeout:
        argv += ["-t", str(timeout)]
    return argv


# Linux IFNAMSIZ is 16 with the NUL: a netdev name has at most 15 bytes (dev_valid_name()).
IFNAME_MAX = 15
# IB_DEVICE_NAME_MAX is 64 with the NUL.
RDMA_DEVICE_MAX = 63


def check_name(field, value, what="interface", max_len=IFNAME_MAX):
    """A kernel object name as the kernel accepts it (dev_valid_name(): not empty, not ``.``
    or ``..``, no ``/``, ``:`` or whitespace, at most ``max_len`` bytes), and not starting
    with ``-`` (it would read as an option to a tool). Returns it; raises ValueError naming
    the field and the value."""
    if not isinstance(value, str) or not value:
        raise ValueError("%s=%r: expected a %s name" % (field, value, what))
    if value in (".", ".."):
        raise ValueError("%s=%r: not a %s name" % (field, value, what))
    bad = [c for c in value if c in "/:" or c.isspace() or ord(c) < 32]
    if bad:
        raise ValueError("%s=%r: a %s name cannot contain %r" % (field, value, what, bad[0]))
    if value.startswith("-"):
        raise ValueError("%s=%r: a %s name cannot start with '-'" % (field, value, what))
    if len(value.encode("utf-8")) > max_len:
        raise ValueError("%s=%r: a %s name has at most %d characters" % (field, value, what, max_len))
    return value


def read_text(path, limit=16 * 1024 * 1024):
    """The text of the regular file at ``path`` (at most ``limit`` bytes), or None when it
    cannot be read (missing, no permission, a symlink, a FIFO or device, too big):
    ``_fileio.read_text``, which never follows a symlink nor blocks on a FIFO."""
    try:
        return _fileio.read_text(path, limit)
    except (IOError, OSError):
        return None


def captured_option(keys):
    """The argument spec of a ``captured`` option: a dict of tool texts, one str per name in ``keys``."""
    return dict(type="dict", options=dict((key, dict(type="str")) for key in keys))


def captured_texts(module, keys):
    """``module.params["captured"]`` without its empty texts, or None when not given. Given
    with every text empty, the module fails naming ``keys``: nothing to read is an error."""
    captured = module.params["captured"]
    if captured is None:
        return None
    captured = dict((key, value) for key, value in captured.items() if value)
    if not captured:
        module.fail_json(msg="captured: give at least one of %s" % ", ".join(keys))
    return captured
