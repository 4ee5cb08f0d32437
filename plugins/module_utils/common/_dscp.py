# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one home of DSCP / ToS / ECN arithmetic (RFC 2474, RFC 3168).

The IPv4 ToS byte (IPv6 traffic class; NCCL_IB_TC, ``cma_roce_tos``, mlx5
``tc/N/traffic_class``) is ``DSCP << 2 | ECN``: DSCP in the upper 6 bits, the ECN codepoint
in the lower 2. Hence DSCP = ToS >> 2 and ECN = ToS & 3. mlx5's default DSCP-to-priority
map (what ``mlnx_qos --trust=dscp`` starts from) is priority = DSCP >> 3: DSCP 24-31 ->
priority 3, 48-55 -> 6. The RoCE profile: DSCP 26 with ECT(0) -> ToS 106, priority 3.

ECN codepoints: Not-ECT 0b00, ECT(1) 0b01, ECT(0) 0b10, CE 0b11. DCQCN senders mark
ECT(0).

Every range check raises ``ValueError`` naming the field and the value; callers wrap it
in their own error class when they have one. Standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ECN_NOT_ECT = 0
ECN_ECT1 = 1
ECN_ECT0 = 2
ECN_CE = 3
ECN_CODEPOINTS = {"not-ect": ECN_NOT_ECT, "not_ect": ECN_NOT_ECT, "ect1": ECN_ECT1, "ect(1)": ECN_ECT1,
                  "ect0": ECN_ECT0, "ect(0)": ECN_ECT0, "ce": ECN_CE}
ECN_NAMES = {ECN_NOT_ECT: "Not-ECT", ECN_ECT1: "ECT(1)", ECN_ECT0: "ECT(0)", ECN_CE: "CE"}


def _integer(value, field, low, high):
    """An int in [low, high] from an int or a decimal string; ValueError naming field and value."""
    if isinstance(value, bool):
        raise ValueError("%s must be an integer %d-%d, got %r" % (field, low, high, value))
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or not low <= value <= high:
        raise ValueError("%s must be an integer %d-%d, got %r" % (field, low, high, value))
    return value


def check_dscp(value, field="dscp"):
    """A DSCP 0-63 as an int."""
    return _integer(value, field, 0, 63)


def check_tos(value, field="tos"):
    """A ToS / traffic class byte 0-255 as an int."""
    return _integer(value, field, 0, 255)


def ecn_bits(value, field="ecn"):
    """ECN bits 0-3 from an int, a decimal string, a codepoint name (``not-ect``, ``ect0`` /
    ``ect(0)``, ``ect1`` / ``ect(1)``, ``ce``, any case) or a boolean (true = ECT(0))."""
    if isinstance(value, bool):
        return ECN_ECT0 if value else ECN_NOT_ECT
    if isinstance(value, str) and value.strip().lower() in ECN_CODEPOINTS:
        return ECN_CODEPOINTS[value.strip().lower()]
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        number = int(value.strip()) if isinstance(value, str) else value
        if not 0 <= number <= 3:
            raise ValueError("%s must be 0-3, got %r" % (field, value))
        return number
    raise ValueError("%s must be 0-3, true/false or one of %s, got %r"
                     % (field, ", ".join(sorted(ECN_CODEPOINTS)), value))


def tos(dscp, ecn=0):
    """ToS byte from a DSCP and the ECN bits: ``dscp << 2 | ecn``. DSCP 26 -> 104, ECT(0) -> 106."""
    return (check_dscp(dscp) << 2) | ecn_bits(ecn)


def dscp_of_tos(value):
    """DSCP of a ToS byte: ``tos >> 2`` (106 -> 26)."""
    return check_tos(value) >> 2


def ecn_of_tos(value):
    """ECN bits of a ToS byte: ``tos & 3`` (106 -> 2, ECT(0))."""
    return check_tos(value) & 3


def default_priority(dscp):
    """Priority of a DSCP in mlx5's default map: ``dscp >> 3`` (26 -> 3, 48 -> 6)."""
    return check_dscp(dscp) >> 3


def tos_mismatch(tos_value, dscp, field="tos", dscp_field="dscp"):
    """None when ``tos_value`` carries ``dscp`` in its upper 6 bits, else a message naming both
    (a ToS literal such as 106 checked against the DSCP it is meant to carry)."""
    have = check_tos(tos_value, field) >> 2
    want = check_dscp(dscp, dscp_field)
    if have == want:
        return None
    return ("%s %s carries DSCP %d (%s >> 2), but %s is %d; the ToS for DSCP %d is %d, or %d with ECT(0)"
            % (field, tos_value, have, tos_value, dscp_field, want, want, want << 2, (want << 2) | ECN_ECT0))
