# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A kernel module loaded (``modprobe NAME``) on the resource engine: what the gpudirect role's
"Load the peer-memory module" task does, as a resource ``state_check`` can check and apply.

The state is read as gdr_readiness reads it (``_gdr_readiness.read_host``): the kernel shows a
loaded module as ``$SYSFS_PATH/module/NAME/initstate`` = ``live``; ``/proc/modules`` only when
that sysfs has no ``module`` directory (a container's ``/proc/modules`` is the host's). A name
is spelled with ``_`` or ``-`` (modprobe takes both; the kernel shows ``_``). Loading only: an
unwanted module is never removed (``state: merged``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import find_tool, read_sysfs, read_text, run_tool, sysfs_path
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.resources._resource import Resource

# what modprobe takes as a module name (no option, no path)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]{0,63}\Z")


def canonical(name):
    """The module's name as the kernel shows it (``nvidia-peermem`` -> ``nvidia_peermem``)."""
    return name.replace("-", "_")


def loaded(name, proc_root="/proc"):
    """Whether the kernel has ``name`` loaded: sysfs ``module/NAME/initstate``, else /proc/modules."""
    name = canonical(name)
    if os.path.isdir(sysfs_path("module")):
        return read_sysfs(sysfs_path("module", name, "initstate")) == "live"
    text = read_text(os.path.join(proc_root, "modules")) or ""
    return any(line.split()[:1] == [name] for line in text.splitlines())


class KernelModuleResource(Resource):
    """One object, the module: config ``{name}``; have ``{name, loaded}``; the one command is
    ``modprobe NAME`` when it is not loaded."""

    name = "kernel_module"
    multi = False

    def normalize(self, entry, field):
        if not isinstance(entry, dict):
            raise ValidationError("%s=%r: expected a dict {name}" % (field, entry))
        unknown = sorted(str(k) for k in entry if k != "name")
        if unknown:
            raise ValidationError("%s: %s not an option of kernel_module (it takes name)" % (field, ", ".join(unknown)))
        name = entry.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValidationError("%s.name=%r: expected a kernel module name (letters, digits, '_' and '-')"
                                  % (field, name))
        return {"name": canonical(name)}

    def read(self, key, want):
        return {"name": want["name"], "loaded": loaded(want["name"])}

    def plan(self, key, want, have, state):
        if have is not None and have["loaded"]:
            return []
        return [["modprobe", want["name"]]]

    def predict(self, key, want, have, state):
        return dict(have, loaded=True)

    def apply(self, key, command):
        run_tool(self.module, [find_tool(self.module, command[0])] + command[1:])
