# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the module_utils readers use of AnsibleModule, on a node without Ansible: the node's
periodic health check (``reports/_health_timer``) and drift check (``drift/_drift_timer``) run
them with it. Standard library only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import subprocess
import sys

SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")


class NodeModule(object):
    """What the module_utils readers use of AnsibleModule, on a node without Ansible."""

    check_mode = False

    def get_bin_path(self, name, required=False, opt_dirs=None):
        path = os.pathsep.join([os.environ.get("PATH", "/usr/bin:/bin")] + list(SBIN))
        found = shutil.which(name, path=path)
        if not found and required:
            raise OSError("%s not found" % name)
        return found

    def run_command(self, argv, environ_update=None, check_rc=False):
        env = dict(os.environ)
        env.update(environ_update or {})
        proc = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=env, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    def warn(self, msg):
        sys.stderr.write("warning: %s\n" % msg)
