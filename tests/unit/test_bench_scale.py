# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lab/bench_scale.py: the case syntax and the table of medians (the runs need the scale lab)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest

HERE = os.path.dirname(__file__)
spec = importlib.util.spec_from_file_location("bench_scale", os.path.join(HERE, "..", "..", "lab", "bench_scale.py"))
B = importlib.util.module_from_spec(spec)
spec.loader.exec_module(B)


def test_case_settings_become_the_runs_environment():
    case = B.parse_case("drift:forks=50+pipelining=false+strategy=free")
    assert case["base"] == "drift"
    assert case["env"] == {"ANSIBLE_FORKS": "50", "ANSIBLE_PIPELINING": "false", "ANSIBLE_STRATEGY": "free"}
    assert B.parse_case("ping")["env"] == {}


def test_poll_is_an_ansible_cfg_and_cfg_a_path_under_the_top():
    assert B.parse_case("drift:poll=0.01")["env"]["ANSIBLE_CONFIG"] == "[defaults]\ninternal_poll_interval = 0.01\n"
    assert B.parse_case("ping:cfg=examples/ansible.cfg")["env"]["ANSIBLE_CONFIG"] == os.path.join(
        B.TOP, "examples", "ansible.cfg")


def test_play_and_burn_settings():
    case = B.parse_case("ping:play=/tmp/variant.yml")
    assert case["play"] == "/tmp/variant.yml" and case["env"] == {}
    assert B.parse_case("drift:play=lab/x.yml")["play"] == os.path.join(B.TOP, "lab", "x.yml")
    assert B.parse_case("burn")["burn"] == "1.6" and B.parse_case("burn:burn=0.5")["burn"] == "0.5"


def test_env_setting_adds_one_variable_and_refuses_a_bad_name():
    case = B.parse_case("drift:env=RDMA_FABRIC_MMAP_THRESHOLD=0+forks=20")
    assert case["env"] == {"RDMA_FABRIC_MMAP_THRESHOLD": "0", "ANSIBLE_FORKS": "20"} and case["base"] == "drift"
    assert B.parse_case("ping:env=A_B=x=y")["env"] == {"A_B": "x=y"}
    for bad in ("ping:env=NOEQUALS", "ping:env=1X=2", "ping:env=A-B=1"):
        with pytest.raises(SystemExit) as err:
            B.parse_case(bad)
        assert "env=" in str(err.value)


def test_the_burn_play_runs_a_python_loop_for_the_seconds_given():
    import yaml
    task = yaml.safe_load(B.BURN_PLAY)[0]["tasks"][0]
    argv = task["ansible.builtin.command"]["argv"]
    assert argv[:2] == ["python3", "-c"] and argv[3] == "{{ bench_burn_s }}"
    compile(argv[2], "<burn>", "exec")
    assert "process_time" in argv[2] and "float(sys.argv[1])" in argv[2]


@pytest.mark.parametrize("text, needle", [
    ("pong", "case 'pong': expected one of ping, facts, burn, drift, rerun, first"),
    ("burn:burn=long", "burn='long': expected seconds"),
    ("drift:forks", "setting 'forks'"),
    ("drift:colour=red", "setting 'colour=red'"),
    ("drift:forks=", "setting 'forks='"),
    ("drift:poll=soon", "poll='soon': expected seconds"),
])
def test_bad_cases_name_the_case_and_the_setting(text, needle):
    with pytest.raises(SystemExit) as exc:
        B.parse_case(text)
    assert needle in str(exc.value)


def row(case, cpu_per_host, wall, failed=False, nodes=16):
    return {"nodes": nodes, "case": case, "failed": failed, "wall_s": wall, "ctl_cpu_s_per_host": cpu_per_host,
            "ctl_peak_mib": 100.0, "nodes_cpu_s_per_host": 0.5}


