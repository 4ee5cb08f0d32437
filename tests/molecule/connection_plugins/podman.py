# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test infrastructure (not shipped): containers.podman's podman connection with pipelining.

Molecule's inventory names the connection ``podman``; .config/molecule/config.yml puts this
directory first in ANSIBLE_CONNECTION_PLUGINS, so the scenarios' nodes are reached through
this class. A module then runs as one ``podman exec -i NODE python3`` with the module on
stdin, as over SSH with pipelining, instead of a mount, a mkdir, a copy, a chmod, the run and
an rm; the container is mounted only when a file is copied in or out. A stopped container
is unreachable (podman's own error), as a node SSH cannot reach is."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = """
name: podman
short_description: podman exec, pipelined (rdma.fabric's Molecule scenarios)
description:
  - containers.podman.podman with pipelining; test infrastructure of rdma.fabric, not shipped.
author: rdma.fabric contributors
options:
  remote_addr:
    description: The container's name or id.
    default: inventory_hostname
    vars:
      - name: inventory_hostname
      - name: ansible_host
      - name: ansible_podman_host
  remote_user:
    description: The user in the container; unset, the container's own.
    vars:
      - name: ansible_user
  podman_executable:
    description: The podman binary.
    default: podman
    vars:
      - name: ansible_podman_executable
    env:
      - name: ANSIBLE_PODMAN_EXECUTABLE
  podman_extra_args:
    description: Extra arguments for every podman call.
    default: ''
    vars:
      - name: ansible_podman_extra_args
    env:
      - name: ANSIBLE_PODMAN_EXTRA_ARGS
"""

import shlex  # noqa: E402

from ansible.errors import AnsibleConnectionFailure  # noqa: E402
from ansible.module_utils.common.text.converters import to_native  # noqa: E402
from ansible.plugins.connection import ConnectionBase, ensure_connect  # noqa: E402
from ansible.plugins.loader import connection_loader  # noqa: E402

PodmanConnection = connection_loader.get("containers.podman.podman", class_only=True)


class Connection(PodmanConnection):

    transport = "podman"
    has_pipelining = True

    def _connect(self):
        ConnectionBase._connect(self)     # no mount: only put_file/fetch_file need it
        self._connected = True
        return self

    def _mount(self):
        if self._mount_point is None:
            PodmanConnection._connect(self)

    @ensure_connect
    def exec_command(self, cmd, in_data=None, sudoable=False):
        if in_data is None:
            return PodmanConnection.exec_command(self, cmd, in_data=None, sudoable=sudoable)
        ConnectionBase.exec_command(self, cmd, in_data=in_data, sudoable=sudoable)
        args = ["exec", "-i"] + (["--user", self.user] if self.user else [])
        rc, out, err = self._podman(args, shlex.split(to_native(cmd, errors="surrogate_or_strict")), in_data)
        if rc in (125, 255) and not out and to_native(err).startswith("Error: "):
            # podman's own failure (a stopped or missing container; rc 125, or 255 for a stopped
            # one): unreachable, as SSH's 255 is and as the unpipelined connection's failed mkdir
            # of its temp dir is
            raise AnsibleConnectionFailure("podman exec on %s failed: %s" % (self._container_id, to_native(err).strip()))
        return rc, out, err

    def put_file(self, in_path, out_path):
        self._mount()
        return PodmanConnection.put_file(self, in_path, out_path)

    def fetch_file(self, in_path, out_path):
        self._mount()
        return PodmanConnection.fetch_file(self, in_path, out_path)
