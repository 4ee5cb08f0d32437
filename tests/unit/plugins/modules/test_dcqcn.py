# -*- coding: utf-8 -*-
"""rdma.fabric.dcqcn main() and _dcqcn logic on a tmp sysfs tree ($SYSFS_PATH).

The tree follows samples/mlx5_sysfs_dcqcn.txt section 1 (MLNX_OFED en_sysfs.c layout:
roce_np/enable/0..7 and the parameters directly in roce_np/ and roce_rp/, no params/ dir)
and the mlx5_ib traffic_class file that reads 'Global tclass=N'.
"""
from __future__ import absolute_import, division, print_function

import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.resources import _dcqcn as D
from ansible_collections.rdma.fabric.plugins.module_utils.resources._qos_validate import ValidationError
from ansible_collections.rdma.fabric.plugins.modules import dcqcn
from ansible_collections.rdma.fabric.tests.unit import helpers

import samples

NP_PARAMS = {"min_time_between_cnps": 4, "cnp_dscp": 0, "cnp_802p_prio": 0}
RP_PARAMS = {"clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1, "rpg_time_reset": 300,
             "rpg_byte_reset": 32767, "rpg_threshold": 1, "rpg_max_rate": 0, "rpg_ai_rate": 5,
             "rpg_hai_rate": 50, "rpg_gd": 11, "rpg_min_dec_fac": 50, "rpg_min_rate": 1,
             "rate_to_set_on_first_cnp": 0, "dce_tcp_g": 1019, "dce_tcp_rtt": 1,
             "rate_reduce_monitor_period": 4, "initial_alpha_value": 1023}


def make_tree(root, interface="eth2", device="mlx5_0", ecn=True, enabled=(), tos=None):
    net = root / "class" / "net" / interface
    net.mkdir(parents=True)
    if ecn:
        for point, params in (("np", NP_PARAMS), ("rp", RP_PARAMS)):
            base = net / "ecn" / ("roce_" + point)
            (base / "enable").mkdir(parents=True)
            for prio in range(8):
                (base / "enable" / str(prio)).write_text("%d\n" % (1 if prio in enabled else 0))
            for name, value in params.items():
                (base / name).write_text("%d\n" % value)
    tc = root / "class" / "infiniband" / device / "tc" / "1"
    tc.mkdir(parents=True)
    (tc / "traffic_class").write_text("" if tos is None else "Global tclass=%d\n" % tos)
    return root


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("SYSFS_PATH", str(tmp_path))
    return tmp_path


def run_many(monkeypatch, args, check_mode=False, diff=False):
    """dcqcn only reads and writes sysfs: any command run is an error."""
    return helpers.run_module(monkeypatch, dcqcn.main, args, check_mode=check_mode, diff=diff)


def run(monkeypatch, args, check_mode=False, diff=False):
    """One interface (see helpers.run_one_object)."""
    return helpers.run_one_object(lambda a, **kw: run_many(monkeypatch, a, **kw), args,
                                  ("interface", "rdma_device", "port"), check_mode=check_mode, diff=diff)


def tos_emulating_write(monkeypatch):
    """Make writes to traffic_class behave like the kernel attribute (store N, show 'Global tclass=N')."""
    real_write = D.write_sysfs

    def write(path, value):
        if path.endswith("/traffic_class"):
            # what _common.write_sysfs does against the real attribute: the write works,
            # the read-back is 'Global tclass=N', so it raises a read-back mismatch
            with open(path, "w") as handle:
                handle.write("Global tclass=%s\n" % value)
            raise D.ToolError("wrote %r to %s but it reads back %r" % (str(value), path, "Global tclass=%s" % value))
        return real_write(path, value)
    monkeypatch.setattr(D, "write_sysfs", write)


def read(path):
    with open(str(path)) as handle:
        return handle.read().strip()


ROCE = {"np": {"enabled_priorities": [3], "params": {"cnp_dscp": 48, "cnp_802p_prio": 6}},
        "rp": {"enabled_priorities": [3]}, "roce_tos": 106}


def test_sample_layout_matches_tree():
    # reference (samples/mlx5_sysfs_dcqcn.txt): every file our fake tree has is listed there
    text = open(os.path.join(samples.SAMPLES_DIR, "mlx5_sysfs_dcqcn.txt")).read()
    for name in list(NP_PARAMS) + list(RP_PARAMS):
        assert "/" + name in text
    assert "roce_np/enable/{0,1,2,3,4,5,6,7}" in text


