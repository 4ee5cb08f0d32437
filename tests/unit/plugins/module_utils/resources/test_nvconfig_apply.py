"""mlxconfig set's own confirmation read (parsers/_mlxconfig.parse_set wired into the NV config
apply): exit 0 with "Applying... Done!" is a set; exit 0 without it (a truncated output, a wrapper
that swallows the tool's words) is never claimed applied. Real output: the MAAS sample
(canonical/maas-commissioning-scripts#2), samples/mlxconfig.txt."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common._common import ToolError
from ansible_collections.rdma.fabric.plugins.module_utils.resources._nvconfig import MlxconfigResource
from ansible_collections.rdma.fabric.tests.unit import samples

SET = samples.load("mlxconfig.txt")["MLXCONFIG-MAAS2-SET-CX6-BOOT"].raw
ARGV = ["/usr/bin/mlxconfig", "-d", "0000:c2:00.0", "-y", "set", "BOOT_VLAN=0", "BOOT_UNDI_NETWORK_WAIT=30"]


class Node(object):
    def __init__(self, answer):
        self.answer, self.params = answer, {}

    def run_command(self, argv, environ_update=None, check_rc=False):
        return self.answer


def test_a_set_confirmed_by_the_tool_is_applied():
    resource = MlxconfigResource(Node((0, SET, "")))
    resource.apply("0000:c2:00.0", ARGV)
    assert resource.set_devices == ["0000:c2:00.0"]
    assert resource.set_names["0000:c2:00.0"] == ["BOOT_VLAN", "BOOT_UNDI_NETWORK_WAIT"]


@pytest.mark.parametrize("out", [
    SET.split("Applying")[0],        # cut before the confirmation
    SET.replace("Done!", ""),        # "Applying... " and nothing after
    "",                              # a wrapper that printed nothing
])
def test_exit_0_without_the_confirmation_is_not_applied(out):
    resource = MlxconfigResource(Node((0, out, "")))
    with pytest.raises(ToolError) as err:
        resource.apply("0000:c2:00.0", ARGV)
    assert "Applying... Done!" in str(err.value) and "not known to be set" in str(err.value)
    assert resource.set_devices == []
