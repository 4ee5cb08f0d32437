# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The spec a role leaves on the node: the area's spec exactly as the drift check renders it
and sends to ``state_check`` (``_role_specs.build``, the role's ``__AREA_spec``), in one JSON
file per area under ``SPEC_DIR``, with its version. The node's periodic drift check
(``_drift_timer``) plans and checks the node against it with the same code as the drift check.

The file is the area object's plan's (``drift_spec``: a node_files config), written by the
role's node_files call: a converged node gets a read and no write. Mode 0600 (root, the user the
roles and the timer run as): the opensm spec holds opensm.conf with its keys (``sm_key`` ...),
which the check compares key by key, so they are kept, never readable by others; the file
holds nothing the node does not already hold (opensm.conf itself).

``version(spec)``: the first 16 hex digits of the sha256 of the canonical JSON (sorted keys, no
blanks); the file also names the collection version that wrote it. Standard library only (run
on the node by the health timer).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json

SPEC_DIR = "/etc/rdma-fabric/spec"
MODE = "0600"
# galaxy.yml's version (a unit test keeps the two equal)
COLLECTION_VERSION = "0.1.0"
FORMAT = 1


class SpecError(ValueError):
    """A spec file that is not one this module wrote (garbled, another area, a wrong version)."""


def canonical(spec):
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def version(spec):
    """The spec's version: sha256 of its canonical JSON, 16 hex digits."""
    return hashlib.sha256(canonical(spec).encode("utf-8")).hexdigest()[:16]


def path(area, spec_dir=SPEC_DIR):
    return "%s/%s.json" % (spec_dir.rstrip("/"), area)


def content(area, spec):
    """The file's text: ``{format, area, spec_version, collection_version, spec}``."""
    document = {"format": FORMAT, "area": area, "spec_version": version(spec),
                "collection_version": COLLECTION_VERSION, "spec": spec}
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def spec_file(area, spec):
    """The node_files file entry (path, content, mode 0600)."""
    return {"path": path(area), "content": content(area, spec), "mode": MODE}


def node_files(area, spec):
    """The area plan's ``drift_spec``: the node_files config that leaves the spec on the node."""
    return {"files": [spec_file(area, spec)], "units": []}


def load(text, area):
    """``(spec, spec_version, collection_version)`` of a spec file's ``text`` for ``area``;
    SpecError naming what is wrong (never the content: it may hold a key)."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise SpecError("not JSON (%s at line %s)" % (type(exc).__name__, getattr(exc, "lineno", "?")))
    if not isinstance(document, dict) or not isinstance(document.get("spec"), dict):
        raise SpecError("expected {format, area, spec_version, collection_version, spec}")
    if document.get("format") != FORMAT:
        raise SpecError("format %r: this collection reads format %d" % (document.get("format"), FORMAT))
    if document.get("area") != area:
        raise SpecError("holds the area %r, not %r" % (document.get("area"), area))
    spec = document["spec"]
    if document.get("spec_version") != version(spec):
        raise SpecError("spec_version %r does not match its spec (%s): edited by hand?"
                        % (document.get("spec_version"), version(spec)))
    return spec, document["spec_version"], str(document.get("collection_version") or "")