def test_quartet(monkeypatch, root):
    make_tree(root, enabled=(0, 1, 2, 3, 4, 5, 6, 7))   # MLNX_OFED default: all priorities on
    tos_emulating_write(monkeypatch)
    args = {"interface": "eth2", "rdma_device": "mlx5_0", "config": ROCE, "state": "replaced"}
    kind, res = run(monkeypatch, args, check_mode=True, diff=True)
    assert kind == "exit" and res["changed"] is True
    assert read(root / "class/net/eth2/ecn/roce_np/cnp_dscp") == "0"      # nothing written
    assert res["after"]["np"]["enabled_priorities"] == [3] and res["after"]["roce_tos"] == 106
    assert res["diff"]["before"]["roce_tos"] is None
    planned = res["commands"]
    base = str(root)
    assert planned == [
        base + "/class/net/eth2/ecn/roce_np/cnp_802p_prio=6",
        base + "/class/net/eth2/ecn/roce_np/cnp_dscp=48",
    ] + [base + "/class/net/eth2/ecn/roce_%s/enable/%d=0" % (p, prio)
         for p in ("np", "rp") for prio in (0, 1, 2, 4, 5, 6, 7)] + [
        base + "/class/infiniband/mlx5_0/tc/1/traffic_class=106"]

    kind, res = run(monkeypatch, args)
    assert kind == "exit" and res["changed"] is True and res["commands"] == planned
    assert read(root / "class/net/eth2/ecn/roce_np/cnp_dscp") == "48"
    assert read(root / "class/net/eth2/ecn/roce_rp/enable/0") == "0"
    assert read(root / "class/net/eth2/ecn/roce_rp/enable/3") == "1"
    assert read(root / "class/infiniband/mlx5_0/tc/1/traffic_class") == "Global tclass=106"
    assert res["after"] == {"np": {"enabled_priorities": [3], "params": dict(NP_PARAMS, cnp_dscp=48, cnp_802p_prio=6)},
                            "rp": {"enabled_priorities": [3], "params": RP_PARAMS}, "roce_tos": 106}

    kind, res = run(monkeypatch, args)
    assert kind == "exit" and res["changed"] is False and res["commands"] == []
    kind, res = run(monkeypatch, args, check_mode=True)
    assert kind == "exit" and res["changed"] is False and res["commands"] == []


def test_merged_turns_on_only(monkeypatch, root):
    make_tree(root, enabled=(5,))
    kind, res = run(monkeypatch, {"interface": "eth2", "config": {"np": {"enabled_priorities": [3]}}})
    assert kind == "exit"
    assert res["commands"] == [str(root) + "/class/net/eth2/ecn/roce_np/enable/3=1"]
    assert res["after"]["np"]["enabled_priorities"] == [3, 5]
    assert "roce_tos" not in res["after"] and res["after"]["rp"]["enabled_priorities"] == [5]


def test_unknown_parameter_lists_device_parameters(monkeypatch, root):
    make_tree(root)
    kind, res = run(monkeypatch, {"interface": "eth2", "config": {"np": {"params": {"cnp_prio": 6}}}})
    assert kind == "fail"
    assert res["msg"] == ("config.np.params.cnp_prio: no such parameter on eth2; it has: "
                          "cnp_802p_prio, cnp_dscp, min_time_between_cnps")
    assert read(root / "class/net/eth2/ecn/roce_np/cnp_802p_prio") == "0"


def test_params_dir_from_docs_is_rejected(monkeypatch, root):
    make_tree(root)
    kind, res = run(monkeypatch, {"interface": "eth2", "config": {"np": {"params": {"params/cnp_dscp": 48}}}})
    assert kind == "fail" and "'params/cnp_dscp' is not a parameter file name" in res["msg"]


def test_inbox_kernel_without_ecn_dir(monkeypatch, root):
    make_tree(root, ecn=False)
    kind, res = run(monkeypatch, {"interface": "eth2", "config": ROCE, "rdma_device": "mlx5_0"})
    assert kind == "fail"
    assert "interface=eth2: %s/class/net/eth2/ecn does not exist; the inbox" % root in res["msg"]


