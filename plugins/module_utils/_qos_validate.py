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
import re


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


# ------------------------------------------------------------------ the roce_qos role's names
# The roce_qos role builds each module's config from its variables (module_utils/_roce_qos_plan.py:
# mlnx_qos_config, dcqcn_config, lldp_config) and checks it with the modules' own normalisers,
# whose messages name the module's fields ("roce_qos (mlnx_qos) tcbw"). roce_qos_names puts the
# variable the user set in their place.
_ROLE_FIELD = re.compile(r"roce_qos \((?P<module>mlnx_qos|dcqcn|lldp_dcb)\)[. ]?"
                         r"(?P<field>[A-Za-z0-9_]+(?:\[\d+\])?(?:\.[A-Za-z0-9_]+(?:\[\d+\])?)*)?")
_MLNX_SAME = ("trust", "prio_tc", "tsa", "tcbw", "buffer_size", "prio2buffer", "cable_len")
# dscp2prio[0] and [1] are the role's RoCE and CNP entries, [2:] roce_qos_dscp2prio_extra
_MAP_ENTRIES = ({"dscp": "roce_qos_roce_dscp", "priority": "roce_qos_lossless_priority"},
                {"dscp": "roce_qos_cnp_dscp", "priority": "roce_qos_cnp_priority"})
_DSCP_MAP = "the DSCP map (roce_qos_roce_dscp, roce_qos_cnp_dscp, roce_qos_dscp2prio_extra)"
_INDEXED = re.compile(r"(?P<name>[A-Za-z0-9_]+)(?:\[(?P<index>\d+)\])?(?P<rest>.*)\Z", re.S)


def _mlnx_qos_variable(name, index, rest):
    if name == "pfc":
        return "roce_qos_pfc_priorities" + index + rest
    if name in _MLNX_SAME:
        return "roce_qos_" + name + index + rest
    if name == "dscp2prio":
        if not index:
            return _DSCP_MAP + rest
        number = int(index[1:-1])
        if number < len(_MAP_ENTRIES):
            entry = _MAP_ENTRIES[number]
            field = rest[1:] if rest.startswith(".") else ""
            return entry[field] if field in entry else "%s/%s" % (entry["dscp"], entry["priority"])
        return "roce_qos_dscp2prio_extra[%d]%s" % (number - len(_MAP_ENTRIES), rest)
    return None


def _dcqcn_variable(name, index, rest):
    if name in ("np", "rp"):
        if rest.startswith(".params"):
            return "roce_qos_dcqcn_%s_params%s" % (name, rest[len(".params"):])
        if rest.startswith(".enabled_priorities"):
            return "roce_qos_dcqcn_priorities" + rest[len(".enabled_priorities"):]
    if name in ("roce_tos", "rdma_cm_tos"):
        return "roce_qos_default_tos (the ToS, derived from roce_qos_roce_dscp when null)"
    return None


def _lldp_variable(name, index, rest):
    if name == "pfc" and rest.startswith(".enabled"):
        return "roce_qos_pfc_priorities" + rest[len(".enabled"):]
    if name == "pfc" and rest.startswith(".willing"):
        return "roce_qos_lldp_willing"
    if name == "app":
        return "roce_qos_lossless_priority (the RoCE APP entry's priority)"
    return None


_VARIABLE_OF = {"mlnx_qos": _mlnx_qos_variable, "dcqcn": _dcqcn_variable, "lldp_dcb": _lldp_variable}


def roce_qos_names(message):
    """``message`` of a module's normaliser run by the roce_qos role, with each module field
    (``roce_qos (mlnx_qos) tcbw``, ``roce_qos (dcqcn).rp.params.rpg_gd``, ``config.buffer_size``)
    replaced by the roce_qos_* variable it comes from (``roce_qos_tcbw``,
    ``roce_qos_dcqcn_rp_params.rpg_gd``); a field with no variable keeps its name."""
    def replace(found):
        parts = _INDEXED.match(found.group("field") or "")
        if not parts:
            return found.group(0)
        variable = _VARIABLE_OF[found.group("module")](parts.group("name"), parts.group("index") and
                                                       "[%s]" % parts.group("index") or "", parts.group("rest"))
        return variable or found.group(0)
    text = _ROLE_FIELD.sub(replace, message)
    text = re.sub(r"(?<![A-Za-z0-9_])config\.(%s)(?![A-Za-z0-9_])" % "|".join(_MLNX_SAME), r"roce_qos_\1", text)
    return re.sub(r"\((prio2buffer)=", r"(roce_qos_\1=", text)
