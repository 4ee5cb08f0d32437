# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A module-level regular expression compiled where it is first used, not where its module is
imported.

The drift check's action imports the node areas' modules, and with them their readers' parsers
and resources, in the controller's main process at every run: about a hundred patterns that only
the node ever matches (the controller builds specs, it parses no tool output). ``re.compile`` of
those was a fifth of that import (64 M of 310 M instructions, callgrind). A pattern the controller
itself uses at every run (the reports') stays a plain ``re.compile``. ``compile(pattern, flags)`` returns an object with the compiled
pattern's methods and attributes; the first use compiles it, once per process.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# what a compiled pattern offers (fullmatch: Python 3.4+)
_ATTRIBUTES = ("match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer", "scanner",
               "pattern", "flags", "groups", "groupindex")


class LazyPattern(object):
    """``re.compile(pattern, flags)``, compiled at the first use of any of its attributes; from
    then on the instance holds the compiled pattern's own bound methods and attributes."""

    def __init__(self, pattern, flags=0):
        self._source = (pattern, flags)

    def __getattr__(self, name):
        # only called for what the instance does not hold yet: before the first compile (or a
        # name no pattern has, which raises AttributeError as the pattern itself would)
        compiled = self.compiled()
        return getattr(compiled, name)

    def compiled(self):
        """The compiled pattern (``re.Pattern``)."""
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = re.compile(*self._source)
            self.__dict__["_compiled"] = compiled
            for name in _ATTRIBUTES:
                if hasattr(compiled, name):
                    self.__dict__[name] = getattr(compiled, name)
        return compiled

    def __repr__(self):
        return "LazyPattern(%r)" % (self._source[0],)


def compile(pattern, flags=0):   # pylint: disable=redefined-builtin
    """``re.compile``'s pattern, compiled at its first use."""
    return LazyPattern(pattern, flags)
