"""The firmware manager's query wired in: _mlxfw.read_updates runs mlxfwmanager (or mstfwmanager,
or mlxup) --query [--online] and reads it with parse_mlxfwmanager_query (real and
source-reconstructed samples, mlxfwmanager.txt); the mlxconfig module returns it as
firmware_updates."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _mlxfw
from ansible_collections.rdma.fabric.plugins.module_utils.resources._nvconfig import MlxconfigResource
from ansible_collections.rdma.fabric.plugins.modules import mlxconfig
from ansible_collections.rdma.fabric.tests.unit import samples

MGR = samples.load("mlxfwmanager.txt")


class Node(object):
    """A node with ``tools`` on PATH, answering each argv from ``answers`` (argv tuple -> rc, out, err)."""

    def __init__(self, tools, answers, params=None):
        self.tools, self.answers, self.calls, self.params = tools, answers, [], params or {}

    def get_bin_path(self, name, required=False, opt_dirs=None):
        return "/usr/bin/" + name if name in self.tools else None

    def run_command(self, argv, environ_update=None, check_rc=False):
        self.calls.append((list(argv), dict(environ_update or {})))
        return self.answers[tuple(argv)]


def test_mlxfwmanager_is_asked_first_and_its_answer_read():
    raw = MGR["MLXFWMANAGER-EMPOVIT-MLXUP-CX6LX-UPDATE"].raw
    node = Node(("mlxup", "mlxfwmanager", "mstfwmanager"), {("/usr/bin/mlxfwmanager", "--query"): (0, raw, "")})
    got = _mlxfw.read_updates(node)
    assert got["tool"] == "/usr/bin/mlxfwmanager" and got["argv"] == ["/usr/bin/mlxfwmanager", "--query"]
    (device,) = got["devices"]
    assert (device["fw_current"], device["fw_available"], device["update"], device["status"]) == (
        "26.33.1048", "26.43.1014", True, "Update required")
    # the tool runs in the C locale, as every tool the collection parses
    assert node.calls[0][1].get("LC_ALL") == "C"


def test_online_asks_the_server_and_keeps_the_release_notes():
    raw = MGR["MLXFWMANAGER-RECON-MLXUP-ONLINE-RELEASE-NOTES"].raw
    node = Node(("mlxup",), {("/usr/bin/mlxup", "--query", "--online"): (0, raw, "")})
    got = _mlxfw.read_updates(node, online=True)
    assert got["argv"] == ["/usr/bin/mlxup", "--query", "--online"]
    (device,) = got["devices"]
    assert device["update"] is True
    assert "https://docs.nvidia.com/networking/display/connectx6lxfirmwarev26431014" in device["release_notes"]


def test_no_image_for_the_psid_is_no_verdict():
    raw = MGR["MLXFWMANAGER-INNOVA2-5-MLXUP-NOMATCH"].raw
    node = Node(("mstfwmanager",), {("/usr/bin/mstfwmanager", "--query"): (0, raw, "")})
    (device,) = _mlxfw.read_updates(node)["devices"]
    assert device["fw_available"] is None and device["update"] is None
    assert device["status"] == "No matching image found"


def test_up_to_date_is_no_update():
    raw = MGR["MLXFWMANAGER-SKYAO-CX3PRO-PORTGUIDS"].raw
    node = Node(("mlxfwmanager",), {("/usr/bin/mlxfwmanager", "--query"): (0, raw, "")})
    (device,) = _mlxfw.read_updates(node)["devices"]
    assert (device["fw_current"], device["fw_available"], device["update"]) == ("2.42.5700", "2.42.5700", False)


def test_no_tool_and_a_failed_query_are_errors_not_exceptions():
    assert "mlxfwmanager, mstfwmanager, mlxup" in _mlxfw.read_updates(Node((), {}))["error"]
    node = Node(("mlxfwmanager",), {("/usr/bin/mlxfwmanager", "--query"):
                                    (1, "", "-E- Failed to open device\n")})
    got = _mlxfw.read_updates(node)
    assert got["error"] == "/usr/bin/mlxfwmanager --query (rc=1): -E- Failed to open device"
    node = Node(("mlxfwmanager",), {("/usr/bin/mlxfwmanager", "--query"): (0, "Segmentation fault\n", "")})
    assert _mlxfw.read_updates(node)["error"] == (
        "/usr/bin/mlxfwmanager --query (rc=0): mlxfwmanager: not a line mlxfwmanager prints: 'Segmentation fault'")


class _Module(Node):
    check_mode = False


def _resource(monkeypatch, params, node):
    monkeypatch.setattr(MlxconfigResource, "extra_result", lambda self: {"pending": {}})
    resource = object.__new__(mlxconfig._WithUpdates)
    resource.module = node
    node.params = dict({"firmware_updates": False, "firmware_updates_online": False, "state": "gathered"}, **params)
    return resource


def test_the_module_returns_the_query_only_when_asked_and_only_in_a_state_that_reads(monkeypatch):
    raw = MGR["MLXFWMANAGER-EMPOVIT-MLXUP-CX6LX-UPDATE"].raw
    answers = {("/usr/bin/mlxfwmanager", "--query"): (0, raw, ""), ("/usr/bin/mlxfwmanager", "--query", "--online"): (0, raw, "")}
    node = _Module(("mlxfwmanager",), answers)
    assert _resource(monkeypatch, {}, node).extra_result() == {"pending": {}}
    got = _resource(monkeypatch, {"firmware_updates": True}, node).extra_result()
    assert got["pending"] == {} and got["firmware_updates"]["devices"][0]["fw_available"] == "26.43.1014"
    got = _resource(monkeypatch, {"firmware_updates": True, "firmware_updates_online": True, "state": "merged"}, node).extra_result()
    assert got["firmware_updates"]["argv"][-1] == "--online"
    for state in ("rendered", "parsed"):
        calls = len(node.calls)
        assert "firmware_updates" not in _resource(monkeypatch, {"firmware_updates": True, "state": state}, node).extra_result()
        assert len(node.calls) == calls
