# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the filter plugins: a module_utils error becomes AnsibleFilterError naming the filter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import PlanError


def wrap(function, errors):
    """``function`` as a filter: ``errors`` (an exception class or tuple) raised inside it
    become AnsibleFilterError("<filter name>: <message>")."""
    def run(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except errors as exc:
            raise AnsibleFilterError("%s: %s" % (function.__name__, exc))
    run.__name__ = function.__name__
    run.__doc__ = function.__doc__
    return run


def planner(function):
    """A module_utils planner as a filter: its PlanError becomes AnsibleFilterError with the
    same message (the message already names the variable and the value)."""
    def run(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except PlanError as exc:
            raise AnsibleFilterError(str(exc))
    run.__name__ = function.__name__
    run.__doc__ = function.__doc__
    return run
