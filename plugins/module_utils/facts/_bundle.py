# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Support bundles (``playbooks/collect.yml``): the one place that reads one back.

A bundle is ``rdma_health``'s ``raw`` record (``health-raw.json``): every tool output and
sysfs value the node gave ``rdma_facts``, ``gdr_readiness`` and the health checks. Each
module's reader takes it as one more source of the same raw inputs (``raw["rdma"]``,
``raw["gdr"]``), so its pure derivation gives offline what it gives online. Accepted: the
node's bundle directory, its ``health-raw.json``, or the ``HOST.tar.gz`` archive of it
(read in memory, nothing extracted, bounded in size and member count). Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import io
import json
import os
import tarfile

from ansible_collections.rdma.fabric.plugins.module_utils.common import _fileio

RAW_VERSION = 1
BUNDLE_FILE = "health-raw.json"
# Bounds on what a bundle may cost the controller: a file or archive read is at most
# BUNDLE_LIMIT bytes, health-raw.json at most MEMBER_LIMIT once inflated (a big fabric's
# record is a few MiB), the archive scanned for at most MAX_MEMBERS members and SCAN_LIMIT
# inflated bytes (playbooks/collect.yml writes a few dozen members).
BUNDLE_LIMIT = 64 * _fileio.MiB
MEMBER_LIMIT = 64 * _fileio.MiB
MAX_MEMBERS = 10000
SCAN_LIMIT = 1024 * _fileio.MiB


def _from_archive(data, path, option):
    """``(source, text)`` of the one health-raw.json in the archive ``data``: members read
    lazily, bounded in count, in inflated size, and in the bytes scanned to find them."""
    found = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            count = 0
            while True:
                member = archive.next()
                if member is None:
                    break
                count += 1
                if count > MAX_MEMBERS:
                    raise ValueError("%s=%r: the archive has more than %d members: refused" % (option, path, MAX_MEMBERS))
                if member.offset_data + member.size > SCAN_LIMIT:
                    raise ValueError("%s=%r: the archive inflates to more than %d bytes: refused" % (option, path, SCAN_LIMIT))
                if not (member.isfile() and os.path.basename(member.name) == BUNDLE_FILE):
                    continue
                if member.size > MEMBER_LIMIT:
                    raise ValueError("%s=%r: %s is larger than %d bytes: refused" % (option, path, member.name, MEMBER_LIMIT))
                handle = archive.extractfile(member)
                text = handle.read(MEMBER_LIMIT + 1)
                if len(text) > MEMBER_LIMIT:
                    raise ValueError("%s=%r: %s is larger than %d bytes: refused" % (option, path, member.name, MEMBER_LIMIT))
                found.append(("%s:%s" % (path, member.name), text.decode("utf-8")))
    except (tarfile.TarError, EOFError, IOError, OSError, UnicodeDecodeError) as exc:
        raise ValueError("%s=%r: not a readable bundle archive: %s" % (option, path, exc))
    if len(found) != 1:
        raise ValueError("%s=%r: the archive holds %d %s files, expected one (an archive of "
                         "playbooks/collect.yml)" % (option, path, len(found), BUNDLE_FILE))
    return found[0]


def read_bundle(path, option="bundle"):
    """``raw`` of a support bundle (directory, its JSON file or its .tar.gz), ``source`` set to
    ``bundle``. ValueError naming ``option`` and the path when it is none of them. The file is
    read bounded (``BUNDLE_LIMIT``), regular files only: a symlink (out of the bundle or not)
    is refused, a FIFO is never opened for a blocking read."""
    if os.path.isdir(path):
        target = os.path.join(path, BUNDLE_FILE)
    else:
        target = path
    try:
        data = _fileio.read_regular(target, BUNDLE_LIMIT, what="%s=%r:" % (option, path))
    except _fileio.FileError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise ValueError("%s=%r: no %s in it (collect it with playbooks/collect.yml)" % (option, path, BUNDLE_FILE))
        raise ValueError(str(exc))
    if data[:2] == b"\x1f\x8b" or data[257:262] == b"ustar" or data[:3] in (b"BZh", b"\xfd7z"):
        target, text = _from_archive(data, target, option)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("%s=%r: no %s in it (collect it with playbooks/collect.yml)" % (option, path, BUNDLE_FILE))
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise ValueError("%s=%r: %s is not JSON: %s" % (option, path, target, exc))
    if not isinstance(raw, dict) or raw.get("version") != RAW_VERSION or "rdma" not in raw:
        raise ValueError("%s=%r: %s is not an rdma_health raw record (version %s)" % (option, path, target, RAW_VERSION))
    raw["source"] = "bundle"
    return raw