def test_unknown_interface_and_device(monkeypatch, root):
    make_tree(root)
    kind, res = run(monkeypatch, {"interface": "eth9", "config": {"np": {"enabled_priorities": [3]}}})
    assert kind == "fail" and res["msg"].startswith("interface=eth9: no such network interface")
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_7", "config": {"roce_tos": 106}})
    assert kind == "fail" and res["msg"].startswith("rdma_device=mlx5_7: no such RDMA device")
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_0", "port": 2, "config": {"roce_tos": 106}})
    assert kind == "fail" and "rdma_device=mlx5_0 port=2:" in res["msg"]


@pytest.mark.parametrize("config, words", [
    ({"roce_tos": 300}, "config[0].roce_tos=300: ToS must be 0-255"),
    ({"np": {"enabled_priorities": [3, 8]}}, "config[0].np.enabled_priorities[1]=8: priority must be 0-7"),
    ({"rp": {"params": {"rpg_gd": -1}}}, "config[0].rp.params.rpg_gd=-1: value must be 0-2147483647"),
    ({"rp": {"params": {"rpg_gd": "fast"}}}, "config[0].rp.params.rpg_gd='fast': expected an integer"),
])
def test_bad_input_names_field_and_value_and_writes_nothing(monkeypatch, root, config, words):
    make_tree(root, enabled=(1,))
    before = dict((p, read(p)) for p in root.rglob("*") if p.is_file())
    kind, res = run(monkeypatch, {"interface": "eth2", "rdma_device": "mlx5_0", "config": config})
    assert kind == "fail" and words in res["msg"]
    assert before == dict((p, read(p)) for p in root.rglob("*") if p.is_file())


def test_roce_tos_without_device_and_np_without_interface(monkeypatch, root):
    make_tree(root)
    kind, res = run(monkeypatch, {"interface": "eth2", "config": {"roce_tos": 106}})
    assert kind == "fail" and res["msg"] == "config[0].roce_tos=106 is given but config[0].rdma_device is not"
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_0", "config": {"np": {"enabled_priorities": [3]}}})
    assert kind == "fail" and "config[0].np is given but interface is not" in res["msg"]


def test_midway_failure(monkeypatch, root):
    make_tree(root)
    real = D.write_sysfs
    calls = []

    def flaky(path, value):
        calls.append(path)
        if len(calls) == 2:
            raise D.ToolError("writing '1' to %s failed: Permission denied" % path)
        return real(path, value)
    monkeypatch.setattr(D, "write_sysfs", flaky)
    kind, res = run(monkeypatch, {"interface": "eth2",
                                  "config": {"np": {"enabled_priorities": [3], "params": {"cnp_dscp": 48}}}})
    assert kind == "fail"
    base = str(root) + "/class/net/eth2/ecn/roce_np/"
    assert res["applied"] == [base + "cnp_dscp=48"]
    assert res["failed_command"] == base + "enable/3=1"
    assert res["not_attempted"] == []
    assert "Permission denied" in res["msg"] and res["changed"] is True
    assert res["after"]["np"]["params"]["cnp_dscp"] == 48 and res["after"]["np"]["enabled_priorities"] == []


def test_gathered(monkeypatch, root):
    make_tree(root, enabled=(3,), tos=106)
    kind, res = run(monkeypatch, {"interface": "eth2", "rdma_device": "mlx5_0", "state": "gathered"})
    assert kind == "exit"
    assert res["gathered"]["np"] == {"enabled_priorities": [3], "params": NP_PARAMS}
    assert res["gathered"]["rp"]["params"]["rpg_gd"] == 11
    assert res["gathered"]["roce_tos"] == 106
    json.dumps(res)


def test_rendered_touches_nothing(monkeypatch, root):
    kind, res = run(monkeypatch, {"interface": "eth2", "rdma_device": "mlx5_0", "config": ROCE, "state": "rendered"})
    assert kind == "exit"
    base = str(root)
    assert res["rendered"] == [base + "/class/net/eth2/ecn/roce_np/cnp_802p_prio=6",
                               base + "/class/net/eth2/ecn/roce_np/cnp_dscp=48",
                               base + "/class/net/eth2/ecn/roce_np/enable/3=1",
                               base + "/class/net/eth2/ecn/roce_rp/enable/3=1",
                               base + "/class/infiniband/mlx5_0/tc/1/traffic_class=106"]
    assert list(root.iterdir()) == []


