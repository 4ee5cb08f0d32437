# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the controller keeps of a result from a node it does not trust (the fabric test's
modules, rdma.fabric.perftest and rdma.fabric.nccl_test, run on nodes under test).

A module's result is processed by the controller: ``ansible_facts`` become the host's facts,
which override its inventory variables; ``add_host`` and ``add_group`` change the inventory
(strategy plugins act on them for any task); ``ansible_stats`` set run statistics. None of them
is what these modules return; a result holding them came from a node that lies, so they are
dropped, and the result says which were."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# keys of a module result the controller acts on, none of which the fabric test's modules return
DROPPED = ("ansible_facts", "add_host", "add_group", "ansible_stats")


def node_result(result):
    """``result`` without the DROPPED keys; ``dropped_keys`` lists those it held."""
    dropped = sorted(key for key in DROPPED if key in result)
    for key in dropped:
        del result[key]
    if dropped:
        result["dropped_keys"] = dropped
        result.setdefault("warnings", []).append(
            "the node's result held %s, which these modules never return: dropped (the node may be compromised)"
            % ", ".join(dropped))
    return result
