# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's module_utils a node runs without Ansible (the health role's periodic check):
an entry file and every module_utils file it imports, transitively, read on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os

MODULE_UTILS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_utils")
_PACKAGE = "ansible_collections.rdma.fabric.plugins.module_utils"


def _imported(root, rel):
    """The module_utils files (paths relative to ``root``) that the file ``rel`` imports."""
    with open(os.path.join(root, rel)) as handle:
        tree = ast.parse(handle.read(), rel)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith(_PACKAGE + "."):
            base = node.module[len(_PACKAGE):].lstrip(".").replace(".", "/")
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            base, names = "", [a.name[len(_PACKAGE) + 1:].replace(".", "/") for a in node.names
                               if a.name.startswith(_PACKAGE + ".")]
        else:
            continue
        for name in names:
            for candidate in (base + ".py", "%s/%s.py" % (base, name) if base else name + ".py"):
                if candidate != ".py" and os.path.isfile(os.path.join(root, candidate)):
                    found.append(candidate)
    return found


def module_utils_closure(entry):
    """``entry`` (a module_utils file) and every module_utils file it imports, transitively,
    with the ``__init__.py`` of each subpackage: what the node needs to run it, and no more."""
    root = os.path.dirname(os.path.abspath(entry))
    # an entry in a subpackage (reports/_health_timer.py): every path is relative to module_utils
    top = root
    while os.path.basename(top) != "module_utils" and os.path.dirname(top) != top:
        top = os.path.dirname(top)
    root = top if os.path.basename(top) == "module_utils" else root
    seen, todo = set(), [os.path.relpath(os.path.abspath(entry), root)]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        todo.extend(_imported(root, rel))
    for rel in list(seen):
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            seen.add("/".join(parts[:depth]) + "/__init__.py")
    return [os.path.join(root, rel) for rel in sorted(seen)], root


def files(entry):
    """``[{path, content}]``, path relative to module_utils: ``entry`` (a path relative to
    module_utils) and every module_utils file it imports, transitively."""
    out = []
    paths, root = module_utils_closure(os.path.join(MODULE_UTILS, entry))
    for path in paths:
        with open(path) as handle:
            out.append({"path": os.path.relpath(path, root), "content": handle.read()})
    return out