GREP = """/sys/class/net/eth2/ecn/roce_np/enable/0:0
/sys/class/net/eth2/ecn/roce_np/enable/3:1
/sys/class/net/eth2/ecn/roce_np/cnp_dscp:48
/sys/class/net/eth2/ecn/roce_np/cnp_802p_prio:6
/sys/class/net/eth2/ecn/roce_rp/enable/3:1
/sys/class/net/eth2/ecn/roce_rp/rpg_gd:11
/sys/class/infiniband/mlx5_0/tc/1/traffic_class:Global tclass=106
"""


def test_parsed_grep_output(monkeypatch, root):
    kind, res = run(monkeypatch, {"state": "parsed", "running_config": GREP})
    assert kind == "exit"
    assert res["parsed"] == {"np": {"enabled_priorities": [3], "params": {"cnp_dscp": 48, "cnp_802p_prio": 6}},
                             "rp": {"enabled_priorities": [3], "params": {"rpg_gd": 11}}, "roce_tos": 106}


def test_parsed_rendered_form_round_trips():
    tree = D.parse_running_config("/sys/class/net/eth2/ecn/roce_np/enable/3=1\n"
                                  "/sys/class/infiniband/mlx5_0/tc/1/traffic_class=106\n")
    st = D.parse_tree(tree)
    assert st["np"]["enabled_priorities"] == [3] and st["roce_tos"] == 106


def test_parsed_garbage_names_the_line(monkeypatch, root):
    kind, res = run(monkeypatch, {"state": "parsed", "running_config": "cnp_dscp 48\n"})
    assert kind == "fail" and res["msg"].startswith("running_config line 1 'cnp_dscp 48'")


def test_unset_traffic_class_reads_as_none():
    st = D.parse_tree({"/sys/class/infiniband/mlx5_0/tc/1/traffic_class": ""}, rdma_device="mlx5_0")
    assert st["roce_tos"] is None


def test_plan_replaced_only_differing_files():
    have = D.parse_tree(D.parse_running_config(GREP), "eth2")
    want = D.normalize_want({"np": {"enabled_priorities": [3], "params": {"cnp_dscp": 48}}}, "eth2", None)
    assert D.plan_writes(want, have, "replaced", "eth2", None, 1) == []
    with pytest.raises(ValidationError):
        D.plan_writes(D.normalize_want({"np": {"enabled_priorities": [5]}}, "eth2", None), have, "merged",
                      "eth2", None, 1)       # no enable/5 file in the pasted tree


def test_documentation_matches_argspec():
    helpers.assert_doc_matches_argspec(dcqcn)


def test_tos_write_refused_by_kernel_is_reported(monkeypatch, root):
    make_tree(root)

    def refuse(path, value):
        raise D.ToolError("writing %r to %s failed: Invalid argument" % (str(value), path))
    monkeypatch.setattr(D, "write_sysfs", refuse)
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_0", "config": {"roce_tos": 106}})
    assert kind == "fail" and "Invalid argument" in res["msg"]
    assert res["applied"] == [] and res["after"] == {"roce_tos": None}


