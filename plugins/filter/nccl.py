# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn rdma_facts into NCCL settings; documentation in the NAME.yml files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.rdma.fabric.plugins.plugin_utils._filters import wrap
from ansible_collections.rdma.fabric.plugins.module_utils import _nccl


def _wrap(function):
    return wrap(function, _nccl.NcclError)


def nccl_ib_hca(rails, ports="auto", exclude=None):
    return _nccl.ib_hca(rails, ports=ports, exclude=exclude)


def nccl_gid_index(rails, addresses=None):
    return _nccl.gid_index(rails, addresses=addresses)


def nccl_tc(dscp, ecn=0):
    return _nccl.traffic_class(dscp, ecn=ecn)


def nccl_gdr_level(value):
    return _nccl.gdr_level(value)


def nccl_validate(settings, allowed=None):
    """Check names and values of a settings dict; return it unchanged when valid."""
    if not isinstance(settings, dict):
        raise _nccl.NcclError("expected a dict of NAME: value, got %s" % type(settings).__name__)
    present = dict((name, value) for name, value in settings.items() if value is not None)
    _nccl.validate_names(list(present), allowed)
    for name, value in present.items():
        _nccl.format_value(name, value)
        if name == "NCCL_NET_GDR_LEVEL":
            _nccl.gdr_level(value)
    return settings


def nccl_conf(settings, allowed=None, header=None):
    nccl_validate(settings, allowed)
    return _nccl.render_conf(settings, allowed=allowed, header=header)


class FilterModule(object):
    def filters(self):
        functions = (nccl_ib_hca, nccl_gid_index, nccl_tc, nccl_gdr_level, nccl_validate, nccl_conf)
        result = {}
        for function in functions:
            wrapped = _wrap(function)
            wrapped.__name__ = function.__name__
            wrapped.__doc__ = function.__doc__
            result[function.__name__] = wrapped
        return result
