# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet consistency and nccl.conf read-back filters; documentation in the NAME.yml files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import wrap
from ansible_collections.rdma.fabric.plugins.module_utils import _nccl
from ansible_collections.rdma.fabric.plugins.module_utils import _nccl_consistency


def nccl_fleet_diff(entries, groups=None, per_node=None):
    return _nccl_consistency.fleet_diff(entries, groups=groups, per_node=per_node)


def nccl_parse_conf(text):
    if not isinstance(text, str):
        raise _nccl.NcclError("expected the text of an nccl.conf file, got %s" % type(text).__name__)
    return _nccl.parse_conf(text)


def nccl_conf_diff(text, settings):
    if not isinstance(text, str):
        raise _nccl.NcclError("expected the text of an nccl.conf file, got %s" % type(text).__name__)
    return _nccl_consistency.conf_diff(text, settings)


def _wrap(function):
    return wrap(function, _nccl.NcclError)


class FilterModule(object):
    def filters(self):
        return dict((function.__name__, _wrap(function))
                    for function in (nccl_fleet_diff, nccl_parse_conf, nccl_conf_diff))