# --------------------------------------------------------------------------- RDMA-CM default ToS
class ConfigfsRdmaCm(object):
    """rdma_cm configfs on a tmp tree: mkdir of a known device fills in ports/N/{default_roce_mode,
    default_roce_tos} from the kernel's values, rmdir keeps them (cma_configfs.c), an unknown
    device gets ENODEV. Counts the mkdirs and rmdirs. ``modes``: the kernel's default RoCE mode
    of each (device, port)."""

    def __init__(self, monkeypatch, root, devices=("mlx5_0",), ports=(1,), mode="RoCE v2"):
        self.base = root / "kernel" / "config" / "rdma_cm"
        self.base.mkdir(parents=True)
        self.kernel = dict(((dev, port), 0) for dev in devices for port in ports)
        self.modes = dict(((dev, port), mode) for dev in devices for port in ports)
        self.mkdirs, self.rmdirs = [], []
        real_mkdir, real_rmdir = os.mkdir, os.rmdir

        def mkdir(path, *args):
            parent, dev = os.path.split(str(path))
            if parent != str(self.base):
                return real_mkdir(path, *args)
            if not any(known == dev for known, dummy in self.kernel):
                raise OSError(19, os.strerror(19))
            real_mkdir(path)
            self.mkdirs.append(dev)
            for (d, port), tos in self.kernel.items():
                if d == dev:
                    (self.base / dev / "ports" / str(port)).mkdir(parents=True)
                    (self.base / dev / "ports" / str(port) / "default_roce_mode").write_text(
                        self.modes[(d, port)] + "\n")
                    (self.base / dev / "ports" / str(port) / "default_roce_tos").write_text("%d\n" % tos)

        def rmdir(path):
            parent, dev = os.path.split(str(path))
            if parent != str(self.base):
                return real_rmdir(path)
            for (d, port) in list(self.kernel):
                if d == dev:
                    self.kernel[(d, port)] = int(read(self.base / dev / "ports" / str(port) / "default_roce_tos"))
                    self.modes[(d, port)] = read(self.base / dev / "ports" / str(port) / "default_roce_mode")
                    for name in ("default_roce_mode", "default_roce_tos"):
                        os.unlink(str(self.base / dev / "ports" / str(port) / name))
                    real_rmdir(str(self.base / dev / "ports" / str(port)))
            real_rmdir(str(self.base / dev / "ports"))
            real_rmdir(path)
            self.rmdirs.append(dev)

        monkeypatch.setattr(D.os, "mkdir", mkdir)
        monkeypatch.setattr(D.os, "rmdir", rmdir)


CM_ARGS = {"rdma_device": "mlx5_0", "config": {"rdma_cm_tos": 106}, "state": "merged"}


def test_rdma_cm_tos_quartet_creates_and_removes_the_group(monkeypatch, root):
    make_tree(root)
    cm = ConfigfsRdmaCm(monkeypatch, root)
    path = str(cm.base / "mlx5_0" / "ports" / "1" / "default_roce_tos")
    kind, res = run(monkeypatch, CM_ARGS, check_mode=True, diff=True)
    assert kind == "exit" and res["changed"] is True and res["commands"] == [path + "=106"]
    assert res["before"] == {"rdma_cm_tos": 0} and res["after"] == {"rdma_cm_tos": 106}
    assert cm.kernel[("mlx5_0", 1)] == 0 and cm.mkdirs == ["mlx5_0"] and cm.rmdirs == ["mlx5_0"]
    assert not (cm.base / "mlx5_0").exists()

    kind, res = run(monkeypatch, CM_ARGS)
    assert kind == "exit" and res["changed"] is True and res["commands"] == [path + "=106"]
    assert res["after"] == {"rdma_cm_tos": 106}
    assert cm.kernel[("mlx5_0", 1)] == 106 and not (cm.base / "mlx5_0").exists()

    for check_mode in (False, True):
        kind, res = run(monkeypatch, CM_ARGS, check_mode=check_mode)
        assert kind == "exit" and res["changed"] is False and res["commands"] == []
    assert cm.kernel[("mlx5_0", 1)] == 106 and len(cm.mkdirs) == len(cm.rmdirs) == 4


def test_rdma_cm_group_made_by_someone_else_is_kept(monkeypatch, root):
    make_tree(root)
    cm = ConfigfsRdmaCm(monkeypatch, root)
    os.mkdir(str(cm.base / "mlx5_0"))          # an operator ran mkdir and left it
    kind, res = run(monkeypatch, CM_ARGS)
    assert kind == "exit" and res["changed"] is True
    assert read(cm.base / "mlx5_0/ports/1/default_roce_tos") == "106"
    assert cm.rmdirs == [] and (cm.base / "mlx5_0").is_dir()


def test_rdma_cm_missing_says_why_and_gathered_skips_it(monkeypatch, root):
    make_tree(root, tos=106)
    kind, res = run(monkeypatch, CM_ARGS)
    assert kind == "fail" and "modprobe rdma_cm" in res["msg"] and "configfs is not mounted" in res["msg"]
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_0", "state": "gathered"})
    assert kind == "exit" and res["gathered"] == {"roce_tos": 106}


