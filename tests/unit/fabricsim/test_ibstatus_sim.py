# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fabricsim's ibstatus follows rdma-core infiniband-diags/scripts/ibstatus: port blocks the parser reads,
and fatal() echoing 'Fatal error:  <message>' on stdout (not stderr) with exit status 255."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibstatus


def test_ports_read_back(sim):
    sim.init("dgx-h100-ib")
    parsed = _ibstatus.parse(sim.out("ibstatus"))
    assert parsed["errors"] == [] and parsed["ports"]
    assert "InfiniBand" in set(p["link_layer"] for p in parsed["ports"])
    one = _ibstatus.parse(sim.out("ibstatus", "mlx5_0:1"))["ports"]
    assert [(p["device"], p["port"]) for p in one] == [("mlx5_0", 1)]


def test_missing_device_is_a_fatal_error_on_stdout(sim):
    sim.init("hgx-h100-roce")
    out, err, rc = sim.run("ibstatus", "mlx5_0", "mlx5_99")
    assert rc == 255 and err == ""
    assert out.endswith("Fatal error:  device 'mlx5_99': sys files not found (/sys/class/infiniband/mlx5_99/ports)\n")
    parsed = _ibstatus.parse(out)
    assert [p["device"] for p in parsed["ports"]] == ["mlx5_0"]
    assert parsed["errors"] == ["Fatal error:  device 'mlx5_99': sys files not found (/sys/class/infiniband/mlx5_99/ports)"]