def test_medians_leave_failed_runs_out():
    rows = [row("drift", 1.0, 10), row("drift", 3.0, 30), row("drift", 2.0, 20), row("drift", 50.0, 99, failed=True)]
    med, runs = B.median_rows(rows, 16, "drift")
    assert runs == 3
    assert med["ctl_cpu_s_per_host"] == 2.0 and med["wall_s"] == 20


def test_table_ratios_are_to_the_ping_median_of_the_same_size():
    rows = [row("ping", 0.2, 4), row("ping", 0.4, 8), row("drift", 0.9, 24),
            row("ping", 1.0, 1, nodes=64), row("drift", 1.5, 3, nodes=64)]
    lines = B.table(rows, "ssh").splitlines()
    drift16 = [line for line in lines if line.startswith("16 ") and " drift " in line][0]
    drift64 = [line for line in lines if line.startswith("64 ") and " drift " in line][0]
    assert "3.00x" in drift16 and "4.00x" in drift16     # 0.9 / 0.3 CPU per host, 24 / 6 s wall
    assert "1.50x" in drift64 and "3.00x" in drift64


def test_summary_is_one_line_per_size_with_ratios_to_that_sizes_ping():
    rows = [dict(row("ping", 0.2, 4), load1=3.0), dict(row("ping", 0.4, 8), load1=5.0),
            dict(row("drift", 0.36, 24), ctl_peak_mib=130.0, load1=4.0),
            dict(row("rerun", 0.33, 24), load1=4.0), dict(row("first (fresh nodes)", 0.9, 60), load1=7.5),
            row("ping", 0.1, 1, nodes=64), row("drift", 0.25, 3, nodes=64), row("drift", 9.0, 3, nodes=64, failed=True)]
    lines = B.summary(rows).splitlines()
    assert "| N | ping | drift check | re-run | first converge |" in lines[2]
    assert "fabric test" not in lines[2]                  # no fabric runs: no column
    line16 = [line for line in lines if line.startswith("| 16 ")][0]
    line64 = [line for line in lines if line.startswith("| 64 ")][0]
    # 16: ping median 0.3; drift 0.36 -> 1.20x, re-run 1.10x, first (fresh nodes) 3.00x; peak 130 / 100
    assert "| 0.300 s (2) | 0.360 s (1.20x, 1) | 0.330 s (1.10x, 1) | 0.900 s (3.00x, 1) | 130 / 100 (1.30x) | 3.0-7.5 |" \
        in line16
    # 64: the failed drift run is left out; no re-run or first converge there
    assert "| 0.100 s (1) | 0.250 s (2.50x, 1) | - | - |" in line64


def test_collections_runs_another_checkout_of_the_collection():
    case = B.parse_case("drift:collections=/tmp/before/.cache/collections+forks=50")
    assert case["base"] == "drift"
    assert case["env"] == {"ANSIBLE_COLLECTIONS_PATH": "/tmp/before/.cache/collections", "ANSIBLE_FORKS": "50"}


def test_fabric_rounds_are_read_from_the_role_loop_labels():
    output = ("included: /x/round.yml for scale-0001, scale-0002 => (item=round 1 of 3)\n"
              "included: /x/round.yml for scale-0001, scale-0002 => (item=round 3 of 3)\n"
              "included: /x/round.yml for scale-0003 => (item=isolation round 1 of 1)\n")
    assert B.fabric_rounds(output) == 4
    assert B.fabric_rounds("PLAY RECAP") == 0


def test_oom_kills_are_summed_over_the_nodes_memory_cgroups(tmp_path):
    """A node at its memory limit loses a process (fabricsim's sysfs daemon, a perftest job): the
    bench counts the kernel's kills per node (memory.oom_control) and leaves such a run out."""
    for name, kills in (("libpod-a", 0), ("libpod-b", 3), ("libpod-c", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill %d\n" % kills)
    (tmp_path / "libpod-d").mkdir()     # no counter (gone, or another cgroup version): not counted
    (tmp_path / "cgroup.procs").write_text("")
    assert B.nodes_oom_kills(str(tmp_path)) == 5
    assert B.nodes_oom_kills(str(tmp_path / "missing")) == 0