def test_rdma_cm_gathered_and_unknown_device(monkeypatch, root):
    make_tree(root, tos=106)
    cm = ConfigfsRdmaCm(monkeypatch, root)
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_0", "state": "gathered"})
    assert kind == "exit" and res["gathered"] == {"roce_tos": 106, "rdma_cm_tos": 0, "rdma_cm_roce_mode": "v2"}
    assert not (cm.base / "mlx5_0").exists()
    # known to sysfs but not to rdma_cm: the kernel's ENODEV, named
    (root / "class" / "infiniband" / "mlx5_9").mkdir()
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_9", "config": {"rdma_cm_tos": 106}})
    assert kind == "fail" and "mkdir" in res["msg"] and "No such device" in res["msg"]
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_0", "port": 2, "config": {"rdma_cm_tos": 106}})
    assert kind == "fail" and "port=2" in res["msg"] and not (cm.base / "mlx5_0").exists()


@pytest.mark.parametrize("config, words", [
    ({"rdma_cm_tos": 256}, "config[0].rdma_cm_tos=256"),
    ({"rdma_cm_tos": -1}, "config[0].rdma_cm_tos=-1"),
])
def test_rdma_cm_tos_out_of_range(monkeypatch, root, config, words):
    make_tree(root)
    cm = ConfigfsRdmaCm(monkeypatch, root)
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_0", "config": config})
    assert kind == "fail" and words in res["msg"] and cm.mkdirs == []
    kind, res = run(monkeypatch, {"interface": "eth2", "config": config})
    assert kind == "fail" and "rdma_device is not" in res["msg"]


def test_rdma_cm_rendered_parsed_round_trip(monkeypatch, root):
    kind, res = run(monkeypatch, {"interface": "eth2", "rdma_device": "mlx5_0", "state": "rendered",
                                  "config": dict(ROCE, rdma_cm_tos=106)})
    assert kind == "exit" and res["rendered"][-2:] == [
        str(root) + "/class/infiniband/mlx5_0/tc/1/traffic_class=106",
        str(root) + "/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos=106"]
    grep = GREP + "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode:RoCE v2\n" \
                  "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos:106\n"
    kind, res = run(monkeypatch, {"state": "parsed", "running_config": grep})
    assert kind == "exit" and res["parsed"]["rdma_cm_tos"] == 106 and res["parsed"]["roce_tos"] == 106


def test_rdma_cm_write_refused_reports_and_removes_group(monkeypatch, root):
    make_tree(root)
    cm = ConfigfsRdmaCm(monkeypatch, root)

    def refuse(path, value):
        raise D.ToolError("writing %r to %s failed: Numerical result out of range" % (str(value), path))
    monkeypatch.setattr(D, "write_sysfs", refuse)
    kind, res = run(monkeypatch, CM_ARGS)
    assert kind == "fail" and "out of range" in res["msg"] and res["applied"] == []
    assert res["after"] == {"rdma_cm_tos": 0} and cm.rmdirs == ["mlx5_0"]


@pytest.mark.parametrize("params, words", [
    ({"cnp_dscp": 64}, "config[0].np.params.cnp_dscp=64: DSCP must be 0-63"),
    ({"cnp_802p_prio": 8}, "config[0].np.params.cnp_802p_prio=8: priority must be 0-7"),
])
def test_known_parameter_ranges_are_checked_before_any_write(monkeypatch, root, params, words):
    make_tree(root)
    kind, res = run(monkeypatch, {"interface": "eth2", "config": {"np": {"params": dict(params, min_time_between_cnps=8)}}})
    assert kind == "fail" and words in res["msg"], res["msg"]
    assert read(root / "class/net/eth2/ecn/roce_np/min_time_between_cnps") == "4"     # nothing written


def test_two_interfaces_in_one_call(monkeypatch, root):
    make_tree(root)
    make_tree(root, interface="eth3", device="mlx5_1")
    tos_emulating_write(monkeypatch)
    args = {"state": "replaced", "config": [dict(ROCE, interface="eth2", rdma_device="mlx5_0"),
                                            dict(ROCE, interface="eth3", rdma_device="mlx5_1")]}
    kind, res = run_many(monkeypatch, args)
    assert kind == "exit" and res["changed"] is True
    assert [(a["interface"], a["rdma_device"], a["np"]["enabled_priorities"], a["roce_tos"]) for a in res["after"]] == \
        [("eth2", "mlx5_0", [3], 106), ("eth3", "mlx5_1", [3], 106)]
    assert read(root / "class/net/eth3/ecn/roce_rp/enable/3") == "1"
    kind, res = run_many(monkeypatch, args)
    assert kind == "exit" and res["changed"] is False and res["commands"] == []


