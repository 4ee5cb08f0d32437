"""#40 review: a node under test returns results the controller acts on (facts that override the
inventory, hosts and groups added to it); the fabric test's modules never return them."""
from ansible_collections.rdma.fabric.plugins.plugin_utils import _untrusted
from ansible_collections.rdma.fabric.plugins.module_utils.areas import fabric_test as F


def test_a_node_result_loses_what_would_change_the_controller_state():
    result = {"changed": False, "results": [], "ansible_facts": {"fabric_test_fail": False},
              "add_group": "known_good", "add_host": {"host_name": "x"}, "ansible_stats": {"data": {}}}
    kept = _untrusted.node_result(dict(result))
    assert not set(_untrusted.DROPPED) & set(kept)
    assert kept["dropped_keys"] == ["add_group", "add_host", "ansible_facts", "ansible_stats"]
    assert "may be compromised" in kept["warnings"][0]
    clean = _untrusted.node_result({"changed": False, "results": [1]})
    assert clean == {"changed": False, "results": [1]}


def test_forged_fact_names_cover_every_variable_that_decides_a_verdict():
    names = ["fabric_test_fail", "onboard_fabric_test", "onboard_known_good", "__fabric_test_nccl_outcome",
             "rdma_fabric_environment", "distribution", "ansible_local", "fabric", "onboard"]
    assert F.forged(names) == ["__fabric_test_nccl_outcome", "fabric_test_fail", "onboard_fabric_test",
                               "onboard_known_good", "rdma_fabric_environment"]
