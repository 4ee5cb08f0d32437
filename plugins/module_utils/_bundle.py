# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Support bundles (``playbooks/collect.yml``): the one place that reads one back.

A bundle is ``rdma_health``'s ``raw`` record (``health-raw.json``): every tool output and
sysfs value the node gave ``rdma_facts``, ``gdr_readiness`` and the health checks. Each
module's reader takes it as one more source of the same raw inputs (``raw["rdma"]``,
``raw["gdr"]``), so its pure derivation gives offline what it gives online. Accepted: the
node's bundle directory, its ``health-raw.json``, or the ``HOST.tar.gz`` archive of it
(read in memory, nothing extracted). Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tarfile

RAW_VERSION = 1
BUNDLE_FILE = "health-raw.json"


def _from_archive(path, option):
    try:
        with tarfile.open(path, "r:*") as archive:
            members = [m for m in archive.getmembers() if m.isfile() and os.path.basename(m.name) == BUNDLE_FILE]
            if len(members) != 1:
                raise ValueError("%s=%r: the archive holds %d %s files, expected one (an archive of "
                                 "playbooks/collect.yml)" % (option, path, len(members), BUNDLE_FILE))
            handle = archive.extractfile(members[0])
            return "%s:%s" % (path, members[0].name), handle.read().decode("utf-8")
    except (tarfile.TarError, IOError, OSError, UnicodeDecodeError) as exc:
        raise ValueError("%s=%r: not a readable bundle archive: %s" % (option, path, exc))


def read_bundle(path, option="bundle"):
    """``raw`` of a support bundle (directory, its JSON file or its .tar.gz), ``source`` set to
    ``bundle``. ValueError naming ``option`` and the path when it is none of them."""
    if os.path.isdir(path):
        target = os.path.join(path, BUNDLE_FILE)
    else:
        target = path
    text = None
    if os.path.isfile(target) and tarfile.is_tarfile(target):
        target, text = _from_archive(target, option)
    else:
        try:
            with open(target) as handle:
                text = handle.read()
        except (IOError, OSError, UnicodeDecodeError):
            raise ValueError("%s=%r: no %s in it (collect it with playbooks/collect.yml)" % (option, path, BUNDLE_FILE))
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise ValueError("%s=%r: %s is not JSON: %s" % (option, path, target, exc))
    if not isinstance(raw, dict) or raw.get("version") != RAW_VERSION or "rdma" not in raw:
        raise ValueError("%s=%r: %s is not an rdma_health raw record (version %s)" % (option, path, target, RAW_VERSION))
    raw["source"] = "bundle"
    return raw