@pytest.mark.parametrize("text", ["", "\n# nothing\n", "/tmp/x/unrelated/file:1\n"])
def test_parsed_text_without_dcqcn_files_is_an_error(monkeypatch, text):
    kind, res = run_many(monkeypatch, {"state": "parsed", "running_config": text})
    assert kind == "fail" and res["msg"].startswith("running_config: "), res


# --------------------------------------------------------------------------- RDMA-CM default RoCE mode
MODE_ARGS = {"rdma_device": "mlx5_0", "config": {"rdma_cm_roce_mode": "v2"}, "state": "merged"}


def test_rdma_cm_roce_mode_quartet_creates_and_removes_the_group(monkeypatch, root):
    make_tree(root)
    cm = ConfigfsRdmaCm(monkeypatch, root, mode="IB/RoCE v1")      # an older stack's default (the CX-4 Lx sample)
    path = str(cm.base / "mlx5_0" / "ports" / "1" / "default_roce_mode")
    kind, res = run(monkeypatch, MODE_ARGS, check_mode=True, diff=True)
    assert kind == "exit" and res["changed"] is True and res["commands"] == [path + "=RoCE v2"]
    assert res["before"] == {"rdma_cm_roce_mode": "v1"} and res["after"] == {"rdma_cm_roce_mode": "v2"}
    assert res["diff"]["before"] == {"rdma_cm_roce_mode": "v1"} and res["diff"]["after"] == {"rdma_cm_roce_mode": "v2"}
    assert cm.modes[("mlx5_0", 1)] == "IB/RoCE v1" and cm.mkdirs == cm.rmdirs == ["mlx5_0"]

    kind, res = run(monkeypatch, MODE_ARGS)
    assert kind == "exit" and res["changed"] is True and res["commands"] == [path + "=RoCE v2"]
    assert res["after"] == {"rdma_cm_roce_mode": "v2"}
    assert cm.modes[("mlx5_0", 1)] == "RoCE v2" and not (cm.base / "mlx5_0").exists()

    for check_mode in (False, True):
        kind, res = run(monkeypatch, MODE_ARGS, check_mode=check_mode)
        assert kind == "exit" and res["changed"] is False and res["commands"] == []
    # the kernel's own spelling means the same
    kind, res = run(monkeypatch, dict(MODE_ARGS, config={"rdma_cm_roce_mode": "RoCE v2"}))
    assert kind == "exit" and res["changed"] is False and res["after"] == {"rdma_cm_roce_mode": "v2"}
    assert len(cm.mkdirs) == len(cm.rmdirs) == 5


def test_rdma_cm_roce_mode_kernel_spelling_v1_and_tos_in_one_group(monkeypatch, root):
    make_tree(root)
    cm = ConfigfsRdmaCm(monkeypatch, root)
    base = str(cm.base / "mlx5_0" / "ports" / "1")
    args = {"rdma_device": "mlx5_0", "config": {"rdma_cm_tos": 106, "rdma_cm_roce_mode": "IB/RoCE v1"}}
    kind, res = run(monkeypatch, args)
    assert kind == "exit" and res["changed"] is True
    assert res["commands"] == [base + "/default_roce_tos=106", base + "/default_roce_mode=IB/RoCE v1"]
    assert res["before"] == {"rdma_cm_tos": 0, "rdma_cm_roce_mode": "v2"}
    assert res["after"] == {"rdma_cm_tos": 106, "rdma_cm_roce_mode": "v1"}
    assert cm.modes[("mlx5_0", 1)] == "IB/RoCE v1" and cm.kernel[("mlx5_0", 1)] == 106
    assert cm.mkdirs == cm.rmdirs == ["mlx5_0"]       # one group for the read, the writes and the read-back


