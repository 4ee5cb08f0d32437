# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plan(): the server's listen address (#40 low, perftest's --bind_source_ip) and the unpinned
fallback command (#39) in every planned item."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.acceptance import _perftest_run as run

PATHS = {"ib_write_bw": "/usr/bin/ib_write_bw", "ib_write_lat": "/usr/bin/ib_write_lat", "timeout": "/usr/bin/timeout",
         "numactl": None, "taskset": "/usr/bin/taskset"}


def _node():
    return {"rails": [{"device": "mlx5_0", "ib_port": 1, "link_layer": "InfiniBand", "numa_node": 0, "gid_index": None}],
            "_paths": dict(PATHS), "gpus": 0, "gpu_list": [], "peermem": False,
            "_allowed": {"cpus": {0, 1}, "mems": {0}, "where": "test"}}


def _params(**extra):
    params = {"numa": True, "use_cuda": "false", "timeout": 30, "kinds": ["bw", "lat"], "duration": 5, "extra_args": []}
    params.update(extra)
    return params


def _sysfs(tmp_path, monkeypatch):
    dev = tmp_path / "class" / "infiniband" / "mlx5_0" / "device"
    dev.mkdir(parents=True)
    (dev / "numa_node").write_text("0\n")
    (dev / "local_cpulist").write_text("0-3\n")
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))


def test_server_binds_the_given_address_and_the_client_does_not(tmp_path, monkeypatch):
    _sysfs(tmp_path, monkeypatch)
    test = {"rail": 0, "device": "mlx5_0", "ib_port": 1, "tcp_port": 18515, "peer": "10.0.0.1"}
    dummy, server = run.plan(_node(), test, 0, _params(bind_address="10.0.0.2"), "server")
    for item in server:
        at = item["argv"].index("--bind_source_ip")
        assert item["argv"][at + 1] == "10.0.0.2"
    dummy, client = run.plan(_node(), test, 0, _params(bind_address="10.0.0.2"), "client")
    assert all("--bind_source_ip" not in item["argv"] and item["argv"][-1] == "10.0.0.1" for item in client)
    dummy, default = run.plan(_node(), test, 0, _params(), "server")
    assert all("--bind_source_ip" not in item["argv"] for item in default)


def test_pinned_items_carry_the_unpinned_command(tmp_path, monkeypatch):
    _sysfs(tmp_path, monkeypatch)
    test = {"rail": 0, "device": "mlx5_0", "ib_port": 1, "tcp_port": 18515}
    dummy, planned = run.plan(_node(), test, 0, _params(), "server")
    for item in planned:
        assert item["argv"][3:6] == ["/usr/bin/taskset", "-c", "0-1"]
        assert item["unpinned_argv"] == item["argv"][:3] + item["argv"][6:]
        assert item["pinning"].startswith("taskset -c 0-1: HCA mlx5_0")
    dummy, planned = run.plan(_node(), test, 0, _params(numa=False), "server")
    assert all(item["unpinned_argv"] is None and item["pinning"] == "none: numa=false" for item in planned)
