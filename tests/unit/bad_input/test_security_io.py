# -*- coding: utf-8 -*-
# Copyright: rdma.fabric contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 26, the file defects, each reproduced as an attacker on a node or a careless operator
would: a temp name swapped for a symlink while root writes the node_exporter textfile or the
flap state (root must never chmod the symlink's target), the timer and an Ansible run racing
for the flap state, bundles that are decompression bombs, symlinks out of the bundle or FIFOs,
an NCCL log that is a FIFO or a symlink, report files and bundles readable by everyone, and
``rdma_fabric_environment`` values that systemd would split or expand."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import json
import os
import stat
import tarfile
import threading
import time

import jinja2
import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts import _bundle, _health_read
from ansible_collections.rdma.fabric.plugins.module_utils.common import _common, _fileio
from ansible_collections.rdma.fabric.plugins.module_utils.reports import _health, _health_timer, _report

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _mode(path):
    return stat.S_IMODE(os.lstat(str(path)).st_mode)


@pytest.fixture
def swap_on_fsync(monkeypatch, tmp_path):
    """At the first fsync of a temp file, replace its name with a symlink to ``victim`` (0600),
    as a local user who can write the directory would; returns the victim."""
    victim = tmp_path / "victim"
    victim.write_text("root:secret-hash\n")
    os.chmod(str(victim), 0o600)
    real_fsync, real_chmod = os.fsync, os.chmod

    def swap(name):
        if os.path.basename(name).startswith(".") and os.path.isfile(name) and not os.path.islink(name):
            os.unlink(name)
            os.symlink(str(victim), name)

    def fsync(fd):
        real_fsync(fd)
        swap(os.readlink("/proc/self/fd/%d" % fd))

    def chmod(path, mode, *args, **kwargs):
        swap(str(path))
        return real_chmod(path, mode, *args, **kwargs)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "chmod", chmod)
    return victim


@pytest.mark.parametrize("writer", ["textfile", "state", "fileio"])
def test_root_write_never_chmods_through_a_swapped_temp_name(swap_on_fsync, tmp_path, writer):
    target = tmp_path / "textfile" / "rdma_fabric_health.prom"
    target.parent.mkdir()
    try:
        if writer == "textfile":
            _report.write_atomic(str(target), "rdma_fabric_up 1\n")
        elif writer == "state":
            _health_read.write_state(str(target), {"flaps": {}})
        else:
            _fileio.write_atomic(str(target), b"x\n", 0o644)
    except OSError:
        pass  # refusing the swapped name is right too
    assert _mode(swap_on_fsync) == 0o600, "the symlink's target was chmod'ed"
    assert swap_on_fsync.read_text() == "root:secret-hash\n"
    assert not os.path.islink(str(target)) or not os.path.exists(str(target)) or \
        os.path.realpath(str(target)) != str(swap_on_fsync)


def test_write_atomic_sets_the_mode_whatever_the_umask_and_leaves_no_temp(tmp_path):
    old = os.umask(0o077)
    try:
        _fileio.write_atomic(str(tmp_path / "a.prom"), "x 1\n", 0o644)
        _fileio.write_atomic(str(tmp_path / "r.json"), "{}\n", 0o640)
    finally:
        os.umask(old)
    assert (_mode(tmp_path / "a.prom"), _mode(tmp_path / "r.json")) == (0o644, 0o640)
    assert sorted(os.listdir(str(tmp_path))) == ["a.prom", "r.json"]


def test_write_atomic_replaces_a_symlink_instead_of_writing_through_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    link = tmp_path / "out.prom"
    os.symlink(str(victim), str(link))
    _fileio.write_atomic(str(link), "new\n", 0o644)
    assert victim.read_text() == "keep\n" and not os.path.islink(str(link)) and link.read_text() == "new\n"


def test_write_atomic_failure_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "state.json"
    target.write_text("old\n")

    def fail(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="state.json.*No space left"):
        _fileio.write_atomic(str(target), "new\n", 0o644)
    assert target.read_text() == "old\n" and os.listdir(str(tmp_path)) == ["state.json"]


