# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue #29's done-when: fabricsim's ``ibv_devinfo -v`` prints the capability lists rdma-core's
devinfo.c (and MLNX_OFED 5.x, which ships it) prints on a ConnectX-6 Dx / ConnectX-7 (flags with
spaces: ``NO SUPPORT``, ``C-VLAN stripping offload``, ``Scatter FCS offload``), and rdma_health
on that node reads it: no ibv_devinfo error, the GID table judged from its ``gid_tbl_len``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.parsers import _ibv_devinfo
from ansible_collections.rdma.fabric.tests.unit.samples import load

import test_rdma_health_sim as health


def _norm(text):
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def test_verbose_prints_the_capability_lists_of_the_real_cx6dx(sim):
    """The device block between phys_port_cnt and num_comp_vectors is the real sample's
    (IBVDEV-REAL-CX6DX-RDMACORE-V, TABs expanded there: compared whitespace-normalised)."""
    sim.init("hgx-h100-roce")
    out = sim.out("ibv_devinfo", "-v", "-d", "mlx5_0")
    raw = load("ibv_devinfo.txt")["IBVDEV-REAL-CX6DX-RDMACORE-V"].raw
    want = _norm(raw.split("phys_port_cnt:", 1)[1].split("num_comp_vectors:", 1)[0])[1:]
    got = _norm(out.split("phys_port_cnt:", 1)[1].split("num_comp_vectors:", 1)[0])[1:]
    assert got == want
    for flag in ("\t\t\t\t\tNO SUPPORT\n", "\t\t\t\t\tC-VLAN stripping offload\n", "\t\t\t\t\tScatter FCS offload\n"):
        assert flag in out
    assert re.search(r"\n\tuc_odp_caps:\n\t\t\t\t\tNO SUPPORT\n", out)
    assert sim.out("ibv_devinfo", "-vv", "-d", "mlx5_0") == out       # -vv: the same one verbose level


def test_verbose_output_parses_with_the_table_size_sysfs_has(sim):
    from fabricsim import health_faults
    sim.init("hgx-h100-roce")
    devices = _ibv_devinfo.parse(sim.out("ibv_devinfo", "-v"))
    device = devices["mlx5_0"]
    assert device["lists"]["uc_odp_caps"] == ["NO SUPPORT"]
    assert device["lists"]["raw packet caps"][:2] == ["C-VLAN stripping offload", "Scatter FCS offload"]
    assert device["notes"] == ["tag matching not supported"]
    port = device["ports"][1]
    assert (port["state"], port["phys_state"], port["active_speed"], port["gid_tbl_len"]) == (
        "PORT_ACTIVE", "LINK_UP", 100.0, health_faults.GID_TABLE_SIZE)
    assert _ibv_devinfo.gid_table(port)["roce_v2_ipv4"]
    # the non-verbose layout is unchanged: no attribute past link_layer
    assert "max_qp:" not in sim.out("ibv_devinfo", "-d", "mlx5_0")


def test_profile_options_effective_speed_and_ofed4_layout(sim):
    sim.init("hgx-h100-roce")

    def options(data):
        data["ibv_devinfo"] = {"effective_speed": True, "ofed4": True}
    sim.edit_profile(options)
    out = sim.out("ibv_devinfo", "-v", "-d", "mlx5_0")
    assert "\t\t\teffective_speed:\t400.0 Gbps\n" in out and "\tDevice ports:\n" in out
    port = _ibv_devinfo.parse(out)["mlx5_0"]["ports"][1]
    assert port["effective_speed"] == 400.0
    assert [g["type"] for g in port["gids"]] == [None] * len(port["gids"])     # MLNX_OFED 4.x: no type suffix


def _no_devinfo_error(result):
    return [f for f in result["findings"] if f["subject"] == "ibv_devinfo" or "ibv_devinfo" in str(f.get("actual"))]


def test_rdma_health_reads_the_capability_lists_and_judges_the_gid_table(sim, monkeypatch, tmp_path):
    from fabricsim import health_faults
    health.healthy(sim, "hgx-h100-roce")
    state_file = health._wire(sim, monkeypatch, tmp_path)
    how, result = health.run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1",
                                           "boot_grace": 0, "return_raw": True})
    assert how == "exit", result
    assert "C-VLAN stripping offload" in result["raw"]["ibv_devinfo"]
    assert _no_devinfo_error(result) == [] and result["findings"] == [], result["findings"]
    table = result["ports"]["mlx5_0/1"]["gid_table"]
    assert (table["size"], table["used"]) == (health_faults.GID_TABLE_SIZE, 4)
    # and a full table is judged from the same -v output
    assert sim.cli("fault", "gid-full", "mlx5_2") == 0
    how, result = health.run(monkeypatch, {"interval": 0, "state_file": state_file, "host": "node1", "boot_grace": 0})
    assert how == "exit", result
    assert _no_devinfo_error(result) == []
    assert health.triples(result) == [("gid_table", "mlx5_2 port 1 (enp79s0np0)", "error")]
