# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Input checks shared by the QoS modules (mlnx_qos, lldp_dcb, dcqcn).

Every check raises ValidationError with a message that names the field (as the user
wrote it, e.g. ``config.pfc[1]``) and the offending value, so a playbook author can find
the typo without reading the module. Modules run these before any write.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


import math


class ValidationError(ValueError):
    """Bad input; ``msg`` names the field and the value."""

    def __init__(self, msg):
        super(ValidationError, self).__init__(msg)
        self.msg = msg


def as_int(field, value):
    """``value`` as an int, refusing bools, floats with a fraction and non-numbers."""
    if isinstance(value, bool):
        raise ValidationError("%s=%r: expected an integer" % (field, value))
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValidationError("%s=%r: expected an integer, not NaN or an infinity" % (field, value))
        if value != int(value):
            raise ValidationError("%s=%r: expected a whole number" % (field, value))
        return int(value)
    try:
        return int(str(value).strip(), 10)
    except (TypeError, ValueError):
        raise ValidationError("%s=%r: expected an integer" % (field, value))


def int_in_range(field, value, low, high, what=None):
    number = as_int(field, value)
    if number < low or number > high:
        raise ValidationError("%s=%r: %s must be %d-%d" % (field, value, what or "value", low, high))
    return number


def priority(field, value):
    return int_in_range(field, value, 0, 7, "priority")


def dscp(field, value):
    return int_in_range(field, value, 0, 63, "DSCP")


def priority_list(field, values):
    """A list of distinct priorities 0-7, returned sorted."""
    if values is None:
        return None
    if not isinstance(values, (list, tuple)):
        raise ValidationError("%s=%r: expected a list of priorities 0-7" % (field, values))
    checked = [priority("%s[%d]" % (field, i), v) for i, v in enumerate(values)]
    refuse_duplicates(field, checked, "priority")
    return sorted(checked)


def refuse_duplicates(field, values, what="value"):
    """Duplicates are refused, naming them and where they are, never dropped in silence."""
    for index, value in enumerate(values):
        if value in values[:index]:
            raise ValidationError("%s=%r: %s %r is given twice (%s[%d] and %s[%d]); give each once"
                                  % (field, list(values), what, value, field, values.index(value), field, index))


def list_of_8(field, values, check):
    """Exactly 8 entries (one per priority, TC or buffer), each passed through ``check``."""
    if values is None:
        return None
    if not isinstance(values, (list, tuple)):
        raise ValidationError("%s=%r: expected a list of 8 values" % (field, values))
    if len(values) != 8:
        raise ValidationError("%s=%r: expected exactly 8 values, got %d" % (field, list(values), len(values)))
    return [check("%s[%d]" % (field, i), v) for i, v in enumerate(values)]


def ets_bandwidth(field_tsa, tsa, field_bw, tcbw):
    """mlnx_qos / the kernel rule: ETS TCs share 100 %, every other TC gets 0 %."""
    ets_tcs = [tc for tc in range(8) if tsa[tc] == "ets"]
    for tc in range(8):
        if tsa[tc] != "ets" and tcbw[tc]:
            raise ValidationError(
                "%s[%d]=%s: TC %d is %s in %s, only ETS TCs take a bandwidth share (must be 0)"
                % (field_bw, tc, tcbw[tc], tc, tsa[tc], field_tsa))
    if ets_tcs:
        total = sum(tcbw[tc] for tc in ets_tcs)
        if total != 100:
            raise ValidationError(
                "%s=%s: the bandwidth of the ETS TCs %s sums to %d, must be 100"
                % (field_bw, list(tcbw), ets_tcs, total))