def _quick_host(monkeypatch, flaps):
    """read_host answers at once with a state that counts ``flaps`` (a list the test grows)."""
    def read_host(module, params):
        raw = {"state_before": _health_read.read_state(params["state_file"])[0]}
        flaps.append(1)
        return raw

    def derive(raw, window, grace):
        state = dict(raw["state_before"])
        state["runs"] = state.get("runs", 0) + 1
        time.sleep(0.2)  # the read-modify-write window the timer and a run race in
        return {"ports": {}}, state
    monkeypatch.setattr(_health_read, "read_host", read_host)
    monkeypatch.setattr(_health_read, "derive", derive)
    monkeypatch.setattr(_health, "judge", lambda obs, checks: [])
    monkeypatch.setattr(_report, "prometheus_health", lambda *a, **k: "")


def test_flap_state_is_locked_against_a_concurrent_run(monkeypatch, tmp_path):
    state = tmp_path / "health-state.json"
    calls = []
    _quick_host(monkeypatch, calls)
    config = {"host": "n1", "state_file": str(state)}
    threads = [threading.Thread(target=_health_timer.run, args=(config, object())) for _run in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert json.loads(state.read_text())["runs"] == 4, "a concurrent run lost an update of the flap state"


def test_flap_state_waits_for_the_lock_holder(monkeypatch, tmp_path):
    state = tmp_path / "health-state.json"
    _quick_host(monkeypatch, [])
    done = threading.Event()

    def run():
        _health_timer.run({"host": "n1", "state_file": str(state)}, object())
        done.set()
    with _fileio.locked(str(state)):
        thread = threading.Thread(target=run)
        thread.start()
        assert not done.wait(1.0), "the timer wrote the flap state while another run held it"
    thread.join(30)
    assert done.is_set() and json.loads(state.read_text())["runs"] == 1


# ---------------------------------------------------------------- bundles and user-named files

def _raw():
    return {"version": _bundle.RAW_VERSION, "rdma": {}, "samples": []}


def _tar(path, members):
    with tarfile.open(str(path), "w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def test_bundle_archive_member_size_is_bounded(tmp_path, monkeypatch):
    """A small archive whose member inflates to more than the limit is refused, not read."""
    monkeypatch.setattr(_bundle, "MEMBER_LIMIT", 1024 * 1024)
    bomb = b'{"version": 1, "rdma": {}, "pad": "' + b" " * (4 * 1024 * 1024) + b'"}'
    path = tmp_path / "n1.tar.gz"
    _tar(path, [("n1/health-raw.json", bomb)])
    assert os.path.getsize(str(path)) < 64 * 1024
    with pytest.raises(ValueError, match=r"bundle=.*larger than 1048576 bytes"):
        _bundle.read_bundle(str(path))


def test_bundle_archive_member_count_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(_bundle, "MAX_MEMBERS", 50)
    path = tmp_path / "n1.tar.gz"
    _tar(path, [("n1/f%d" % i, b"") for i in range(60)] + [("n1/health-raw.json", json.dumps(_raw()).encode())])
    with pytest.raises(ValueError, match=r"bundle=.*more than 50 members"):
        _bundle.read_bundle(str(path))


def test_bundle_archive_still_reads(tmp_path):
    path = tmp_path / "n1.tar.gz"
    _tar(path, [("n1/ethtool.txt", b"x"), ("n1/health-raw.json", json.dumps(_raw()).encode())])
    assert _bundle.read_bundle(str(path))["source"] == "bundle"


def test_bundle_directory_refuses_a_symlink_out_of_the_bundle(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(_raw()))
    bundle = tmp_path / "n1"
    bundle.mkdir()
    os.symlink(str(outside), str(bundle / "health-raw.json"))
    with pytest.raises(ValueError, match="bundle=.*symlink"):
        _bundle.read_bundle(str(bundle))


def _in_thread(func, timeout=5.0):
    out = {}

    def run():
        try:
            out["value"] = func()
        except Exception as exc:  # pylint: disable=broad-except
            out["error"] = exc
    thread = threading.Thread(target=run)
    thread.daemon = True
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "blocked (opened a FIFO for reading?)"
    return out


def test_bundle_directory_never_blocks_on_a_fifo(tmp_path):
    bundle = tmp_path / "n1"
    bundle.mkdir()
    os.mkfifo(str(bundle / "health-raw.json"))
    out = _in_thread(lambda: _bundle.read_bundle(str(bundle)))
    assert "not a regular file" in str(out.get("error"))


def test_read_text_never_blocks_on_a_fifo_nor_follows_a_symlink(tmp_path):
    fifo = tmp_path / "nccl.log"
    os.mkfifo(str(fifo))
    assert _in_thread(lambda: _common.read_text(str(fifo))).get("value") is None
    secret = tmp_path / "shadow"
    secret.write_text("root:x\n")
    link = tmp_path / "link.log"
    os.symlink(str(secret), str(link))
    assert _common.read_text(str(link)) is None


def test_nccl_log_is_refused_with_the_reason(tmp_path):
    fifo = tmp_path / "nccl.log"
    os.mkfifo(str(fifo))
    out = _in_thread(lambda: _health_read.read_nccl_log(str(fifo)))
    assert "nccl_log=" in str(out.get("error")) and "not a regular file" in str(out.get("error"))


def test_nccl_log_keeps_the_tail_of_a_big_log(tmp_path, monkeypatch):
    monkeypatch.setattr(_health_read, "NCCL_LOG_LIMIT", 1000)
    log = tmp_path / "nccl.log"
    log.write_text("old line\n" * 1000 + "NCCL WARN last\n")
    text = _health_read.read_nccl_log(str(log))
    assert len(text.encode()) <= 1000 and text.endswith("NCCL WARN last\n")


# ---------------------------------------------------------------- modes and systemd quoting

def test_collect_archive_is_not_world_readable():
    """playbooks/collect.yml creates HOST.tar.gz with the bundle files' mode, not the umask's."""
    import yaml
    with open(os.path.join(REPO, "playbooks", "collect.yml")) as handle:
        tasks = yaml.safe_load(handle)[0]["tasks"]
    names = [t["name"] for t in tasks]
    archive = names.index("One archive per node")
    before = [t for t in tasks[:archive] if "ansible.builtin.file" in t
              and "tar.gz" in str(t["ansible.builtin.file"].get("path"))]
    assert before and before[-1]["ansible.builtin.file"]["mode"] == "{{ __collect_mode }}" \
        and before[-1]["ansible.builtin.file"]["state"] == "touch"


def _render_service(environment):
    path = os.path.join(REPO, "roles", "health", "templates", "rdma-fabric-health.service.j2")
    with open(path) as handle:
        template = jinja2.Environment(trim_blocks=True, lstrip_blocks=True).from_string(handle.read())
    return template.render(rdma_fabric_environment=environment, health_timer_textfile="/t.prom",
                           __health_timer_dir="/d", __health_timer_config="/c.json")


def test_systemd_environment_values_are_quoted_and_escaped():
    text = _render_service({"https_proxy": 'http://p:3128 "x" 50%\\n', "PATH": "/usr/bin:/bin"})
    lines = [line for line in text.splitlines() if line.startswith("Environment=")]
    assert lines == ['Environment="PATH=/usr/bin:/bin"',
                     'Environment="https_proxy=http://p:3128 \\"x\\" 50%%\\\\n"']


def test_reports_are_0640_by_default_whatever_the_umask_and_the_mode_is_the_operators(tmp_path):
    """drift.json, the JUnit file and the textfile name hosts and settings: 0640 unless the
    operator says otherwise (report_mode, rdma_fabric_report_mode); a bad mode names its variable."""
    from ansible.errors import AnsibleError
    from ansible_collections.rdma.fabric.plugins.plugin_utils import _report_run as RR
    old = os.umask(0o022)
    try:
        mode = RR.report_mode("drift_report", {}, {})
        RR.write_reports("drift_report", str(tmp_path / "r"), [("drift.json", "{}\n")], mode)
    finally:
        os.umask(old)
    assert _mode(tmp_path / "r" / "drift.json") == 0o640 and _mode(tmp_path / "r") == 0o750
    assert RR.report_mode("drift_report", {}, {"rdma_fabric_report_mode": "0600"}) == 0o600
    assert RR.report_mode("drift_report", {"report_mode": "0644"}, {"rdma_fabric_report_mode": "0600"}) == 0o644
    with pytest.raises(AnsibleError, match=r"rdma_fabric_report_mode='rw-r-----': not a file mode"):
        RR.report_mode("drift_report", {}, {"rdma_fabric_report_mode": "rw-r-----"})
    with pytest.raises(AnsibleError, match=r"report_mode='01777': not a file mode"):
        RR.report_mode("health_report", {"report_mode": "01777"}, {})