@pytest.mark.parametrize("mode", ["v3", "roce v2", "2", "RoCE v2\n"])
def test_rdma_cm_roce_mode_bad_value_names_field_and_value(monkeypatch, root, mode):
    make_tree(root)
    cm = ConfigfsRdmaCm(monkeypatch, root)
    kind, res = run(monkeypatch, {"rdma_device": "mlx5_0", "config": {"rdma_cm_roce_mode": mode}})
    assert kind == "fail" and "rdma_cm_roce_mode" in res["msg"] and mode.strip() in res["msg"], res["msg"]
    assert cm.mkdirs == []
    with pytest.raises(ValidationError) as err:
        D.normalize_want({"rdma_cm_roce_mode": mode}, None, "mlx5_0", "config[0]")
    assert "config[0].rdma_cm_roce_mode=%r" % mode in err.value.msg and "RoCE v2" in err.value.msg


def test_rdma_cm_roce_mode_without_device(monkeypatch, root):
    make_tree(root)
    kind, res = run(monkeypatch, {"interface": "eth2", "config": {"rdma_cm_roce_mode": "v2"}})
    assert kind == "fail" and "config[0].rdma_cm_roce_mode=v2 is given but config[0].rdma_device is not" in res["msg"]


def test_rdma_cm_roce_mode_refused_by_the_kernel_is_reported(monkeypatch, root):
    """An InfiniBand port (or a device without RoCE v2): the kernel's store returns EINVAL."""
    make_tree(root)
    cm = ConfigfsRdmaCm(monkeypatch, root, mode="IB/RoCE v1")
    real_write = D.write_sysfs

    def write(path, value):
        if path.endswith("/default_roce_mode"):
            raise D.ToolError("writing %r to %s failed: Invalid argument" % (str(value), path))
        return real_write(path, value)
    monkeypatch.setattr(D, "write_sysfs", write)
    kind, res = run(monkeypatch, MODE_ARGS)
    assert kind == "fail" and "Invalid argument" in res["msg"] and "does not support" in res["msg"]
    assert "default_roce_mode" in res["failed_command"] and res["applied"] == []
    assert res["after"] == {"rdma_cm_roce_mode": "v1"} and res["changed"] is False
    assert res["failed_on"] == {"rdma_device": "mlx5_0", "port": 1}
    assert cm.rmdirs == ["mlx5_0"] and not (cm.base / "mlx5_0").exists()


def test_rdma_cm_roce_mode_missing_configfs_says_why(monkeypatch, root):
    make_tree(root)
    kind, res = run(monkeypatch, MODE_ARGS)
    assert kind == "fail" and "modprobe rdma_cm" in res["msg"] and "RoCE mode" in res["msg"]


def test_rdma_cm_roce_mode_rendered_parsed_round_trip(monkeypatch, root):
    kind, res = run(monkeypatch, {"interface": "eth2", "rdma_device": "mlx5_0", "state": "rendered",
                                  "config": dict(ROCE, rdma_cm_tos=106, rdma_cm_roce_mode="RoCE v2")})
    assert kind == "exit" and res["rendered"][-2:] == [
        str(root) + "/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos=106",
        str(root) + "/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode=RoCE v2"]
    kind, res = run(monkeypatch, {"state": "parsed", "running_config": "\n".join(res["rendered"])})
    assert kind == "exit" and res["parsed"]["rdma_cm_roce_mode"] == "v2" and res["parsed"]["rdma_cm_tos"] == 106
    grep = GREP + "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode:IB/RoCE v1\n"
    kind, res = run(monkeypatch, {"state": "parsed", "running_config": grep})
    assert kind == "exit" and res["parsed"]["rdma_cm_roce_mode"] == "v1"
    bad = "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode:Invalid GID type\n"
    kind, res = run(monkeypatch, {"state": "parsed", "running_config": bad})
    assert kind == "fail" and res["msg"].startswith("running_config line 1") and "Invalid GID type" in res["msg"]


def test_rdma_cm_roce_mode_unknown_kernel_text_is_rewritten():
    have = D.parse_tree({"/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode": "Invalid GID type"},
                        rdma_device="mlx5_0")
    assert have["rdma_cm_roce_mode"] == "Invalid GID type"
    want = D.normalize_want({"rdma_cm_roce_mode": "v2"}, None, "mlx5_0")
    assert D.plan_writes(want, have, "merged", None, "mlx5_0", 1) == [(D.cm_mode_path("mlx5_0", 1), "RoCE v2")]
